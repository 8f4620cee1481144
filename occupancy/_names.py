"""Kernel names: C++ symbols demangled for people, and ``kernel=`` matched however it is spelled.

Demangling runs the toolkit's ``cu++filt`` or binutils' ``c++filt`` once per list of
names (Itanium mangling, the same for host and device code). Three printers spell one
template instance three ways, and `name_key` gives it one spelling:

* binutils' ``c++filt``: ``void column_sum<float, true>(float*, float const*)``,
  ``(anonymous namespace)::k<4>``, ``main::{lambda(float)#1}``, ``reduce4<float, 256u>``;
* NVIDIA's ``cu++filt``: casts for integer and bool arguments, ``reduce4<float, (unsigned int)256>``;
* Nsight Compute: template parameters left as ``T1`` in the parameter list, ``const T1 *``,
  bool arguments as ``0``/``1``, ``at::<unnamed>::k``, ``main::[lambda(float) (instance 1)]``
  (tests/data/ncu/torch_roofline.raw.csv).
"""

from __future__ import annotations

import functools
import re
import shutil
import subprocess
from collections.abc import Mapping, Sequence

from ._errors import OccupancyError
from ._tools import find_tool

__all__ = ["base_name", "demangle", "instance_name", "match_kernel", "name_key"]


@functools.cache
def _demangler() -> str | None:
    return find_tool("cu++filt") or shutil.which("c++filt")


# NVIDIA's cu++filt (CUDA 13) and older GNU c++filt write integer template arguments as casts
# (``MatrixMulCUDA<(int)16>``, ``reduce4<float, (unsigned int)256>``), newer GNU c++filt as
# literals (``MatrixMulCUDA<16>``, ``reduce4<float, 256u>``), which is how nvcc's users write
# them: one spelling whichever demangler a machine has (both seen, 2026-11-26).
_SUFFIX = {"int": "", "unsigned int": "u", "long": "l", "unsigned long": "ul", "long long": "ll",
           "unsigned long long": "ull"}
_CAST = re.compile(r"\((" + "|".join(sorted(map(re.escape, _SUFFIX), key=len, reverse=True)) + r"|bool)\)(-?\d+)")


def _literal(m: re.Match[str]) -> str:
    if m[1] == "bool":
        return "false" if m[2] == "0" else "true"
    return m[2] + _SUFFIX[m[1]]


def _canonical(name: str) -> str:
    return _CAST.sub(_literal, name)


