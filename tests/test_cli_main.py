"""The `gpuroof` entry point as a user runs it: a real process, pipes and exit codes."""

from __future__ import annotations

import subprocess
import sys

import pytest

GPUROOF = [sys.executable, "-m", "gpuroof"]


def test_a_closed_pipe_is_not_an_error():
    """`gpuroof archs | head -1`: the reader leaves early; no traceback, no error line."""
    proc = subprocess.Popen([*GPUROOF, "archs"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    first = proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 0
    assert first.startswith(b"arch")
    assert err == ""


@pytest.mark.parametrize(
    ("argv", "code", "stderr_has"),
    [
        (["occupancy", "--arch", "sm_99", "--threads", "256", "--registers", "32"], 2, "sm_90"),
        (["roofline", "--gpu", "h1OO sxm", "--flops", "1", "--bytes", "1"], 2, "H100"),
        (["predict", "--model", "copy", "--param", "n=1024", "--block", "2000"], 2, "2000"),
        (["no-such-command"], 2, "invalid choice"),
    ],
    ids=["unknown-arch", "unknown-gpu", "bad-block", "unknown-command"],
)
def test_bad_input_is_one_line_and_exit_2(argv, code, stderr_has):
    proc = subprocess.run([*GPUROOF, *argv], capture_output=True, text=True, timeout=60)
    assert proc.returncode == code
    assert stderr_has in proc.stderr
    assert "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
