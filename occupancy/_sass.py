"""What a kernel's SASS says: instruction counts, loops, and global loads in flight per thread.

Loads in flight are counted by register dataflow on nvdisasm's listing: walking the
steady-state loop (or the kernel, without one) in program order, a global load is in
flight from its issue until an instruction names one of the registers it writes (a read,
or a write that must wait for it), and loads are taken to complete in issue order. The
largest number in flight at once is what the thread keeps outstanding. A loop body is
walked twice and counted on the second pass, so that loads hoisted across the loop's
back edge (issued at the bottom for the next iteration) are counted with the others.

Why dataflow rather than the scoreboard bits of the encoding: the register names are
printed the same way on every architecture nvdisasm reads, while the control bits sit in
a different place on Maxwell/Pascal (a control word per three instructions) than from
Volta on (bits 105-125 of each instruction) and are documented by no one but
reverse-engineering projects. Where those bits are known (sm_75 to sm_120), the loads
the compiler's scoreboards let a thread keep outstanding equal this count on every kernel
with fewer than 12 in flight and on 95% of all the kernels tests/occupancy/test_sass.py
compiles; beyond that the compiler may wait an instruction early on a shared scoreboard,
or consume loads out of issue order.

The same listing gives four facts about addresses (`SassSummary.thread_index_components`,
``global_atomics_one_address``, ``global_stores_one_address``, ``hot_loop_load_sources``):
which ``threadIdx`` components the kernel reads at all, which global atomics and stores write
one address for every thread, block and loop trip (forward register dataflow: an address
built from constants and kernel parameters alone), and what reaches the address of each load
of the hot loop, with whether the loop moves it a line or more per trip. The time model takes
copies of a warp, lines shared in one trip, counters and flags from them.
"""

from __future__ import annotations

import bisect
import functools
import math
import re
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass
from typing import Literal, NamedTuple, get_args

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ._errors import OccupancyError
from ._nvdisasm import Disassembly, Instruction, NvdisasmError, disassemble, parse_listing

__all__ = ["SassCounts", "SassLoop", "SassSummary", "Summaries", "read_sass", "sass_summaries", "summarize"]

_FROZEN = ConfigDict(frozen=True, extra="forbid", defer_build=True)

# Opcode (without modifiers) -> SassCounts field. FFMA2/FADD2/FMUL2 are Blackwell's paired
# FP32 instructions; LD/ST are generic-address accesses, in practice global memory.
_CLASSES = {
    "LDG": "global_loads", "LD": "global_loads",
    "STG": "global_stores", "ST": "global_stores",
    "LDL": "local_loads", "STL": "local_stores",
    "LDS": "shared_loads", "LDSM": "shared_loads",
    "STS": "shared_stores", "STSM": "shared_stores",
    "LDGSTS": "async_copies", "UBLKCP": "async_copies", "UTMALDG": "async_copies",
    "ATOM": "atomics", "ATOMG": "atomics", "ATOMS": "atomics", "RED": "atomics", "REDG": "atomics",
    "BAR": "barriers",
    "SHFL": "shuffles",
    "FFMA": "fp32_fma", "FFMA2": "fp32_fma",
    "FADD": "fp32_add", "FADD2": "fp32_add",
    "FMUL": "fp32_mul", "FMUL2": "fp32_mul",
    "DFMA": "fp64", "DADD": "fp64", "DMUL": "fp64", "DSETP": "fp64", "DMNMX": "fp64", "DSET": "fp64",
    "BRA": "branches", "BRX": "branches", "BRXU": "branches", "JMP": "branches", "JMX": "branches",
    "JMXU": "branches",
}
_GLOBAL_LOADS = ("LDG", "LD")
_MEMORY = ("LDG", "LD", "STG", "ST", "LDL", "STL", "LDS", "STS", "ATOM", "ATOMG", "ATOMS", "RED", "REDG")
_FP64 = ("DFMA", "DADD", "DMUL", "DSETP", "DMNMX", "DSET")
_CONVERSIONS = {"F2F": None, "I2F": "S32", "F2I": "F32", "I2I": "S32", "F2IP": "F32", "I2FP": "S32", "FRND": None}
_REGISTER = re.compile(r"(?<![A-Za-z0-9_])R(\d+)((?:\.[A-Za-z0-9_]+)*)")
_BRACKETS = re.compile(r"\[[^\]]*\]")
_TYPE = re.compile(r"[FSU](?:8|16|32|64)")
#: What reaches an address, by where it comes from (`_address_sources`).
AddressSource = Literal["x", "y", "z", "ctaid.x", "ctaid.y", "ctaid.z", "lane", "data", "loop", "stride"]
_SOURCE_ORDER: tuple[str, ...] = get_args(AddressSource)
_LINE_BYTES = 128
_INDICES = frozenset({"x", "y", "z", "ctaid.x", "ctaid.y", "ctaid.z", "lane"})


