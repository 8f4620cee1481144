"""`--help` of every subcommand says what it does and lists its choices, from the libraries."""

from __future__ import annotations

import argparse
import importlib
import shlex
import subprocess
import sys

import pytest

import occupancy
import roofline
from gpuroof import build_parser
from gpuroof._main import COMMANDS
from gpuroof._help import HelpFormatter
from roofline import models


def _choices(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def _subcommands() -> dict[str, argparse.ArgumentParser]:
    """Every subcommand's parser, each built in full (`build_parser` builds only the one it is given)."""
    return {name: _choices(build_parser(name))[name] for name in _choices(build_parser())}


SUBCOMMANDS = _subcommands()

# Option dest -> the names its help must list, each read from the library that owns them.
CHOICES = {
    "arch": [a.name for a in occupancy.architectures()],
    "gpu": [g.name for g in roofline.gpus()],
    "model": list(models.names()),
    "precision": list(roofline.PRECISIONS),
}


def _shown(action) -> str:
    """The help text as ``--help`` prints it (GPU and architecture lists are built when shown)."""
    return HelpFormatter("gpuroof")._get_help_string(action)


def test_every_subcommand_is_here():
    expected = {"occupancy", "archs", "resources", "block-size", "models", "gpus", "gpu", "roofline", "plot",
                "memory-spaces", "demo", "predict", "cliffs", "ncu", "measure", "validate", "calibrate"}
    assert expected <= set(SUBCOMMANDS)


@pytest.mark.parametrize("name", sorted(SUBCOMMANDS))
def test_help_says_what_the_command_does(name):
    parser = SUBCOMMANDS[name]
    assert parser.description and len(parser.description) > 60, f"gpuroof {name} has no description"
    assert " ".join(parser.description.split()) in " ".join(parser.format_help().split())


CASES = [(name, dest) for name, parser in sorted(SUBCOMMANDS.items()) for action in parser._actions
         for dest in [action.dest] if dest in CHOICES]


@pytest.mark.parametrize(("name", "dest"), CASES, ids=[f"{n}:{d}" for n, d in CASES])
def test_help_lists_every_choice(name, dest):
    action = next(a for a in SUBCOMMANDS[name]._actions if a.dest == dest)
    assert all(choice in _shown(action) for choice in CHOICES[dest]), f"gpuroof {name} --{dest} help misses choices"


def test_the_choice_options_are_where_expected():
    """The table above is not vacuous: the commands that take these options are found."""
    found = {(n, d) for n, d in CASES}
    for expected in [("occupancy", "arch"), ("resources", "arch"), ("block-size", "arch"), ("predict", "gpu"),
                     ("cliffs", "model"), ("roofline", "precision"), ("measure", "precision"), ("ncu", "gpu"),
                     ("demo", "gpu"), ("plot", "model")]:
        assert expected in found


def test_gpu_subcommand_help_lists_the_gpus():
    action = next(a for a in SUBCOMMANDS["gpu"]._actions if a.dest == "name")
    assert all(g.name in _shown(action) for g in roofline.gpus())


def test_help_runs_as_a_process():
    proc = subprocess.run([sys.executable, "-m", "gpuroof", "resources", "--help"], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0 and "ptxas -v" in proc.stdout and "sm_120" in proc.stdout


def test_the_table_and_the_modules_agree():
    """Each subcommand module builds exactly the subcommands the table sends to it."""
    by_module: dict[str, set[str]] = {}
    for name, command in COMMANDS.items():
        by_module.setdefault(command.module, set()).add(name)
    for module, names in by_module.items():
        assert set(importlib.import_module(f"gpuroof.{module}").PARSERS) == names, module


# Examples not run here, with the reason: they need a GPU, or take seconds of CPU that the
# docs tests or the commands' own tests already spend.
NOT_RUN = {
    "measure": "needs a GPU",
    "validate": "needs a GPU",
    "calibrate": "needs a GPU",
    "corpus": "reads the measured corpus, which a GPU run commits (tests/roofline/test_corpus.py runs it on a fixture)",
    "profile": "needs Nsight Compute and a GPU (tests/test_cli_profile.py runs it with a stand-in ncu)",
    "demo": "14 s (tests/roofline runs the demo suite)",
    "families": "25 s (tests/validate runs family_report)",
    "resources": "compiles with nvcc for two architectures (tests/test_docs.py runs two such commands)",
}


def _example(name: str) -> list[str]:
    """The command line under "Example:" at the end of `gpuroof name --help`, as arguments."""
    text = SUBCOMMANDS[name].format_help()
    assert "\nExample:\n" in text, f"gpuroof {name} --help has no Example section"
    lines = text.split("\nExample:\n", 1)[1].strip().splitlines()
    command = lines.pop(0).strip()
    while command.endswith("\\") and lines:
        command = command[:-1] + " " + lines.pop(0).strip()
    assert not lines, f"gpuroof {name} --help goes on after its example: {lines}"
    words = shlex.split(command)
    assert words[:2] == ["gpuroof", name], f"gpuroof {name}'s example runs {words[:2]}"
    return words[1:]


@pytest.mark.parametrize("name", sorted(SUBCOMMANDS))
def test_help_ends_with_an_example_that_parses(name):
    argv = _example(name)
    args = build_parser(name).parse_args(argv)  # a usage error would exit 2
    assert args.command == name


@pytest.mark.parametrize("name", sorted(set(SUBCOMMANDS) - set(NOT_RUN)))
def test_help_example_runs(name, in_a_clone, capsys):
    from gpuroof import main

    assert main(_example(name)) == 0, capsys.readouterr().err
    assert capsys.readouterr().out.strip(), f"gpuroof {name}'s example printed nothing"


def test_top_level_help_ends_with_examples_of_the_first_steps(capsys):
    """`gpuroof --help` ends as each subcommand's help does: command lines to copy, here each
    a subcommand's own example (which the tests above parse and run), then where to read more;
    still from the table alone (tests/test_cli_main.py: no library imported)."""
    from gpuroof import main
    from gpuroof._main import FIRST_STEPS

    assert main(["--help"]) == 0
    text = capsys.readouterr().out
    assert "\nExamples:\n" in text, "gpuroof --help has no Examples section"
    lines = [line.strip() for line in text.split("\nExamples:\n", 1)[1].strip().splitlines()]
    assert lines[:-1] == [COMMANDS[name].example for name in FIRST_STEPS]
    assert lines[-1].startswith("gpuroof COMMAND --help")
    for line in lines[:-1]:
        words = shlex.split(line)
        assert words[0] == "gpuroof" and build_parser(words[1]).parse_args(words[1:]).command == words[1]


def test_the_examples_not_run_are_subcommands():
    assert set(NOT_RUN) <= set(SUBCOMMANDS)


@pytest.mark.parametrize("name", sorted(n for n, p in SUBCOMMANDS.items()
                                        if any("--kernel-file" in a.option_strings for a in p._actions)))
def test_kernel_file_help_says_which_compiler_runs(name):
    """The file's compiler is the user's nvcc when one is found, NVRTC only without one
    (`occupancy.kernel_resources`, compiler="auto"): every --kernel-file help says so in one text."""
    from gpuroof._args import KERNEL_FILE_COMPILERS

    (action,) = [a for a in SUBCOMMANDS[name]._actions if "--kernel-file" in a.option_strings]
    assert action.help.endswith(KERNEL_FILE_COMPILERS)
    assert "your nvcc when one is found" in action.help and "else by NVRTC" in action.help
    assert "compiled with NVRTC" not in action.help


def test_kernel_file_help_is_on_occupancy_predict_and_block_size():
    assert {"occupancy", "predict", "block-size"} <= {
        n for n, p in SUBCOMMANDS.items() if any("--kernel-file" in a.option_strings for a in p._actions)}
