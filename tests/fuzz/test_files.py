"""Files: every file gpuroof writes goes through the one atomic writer, an interrupted or
failed write leaves the previous file intact and no temporary behind, and an output that
cannot be written is refused before any long work starts."""

from __future__ import annotations

import errno
import os
import re
import resource
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
from validate.report import _prediction_report, _report
from validate.suite import _family_report
from gpuroof import main
from occupancy import common as _files
from registry import REPORT
from roofline import models

KERNELS = [models.copy(1 << 16), models.matmul_tiled(64)]


def _writers(folder: Path):
    """(id, function writing into `folder`, the files it writes)."""
    chart = roofline.chart.roofline_chart("H100-SXM", KERNELS)
    return [
        ("plot_occupancy", lambda: occupancy.plot_occupancy("sm_90", threads_per_block=256, registers_per_thread=40,
                                                            path=folder / "occ.png"), ["occ.png"]),
        ("plot_roofline", lambda: roofline.chart.plot_roofline(chart, path=folder / "r.png", dpi=40), ["r.png"]),
        ("save_chart_json", lambda: roofline.chart.save_chart(chart, folder / "c.json"), ["c.json"]),
        ("save_chart_csv", lambda: roofline.chart.save_chart(chart, folder / "c.csv"), ["c.csv"]),
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
    chart = roofline.chart.roofline_chart("L4", KERNELS)
    roofline.chart.plot_roofline(chart, path=target)
    old = target.read_bytes()

    def half_then_full(self, fname, *args, **kwargs):
        Path(fname).write_bytes(old[: len(old) // 2])
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(Figure, "savefig", half_then_full)
    with pytest.raises(OSError, match=r"^path='.*r\.png' cannot be written: no space left on the device$") as caught:
        roofline.chart.plot_roofline(chart, path=target)
    assert caught.value.errno == errno.ENOSPC
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
    monkeypatch.setattr("validate.run._run.open_session", gpu_touched)
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

    monkeypatch.setattr(roofline.suite, "analyze_suite", no_work)
    monkeypatch.setattr(roofline.chart, "roofline_chart", no_work)
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


# ------------------------------------------------------------------ issue 21: errors in words, checked first, no litter

GPUROOF = [sys.executable, "-m", "gpuroof"]
LONG = "a" * 300  # one path component past the 255 bytes every Linux file system allows


def _one_error_line(capsys) -> str:
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1, lines
    assert "Errno" not in lines[0] and "Traceback" not in lines[0]
    return lines[0]


@pytest.mark.parametrize(
    "call,path,kind,says",
    [
        (lambda p: roofline.chart.save_chart(roofline.chart.roofline_chart("L4", KERNELS[:1]), p), "{tmp}/" + LONG + "/c.json",
         OSError, "cannot be written: the name is too long"),
        (lambda p: _files.write_atomic(p, "x", ValueError), "{tmp}/" + LONG + ".json",
         OSError, "cannot be written: the name is too long"),
        (lambda p: _files.write_atomic(p, "x", ValueError), "/proc/gpuroof-no-such-folder/x.json",
         FileNotFoundError, "cannot be written: no such file or folder"),
        (lambda p: roofline.chart.load_chart(p), "{tmp}/missing-folder/c.json",
         FileNotFoundError, "cannot be read: no such file or folder"),
    ],
    ids=["name-too-long-folder", "name-too-long-file", "folder-cannot-be-made", "missing-folder-read"],
)
def test_library_file_errors_name_the_file_and_the_cause(call, path, kind, says, tmp_path):
    """Issue 21: `[Errno 36] File name too long` and `[Errno 2] No such file or directory`
    came out raw; now one line names the file and the cause in words, and keeps its errno."""
    path = path.format(tmp=tmp_path)
    with pytest.raises(kind) as caught:
        call(path)
    assert str(caught.value).startswith(f"path={path!r} {says}")
    assert caught.value.errno in (errno.ENAMETOOLONG, errno.ENOENT)
    assert not [p for p in tmp_path.rglob("*") if ".tmp" in p.name]


def test_cli_names_the_option_for_a_name_too_long(tmp_path, capsys):
    path = str(tmp_path / LONG / "x.png")
    assert main(["plot", "--model", "copy", "--param", "n=4096", "-o", path]) == 2
    assert _one_error_line(capsys) == f"gpuroof: error: --output={path!r} cannot be written: the name is too long " \
                                      "(a file system allows 255 bytes per name, 4096 per path)"


@pytest.mark.parametrize("where", ["replace", "fsync"])
def test_a_full_disk_names_the_option_the_file_and_the_cause(where, tmp_path, monkeypatch, capsys):
    """ENOSPC while writing `--output` (a file option) or a file inside `--out` (a folder option)."""
    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, where, full)
    target = tmp_path / "x.png"
    assert main(["plot", "--model", "copy", "--param", "n=4096", "-o", str(target)]) == 2
    assert _one_error_line(capsys) == f"gpuroof: error: --output={str(target)!r} cannot be written: " \
                                      "no space left on the device"
    real = roofline.suite.analyze_suite
    monkeypatch.setattr(roofline.suite, "analyze_suite", lambda gpu, kernels=None, **kw: real(gpu, kernels=KERNELS[:1], **kw))  # small and quick
    assert main(["demo", "--out", str(tmp_path / "d")]) == 2
    assert _one_error_line(capsys) == f"gpuroof: error: --out={str(tmp_path / 'd' / 'suite.json')!r} cannot be " \
                                      "written: no space left on the device"
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["d"]


def _limit_file_size() -> None:
    limit = 1000  # bytes: the chart's JSON is about 2 KB
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))


