"""Every example README.md and docs/*.md show runs, and every output they show is what the code
prints today, so the docs cannot rot.

What a page shows, and how it is checked:

- a ```python block runs (its asserts are its checks); a ```text block right after it (nothing
  but blank lines between) shows what the block prints;
- a fenced block whose first line is ``$ COMMAND`` (continued by trailing backslashes) shows that
  command's output below it;
- a ```sh, ```bash, ```console or ```shell block lists command lines (``#`` starts a comment,
  ``;`` separates commands); each line runs, its commands in order, and each must exit 0.

Commands run in a scratch folder that sees the repository's folders, as a clone's root does
(`_scratch`): the files a command writes land there, never in the repository, and a file it
writes that the repository publishes (``gpuroof corpus --out docs/results/h200/corpus.md``, the
demo's plot in `PUBLISHED`) must be the published one. ``gpuroof`` and ``python -m gpuroof`` run
in-process (`gpuroof.main`); a command that needs a GPU, the network, Nsight Compute or the test
suite itself is not run, and `NOT_RUN` says why; any other program fails the test until it runs
or is listed there.

The comparison, its whole normalisation: trailing spaces and trailing blank lines are dropped,
and a line that is only ``...`` stands for any number of lines the page leaves out.

``make docs`` (``GPUROOF_UPDATE_DOCS=1 GPUROOF_TEST_FULL=1 pytest -n 0 tests/test_docs.py``)
writes the fresh outputs and published files into the repository where they differ, instead of
comparing (an output that still matches keeps its ``...`` lines); read the diff before committing
it. The lines in `SAMPLED_OUT` take seconds of CPU: the default suite runs the others,
``GPUROOF_TEST_FULL=1`` (``make test-full``) all.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
from pathlib import Path
from typing import NamedTuple

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PAGES = (ROOT / "README.md", *sorted(DOCS.glob("*.md")))
# the guides that must teach by example (docs/results/ holds measured reports, not guides)
GUIDES = ("occupancy.md", "roofline.md", "kernels.md", "memory.md", "prediction.md", "validate.md", "your-kernel.md",
          "measure.md")
FULL = os.environ.get("GPUROOF_TEST_FULL") == "1"
UPDATE = os.environ.get("GPUROOF_UPDATE_DOCS") == "1"
REFRESH = "refresh it with `make docs` (GPUROOF_UPDATE_DOCS=1 pytest tests/test_docs.py) and read the diff"

SHELLS = ("sh", "bash", "console", "shell")
# gpuroof subcommands that measure a GPU: what the pages show of them is one run's timings
NEEDS_A_GPU = {
    "measure": "times a kernel on a GPU (the page shows one run's timings)",
    "validate": "measures a GPU",
    "calibrate": "measures a GPU",
    "profile": "runs Nsight Compute on a GPU (tests/test_cli_profile.py runs it with a stand-in ncu)",
}
# the folder `gpuroof validate --out my-gpu` and `gpuroof calibrate --out my-gpu` write on a GPU
GPU_RUN_FOLDER = "my-gpu"
# Programs other than gpuroof the pages show, each with why it is not run here.
NOT_RUN = {
    "make": "builds .venv with pip from the package index (network); its targets run the suite, this test "
            "and `gpuroof demo --out demo-output`, which docs/roofline.md shows and this test runs",
    "pip": "installs from the package index (network)",
    "ncu": "Nsight Compute profiles a program on a GPU",
    "pytest": "runs the test suite, of which this test is a part",
}
# Lines that take seconds of CPU (the default suite's budget): GPUROOF_TEST_FULL=1 runs them.
SAMPLED_OUT = {
    "gpuroof corpus --gpu h200 --out docs/results/h200/corpus.md --plot docs/results/h200/corpus.png":
        "7 s: predicts the 598 launches of the H200 corpus",
    "gpuroof families tests/data/families_h200.json --out docs/results/h200/repredicted":
        "6 s: predicts the 122 launches of the H200 families (docs/prediction.md's example checks their figures)",
}
# Files the repository publishes that a shown command writes under another name: the
# published file, and the command line's file in its scratch folder.
PUBLISHED = {"docs/roofline-suite-h100.png": "demo-output/roofline.png"}


class Example(NamedTuple):
    """A ```python block: its page, line and code, the output the ```text block after it shows
    (None where none follows), and the page's text from the one's fence to the other's end."""

    page: Path
    line: int
    code: str
    output: list[str] | None
    shown: str


