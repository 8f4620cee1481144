"""Files: every file gpuroof writes goes through the one atomic writer, an interrupted or
failed write leaves the previous file intact and no temporary behind, and an output that
cannot be written is refused before any long work starts."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import fuzzlib
import occupancy
import roofline
import validate
from validate import _report
from gpuroof import main
from occupancy import common as _files
from registry import REPORT
from roofline import models

KERNELS = [models.copy(1 << 16), models.matmul_tiled(64)]


def _writers(folder: Path):
    """(id, function writing into `folder`, the files it writes)."""
    chart = roofline.roofline_chart("H100-SXM", KERNELS)
    return [
        ("plot_occupancy", lambda: occupancy.plot_occupancy("sm_90", threads_per_block=256, registers_per_thread=40,
                                                            path=folder / "occ.png"), ["occ.png"]),
        ("plot_roofline", lambda: roofline.plot_roofline(chart, path=folder / "r.png", dpi=40), ["r.png"]),
        ("save_chart_json", lambda: roofline.save_chart(chart, folder / "c.json"), ["c.json"]),
        ("save_chart_csv", lambda: roofline.save_chart(chart, folder / "c.csv"), ["c.csv"]),
        ("write_report", lambda: _report.write_report(REPORT.model_copy(update={"kernels": ()}), folder),
         ["report.json", "report.md", "calibration.json", "bandwidth_occupancy.png"]),
        ("write_prediction_report", lambda: validate.write_prediction_report(REPORT.prediction, folder),
         ["calibration.json", "prediction.json", "prediction.md", "bandwidth_occupancy.png"]),
        ("cli_demo", lambda: main(["demo", "--out", str(folder)]),
         ["suite.json", "suite.csv", "suite.md", "roofline.json", "roofline.csv", "roofline.png", "roofline.svg"]),
        ("cli_plot", lambda: main(["plot", "--model", "copy", "--param", "n=4096", "-o", str(folder / "p.pdf")]),
         ["p.pdf"]),
        ("cli_occupancy_plot", lambda: main(["occupancy", "--arch", "sm_80", "--threads", "128", "--registers", "32",
                                             "--plot", str(folder / "o.png")]), ["o.png"]),
    ]


WRITER_IDS = [w[0] for w in _writers(Path("/nonexistent"))]
FAILURES = ("rename-fails", "interrupted", "disk-full")
# Every writer meets one failure in CI (they share the mechanism); all three in deep runs.
FAILURE_CASES = (
    [(name, failure) for name in WRITER_IDS for failure in FAILURES] if fuzzlib.DEEP
    else [(name, FAILURES[i % len(FAILURES)]) for i, name in enumerate(WRITER_IDS)]
)


def _writer(name: str, folder: Path):
    return next(w for w in _writers(folder) if w[0] == name)


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


_FIRST_RUNS: dict[str, tuple[Path, list[str]]] = {}


def _first_run(name: str, root: Path, monkeypatch) -> tuple[Path, list[str]]:
    """Run a writer once, recording the destinations of the helper's renames (cached: the
    failure tests start from a copy of its files instead of drawing them again)."""
    if name not in _FIRST_RUNS:
        folder = root / name
        folder.mkdir()
        _, write, expected = _writer(name, folder)
        renamed: list[str] = []
        real_replace = os.replace

        def recording_replace(src, dst):
            renamed.append(Path(dst).name)
            return real_replace(src, dst)

        with monkeypatch.context() as patch:
            patch.setattr(os, "replace", recording_replace)
            result = write()
            assert result == 0 or not isinstance(result, int), f"{name} exited {result}"
        assert set(expected) <= set(_snapshot(folder))
        _FIRST_RUNS[name] = (folder, renamed)
    return _FIRST_RUNS[name]


@pytest.fixture(scope="module")
def runs_root(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("first-runs")


@pytest.mark.parametrize("name", WRITER_IDS)
def test_every_file_goes_through_the_atomic_writer(name, runs_root, monkeypatch):
    """Each file written is the destination of the helper's final rename: none is written
    in place (issue 13: only validate's report was atomic)."""
    folder, renamed = _first_run(name, runs_root, monkeypatch)
    written = set(_snapshot(folder))
    assert written <= set(renamed), f"written in place: {sorted(written - set(renamed))}"
    assert not [p for p in folder.iterdir() if ".tmp" in p.name]


@pytest.mark.parametrize("name,failure", FAILURE_CASES, ids=[f"{n}-{f}" for n, f in FAILURE_CASES])
def test_a_failed_rewrite_keeps_the_old_files_and_leaves_no_temporary(name, failure, tmp_path, runs_root, monkeypatch):
    """Start from a writer's files, then run it again with the write failing at its last
    step: the old files are untouched and nothing else is left (issue 13: killing
    demo/plot during a re-run damaged the previous file; a full disk did too)."""
    folder, _ = _first_run(name, runs_root, monkeypatch)
    for path in folder.iterdir():
        (tmp_path / path.name).write_bytes(path.read_bytes())
    _, write, _ = _writer(name, tmp_path)
    before = _snapshot(tmp_path)
    if failure == "rename-fails":
        def broken(*args, **kwargs):
            raise OSError(errno.EXDEV, "rename failed")
        monkeypatch.setattr(os, "replace", broken)
    else:
        exc = KeyboardInterrupt() if failure == "interrupted" else OSError(errno.ENOSPC, "No space left on device")

        def broken_fsync(fd):
            raise exc
        monkeypatch.setattr(os, "fsync", broken_fsync)
    try:
        code = write()
    except (OSError, KeyboardInterrupt):
        code = None
    if name.startswith("cli_") and failure != "interrupted":
        assert code == 2  # one line on stderr, exit 2: the CLI's policy for an OSError
    assert _snapshot(tmp_path) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(before)


def test_a_partial_write_by_matplotlib_never_reaches_the_target(tmp_path, monkeypatch):
    """matplotlib writes the figure in pieces; a disk that fills half way through must not
    leave half a PNG where the old one was."""
    from matplotlib.figure import Figure

    target = tmp_path / "r.png"
    chart = roofline.roofline_chart("L4", KERNELS)
    roofline.plot_roofline(chart, path=target)
    old = target.read_bytes()

    def half_then_full(self, fname, *args, **kwargs):
        Path(fname).write_bytes(old[: len(old) // 2])
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(Figure, "savefig", half_then_full)
    with pytest.raises(OSError, match="No space"):
        roofline.plot_roofline(chart, path=target)
    assert target.read_bytes() == old
    assert [p.name for p in tmp_path.iterdir()] == ["r.png"]


def test_killing_a_real_rerun_never_leaves_a_damaged_file(tmp_path):
    """`gpuroof plot -o x.png` twice; the second is killed at several moments: the file is
    always the whole old PNG or the whole new one."""
    target = tmp_path / "x.png"
    argv = [sys.executable, "-m", "gpuroof", "plot", "--model", "copy", "--param", "n=4096", "-o", str(target)]
    env = {**os.environ, "MPLBACKEND": "Agg"}
    assert main(argv[3:]) == 0  # the first run in this process: only the rerun needs killing
    complete = target.read_bytes()
    assert complete.startswith(b"\x89PNG") and complete.endswith(b"IEND\xaeB`\x82")
    for delay in (0.5, 1.3) if not fuzzlib.DEEP else (0.2, 0.5, 0.8, 1.1, 1.4, 1.7, 2.0, 2.5):
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
        data = target.read_bytes()
        assert data.startswith(b"\x89PNG") and data.endswith(b"IEND\xaeB`\x82"), f"damaged after {delay} s"


# ------------------------------------------------------------------ outputs checked first


@pytest.fixture
def blocker(tmp_path) -> Path:
    path = tmp_path / "a-file"
    path.write_text("x")
    return path


@pytest.mark.parametrize("command", ["validate", "calibrate"])
def test_gpu_runs_check_out_before_touching_the_gpu(command, blocker, monkeypatch, capsys):
    """Issue 13: validate and calibrate checked --out only after the whole GPU run."""
    def gpu_touched(*args, **kwargs):
        raise AssertionError("the GPU was opened before --out was checked")

    monkeypatch.setattr(validate, "open_session", gpu_touched)
    monkeypatch.setattr("validate._validate.open_session", gpu_touched)
    assert main([command, "--out", str(blocker / "sub")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "cannot be written" in err[0] and str(blocker) in err[0]


@pytest.mark.parametrize(
    "argv",
    [["demo", "--out", "{blocker}/sub"], ["plot", "--suite", "-o", "{blocker}/x.png"],
     ["occupancy", "--arch", "sm_90", "--threads", "64", "--registers", "8", "--plot", "{blocker}/x.png"]],
    ids=["demo", "plot", "occupancy-plot"],
)
def test_unwritable_outputs_are_one_clear_error_before_the_work(argv, blocker, monkeypatch, capsys):
    def no_work(*args, **kwargs):
        raise AssertionError("work started before the output was checked")

    monkeypatch.setattr(roofline, "analyze_suite", no_work)
    monkeypatch.setattr(roofline, "roofline_chart", no_work)
    monkeypatch.setattr(occupancy, "calculate", no_work)
    assert main([a.format(blocker=blocker) for a in argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "cannot be written" in err[0]


def test_check_writable_creates_nothing(tmp_path):
    target = tmp_path / "a" / "b" / "c"
    _files.check_writable(target, ValueError, folder=True)
    assert list(tmp_path.iterdir()) == []


def test_atomic_files_get_the_usual_permissions(tmp_path):
    """mkstemp's private 0600 must not leak into reports other users read."""
    mask = os.umask(0o022)
    try:
        path = _files.write_atomic(tmp_path / "r.json", "{}", ValueError)
    finally:
        os.umask(mask)
    assert path.stat().st_mode & 0o777 == 0o644