def test_a_file_size_limit_is_one_line_naming_the_option(tmp_path):
    """EFBIG under `ulimit -f` (RLIMIT_FSIZE), a real process: Python ignores SIGXFSZ, so the
    write fails with `[Errno 27] File too large`; the user reads the option, the file and why."""
    target = tmp_path / "x.json"  # the chart as JSON: no matplotlib to load, a quick process
    done = subprocess.run([*GPUROOF, "plot", "--model", "copy", "--param", "n=4096", "-o", str(target)],
                          capture_output=True, text=True, timeout=120, preexec_fn=_limit_file_size,
                          env={**os.environ, "MPLBACKEND": "Agg"})
    assert done.returncode == 2, done.stderr
    assert done.stderr == (f"gpuroof: error: --output={str(target)!r} cannot be written: the file would pass the "
                           "largest file size allowed here (ulimit -f or the file system's)\n")
    assert list(tmp_path.iterdir()) == []


# Every option of every subcommand that names a file or folder it writes.
OUTPUTS = {("calibrate", "--out"), ("corpus", "--out"), ("corpus", "--plot"), ("demo", "--out"), ("families", "--out"), ("merge-reports", "--out"),
           ("ncu", "--plot"), ("occupancy", "--plot"), ("profile", "--output"), ("profile", "--plot"), ("plot", "--output"), ("predict", "--plot"),
           ("cliffs", "--plot"), ("validate", "--out")}
# What each subcommand needs besides the output (the handler never runs in these tests).
NEEDS = {"ncu": ["profile.csv"], "families": ["report.json"], "merge-reports": ["report.json"],
         "occupancy": ["--arch", "sm_90", "--threads", "64", "--registers", "8"]}


def _subparser(command: str):
    from gpuroof import build_parser

    parser = build_parser(command)
    action = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    return parser, action.choices[command]


