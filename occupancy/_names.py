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
from collections.abc import Callable, Mapping, Sequence

from ._enums import Enumerator, enum_value_spellings
from ._errors import OccupancyError
from ._tools import find_tool

__all__ = ["base_name", "demangle", "instance_name", "match_kernel", "name_key", "stable_symbol"]


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

# An enum template argument as demangled (``(ns::Mode)0``): its type unqualified, ``(Mode)0``,
# the spelling `enum_value_spellings` gives a typed ``Mode::Fast`` (an enum's namespace is not
# in the source's spelling of it).
_ENUM_CAST = re.compile(r"\((?:\w+::)*(\w+)\)(-?\d+)")
# A name in template arguments that may be an enumerator: not a call, not a template, not a literal.
_SPELLED = re.compile(r"(?<![\w:)])((?:[A-Za-z_]\w*::)*[A-Za-z_]\w*)(?![\w(<]|::)")


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


# nvcc names a file's internal-linkage scope (an anonymous namespace, a `static` function) with
# hashes of the file's path and command line and the compiler's process id:
# _INTERNAL_<hash>_<length>_<file>_<hash>_<pid> and _GLOBAL__N__<same>. A kernel instantiated with
# such a function (`k<&dequantize>` of a `static __device__` one) gets another symbol at every
# compile, even of the same file (CUDA 13.0, 2026-12-07).
_INTERNAL_SCOPE = re.compile(r"(\d+)(_INTERNAL_|_GLOBAL__N__)([0-9a-f]+)_(\d+)_")


def stable_symbol(symbol: str) -> str:
    """``symbol`` with the per-compile parts of nvcc's internal-linkage scope names left out
    (the hashes and the process id; the file's name stays), so that two compiles of one
    kernel give one name.

    Examples
    --------
    >>> a = "_Z1kIXadL_ZN44_INTERNAL_4bd60db3_9_intern_cu_22b67b62_86495twiceEfEEEvPf"
    >>> b = "_Z1kIXadL_ZN45_INTERNAL_4bd60db3_9_intern_cu_22b67b62_104615twiceEfEEEvPf"
    >>> stable_symbol(a) == stable_symbol(b)
    True
    >>> stable_symbol(a)
    '_Z1kIXadL_ZN19_INTERNAL_intern_cu5twiceEfEEEvPf'
    """
    out, at, search = [], 0, 0
    while m := _INTERNAL_SCOPE.search(symbol, search):
        search = m.start(2)  # the digits before a match may be a pid's tail: look again from here
        length, name_length = int(m[1]), int(m[4])
        end = m.start(2) + length
        tail = symbol[m.end() + name_length:end]
        if end > len(symbol) or not re.fullmatch(r"_[0-9a-f]+_\d+", tail):
            continue  # not nvcc's scope name (or a length that is not this name's): as it is
        kept = m[2] + symbol[m.end():m.end() + name_length]
        out += [symbol[at:m.start()], str(len(kept)), kept]
        at = search = end
    return "".join(out) + symbol[at:]


