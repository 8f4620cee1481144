"""Every ```python example in docs/*.md runs, and every command output shown in the docs is what the
command prints today, so the docs cannot rot."""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path
from typing import NamedTuple

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


# --- Command outputs shown in the docs ------------------------------------------------------
# A fenced block whose first line is ``$ gpuroof ...`` (continued by trailing backslashes) shows
# that command's output below it. Each is run again, from the repository root, and its stdout
# compared line by line with what the page shows; ``GPUROOF_UPDATE_DOCS=1 pytest tests/test_docs.py``
# writes the fresh output into the page instead. A line that is only ``...`` stands for any
# number of lines the page leaves out. The command runs in a scratch folder that sees the
# repository's folders (`in_a_clone`), so a file it writes (``--plot saxpy3.png``) lands there. Commands that measure a GPU show one run's timings: they
# are recorded, not regenerated.
ROOT = DOCS.parent
PAGES = (ROOT / "README.md", *sorted(DOCS.glob("*.md")))
MEASURED_ON_A_GPU = ("measure", "validate", "calibrate")
_FENCE = re.compile(r"^```[^\n]*\n(\$ gpuroof .*?)^```", flags=re.S | re.M)


class Shown(NamedTuple):
    """One shown command: its page, its text as shown, its argument list and the output shown."""

    page: Path
    block: str
    argv: list[str]
    output: list[str]


def _shown(page: Path) -> list[Shown]:
    found = []
    for match in _FENCE.finditer(page.read_text(encoding="utf-8")):
        lines = match.group(1).splitlines()
        command = lines[0][2:]
        rest = 1
        while command.endswith("\\"):
            command = command[:-1] + " " + lines[rest].strip()
            rest += 1
        found.append(Shown(page, match.group(1), shlex.split(command)[1:], lines[rest:]))
    return found


SHOWN = [s for page in PAGES for s in _shown(page)]


def _matches(shown: list[str], produced: list[str]) -> bool:
    """Whether the produced lines are the shown ones, a lone ``...`` standing for any lines."""
    if not shown:
        return not produced
    if shown[0].strip() == "...":
        return any(_matches(shown[1:], produced[i:]) for i in range(len(produced) + 1))
    return bool(produced) and shown[0].rstrip() == produced[0].rstrip() and _matches(shown[1:], produced[1:])


def test_the_docs_show_command_outputs():
    """The collection above is not vacuous: the pages that show outputs are found."""
    names = {(s.page.name, s.argv[0]) for s in SHOWN}
    assert {("measure.md", "ncu"), ("your-kernel.md", "resources"), ("occupancy.md", "occupancy")} <= names


@pytest.mark.parametrize("shown", SHOWN, ids=[f"{s.page.name}:{' '.join(s.argv)[:60]}" for s in SHOWN])
def test_shown_output_is_what_the_command_prints(shown, capsys, in_a_clone):
    if shown.argv[0] in MEASURED_ON_A_GPU:
        pytest.skip(f"gpuroof {shown.argv[0]} shows one run's measured timings on a GPU")
    from gpuroof import main

    capsys.readouterr()
    assert main(shown.argv) == 0, capsys.readouterr().err
    produced = [line.rstrip() for line in capsys.readouterr().out.splitlines()]
    while produced and not produced[-1]:
        produced.pop()
    if os.environ.get("GPUROOF_UPDATE_DOCS") == "1":
        command_lines = shown.block.splitlines()[:len(shown.block.splitlines()) - len(shown.output)]
        fresh = "\n".join([*command_lines, *produced]) + "\n"
        text = shown.page.read_text(encoding="utf-8")
        shown.page.write_text(text.replace(shown.block, fresh, 1), encoding="utf-8")
        return
    assert _matches(shown.output, produced), (
        f"{shown.page.name}: the output shown for `gpuroof {' '.join(shown.argv)}` is stale; "
        "refresh it with GPUROOF_UPDATE_DOCS=1 pytest tests/test_docs.py\n" + "\n".join(produced))
