"""The python examples in docs/kernels.md and docs/memory.md run."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"


def _blocks(name):
    text = (DOCS / name).read_text(encoding="utf-8")
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


@pytest.mark.parametrize("name", ["kernels.md", "memory.md"])
def test_doc_examples_run(name, capsys):
    blocks = _blocks(name)
    assert blocks, f"no python examples in {name}"
    for index, code in enumerate(blocks):
        exec(compile(code, f"{name}[{index}]", "exec"), {})  # noqa: S102
