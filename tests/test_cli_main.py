"""The `gpuroof` entry point as a user runs it: a real process, pipes and exit codes."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import version

import pytest

from gpuroof import build_parser

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


def _loaded_after(argv: list[str]) -> list[str]:
    """The project modules a fresh process has imported after ``gpuroof ARGV`` (run in-process)."""
    code = (
        "import sys\n"
        "from gpuroof import main\n"
        f"main({argv!r})\n"
        "print(' '.join(sorted(m for m in sys.modules if m.split('.')[0] in "
        "{'gpuroof', 'occupancy', 'roofline', 'validate'})), file=sys.stderr)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stderr.split()


def test_help_imports_no_library():
    """``gpuroof --help`` lists the subcommands from the table alone: no library is imported."""
    assert _loaded_after(["--help"]) == ["gpuroof", "gpuroof._help", "gpuroof._main"]


@pytest.mark.parametrize(("argv", "module"), [
    (["archs", "--help"], "gpuroof._occupancy"),
    (["occupancy", "--arch", "sm_90", "--threads", "256", "--registers", "40"], "gpuroof._occupancy"),
    (["models", "--help"], "gpuroof._models"),
], ids=["archs-help", "occupancy", "models-help"])
def test_a_subcommand_imports_its_own_module_only(argv, module):
    loaded = _loaded_after(argv)
    commands = {m for m in loaded if m.startswith("gpuroof._")} - {"gpuroof._main", "gpuroof._help", "gpuroof._args",
                                                                  "gpuroof._kernel", "gpuroof._progress"}
    assert commands == {module}
    assert not any(m.split(".")[0] == "validate" for m in loaded)


def test_version_is_the_installed_package_version():
    proc = subprocess.run([*GPUROOF, "--version"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0
    assert proc.stdout == f"gpuroof {version('gpuroof')}\n"


def test_build_parser_refuses_an_unknown_command():
    with pytest.raises(ValueError, match="no-such-command.*occupancy"):
        build_parser("no-such-command")


# nvcc's spellings of its options are not gpuroof's: a command that compiles kernel files says
# where they go (one line, exit 2), and names its own option where it has one.
@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (["predict", "--flops", "1", "--dram-bytes", "1", "-use_fast_math"],
         "gpuroof predict: error: unrecognized argument -use_fast_math; nvcc options go in "
         "--nvcc-options '-use_fast_math' (or --use-fast-math) (see gpuroof predict --help)"),
        (["occupancy", "--arch", "sm_90", "--threads", "256", "-lineinfo", "-maxrregcount=32"],
         "gpuroof occupancy: error: unrecognized arguments -lineinfo -maxrregcount=32; nvcc options go in "
         "--nvcc-options '-lineinfo -maxrregcount=32' (or --lineinfo, --maxrregcount N) "
         "(see gpuroof occupancy --help)"),
        (["block-size", "--gpu", "H100", "-Xptxas", "-v"],
         "gpuroof block-size: error: unrecognized arguments -Xptxas -v; nvcc options go in "
         "--nvcc-options '-Xptxas -v' (see gpuroof block-size --help)"),
        # no kernel file, no nvcc: argparse's words, as before
        (["gpus", "-use_fast_math"], "gpuroof: error: unrecognized arguments: -use_fast_math (see gpuroof --help)"),
        (["predict", "--flops", "1", "--dram-bytes", "1", "stray"],
         "gpuroof: error: unrecognized arguments: stray (see gpuroof --help)"),
        # another subcommand's option: named as such, not taken for nvcc's
        (["cliffs", "--flops", "1", "--dram-bytes", "1", "--grid", "4", "--block", "256", "--barriers", "0"],
         "gpuroof cliffs: error: unrecognized argument --barriers: an option of gpuroof block-size, occupancy, "
         "not of gpuroof cliffs (see gpuroof cliffs --help)"),
    ],
    ids=["predict-fast-math", "occupancy-two-with-own-options", "block-size-no-own-option", "no-nvcc-options",
         "not-an-option", "another-command-s-option"],
)
def test_nvcc_spelled_options_say_where_they_go(argv, line, capsys):
    from gpuroof import main

    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and err == line + "\n"


@pytest.mark.parametrize(("hinted", "options"), [
    (["--nvcc-options", "-use_fast_math"], ["-use_fast_math"]),
    (["--use-fast-math"], ["--use_fast_math"]),
], ids=["nvcc-options", "own-option"])
def test_the_hinted_spellings_parse(hinted, options):
    from gpuroof._main import _join_flag_values, _subparser
    from gpuroof._args import compiler_options

    parser = build_parser("predict")
    args = parser.parse_args(_join_flag_values(_subparser(parser, "predict"),
                                               ["predict", "--flops", "1", "--dram-bytes", "1", *hinted]))
    assert compiler_options(args) == options


def test_an_nvcc_spelled_option_in_a_process_is_one_line_without_traceback():
    proc = subprocess.run([*GPUROOF, "predict", "--flops", "1", "--dram-bytes", "1", "-use_fast_math"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert "--nvcc-options '-use_fast_math' (or --use-fast-math)" in proc.stderr
