"""Where the registers go: per source line of a kernel, the peak of live registers, the spills
and the other local-memory traffic, from a cubin built with ``-lineinfo``.

``ptxas -v`` says how many bytes a kernel spills, not which loop. nvdisasm says both, in two
listings of the same instructions: ``--print-life-ranges --life-range-mode count`` gives the
live general-purpose registers at each instruction, ``--print-line-info-inline`` the source
line each instruction came from with the lines it is inlined at (``//## File "h.cuh", line 2
inlined at "k.cu", line 12``). Joined by instruction offset, they give each line's peak of
live registers and its ``STL``/``LDL`` (local stores and loads).

Local memory is not all spills: a per-thread array indexed at run time lives there too. nvdisasm
(13.x and later) marks the stores and loads ptxas added for spills (``(*"SpillRefill"*)``);
those are the spills, every other ``STL``/``LDL`` is the kernel's own local memory. Where the
listing marks none and ptxas reports spills, the two cannot be told apart
(`KernelLines.spills_told`).

A spill is counted on the line whose value it holds: a store on the line of the instruction
that wrote the register it saves, a reload on the line of the instruction that reads the
register it fills (the nearest in program order); ptxas places them where registers run out,
often on a loop's first line or the kernel's opening line. Code inlined from another file
(a header's function) counts on the kernel's own line that calls it, unless the rows of
every file are asked for (``headers``).
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict, Field

from ._errors import OccupancyError
from ._nvdisasm import INSTALL_HINT, TIMEOUT_SECONDS, Instruction, nvdisasm_candidates, parse_listing

__all__ = ["KernelLines", "SourceLine", "line_listing"]


class SourceLine(BaseModel):
    """One source line of one kernel: what its SASS instructions hold and move."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    file: str = Field(description="The source file, as the line table names it.")
    line: int = Field(ge=0, description="1-based line number; 0 with no file: no line information; 0 with a file: "
                                        "that file's lines together (another file's code the kernel's own lines "
                                        "do not inline).")
    instructions: int = Field(ge=0, description="SASS instructions from this line.")
    peak_live_registers: int = Field(ge=0, description="Most general-purpose registers live at one of them.")
    spill_stores: int = Field(default=0, ge=0, description="Spill stores (STL) of the values this line writes.")
    spill_loads: int = Field(default=0, ge=0, description="Spill reloads (LDL) of the values this line reads.")
    spill_store_bytes: int = Field(default=0, ge=0, description="Bytes per thread those stores write.")
    spill_load_bytes: int = Field(default=0, ge=0, description="Bytes per thread those reloads read.")
    local_stores: int = Field(ge=0, description="Other STL instructions of this line: per-thread arrays and stack "
                                                "data (every STL where spills are not told apart).")
    local_loads: int = Field(ge=0, description="Other LDL instructions of this line, likewise.")
    local_store_bytes: int = Field(ge=0, description="Bytes per thread those STL instructions store.")
    local_load_bytes: int = Field(ge=0, description="Bytes per thread those LDL instructions load.")


