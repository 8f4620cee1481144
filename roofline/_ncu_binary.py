"""Each profiled kernel's function in a binary the user names, and its SASS (`load_ncu`'s ``binary=``).

The binary's functions are read by `occupancy.all_kernel_resources` for the profiled
architecture (nvdisasm gives each its SASS). A profiled kernel takes the function that the
first of these names, as far as the profile holds them:

1. its symbol: the mangled name (a ``.ncu-rep``; a CSV exported with ``--print-kernel-base
   mangled``), or the name of a kernel with C linkage;
2. its demangled name, compared in one spelling (`occupancy.common.name_key`): Nsight Compute
   and c++filt print one template instance differently (``column_sum<float, 1>(T1 *)`` and
   ``column_sum<float, true>(float*)``, ``[lambda(float) (instance 1)]`` and
   ``{lambda(float)#1}``). A symbol the binary lacks is demangled and compared so: an
   anonymous namespace's symbol holds a hash that another build of the file changes. Where
   no function has that spelling, the names are compared without their namespaces: Nsight
   Compute 2025.3 leaves some out (``gpuroof_test::detail::apply<gpuroof_test::detail::Square>``
   printed as ``gpuroof_test::apply<gpuroof_test::Square>``, seen on an H100, 2026-12-06);
3. its short name, where the profile holds nothing more (``--print-kernel-base function``)
   or no demangler is installed: the one function of that name, or, among the template
   instances that share it, the one whose registers and static shared memory equal the
   profile's, which its ``sass_source`` says. Nsight reports no fewer than 16 registers per
   thread (a function the binary gives 8 or 14 is profiled at 16: seen on an H100, 2026-12-06;
   no launch of the corpus, on the H100 or the H200, shows fewer), so a binary's count under 16
   equals a profile's 16.

A kernel the binary does not hold has no SASS, and its ``sass_source`` names it and what the
binary holds; the other kernels keep theirs. Only a binary that shares no kernel with the
profile is an error.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import occupancy
from occupancy import KernelResources, SassSummary
from occupancy.common import demangle, instance_name, name_key

from ._errors import RooflineError
from ._ncu_records import NcuKernel

__all__ = ["NSIGHT_FEWEST_REGISTERS", "binary_sass"]

# Names listed in a note, at most: the binary's kernels can be hundreds (a library).
_LISTED = 8


@dataclass(frozen=True)
class _Found:
    """The function a profiled kernel is (None where none is), and what to say about it."""

    function: KernelResources | None
    remark: str
    absent: bool = False  # no function of the kernel's name at all, not several or an unknown build


def _label(r: KernelResources) -> str:
    return instance_name(r.demangled) if r.demangled else r.kernel


def _listing(functions: Sequence[KernelResources]) -> str:
    names = sorted({_label(r) for r in functions})
    more = f" and {len(names) - _LISTED} more" if len(names) > _LISTED else ""
    return ", ".join(names[:_LISTED]) + more


def _resources(k: NcuKernel) -> str:
    return f"registers ({k.registers_per_thread}) and static shared memory ({k.static_shared_memory or 0} B)"


# The fewest registers per thread Nsight Compute reports (the module's docstring says where seen).
NSIGHT_FEWEST_REGISTERS = 16


def _same_resources(k: NcuKernel, candidates: Sequence[KernelResources]) -> list[KernelResources]:
    if k.registers_per_thread is None:
        return []
    return [r for r in candidates
            if k.registers_per_thread in (r.registers_per_thread, max(r.registers_per_thread, NSIGHT_FEWEST_REGISTERS))
            and r.static_shared_memory == (k.static_shared_memory or 0)]


def _unscoped(key: str) -> str:
    """A `name_key` without its namespaces and classes: ``a::b::f<a::b::T>`` -> ``f<T>``."""
    return re.sub(r"[A-Za-z_]\w*::", "", key)


def _one_of(k: NcuKernel, candidates: list[KernelResources], what: str, name: str) -> _Found:
    """The candidate `k` is: the only one, else the only one with the profile's resources."""
    if len(candidates) == 1:
        return _Found(candidates[0], "")
    same = _same_resources(k, candidates)
    if len(same) == 1:
        return _Found(same[0], f"{_label(same[0])}, the one of {len(candidates)} {what} {name} whose "
                               f"{_resources(k)} equal the profile's")
    fit = (f"{len(same)} with the profile's {_resources(k)}: the name does not tell them apart (an export "
           f"with --print-kernel-base mangled does)" if same else f"none with the profile's {_resources(k)}")
    return _Found(None, f"{len(candidates)} {what} {name} ({_listing(candidates)}), {fit}")


