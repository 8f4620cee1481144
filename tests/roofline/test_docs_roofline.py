"""The ```python examples in docs/roofline.md run, so the docs cannot rot."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "roofline.md"
BLOCKS = re.findall(r"```python\n(.*?)```", DOC.read_text("utf-8"), flags=re.S)


def test_the_doc_has_examples():
    assert len(BLOCKS) >= 5


@pytest.mark.parametrize("code", BLOCKS, ids=[f"block{i + 1}" for i in range(len(BLOCKS))])
def test_doc_example_runs(code):
    exec(compile(code, f"{DOC.name}", "exec"), {"__name__": "docs_example"})