def _components(name: str) -> list[str]:
    """``a::b::k<ns::T,4>`` -> ``["a", "b", "k<ns::T,4>"]``: split at the ``::`` outside template arguments."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(name):
        depth += (ch == "<") - (ch == ">")
        if depth == 0 and name.startswith("::", i) and i >= start:
            parts.append(name[start:i])
            start = i + 2
    return [*parts, name[start:]]


def _within(want: str, qualified: str, without_arguments: bool) -> bool:
    """Whether ``want`` names the function ``qualified`` with some of its scopes left out:
    ``lib::detail::reduce<float,4>`` names ``lib::LIB_200_SM_900::detail::reduce<float,4>``
    (an inline namespace, as CUB's versioned ``CUB_200_SM_900``, or any scope the caller
    does not write). ``without_arguments``: compare the function's name less its template
    arguments."""
    wanted, have = _components(want.removeprefix("::")), _components(qualified)
    if without_arguments:
        have = [part.split("<", 1)[0] for part in have]
    if wanted[-1] != have[-1]:
        return False
    scopes = iter(have[:-1])
    return all(scope in scopes for scope in wanted[:-1])  # in order: `in` moves the iterator on


def _spelled_values(want: str, found: Sequence[Enumerator]) -> list[str]:
    """``want`` with each enumerator its template arguments spell (``sorter<Mode::Fast>``)
    written as the demangled name has its value (``sorter<(Mode)0>``): one string per
    reading, more than one where a name is an enumerator of several enums."""
    head, angle, arguments = want.partition("<")
    if not angle:
        return []
    pieces: list[list[str]] = [[]]
    last = 0
    for m in _SPELLED.finditer(arguments):
        spellings = sorted(enum_value_spellings(m[1], tuple(found)))
        if spellings:
            pieces = [[*p, arguments[last:m.start()], s] for p in pieces for s in spellings][:64]
            last = m.end()
    if last == 0:
        return []
    return [head + angle + "".join(p) + arguments[last:] for p in pieces]


def _aliased_matches(want: str, names: Sequence[str], forms: Mapping[str, tuple[list[str], str | None]],
                     table: Mapping[str, str]) -> list[str]:
    """The kernels ``want`` names once the type aliases of its template arguments are written out,
    one level at a time (an alias of an alias), the first level that matches winning."""
    head, angle, arguments = want.partition("<")
    for _ in range(4):
        spelled = re.sub(r"(?<![\w:])([A-Za-z_]\w*)(?![\w(])", lambda m: table.get(m[1], m[1]), arguments)
        if spelled == arguments:
            return []
        arguments = spelled
        chosen = _matches(_ENUM_CAST.sub(r"(\1)\2", _squash(_canonical(head + angle + arguments))), names, forms)
        if chosen:
            return chosen
    return []


def match_kernel(kernel: str, names: Sequence[str], demangled: Mapping[str, str | None],
                 enumerators: Callable[[], Sequence[Enumerator]] | None = None,
                 aliases: Callable[[], Mapping[str, str]] | None = None) -> str:
    """The one symbol among ``names`` that ``kernel`` names.

    ``kernel`` may be the symbol, the demangled name, a C++ name expression without the
    parameters (``softmax_fp16<256>``, ``ns::k``), that name with scopes left out (an inline
    namespace such as CUB's ``CUB_200_SM_900``: ``cub::DeviceReduceKernel``), or a prefix of
    one of these that only one kernel has. Enum template arguments may be spelled as in the
    source (``sorter<Mode::Fast>``) when ``enumerators`` gives the source's enumerators
    (`occupancy._enums.enumerators`; called only for such a name), and type arguments by an
    alias of the source (``norm<floatX>`` for ``typedef __nv_bfloat16 floatX;``) when ``aliases``
    gives them (`occupancy._enums.type_aliases`; called only where nothing else matched).

    Raises
    ------
    OccupancyError
        When no kernel or several match (the message lists them).
    """
    if not isinstance(kernel, str):
        raise TypeError(f"kernel must be a string (a symbol or a C++ name), not {type(kernel).__name__}")
    if kernel in names:
        return kernel
    want = _ENUM_CAST.sub(r"(\1)\2", _squash(_canonical(kernel)))
    forms = {n: _forms(n, demangled.get(n)) for n in names}
    chosen = _matches(want, names, forms)
    if not chosen and enumerators is not None and "<" in want and _SPELLED.search(want.partition("<")[2]):
        found = enumerators()
        chosen = list(dict.fromkeys(n for spelled in _spelled_values(want, found)
                                    for n in _matches(spelled, names, forms)))
    if not chosen and aliases is not None and "<" in want:
        chosen = _aliased_matches(want, names, forms, aliases())
    if len(chosen) == 1:
        return chosen[0]

    def label(symbol: str) -> str:
        return f"{demangled[symbol]} ({symbol})" if demangled.get(symbol) else symbol

    if chosen:
        raise OccupancyError(f"kernel={kernel!r} is ambiguous; it names " + "; ".join(map(label, chosen)))
    raise OccupancyError(f"kernel={kernel!r} not found; the input holds "
                         + ("; ".join(map(label, names)) or "no kernel"))


def _forms(symbol: str, full: str | None) -> tuple[list[str], str | None]:
    """The spellings a kernel is matched by (its symbol, its name, its demangled name, that
    name less its parameters and less its scopes), and its qualified name (None when it has
    no demangled name), enum arguments as `_ENUM_CAST` writes them."""
    out = [symbol, base_name(symbol)]
    if not full:
        return out, None
    qualified = _ENUM_CAST.sub(r"(\1)\2", _squash(_without_parameters(full)))
    return [*out, _ENUM_CAST.sub(r"(\1)\2", _squash(full)), qualified, _components(qualified)[-1]], qualified


def _matches(want: str, names: Sequence[str], forms: Mapping[str, tuple[list[str], str | None]]) -> list[str]:
    """The kernels ``want`` names by the first test that any kernel passes: a spelling, then
    the name with scopes left out, then either less the template arguments, then a prefix."""
    bare = "<" not in want
    tests: tuple[Callable[[list[str], str | None], bool], ...] = (
        lambda spellings, _: want in spellings,
        lambda _, qualified: qualified is not None and _within(want, qualified, without_arguments=False),
        lambda spellings, qualified: any(f.split("<", 1)[0] == want for f in spellings)
        or (bare and qualified is not None and _within(want, qualified, without_arguments=True)),
        lambda spellings, _: any(f.startswith(want) for f in spellings),
    )
    for test in tests:
        matches = [n for n in names if test(*forms[n])]
        if matches:
            return matches
    return []
