"""Counts and loads of a listing: the instructions that can run, their counts by class, the loops
(a branch back to a label), and the global loads in flight at the peak of a walk.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Iterator, Sequence
from typing import Literal

from .._nvdisasm import Instruction
from ._operand_table import CLASSES, Named, special_sources
from ._summary import SassCounts

__all__ = [
    "count_instructions", "executable", "fewest_in_flight", "in_flight", "load_bytes", "loop_ranges",
    "setmaxnreg_counts", "short_name", "thread_components", "total_load_bytes",
]


def executable(instrs: Sequence[Instruction], labels: dict[str, int]) -> list[Instruction]:
    """The instructions that can run: no NOP padding, no ``@!PT`` (never true), no trap."""
    out = []
    for instr in instrs:
        if instr.base == "NOP" or instr.guard == "@!PT":
            continue
        if instr.base == "BRA" and instr.guard is None and labels.get(instr.target or "") == instr.offset:
            continue
        out.append(instr)
    return out


def count_instructions(instrs: Sequence[Instruction]) -> SassCounts:
    counts = Counter(_field(instr.opcode) for instr in instrs)
    counts.pop(None, None)
    shared = [instr for instr in instrs if instr.base == "ATOMS"]
    return SassCounts(total=len(instrs), shared_atomics=len(shared),
                      shared_cas=sum(1 for instr in shared if {"CAS", "CAST"} & set(instr.modifiers)), **counts)


@functools.lru_cache(maxsize=4096)
def _field(opcode: str) -> str | None:
    """The `SassCounts` field an opcode counts in (None for none)."""
    base = opcode.split(".", 1)[0]
    return CLASSES.get(base) or ("tensor" if base.endswith("MMA") else None)


def load_bytes(instr: Instruction) -> int:
    mods = instr.modifiers
    for token, size in (("256", 32), ("128", 16), ("64", 8), ("U16", 2), ("S16", 2), ("U8", 1), ("S8", 1)):
        if token in mods:
            return size
    return 4


def short_name(instr: Instruction) -> str:
    keep = [m for m in instr.modifiers if m in ("E", "64", "128", "256", "U8", "S8", "U16", "S16")]
    return ".".join((instr.base, *keep))


def _load_walk(instrs: Sequence[Instruction], table: dict[int, Named],
               pending: list[tuple[Instruction, frozenset[int]]]) -> Iterator[tuple[int, Instruction | None]]:
    """Walk ``instrs`` with ``pending`` (the global loads outstanding, each with the registers
    it writes), updating it in place: yields ``(waited, load)`` per instruction that waits for
    a load or is one, ``waited`` the loads outstanding when it waits for one of them (0 when
    it waits for none) and ``load`` the instruction where it is a global load (None otherwise)."""
    for instr in instrs:
        entry = table[instr.offset]
        waited = 0
        if pending:
            named = entry.every
            for i in range(len(pending) - 1, -1, -1):
                if not pending[i][1].isdisjoint(named):
                    waited = len(pending)
                    # loads come back in issue order: waiting for one waits for those before it
                    del pending[: i + 1]
                    break
        if entry.load is not None:
            pending.append((instr, entry.load))
            yield waited, instr
        elif waited:
            yield waited, None


def in_flight(instrs: Sequence[Instruction], table: dict[int, Named], passes: int) -> list[Instruction]:
    """The global loads outstanding together at the peak of a walk of ``instrs``.

    ``passes`` > 1 walks a loop body again with what the previous pass left in flight,
    counting on the last pass only (the steady state).
    """
    pending: list[tuple[Instruction, frozenset[int]]] = []
    best: list[Instruction] = []
    best_bytes = 0
    for walk in range(passes):
        last = walk == passes - 1
        for _, load in _load_walk(instrs, table, pending):
            # the most loads, then the most bytes (only a tie in number weighs the bytes)
            if load is not None and last and len(pending) >= len(best):
                loads = [held for held, _ in pending]
                size = total_load_bytes(loads)
                if len(loads) > len(best) or size > best_bytes:
                    best, best_bytes = loads, size
    return best


def fewest_in_flight(instrs: Sequence[Instruction], table: dict[int, Named]) -> int:
    """The smallest burst of global loads in a walk of ``instrs``: the loads outstanding at
    the first wait for one after some were issued (loads never waited for in the walk end
    one too); 0 without global loads."""
    pending: list[tuple[Instruction, frozenset[int]]] = []
    bursts: list[int] = []
    issued = False
    for waited, load in _load_walk(instrs, table, pending):
        if waited and issued:
            bursts.append(waited)
            issued = False
        issued = issued or load is not None
    if issued:
        bursts.append(len(pending))
    return min(bursts, default=0)


def total_load_bytes(loads: Sequence[Instruction]) -> int:
    return sum(load_bytes(load) for load in loads)


def loop_ranges(instrs: Sequence[Instruction], labels: dict[str, int]) -> list[tuple[int, int]]:
    """(first, last offset) of every loop: a branch back to a label, one loop per target."""
    ends: dict[int, int] = {}
    for instr in instrs:
        if CLASSES.get(instr.base) == "branches" and instr.target is not None:
            start = labels.get(instr.target)
            if start is not None and start < instr.offset:
                ends[start] = max(ends.get(start, start), instr.offset)
    return sorted(ends.items())


def setmaxnreg_counts(instrs: Sequence[Instruction]) -> tuple[int, ...]:
    """The register counts ``USETMAXREG`` sets (its last operand, ``0xe8`` = 232 per thread)."""
    return tuple(sorted({int(i.operands[-1], 0) for i in instrs if i.base == "USETMAXREG" and i.operands}))


def thread_components(instrs: Sequence[Instruction]) -> tuple[Literal["x", "y", "z"], ...]:
    """The ``threadIdx`` components the instructions read (``S2R Rn, SR_TID.Y``; `special_sources`:
    a warp that reads its own index reads all three, so it is never a copy of another)."""
    read: set[str] = set()
    for instr in instrs:
        for operand in instr.operands:
            if operand.startswith("SR_"):
                read |= special_sources(operand)
    return tuple(c for c in ("x", "y", "z") if c in read)  # type: ignore[return-value]