class Line(NamedTuple):
    """A command line shown in a page: its text (its commands quoted again, comments left out),
    its commands (argument lists, ``;`` between them), the output shown below it (``$`` blocks;
    None where none is shown) and the block."""

    page: Path
    line: int
    text: str
    commands: list[list[str]]
    output: list[str] | None
    shown: str


_FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```[ \t]*$", flags=re.S | re.M)


def _fences(page: Path) -> list[tuple[str, str, int, int, int]]:
    """(language, content, line, start, end) of each fenced block of the page."""
    text = page.read_text(encoding="utf-8")
    return [(m.group(1), m.group(2), text.count("\n", 0, m.start()) + 1, m.start(), m.end())
            for m in _FENCE.finditer(text)]


def _examples(page: Path) -> list[Example]:
    text, found = page.read_text(encoding="utf-8"), []
    fences = _fences(page)
    for i, (language, code, line, start, end) in enumerate(fences):
        if language != "python":
            continue
        after = fences[i + 1] if i + 1 < len(fences) else None
        if after is not None and after[0] == "text" and not text[end:after[3]].strip():
            found.append(Example(page, line, code, after[1].splitlines(), text[start:after[4]]))
        else:
            found.append(Example(page, line, code, None, text[start:end]))
    return found


_OPERATORS = {"|", "||", "&", "&&", ">", ">>", "<", "2>", "2>&1"}


def _commands(text: str) -> list[list[str]]:
    """A shell line's commands: its words, ``#`` comments dropped, split at ``;`` (a pipe or a
    redirection stays a word, which only a command not run may have)."""
    lexer = shlex.shlex(text, posix=True, punctuation_chars=";&|<>")
    lexer.whitespace_split = True
    commands: list[list[str]] = [[]]
    for word in lexer:
        if word == ";":
            commands.append([])
        else:
            commands[-1].append(word)
    return [c for c in commands if c]


def _text(commands: list[list[str]]) -> str:
    return "; ".join(shlex.join(argv) for argv in commands)


def _joined(lines: list[str]) -> tuple[str, int]:
    """The first logical line of `lines` (trailing backslashes continue it), and how many it took."""
    text, used = lines[0], 1
    while text.endswith("\\") and used < len(lines):
        text = text[:-1] + " " + lines[used].strip()
        used += 1
    return text, used


def _lines(page: Path) -> list[Line]:
    found = []
    for language, content, line, _, _ in _fences(page):
        lines = content.splitlines()
        if lines and lines[0].startswith("$ "):
            text, used = _joined([lines[0][2:], *lines[1:]])
            commands = _commands(text)
            found.append(Line(page, line, _text(commands), commands, lines[used:], content))
        elif language in SHELLS:
            rest, offset = lines, 1
            while rest:
                text, used = _joined(rest)
                commands = _commands(text)
                if commands:
                    found.append(Line(page, line + offset, _text(commands), commands, None, content))
                rest, offset = rest[used:], offset + used
    return found


EXAMPLES = [e for page in PAGES for e in _examples(page)]
LINES = [s for page in PAGES for s in _lines(page)]


def _matches(shown: list[str], produced: list[str]) -> bool:
    """Whether the produced lines are the shown ones, a lone ``...`` standing for any lines."""
    if not shown:
        return not produced
    if shown[0].strip() == "...":
        return any(_matches(shown[1:], produced[i:]) for i in range(len(produced) + 1))
    return bool(produced) and shown[0].rstrip() == produced[0].rstrip() and _matches(shown[1:], produced[1:])


def _printed(text: str) -> list[str]:
    produced = [line.rstrip() for line in text.splitlines()]
    while produced and not produced[-1]:
        produced.pop()
    return produced


def _write_back(page: Path, old: str, new: str) -> None:
    text = page.read_text(encoding="utf-8")
    assert old in text, f"{page.name} changed under the test: {old[:60]!r}"
    page.write_text(text.replace(old, new, 1), encoding="utf-8")


# --- The pages hold what this test reads ----------------------------------------------------

@pytest.mark.parametrize("name", GUIDES)
def test_every_guide_has_examples(name):
    assert any(e.page.name == name for e in EXAMPLES), f"docs/{name} has no ```python example"


