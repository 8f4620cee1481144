"""The packages' layering, read from the source: ``occupancy <- roofline <- validate <- gpuroof``.

Every import of every module is read with `ast` (by benchmarks/shape.py), those inside functions
included: a package imports only the packages below it, never another package's private module
(``x._y``), and no module of a package takes part in an import circle. The corpus (``corpus/``, in the
repository only) sits outside: it imports any of them, and none imports it (``gpuroof corpus``
loads it from the checkout by path).
"""

from __future__ import annotations

import fnmatch
import tomllib
from pathlib import Path

import pytest

from tests.test_shape import shape  # the one reader of imports: benchmarks/shape.py

ROOT = Path(__file__).resolve().parents[1]

# Lowest first: each package may import those before it, never those after it.
PACKAGES = ("occupancy", "roofline", "validate", "gpuroof")
# The repository's own users of the packages, left out of the wheel: they may import all of them.
OUTSIDE = ("corpus",)

# Imports of another package's private module that the house issue (19) is removing, as
# (importing module, imported module). The list only shrinks: a pair that no longer occurs
# fails the test until it is deleted here, and a new pair fails it at once.
PRIVATE_IMPORTS_BEING_REMOVED: frozenset[tuple[str, str]] = frozenset()

# Import circles within a package that issue 19 is removing, each as the sorted modules of one
# circle; shrinks like the list above. An import moved into a function to dodge a circle still
# closes it (only ``if TYPE_CHECKING:`` imports, which never run, are left out).
CIRCLES_BEING_REMOVED: frozenset[tuple[str, ...]] = frozenset()

# The private modules the corpus reads a launch through, as (corpus module, private module): the
# profile path's reader of a metrics mapping and its launch with the SASS (a corpus launch is a
# profile held as a mapping), and the roofline plots' headless pyplot and colours. Exact: a new
# private import fails until it is named here, and one that goes must be deleted here.
CORPUS_PRIVATE_IMPORTS: frozenset[tuple[str, str]] = frozenset({
    ("corpus._format", "roofline._plot"),
    ("corpus._report", "roofline._ncu_metrics"),
    ("corpus._report", "roofline._profile"),
})


MODULES: dict[str, Path] = shape.find_modules(ROOT, PACKAGES + OUTSIDE)

IMPORTS = shape.read_imports(MODULES)


def _package(module: str) -> str:
    return module.split(".")[0]


def test_the_modules_are_found():
    assert {_package(m) for m in MODULES} == set(PACKAGES + OUTSIDE)
    assert len(MODULES) > 100


@pytest.mark.parametrize("package", PACKAGES + OUTSIDE)
def test_a_package_imports_only_the_packages_below_it(package):
    allowed = set(PACKAGES[: PACKAGES.index(package)] if package in PACKAGES else PACKAGES)
    wrong = sorted(f"{imp.importer}:{imp.line} imports {imp.target}" for imp in IMPORTS
                   if _package(imp.importer) == package and _package(imp.target) in PACKAGES + OUTSIDE
                   and _package(imp.target) != package and _package(imp.target) not in allowed)
    assert wrong == [], f"{package} may import only {sorted(allowed) or 'none of the others'}"


def test_the_layering_sees_the_corpus_imports():
    """The corpus's imports are read (the check above is not vacuous for it)."""
    targets = {_package(imp.target) for imp in IMPORTS if _package(imp.importer) == "corpus"}
    assert {"occupancy", "roofline"} <= targets


def _private_imports(importers: tuple[str, ...] = PACKAGES) -> dict[tuple[str, str], str]:
    """(importer, imported) -> where, for each import of another package's private module by a
    module of ``importers``."""
    found = {}
    for imp in IMPORTS:
        top = _package(imp.target)
        if top in PACKAGES and top != _package(imp.importer) and _package(imp.importer) in importers:
            if any(part.startswith("_") for part in imp.target.split(".")[1:]):
                found.setdefault((imp.importer, imp.target), f"{imp.importer}:{imp.line} imports {imp.target}")
    return found


def test_no_package_imports_another_packages_private_module():
    found = _private_imports()
    new = sorted(where for pair, where in found.items() if pair not in PRIVATE_IMPORTS_BEING_REMOVED)
    assert new == [], "import the package's public name instead (or give the helper a public home)"


def test_the_private_import_allow_list_only_shrinks():
    gone = sorted(PRIVATE_IMPORTS_BEING_REMOVED - set(_private_imports()))
    assert gone == [], "these imports are gone: delete them from PRIVATE_IMPORTS_BEING_REMOVED"


def test_the_corpus_reaches_only_the_private_modules_named():
    found = {(importer, ".".join(target.split(".")[:2])) for importer, target in _private_imports(OUTSIDE)}
    assert found == CORPUS_PRIVATE_IMPORTS


def _circles() -> set[tuple[str, ...]]:
    """The import circles within each package (benchmarks/shape.py reads them for its summary too)."""
    return shape.import_circles(IMPORTS, MODULES)


def test_no_import_circles_within_a_package():
    new = sorted(set(_circles()) - CIRCLES_BEING_REMOVED)
    assert new == [], f"import circles: {new}"


def test_the_circle_allow_list_only_shrinks():
    gone = sorted(CIRCLES_BEING_REMOVED - _circles())
    assert gone == [], "these circles are gone: delete them from CIRCLES_BEING_REMOVED"


def test_the_reader_sees_imports_inside_functions():
    """The check is not vacuous: function-level imports and relative imports are resolved."""
    main_imports = {(imp.target, imp.in_function) for imp in IMPORTS if imp.importer == "gpuroof._main"}
    assert ("pydantic", False) in main_imports
    figure_imports = {(imp.target, imp.in_function) for imp in IMPORTS if imp.importer == "occupancy._figure"}
    assert ("matplotlib.figure", True) in figure_imports  # matplotlib: imported where a plot is drawn
    assert any(imp.target == "gpuroof._main" for imp in IMPORTS if imp.importer == "gpuroof")


def test_the_corpus_does_not_ship_in_the_wheel():
    """pyproject's package list names the library's packages, never the corpus."""
    include = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"][
        "packages"]["find"]["include"]
    assert all(not fnmatch.fnmatch(outside, pattern) for outside in OUTSIDE for pattern in include)
    assert all(any(fnmatch.fnmatch(package, pattern) for pattern in include) for package in PACKAGES)


def test_the_command_line_imports_the_project_at_module_level():
    """gpuroof's laziness is its subcommand table (`importlib` loads the chosen module), not imports
    tucked into functions."""
    inside = sorted(f"{imp.importer}:{imp.line} imports {imp.target}" for imp in IMPORTS
                    if _package(imp.importer) == "gpuroof" and imp.in_function and _package(imp.target) in PACKAGES)
    assert inside == []
