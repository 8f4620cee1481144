"""Forward register dataflow over a function's instructions: what reaches each global address
(`address_sources`), how far each value moves per loop trip, and which index a loop's trips
follow.
"""

from __future__ import annotations

import bisect
import functools
import math
import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from itertools import repeat
from typing import Literal

from .._nvdisasm import Instruction
from ._operand_table import EMPTY, GLOBAL_ATOMICS, GLOBAL_STORES, Named, PREDICATE

__all__ = ["address_sources", "inside_loops", "instructions_between", "one_address_atomic_type", "one_address_counts"]


_LINE_BYTES = 128


_INDICES = frozenset({"x", "y", "z", "ctaid.x", "ctaid.y", "ctaid.z", "lane"})


_IMMEDIATE = re.compile(r"^-?(0x[0-9a-fA-F]+|\d+)$")


@functools.lru_cache(maxsize=4096)
def _immediate(operand: str) -> int | None:
    return abs(int(operand, 0)) if _IMMEDIATE.match(operand) else None


def _step(kind: str | None, values: Sequence[str], steps: Sequence[float]) -> float:
    """How far the value an instruction writes moves per loop trip, from how far what it
    reads moves (``steps``, one per value, 0 for a constant; ``values``: its source operands,
    predicates left out; ``kind``: its `opcode_arithmetic`): kept by moves, adds, and
    multiplies and shifts by an immediate; ``inf`` where a moving value is scaled by a
    run-time value or passes through anything else."""
    if not any(steps):
        return 0.0
    if kind is None:  # the most frequent, ahead of the tests below
        return math.inf
    if kind == "move":
        return steps[-1]
    if kind == "add":
        return sum(steps)
    if kind == "multiply" and len(values) >= 2:
        product = 0.0 if not steps[0] and not steps[1] else \
            _scaled(values, steps, 0, 1) if steps[0] else _scaled(values, steps, 1, 0)
        return product + (steps[2] if len(values) > 2 else 0.0)
    if kind == "lea" and len(values) >= 3:
        shift = _immediate(values[2])
        return math.inf if shift is None else steps[0] * 2 ** shift + steps[1]
    if kind == "shift" and len(values) >= 2:
        shift = _immediate(values[1])
        return math.inf if shift is None or steps[1] else steps[0] * 2 ** shift
    return math.inf


def _scaled(values: Sequence[str], steps: Sequence[float], moving: int, by: int) -> float:
    """`_step` of a product: the moving value's step times the other value, an immediate
    (``inf`` where that one moves too or is not an immediate)."""
    scale = _immediate(values[by])
    return math.inf if steps[by] or scale is None else steps[moving] * scale


def _delta(instr: Instruction, kind: str | None, values: Sequence[str],
           deltas: Sequence[float | None]) -> float | None:
    """How far the value an instruction writes is from a loop-carried register's value at
    the start of the trip (``deltas``, one per value: None for a value not derived from one):
    immediates add, a run-time value added or scaling it makes it ``inf``; None where no
    source is derived from a carried register."""
    if all(d is None for d in deltas):
        return None

    def term(i: int) -> float:
        if deltas[i] is not None:
            return deltas[i]
        if values[i] in ("RZ", "URZ"):
            return 0.0
        immediate = _immediate(values[i])
        return math.inf if immediate is None else float(immediate)

    if "X" in instr.modifiers:  # the high word of a 64-bit add follows its low word
        return next(d for d in deltas if d is not None)
    if kind == "move":
        return deltas[-1]
    if kind == "add":
        return sum(term(i) for i in range(len(values)))
    if kind == "multiply" and instr.base.lstrip("U") == "IMAD" and len(values) == 3:
        a, b = deltas[0], deltas[1]
        if a is None and b is None:
            product = 0.0 if "RZ" in values[:2] else math.inf
        else:
            moving, by = (0, 1) if a is not None else (1, 0)
            scale = _immediate(values[by])
            product = math.inf if deltas[by] is not None or scale is None else deltas[moving] * scale
        return product + term(2)
    return math.inf


