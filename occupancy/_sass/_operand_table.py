"""What each instruction of a listing names: the registers of each operand (widths included), what
it writes and reads, and the facts about it that the walks of a summary read, once per
instruction text.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from typing import NamedTuple

from .._nvdisasm import Instruction

__all__ = [
    "CLASSES", "EMPTY", "GLOBAL_ATOMICS", "GLOBAL_LOADS", "GLOBAL_STORES", "Named", "PREDICATE", "operand_table",
    "special_sources",
]


# Opcode (without modifiers) -> SassCounts field. FFMA2/FADD2/FMUL2 are Blackwell's paired
# FP32 instructions; LD/ST are generic-address accesses, in practice global memory.
CLASSES = {
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


GLOBAL_LOADS = ("LDG", "LD")


_MEMORY = ("LDG", "LD", "STG", "ST", "LDL", "STL", "LDS", "STS", "ATOM", "ATOMG", "ATOMS", "RED", "REDG")


_FP64 = ("DFMA", "DADD", "DMUL", "DSETP", "DMNMX", "DSET")


_CONVERSIONS = {"F2F": None, "I2F": "S32", "F2I": "F32", "I2I": "S32", "F2IP": "F32", "I2FP": "S32", "FRND": None}


_REGISTER = re.compile(r"(?<![A-Za-z0-9_])R(\d+)((?:\.[A-Za-z0-9_]+)*)")


_BRACKETS = re.compile(r"\[[^\]]*\]")


_TYPE = re.compile(r"[FSU](?:8|16|32|64)")


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


class Named(NamedTuple):
    """What one instruction's operands name and what the walks of a summary need of it, read
    once per instruction text (`_operands`): the walks read each instruction many times (every
    loop around it, twice per walk), the text once."""

    registers: tuple[frozenset[int], ...]
    """Per operand, the general registers, widths included (``R2.64``: R2 and R3)."""
    named: tuple[frozenset[object], ...]
    """Per operand, those and the uniform registers (``"U4"``)."""
    every: frozenset[int]
    """Every general register the instruction names."""
    load: frozenset[int] | None
    """For a global load that writes a register, the registers it writes; else None."""
    dest: frozenset[object]
    """The registers it writes (empty for none)."""
    read: frozenset[object]
    """The registers its source operands name (every operand's, where it writes none)."""
    values: tuple[str, ...]
    """Its source operands, predicates left out (none where it writes no register)."""
    value_registers: tuple[frozenset[object], ...]
    """The registers each of ``values`` names."""
    value_union: frozenset[object]
    """All of ``value_registers``."""
    value_keys: tuple[object, ...] | None
    """Per value, the one register it names (None for none), so that a walk looks each up
    without a set; None where a value names two or more."""
    address: frozenset[object]
    """For a global load, store or atomic, the registers its address names; else empty."""
    special: frozenset[str] | None
    """For ``S2R``/``S2UR`` that writes a register, the sources its special registers stand
    for (`special_sources`)."""
    varying: bool
    """It writes a result that differs between threads or over time whatever its sources hold."""
    arithmetic: str | None
    """The integer arithmetic it does (`opcode_arithmetic`)."""


EMPTY: frozenset = frozenset()


def operand_table(instrs: Sequence[Instruction], sm: int,
                  read: dict[tuple[str, tuple[str, ...]], Named] | None = None) -> dict[int, Named]:
    """Offset -> what each instruction's operands name (`Named`), read once per instruction text
    (``read``: the texts read so far, updated; the same text comes back many times in a listing,
    ``IMAD.MOV.U32 R1, RZ, RZ, R0``)."""
    # before sm_80 the listing prints a 64-bit address as [R2], with .E on the opcode
    old = sm < 80
    read = {} if read is None else read
    table = {}
    for instr in instrs:
        key = (instr.opcode, instr.operands)
        entry = read.get(key)
        if entry is None:
            entry = read[key] = _operands(instr.opcode, instr.operands, old)
        table[instr.offset] = entry
    return table


def _operands(opcode: str, operands: tuple[str, ...], before_sm80: bool) -> Named:
    base, *mods = opcode.split(".")
    implicit_wide_address = before_sm80 and "E" in mods
    widths = _operand_widths(opcode, len(operands))
    regs = tuple(_operand_registers(operand, width, implicit_wide_address)
                 for operand, width in zip(operands, widths))
    named = tuple(r | _uniform_registers(o) if "UR" in o else r for r, o in zip(regs, operands))
    load = regs[0] if base in GLOBAL_LOADS and regs and regs[0] else None
    address = EMPTY
    if base in GLOBAL_LOADS or base in GLOBAL_ATOMICS or base in GLOBAL_STORES:
        found: set[object] = set()
        for operand in operands:
            for bracket in _BRACKETS.findall(_DESCRIPTOR.sub("", operand)):
                found |= _bracket_registers(bracket, implicit_wide_address)
                found |= _uniform_registers(bracket)
        address = frozenset(found)
    first, dest = _written(base, operands, named)
    read = frozenset().union(*named[first + 1:])
    every = frozenset().union(*regs)
    if not dest:  # the walks read only the address of an instruction that writes no register
        return Named(regs, named, every, load, EMPTY, read, (), (), EMPTY, (), address, None, False, None)
    values = tuple(o for o in operands[first + 1:] if not _is_predicate(o))
    # an operand written twice names what its last place does (IMAD.WIDE's widths differ by place)
    by_operand = dict(zip(operands, named))
    value_registers = tuple(by_operand[o] for o in values)
    value_keys = None if any(len(r) > 1 for r in value_registers) else \
        tuple(next(iter(r), None) for r in value_registers)
    special = frozenset().union(*(special_sources(o) for o in operands[1:])) if base in ("S2R", "S2UR") else None
    return Named(regs, named, every, load, dest, read, values, value_registers,
                  frozenset().union(*value_registers), value_keys, address, special, base in _VARYING_RESULTS,
                  opcode_arithmetic(opcode))


def _bracket_registers(bracket: str, implicit_wide_address: bool) -> set[int]:
    """The registers an address names (``[R2.64+0x10]``: R2 and R3)."""
    regs: set[int] = set()
    for m in _REGISTER.finditer(bracket):
        first = int(m[1])
        regs.update(range(first, first + (2 if "64" in m[2].split(".") or implicit_wide_address else 1)))
    return regs


# Instructions whose first operand is not a register they write.
_NO_DESTINATION = ("STG", "ST", "STS", "STL", "STSM", "RED", "REDG", "BAR", "BRA", "BRX", "JMP", "EXIT", "RET",
                   "CALL", "BSYNC", "BSSY", "WARPSYNC", "MEMBAR", "FENCE", "ERRBAR", "CCTL", "NOP")


GLOBAL_ATOMICS = ("ATOMG", "RED", "REDG", "ATOM")


GLOBAL_STORES = ("STG", "ST")


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


def special_sources(operand: str) -> frozenset[str]:
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


PREDICATE = re.compile(r"^!?U?P(\d+|T)$")


@functools.lru_cache(maxsize=4096)
def opcode_arithmetic(opcode: str) -> str | None:
    """What integer arithmetic an instruction does, for the steps of `_step` and `_delta`:
    ``"move"``, ``"add"``, ``"multiply"`` (not ``.HI``), ``"lea"`` (not ``.HI``), ``"shift"``
    (left), else None. Uniform-datapath opcodes (``UIADD3``) count as their vector twins."""
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


def _written(base: str, operands: tuple[str, ...], named: Sequence[frozenset[object]]) -> tuple[int, frozenset[object]]:
    """The operand an instruction (``base``: its opcode without modifiers) writes (-1 for none)
    and the registers it names."""
    # ATOMG P, Rd, [a], b writes a predicate and Rd: Rd is the register written
    first = 1 if base in ("ATOMG", "ATOM") and operands and operands[0].startswith("P") else 0
    if base in _NO_DESTINATION or len(operands) <= first or "[" in operands[first]:
        return -1, frozenset()
    return first, named[first]


@functools.lru_cache(maxsize=1024)
def _is_predicate(operand: str) -> bool:
    return PREDICATE.match(operand) is not None
