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

The same listing gives three facts about addresses (`SassSummary.thread_index_components`,
``global_atomics_one_address``, ``global_stores_one_address``): which ``threadIdx``
components the kernel reads at all, and which global atomics and stores write one address
for every thread, block and loop trip (forward register dataflow: an address built from
constants and kernel parameters alone). The time model takes copies of a warp, counters and
flags from them.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

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
    """

    model_config = _FROZEN

    start_offset: int = Field(ge=0)
    end_offset: int = Field(ge=0)
    depth: int = Field(ge=1)
    instructions: SassCounts
    global_loads_in_flight: int = Field(ge=0)


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


def _operand_widths(instr: Instruction) -> list[int]:
    """Registers each operand spans outside brackets (a 64-bit value is a pair R2:R3)."""
    n, base, mods = len(instr.operands), instr.base, instr.modifiers
    if base in _FP64:
        return [2] * n
    if base.endswith("MMA"):
        # fragments of 2 to 8 registers; 4 errs on the side of an earlier wait
        return [4] * n
    if "WIDE" in mods:  # IMAD.WIDE d, a, b, c: d and c are 64-bit
        return [2 if i in (0, 3) else 1 for i in range(n)]
    if base in _CONVERSIONS:
        types = [m for m in mods if _TYPE.fullmatch(m)]
        dest = types[0] if types else None
        source = types[1] if len(types) > 1 else (_CONVERSIONS[base] or dest)
        return [_type_width(dest)] + [_type_width(source)] * (n - 1)
    vector = 8 if "256" in mods else 4 if "128" in mods else 2 if "64" in mods else 1
    if vector == 1 and base in _MEMORY and any(m in ("F64", "S64", "U64") for m in mods):
        vector = 2
    return [vector] * n


def _registers(instr: Instruction, sm: int) -> list[frozenset[int]]:
    """The registers each operand names, widths included."""
    widths = _operand_widths(instr)
    # before sm_80 the listing prints a 64-bit address as [R2], with .E on the opcode
    implicit_wide_address = sm < 80 and "E" in instr.modifiers
    out = []
    for operand, width in zip(instr.operands, widths):
        regs: set[int] = set()
        inside = "".join(_BRACKETS.findall(operand))
        outside = _BRACKETS.sub(" ", operand)
        for m in _REGISTER.finditer(outside):
            first = int(m[1])
            regs.update(range(first, first + (2 if "64" in m[2].split(".") else width)))
        for m in _REGISTER.finditer(inside):
            first = int(m[1])
            pair = "64" in m[2].split(".") or implicit_wide_address
            regs.update(range(first, first + (2 if pair else 1)))
        out.append(frozenset(regs))
    return out


def _load_bytes(instr: Instruction) -> int:
    mods = instr.modifiers
    for token, size in (("256", 32), ("128", 16), ("64", 8), ("U16", 2), ("S16", 2), ("U8", 1), ("S8", 1)):
        if token in mods:
            return size
    return 4


def _short(instr: Instruction) -> str:
    keep = [m for m in instr.modifiers if m in ("E", "64", "128", "256", "U8", "S8", "U16", "S16")]
    return ".".join((instr.base, *keep))


def _in_flight(instrs: Sequence[Instruction], sm: int, passes: int) -> list[Instruction]:
    """The global loads outstanding together at the peak of a walk of ``instrs``.

    ``passes`` > 1 walks a loop body again with what the previous pass left in flight,
    counting on the last pass only (the steady state).
    """
    pending: list[tuple[Instruction, frozenset[int]]] = []
    best: list[Instruction] = []
    for walk in range(passes):
        for instr in instrs:
            regs = _registers(instr, sm)
            named = frozenset().union(*regs)
            used = [i for i, (_, written) in enumerate(pending) if written & named]
            if used:
                # loads come back in issue order: waiting for one waits for those before it
                del pending[: used[-1] + 1]
            if instr.base in _GLOBAL_LOADS and regs and regs[0]:
                pending.append((instr, regs[0]))
                loads = [load for load, _ in pending]
                if walk == passes - 1 and (len(loads), _bytes(loads)) > (len(best), _bytes(best)):
                    best = loads
    return best


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
    """The ``threadIdx`` components the instructions read (``S2R Rn, SR_TID.Y``)."""
    read: set[str] = set()
    for instr in instrs:
        for operand in instr.operands:
            if operand.startswith("SR_TID."):
                read.add(operand[len("SR_TID."):].lower())
            elif operand == "SR_WARPID":
                # warps that read their own index are never duplicates of each other
                read.update("xyz")
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


def _uniform_registers(operand: str) -> set[str]:
    out = set()
    for m in _UNIFORM_REGISTER.finditer(operand):
        first = int(m[1])
        out.update(f"U{first + i}" for i in range(2 if ".64" in operand else 1))
    return out


def _one_address(instrs: Sequence[Instruction], loops: Sequence[tuple[int, int]], sm: int) -> tuple[int, int]:
    """Global atomics and global stores whose address no thread index, block index, loaded value or loop step reaches.

    Forward dataflow in program order, walked twice: on the second walk a loop's first
    instruction also sees what was varying at its back edge on the first. A register is
    varying where an instruction that writes it reads a varying one, reads a
    special register (``S2R``/``S2UR``: thread, block or lane), loads from memory, or,
    inside a loop, reads the register it writes (a loop counter). A guarded write keeps
    what the register held too. The grid and block sizes (``c[0x0][...]``) are constants.
    Returns (atomics, stores) to one address, counted on the second walk.
    """
    varying: set[object] = set()
    at_back_edge: dict[int, set[object]] = {}
    atomics = stores = 0
    for _ in range(2):
        atomics = stores = 0
        for instr in instrs:
            for start, end in loops:
                if instr.offset == start:
                    varying |= at_back_edge.get(start, set())
            regs = _registers(instr, sm)
            operands = list(instr.operands)
            # ATOMG P, Rd, [a], b writes a predicate and Rd: Rd is the register written
            first = 1 if instr.base in ("ATOMG", "ATOM") and operands and operands[0].startswith("P") else 0
            writes = instr.base not in _NO_DESTINATION and len(operands) > first and "[" not in operands[first]
            dest: set[object] = (set(regs[first]) | _uniform_registers(operands[first])) if writes else set()
            sources: set[object] = set()
            for i, operand in enumerate(operands):
                if not (writes and i <= first):
                    sources |= set(regs[i]) | _uniform_registers(operand)
            if instr.base in _GLOBAL_ATOMICS or instr.base in _GLOBAL_STORES:
                address: set[object] = set()
                for operand in operands:
                    for bracket in _BRACKETS.findall(_DESCRIPTOR.sub("", operand)):
                        address |= {int(m[1]) + k for m in _REGISTER.finditer(bracket)
                                    for k in range(2 if ".64" in bracket or sm < 80 else 1)}
                        address |= _uniform_registers(bracket)
                if address and not (address & varying):
                    atomics += instr.base in _GLOBAL_ATOMICS
                    stores += instr.base in _GLOBAL_STORES
            step = bool(dest & sources) and any(start <= instr.offset <= end for start, end in loops)
            if dest and (instr.base in _VARYING_RESULTS or step or sources & varying):
                varying |= dest
            elif dest and not instr.guard:
                varying -= dest
            for start, end in loops:
                if instr.offset == end:  # the back edge: what is varying here goes round again
                    at_back_edge[start] = at_back_edge.get(start, set()) | varying
    return atomics, stores


def summarize(instrs: Sequence[Instruction], labels: dict[str, int], architecture: str, tool: str) -> SassSummary:
    """The `SassSummary` of one function's instructions (``labels``: label -> offset)."""
    sm = int(re.sub(r"\D", "", architecture) or 0)
    code = _executable(instrs, labels)
    ranges = _loop_ranges(code, labels)
    one_address = _one_address(code, ranges, sm)
    loops, bodies = [], []
    for start, end in ranges:
        body = [i for i in code if start <= i.offset <= end]
        depth = 1 + sum(1 for s, e in ranges if (s, e) != (start, end) and s <= start and end <= e)
        bodies.append(body)
        loops.append(SassLoop(start_offset=start, end_offset=end, depth=depth, instructions=_count(body),
                              global_loads_in_flight=len(_in_flight(body, sm, passes=2))))
    hot = None
    if loops:
        def key(i: int) -> tuple[int, ...]:
            loop = loops[i]
            return (loop.instructions.global_loads > 0, loop.depth, loop.instructions.global_loads,
                    loop.instructions.total, -i)
        hot = max(range(len(loops)), key=key)
    if hot is not None and loops[hot].instructions.global_loads:
        peak = _in_flight(bodies[hot], sm, passes=2)
    else:
        peak = _in_flight(code, sm, passes=1)
    widest = max(peak, key=_load_bytes, default=None)
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