def _carried(body: Sequence[Instruction], table: dict[int, Named]) -> set[object]:
    """Registers a loop reads before it writes them and writes too: its counters and pointers."""
    written: set[object] = set()
    live_in: set[object] = set()
    for instr in body:
        entry = table[instr.offset]
        live_in |= entry.read - written
        written |= entry.dest
    return live_in & written


def address_sources(instrs: Sequence[Instruction], loops: Sequence[tuple[int, int]], sm: int,
                     table: dict[int, Named]) -> tuple[
        dict[int, frozenset[str]], dict[int, tuple[str, float]], dict[int, tuple[str | None, str]]]:
    """What reaches the address of each global load, store and atomic: offset -> sources;
    which index each loop's trips follow: start offset -> (`SassLoop.index_trips`,
    ``trips_per_index``), for the loops `_trip_index` finds one for; and the exits and
    branches that let one thread alone go on (`_lone_thread`): offset -> (the branch's
    target label, None for an ``EXIT``; ``"global"`` or ``"thread"``).

    Forward dataflow in program order, walked twice: on the second walk a loop's first
    instruction also sees what its registers held at the back edge on the first. A register
    written by an instruction holds the sources of the registers it reads, plus: the
    thread, block or lane index a special register (``S2R``/``S2UR``) gives (``"x"``,
    ``"ctaid.x"``, ``"lane"``; any other special register is ``"data"``), ``"data"`` for a
    value loaded from memory (or shuffled, voted, matched), and ``"loop"`` for a register
    a loop carries (reads before it writes it, and writes: a counter or a pointer). A
    guarded write keeps what the register held too. The grid and block sizes
    (``c[0x0][...]``) are constants.

    A carried register moves per trip by what the first walk finds it moved from the top of
    the loop to its back edge (`_delta`: immediates added; a run-time value added makes the
    step unbounded), and what is computed from it moves as `_step` says (scaled by
    immediate multiplies and shifts; unbounded where scaled by a run-time value such as a
    row pitch). An address that moves by a line (128 bytes) or more per trip, or by an
    unbounded step, has ``"stride"`` too. The sources recorded are those of the second walk.

    The same rules give each value's slope in ``threadIdx.x`` and ``blockIdx.x`` (how far
    it moves per unit of either: 1 for the index itself, unbounded through anything but
    moves, adds and immediate scales, such as the run-time block size or a division), from
    which `_trip_index` reads the compare at each loop's back edge.
    """
    offsets = [i.offset for i in instrs]
    carried = {(start, end): _carried(instructions_between(instrs, offsets, start, end), table) for start, end in loops}
    # one loop per start and per end (a backward branch has one target): looked up per instruction
    carried_from = {start: regs for (start, _), regs in carried.items()}
    back_edges = {end: (start, regs) for (start, end), regs in carried.items()}
    facts = [table[instr.offset] for instr in instrs]
    in_loop = inside_loops(instrs, loops)
    held: dict[object, frozenset[str]] = {}
    # per register: its step per trip, its slopes in (threadIdx.x, blockIdx.x) and its delta
    # (`_STILL` where it has none of them)
    motion: dict[object, _Motion] = {}
    trip_steps: dict[tuple[int, object], float] = {}
    at_back_edge: dict[int, dict[object, frozenset[str]]] = {}
    found: dict[int, frozenset[str]] = {}
    compares: dict[str, _Compare | None] = {}  # predicate -> the compare that last set it
    trips: dict[int, tuple[str, float]] = {}
    ends = {end: start for start, end in loops}
    skips: dict[int, tuple[str | None, str]] = {}
    for walk in range(2):
        for instr, fact, looped in zip(instrs, facts, in_loop):
            offset = instr.offset
            if offset in carried_from:
                start = offset
                for reg, sources in at_back_edge.get(start, {}).items():
                    held[reg] = held.get(reg, frozenset()) | sources
                for reg in carried_from[start]:
                    held[reg] = held.get(reg, frozenset()) | {"loop"}
                    step, x, block, _ = motion.get(reg, _STILL)
                    motion[reg] = (trip_steps.get((start, reg), math.inf) if walk else step, x, block, 0.0)
            # the compares and what they decide, the second walk's: an ISETP, or a guarded instruction
            if walk and (instr.guard or instr.base in _COMPARES):
                _decide(instr, offset, (table, held, motion, compares, ends), trips, skips)
            address = fact.address
            if address:
                sources = EMPTY.union(*map(held.get, address, repeat(EMPTY)))
                if "loop" in sources and max(motion.get(r, _STILL)[0] for r in address) >= _LINE_BYTES:
                    sources |= {"stride"}
                found[offset] = sources
            if fact.dest:
                _write(instr, fact, looped, held, motion)
            if offset in back_edges:  # what registers hold here goes round again
                start, regs_carried = back_edges[offset]
                edge = at_back_edge.setdefault(start, {})
                for reg, sources in held.items():
                    edge[reg] = edge.get(reg, frozenset()) | sources
                if not walk:
                    for reg in regs_carried:
                        moved = motion.get(reg, _STILL)[3]
                        trip_steps[(start, reg)] = math.inf if moved is None else abs(moved)
    return found, trips, skips