class KernelLines(BaseModel):
    """A kernel's source lines, in file and line order, with the register count the launch uses."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kernel: str
    demangled: str | None = None
    architecture: str
    registers_per_thread: int = Field(description="The count the launch (and occupancy) uses.")
    peak_live_registers: int = Field(description="The most registers live at one instruction.")
    lines: tuple[SourceLine, ...]
    tool: str = Field(description="The nvdisasm that read the listing.")
    spills_told: bool = Field(default=True, description="Whether spills are told apart from other local memory: "
                                                        "the listing marks them, or ptxas reports none. False: "
                                                        "every STL/LDL is counted as local.")


_SECTION = re.compile(r"^//-+ \.text\.(\S+)\s+-+")
_FILE = re.compile(r'^\s*//## File "')
_PLACE = re.compile(r'"([^"]*)", line (\d+)')
_INSTRUCTION = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s+(?:@!?U?P\w+\s+)?([A-Z][\w.]*)")
_LIVE = re.compile(r"//\s*\|\s*(\d*)\s*\|")
_SPILL_MARK = '(*"SpillRefill"*)'
_NO_DESTINATION = ("ST", "STG", "STS", "STL", "STSM", "RED", "REDG", "BAR", "BRA", "BRX", "JMP", "EXIT", "RET",
                   "CALL", "BSYNC", "BSSY", "WARPSYNC", "MEMBAR", "FENCE", "ERRBAR", "CCTL", "NOP")
_REGISTER = re.compile(r"(?<![A-Za-z0-9_])R(\d+)")
_COUNTS = ("instructions", "peak_live_registers", "spill_stores", "spill_loads", "spill_store_bytes",
           "spill_load_bytes", "local_stores", "local_loads", "local_store_bytes", "local_load_bytes")


def _access_bytes(opcode: str) -> int:
    """Bytes one STL/LDL moves per thread: 4, or its width modifier (.64, .128, .U8, .S16 ...)."""
    for part in opcode.split(".")[1:]:
        if part in ("64", "128"):
            return int(part) // 8
        if part in ("U8", "S8"):
            return 1
        if part in ("U16", "S16"):
            return 2
    return 4


def _run(tool: str, args: list[str], path: str) -> str:
    done = subprocess.run([tool, *args, path], capture_output=True, text=True, timeout=TIMEOUT_SECONDS)
    if done.returncode != 0:
        raise OccupancyError(f"{os.path.basename(tool)} could not read the cubin: {done.stderr.strip()[:200]}")
    return done.stdout


Place = tuple[tuple[str, int], ...]
"""Where an instruction came from: its line, then each line it is inlined at, outwards."""


@dataclass
class _Function:
    live: dict[int, int] = field(default_factory=dict)
    where: dict[int, Place] = field(default_factory=dict)
    spills: set[int] = field(default_factory=set)
    instructions: list[Instruction] = field(default_factory=list)


def _sections(text: str) -> Iterator[tuple[str, str]]:
    """(function, line) for each line of a listing inside a ``.text.<function>`` section."""
    current = None
    for raw in text.splitlines():
        if m := _SECTION.match(raw):
            current = m[1]
        elif current is not None:
            yield current, raw


def _functions(lifes: str, lines: str) -> dict[str, _Function]:
    out: dict[str, _Function] = {}
    for name, raw in _sections(lifes):
        if m := _INSTRUCTION.match(raw):
            live = _LIVE.search(raw)
            out.setdefault(name, _Function()).live[int(m[1], 16)] = int(live[1]) if live and live[1] else 0
    place: Place = ()
    previous = None
    for name, raw in _sections(lines):
        if name != previous:
            place, previous = (), name
        if _FILE.match(raw):
            found = tuple((f, int(n)) for f, n in _PLACE.findall(raw))
            # an inlined line is followed by the line it is inlined at, alone: the chain stands
            if not (len(place) > len(found) and place[-len(found):] == found):
                place = found
        elif m := _INSTRUCTION.match(raw):
            f = out.setdefault(name, _Function())
            f.where[int(m[1], 16)] = place
            if _SPILL_MARK in raw:
                f.spills.add(int(m[1], 16))
    for name, instrs in parse_listing(lines).functions.items():
        out.setdefault(name, _Function()).instructions = list(instrs)
    return out


def _registers(operand: str, opcode: str) -> set[int]:
    """The registers an STL's value or an LDL's destination spans (``.64``: two, ``.128``: four)."""
    width = max(1, _access_bytes(opcode) // 4)
    return {int(m[1]) + i for m in _REGISTER.finditer(operand) for i in range(width)}


def _named(instr: Instruction) -> set[int]:
    return {int(m[1]) for operand in instr.operands for m in _REGISTER.finditer(operand)}


def _value_site(instrs: Sequence[Instruction], i: int) -> int | None:
    """The instruction whose value the spill at ``instrs[i]`` holds: for a store, the nearest
    one before it that writes the register it saves; for a reload, the nearest one after it
    that reads the register it fills. None where that one is itself a local access (a value
    moved between slots) or there is none."""
    spill = instrs[i]
    base = spill.base
    if base == "STL" and len(spill.operands) >= 2:
        wanted = _registers(spill.operands[1], spill.opcode)
        for j in range(i - 1, -1, -1):
            other = instrs[j]
            if other.base not in _NO_DESTINATION and other.operands and \
                    {int(m[1]) for m in _REGISTER.finditer(other.operands[0])} & wanted and "[" not in other.operands[0]:
                return None if other.base == "LDL" else j
        return None
    if base == "LDL" and spill.operands:
        wanted = _registers(spill.operands[0], spill.opcode)
        for j in range(i + 1, len(instrs)):
            other = instrs[j]
            if _named(other) & wanted:
                reads = other.base in _NO_DESTINATION or any(
                    {int(m[1]) for m in _REGISTER.finditer(o)} & wanted for o in other.operands[1:])
                return j if reads and other.base != "STL" else None
        return None
    return None


def _home(f: _Function) -> str:
    """The kernel's own file: the outermost file of its first located instruction."""
    return next((place[-1][0] for place in f.where.values() if place), "")