def test_every_output_option_is_declared_as_one():
    """An option that writes must be declared with `add_output` (main checks those first);
    one added with a plain add_argument is caught here by its name or help."""
    from gpuroof._main import COMMANDS

    declared, looks_like_one = set(), set()
    for command in COMMANDS:
        _, sub = _subparser(command)
        declared |= {(command, o.option) for o in sub.get_default("outputs") or ()}
        for action in sub._actions:
            text = f"{action.dest} {action.help or ''}".lower()
            if action.option_strings and action.dest in ("out", "output", "plot") or " write" in f" {text}":
                looks_like_one.add((command, action.option_strings[-1] if action.option_strings else action.dest))
    assert declared == OUTPUTS
    assert looks_like_one <= declared


@pytest.mark.parametrize("command,option", sorted(OUTPUTS), ids=[f"{c}{o}" for c, o in sorted(OUTPUTS)])
@pytest.mark.parametrize("bad", ["under-a-file", "name-too-long", "no-suffix"])
def test_every_output_is_checked_before_the_work(command, option, bad, blocker, monkeypatch, capsys):
    """Issue 21: `gpuroof ncu --plot /unwritable/x.png` failed only after the whole analysis,
    on the temporary file's name. Every output option is now checked by main, first."""
    import gpuroof._main as cli

    real = cli.build_parser

    def no_work_parser(chosen=None):
        parser = real(chosen)
        if chosen is not None:
            _, sub = next((p, a.choices[chosen]) for p in [parser] for a in p._actions
                          if a.__class__.__name__ == "_SubParsersAction")
            sub.set_defaults(func=lambda args: pytest.fail("the command ran before its output was checked"))
        return parser

    monkeypatch.setattr(cli, "build_parser", no_work_parser)
    folder = option == "--out"
    if bad == "no-suffix" and folder:
        pytest.skip("a folder has no suffix")
    if bad == "no-suffix" and (command, option) == ("profile", "--output"):
        pytest.skip("a report name has no suffix: gpuroof profile adds .ncu-rep and .csv")
    path = {"under-a-file": f"{blocker}/sub/x.png", "name-too-long": f"{blocker.parent}/{LONG}/x.png",
            "no-suffix": f"{blocker.parent}/x"}[bad]
    # gpuroof profile hands everything after `--` to the program: its own options come first
    after = ["--", "./app"] if command == "profile" else []
    assert main([command, *NEEDS.get(command, []), option, path, *after]) == 2
    line = _one_error_line(capsys)
    says = {"under-a-file": f"a file, not a folder", "name-too-long": "the name is too long",
            "no-suffix": "has no suffix; "}[bad]
    assert line.startswith(f"gpuroof: error: {option}={path!r} ") and says in line, line


@pytest.mark.parametrize("draw", ["plot_families", "plot_bandwidth_occupancy", "plot_roofline", "plot_occupancy"])
@pytest.mark.parametrize("name", ["f.txt", "f"])
def test_every_plot_function_refuses_a_path_it_cannot_draw_to(draw, name, tmp_path):
    """Issue 21: plot_families(report, "f.txt") raised matplotlib's ValueError and a path with
    no suffix failed on the temporary file's name. One library error, before any drawing,
    naming the path and the formats, from the one figure saver every plot function uses."""
    path = tmp_path / name
    calls = {
        "plot_families": lambda: _family_report.plot_families(
            validate.family_report(v_records(), "H200"), path),
        "plot_bandwidth_occupancy": lambda: _prediction_report.plot_bandwidth_occupancy(REPORT.prediction, path),
        "plot_roofline": lambda: roofline.chart.plot_roofline(roofline.chart.roofline_chart("L4", KERNELS[:1]), path=path),
        "plot_occupancy": lambda: occupancy.plot_occupancy("sm_90", threads_per_block=256, registers_per_thread=32,
                                                           path=path),
    }
    error = occupancy.OccupancyError if draw == "plot_occupancy" else roofline.RooflineError
    got = "the suffix '.txt'" if name == "f.txt" else "no suffix"
    with pytest.raises(error) as caught:
        calls[draw]()
    assert str(caught.value) == (f"path={str(path)!r} has {got}; a figure is written as one of .png, .svg, .pdf "
                                 "(the suffix picks the format)")
    assert list(tmp_path.iterdir()) == []


