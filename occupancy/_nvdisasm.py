"""Running NVIDIA's nvdisasm on a cubin and splitting its listing into instructions.

nvdisasm comes as a wheel (``pip install nvidia-cuda-nvdisasm``, in gpuroof's ``compile`` extra),
with the CUDA toolkit (beside nvcc) and with Triton. CUDA 13's nvdisasm does not read
sm_50-sm_72 cubins ("use CUDA toolkit 13.0 or earlier"), so every nvdisasm found is tried
in turn until one reads the cubin.

The listing (``nvdisasm -c -ndf``) is read as text, the same on every architecture from
Maxwell to Blackwell::

    .section .text.copy,"ax",@progbits
    .L_x_3:
            /*0350*/                   IMAD.WIDE R8, R7, 0x4, R2 ;
            /*0370*/               @!P0 LDG.E.CONSTANT R9, desc[UR4][R8.64] ;
            /*0480*/              @!P0 BRA `(.L_x_3) ;
"""

from __future__ import annotations

import functools
import glob
import importlib.util
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from ._install import install_extra

__all__ = ["INSTALL_HINT", "Disassembly", "Instruction", "NvdisasmError", "disassemble", "nvdisasm_candidates",
           "parse_listing"]

INSTALL_HINT = f"pip install nvidia-cuda-nvdisasm, or {install_extra('compile')}"
# nvdisasm starts in about 0.3 s and reads a cubin of a few hundred kernels in seconds;
# a minute means it hangs.
TIMEOUT_SECONDS = 120


class NvdisasmError(RuntimeError):
    """No nvdisasm could read the cubin; the message says why (it ends up in ``sources``)."""


@dataclass(frozen=True)
class Instruction:
    """One SASS instruction of the listing."""

    offset: int
    """Bytes from the start of its function."""
    guard: str | None
    """The predicate guard (``@!P0``), None when unconditional."""
    opcode: str
    """The full opcode with its modifiers (``LDG.E.128.CONSTANT``)."""
    operands: tuple[str, ...]
    target: str | None
    """The label a branch names (```(.L_x_3)``), None for other instructions."""
    # read off the opcode once: a summary asks each instruction for them many times (every
    # walk, every loop)
    base: str = field(init=False, repr=False, compare=False)
    """The opcode without modifiers (``LDG``)."""
    modifiers: tuple[str, ...] = field(init=False, repr=False, compare=False)
    """The opcode's modifiers (``("E", "128", "CONSTANT")``)."""

    def __post_init__(self) -> None:
        base, modifiers = _opcode_parts(self.opcode)
        object.__setattr__(self, "base", base)
        object.__setattr__(self, "modifiers", modifiers)


@functools.lru_cache(maxsize=4096)
def _opcode_parts(opcode: str) -> tuple[str, tuple[str, ...]]:
    """An opcode's base and modifiers (``LDG.E.128``: ``LDG``, ``("E", "128")``)."""
    base, *modifiers = opcode.split(".")
    return base, tuple(modifiers)


@dataclass(frozen=True)
class Disassembly:
    """The instructions of every function of one cubin, and the tool that read them."""

    functions: dict[str, tuple[Instruction, ...]]
    labels: dict[str, dict[str, int]]
    """Function -> label -> offset of the instruction it marks."""
    tool: str
    """``nvdisasm 13.5.37``."""


def _nvidia_wheels() -> list[str]:
    """nvdisasm inside installed NVIDIA wheels (``nvidia/cu13/bin/nvdisasm``), newest first."""
    spec = importlib.util.find_spec("nvidia")
    found = []
    for root in (spec.submodule_search_locations or []) if spec else []:
        found += sorted(glob.glob(os.path.join(root, "*", "bin", "nvdisasm")), reverse=True)
    return found


def _triton() -> list[str]:
    """The nvdisasm Triton ships for its own use."""
    spec = importlib.util.find_spec("triton")
    if spec is None or not spec.origin:
        return []
    return [os.path.join(os.path.dirname(spec.origin), "backends", "nvidia", "bin", "nvdisasm")]


def nvdisasm_candidates() -> list[str]:
    """Every nvdisasm on this machine, in the order they are tried.

    The nvidia-cuda-nvdisasm wheel first (the version the ``compile`` extra pins), then
    PATH, ``$CUDA_HOME``/``$CUDA_PATH``, nvcc's folder, ``/usr/local/cuda*`` and Triton's.
    """
    roots = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH")]
    nvcc = shutil.which("nvcc")
    if nvcc:
        roots.append(str(Path(os.path.realpath(nvcc)).parent.parent))
    roots += sorted(glob.glob("/usr/local/cuda*"), reverse=True)
    paths = [*_nvidia_wheels(), shutil.which("nvdisasm") or "",
             *(os.path.join(r, "bin", "nvdisasm") for r in roots if r), *_triton()]
    out: list[str] = []
    for path in paths:
        if path and os.path.isfile(path) and os.access(path, os.X_OK):
            if os.path.realpath(path) not in (os.path.realpath(p) for p in out):
                out.append(path)
    return out


@functools.cache
def _version(path: str) -> str:
    """``nvdisasm 13.5.37``, or plain ``nvdisasm`` when it does not say."""
    try:
        done = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=TIMEOUT_SECONDS)
    except (OSError, subprocess.TimeoutExpired):
        return "nvdisasm"
    m = re.search(r"release [\d.]+, V([\d.]+)", done.stdout)
    return f"nvdisasm {m[1]}" if m else "nvdisasm"