def demangle(symbols: Sequence[str]) -> dict[str, str]:
    """Symbol -> C++ name for the mangled ones (``_Z``) among ``symbols``; empty when no
    demangler is installed.

    Examples
    --------
    >>> demangle(["_Z5saxpyfPf", "plain"]).get("_Z5saxpyfPf", "saxpy(float, float*)")
    'saxpy(float, float*)'
    """
    mangled = [s for s in symbols if s.startswith("_Z")]
    tool = _demangler()
    if not mangled or tool is None:
        return {}
    try:
        done = subprocess.run([tool], input="\n".join(mangled) + "\n", capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return {}
    lines = done.stdout.splitlines()
    if len(lines) != len(mangled):
        return {}
    return {s: _canonical(d) for s, d in zip(mangled, lines) if d != s}


def base_name(symbol: str) -> str:
    """The unqualified function name of an Itanium-mangled symbol (``_Z5saxpyifPKfPf`` -> saxpy)."""
    m = re.match(r"_Z(N)?", symbol)
    if not m:
        return symbol
    i, names = m.end(), []
    while True:
        while i < len(symbol) and symbol[i] in "KVrL":  # cv-qualifiers, internal linkage
            i += 1
        d = re.match(r"\d+", symbol[i:])
        if not d:
            break
        n = int(d[0])
        start = i + len(d[0])
        names.append(symbol[start : start + n])
        i = start + n
        if not m[1] or (i < len(symbol) and symbol[i] in "EI"):
            break
    return names[-1] if names else symbol


def _squash(name: str) -> str:
    return re.sub(r"\s+", "", name)


_ANONYMOUS = "(anonymous namespace)"


def _without_parameters(demangled: str) -> str:
    """``void ns::k<256>(float*)`` -> ``ns::k<256>``: the name before the outermost parameter
    list, less a function template's return type (``(anonymous namespace)`` is a scope, not
    a parameter list)."""
    depth, start, i = 0, 0, 0
    while i < len(demangled):
        ch = demangled[i]
        if demangled.startswith(_ANONYMOUS, i):
            i += len(_ANONYMOUS)
            continue
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif ch == " " and depth == 0:
            start = i + 1
        elif ch == "(" and depth == 0:
            return demangled[start:i]
        i += 1
    return demangled[start:]


def instance_name(name: str) -> str:
    """A kernel's C++ name as people write it: no return type, no parameters, integer and bool
    template arguments as literals.

    Examples
    --------
    >>> instance_name("void column_sum<float, (bool)1>(float*, float const*)")
    'column_sum<float, true>'
    """
    return _canonical(_without_parameters(name.strip()))


# A local entity's name: c++filt's {lambda(float)#1}, {unnamed type#1}; Nsight's
# [lambda(float) (instance 1)]. The parameter list may hold one level of parentheses.
_PARAMETERS = r"(?:\((?:[^()]|\([^()]*\))*\))?"
_LOCAL = re.compile(r"\{(lambda|unnamed type)" + _PARAMETERS + r"#(\d+)\}"
                    r"|\[(lambda|unnamed type)" + _PARAMETERS + r"\s*\(instance (\d+)\)\]")
# An integer literal's suffix (256u, 4ll) and the bool literals: Nsight prints bools as 0 and 1.
_INTEGER = re.compile(r"(?<![\w.])(-?\d+)(?:[uU](?:ll|LL|l|L)?|(?:ll|LL|l|L)[uU]?)(?![\w.])")
_BOOL = {"false": "0", "true": "1"}
_QUALIFIERS = {"const", "volatile"}


def name_key(name: str, *, loose: bool = False) -> str:
    """One spelling of a kernel instance's name (no return type or parameters) whichever printer
    wrote it: c++filt, cu++filt or Nsight Compute (this module's docstring lists how they differ).

    Parameter lists are dropped everywhere, also those of an enclosing function (Nsight writes
    its template parameters as ``T1``, c++filt their arguments), and so are casts; a local
    entity is ``{lambda#N}``, an anonymous namespace ``{anonymous}``, a literal its digits.
    ``loose`` keeps only the words and numbers, without cv-qualifiers, for what the rules do
    not align (``const at::Foo<int>*`` against ``at::Foo<int> const*``).

    Examples
    --------
    >>> name_key("void column_sum<float, 1>(T1 *, const T1 *)") == name_key("void column_sum<float, true>(float*)")
    True
    >>> name_key("void ns::apply<main::[lambda(float) (instance 1)]>(float *, int, T1)")
    'ns::apply<main::{lambda#1}>'
    """
    text = _LOCAL.sub(lambda m: "{%s#%s}" % ((m[1] or m[3]).split()[0], m[2] or m[4]), name.strip())
    text = _without_parameters(text.replace(_ANONYMOUS, "{anonymous}").replace("<unnamed>", "{anonymous}"))
    while True:  # parameter lists of enclosing functions, and casts, innermost first
        shorter = re.sub(r"\([^()]*\)", "", text)
        if shorter == text:
            break
        text = shorter
    text = re.sub(r"\s*([^\w\s])\s*", r"\1", re.sub(r"\s+", " ", text)).strip()
    text = re.sub(r"\b(false|true)\b", lambda m: _BOOL[m[1]], _INTEGER.sub(r"\1", text))
    if loose:
        return " ".join(w for w in re.findall(r"[A-Za-z_]\w*|\d+", text) if w not in _QUALIFIERS)
    return text


def match_kernel(kernel: str, names: Sequence[str], demangled: Mapping[str, str | None]) -> str:
    """The one symbol among ``names`` that ``kernel`` names.

    ``kernel`` may be the symbol, the demangled name, a C++ name expression without the
    parameters (``softmax_fp16<256>``, ``ns::k``), or a prefix of one of these that only
    one kernel has.

    Raises
    ------
    OccupancyError
        When no kernel or several match (the message lists them).
    """
    if not isinstance(kernel, str):
        raise TypeError(f"kernel must be a string (a symbol or a C++ name), not {type(kernel).__name__}")
    if kernel in names:
        return kernel
    want = _squash(kernel)

    def forms(symbol: str) -> list[str]:
        out = [symbol, base_name(symbol)]
        if demangled.get(symbol):
            full = demangled[symbol] or ""
            out += [_squash(full), _squash(_without_parameters(full)),
                    _squash(_without_parameters(full)).rsplit("::", 1)[-1]]
        return out

    def label(symbol: str) -> str:
        return f"{demangled[symbol]} ({symbol})" if demangled.get(symbol) else symbol

    for test in (lambda f: f == want,
                 lambda f: f.split("<", 1)[0] == want,
                 lambda f: f.startswith(want)):
        matches = [n for n in names if any(test(f) for f in forms(n))]
        if len(matches) == 1:
            return matches[0]
        if matches:
            raise OccupancyError(f"kernel={kernel!r} is ambiguous; it names " + "; ".join(map(label, matches)))
    raise OccupancyError(f"kernel={kernel!r} not found; the input holds "
                         + ("; ".join(map(label, names)) or "no kernel"))
