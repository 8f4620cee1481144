"""What a ``kernel_resources`` input is (CUDA source, PTX, a cubin, a fatbin, a host ELF image
with device code), read off its name and first bytes, and whether SASS built for one
architecture runs on another."""

from __future__ import annotations

import io
import re
from pathlib import Path

from elftools.common.exceptions import ELFError
from elftools.elf.elffile import ELFFile

from ._arch import ArchitectureLike, architecture
from ._cubin import ELF_MAGIC
from ._errors import OccupancyError
from ._fatbin import FATBIN_MAGIC
from .common import SOURCE_SUFFIXES

__all__ = ["FATBIN_BYTES", "check_runs_on", "host_fatbin", "is_ptx", "is_source_file", "is_source_text", "sm_number"]

FATBIN_BYTES = FATBIN_MAGIC.to_bytes(4, "little")


def sm_number(arch: ArchitectureLike) -> int:
    a = architecture(arch)
    return a.major * 10 + a.minor


def check_runs_on(built: str, arch: ArchitectureLike | None, what: str) -> None:
    """SASS runs on its own major version at the same or a later minor."""
    if arch is None:
        return
    have, want = int(built.removeprefix("sm_").rstrip("af")), sm_number(arch)
    if have // 10 != want // 10 or have % 10 > want % 10:
        raise OccupancyError(
            f"{what} holds SASS for {built}, which does not run on arch={architecture(arch).name}"
        )


def host_fatbin(data: bytes, name: str) -> bytes:
    """The ``.nv_fatbin`` section of a host object, executable or shared library."""
    # pyelftools reads headers and sections lazily: a damaged image fails at any step.
    try:
        elf = ELFFile(io.BytesIO(data))
        section = elf.get_section_by_name(".nv_fatbin") or elf.get_section_by_name("__nv_relfatbin")
        if section is None:
            raise OccupancyError(
                f"{name}: ELF image for {elf.header['e_machine']} with no .nv_fatbin section: no device code"
            )
        return section.data()
    except ELFError as exc:
        raise OccupancyError(f"{name}: not a readable ELF image: {exc}") from None


def is_ptx(text: str) -> bool:
    return bool(re.search(r"^\s*\.version\s+\d", text, re.M) and re.search(r"^\s*\.target\s+\w", text, re.M))


def is_source_file(path: Path) -> bool:
    if path.suffix in SOURCE_SUFFIXES:
        return True
    if path.suffix in (".ptx", ".cubin", ".fatbin", ".o", ".so", ".a"):
        return False
    head = path.read_bytes()[:4096]
    return head[:4] not in (ELF_MAGIC, FATBIN_BYTES) and b"\0" not in head and not is_ptx(
        head.decode("utf-8", "replace"))


def is_source_text(obj: str) -> bool:
    """Whether a string is CUDA source or PTX rather than a path."""
    return "\n" in obj or len(obj) > 4096 or bool(re.search(r"__global__|\.entry\s|[{};]", obj))
