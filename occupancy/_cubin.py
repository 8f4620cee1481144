"""Reading kernel resources out of a cubin (a CUDA ELF image), with pyelftools.

A cubin keeps what the driver needs to launch each kernel in its ELF sections:

* ``.nv.info`` (module-wide) and ``.nv.info.<kernel>`` hold "EIATTR" records, a
  4-byte header (format, attribute, value or size) and, for the sized format, a
  payload. The record layout and attribute codes are those ``cuobjdump -elf`` prints
  by name (checked against it in tests/occupancy/test_resources_differential.py) and
  that CuAssembler documents (cloudcores/CuAssembler, CuAsm/CuNVInfo.py).
* ``.nv.shared.<kernel>`` is a NOBITS section as large as the kernel's static
  shared memory; ``.nv.local.<kernel>`` likewise for fixed local memory.
* ``.nv.constant3`` (module-wide) holds the user's ``__constant__`` data.
* The ``.text.<kernel>`` section header: before CUDA 13, ``sh_info >> 24`` is the
  register count and ``(sh_flags >> 20) & 0x1f`` the barrier count.
* Kernels are the FUNC symbols with ``STO_CUDA_ENTRY`` (0x10) in ``st_other``.
"""

from __future__ import annotations

import io
import struct
from dataclasses import dataclass
from typing import TYPE_CHECKING

from elftools.common.exceptions import ELFError
from elftools.elf.elffile import ELFFile

from ._arch import architecture
from ._errors import OccupancyError

if TYPE_CHECKING:
    from elftools.elf.sections import Section

__all__ = ["ELF_MAGIC", "EIATTR", "cubin_architecture", "cubin_kernels", "nv_info_records"]

ELF_MAGIC = b"\x7fELF"
EM_CUDA = 190
STO_CUDA_ENTRY = 0x10

# EIATTR attribute codes read here (the names are cuobjdump's).
EIATTR = {
    "EIATTR_MAX_THREADS": 0x05,
    "EIATTR_REQNTID": 0x10,
    "EIATTR_FRAME_SIZE": 0x11,
    "EIATTR_MIN_STACK_SIZE": 0x12,
    "EIATTR_MAXREG_COUNT": 0x1B,
    "EIATTR_MAX_STACK_SIZE": 0x23,
    "EIATTR_REGCOUNT": 0x2F,
    "EIATTR_CUDA_API_VERSION": 0x37,
    "EIATTR_CTA_PER_CLUSTER": 0x3D,
    "EIATTR_EXPLICIT_CLUSTER": 0x3E,
    "EIATTR_MAX_CLUSTER_RANK": 0x3F,
    "EIATTR_NUM_BARRIERS": 0x4C,
}
_CODE = {code: name for name, code in EIATTR.items()}
EIFMT_SVAL = 4  # 4-byte header, then a payload of the size in the header's last 2 bytes


def nv_info_records(data: bytes) -> list[tuple[int, int, int | bytes]]:
    """The (format, attribute, value) records of one ``.nv.info`` section.

    ``value`` is the payload (bytes) for sized records, else the 16-bit value of the header.
    """
    out: list[tuple[int, int, int | bytes]] = []
    i, n = 0, len(data)
    while i + 4 <= n:
        fmt, attr, value = struct.unpack_from("<BBH", data, i)
        i += 4
        if fmt == EIFMT_SVAL:
            out.append((fmt, attr, bytes(data[i : i + value])))
            i += value
        else:
            out.append((fmt, attr, value))
    return out


def _words(payload: bytes) -> tuple[int, ...]:
    return struct.unpack_from(f"<{len(payload) // 4}I", payload)


def _elf(data: bytes) -> ELFFile:
    try:
        elf = ELFFile(io.BytesIO(data))
    except ELFError as exc:
        raise OccupancyError(f"not a readable ELF image: {exc}") from None
    return elf


def cubin_architecture(elf: ELFFile) -> str:
    """``"sm_XY"`` from the ELF header's ``e_flags``.

    ELF ABI version 8 (CUDA 12.8 and later) keeps the SM version in bits 8-15 of
    ``e_flags``; earlier versions keep it in bits 0-7.
    """
    flags = elf.header["e_flags"]
    abi = elf.header["e_ident"]["EI_ABIVERSION"]
    sm = (flags >> 8) & 0xFF if abi >= 8 else flags & 0xFF
    return f"sm_{sm}"


