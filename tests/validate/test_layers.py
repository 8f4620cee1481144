"""validate's own layering: device <- probes and evaluation <- report <- run, and no import circle.

The device layer (session, the one compile path, the one timing loop, the NVML sampler, the
error translation) knows nothing of the probes; the probes and the evaluation know nothing of
the report; only the run (`run_validation`, several devices) sees everything.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

import validate

FOLDER = Path(validate.__file__).parent
DEVICE = {"_errors", "_driver", "_checks", "_compile", "_timing", "_session", "_device", "_clocks", "_format", "_files",
          "_kernel_args"}
REPORT = {"_report", "_measurement_report", "_prediction_report", "_family_source"}
RUN = {"_validate", "_multi"}


def _layer(module: str) -> int:
    if module in DEVICE:
        return 0
    if module in REPORT:
        return 2
    if module in RUN:
        return 3
    return 1  # the probes and the evaluation


@functools.cache
def _imports() -> dict[str, set[str]]:
    graph = {}
    for path in sorted(FOLDER.glob("_*.py")):
        if path.stem == "__init__":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        deps: set[str] = set()
        for node in ast.walk(tree):  # function-level imports count too
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                deps |= {node.module} if node.module else {a.name for a in node.names}
        graph[path.stem] = deps
    return graph


@pytest.mark.parametrize("module", sorted(_imports()))
def test_a_module_imports_only_its_layer_or_lower(module):
    upward = sorted(d for d in _imports()[module] if _layer(d) > _layer(module))
    assert upward == [], f"validate.{module} (layer {_layer(module)}) imports a higher layer: {upward}"


def test_no_import_circle():
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
