"""benchmarks/shape.py's readings on a small package written here, one breach of each rule and
its near misses (what the rules leave out): each reading finds exactly the breaches."""

from __future__ import annotations

import importlib.util
import io
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _load_shape():
    spec = importlib.util.spec_from_file_location("shape", ROOT / "benchmarks" / "shape.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("shape", module)  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


shape = _load_shape()

# Lines longer than the limits, put in after the dedent (placeholder -> text).
GENERATED = {
    "@STATEMENTS@": "\n".join(f"    x{i} = {i}" for i in range(85)),
    "@TABLE@": "\n".join(f"        'k{i}': {i}," for i in range(90)),
    "@DOC@": "\n".join(f"    line {i} of the docstring" for i in range(90)),
    "@NAMES@": ", ".join(f'"n{i}"' for i in range(51)),
}

FILES = {
    "__init__.py": '''
        """The package."""
        __all__ = [@NAMES@]

        def __getattr__(name):
            from . import _funcs  # the lazy loading of the package: allowed
            return getattr(_funcs, name)
        ''',
    "_big.py": "x = 1\n" * 601,
    "_funcs.py": '''
        """The functions. Every kernel is used to compute something."""
        from typing import TYPE_CHECKING
        if TYPE_CHECKING:
            from . import _c  # never runs: no edge of the import graph

        def long_code():
        @STATEMENTS@

        def long_docstring():
            """Doc.
        @DOC@
            """
            return 1

        def data_table():
            return {
        @TABLE@
            }

        def wide(a, b, c, d, e, f, g, h, i):
            return a

        def _wide_private(a, b, c, d, e, f, g, h, i):
            return a

        def eight(a, b, c, d, e, f, g, *args, h, **kwargs):
            return a

        class Public:
            def method(self, a, b, c, d, e, f, g, h):
                return a

            def wide_method(self, a, b, c, d, e, f, g, h, i):
                return a

        def imports():
            import json
            import matplotlib.pyplot
            from cuda.bindings import driver
            return json, matplotlib, driver

        def history():
            """Issue 12 made this faster."""
            # It was slow and
            # is now fast.
            return 1

        def present():
            """The loads it used are counted; no longer than a warp."""
            return 1
        ''',
    "_a.py": "from . import _b\n",
    "_b.py": "def f():\n    from ._a import x\n    return x\n",
    "_c.py": "from . import _funcs\n",
    "public.py": '__all__ = ["p", "q"]\n',
    "_private.py": '__all__ = ["r"]\n',
}


@pytest.fixture(scope="module")
def package(tmp_path_factory) -> tuple[Path, dict[str, Path]]:
    root = tmp_path_factory.mktemp("tree")
    (root / "roofline").mkdir()
    for name, text in FILES.items():
        text = textwrap.dedent(text).lstrip("\n")
        for placeholder, lines in GENERATED.items():
            text = text.replace(placeholder, lines)
        (root / "roofline" / name).write_text(text)
    return root, shape.find_modules(root, ("roofline", "absent"))


def _read(modules, reading):
    if reading == "import_circles":
        return sorted(" <-> ".join(c) for c in shape.import_circles(shape.read_imports(modules), modules))
    if reading == "function_imports":
        hits = shape.function_imports(shape.read_imports(modules), modules)
    else:
        hits = getattr(shape, reading)(modules)
    # the name, or for history the matched rules ("[issue N] Issue 12 made ...")
    return sorted(f"{hit.module} {hit.what.split(']')[0] + ']' if reading == 'history_notes' else hit.what.split(':')[0]}"
                  for hit in hits)


@pytest.mark.parametrize(("reading", "expected"), [
    ("long_modules", ["roofline._big 601 lines"]),
    ("long_functions", ["roofline._funcs long_code"]),
    ("wide_public_functions", ["roofline._funcs wide", "roofline._funcs wide_method"]),
    ("function_imports", ["roofline._b f() imports roofline._a", "roofline._funcs imports() imports json"]),
    ("import_circles", ["roofline._a <-> roofline._b"]),
    ("history_notes", ["roofline._funcs [issue N]", "roofline._funcs [was ... now]"]),
], ids=["modules", "functions", "parameters", "imports", "circles", "history"])
def test_each_reading_finds_exactly_the_breaches(package, reading, expected):
    _, modules = package
    assert _read(modules, reading) == expected


def test_all_is_read_for_the_public_modules_only(package):
    _, modules = package
    assert shape.all_sizes(modules) == {"roofline": 51, "roofline.public": 2}


def test_the_summary_fails_each_breached_criterion(package):
    root, _ = package
    out = io.StringIO()
    rows = {row.criterion: (row.count, row.passed) for row in shape.summarize(root, ("roofline",), out=out)}
    assert rows == {
        "modules over 600 lines": (1, False),
        "functions over 80 lines": (1, False),
        "public functions with more than 8 parameters": (2, False),
        "imports inside functions": (2, False),
        "len(roofline.__all__)": (51, False),
        "import circles": (1, False),
        "docstrings and comments that narrate history": (2, False),
    }
    assert out.getvalue().splitlines()[-1].split()[-1] == "FAIL"
