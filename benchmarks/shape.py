"""The source's shape against the house rules, read with `ast` (nothing is imported or run).

For the packages occupancy, roofline, validate, gpuroof (and corpus where it exists) it prints:

- modules over 600 lines (all lines of the file);
- functions over 80 lines: a function's lines from its ``def`` to its last line, less its
  docstring (numpydoc docstrings are required, and their length is not the function's).
  Data tables are left out: a function at least half of whose remaining lines lie inside
  multi-line container displays (``[...]``, ``(...)``, ``{...}``) is a table of facts.
  A nested function counts on its own and inside its parent;
- public functions with more than 8 parameters: a function whose name has no leading
  underscore, at a module's top level or in a class whose name has none, in any module
  (a private module's public-named function is an API between modules). Parameters are the
  named ones (positional, keyword-only), without ``self``/``cls``, ``*args`` and ``**kwargs``;
- the length of ``__all__`` of each package and public submodule (no path part with a
  leading underscore); the target, 50, holds for ``roofline``;
- imports inside functions that are not of an optional heavy dependency (`HEAVY`: the
  top-level names below, and their submodules), nor inside a package's PEP 562
  ``__getattr__`` (the lazy loading of ``__init__.py``);
- import circles within each package: the strongly connected components of the graph of
  module imports (those inside functions too; ``if TYPE_CHECKING:`` imports, which never
  run, left out). ``from x import y`` is an import of ``x.y`` where that module exists,
  else of ``x``;
- docstrings and comments that narrate history rather than say what is (`HISTORY`):
  ``issue N``, ``previously``, ``formerly``, ``no longer`` and ``any more`` (not before a
  ``than``), ``used to be`` or ``it/this/that/they/we/which/who used to``,
  ``was/were/has been`` with ``replaced``/``removed``/``moved``/``renamed``/``rewritten``/
  ``changed``, ``this fix/change/commit``, and a sentence with both ``was``/``were`` and
  ``now``. A sentence is cut at ``. `` and at a blank line;
  consecutive comment lines are one text.

It ends with a summary table (criterion, count, target, pass or fail) and exits 1 when a
criterion fails. Run ``python benchmarks/shape.py [--root DIR]`` from anywhere.
"""

from __future__ import annotations

import argparse
import ast
import io
import re
import sys
import tokenize
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("occupancy", "roofline", "validate", "gpuroof", "corpus")

MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 80
MAX_PARAMETERS = 8
MAX_ALL = {"roofline": 50}

#: Optional heavy dependencies that a function may import where it needs them: the GPU
#: stacks, plotting, the frameworks, notebooks, Nsight Compute's report reader, compression.
HEAVY = frozenset({
    "IPython", "compression", "cupy", "cuda", "ipykernel", "matplotlib", "nbclient", "nbformat",
    "ncu_report", "numba", "pynvml", "torch", "triton", "zstandard",
})

#: (name, pattern) of the phrases that narrate history, matched case-insensitively per sentence.
HISTORY: tuple[tuple[str, re.Pattern[str]], ...] = tuple((name, re.compile(pattern, re.I)) for name, pattern in (
    ("issue N", r"\bissues?\s*#?\d+"),
    ("previously/formerly", r"\b(previously|formerly)\b"),
    ("no longer/any more", r"\b(no longer|any ?more)\b(?![^.;]{0,60}\bthan\b)"),
    ("used to", r"\b(it|this|that|they|we|which|who)\s+used to\b|\bused to be\b"),
    ("was replaced/removed/...", r"\b(was|were|has been|have been)\s+(replaced|removed|moved|renamed|rewritten|changed)\b"),
    ("this fix/change", r"\bthis (fix|change|commit|patch|refactor\w*)\b"),
    ("was ... now", r"\b(was|were)\b.*\bnow\b|\bnow\b.*\b(was|were)\b"),
))


@dataclass(frozen=True)
class Import:
    """One import statement's target, resolved to a dotted module (or a package's attribute)."""

    importer: str
    target: str
    line: int
    in_function: bool
    type_checking: bool
    function: str | None = None


@dataclass(frozen=True)
class Hit:
    """One finding: where (module and line), and what (a count or a name)."""

    module: str
    line: int
    what: str


def module_name(root: Path, path: Path) -> str:
    """The dotted module name of ``path`` under ``root`` (a package's ``__init__`` is the package)."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def find_modules(root: Path, packages: Sequence[str] = PACKAGES) -> dict[str, Path]:
    """Dotted name -> path of every ``*.py`` of the ``packages`` that exist under ``root``."""
    return {module_name(root, path): path for package in packages if (root / package / "__init__.py").exists()
            for path in sorted((root / package).rglob("*.py"))}


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _functions(node: ast.AST, parents: tuple[ast.AST, ...] = ()) -> Iterator[tuple[ast.FunctionDef, tuple[ast.AST, ...]]]:
    """Every function under ``node`` with the chain of nodes (classes, functions) around it."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield child, parents
            yield from _functions(child, parents + (child,))
        elif isinstance(child, ast.ClassDef):
            yield from _functions(child, parents + (child,))
        else:
            yield from _functions(child, parents)