def _by_demangled(k: NcuKernel, printed: str, functions: Sequence[KernelResources]) -> _Found | None:
    """Step 2: the functions whose demangled name is `printed` in one spelling; None where the
    binary's names are not demangled (no demangler: step 3 decides)."""
    named = [r for r in functions if r.demangled]
    if not named and any(r.kernel.startswith("_Z") for r in functions):
        return None
    spellings: tuple[Callable[[str], str], ...] = (
        name_key, lambda name: name_key(name, loose=True), lambda name: _unscoped(name_key(name)))
    for key in spellings:
        want = key(printed)
        match = [r for r in named if key(r.demangled or "") == want]
        if match:
            return _one_of(k, match, "functions named", instance_name(printed))
    return _Found(None, "", absent=True)


def _find(k: NcuKernel, functions: Sequence[KernelResources], demangled: dict[str, str],
          short_name: Callable[[str], str]) -> _Found:
    """Steps 1-3 of the module's docstring for one profiled kernel."""
    printed = k.demangled_name.strip()
    for symbol in (k.mangled_name, printed):
        exact = [r for r in functions if symbol and r.kernel == symbol]
        if exact:
            return _Found(exact[0], "")
    readable = demangled.get(k.mangled_name or "") or (printed if "(" in printed else None)
    found = _by_demangled(k, readable, functions) if readable else None
    if found is not None:
        return found
    match = [r for r in functions if short_name(r.kernel) == k.name]
    if not match:
        return _Found(None, "", absent=True)
    found = _one_of(k, match, "instances of", k.name)
    if readable and found.function is not None:  # a demangled name that could not be compared
        unread = "by its short name alone: no demangler (cu++filt or c++filt) for the binary's names"
        return _Found(found.function, f"{found.remark}; {unread}" if found.remark else unread)
    return found


def _wanted(k: NcuKernel, demangled: dict[str, str]) -> str:
    """The profiled kernel as the notes name it."""
    readable = demangled.get(k.mangled_name or "") or k.demangled_name
    return instance_name(readable) if "(" in readable else readable


def binary_sass(binary: Path, kernels: Sequence[NcuKernel],
                short_name: Callable[[str], str]) -> list[tuple[SassSummary | None, str]]:
    """Each kernel's SASS and where it came from (or why it has none), read from a binary;
    ``short_name`` shortens a symbol the way the profile's names were (`short_kernel_name`).

    Raises
    ------
    RooflineError
        A binary that cannot be read, or one that holds none of the profiled kernels.
    """
    if binary.is_dir():
        raise RooflineError(f"binary={str(binary)!r} is a folder, not a file: give the program, a library, "
                            "a cubin or the kernels' source")
    if not binary.is_file():
        raise RooflineError(f"binary={str(binary)!r}: no such file")
    by_arch: dict[str | None, list[KernelResources]] = {}
    demangled = demangle([k.mangled_name for k in kernels if k.mangled_name])
    out: list[tuple[SassSummary | None, str]] = []
    absent = 0
    for k in kernels:
        if k.arch not in by_arch:
            try:
                by_arch[k.arch] = list(occupancy.all_kernel_resources(binary, arch=k.arch).values())
            except (ValueError, OSError) as exc:
                raise RooflineError(f"binary={str(binary)!r}: its kernels could not be read: {exc}") from None
        functions = by_arch[k.arch]
        found = _find(k, functions, demangled, short_name)
        r = found.function
        if r is None:
            absent += found.absent
            same_name = [f for f in functions if short_name(f.kernel) == k.name]
            held = (f"it holds {_listing(same_name)}" if same_name else f"its kernels: {_listing(functions) or 'none'}")
            out.append((None, f"no SASS: {binary.name} holds " + (
                found.remark if found.remark else f"no {_wanted(k, demangled)} ({held})")))
        elif r.sass is None:
            out.append((None, f"no SASS: {r.sources.get('sass', 'nvdisasm could not read the cubin')}"))
        else:
            remark = f": {found.remark}" if found.remark else ""
            out.append((r.sass, f"{binary.name} ({r.sass.disassembler}, {r.sass.architecture}){remark}"))
    if kernels and absent == len(kernels):
        mine = _listing([r for functions in by_arch.values() for r in functions]) or "none"
        wanted = sorted({_wanted(k, demangled) for k in kernels})
        raise RooflineError(f"binary={str(binary)!r}: none of its kernels ({mine}) is a profiled one "
                            f"({', '.join(wanted[:_LISTED])}{' and more' if len(wanted) > _LISTED else ''})")
    return out