def _decide(instr: Instruction, offset: int, context: tuple[dict, dict, dict, dict, dict], trips: dict,
            skips: dict) -> None:
    """`address_sources`' second walk at one instruction: a compare (``ISETP``) sets its
    predicates (``context``: the operand table, what registers hold and how they move, the
    predicates' compares and the loops' ends, updated in place); a branch at a loop's end on one gives the index its
    trips follow (``trips``), an exit or branch on one that keeps one thread (``skips``)."""
    table, held, motion, compares, ends = context
    base = instr.base
    if base in _COMPARES:
        compared = _compare(instr, table, held, motion)
        for operand in instr.operands[:2]:
            if operand not in ("PT", "UPT"):
                compares[operand] = compared
    guard = instr.guard
    compared = compares.get(guard.lstrip("@!")) if guard else None
    if compared is None:
        return
    if offset in ends:
        follows = _trip_index(compared)
        if follows is not None:
            trips[ends[offset]] = follows
    if base == "EXIT" or (base == "BRA" and instr.target):
        kind = _lone_thread(compared, guard.startswith("@!"))
        if kind is not None:
            skips.setdefault(offset, (instr.target if base == "BRA" else None, kind))


def inside_loops(instrs: Sequence[Instruction], loops: Sequence[tuple[int, int]]) -> list[bool]:
    """Whether each instruction (in offset order) is inside one of ``loops`` (offset ranges)."""
    spans = sorted(loops)
    out, k, reach = [], 0, -1
    for instr in instrs:
        while k < len(spans) and spans[k][0] <= instr.offset:
            reach = max(reach, spans[k][1])
            k += 1
        out.append(instr.offset <= reach)
    return out


def _write(instr: Instruction, fact: Named, in_loop: bool, held: dict, motion: dict) -> None:
    """What the registers an instruction writes hold after it, by `address_sources`' rules
    (``held``: what registers hold; ``motion``: their steps, slopes and deltas, `_STILL` kept as
    no entry; both updated in place)."""
    read = fact.read
    sources = EMPTY.union(*map(held.get, read, repeat(EMPTY))) if read else EMPTY
    special = fact.special
    if fact.varying:
        if special is not None:
            sources |= special
            # an index is 1 in itself and 0 in the others; a lane or anything else is not linear
            slope = tuple(1.0 if special == {index} else 0.0 if special <= _INDICES - {"lane"} else math.inf
                          for index in ("x", "ctaid.x"))
        else:
            sources |= _DATA
            slope = (math.inf, math.inf)
        # a thread's or block's index stays put; what a loop loads may change every trip
        moved = math.inf if in_loop and not (special is not None and sources <= _INDICES) else 0.0
        offset = None
    elif motion.keys().isdisjoint(fact.value_union):  # nothing it reads moves: no look
        moved, slope, offset = 0.0, _FLAT, None
    else:
        moved, slope, offset = _moved(instr, fact, motion)
    guarded = bool(instr.guard)
    for reg in fact.dest:
        if guarded:
            held[reg] = held.get(reg, EMPTY) | sources
            old = motion.get(reg, _STILL)
            new = (max(old[0], moved), max(old[1], slope[0]), max(old[2], slope[1]), offset)
        else:
            held[reg] = sources
            new = (moved, slope[0], slope[1], offset)
        if new[0] or new[1] or new[2] or offset is not None:
            motion[reg] = new
        else:
            motion.pop(reg, None)