class SassCounts(BaseModel):
    """Instructions of one class in a kernel or a loop body, as the SASS lists them.

    Each instruction counts once, predicated or not (the listing, not the execution).
    NOP padding and the branch-to-self that ends every function (a trap never reached)
    are not counted.

    Attributes
    ----------
    total : int
        All instructions.
    global_loads, global_stores : int
        ``LDG``/``STG``, and generic ``LD``/``ST`` (in practice global memory).
    local_loads, local_stores : int
        ``LDL``/``STL``: spills and stack.
    shared_loads, shared_stores : int
        ``LDS``/``LDSM`` and ``STS``/``STSM``.
    async_copies : int
        Global to shared copies: ``LDGSTS`` (cp.async), ``UBLKCP`` and ``UTMALDG`` (TMA).
    atomics : int
        ``ATOM``/``ATOMG``/``ATOMS``/``RED``/``REDG``.
    barriers : int
        ``BAR`` (``__syncthreads`` and named barriers).
    shuffles : int
        ``SHFL``.
    fp32_fma, fp32_add, fp32_mul : int
        ``FFMA``, ``FADD``, ``FMUL`` (and Blackwell's paired ``FFMA2``/``FADD2``/``FMUL2``).
    fp64 : int
        ``DFMA``/``DADD``/``DMUL``/``DSETP``/``DMNMX``/``DSET``.
    tensor : int
        Matrix instructions: every opcode ending in ``MMA`` (``HMMA``, ``IMMA``, ``DMMA``,
        ``HGMMA``, ``QMMA``, ...).
    branches : int
        ``BRA``/``BRX``/``JMP``/``JMX``.
    """

    model_config = _FROZEN

    total: int = Field(default=0, ge=0)
    global_loads: int = Field(default=0, ge=0)
    global_stores: int = Field(default=0, ge=0)
    local_loads: int = Field(default=0, ge=0)
    local_stores: int = Field(default=0, ge=0)
    shared_loads: int = Field(default=0, ge=0)
    shared_stores: int = Field(default=0, ge=0)
    async_copies: int = Field(default=0, ge=0)
    atomics: int = Field(default=0, ge=0)
    barriers: int = Field(default=0, ge=0)
    shuffles: int = Field(default=0, ge=0)
    fp32_fma: int = Field(default=0, ge=0)
    fp32_add: int = Field(default=0, ge=0)
    fp32_mul: int = Field(default=0, ge=0)
    fp64: int = Field(default=0, ge=0)
    tensor: int = Field(default=0, ge=0)
    branches: int = Field(default=0, ge=0)


class SassLoop(BaseModel):
    """One loop of the SASS: a backward branch and the instructions it repeats.

    Attributes
    ----------
    start_offset, end_offset : int
        Bytes from the function's start of the loop's first instruction (the branch
        target) and of its backward branch (the last one, where several branch back).
    depth : int
        1 for an outermost loop, 2 for a loop inside it, ...
    instructions : SassCounts
        The instructions from ``start_offset`` to ``end_offset``, nested loops included.
    global_loads_in_flight : int
        The most global loads a thread has outstanding at once in the steady state of this
        loop (0 when it issues none).
    fewest_loads_in_flight : int
        The fewest global loads a thread has outstanding when it first waits for one after
        issuing some, over the loop's own code (the loops inside it left out): the smallest
        burst its straight code issues, such as the one-trip piece of the remainder the
        compiler wrote around an unrolled inner loop (0 when its own code issues none).
    index_trips : {"global", "thread", "block"} or None
        Which index the loop's trip count follows (`_trip_index`), where the compare that
        ends it sets a counter that steps by a constant against a bound, and exactly one of
        the two is a linear function of the thread's index: ``"global"`` for
        ``blockIdx.x x blockDim.x + threadIdx.x`` (``for (j = i; j < n; j++)`` with ``i``
        the thread's column: a triangle over the grid), ``"thread"`` for ``threadIdx.x``
        alone, ``"block"`` for ``blockIdx.x`` alone. None where the trips are the same for
        every thread (or no such compare is found: a grid-stride loop, whose trips differ
        by at most one, steps by a run-time value).
    trips_per_index : float or None
        How many trips the count moves per unit of that index (the index's coefficient over
        the counter's step: 1 for ``j++``, 0.25 for a loop the compiler unrolled four
        times); None with ``index_trips``.
    """

    model_config = _FROZEN

    start_offset: int = Field(ge=0)
    end_offset: int = Field(ge=0)
    depth: int = Field(ge=1)
    instructions: SassCounts
    global_loads_in_flight: int = Field(ge=0)
    fewest_loads_in_flight: int = Field(default=0, ge=0)
    index_trips: Literal["global", "thread", "block"] | None = None
    trips_per_index: float | None = Field(default=None, gt=0)


