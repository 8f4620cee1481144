"""Where the registers go: per source line of a kernel, the peak of live registers and the
local-memory traffic (spills), from a cubin built with ``-lineinfo``.

``ptxas -v`` says how many bytes a kernel spills, not which loop. nvdisasm says both, in two
listings of the same instructions: ``--print-life-ranges --life-range-mode count`` gives the
live general-purpose registers at each instruction, ``--print-line-info`` the source line
each instruction came from (``//## File "k.cu", line 12``). Joined by instruction offset,
they give each line's peak of live registers and its ``STL``/``LDL`` (local stores and
loads: spills, and per-thread arrays the compiler could not keep in registers).
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict, Field

from ._errors import OccupancyError
from ._nvdisasm import INSTALL_HINT, TIMEOUT_SECONDS, nvdisasm_candidates

__all__ = ["KernelLines", "SourceLine", "line_listing"]


class SourceLine(BaseModel):
    """One source line of one kernel: what its SASS instructions hold and move."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    file: str = Field(description="The source file, as the line table names it.")
    line: int = Field(ge=0, description="1-based line number (0: no line information).")
    instructions: int = Field(ge=0, description="SASS instructions from this line.")
    peak_live_registers: int = Field(ge=0, description="Most general-purpose registers live at one of them.")
    local_stores: int = Field(ge=0, description="STL instructions (spill stores, local arrays).")
    local_loads: int = Field(ge=0, description="LDL instructions (spill loads, local arrays).")
    local_store_bytes: int = Field(ge=0, description="Bytes per thread the STL instructions store.")
    local_load_bytes: int = Field(ge=0, description="Bytes per thread the LDL instructions load.")


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


_SECTION = re.compile(r"^//-+ \.text\.(\S+)\s+-+")
_FILE = re.compile(r'^\s*//## File "([^"]*)", line (\d+)')
_INSTRUCTION = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s+(?:@!?U?P\w+\s+)?([A-Z][\w.]*)")
_LIVE = re.compile(r"//\s*\|\s*(\d*)\s*\|")


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


@dataclass
class _Function:
    live: dict[int, int] = field(default_factory=dict)
    where: dict[int, tuple[str, int]] = field(default_factory=dict)
    opcodes: dict[int, str] = field(default_factory=dict)


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
            f = out.setdefault(name, _Function())
            offset = int(m[1], 16)
            live = _LIVE.search(raw)
            f.live[offset] = int(live[1]) if live and live[1] else 0
            f.opcodes[offset] = m[2]
    location: tuple[str, int] = ("", 0)
    previous = None
    for name, raw in _sections(lines):
        if name != previous:
            location, previous = ("", 0), name
        if m := _FILE.match(raw):
            location = (m[1], int(m[2]))
        elif m := _INSTRUCTION.match(raw):
            out.setdefault(name, _Function()).where[int(m[1], 16)] = location
    return out


def line_listing(cubin: bytes, registers: dict[str, int], architecture: str,
                 demangled: dict[str, str | None] | None = None) -> dict[str, KernelLines]:
    """Per kernel of ``cubin`` (the keys of ``registers``, symbol -> registers per thread), its
    source lines with their peak live registers and local stores and loads.

    Raises
    ------
    OccupancyError
        When no nvdisasm can read the cubin, or the cubin has no line information (build it
        with ``-lineinfo``).
    """
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
                lines = _run(tool, ["-c", "--print-line-info"], path)
                break
            except (OSError, subprocess.TimeoutExpired, OccupancyError) as exc:
                errors.append(str(exc))
        else:
            raise OccupancyError("no nvdisasm could read the cubin: " + "; ".join(errors))
    if "//## File" not in lines:
        raise OccupancyError("the cubin has no line information: compile with -lineinfo")
    functions = _functions(lifes, lines)
    out: dict[str, KernelLines] = {}
    for kernel, count in registers.items():
        f = functions.get(kernel, _Function())
        per: dict[tuple[str, int], dict[str, int]] = {}
        for offset, opcode in f.opcodes.items():
            where = f.where.get(offset, ("", 0))
            row = per.setdefault(where, dict.fromkeys(
                ("instructions", "peak_live_registers", "local_stores", "local_loads", "local_store_bytes",
                 "local_load_bytes"), 0))
            row["instructions"] += 1
            row["peak_live_registers"] = max(row["peak_live_registers"], f.live.get(offset, 0))
            base = opcode.split(".")[0]
            if base == "STL":
                row["local_stores"] += 1
                row["local_store_bytes"] += _access_bytes(opcode)
            elif base == "LDL":
                row["local_loads"] += 1
                row["local_load_bytes"] += _access_bytes(opcode)
        rows = tuple(SourceLine(file=file, line=line, **row) for (file, line), row in sorted(per.items()))
        out[kernel] = KernelLines(kernel=kernel, demangled=(demangled or {}).get(kernel), architecture=architecture,
                                  registers_per_thread=count,
                                  peak_live_registers=max((r.peak_live_registers for r in rows), default=0),
                                  lines=rows, tool=os.path.basename(tool))
    return out