def _moved(instr: Instruction, fact: Named, motion: dict) -> tuple[float, tuple[float, float], float | None]:
    """How far the value an instruction writes moves per loop trip (`_step`), its slopes in
    (``threadIdx.x``, ``blockIdx.x``) and its delta (`_delta`), from ``motion`` (what
    `address_sources` keeps per register) of the registers each of its values names: the
    largest of each, per value."""
    keys = fact.value_keys
    if keys is not None:  # each value names one register or none: one look-up each
        steps, xs, bs, deltas = zip(*map(motion.get, keys, repeat(_STILL)))
    else:
        steps, xs, bs, deltas = zip(*[_largest_motion(motion, registers) for registers in fact.value_registers])
    kind, values = fact.arithmetic, fact.values
    slope = (_step(kind, values, xs), _step(kind, values, bs)) if any(xs) or any(bs) else _FLAT
    offset = None if deltas.count(None) == len(deltas) else _delta(instr, kind, values, deltas)
    return _step(kind, values, steps), slope, offset


def _largest_motion(motion: dict, registers: Collection[object]) -> _Motion:
    """The largest step, slopes and delta of any of ``registers`` (`_STILL` for none; a delta
    of None where none of them has one)."""
    entries = [motion.get(r, _STILL) for r in registers]
    if not entries:
        return _STILL
    found = [e[3] for e in entries if e[3] is not None]
    return (max(e[0] for e in entries), max(e[1] for e in entries), max(e[2] for e in entries),
            max(found) if found else None)


def instructions_between(instrs: Sequence[Instruction], offsets: Sequence[int], start: int,
                         end: int) -> Sequence[Instruction]:
    """The instructions from offset ``start`` to ``end`` of ``instrs`` (in offset order;
    ``offsets``: theirs)."""
    return instrs[bisect.bisect_left(offsets, start):bisect.bisect_right(offsets, end)]


def _largest_step(motion: dict, registers: Collection[object]) -> float:
    """The most any of `registers` moves per loop trip (0 for none)."""
    return max((motion.get(r, _STILL)[0] for r in registers), default=0.0)


def _largest_slopes(motion: dict, registers: Collection[object]) -> tuple[float, float]:
    """The largest slopes of `registers` in (``threadIdx.x``, ``blockIdx.x``), (0, 0) for none."""
    entries = [motion.get(r, _STILL) for r in registers]
    if not entries:
        return 0.0, 0.0
    return max(e[1] for e in entries), max(e[2] for e in entries)


_Motion = tuple[float, float, float, "float | None"]


_STILL: _Motion = (0.0, 0.0, 0.0, None)


_FLAT = (0.0, 0.0)


_DATA = frozenset({"data"})


_COMPARES = ("ISETP", "UISETP")


@dataclass(frozen=True)
class _Compare:
    """What an integer compare (``ISETP``) reads, from `address_sources`' walk: its test
    (``"EQ"``, ``"NE"``, ...) and, for each of its two values, how far it moves per loop trip
    and its slopes in (``threadIdx.x``, ``blockIdx.x``); ``data`` where a loaded value reaches
    either."""

    test: str
    steps: tuple[float, float]
    slopes: tuple[tuple[float, float], tuple[float, float]]
    data: bool


def _compare(instr: Instruction, table: dict[int, Named], held: dict, motion: dict) -> _Compare | None:
    """The `_Compare` of an ``ISETP``/``UISETP`` as its registers hold now; None unless it compares two values."""
    values = [o for o in instr.operands[2:4] if not PREDICATE.match(o)]
    if len(values) != 2:
        return None
    named = table[instr.offset].named[2:4]
    moved = tuple(_largest_step(motion, side) for side in named)
    slope = tuple(_largest_slopes(motion, side) for side in named)
    test = next((m for m in instr.modifiers if m in ("EQ", "NE", "LT", "LE", "GT", "GE")), "")
    data = any("data" in held.get(r, ()) for side in named for r in side)
    return _Compare(test, moved, slope, data)  # type: ignore[arg-type]