class SassSummary(BaseModel):
    """A kernel's SASS in figures: instruction counts, loops, global loads in flight.

    Read by `occupancy.kernel_resources` (``KernelResources.sass``) with NVIDIA's
    nvdisasm; `occupancy.Launch` takes its loads in flight when the caller gives none.

    Attributes
    ----------
    architecture : str
        The SASS architecture it was read for, e.g. ``"sm_90"``.
    disassembler : str
        The tool and its version, e.g. ``"nvdisasm 13.5.37"``.
    instructions : SassCounts
        The whole kernel.
    loops : tuple of SassLoop
        Every loop, in address order.
    hot_loop : int or None
        Index in ``loops`` of the steady-state loop, a static guess: the deepest loop that
        issues global loads (ties: the most global loads, then the first), else the
        deepest loop (ties: the most instructions); None without loops.
    global_loads_in_flight_per_thread : int
        The most global loads (``LDG``, ``LD``) a thread keeps outstanding at once, counted
        in the hot loop when it issues global loads, else over the whole kernel: loads
        issued before an instruction uses (or overwrites) the register of any of them.
        Predicated loads count. 0 when the kernel issues none.
    global_load_bytes : int or None
        Width of those loads, bytes (``LDG.E.128`` = 16); the widest when they differ.
    global_load_bytes_in_flight_per_thread : int
        Their widths added up, bytes.
    global_load_instruction : str or None
        The opcode of those loads with its width, without cache hints
        (``"LDG.E.128"``; the widest when they differ).
    setmaxnreg_registers : tuple of int
        The registers per thread that warp groups switch to (``USETMAXREG``, PTX
        ``setmaxnreg``: ``DEALLOC``/``.dec`` below the launch's count, ``TRY_ALLOC``/``.inc``
        above it), in increasing order; empty when the kernel keeps its launch's count.
    thread_index_components : tuple of str or None
        The components of ``threadIdx`` the kernel reads (``S2R`` of ``SR_TID.X``, ``.Y``,
        ``.Z``), a subset of ``("x", "y", "z")``; all three where it reads its warp's index
        (``SR_WARPID``). Threads of a block that differ only in a component it never reads
        run the same instructions on the same addresses (`duplicate_warps`). None where the
        summary does not say (one made before this field).
    global_atomics : int or None
        Global atomic and reduction instructions (``ATOMG``, ``RED``, ``REDG``, ``ATOM`` on a
        generic address). None where the summary does not say.
    global_atomics_one_address : int or None
        Of those, the ones whose address is the same for every thread, block and loop trip:
        register dataflow finds it built from constants and kernel parameters alone (no
        thread or block index, no loaded value, no register a loop steps). A counter every
        warp adds to. None where the summary does not say.
    global_stores_one_address : int or None
        Global stores (``STG``, ``ST``) to one address by the same test: a flag every warp
        sets (``*done = true``). None where the summary does not say.
    hot_loop_load_sources : tuple of tuple of str or None
        For each global load of the hot loop, in program order, what reaches its address
        (register dataflow, as for the one-address facts): the ``threadIdx`` components
        (``"x"``, ``"y"``, ``"z"``), the ``blockIdx`` components (``"ctaid.x"``, ...), the
        lane index (``"lane"``), a loaded value or another special register (``"data"``),
        a register the loop carries (``"loop"``: a counter or a pointer), and ``"stride"``
        where the loop moves the address by a line (128 bytes) or more per trip, or by a
        step known only at run time. A load the loop strides whose address no ``threadIdx``
        component of some warps (or no ``blockIdx`` component of some blocks) reaches is
        the same new line for those warps (blocks) in the same trip (`roofline` counts them
        as waiting for one miss). Empty without a hot loop with global loads; None where the
        summary does not say.
    lone_thread : {"global", "thread"} or None
        Where an ``EXIT`` before the hot loop, or a branch over it, lets only the thread whose
        index equals a value run it (``if (i == 0) { for ... }``, register dataflow: an exit
        or branch on ``!=`` of values the index reaches linearly in ``threadIdx.x``, nothing
        loaded): ``"global"`` for the grid's index (one thread of the grid runs the loop),
        ``"thread"`` for ``threadIdx.x`` alone (one per block). None otherwise, and where the
        summary does not say.
    """

    model_config = _FROZEN

    architecture: str
    disassembler: str
    instructions: SassCounts
    loops: tuple[SassLoop, ...] = ()
    hot_loop: int | None = Field(default=None, ge=0)
    global_loads_in_flight_per_thread: int = Field(ge=0)
    global_load_bytes: int | None = Field(default=None, gt=0)
    global_load_bytes_in_flight_per_thread: int = Field(default=0, ge=0)
    global_load_instruction: str | None = None
    setmaxnreg_registers: tuple[int, ...] = ()
    thread_index_components: tuple[Literal["x", "y", "z"], ...] | None = None
    global_atomics: int | None = Field(default=None, ge=0)
    global_atomics_one_address: int | None = Field(default=None, ge=0)
    global_stores_one_address: int | None = Field(default=None, ge=0)
    hot_loop_load_sources: tuple[tuple[AddressSource, ...], ...] | None = None
    lone_thread: Literal["global", "thread"] | None = None

    @model_validator(mode="after")
    def _check_hot_loop(self) -> SassSummary:
        if self.hot_loop is not None and self.hot_loop >= len(self.loops):
            raise ValueError(f"hot_loop={self.hot_loop} is not an index of the {len(self.loops)} loops")
        return self

    def __str__(self) -> str:
        where = (f"loop {self.loops[self.hot_loop].start_offset:#06x}-{self.loops[self.hot_loop].end_offset:#06x}"
                 if self.hot_loop is not None else "straight-line code")
        loads = (f"{self.global_loads_in_flight_per_thread} {self.global_load_instruction} in flight per thread"
                 if self.global_loads_in_flight_per_thread else "no global loads")
        return (f"{self.architecture} SASS: {self.instructions.total} instructions, {len(self.loops)} loops; "
                f"{loads} ({where})")


def _executable(instrs: Sequence[Instruction], labels: dict[str, int]) -> list[Instruction]:
    """The instructions that can run: no NOP padding, no ``@!PT`` (never true), no trap."""
    out = []
    for instr in instrs:
        if instr.base == "NOP" or instr.guard == "@!PT":
            continue
        if instr.base == "BRA" and instr.guard is None and labels.get(instr.target or "") == instr.offset:
            continue
        out.append(instr)
    return out


def _count(instrs: Sequence[Instruction]) -> SassCounts:
    counts: dict[str, int] = {"total": len(instrs)}
    for instr in instrs:
        field = _CLASSES.get(instr.base) or ("tensor" if instr.base.endswith("MMA") else None)
        if field:
            counts[field] = counts.get(field, 0) + 1
    return SassCounts(**counts)


def _type_width(name: str | None) -> int:
    return 2 if name is not None and name.endswith("64") else 1


@functools.lru_cache(maxsize=4096)
def _operand_widths(opcode: str, n: int) -> tuple[int, ...]:
    """Registers each of the ``n`` operands of ``opcode`` spans outside brackets (a 64-bit
    value is a pair R2:R3)."""
    base, *mods = opcode.split(".")
    if base in _FP64:
        return (2,) * n
    if base.endswith("MMA"):
        # fragments of 2 to 8 registers; 4 errs on the side of an earlier wait
        return (4,) * n
    if "WIDE" in mods:  # IMAD.WIDE d, a, b, c: d and c are 64-bit
        return tuple(2 if i in (0, 3) else 1 for i in range(n))
    if base in _CONVERSIONS:
        types = [m for m in mods if _TYPE.fullmatch(m)]
        dest = types[0] if types else None
        source = types[1] if len(types) > 1 else (_CONVERSIONS[base] or dest)
        return (_type_width(dest),) + (_type_width(source),) * (n - 1)
    vector = 8 if "256" in mods else 4 if "128" in mods else 2 if "64" in mods else 1
    if vector == 1 and base in _MEMORY and any(m in ("F64", "S64", "U64") for m in mods):
        vector = 2
    return (vector,) * n


def _registers(instr: Instruction, sm: int) -> list[frozenset[int]]:
    """The registers each operand names, widths included."""
    widths = _operand_widths(instr.opcode, len(instr.operands))
    # before sm_80 the listing prints a 64-bit address as [R2], with .E on the opcode
    implicit_wide_address = sm < 80 and "E" in instr.modifiers
    return [_operand_registers(operand, width, implicit_wide_address)
            for operand, width in zip(instr.operands, widths)]


