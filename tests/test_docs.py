"""Every ```python example in docs/*.md runs, so the docs cannot rot."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[1] / "docs"
# the guides that must teach by example (docs/results/ holds measured reports, not guides)
GUIDES = ("occupancy.md", "roofline.md", "kernels.md", "memory.md", "prediction.md", "validate.md", "your-kernel.md",
          "measure.md")


def _blocks(path: Path) -> list[str]:
    return re.findall(r"```python\n(.*?)```", path.read_text(encoding="utf-8"), flags=re.S)


EXAMPLES = [(path.name, i, code) for path in sorted(DOCS.glob("*.md")) for i, code in enumerate(_blocks(path))]


@pytest.mark.parametrize("name", GUIDES)
def test_every_guide_has_examples(name):
    assert _blocks(DOCS / name), f"docs/{name} has no ```python example"


@pytest.mark.parametrize(("name", "index", "code"), EXAMPLES, ids=[f"{n}:{i + 1}" for n, i, _ in EXAMPLES])
def test_doc_example_runs(name, index, code, capsys):
    exec(compile(code, f"docs/{name}[{index + 1}]", "exec"), {"__name__": "__doc_example__"})  # noqa: S102
