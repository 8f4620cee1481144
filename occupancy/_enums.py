"""The enumerators of C++ source and their values, for kernel names spelled with enum arguments.

A kernel templated on an enum (``sorter<Mode::Fast>``) is mangled with the enumerator's value,
and demangled as a cast of it (``sorter<(Mode)0>``): the name a user writes is in the source,
not in the binary. The enum definitions of the source (preprocessed by nvcc, so that those of
its headers count too) give each enumerator's value; `occupancy._names.match_kernel` turns a
spelled ``Mode::Fast`` into ``(Mode)0`` with them.
"""

from __future__ import annotations

import ast
import operator
import re
from typing import NamedTuple


__all__ = ["Enumerator", "enum_value_spellings", "enumerators", "type_aliases"]


class Enumerator(NamedTuple):
    """One enumerator: its enum's unqualified name (the typedef name of an anonymous enum), its
    own name, its value, and whether the enum is scoped (``enum class``)."""

    enum: str
    name: str
    value: int
    scoped: bool


_ENUM = re.compile(r"\b(typedef\s+)?enum\s+(?:(class|struct)\s+)?(?:__attribute__\s*\(\(.*?\)\)\s*)?"
                   r"((?:\w+\s*::\s*)*\w+)?\s*(?::\s*[\w\s:]+?)?\s*\{([^{}]*)\}\s*(\w+)?", re.S)
_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_LITERAL = re.compile(r"(?<![\w.])(0[xX][0-9a-fA-F']+|0[bB][01']+|\d[\d']*)[uUlL]*(?![\w.])")
_NAME = re.compile(r"(?<![\w.])((?:[A-Za-z_]\w*\s*::\s*)*[A-Za-z_]\w*)(?![\w(])")
_OPERATORS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Mod: operator.mod,
              ast.LShift: operator.lshift, ast.RShift: operator.rshift, ast.BitOr: operator.or_,
              ast.BitAnd: operator.and_, ast.BitXor: operator.xor,
              ast.Div: lambda a, b: int(a / b)}  # C's integer division truncates toward zero
_UNARY = {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Invert: operator.invert}


def _integer(literal: str) -> str:
    digits = literal.replace("'", "")
    if len(digits) > 1 and digits[0] == "0" and digits[1] in "0123456789":
        return str(int(digits, 8))  # C's octal literal
    return str(int(digits, 0))


def _evaluate(node: ast.AST) -> int:
    if isinstance(node, ast.Expression):
        return _evaluate(node.body)
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        return _OPERATORS[type(node.op)](_evaluate(node.left), _evaluate(node.right))
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_evaluate(node.operand))
    raise ValueError("not an integer constant expression of literals and enumerators")


def _value(expression: str, known: dict[str, int]) -> int | None:
    """The value of an enumerator's initialiser: integer literals, enumerators defined before
    it, parentheses and the arithmetic and bitwise operators; None for anything else (a cast,
    ``sizeof``, a constexpr function)."""
    text = _LITERAL.sub(lambda m: _integer(m[1]), expression)

    def name(m: re.Match[str]) -> str:
        path = re.sub(r"\s+", "", m[1])
        found = known.get(path, known.get(path.rsplit("::", 1)[-1]))
        if found is None:
            raise KeyError(path)
        return f"({found})"

    try:
        text = _NAME.sub(name, text)
        return _evaluate(ast.parse(text.strip(), mode="eval"))
    except (KeyError, SyntaxError, ValueError, ZeroDivisionError, RecursionError):
        return None


def _items(body: str) -> list[str]:
    """An enumerator list split at its commas (not those inside parentheses or brackets; angle
    brackets are not counted, since `<<` and `<` are operators there too)."""
    items, depth, current = [], 0, []
    for ch in body:
        depth += ch in "(["
        depth -= ch in ")]"
        if ch == "," and depth <= 0:
            items.append("".join(current))
            current = []
        else:
            current.append(ch)
    items.append("".join(current))
    return [item.strip() for item in items if item.strip()]