# the same operand text comes back in most instructions of a listing (R2, RZ, desc[UR4][R2.64])
@functools.lru_cache(maxsize=1 << 16)
def _operand_registers(operand: str, width: int, implicit_wide_address: bool) -> frozenset[int]:
    """The registers one operand names, ``width`` registers per name outside brackets."""
    if "R" not in operand:
        return frozenset()
    regs: set[int] = set()
    inside = "".join(_BRACKETS.findall(operand))
    outside = _BRACKETS.sub(" ", operand)
    for m in _REGISTER.finditer(outside):
        first = int(m[1])
        regs.update(range(first, first + (2 if "64" in m[2].split(".") else width)))
    regs |= _bracket_registers(inside, implicit_wide_address)
    return frozenset(regs)


class _Named(NamedTuple):
    """What one instruction's operands name, read once per function (`_operand_table`)."""

    registers: tuple[frozenset[int], ...]
    """Per operand, the general registers, widths included (``R2.64``: R2 and R3)."""
    named: tuple[frozenset[object], ...]
    """Per operand, those and the uniform registers (``"U4"``)."""
    every: frozenset[int]
    """Every general register the instruction names."""


def _operand_table(instrs: Sequence[Instruction], sm: int) -> dict[int, _Named]:
    """Offset -> what each instruction's operands name: the walks of a summary read each
    instruction many times (every loop around it, twice per walk), the text once."""
    table = {}
    for instr in instrs:
        regs = tuple(_registers(instr, sm))
        named = tuple(r | _uniform_registers(o) if "UR" in o else r for r, o in zip(regs, instr.operands))
        table[instr.offset] = _Named(regs, named, frozenset().union(*regs))
    return table


def _bracket_registers(bracket: str, implicit_wide_address: bool) -> set[int]:
    """The registers an address names (``[R2.64+0x10]``: R2 and R3)."""
    regs: set[int] = set()
    for m in _REGISTER.finditer(bracket):
        first = int(m[1])
        regs.update(range(first, first + (2 if "64" in m[2].split(".") or implicit_wide_address else 1)))
    return regs


def _load_bytes(instr: Instruction) -> int:
    mods = instr.modifiers
    for token, size in (("256", 32), ("128", 16), ("64", 8), ("U16", 2), ("S16", 2), ("U8", 1), ("S8", 1)):
        if token in mods:
            return size
    return 4


def _short(instr: Instruction) -> str:
    keep = [m for m in instr.modifiers if m in ("E", "64", "128", "256", "U8", "S8", "U16", "S16")]
    return ".".join((instr.base, *keep))


def _load_walk(instrs: Sequence[Instruction], table: dict[int, _Named],
               pending: list[tuple[Instruction, frozenset[int]]]) -> Iterator[tuple[int, Instruction | None]]:
    """Walk ``instrs`` with ``pending`` (the global loads outstanding, each with the registers
    it writes), updating it in place: yields ``(waited, load)`` per instruction, ``waited``
    the loads outstanding when it waits for one of them (0 when it waits for none) and
    ``load`` the instruction where it is a global load (None otherwise)."""
    for instr in instrs:
        entry = table[instr.offset]
        regs, named = entry.registers, entry.every
        used = [i for i, (_, written) in enumerate(pending) if written & named] if pending else []
        waited = len(pending) if used else 0
        if used:
            # loads come back in issue order: waiting for one waits for those before it
            del pending[: used[-1] + 1]
        load = instr if instr.base in _GLOBAL_LOADS and regs and regs[0] else None
        if load is not None:
            pending.append((load, regs[0]))
        yield waited, load


def _in_flight(instrs: Sequence[Instruction], table: dict[int, _Named], passes: int) -> list[Instruction]:
    """The global loads outstanding together at the peak of a walk of ``instrs``.

    ``passes`` > 1 walks a loop body again with what the previous pass left in flight,
    counting on the last pass only (the steady state).
    """
    pending: list[tuple[Instruction, frozenset[int]]] = []
    best: list[Instruction] = []
    for walk in range(passes):
        for _, load in _load_walk(instrs, table, pending):
            if load is not None and walk == passes - 1:
                loads = [held for held, _ in pending]
                if (len(loads), _bytes(loads)) > (len(best), _bytes(best)):
                    best = loads
    return best


def _fewest_in_flight(instrs: Sequence[Instruction], table: dict[int, _Named]) -> int:
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


def _bytes(loads: Sequence[Instruction]) -> int:
    return sum(_load_bytes(load) for load in loads)


def _loop_ranges(instrs: Sequence[Instruction], labels: dict[str, int]) -> list[tuple[int, int]]:
    """(first, last offset) of every loop: a branch back to a label, one loop per target."""
    ends: dict[int, int] = {}
    for instr in instrs:
        if _CLASSES.get(instr.base) == "branches" and instr.target is not None:
            start = labels.get(instr.target)
            if start is not None and start < instr.offset:
                ends[start] = max(ends.get(start, start), instr.offset)
    return sorted(ends.items())


def _setmaxnreg(instrs: Sequence[Instruction]) -> tuple[int, ...]:
    """The register counts ``USETMAXREG`` sets (its last operand, ``0xe8`` = 232 per thread)."""
    return tuple(sorted({int(i.operands[-1], 0) for i in instrs if i.base == "USETMAXREG" and i.operands}))


def _thread_index_components(instrs: Sequence[Instruction]) -> tuple[Literal["x", "y", "z"], ...]:
    """The ``threadIdx`` components the instructions read (``S2R Rn, SR_TID.Y``; `_special`:
    a warp that reads its own index reads all three, so it is never a copy of another)."""
    read: set[str] = set()
    for instr in instrs:
        for operand in instr.operands:
            if operand.startswith("SR_"):
                read |= _special(operand)
    return tuple(c for c in ("x", "y", "z") if c in read)  # type: ignore[return-value]


# Instructions whose first operand is not a register they write.
_NO_DESTINATION = ("STG", "ST", "STS", "STL", "STSM", "RED", "REDG", "BAR", "BRA", "BRX", "JMP", "EXIT", "RET",
                   "CALL", "BSYNC", "BSSY", "WARPSYNC", "MEMBAR", "FENCE", "ERRBAR", "CCTL", "NOP")