def _symbols(elf: ELFFile) -> list[tuple[str, int, int, int]]:
    """(name, st_info, st_other, st_shndx) of every symbol, read straight from .symtab.

    pyelftools decodes ``st_other`` into visibility bits only, dropping CUDA's entry flag.
    """
    symtab = elf.get_section_by_name(".symtab")
    if symtab is None:
        return []
    strtab = elf.get_section(symtab["sh_link"])
    raw = symtab.data()
    names = strtab.data()
    size = symtab["sh_entsize"] or 24
    out = []
    for off in range(0, len(raw) - size + 1, size):
        st_name, st_info, st_other, st_shndx = struct.unpack_from("<IBBH", raw, off)
        end = names.find(b"\0", st_name)
        out.append((names[st_name:end].decode("utf-8", "replace"), st_info, st_other, st_shndx))
    return out


@dataclass(frozen=True)
class _Image:
    """What each kernel's entry reads from the cubin as a whole."""

    arch: str
    where: str
    """The ``origin`` that starts each entry of ``sources``."""
    sections: dict[str, Section]
    module: dict[int, dict[str, int]]
    """Symbol index -> {attribute name: value} of the module-wide ``.nv.info``."""
    reserved: int
    """Bytes of each ``.nv.shared.<kernel>`` that the driver reserves per block."""
    constant_memory: int


def _image(elf: ELFFile, symbols: list[tuple[str, int, int, int]], origin: str) -> _Image:
    arch = cubin_architecture(elf)
    sections: dict[str, Section] = {}
    for section in elf.iter_sections():
        sections[section.name] = section
    module: dict[int, dict[str, int]] = {}
    if ".nv.info" in sections:
        for _, attr, value in nv_info_records(sections[".nv.info"].data()):
            name = _CODE.get(attr)
            if name is not None and isinstance(value, bytes) and len(value) >= 8:
                symbol, number = struct.unpack_from("<II", value)
                module.setdefault(symbol, {})[name] = number
    reserved = 0
    if any(name.startswith(".nv.shared.reserved") for name in sections) or any(
        symbol[0].startswith(".nv.reservedSmem") for symbol in symbols
    ):
        # From CUDA 13 on sm_90 and later, each kernel's .nv.shared section starts with the
        # shared memory the driver reserves per block (cudaDevAttrReservedSharedMemoryPerBlock),
        # marked by a .nv.shared.reserved section (nvcc, NVRTC) or a .nv.reservedSmem symbol
        # (nvJitLink); cuFuncGetAttribute(SHARED_SIZE_BYTES) and ptxas -v count the kernel's own.
        reserved = architecture(arch).reserved_shared_memory_per_block
    constant = sections.get(".nv.constant3")
    constant_memory = int(constant["sh_size"]) if constant is not None else 0
    return _Image(arch, origin, sections, module, reserved, constant_memory)


def _memory(image: _Image, index: int, name: str, out: dict[str, object], sources: dict[str, str]) -> None:
    """A kernel's registers, static shared, local and constant memory into ``out`` and ``sources``."""
    where, sections, info = image.where, image.sections, image.module.get(index, {})
    text = sections.get(f".text.{name}")
    if "EIATTR_REGCOUNT" in info:
        out["registers_per_thread"] = info["EIATTR_REGCOUNT"]
        sources["registers_per_thread"] = f"{where} .nv.info EIATTR_REGCOUNT"
    elif text is not None:
        out["registers_per_thread"] = text["sh_info"] >> 24
        sources["registers_per_thread"] = f"{where} .text.{name} sh_info bits 24-31"
    else:
        raise OccupancyError(f"kernel {name!r} has no register count in the cubin")

    reserved = image.reserved
    shared = sections.get(f".nv.shared.{name}")
    size = int(shared["sh_size"]) if shared is not None else 0
    out["static_shared_memory"] = max(0, size - reserved) if size else 0
    sources["static_shared_memory"] = f"{where} .nv.shared.{name} section size" + (
        f" less the {reserved} B reserved per block" if reserved else ""
    )

    local = sections.get(f".nv.local.{name}")
    # A kernel that calls functions (not inlined: -G, recursion, large callees) needs their
    # frames too: ptxas's "cumulative stack size", EIATTR_MIN_STACK_SIZE, is what the driver
    # reserves per thread (cuFuncGetAttribute LOCAL_SIZE_BYTES), not the kernel's own frame.
    frame = info.get("EIATTR_FRAME_SIZE", 0)
    stack = info.get("EIATTR_MIN_STACK_SIZE", 0)
    out["local_memory"] = max(frame, stack) + (int(local["sh_size"]) if local is not None else 0)
    sources["local_memory"] = f"{where} .nv.info " + (
        "EIATTR_MIN_STACK_SIZE (the cumulative stack of its call graph)" if stack > frame else "EIATTR_FRAME_SIZE"
    ) + (f" + .nv.local.{name} section size" if local is not None else "")

    out["constant_memory"] = image.constant_memory
    sources["constant_memory"] = f"{where} .nv.constant3 section size"