def v_records() -> list:
    """Three measured launches of the H200 families file: enough for a report, quick to predict."""
    data = _files.read_json(Path(__file__).parents[1] / "data" / "families_h200.json", ValueError)
    return [r for r in data["records"] if r.get("measured_seconds")][:3]


_HOLD_A_TEMPORARY = """
import sys, time
from occupancy.common import atomic_path
with atomic_path(sys.argv[1], ValueError) as tmp:
    tmp.write_text("half of a file")
    print(tmp, flush=True)
    time.sleep(120)
"""


def _holder(target: Path) -> tuple[subprocess.Popen, Path]:
    """A process in the middle of writing `target` (its temporary made, the rename to come)."""
    proc = subprocess.Popen([sys.executable, "-c", _HOLD_A_TEMPORARY, str(target)], stdout=subprocess.PIPE,
                            text=True, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    return proc, Path(proc.stdout.readline().strip())


def test_a_write_removes_the_temporary_a_killed_write_left_and_no_other(tmp_path):
    """Issue 21: SIGKILL during a write left `.x.json.*.tmp.json` that nothing removed. The
    temporary names its writer's pid; the next write to the same path removes those whose
    writer has ended and leaves a live writer's alone."""
    target = tmp_path / "x.json"
    killed, stale = _holder(target)
    live, in_progress = _holder(target)
    try:
        killed.kill()
        killed.wait(timeout=30)
        for proc, temp in ((killed, stale), (live, in_progress)):
            assert re.fullmatch(rf"\.x\.json\.{proc.pid}\.\w+\.tmp\.json", temp.name), temp.name
        other = tmp_path / ".y.json.1.abcdefgh.tmp.json"  # another target's: not this write's to judge
        other.write_text("y")
        _files.write_atomic(target, "{}", ValueError)
        assert sorted(p.name for p in tmp_path.iterdir()) == sorted([in_progress.name, other.name, "x.json"])
    finally:
        live.kill()
        live.wait(timeout=30)


@pytest.mark.parametrize(
    "writer,age_seconds,removed",
    [("pid-1", 0, False), ("started-after-the-temporary", 3600, True), ("unknown-pid", 0, True)],
    ids=["a-live-process-that-may-be-the-writer", "a-reused-pid", "no-such-process"],
)
def test_a_temporary_is_stale_only_when_its_writer_is_gone(writer, age_seconds, removed, tmp_path):
    """The pid in a temporary's name may be reused: a process that started after the
    temporary was last written cannot be its writer (Linux: /proc/PID/stat's start time)."""
    if writer == "started-after-the-temporary" and not os.path.exists("/proc/self/stat"):
        pytest.skip("no /proc: a process's start time is unknown here")
    proc = subprocess.Popen(["sleep", "60"]) if writer == "started-after-the-temporary" else None
    try:
        pid = {"pid-1": 1, "unknown-pid": 4_000_000}.get(writer) or proc.pid
        temp = tmp_path / f".x.json.{pid}.abcd1234.tmp.json"
        temp.write_text("half")
        then = time.time() - age_seconds
        os.utime(temp, (then, then))
        _files.write_atomic(tmp_path / "x.json", "{}", ValueError)
        assert temp.exists() is not removed
    finally:
        if proc is not None:
            proc.kill()
            proc.wait(timeout=30)


def test_cli_names_the_input_option_of_a_file_it_cannot_read(tmp_path, capsys):
    path = str(tmp_path / "missing-folder" / "c.json")
    assert main(["predict", "--model", "copy", "--param", "n=1024", "--calibration", path]) == 2
    assert _one_error_line(capsys) == f"gpuroof: error: --calibration={path!r} cannot be read: no such file or folder"
