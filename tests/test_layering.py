"""The packages' layering, read from the source: ``occupancy <- roofline <- validate <- gpuroof``.

Every import of every module is read with `ast` (by benchmarks/shape.py), those inside
functions included: a package imports only the packages below it, never another package's
private module (``x._y``), and no module of a package takes part in an import circle.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.test_shape import shape  # the one reader of imports: benchmarks/shape.py

ROOT = Path(__file__).resolve().parents[1]

# Lowest first: each package may import those before it, never those after it.
PACKAGES = ("occupancy", "roofline", "validate", "gpuroof")

# Imports of another package's private module that the house issue (19) is removing, as
# (importing module, imported module). The list only shrinks: a pair that no longer occurs
# fails the test until it is deleted here, and a new pair fails it at once.
PRIVATE_IMPORTS_BEING_REMOVED: frozenset[tuple[str, str]] = frozenset()

# Import circles within a package that issue 19 is removing, each as the sorted modules of one
# circle; shrinks like the list above. An import moved into a function to dodge a circle still
# closes it (only ``if TYPE_CHECKING:`` imports, which never run, are left out).
CIRCLES_BEING_REMOVED: frozenset[tuple[str, ...]] = frozenset()


MODULES: dict[str, Path] = shape.find_modules(ROOT, PACKAGES)

IMPORTS = shape.read_imports(MODULES)


def _package(module: str) -> str:
    return module.split(".")[0]


def test_the_modules_are_found():
    assert {_package(m) for m in MODULES} == set(PACKAGES)
    assert len(MODULES) > 100


@pytest.mark.parametrize("package", PACKAGES)
def test_a_package_imports_only_the_packages_below_it(package):
    allowed = set(PACKAGES[: PACKAGES.index(package)])
    wrong = sorted(f"{imp.importer}:{imp.line} imports {imp.target}" for imp in IMPORTS
                   if _package(imp.importer) == package and _package(imp.target) in PACKAGES
                   and _package(imp.target) != package and _package(imp.target) not in allowed)
    assert wrong == [], f"{package} may import only {sorted(allowed) or 'none of the others'}"


def _private_imports() -> dict[tuple[str, str], str]:
    """(importer, imported) -> where, for each import of another package's private module."""
    found = {}
    for imp in IMPORTS:
        top = _package(imp.target)
        if top in PACKAGES and top != _package(imp.importer):
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
    assert ("importlib.metadata", True) in main_imports
    assert any(imp.target == "gpuroof._main" for imp in IMPORTS if imp.importer == "gpuroof")


def test_the_command_line_imports_the_project_at_module_level():
    """gpuroof's laziness is its subcommand table (`importlib` loads the chosen module), not imports
    tucked into functions."""
    inside = sorted(f"{imp.importer}:{imp.line} imports {imp.target}" for imp in IMPORTS
                    if _package(imp.importer) == "gpuroof" and imp.in_function and _package(imp.target) in PACKAGES)
    assert inside == []