def test_the_collection_finds_what_the_pages_show():
    """Not vacuous: the outputs, command lines and printed outputs the pages show are found."""
    shown = {(s.page.name, s.commands[0][1]) for s in LINES if s.output is not None}
    assert {("measure.md", "ncu"), ("your-kernel.md", "resources"), ("occupancy.md", "occupancy"),
            ("roofline.md", "demo")} <= shown
    assert {"README.md", "roofline.md", "validate.md"} <= {s.page.name for s in LINES if s.output is None}
    assert {"README.md", "notebooks.md", "occupancy.md"} <= {e.page.name for e in EXAMPLES if e.output is not None}


_SYNOPSIS = re.compile(r"^(\$ )?(gpuroof|python3?|pip|make|ncu) ", flags=re.M)


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_commands_are_shown_where_they_run(page):
    """A command outside a shell block or a ``$`` block would run nowhere: only a synopsis (its
    options in brackets) may be, and no command sits in an indented block."""
    for language, content, line, _, _ in _fences(page):
        if language in SHELLS or language == "python" or content.startswith("$ "):
            continue
        for match in _SYNOPSIS.finditer(content):
            end = content.find("\n", match.start())
            assert "[" in content[match.start():end if end >= 0 else None], (
                f"{page.name}:{line}: a command outside a ```sh block: {content[match.start():end]!r}")
    outside = _FENCE.sub("", page.read_text(encoding="utf-8"))
    assert not re.search(r"^ {4}(gpuroof|python3?) [a-z-]", outside, flags=re.M), (
        f"{page.name}: a command in an indented block; show it in a ```sh block")


# --- Python examples --------------------------------------------------------------------------

@pytest.mark.parametrize("example", EXAMPLES, ids=[f"{e.page.name}:{e.line}" for e in EXAMPLES])
def test_doc_example_runs(example, capsys, in_a_clone):
    capsys.readouterr()
    exec(compile(example.code, f"{example.page.name}:{example.line}", "exec"),  # noqa: S102
         {"__name__": "__doc_example__"})
    if example.output is None:
        return
    produced = _printed(capsys.readouterr().out)
    if UPDATE and not _matches(example.output, produced):
        head = example.shown[:example.shown.rindex("```text\n") + len("```text\n")]
        _write_back(example.page, example.shown, head + "".join(f"{line}\n" for line in produced) + "```")
        return
    assert _matches(example.output, produced), (
        f"{example.page.name}:{example.line}: the output shown for this example is stale; {REFRESH}\n"
        + "\n".join(produced))


# --- Command lines ----------------------------------------------------------------------------

def _program(argv: list[str]) -> tuple[str, list[str]]:
    """The program a command runs (``python -m X`` runs X; ``NAME=value`` words set its
    environment) and its arguments."""
    words = list(argv)
    while words and re.fullmatch(r"[A-Z_][A-Z0-9_]*=.*", words[0]):
        words.pop(0)
    name = Path(words[0]).name
    if re.fullmatch(r"python3?", name) and words[1:2] == ["-m"]:
        return words[2], words[3:]
    return name, words[1:]


def _not_run(line: Line) -> str | None:
    """Why the line is not run here, or None."""
    for argv in line.commands:
        program, args = _program(argv)
        if program == "gpuroof":
            if args and args[0] in NEEDS_A_GPU:
                return f"gpuroof {args[0]} {NEEDS_A_GPU[args[0]]}"
            if any(a.startswith(GPU_RUN_FOLDER + "/") for a in args):
                return f"reads what `gpuroof validate --out {GPU_RUN_FOLDER}` writes on a GPU"
        elif program in NOT_RUN:
            return f"{program}: {NOT_RUN[program]}"
        else:
            raise AssertionError(f"{line.page.name}:{line.line}: `{program}` is neither run here nor listed in "
                                 "NOT_RUN with a reason")
    if line.text in SAMPLED_OUT and not FULL:
        return f"sampled out of the default run ({SAMPLED_OUT[line.text]}); GPUROOF_TEST_FULL=1 runs it"
    return None


def _outputs(args: list[str]) -> list[str]:
    """The files and folders a gpuroof command line writes (its options declared by `add_output`)."""
    from gpuroof._main import _chosen, build_parser

    parsed = build_parser(_chosen(args)).parse_args(args)
    return [getattr(parsed, out.dest) for out in getattr(parsed, "outputs", ())
            if getattr(parsed, out.dest, None) is not None]