_GLOBAL_ATOMICS = ("ATOMG", "RED", "REDG", "ATOM")
_GLOBAL_STORES = ("STG", "ST")
_DESCRIPTOR = re.compile(r"^desc\[[^\]]*\]")
_UNIFORM_REGISTER = re.compile(r"(?<![A-Za-z0-9_])UR(\d+)")
# results that differ between threads (or over time) whatever their sources hold
_VARYING_RESULTS = ("LDG", "LD", "LDS", "LDL", "LDSM", "ATOMG", "ATOM", "ATOMS", "SHFL", "VOTE", "VOTEU", "MATCH",
                    "REDUX", "CS2R", "S2R", "S2UR", "LDGSTS", "ELECT")


@functools.lru_cache(maxsize=1 << 14)
def _uniform_registers(operand: str) -> frozenset[str]:
    out = set()
    for m in _UNIFORM_REGISTER.finditer(operand):
        first = int(m[1])
        out.update(f"U{first + i}" for i in range(2 if ".64" in operand else 1))
    return frozenset(out)


def _special(operand: str) -> frozenset[str]:
    """The sources a special register (``S2R``/``S2UR`` operand) stands for."""
    if operand.startswith("SR_TID."):
        return frozenset({operand[len("SR_TID."):].lower()})
    if operand.startswith("SR_CTAID."):
        return frozenset({"ctaid." + operand[len("SR_CTAID."):].lower()})
    if operand == "SR_LANEID":
        return frozenset({"lane"})
    if operand == "SR_WARPID":
        # a warp's own index: its threads' components, whatever the block's shape
        return frozenset({"x", "y", "z"})
    return frozenset({"data"})


_IMMEDIATE = re.compile(r"^-?(0x[0-9a-fA-F]+|\d+)$")
_PREDICATE = re.compile(r"^!?U?P(\d+|T)$")


def _immediate(operand: str) -> int | None:
    return abs(int(operand, 0)) if _IMMEDIATE.match(operand) else None


def _arithmetic(instr: Instruction) -> str | None:
    """What integer arithmetic an instruction does, for the steps of `_step` and `_delta`:
    ``"move"``, ``"add"``, ``"multiply"`` (not ``.HI``), ``"lea"`` (not ``.HI``), ``"shift"``
    (left), else None. Uniform-datapath opcodes (``UIADD3``) count as their vector twins."""
    return _opcode_arithmetic(instr.opcode)


@functools.lru_cache(maxsize=4096)
def _opcode_arithmetic(opcode: str) -> str | None:
    base, *mods = opcode.split(".")
    base = base.lstrip("U")
    if base == "MOV" or (base == "IMAD" and "MOV" in mods):
        return "move"
    if base in ("IADD3", "IADD", "IADD32I", "VIADD") or (base == "IMAD" and "IADD" in mods):
        return "add"
    if base in ("IMAD", "IMUL") and "HI" not in mods:
        return "multiply"
    if base == "LEA" and "HI" not in mods:
        return "lea"
    if base in ("SHF", "SHL") and "L" in mods:
        return "shift"
    return None


def _step(instr: Instruction, values: Sequence[str], steps: Sequence[float]) -> float:
    """How far the value an instruction writes moves per loop trip, from how far what it
    reads moves (``steps``, one per value, 0 for a constant; ``values``: its source operands,
    predicates left out): kept by moves, adds, and multiplies and shifts by an immediate;
    ``inf`` where a moving value is scaled by a run-time value or passes through anything else."""
    if not any(steps):
        return 0.0
    kind = _arithmetic(instr)

    def scaled(moving: int, by: int) -> float:
        scale = _immediate(values[by])
        return math.inf if steps[by] or scale is None else steps[moving] * scale

    if kind == "move":
        return steps[-1]
    if kind == "add":
        return sum(steps)
    if kind == "multiply" and len(values) >= 2:
        product = 0.0 if not steps[0] and not steps[1] else scaled(0, 1) if steps[0] else scaled(1, 0)
        return product + (steps[2] if len(values) > 2 else 0.0)
    if kind == "lea" and len(values) >= 3:
        shift = _immediate(values[2])
        return math.inf if shift is None else steps[0] * 2 ** shift + steps[1]
    if kind == "shift" and len(values) >= 2:
        shift = _immediate(values[1])
        return math.inf if shift is None or steps[1] else steps[0] * 2 ** shift
    return math.inf


def _delta(instr: Instruction, values: Sequence[str], deltas: Sequence[float | None]) -> float | None:
    """How far the value an instruction writes is from a loop-carried register's value at
    the start of the trip (``deltas``, one per value: None for a value not derived from one):
    immediates add, a run-time value added or scaling it makes it ``inf``; None where no
    source is derived from a carried register."""
    if all(d is None for d in deltas):
        return None
    kind = _arithmetic(instr)

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


def _written(instr: Instruction, named: Sequence[frozenset[object]]) -> tuple[int, frozenset[object]]:
    """The operand an instruction writes (-1 for none) and the registers it names."""
    operands = instr.operands
    # ATOMG P, Rd, [a], b writes a predicate and Rd: Rd is the register written
    first = 1 if instr.base in ("ATOMG", "ATOM") and operands and operands[0].startswith("P") else 0
    if instr.base in _NO_DESTINATION or len(operands) <= first or "[" in operands[first]:
        return -1, frozenset()
    return first, named[first]


def _carried(body: Sequence[Instruction], table: dict[int, _Named]) -> set[object]:
    """Registers a loop reads before it writes them and writes too: its counters and pointers."""
    written: set[object] = set()
    live_in: set[object] = set()
    for instr in body:
        named = table[instr.offset].named
        first, dest = _written(instr, named)
        for i in range(first + 1, len(named)):
            live_in |= named[i] - written
        written |= dest
    return live_in & written