def _trip_index(compare: _Compare) -> tuple[str, float] | None:
    """Which index the trips of a loop follow, from the compare its back edge branches on.

    Of the two values compared (``ISETP ... P, PT, a, b``), the counter moves by a constant
    each trip and the bound stays; where exactly one of them is a linear function of the
    thread's index (finite slopes from `address_sources`), a thread's trips are that
    function over the step. Slopes in ``threadIdx.x`` (finite) and ``blockIdx.x`` (the
    run-time block size makes it unbounded) give ``"global"``; one of them alone,
    ``"thread"`` or ``"block"`` (finite). None where a loaded value reaches either side, the
    counter's step is not a constant, both or neither side follows the index, or the
    slopes are not linear (a division, a lane index)."""
    if compare.data:
        return None
    moving = [i for i in (0, 1) if compare.steps[i]]
    if len(moving) != 1 or not math.isfinite(compare.steps[moving[0]]):
        return None
    following = [s for s in compare.slopes if any(s)]
    if len(following) != 1:
        return None
    x, block = following[0]
    step = compare.steps[moving[0]]
    if 0 < x < math.inf and block:
        return "global", x / step
    if 0 < x < math.inf:
        return "thread", x / step
    if not x and 0 < block < math.inf:
        return "block", block / step
    return None


def _lone_thread(compare: _Compare, negated: bool) -> str | None:
    """Which threads an ``EXIT`` (or a branch away) on this compare keeps: ``"global"`` where
    it keeps the one thread of the grid whose index equals a value (``if (i == 0)``, ``i``
    the grid's index: an exit on ``!=``, or on not ``==``), ``"thread"`` where the index is
    ``threadIdx.x`` alone (one thread per block); None for any other (a bound, a loaded value)."""
    keeps_equal = (compare.test == "NE" and not negated) or (compare.test == "EQ" and negated)
    if not keeps_equal or compare.data or any(compare.steps):
        return None
    x = max(s[0] for s in compare.slopes)
    if not 0 < x < math.inf:
        return None
    return "global" if any(s[1] for s in compare.slopes) else "thread"


def one_address_counts(instrs: Sequence[Instruction], sources: dict[int, frozenset[str]]) -> tuple[int, int]:
    """Global atomics and global stores whose address nothing varying reaches (`address_sources`)."""
    atomics = stores = 0
    for instr in instrs:
        if _one_address(instr, sources):
            atomics += instr.base in GLOBAL_ATOMICS
            stores += instr.base in GLOBAL_STORES
    return atomics, stores


def _one_address(instr: Instruction, sources: dict[int, frozenset[str]]) -> bool:
    """Whether nothing varying reaches the address of `instr` (`address_sources`)."""
    return instr.offset in sources and not sources[instr.offset]


def one_address_atomic_type(instrs: Sequence[Instruction],
                            sources: dict[int, frozenset[str]]) -> Literal["f32", "f64", "other"] | None:
    """The operation of the one-address global atomics (`one_address_counts`): ``"f32"`` where
    every one is a float add (``.ADD.F32``), ``"f64"`` where every one is a double add
    (``.ADD.F64``), ``"other"`` for any other mix (integer adds, CAS, exchanges, half-precision
    pairs); None without one-address atomics."""
    kinds = {_atomic_kind(i) for i in instrs if i.base in GLOBAL_ATOMICS and _one_address(i, sources)}
    if len(kinds) == 1 and kinds <= {"f32", "f64"}:
        return "f32" if "f32" in kinds else "f64"
    return "other" if kinds else None


def _atomic_kind(instr: Instruction) -> str:
    """``f32``/``f64`` for a float/double add (``REDG.E.ADD.F32.FTZ.RN``), else ``other``."""
    if "ADD" in instr.modifiers:
        for kind in ("F32", "F64"):
            if kind in instr.modifiers:
                return kind.lower()
    return "other"