def _scratch(folder: Path, writes: list[str]) -> list[str]:
    """Make each folder on the way to a path the command writes inside the repository's folders
    (linked into `folder`) a real folder of links, so that the file lands in `folder`, not in the
    repository; return those paths, the ones the repository may publish."""
    inside = []
    for path in writes:
        assert not os.path.isabs(path), f"{path!r}: show a path relative to the clone, which the test can keep apart"
        here, *parts = Path(path).parts
        place = folder / here
        if not place.is_symlink():
            continue
        inside.append(path)
        for part in parts:
            if place.is_symlink():
                source = place.resolve()
                place.unlink()
                place.mkdir()
                for entry in source.iterdir():
                    (place / entry.name).symlink_to(entry, target_is_directory=entry.is_dir())
            place = place / part
        if place.is_symlink():
            place.unlink()
    return inside


def _same_image(made: Path, published: Path) -> str | None:
    """Why two PNGs differ (None when their pixels are the same): judged only where the
    published one was drawn by this matplotlib, since another version draws text otherwise."""
    import matplotlib
    import numpy as np
    from matplotlib import image
    from PIL import Image

    with Image.open(published) as png:
        drawn_by = png.info.get("Software", "")
    if f"version{matplotlib.__version__}," not in drawn_by:
        if UPDATE:
            return f"drawn by {drawn_by}"
        pytest.skip(f"{published.name} was drawn by {drawn_by or 'an unknown program'}, this is matplotlib "
                    f"{matplotlib.__version__}: the pixels cannot be compared")
    a, b = image.imread(made), image.imread(published)
    if a.shape != b.shape:
        return f"{a.shape} pixels, published {b.shape}"
    different = np.any(a != b, axis=-1).mean()
    return None if different == 0 else f"{different:.2%} of the pixels differ"


def _compare_file(made: Path, published: Path) -> str | None:
    """Why the file made is not the one published (None: it is); an update copies it there."""
    if published.suffix == ".png":
        why = _same_image(made, published)
    else:
        why = None if made.read_bytes() == published.read_bytes() else "its content differs"
    if why is not None and UPDATE:
        shutil.copyfile(made, published)
        return None
    return why


def _published(folder: Path, inside: list[str]) -> list[tuple[Path, Path]]:
    """(file made, file the repository publishes) for each file the command wrote that the
    repository has, under its name (`inside`, from `_scratch`) or another (`PUBLISHED`)."""
    pairs = [(folder / made, ROOT / published) for published, made in PUBLISHED.items() if (folder / made).exists()]
    for path in inside:
        made = folder / path
        files = sorted(p for p in made.rglob("*") if p.is_file()) if made.is_dir() else [made]
        pairs += [(f, ROOT / f.relative_to(folder)) for f in files if (ROOT / f.relative_to(folder)).is_file()]
    return pairs


@pytest.mark.parametrize("line", LINES, ids=[f"{s.page.name}:{s.line} {s.text[:60]}" for s in LINES])
def test_shown_command_runs_and_prints_what_is_shown(line, capsys, in_a_clone):
    reason = _not_run(line)
    if reason is not None:
        pytest.skip(reason)
    from gpuroof import main

    capsys.readouterr()
    printed, stale = "", []
    for argv in line.commands:
        args = _program(argv)[1]
        assert not _OPERATORS & set(args), f"`{line.text}`: this test runs commands, not pipes or redirections"
        inside = _scratch(in_a_clone, _outputs(args))
        assert main(args) == 0, f"{line.page.name}:{line.line}: `{line.text}` failed: {capsys.readouterr().err}"
        printed += capsys.readouterr().out
        for made, published in _published(in_a_clone, inside):
            why = _compare_file(made, published)
            if why is not None:
                stale.append(f"{published.relative_to(ROOT)}: {why}")
    assert not stale, f"`{line.text}` writes files the repository publishes otherwise; {REFRESH}: {stale}"
    if line.output is None:
        return
    produced = _printed(printed)
    if UPDATE and not _matches(line.output, produced):
        command_lines = line.shown.splitlines()[:len(line.shown.splitlines()) - len(line.output)]
        _write_back(line.page, line.shown, "\n".join([*command_lines, *produced]) + "\n")
        return
    assert _matches(line.output, produced), (
        f"{line.page.name}:{line.line}: the output shown for `{line.text}` is stale; {REFRESH}\n" + "\n".join(produced))