def _launch(image: _Image, name: str, out: dict[str, object], sources: dict[str, str]) -> None:
    """A kernel's barriers, launch bounds and cluster shape into ``out`` and ``sources``."""
    where, sections = image.where, image.sections
    text = sections.get(f".text.{name}")
    attrs: dict[str, int | bytes] = {}
    per_kernel = sections.get(f".nv.info.{name}")
    if per_kernel is not None:
        for _, attr, value in nv_info_records(per_kernel.data()):
            if attr in _CODE:
                attrs[_CODE[attr]] = value
    if "EIATTR_NUM_BARRIERS" in attrs:
        out["block_barriers"] = int(attrs["EIATTR_NUM_BARRIERS"])  # type: ignore[arg-type]
        sources["block_barriers"] = f"{where} .nv.info.{name} EIATTR_NUM_BARRIERS"
    elif text is not None and (text["sh_flags"] >> 20) & 0x1F:
        out["block_barriers"] = (text["sh_flags"] >> 20) & 0x1F
        sources["block_barriers"] = f"{where} .text.{name} sh_flags bits 20-24"
    else:
        out["block_barriers"] = 0
        sources["block_barriers"] = f"{where}: no EIATTR_NUM_BARRIERS nor barrier bits (none used)"

    for attr, field in (("EIATTR_MAX_THREADS", "max_threads_per_block"),
                        ("EIATTR_REQNTID", "threads_per_block")):
        value = attrs.get(attr)
        if isinstance(value, bytes) and len(value) >= 12:
            x, y, z = _words(value)[:3]
            out[field] = x * y * z
            sources[field] = f"{where} .nv.info.{name} {attr}"
    if "threads_per_block" in out and "max_threads_per_block" not in out:
        out["max_threads_per_block"] = out["threads_per_block"]
        sources["max_threads_per_block"] = sources["threads_per_block"]
    value = attrs.get("EIATTR_CTA_PER_CLUSTER")
    if isinstance(value, bytes) and len(value) >= 12:
        out["cluster_dims"] = _words(value)[:3]
        sources["cluster_dims"] = f"{where} .nv.info.{name} EIATTR_CTA_PER_CLUSTER"


def cubin_kernels(data: bytes, origin: str = "cubin") -> tuple[str, list[dict[str, object]]]:
    """Every kernel's resources in one cubin.

    ``origin`` starts each entry of ``sources`` (e.g. ``"fatbin sm_90 cubin"``).

    Returns
    -------
    (architecture, kernels)
        ``kernels`` is a list of dicts of :class:`KernelResources` fields, one per
        kernel, in symbol-table order.

    Raises
    ------
    OccupancyError
        When ``data`` is not a CUDA ELF image.
    """
    elf = _elf(data)
    if elf.header["e_machine"] not in ("EM_CUDA", EM_CUDA):
        raise OccupancyError(
            f"ELF image for machine {elf.header['e_machine']}, not a cubin (EM_CUDA); "
            "host objects and libraries carry their kernels in a .nv_fatbin section"
        )
    symbols = _symbols(elf)
    image = _image(elf, symbols, origin)
    kernels = []
    for index, (name, st_info, st_other, _) in enumerate(symbols):
        if st_info & 0xF != 2 or not st_other & STO_CUDA_ENTRY:  # STT_FUNC entries only
            continue
        sources: dict[str, str] = {"kernel": f"{origin} .symtab (STO_CUDA_ENTRY)",
                                   "architecture": f"{origin} ELF header e_flags"}
        out: dict[str, object] = {"kernel": name, "architecture": image.arch}
        _memory(image, index, name, out, sources)
        _launch(image, name, out, sources)
        out["sources"] = sources
        kernels.append(out)
    return image.arch, kernels