_SECTION = re.compile(r"^\s*\.section\s+\.text\.([^,\s]+)")
# cuobjdump -sass names each function on a line of its own, and its branches an address
_FUNCTION = re.compile(r"^\s*Function\s*:\s*(\S+)")
_ADDRESS_TARGET = re.compile(r"^0x[0-9a-fA-F]+$")
_BRANCHES = ("BRA", "BRX", "BRXU", "JMP", "JMX", "JMXU")
_LABEL = re.compile(r"^\s*([.\w$]+):\s*$")
_LINE = re.compile(r"^\s*/\*([0-9a-fA-F]+)\*/\s*(.*?)\s*;")
_BODY = re.compile(r"(?:(@!?U?P(?:T|\d+))\s+)?([A-Z][A-Z0-9_]*(?:\.[A-Za-z0-9_]+)*)\s*(.*)$")
_TARGET = re.compile(r"`\(([^)]+)\)")


_BRACKETING = re.compile(r"[\[\]{}()]")


def _split_operands(text: str) -> tuple[str, ...]:
    """Operands split at commas outside brackets, braces and parentheses."""
    pieces = text.split(",")
    if _BRACKETING.search(text) is None:
        parts = [piece.strip() for piece in pieces[:-1]]
        current = pieces[-1:]
    else:
        parts, depth, current = [], 0, []
        for piece in pieces[:-1]:
            current.append(piece)
            # the comma after this piece splits where every bracket opened before it is closed
            depth += sum(map(piece.count, "[{(")) - sum(map(piece.count, "]})"))
            if depth == 0:
                parts.append(",".join(current).strip())
                current = []
        current.append(pieces[-1])
    last = ",".join(current).strip()
    if last:
        parts.append(last)
    return tuple(parts)


_Body = tuple[str | None, str, tuple[str, ...], str | None, bool]


def _body(text: str) -> _Body | None:
    """An instruction's text after its offset (``@!P0 BRA `(.L_x_3)``) as (guard, opcode,
    operands, the label it branches to, whether that label is an address); None for text
    that is not an instruction."""
    body = _BODY.match(text)
    if body is None:
        return None
    guard, opcode, rest = body[1], body[2], body[3]
    target = _TARGET.search(rest) if "`(" in rest else None
    operands = _split_operands(rest)
    if target is None and opcode.split(".", 1)[0] in _BRANCHES:
        # cuobjdump's `BRA 0x130`: the address is the label
        address = next((o for o in operands if _ADDRESS_TARGET.match(o)), None)
        return guard, opcode, operands, address, address is not None
    return guard, opcode, operands, target[1] if target else None, False


def parse_listing(text: str, tool: str = "nvdisasm") -> Disassembly:
    """The instructions of each ``.text.<function>`` section of an ``nvdisasm -c`` listing,
    or of each ``Function : <name>`` of a ``cuobjdump -sass`` listing (branch targets as
    addresses, ``BRA 0x130``, become labels at those offsets).

    Lines that are not instructions (directives, comments, labels) are skipped; labels
    are kept to resolve branch targets.
    """
    functions: dict[str, list[Instruction]] = {}
    labels: dict[str, dict[str, int]] = {}
    current: list[Instruction] | None = None
    waiting: list[str] = []
    name = ""
    # the same instruction text comes back at many offsets (``IMAD.MOV.U32 R1, RZ, RZ, R0``): read once
    bodies: dict[str, _Body | None] = {}
    for line in text.splitlines():
        # the words the two patterns start with, looked for before the patterns are run
        m = (_SECTION.match(line) or _FUNCTION.match(line)) if "section" in line or "Function" in line else None
        if m:
            name = m[1]
            current = functions.setdefault(name, [])
            labels.setdefault(name, {})
            waiting = []
            continue
        if current is None:
            continue
        m = _LINE.match(line)
        if m is None:
            label = _LABEL.match(line)
            if label:
                waiting.append(label[1])
            continue
        offset = int(m[1], 16)
        for label in waiting:
            labels[name][label] = offset
        waiting = []
        body_text = m[2]
        if body_text in bodies:
            body = bodies[body_text]
        else:
            body = bodies[body_text] = _body(body_text)
        if body is None:
            continue
        guard, opcode, operands, name_of_target, address = body
        if address:
            labels[name].setdefault(name_of_target, int(name_of_target, 16))
        current.append(Instruction(offset, guard, opcode, operands, name_of_target))
    return Disassembly({k: tuple(v) for k, v in functions.items()}, labels, tool)


def disassemble(cubin: bytes) -> Disassembly:
    """The listing of ``cubin`` from the first nvdisasm that reads it.

    Raises
    ------
    NvdisasmError
        When no nvdisasm is installed or none reads the cubin (the message says why).
    """
    candidates = nvdisasm_candidates()
    if not candidates:
        raise NvdisasmError(f"nvdisasm not found ({INSTALL_HINT})")
    failures = []
    with tempfile.TemporaryDirectory(prefix="gpuroof-sass-") as folder:
        path = os.path.join(folder, "kernel.cubin")
        with open(path, "wb") as f:
            f.write(cubin)
        for tool in candidates:
            try:
                # -ndf: no branch-stack dataflow, which only annotates the SSY/SYNC jumps of
                # Maxwell and Pascal; it costs a third of nvdisasm's time and changes no line
                # from Volta on
                done = subprocess.run([tool, "-c", "-ndf", path], capture_output=True, text=True,
                                      timeout=TIMEOUT_SECONDS)
            except (OSError, subprocess.TimeoutExpired) as exc:
                failures.append(f"{tool}: {exc}")
                continue
            if done.returncode == 0:
                return parse_listing(done.stdout, _version(tool))
            message = (done.stderr.strip() or done.stdout.strip() or f"exit status {done.returncode}").splitlines()
            failures.append(f"{_version(tool)} ({tool}): {message[0]}")
    raise NvdisasmError("no nvdisasm read the cubin: " + "; ".join(failures))
