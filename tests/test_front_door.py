"""The `gpuroof` package is the command line and nothing else; the libraries hold no argparse."""

from __future__ import annotations

import ast
import pathlib
import subprocess
import sys

import pytest

import gpuroof

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_public_surface():
    assert gpuroof.__all__ == sorted(gpuroof.__all__)
    modules = {n for n in dir(gpuroof) if type(getattr(gpuroof, n)).__name__ == "module"}
    assert set(gpuroof.__all__) == {n for n in dir(gpuroof) if not n.startswith("_")} - modules


@pytest.mark.parametrize("package", ["occupancy", "roofline", "validate"])
def test_libraries_keep_no_argparse(package):
    """The CLI moved to gpuroof/: a library module that imports argparse has grown a CLI again."""
    offenders = []
    for path in sorted((ROOT / package).rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else (
                [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            if any(n.split(".")[0] == "argparse" for n in names):
                offenders.append(str(path.relative_to(ROOT)))
    assert offenders == []


def test_python_dash_m_gpuroof_lists_every_subcommand():
    done = subprocess.run([sys.executable, "-m", "gpuroof", "--help"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    for command in ("occupancy", "archs", "roofline", "predict", "cliffs", "demo", "ncu", "measure", "validate",
                    "calibrate"):
        assert command in done.stdout


def test_a_compile_error_is_one_line_naming_the_first_compiler_error():
    from gpuroof._main import one_line as _one_line
    from occupancy import CompileError

    exc = CompileError("compiling k.cu for sm_90 failed", 'k.cu(3): error: identifier "x" is undefined\n1 error detected')
    assert _one_line(exc) == 'compiling k.cu for sm_90 failed: k.cu(3): error: identifier "x" is undefined'
    assert _one_line(ValueError("first\nsecond")) == "first; second"
    named = CompileError("nvcc could not compile k.cu for sm_90 (nvcc ...): k.cu:2:10: fatal error: x.h: No such file",
                         "k.cu:2:10: fatal error: x.h: No such file\ncompilation terminated.")
    assert _one_line(named) == str(named).splitlines()[0]  # the error once, not repeated from the log
