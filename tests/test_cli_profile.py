"""``gpuroof profile`` with a stand-in ``ncu`` on PATH (a script written here) for every path:
no ncu, counters blocked, a program that fails or runs no kernel, and a profile that works."""

from __future__ import annotations

import contextlib
import io
import json
import os
import stat
import sys
from pathlib import Path

import pytest

from gpuroof import main

EXPORT = Path(__file__).parent / "data" / "ncu" / "user_kernels.raw.csv"

# The stand-in: FAKE_NCU says how it behaves; it records its command lines in FAKE_NCU_LOG.
FAKE_NCU = '''#!{python}
import os, sys
args = sys.argv[1:]
with open(os.environ["FAKE_NCU_LOG"], "a") as log:
    log.write(" ".join(args) + "\\n")
mode = os.environ["FAKE_NCU"]
if "--import" in args:
    if "source" in args:
        print("==ERROR== no source page in this stand-in", file=sys.stderr)
        sys.exit(1)
    sys.stdout.write(open(os.environ["FAKE_NCU_EXPORT"]).read())
    sys.exit(0)
print("==PROF== Connected to process 42")
if mode == "perm":
    print("==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance Counters")
    sys.exit(1)
if mode == "fail":
    print("==ERROR== The application returned an error code (7).")
    sys.exit(7)
if mode == "none":
    print("==WARNING== No kernels were profiled.")
    sys.exit(0)
report = args[args.index("-o") + 1] + ".ncu-rep"
open(report, "wb").write(b"NCU-REP stand-in")
print("==PROF== Report: " + report)
'''


@pytest.fixture
def fake_ncu(tmp_path, monkeypatch):
    folder = tmp_path / "bin"
    folder.mkdir()
    ncu = folder / "ncu"
    ncu.write_text(FAKE_NCU.format(python=sys.executable))
    ncu.chmod(ncu.stat().st_mode | stat.S_IEXEC)
    log = tmp_path / "ncu.log"
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_NCU_LOG", str(log))
    monkeypatch.setenv("FAKE_NCU_EXPORT", str(EXPORT))
    monkeypatch.chdir(tmp_path)

    def run(mode: str, *argv: str) -> tuple[int, str, str, list[str]]:
        monkeypatch.setenv("FAKE_NCU", mode)
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(["profile", *argv])
        calls = log.read_text().splitlines() if log.exists() else []
        return code, out.getvalue(), err.getvalue(), calls
    return run


PROGRAM = ["--", sys.executable, "-c", "pass"]


@pytest.mark.parametrize("mode, code, message", [
    ("perm", 3, "ncu cannot read the GPU's performance counters (ERR_NVGPUCTRPERM)"),
    ("fail", 2, "the program failed under ncu: "),
    ("none", 2, "the program ran no kernel: Nsight Compute profiled none"),
], ids=["counters-blocked", "program-fails", "no-kernel"])
def test_each_failure_is_one_clear_line(fake_ncu, mode, code, message):
    status, out, err, _ = fake_ncu(mode, *PROGRAM)
    assert status == code and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and message in lines[0] and "Traceback" not in err


def test_no_kernel_matching_the_filter_names_it(fake_ncu):
    status, _, err, calls = fake_ncu("none", "--kernel", "saxpy", *PROGRAM)
    assert status == 2 and "ran no kernel matching --kernel 'saxpy'" in err
    assert "--kernel-name regex:saxpy" in calls[0]


def test_without_ncu_exit_3(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # a folder with no ncu
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        status = main(["profile", "--", sys.executable, "-c", "pass"])
    assert status == 3 and err.getvalue().strip() == (
        "gpuroof: ncu (Nsight Compute) is not on PATH: install Nsight Compute, or add its folder to PATH")


@pytest.mark.parametrize("argv, message", [
    ([], "no program to profile: give it after --"),
    (["--", "no-such-program-here"], "command 'no-such-program-here': no such program"),
    (["--launch-count", "0", *PROGRAM], "launch_count=0 must be an integer of at least 1"),
], ids=["no-command", "no-program", "launch-count"])
def test_bad_input_is_exit_2_before_ncu_runs(fake_ncu, argv, message):
    status, _, err, calls = fake_ncu("ok", *argv)
    assert status == 2 and message in err and calls == []


def test_a_profile_keeps_the_report_and_prints_the_table(fake_ncu, tmp_path):
    status, out, err, calls = fake_ncu("ok", "-o", "runs/app", "--launch-count", "5", *PROGRAM)
    assert status == 0, err
    profile = calls[0].split()
    for section in ("SpeedOfLight", "LaunchStats", "Occupancy", "InstructionStats",
                    "SpeedOfLight_HierarchicalSingleRooflineChart"):
        assert profile[profile.index("--section", profile.index(section) - 1) + 1] == section
    assert profile[profile.index("--clock-control") + 1] == "none"
    assert profile[profile.index("--print-units") + 1] == "base"
    assert profile[profile.index("--launch-count") + 1] == "5"
    assert "smsp__inst_executed_op_global_ld.sum" in profile[profile.index("--metrics") + 1]
    assert calls[1].split()[:2] == ["--import", "runs/app.ncu-rep"] and "raw" in calls[1]
    assert (tmp_path / "runs" / "app.ncu-rep").is_file()
    assert (tmp_path / "runs" / "app.csv").read_text() == EXPORT.read_text()
    assert "saxpy4" in out and "occupancy equal to Nsight's theoretical for 5 of 5" in out
    assert "wrote runs/app.ncu-rep and runs/app.csv" in out
    # the report's source page was asked for (the stand-in has none: the profile says so)
    assert any("--page source --print-source sass" in c for c in calls)
    assert "no SASS: ncu could not print app.ncu-rep's source page" in out


def test_json_and_plot(fake_ncu, tmp_path):
    status, out, err, _ = fake_ncu("ok", "--json", "--plot", "r.png", *PROGRAM)
    assert status == 0, err
    data = json.loads(out)
    assert data["csv_path"] == "gpuroof-profile.csv" and len(data["kernels"]) == 5
    assert data["command"][0] == "ncu" and (tmp_path / "r.png").stat().st_size > 10_000
