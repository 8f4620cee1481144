"""validate's own layering, read from the source: its subpackages in layers, each importing only
its own layer or those below it, another subpackage only through that subpackage's interface
(its ``__init__``), and no import circle.

    device (0): session, compile path, the one timing loop, NVML sampler, error translation
    probes, checks, user_kernel (1): one probe per measured parameter; the oracles; a user's kernel
    suite (2): known kernels measured against roofline.predict
    report (3): the probe registry, report.json's schema, its Markdown and files
    run (4): run_validation, every GPU of a host

The device layer knows nothing of the probes; the probes and checks know nothing of the report;
only the run sees everything.
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import pytest

import validate

FOLDER = Path(validate.__file__).parent
LAYERS = {"device": 0, "probes": 1, "checks": 1, "user_kernel": 1, "suite": 2, "report": 3, "run": 4}


@functools.cache
def _imports() -> dict[str, set[str]]:
    """``"sub._module"`` (or ``"sub"`` for its ``__init__``) -> the validate modules it imports, the same way."""
    graph = {}
    for path in sorted(FOLDER.glob("*/*.py")):
        sub = path.parent.name
        name = sub if path.stem == "__init__" else f"{sub}.{path.stem}"
        deps: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):  # function-level imports count too
            if not isinstance(node, ast.ImportFrom) or node.level == 0:
                continue
            if node.level == 1:
                deps |= {f"{sub}.{node.module}"} if node.module else {f"{sub}.{a.name}" for a in node.names}
            elif node.level == 2:
                deps.add(node.module or "validate")
        graph[name] = deps
    return graph


def _subpackage(module: str) -> str:
    return module.split(".")[0]


def test_every_module_lives_in_a_subpackage_of_a_layer():
    flat = sorted(p.name for p in FOLDER.glob("*.py") if p.name != "__init__.py")
    assert flat == []
    found = {p.parent.name for p in FOLDER.glob("*/__init__.py")}
    assert found == set(LAYERS)
    assert len(_imports()) > 50


@pytest.mark.parametrize("module", sorted(_imports()))
def test_a_module_imports_only_its_layer_or_lower(module):
    layer = LAYERS[_subpackage(module)]
    upward = sorted(d for d in _imports()[module] if LAYERS.get(_subpackage(d), 99) > layer)
    assert upward == [], f"validate.{module} (layer {layer}) imports a higher layer: {upward}"


@pytest.mark.parametrize("module", sorted(_imports()))
def test_another_subpackage_is_imported_through_its_interface(module):
    """``from ..device import Session``, never ``from ..device._session import Session``: what a
    subpackage offers the layers above is its ``__init__``'s ``__all__``."""
    reached = sorted(d for d in _imports()[module] if _subpackage(d) != _subpackage(module) and "." in d)
    assert reached == [], f"validate.{module} imports another subpackage's private module: {reached}"


@pytest.mark.parametrize("sub", sorted(LAYERS))
def test_a_subpackage_interface_re_exports_only_its_own_modules(sub):
    deps = _imports()[sub]
    assert deps and all(_subpackage(d) == sub and "." in d for d in deps), deps
    exported = validate.__dict__[sub].__all__
    assert exported == sorted(exported)


def test_no_module_is_named_after_an_issue():
    named = sorted(str(p.relative_to(FOLDER)) for p in FOLDER.rglob("*.py") if re.search(r"issue|\d", p.stem))
    assert named == []


def test_no_import_circle():
    # an import of another subpackage is an edge to its __init__, which imports its modules
    graph = _imports()
    state: dict[str, int] = {}

    def visit(module: str, path: list[str]) -> None:
        state[module] = 1
        for dep in sorted(graph.get(module, ())):
            if state.get(dep) == 1:
                raise AssertionError(f"import circle: {' -> '.join([*path, module, dep])}")
            if dep not in state:
                visit(dep, [*path, module])
        state[module] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [])