def enumerators(text: str) -> tuple[Enumerator, ...]:
    """Every enumerator of C++ source ``text`` whose value its definition gives (an initialiser
    of literals and enumerators, or the one before it plus one).

    Examples
    --------
    >>> [(e.enum, e.name, e.value) for e in enumerators("enum class Mode : int { Fast, Exact = 1 << 2, Late };")]
    [('Mode', 'Fast', 0), ('Mode', 'Exact', 4), ('Mode', 'Late', 5)]
    """
    out: list[Enumerator] = []
    known: dict[str, int] = {}
    for m in _ENUM.finditer(_COMMENT.sub(" ", text) if "/" in text else text):
        typedef, scoped, tag, body, alias = m[1], bool(m[2]), m[3], m[4], m[5]
        name = re.sub(r"\s+", "", tag).rsplit("::", 1)[-1] if tag else (alias if typedef else None)
        if name is None:
            continue
        value: int | None = -1
        own: dict[str, int] = {}  # a scoped enum's initialisers name its enumerators unqualified
        for item in _items(body):
            enumerator, _, initialiser = item.partition("=")
            enumerator = enumerator.split()[0] if enumerator.split() else ""
            if not re.fullmatch(r"[A-Za-z_]\w*", enumerator):
                break
            value = _value(initialiser, {**known, **own}) if initialiser.strip() else \
                (None if value is None else value + 1)
            if value is None:
                continue  # unknown, and so are those after it without an initialiser
            out.append(Enumerator(name, enumerator, value, scoped))
            own[enumerator] = known[f"{name}::{enumerator}"] = value
            if not scoped:
                known[enumerator] = value
    return tuple(out)


def enum_value_spellings(path: str, found: tuple[Enumerator, ...]) -> set[str]:
    """The casts (``(Mode)0``) a spelled enumerator (``Mode::Fast``, ``ns::Mode::Fast``, or an
    unscoped ``ASC`` or ``ns::ASC``) stands for, as demangled names write its value; empty when
    ``path`` names no enumerator of ``found``.

    Examples
    --------
    >>> found = enumerators("enum class Mode { Fast, Exact = 4 }; enum Order { ASC, DESC };")
    >>> sorted(enum_value_spellings("Mode::Exact", found)), sorted(enum_value_spellings("DESC", found))
    (['(Mode)4'], ['(Order)1'])
    """
    parts = path.split("::")
    name = parts[-1]
    by_enum = [e for e in found if e.name == name and len(parts) > 1 and e.enum == parts[-2]]
    unscoped = [e for e in found if e.name == name and not e.scoped]
    return {f"({e.enum}){e.value}" for e in (by_enum or unscoped)}


# a type as an alias names it: qualifiers and the words of a builtin, a scoped name, template
# arguments, pointers and references (no function types, no bodies)
_TYPE = r"(?:(?:const|volatile|unsigned|signed|long|short|struct|class)\s+)*[A-Za-z_][\w:]*(?:\s*<[^;{}()]*>)?(?:\s*[*&])*"
_TYPEDEF = re.compile(rf"\btypedef\s+({_TYPE})\s+([A-Za-z_]\w*)\s*;")
_USING = re.compile(rf"\busing\s+([A-Za-z_]\w*)\s*=\s*({_TYPE})\s*;")


def type_aliases(text: str) -> dict[str, str]:
    """Every plain type alias of C++ source ``text`` (``typedef T name;``, ``using name = T;``), by
    name: what a kernel's template argument spelled with an alias (``norm<floatX>``) stands for
    in its demangled name (``norm<__nv_bfloat16>``). Function-pointer and struct-body typedefs
    are left out; a name aliased twice keeps its last definition.

    Examples
    --------
    >>> type_aliases("typedef __nv_bfloat16 floatX; using acc_t = float; typedef struct { int a; } S;")
    {'floatX': '__nv_bfloat16', 'acc_t': 'float'}
    """
    text = _COMMENT.sub(" ", text) if "/" in text else text
    found = [(m.start(), m[2], m[1]) for m in _TYPEDEF.finditer(text)]
    found += [(m.start(), m[1], m[2]) for m in _USING.finditer(text)]
    return {name: " ".join(target.split()) for _, name, target in sorted(found) if name != target.strip()}