def long_modules(modules: Mapping[str, Path], limit: int = MAX_MODULE_LINES) -> list[Hit]:
    """Modules of more than ``limit`` lines."""
    hits = []
    for name, path in modules.items():
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > limit:
            hits.append(Hit(name, 0, f"{lines} lines"))
    return hits


def _docstring_lines(function: ast.FunctionDef) -> int:
    first = function.body[0]
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        return first.end_lineno - first.lineno + 1
    return 0


def _table_lines(function: ast.FunctionDef) -> int:
    """The lines of ``function`` inside multi-line container displays (outermost ones only)."""
    lines: set[int] = set()
    for node in ast.walk(function):
        if isinstance(node, (ast.List, ast.Tuple, ast.Dict, ast.Set)) and node.end_lineno > node.lineno:
            lines.update(range(node.lineno, node.end_lineno + 1))
    return len(lines)


def long_functions(modules: Mapping[str, Path], limit: int = MAX_FUNCTION_LINES) -> list[Hit]:
    """Functions of more than ``limit`` lines less their docstring, data tables left out."""
    hits = []
    for name, path in modules.items():
        for function, _ in _functions(_tree(path)):
            lines = function.end_lineno - function.lineno + 1 - _docstring_lines(function)
            if lines > limit and 2 * _table_lines(function) < lines:
                hits.append(Hit(name, function.lineno, f"{function.name}: {lines} lines"))
    return hits


def _is_public(function: ast.FunctionDef, parents: tuple[ast.AST, ...]) -> bool:
    if function.name.startswith("_") or any(isinstance(p, (ast.FunctionDef, ast.AsyncFunctionDef)) for p in parents):
        return False
    return all(not p.name.startswith("_") for p in parents if isinstance(p, ast.ClassDef))


def wide_public_functions(modules: Mapping[str, Path], limit: int = MAX_PARAMETERS) -> list[Hit]:
    """Public functions with more than ``limit`` named parameters (``self``/``cls`` not counted)."""
    hits = []
    for name, path in modules.items():
        for function, parents in _functions(_tree(path)):
            if not _is_public(function, parents):
                continue
            args = function.args
            named = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
            if parents and named[:1] in (["self"], ["cls"]):
                named = named[1:]
            if len(named) > limit:
                hits.append(Hit(name, function.lineno, f"{function.name}: {len(named)} parameters"))
    return hits


def _all_names(tree: ast.Module) -> list[str] | None:
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets) and node.value is not None:
            try:
                return list(ast.literal_eval(node.value))
            except ValueError:
                return None
    return None


def all_sizes(modules: Mapping[str, Path]) -> dict[str, int]:
    """Length of ``__all__`` of each public module (no dotted part with a leading underscore)."""
    sizes = {}
    for name, path in modules.items():
        if not any(part.startswith("_") for part in name.split(".")):
            names = _all_names(_tree(path))
            if names is not None:
                sizes[name] = len(names)
    return sizes


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id.lstrip("_") == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _walk_imports(node: ast.AST, function: str | None = None, type_checking: bool = False):
    """(import node, enclosing function's name or None, under ``if TYPE_CHECKING``) under ``node``."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.Import, ast.ImportFrom)):
            yield child, function, type_checking
        elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield from _walk_imports(child, child.name, type_checking)
        elif isinstance(child, ast.Lambda):
            yield from _walk_imports(child, "<lambda>", type_checking)
        elif isinstance(child, ast.If) and _is_type_checking(child):
            yield from _walk_imports(child, function, True)
        else:
            yield from _walk_imports(child, function, type_checking)


def read_imports(modules: Mapping[str, Path]) -> list[Import]:
    """Every import of every module, relative imports resolved against ``modules``."""
    found = []
    for module, path in modules.items():
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        for node, function, type_checking in _walk_imports(_tree(path)):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join(anchor + ([base] if base else []))
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
            found += [Import(module, target, node.lineno, function is not None, type_checking, function)
                      for target in dict.fromkeys(targets)]
    return found


def function_imports(imports: Sequence[Import], modules: Mapping[str, Path]) -> list[Hit]:
    """Imports inside functions other than of `HEAVY` or in an ``__init__``'s ``__getattr__``."""
    hits = []
    for imp in imports:
        lazy_init = imp.function == "__getattr__" and modules[imp.importer].name == "__init__.py"
        if imp.in_function and not imp.type_checking and not lazy_init and imp.target.split(".")[0] not in HEAVY:
            hits.append(Hit(imp.importer, imp.line, f"{imp.function}() imports {imp.target}"))
    return hits