def _address_sources(instrs: Sequence[Instruction], loops: Sequence[tuple[int, int]], sm: int,
                     table: dict[int, _Named]) -> tuple[
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
    carried = {(start, end): _carried(_between(instrs, offsets, start, end), table) for start, end in loops}
    # one loop per start and per end (a backward branch has one target): looked up per instruction
    carried_from = {start: regs for (start, _), regs in carried.items()}
    back_edges = {end: (start, regs) for (start, end), regs in carried.items()}
    facts = _walk_facts(instrs, loops, sm, table)
    held: dict[object, frozenset[str]] = {}
    steps: dict[object, float] = {}
    delta: dict[object, float | None] = {}
    trip_steps: dict[tuple[int, object], float] = {}
    at_back_edge: dict[int, dict[object, frozenset[str]]] = {}
    found: dict[int, frozenset[str]] = {}
    slopes: dict[object, tuple[float, float]] = {}  # per unit of (threadIdx.x, blockIdx.x)
    compares: dict[str, _Compare | None] = {}  # predicate -> the compare that last set it
    trips: dict[int, tuple[str, float]] = {}
    ends = {end: start for start, end in loops}
    skips: dict[int, tuple[str | None, str]] = {}
    for walk in range(2):
        for instr, fact in zip(instrs, facts):
            if instr.offset in carried_from:
                start = instr.offset
                for reg, sources in at_back_edge.get(start, {}).items():
                    held[reg] = held.get(reg, frozenset()) | sources
                for reg in carried_from[start]:
                    held[reg] = held.get(reg, frozenset()) | {"loop"}
                    delta[reg] = 0.0
                    if walk:
                        steps[reg] = trip_steps.get((start, reg), math.inf)
            if walk and instr.base in ("ISETP", "UISETP"):
                compared = _compare(instr, table, held, steps, slopes)
                for operand in instr.operands[:2]:
                    if operand not in ("PT", "UPT"):
                        compares[operand] = compared
            compared = compares.get(instr.guard.lstrip("@!")) if walk and instr.guard else None
            if compared is not None and instr.offset in ends:
                follows = _trip_index(compared)
                if follows is not None:
                    trips[ends[instr.offset]] = follows
            if compared is not None and (instr.base == "EXIT" or (instr.base == "BRA" and instr.target)):
                kind = _lone_thread(compared, instr.guard.startswith("@!"))
                if kind is not None:
                    skips.setdefault(instr.offset, (instr.target if instr.base == "BRA" else None, kind))
            if fact.address:
                sources = frozenset().union(*(held.get(r, frozenset()) for r in fact.address))
                if "loop" in sources and max(steps.get(r, 0.0) for r in fact.address) >= _LINE_BYTES:
                    sources |= {"stride"}
                found[instr.offset] = sources
            if fact.dest:
                _write(instr, fact, held, steps, slopes, delta)
            if instr.offset in back_edges:  # what registers hold here goes round again
                start, regs_carried = back_edges[instr.offset]
                edge = at_back_edge.setdefault(start, {})
                for reg, sources in held.items():
                    edge[reg] = edge.get(reg, frozenset()) | sources
                if not walk:
                    for reg in regs_carried:
                        moved = delta.get(reg)
                        trip_steps[(start, reg)] = math.inf if moved is None else abs(moved)
    return found, trips, skips


class _Facts(NamedTuple):
    """What `_address_sources`' walks need of one instruction that its operands alone say."""

    dest: frozenset[object]
    """The registers it writes (empty for none)."""
    read: frozenset[object]
    """The registers its source operands name."""
    values: tuple[str, ...]
    """Its source operands, predicates left out."""
    value_registers: tuple[frozenset[object], ...]
    """The registers each of ``values`` names."""
    address: frozenset[object]
    """For a global load, store or atomic, the registers its address names; else empty."""
    special: frozenset[str] | None
    """For ``S2R``/``S2UR``, the sources its special registers stand for (`_special`)."""
    varying: bool
    """Its result differs between threads or over time whatever its sources hold."""
    in_loop: bool


def _walk_facts(instrs: Sequence[Instruction], loops: Sequence[tuple[int, int]], sm: int,
                table: dict[int, _Named]) -> list[_Facts]:
    """The `_Facts` of each instruction, found once for both walks."""
    inside = _inside_loops(instrs, loops)
    out = []
    empty: frozenset[object] = frozenset()
    for instr, in_loop in zip(instrs, inside):
        operands, named = instr.operands, table[instr.offset].named
        first, dest = _written(instr, named)
        base = instr.base
        address = empty
        if base in _GLOBAL_LOADS or base in _GLOBAL_ATOMICS or base in _GLOBAL_STORES:
            found: set[object] = set()
            for operand in operands:
                for bracket in _BRACKETS.findall(_DESCRIPTOR.sub("", operand)):
                    found |= _bracket_registers(bracket, sm < 80 and "E" in instr.modifiers)
                    found |= _uniform_registers(bracket)
            address = frozenset(found)
        if not dest:  # the walks read only the address of an instruction that writes no register
            out.append(_Facts(empty, empty, (), (), address, None, False, in_loop))
            continue
        values = tuple(o for o in operands[first + 1:] if not _is_predicate(o))
        # an operand written twice names what its last place does (IMAD.WIDE's widths differ by place)
        by_operand = dict(zip(operands, named))
        out.append(_Facts(dest, frozenset().union(*named[first + 1:]), values, tuple(by_operand[o] for o in values),
                          address, frozenset().union(*(_special(o) for o in operands[1:]))
                          if base in ("S2R", "S2UR") else None, base in _VARYING_RESULTS, in_loop))
    return out


@functools.lru_cache(maxsize=1024)
def _is_predicate(operand: str) -> bool:
    return _PREDICATE.match(operand) is not None


def _inside_loops(instrs: Sequence[Instruction], loops: Sequence[tuple[int, int]]) -> list[bool]:
    """Whether each instruction (in offset order) is inside one of ``loops`` (offset ranges)."""
    spans = sorted(loops)
    out, k, reach = [], 0, -1
    for instr in instrs:
        while k < len(spans) and spans[k][0] <= instr.offset:
            reach = max(reach, spans[k][1])
            k += 1
        out.append(instr.offset <= reach)
    return out


def _write(instr: Instruction, fact: _Facts, held: dict, steps: dict, slopes: dict, delta: dict) -> None:
    """What the registers an instruction writes hold after it, by `_address_sources`' rules."""
    sources = frozenset().union(*(held.get(r, frozenset()) for r in fact.read))
    if fact.special is not None:
        sources |= fact.special
    elif fact.varying:
        sources |= {"data"}
    values = fact.values
    if fact.varying:
        # a thread's or block's index stays put; what a loop loads may change every trip
        moved = math.inf if fact.in_loop and not (fact.special is not None and sources <= _INDICES) else 0.0
        offset = None
    else:
        moved = _step(instr, values, [_largest_step(steps, regs) for regs in fact.value_registers])
        offset = _delta(instr, values, [_largest_delta(delta, regs) for regs in fact.value_registers])
    if fact.special is not None:
        # an index is 1 in itself and 0 in the others; a lane or anything else is not linear
        slope = tuple(1.0 if fact.special == {index} else 0.0 if fact.special <= _INDICES - {"lane"} else math.inf
                      for index in ("x", "ctaid.x"))
    elif fact.varying:
        slope = (math.inf, math.inf)
    else:
        pairs = [_largest_slopes(slopes, regs) for regs in fact.value_registers]
        slope = tuple(_step(instr, values, [p[k] for p in pairs]) for k in (0, 1)) \
            if any(x or b for x, b in pairs) else (0.0, 0.0)
    for reg in fact.dest:
        held[reg] = (held.get(reg, frozenset()) | sources) if instr.guard else sources
        steps[reg] = max(steps.get(reg, 0.0), moved) if instr.guard else moved
        old_slope = slopes.get(reg, _FLAT)
        slopes[reg] = (max(old_slope[0], slope[0]), max(old_slope[1], slope[1])) if instr.guard else slope
        if offset is None:
            delta.pop(reg, None)
        else:
            delta[reg] = offset


def _between(instrs: Sequence[Instruction], offsets: Sequence[int], start: int, end: int) -> Sequence[Instruction]:
    """The instructions from offset ``start`` to ``end`` of ``instrs`` (in offset order; ``offsets``: theirs)."""
    return instrs[bisect.bisect_left(offsets, start):bisect.bisect_right(offsets, end)]


def _largest_delta(delta: dict, registers: Collection[object]) -> float | None:
    """How far the most moved of `registers` is from a loop-carried register's value at the
    start of the trip (`_delta`): None where none of them derives from one, ``inf`` where one
    does by a run-time amount."""
    found = [delta[r] for r in registers if r in delta]
    if not found:
        return None
    return math.inf if any(d is None for d in found) else max(found)


def _largest_step(steps: dict, registers: Collection[object]) -> float:
    """The most any of `registers` moves per loop trip (0 for none)."""
    return max((steps.get(r, 0.0) for r in registers), default=0.0)


_FLAT = (0.0, 0.0)


def _largest_slopes(slopes: dict, registers: Collection[object]) -> tuple[float, float]:
    """The largest slopes of `registers` in (``threadIdx.x``, ``blockIdx.x``), (0, 0) for none."""
    if not registers:
        return 0.0, 0.0
    pairs = [slopes.get(r, _FLAT) for r in registers]
    return max(p[0] for p in pairs), max(p[1] for p in pairs)


@dataclass(frozen=True)
class _Compare:
    """What an integer compare (``ISETP``) reads, from `_address_sources`' walk: its test
    (``"EQ"``, ``"NE"``, ...) and, for each of its two values, how far it moves per loop trip
    and its slopes in (``threadIdx.x``, ``blockIdx.x``); ``data`` where a loaded value reaches
    either."""

    test: str
    steps: tuple[float, float]
    slopes: tuple[tuple[float, float], tuple[float, float]]
    data: bool


def _compare(instr: Instruction, table: dict[int, _Named], held: dict, steps: dict,
             slopes: dict) -> _Compare | None:
    """The `_Compare` of an ``ISETP``/``UISETP`` as its registers hold now; None unless it compares two values."""
    values = [o for o in instr.operands[2:4] if not _PREDICATE.match(o)]
    if len(values) != 2:
        return None
    named = table[instr.offset].named[2:4]
    moved = tuple(_largest_step(steps, side) for side in named)
    slope = tuple(_largest_slopes(slopes, side) for side in named)
    test = next((m for m in instr.modifiers if m in ("EQ", "NE", "LT", "LE", "GT", "GE")), "")
    return _Compare(test, moved, slope, any("data" in held.get(r, ()) for side in named for r in side))  # type: ignore[arg-type]


def _trip_index(compare: _Compare) -> tuple[str, float] | None:
    """Which index the trips of a loop follow, from the compare its back edge branches on.

    Of the two values compared (``ISETP ... P, PT, a, b``), the counter moves by a constant
    each trip and the bound stays; where exactly one of them is a linear function of the
    thread's index (finite slopes from `_address_sources`), a thread's trips are that
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


def _one_address(instrs: Sequence[Instruction], sources: dict[int, frozenset[str]]) -> tuple[int, int]:
    """Global atomics and global stores whose address nothing varying reaches (`_address_sources`)."""
    atomics = stores = 0
    for instr in instrs:
        if instr.offset in sources and not sources[instr.offset]:
            atomics += instr.base in _GLOBAL_ATOMICS
            stores += instr.base in _GLOBAL_STORES
    return atomics, stores


def summarize(instrs: Sequence[Instruction], labels: dict[str, int], architecture: str, tool: str) -> SassSummary:
    """The `SassSummary` of one function's instructions (``labels``: label -> offset)."""
    sm = int(re.sub(r"\D", "", architecture) or 0)
    code = _executable(instrs, labels)
    ranges = _loop_ranges(code, labels)
    table = _operand_table(code, sm)
    addresses, index_trips, skips = _address_sources(code, ranges, sm, table)
    one_address = _one_address(code, addresses)
    loops, bodies = [], []
    offsets = [i.offset for i in code]
    for start, end in ranges:
        body = _between(code, offsets, start, end)
        depth = 1 + sum(1 for s, e in ranges if (s, e) != (start, end) and s <= start and end <= e)
        bodies.append(body)
        follows, per_index = index_trips.get(start, (None, None))
        inner = [(s, e) for s, e in ranges if (s, e) != (start, end) and start <= s and e <= end]
        own = [i for i, nested in zip(body, _inside_loops(body, inner)) if not nested]
        loops.append(SassLoop(start_offset=start, end_offset=end, depth=depth, instructions=_count(body),
                              global_loads_in_flight=len(_in_flight(body, table, passes=2)),
                              fewest_loads_in_flight=_fewest_in_flight(own, table),
                              index_trips=follows, trips_per_index=per_index))
    hot = None
    if loops:
        def key(i: int) -> tuple[int, ...]:
            loop = loops[i]
            return (loop.instructions.global_loads > 0, loop.depth, loop.instructions.global_loads,
                    loop.instructions.total, -i)
        hot = max(range(len(loops)), key=key)
    if hot is not None and loops[hot].instructions.global_loads:
        peak = _in_flight(bodies[hot], table, passes=2)
    else:
        peak = _in_flight(code, table, passes=1)
    widest = max(peak, key=_load_bytes, default=None)
    lone = None
    if hot is not None:
        # an exit before the hot loop, or a branch over it, that every thread but one takes
        first, last = loops[hot].start_offset, loops[hot].end_offset
        lone = next((kind for offset, (target, kind) in sorted(skips.items()) if offset < first
                     and (target is None or labels.get(target, -1) > last)), None)
    hot_sources = tuple(tuple(c for c in _SOURCE_ORDER if c in addresses.get(i.offset, ()))
                        for i in (bodies[hot] if hot is not None else ()) if i.base in _GLOBAL_LOADS)
    return SassSummary(
        architecture=architecture,
        disassembler=tool,
        instructions=_count(code),
        loops=tuple(loops),
        hot_loop=hot,
        global_loads_in_flight_per_thread=len(peak),
        global_load_bytes=_load_bytes(widest) if widest else None,
        global_load_bytes_in_flight_per_thread=_bytes(peak),
        global_load_instruction=_short(widest) if widest else None,
        setmaxnreg_registers=_setmaxnreg(code),
        thread_index_components=_thread_index_components(code),
        global_atomics=sum(1 for i in code if i.base in _GLOBAL_ATOMICS),
        global_atomics_one_address=one_address[0],
        global_stores_one_address=one_address[1],
        hot_loop_load_sources=hot_sources,
        lone_thread=lone,
    )


@dataclass(frozen=True)
class Summaries:
    """The summary of every function of one cubin, or why there is none."""

    functions: dict[str, SassSummary]
    tool: str | None
    reason: str | None


@functools.lru_cache(maxsize=64)
def sass_summaries(cubin: bytes, architecture: str) -> Summaries:
    """Disassemble ``cubin`` once and summarise each of its functions.

    No nvdisasm, or none that reads the cubin, gives no summaries and the reason.
    """
    try:
        listing: Disassembly = disassemble(cubin)
    except NvdisasmError as exc:
        return Summaries({}, None, str(exc))
    functions = {name: summarize(instrs, listing.labels.get(name, {}), architecture, listing.tool)
                 for name, instrs in listing.functions.items()}
    return Summaries(functions, listing.tool, None)


_CODE_FOR = re.compile(r"\bcode for (sm_\d+[a-z]?)|EF_CUDA_(SM\d+[A-Z]?)\b")


def read_sass(listing: str, architecture: str | None = None, *, tool: str = "SASS listing") -> dict[str, SassSummary]:
    """The `SassSummary` of every function of a SASS listing you already have.

    The same reader as `kernel_resources` (which runs nvdisasm on a cubin itself), for a
    listing made elsewhere: ``cuobjdump -sass APP`` (an executable, library, fatbin or
    cubin), ``nvdisasm -c`` of a cubin, or the instructions of Nsight Compute's source page
    written out in either form (offsets from the function's start, ``/*0130*/``).

    Parameters
    ----------
    listing : str
        The listing's text: ``Function : NAME`` (cuobjdump) or ``.section .text.NAME``
        (nvdisasm) before each function's instructions.
    architecture : str, optional
        The SASS architecture (``"sm_90"``); default the listing's ``code for sm_XX``.
    tool : str
        What made the listing, kept in ``SassSummary.disassembler``.

    Returns
    -------
    dict
        Function name (as the listing prints it, mangled for C++) to its summary.

    Raises
    ------
    OccupancyError
        For a listing with no function, an unknown architecture, or none given and none in
        the listing.

    Examples
    --------
    >>> import occupancy
    >>> listing = '''
    ...     Function : copy
    ...     /*0000*/  LDG.E R2, desc[UR4][R2.64] ;
    ...     /*0010*/  STG.E desc[UR4][R4.64], R2 ;
    ...     /*0020*/  @!P0 BRA 0x0 ;
    ...     /*0030*/  EXIT ;
    ... '''
    >>> s = occupancy.read_sass(listing, "sm_90")["copy"]
    >>> s.instructions.global_loads, len(s.loops), s.global_loads_in_flight_per_thread
    (1, 1, 1)
    """
    if not isinstance(listing, str):
        raise TypeError(f"listing must be a str (the text of a SASS listing), not {type(listing).__name__}")
    if architecture is None:
        found = _CODE_FOR.search(listing)
        if found is None:
            raise OccupancyError("architecture=None and the listing names none (no 'code for sm_XX'): "
                                 "give architecture='sm_90', say")
        architecture = found[1] or found[2].lower()
    from ._arch import architecture as lookup

    architecture = lookup(architecture).name  # a known architecture, or the package's error
    if not isinstance(tool, str):
        raise TypeError(f"tool must be a str, not {type(tool).__name__}")
    parsed = parse_listing(listing, tool)
    out = {name: summarize(instrs, parsed.labels.get(name, {}), architecture, tool)
           for name, instrs in parsed.functions.items() if instrs}
    if not out:
        raise OccupancyError(f"the {tool} holds no function with instructions ('Function : NAME' or "
                             "'.section .text.NAME' followed by /*offset*/ lines)")
    return out
