"""Progress: a bar on stderr when it is a terminal, nothing when piped or with --quiet; the
libraries report their steps through the one callback (`occupancy.common.ProgressStep`)."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys

import pytest

from gpuroof._progress import ProgressBar
from gpuroof._main import COMMANDS, build_parser
from occupancy.common import ProgressStep

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# a command with a bar that costs little: reading a recorded Nsight Compute profile
COMMAND = [sys.executable, "-m", "gpuroof", "ncu", "tests/data/ncu/user_kernels.raw.csv"]


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _on_a_pty(argv: list[str]) -> tuple[int, str, str]:
    """Run `argv` with stderr on a pseudo-terminal and stdout on a pipe: (exit code, stdout, terminal)."""
    pty = pytest.importorskip("pty")
    master, slave = pty.openpty()
    env = {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=slave, env=env)
    os.close(slave)
    seen = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        seen += chunk
    out = proc.communicate(timeout=120)[0]
    os.close(master)
    return proc.returncode, out.decode(), seen.decode(errors="replace")


def test_a_terminal_shows_a_bar():
    code, out, terminal = _on_a_pty(COMMAND)
    assert code == 0 and "5 kernels" in out
    assert re.search(r"\rncu \[[#.]{24}\] 0/1 reading tests/data/ncu/user_kernels.raw.csv", terminal), terminal
    # erased when the work ends: the last thing drawn is a blank line, then the cursor back at its start
    assert terminal.endswith("\r") and terminal.split("\r")[-2].strip() == ""


@pytest.mark.parametrize(("terminal", "quiet"), [(True, True), (False, False)], ids=["quiet on a terminal", "piped"])
def test_quiet_or_piped_shows_nothing(terminal, quiet, monkeypatch, capsys):
    """In-process (a real terminal is the test above): stderr a fake terminal with --quiet, or a pipe."""
    from gpuroof import main

    monkeypatch.chdir(ROOT)
    stderr = _Terminal() if terminal else io.StringIO()
    monkeypatch.setattr(sys, "stderr", stderr)
    assert main([*COMMAND[3:], *(["--quiet"] if quiet else [])]) == 0
    assert "5 kernels" in capsys.readouterr().out and stderr.getvalue() == ""


def test_a_fake_terminal_without_quiet_shows_the_bar(monkeypatch, capsys):
    """The in-process check above is not vacuous: the same stream without --quiet gets the bar."""
    from gpuroof import main

    monkeypatch.chdir(ROOT)
    stderr = _Terminal()
    monkeypatch.setattr(sys, "stderr", stderr)
    assert main(COMMAND[3:]) == 0
    assert "ncu [" in stderr.getvalue()


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_subcommand_takes_quiet(name):
    parser = build_parser(name)
    # gpuroof profile passes everything after its program on to the program: --quiet goes first
    argv = [name, "--quiet", *_minimal(name)] if name == "profile" else [name, *_minimal(name), "--quiet"]
    assert parser.parse_args(argv).quiet is True


def _minimal(name: str) -> list[str]:
    """The subcommand's --help example, which parses (tests/test_cli_help.py checks that)."""
    import shlex

    return shlex.split(COMMANDS[name].example.replace("\\\n", " "))[2:]


@pytest.mark.parametrize(
    ("messages", "shown"),
    [
        ([ProgressStep("a", 0, 4), ProgressStep("b", 2, 4)], "[############............] 2/4 b"),
        ([ProgressStep("a", 1, 4), "a plain message keeps the fraction"],
         "[######..................] 1/4 a plain message keeps the fraction"),
        (["no fraction yet"], "demo: no fraction yet"),
    ],
    ids=["steps", "plain after a step", "plain only"],
)
def test_the_bar_draws_the_last_fraction(messages, shown):
    terminal = _Terminal()
    bar = ProgressBar("demo", terminal)
    for message in messages:
        bar(message)
    last = terminal.getvalue().split("\r")[-1]
    assert last.rstrip() == ("demo " + shown if shown.startswith("[") else shown)
    bar.close()
    assert terminal.getvalue().endswith("\r") and terminal.getvalue().split("\r")[-2].strip() == ""


@pytest.mark.parametrize(("terminal", "quiet", "lines", "expected"),
                         [(False, False, False, ""), (True, True, False, ""), (False, True, True, ""),
                          (False, False, True, "gpuroof validate: step one\n")],
                         ids=["piped", "quiet", "quiet log", "piped log"])
def test_off_a_terminal_or_quiet_nothing_but_a_log_when_asked(terminal, quiet, lines, expected):
    stream = _Terminal() if terminal else io.StringIO()
    bar = ProgressBar("validate", stream, quiet=quiet, lines=lines)
    bar(ProgressStep("step one", 0, 3))
    bar.close()
    assert stream.getvalue() == expected


def test_libraries_report_done_of_total():
    import roofline
    from roofline import models

    seen: list[str] = []
    roofline.suite.analyze_suite("H100", [roofline.Kernel(name=f"k{i}", flops=1e9, dram_bytes=1e9) for i in range(3)],
                           progress=seen.append)
    assert [(s.done, s.total) for s in seen] == [(0, 3), (1, 3), (2, 3), (3, 3)]
    seen.clear()
    models.catalog(progress=seen.append)
    assert [s.done for s in seen] == list(range(len(models.names()))) and {s.total for s in seen} == {len(models.names())}
