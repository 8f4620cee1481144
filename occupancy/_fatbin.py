"""The fatbin container: the cubins and PTX that nvcc bundles for several architectures.

Layout (little-endian; NVIDIA's ``fatbinary_section.h`` gives the magic and the
outer header, the entry header is as ``cuobjdump`` reads it and as documented by
n-eiling/cuda-fatbin-decompression):

* header, 16 bytes: magic ``0xBA55ED50`` (u32), version (u16), header size (u16),
  size of the entries that follow (u64);
* each entry: kind (u16: 1 PTX, 2 ELF), version (u16), header size (u32), padded
  payload size (u64), compressed size (u32), 4 bytes, minor and major version
  (u16 each), SM architecture (u32, e.g. 90), name offset and length (u32 each),
  flags (u64), 8 bytes, uncompressed size (u64); the payload follows the header.
  Flag 0x2000 marks an LZ4 block, 0x8000 a zstd frame (nvcc ``--compress-mode``).

Several fatbins may follow each other (a host object's ``.nv_fatbin`` section holds
one per translation unit).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from ._errors import OccupancyError
from ._install import install_extra

__all__ = ["FATBIN_MAGIC", "FatbinEntry", "fatbin_entries", "lz4_block_decompress"]

FATBIN_MAGIC = 0xBA55ED50
KIND_PTX = 1
KIND_ELF = 2
FLAG_LZ4 = 0x2000
FLAG_ZSTD = 0x8000
_HEADER = struct.Struct("<IHHQ")
_ENTRY = struct.Struct("<HHIQIIHHIIIQQQ")


@dataclass(frozen=True)
class FatbinEntry:
    """One payload of a fatbin: ``kind`` is ``"ptx"`` or ``"cubin"``, ``sm`` e.g. 90."""

    kind: str
    sm: int
    data: bytes


def lz4_block_decompress(data: bytes, size: int) -> bytes:
    """Decode one LZ4 block (the LZ4 block format, no frame) of ``size`` bytes."""
    out = bytearray()
    i, n = 0, len(data)
    while i < n:
        token = data[i]
        i += 1
        length = token >> 4
        if length == 15:
            while True:
                byte = data[i]
                i += 1
                length += byte
                if byte != 255:
                    break
        out += data[i : i + length]
        i += length
        if i >= n or len(out) >= size:
            break
        offset = data[i] | data[i + 1] << 8
        i += 2
        match = token & 15
        if match == 15:
            while True:
                byte = data[i]
                i += 1
                match += byte
                if byte != 255:
                    break
        match += 4
        if offset == 0 or offset > len(out):
            raise OccupancyError(f"corrupt LZ4 block in fatbin: match offset {offset} at byte {i}")
        start = len(out) - offset
        if offset >= match:
            out += out[start : start + match]
        else:  # an overlapping match repeats the last `offset` bytes
            for k in range(match):
                out.append(out[start + k])
    if len(out) != size:
        raise OccupancyError(f"corrupt LZ4 block in fatbin: {len(out)} bytes decoded, {size} expected")
    return bytes(out)


def _zstd_decompress(data: bytes, size: int) -> bytes:
    try:
        from compression import zstd  # Python 3.14

        return zstd.decompress(data)
    except ImportError:
        pass
    try:
        import zstandard
    except ImportError:
        raise ImportError(
            "this fatbin entry is zstd-compressed (nvcc --compress-mode=default/size/balance); "
            f"reading it needs zstandard: pip install zstandard, or {install_extra('compile')}; or "
            "rebuild with --compress-mode=none"
        ) from None
    return zstandard.ZstdDecompressor().decompress(data, max_output_size=size)


def _payload(raw: bytes, flags: int, compressed: int, size: int, sm: int) -> bytes:
    if flags & FLAG_ZSTD:
        return _zstd_decompress(raw[:compressed], size)
    if flags & FLAG_LZ4:
        return lz4_block_decompress(raw[:compressed], size)
    return raw


def fatbin_entries(data: bytes) -> list[FatbinEntry]:
    """Every PTX and cubin entry of one or more concatenated fatbins.

    Raises
    ------
    OccupancyError
        When the data is not a fatbin or is cut short.
    """
    entries: list[FatbinEntry] = []
    pos = 0
    view = memoryview(data)
    while pos + _HEADER.size <= len(data):
        magic, _, header_size, size = _HEADER.unpack_from(data, pos)
        if magic != FATBIN_MAGIC:
            if entries and not any(view[pos:]):
                break  # zero padding after the last fatbin
            raise OccupancyError(f"no fatbin header (magic 0x{FATBIN_MAGIC:08X}) at byte {pos}")
        start, end = pos + header_size, pos + header_size + size
        if end > len(data):
            raise OccupancyError(f"fatbin at byte {pos} claims {size} bytes, only {len(data) - start} present")
        at = start
        while at + _ENTRY.size <= end:
            (kind, _, entry_header, padded, compressed, _, _, _, sm, _, _, flags, _,
             uncompressed) = _ENTRY.unpack_from(data, at)
            if entry_header < _ENTRY.size or at + entry_header + padded > end:
                raise OccupancyError(f"corrupt fatbin entry header at byte {at}")
            raw = bytes(view[at + entry_header : at + entry_header + padded])
            if kind in (KIND_PTX, KIND_ELF):
                payload = _payload(raw, flags, compressed, uncompressed, sm)
                if kind == KIND_PTX:
                    entries.append(FatbinEntry("ptx", sm, payload.rstrip(b"\0")))
                else:
                    entries.append(FatbinEntry("cubin", sm, payload))
            at += entry_header + padded
        pos = end
        pos += -pos % 8  # fatbins in a section are 8-byte aligned
    if not entries and pos == 0:
        raise OccupancyError("empty or truncated fatbin")
    return entries