def _located(place: Place, home: str, headers: bool) -> tuple[str, int]:
    """The row an instruction counts on: its innermost line in the kernel's own file (the line
    that calls inlined code); with ``headers``, or without such a line, its own line (another
    file's lines together, line 0, unless ``headers``)."""
    if not place:
        return "", 0
    if headers:
        return place[0]
    own = next((where for where in place if where[0] == home), None)
    return own if own is not None else (place[0][0], 0)


def _rows(f: _Function, headers: bool, told: bool) -> tuple[SourceLine, ...]:
    home = _home(f)
    rows: dict[tuple[str, int], dict[str, int]] = {}

    def row(offset: int) -> dict[str, int]:
        return rows.setdefault(_located(f.where.get(offset, ()), home, headers), dict.fromkeys(_COUNTS, 0))

    instrs = f.instructions
    for i, instr in enumerate(instrs):
        if instr.offset not in f.live:
            continue  # the padding after the function's end, which the life ranges leave out
        own = row(instr.offset)
        own["instructions"] += 1
        own["peak_live_registers"] = max(own["peak_live_registers"], f.live.get(instr.offset, 0))
        if instr.base not in ("STL", "LDL"):
            continue
        kind = "store" if instr.base == "STL" else "load"
        if told and instr.offset in f.spills:
            site = _value_site(instrs, i)
            target = row(instrs[site].offset) if site is not None else own
            target[f"spill_{kind}s"] += 1
            target[f"spill_{kind}_bytes"] += _access_bytes(instr.opcode)
        else:
            own[f"local_{kind}s"] += 1
            own[f"local_{kind}_bytes"] += _access_bytes(instr.opcode)
    return tuple(SourceLine(file=file, line=line, **counts) for (file, line), counts in sorted(rows.items()))


def _listings(cubin: bytes) -> tuple[str, str, str]:
    """(life ranges, line information, tool) of the first nvdisasm that reads ``cubin``."""
    candidates = nvdisasm_candidates()
    if not candidates:
        raise OccupancyError(f"--lines needs NVIDIA's nvdisasm: {INSTALL_HINT}")
    with tempfile.TemporaryDirectory(prefix="gpuroof-lines-") as tmp:
        path = os.path.join(tmp, "k.cubin")
        with open(path, "wb") as handle:
            handle.write(cubin)
        errors = []
        for tool in candidates:
            try:
                lifes = _run(tool, ["-c", "--print-life-ranges", "--life-range-mode", "count"], path)
                lines = _run(tool, ["-c", "--print-line-info-inline"], path)
                return lifes, lines, os.path.basename(tool)
            except (OSError, subprocess.TimeoutExpired, OccupancyError) as exc:
                errors.append(str(exc))
    raise OccupancyError("no nvdisasm could read the cubin: " + "; ".join(errors))


def line_listing(cubin: bytes, registers: dict[str, int], architecture: str,
                 demangled: dict[str, str | None] | None = None, *,
                 spill_bytes: dict[str, int] | None = None, headers: bool = False) -> dict[str, KernelLines]:
    """Per kernel of ``cubin`` (the keys of ``registers``, symbol -> registers per thread), its
    source lines with their peak live registers, spills and other local stores and loads.

    ``spill_bytes`` (symbol -> the spill store and load bytes ptxas reports, when known) tells
    a kernel that spills nothing where the listing marks no spill; ``headers`` gives rows for
    every file's lines rather than the kernel's own lines that inline them.

    Raises
    ------
    OccupancyError
        When no nvdisasm can read the cubin, or the cubin has no line information (build it
        with ``-lineinfo``).
    """
    lifes, lines, tool = _listings(cubin)
    if "//## File" not in lines:
        raise OccupancyError("the cubin has no line information: compile with -lineinfo")
    functions = _functions(lifes, lines)
    marked = _SPILL_MARK in lines
    out: dict[str, KernelLines] = {}
    for kernel, count in registers.items():
        f = functions.get(kernel, _Function())
        told = marked or (spill_bytes is not None and spill_bytes.get(kernel) == 0)
        rows = _rows(f, headers, told)
        out[kernel] = KernelLines(kernel=kernel, demangled=(demangled or {}).get(kernel), architecture=architecture,
                                  registers_per_thread=count,
                                  peak_live_registers=max((r.peak_live_registers for r in rows), default=0),
                                  lines=rows, tool=tool, spills_told=told)
    return out