def import_circles(imports: Sequence[Import], modules: Mapping[str, Path]) -> set[tuple[str, ...]]:
    """The import circles within each package (strongly connected components, Tarjan), each sorted."""
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for imp in imports:
        if (not imp.type_checking and imp.target in modules and imp.target != imp.importer
                and imp.target.split(".")[0] == imp.importer.split(".")[0]):
            graph[imp.importer].add(imp.target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: set[tuple[str, ...]] = set()

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for succ in sorted(graph[node]):
            if succ not in index:
                visit(succ)
                low[node] = min(low[node], low[succ])
            elif succ in on_stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            component = []
            while (top := stack.pop()) != node:
                on_stack.discard(top)
                component.append(top)
            on_stack.discard(node)
            if component:
                circles.add(tuple(sorted([node, *component])))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return circles


def _texts(path: Path) -> Iterator[tuple[int, str]]:
    """(first line, text) of each docstring and each block of consecutive comment lines."""
    source = path.read_text(encoding="utf-8")
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                yield first.lineno, first.value.value
    block: list[str] = []
    start = last = 0
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type != tokenize.COMMENT:
            continue
        line = token.start[0]
        if block and line != last + 1:
            yield start, " ".join(block)
            block = []
        if not block:
            start = line
        block.append(token.string.lstrip("#").strip())
        last = line
    if block:
        yield start, " ".join(block)


def history_notes(modules: Mapping[str, Path]) -> list[Hit]:
    """Docstring and comment sentences that narrate history (`HISTORY`), one hit per sentence."""
    hits = []
    for name, path in modules.items():
        for line, text in _texts(path):
            for paragraph in re.split(r"\n\s*\n", text):
                for sentence in re.split(r"(?<=[.!?])\s+", " ".join(paragraph.split())):
                    matched = [label for label, pattern in HISTORY if pattern.search(sentence)]
                    if matched:
                        hits.append(Hit(name, line, f"[{', '.join(matched)}] {sentence[:110]}"))
    return hits


@dataclass(frozen=True)
class Row:
    """One line of the summary: a criterion, today's count, its target and whether it holds."""

    criterion: str
    count: int
    target: str
    passed: bool


def summarize(root: Path, packages: Sequence[str] = PACKAGES, out=sys.stdout) -> list[Row]:
    """Print every finding under ``root``'s ``packages`` and return the summary rows."""
    modules = find_modules(root, packages)
    imports = read_imports(modules)
    sizes = all_sizes(modules)
    circles = sorted(import_circles(imports, modules))
    sections = [
        (f"modules over {MAX_MODULE_LINES} lines", long_modules(modules)),
        (f"functions over {MAX_FUNCTION_LINES} lines (less the docstring; data tables left out)",
         long_functions(modules)),
        (f"public functions with more than {MAX_PARAMETERS} parameters", wide_public_functions(modules)),
        ("imports inside functions (not an optional heavy dependency)", function_imports(imports, modules)),
        ("import circles", [Hit(c[0], 0, " <-> ".join(c)) for c in circles]),
        ("docstrings and comments that narrate history", history_notes(modules)),
    ]
    print(f"packages: {', '.join(p for p in packages if (root / p / '__init__.py').exists())} "
          f"({len(modules)} modules)", file=out)
    for title, hits in sections:
        print(f"\n## {title}: {len(hits)}", file=out)
        for hit in hits:
            print(f"  {hit.module}{f':{hit.line}' if hit.line else ''}  {hit.what}", file=out)
    print("\n## len(__all__)", file=out)
    for name, size in sorted(sizes.items()):
        print(f"  {name}: {size}", file=out)
    targets = [f"<= {MAX_MODULE_LINES} lines", f"<= {MAX_FUNCTION_LINES} lines", f"<= {MAX_PARAMETERS} params",
               "heavy deps only", "none", "none"]
    rows = [Row(title.split(" (")[0], len(hits), target, not hits) for (title, hits), target in zip(sections, targets)]
    rows[4:4] = [Row(f"len({name}.__all__)", sizes.get(name, 0), f"<= {limit}", sizes.get(name, 0) <= limit)
                 for name, limit in MAX_ALL.items()]
    width = max(len(r.criterion) for r in rows)
    print(f"\n{'criterion':<{width}}  {'today':>5}  {'target':<16}  result", file=out)
    for row in rows:
        print(f"{row.criterion:<{width}}  {row.count:>5}  {row.target:<16}  {'pass' if row.passed else 'FAIL'}",
              file=out)
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", type=Path, default=ROOT, help="the repository's root (default: this checkout)")
    args = parser.parse_args(argv)
    rows = summarize(args.root.resolve())
    return 0 if all(r.passed for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
