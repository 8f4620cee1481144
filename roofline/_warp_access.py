"""Global-memory transactions of one warp access and shared-memory bank conflicts.

Rules (Cheng, Grossman and McKercher, *Professional CUDA C Programming*, ch.4 "Memory
Access Patterns" and ch.5 "Shared Memory Banks"):

* cached loads (through L1) move whole 128-byte cache lines;
* uncached loads (L2 only) move 32-byte segments (the L2 sector size);
* stores move 32-byte segments, grouped per aligned 128-byte region into one transaction of
  1, 2 or 4 segments: one segment alone -> 32 bytes; segments within one aligned 64-byte
  half -> 64 bytes; segments in both halves -> 128 bytes;
* bus efficiency = distinct bytes the warp asks for / bytes moved.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

import numpy as np
from occupancy.common import sequence
from pydantic import BaseModel, ConfigDict, Field

from ._errors import RooflineError
from ._warps import (
    CACHE_LINE_BYTES,
    SECTOR_BYTES,
    WARP_SIZE,
    bank_wavefronts,
    distinct_per_row,
    lanes_per_phase,
)

__all__ = [
    "BankConflicts",
    "WarpTransactions",
    "bank_conflicts",
    "warp_addresses",
    "warp_transactions",
]

_ACCESS_BYTES = (1, 2, 4, 8, 16)
# Addresses are held as int64; a GPU's virtual addresses (49 bits on Hopper) are far below.
MAX_ADDRESS = 2**63 - 1


class WarpTransactions(BaseModel):
    """The memory transactions of one warp-wide load or store instruction.

    Examples
    --------
    >>> from roofline.memory import warp_addresses, warp_transactions
    >>> t = warp_transactions(warp_addresses(offset=11), cached=False)
    >>> t.transactions, t.moved_bytes, t.efficiency
    (5, 160, 0.8)
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    operation: Literal["load", "store"]
    cached: bool = Field(description="Loads through L1 (128-byte lines); False for stores.")
    access_bytes: int = Field(description="Bytes each lane accesses.")
    active_lanes: int = Field(description="Lanes that take part.")
    transactions: int = Field(description="Memory transactions issued.")
    transaction_bytes: tuple[int, ...] = Field(
        description="Size in bytes of each transaction, in address order."
    )
    requested_bytes: int = Field(description="active_lanes x access_bytes.")
    useful_bytes: int = Field(description="Distinct bytes the warp asks for (broadcasts once).")
    moved_bytes: int = Field(description="Bytes the transactions move.")
    efficiency: float = Field(
        description="useful_bytes / moved_bytes (bus utilisation); 1.0 when nothing moves."
    )
    sectors: int = Field(description="Distinct 32-byte sectors touched (traffic to L2 / 32).")


class BankConflicts(BaseModel):
    """Shared-memory service of one warp-wide access.

    Examples
    --------
    >>> from roofline.memory import bank_conflicts, warp_addresses
    >>> bank_conflicts(warp_addresses(stride=32)).ways  # a column of a 32x32 float tile
    32
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    access_bytes: int = Field(description="Bytes each lane accesses.")
    active_lanes: int = Field(description="Lanes that take part.")
    phases: int = Field(description="Phases the warp is split into (1, 2 or 4).")
    lanes_per_phase: int = Field(description="32 (<= 4-byte), 16 (8-byte) or 8 (16-byte).")
    wavefronts: int = Field(description="Passes through the banks, over all phases.")
    ways: int = Field(description="Worst conflict degree in any phase (1 = conflict free).")
    conflict_free: bool = Field(description="True when every phase needs one pass.")
    efficiency: float = Field(
        description="Phases with an active lane / wavefronts (1.0 = no replay)."
    )


def _check_access_bytes(access_bytes: object) -> int:
    if isinstance(access_bytes, bool) or not isinstance(access_bytes, (int, np.integer)):
        raise TypeError(f"access_bytes must be an int, got {type(access_bytes).__name__}")
    if int(access_bytes) not in _ACCESS_BYTES:
        raise RooflineError(f"access_bytes={access_bytes} must be one of {_ACCESS_BYTES}")
    return int(access_bytes)


def _lanes(
    byte_addresses: object, access_bytes: int, active: Sequence[bool] | np.ndarray | None
) -> tuple[np.ndarray, np.ndarray]:
    """Parse addresses (None or NaN = inactive lane) and an optional mask into arrays."""
    values = sequence("byte_addresses", byte_addresses,
                      "a sequence of up to 32 ints (None or NaN for an inactive lane)")
    if not 1 <= len(values) <= WARP_SIZE:
        raise RooflineError(
            f"byte_addresses has {len(values)} lanes; a warp has 1 to {WARP_SIZE}"
        )
    addresses = np.zeros(len(values), dtype=np.int64)
    valid = np.ones(len(values), dtype=bool)
    for lane, value in enumerate(values):
        if value is None or (isinstance(value, (float, np.floating)) and math.isnan(value)):
            valid[lane] = False
            continue
        if isinstance(value, (bool, np.bool_)) or not isinstance(
            value, (int, float, np.integer, np.floating)
        ):
            raise TypeError(
                f"byte_addresses[{lane}] must be an int, None or NaN, got {type(value).__name__}"
            )
        if not isinstance(value, (int, np.integer)) and (
            not math.isfinite(float(value)) or float(value) != int(value)
        ):
            raise RooflineError(f"byte_addresses[{lane}]={value} is not a whole byte address")
        address = int(value)
        if address < 0:
            raise RooflineError(f"byte_addresses[{lane}]={value!r} must be >= 0")
        if address > MAX_ADDRESS:
            raise RooflineError(
                f"byte_addresses[{lane}]={value!r} is past the 64-bit address range ({MAX_ADDRESS})"
            )
        if address % access_bytes:
            raise RooflineError(
                f"byte_addresses[{lane}]={address} is not a multiple of "
                f"access_bytes={access_bytes} (CUDA needs naturally aligned accesses)"
            )
        addresses[lane] = address
    if active is not None:
        mask = np.asarray(active)
        if mask.dtype != bool or mask.shape != (len(values),):
            raise TypeError(
                f"active must be {len(values)} booleans, one per lane, got {mask.dtype} "
                f"of shape {mask.shape}"
            )
        valid &= mask
    return addresses, valid


def warp_addresses(
    *,
    offset: int = 0,
    stride: int = 1,
    element_bytes: int = 4,
    field_offset_bytes: int = 0,
    base_bytes: int = 0,
    lanes: int = WARP_SIZE,
) -> np.ndarray:
    """Byte addresses of a strided, offset warp access: lane ``i`` reads element ``i*stride + offset``.

    Parameters
    ----------
    offset : int
        Elements skipped before lane 0 (``a[i + offset]``), >= 0.
    stride : int
        Elements between consecutive lanes (``a[i * stride]``), >= 0 (0: every lane the
        same address).
    element_bytes : int
        Size of one array element in bytes (e.g. 8 for ``struct {float x, y;}``).
    field_offset_bytes : int
        Byte offset of the accessed field inside the element (4 for ``.y`` of that struct).
    base_bytes : int
        Address of element 0 (cudaMalloc returns 256-byte aligned pointers).
    lanes : int
        Number of lanes, 1 to 32.

    Returns
    -------
    numpy.ndarray
        int64 byte addresses, one per lane.

    Examples
    --------
    >>> warp_addresses(stride=2, lanes=4).tolist()
    [0, 8, 16, 24]
    """
    for name, value, low in (
        ("offset", offset, 0),
        ("stride", stride, 0),
        ("element_bytes", element_bytes, 1),
        ("field_offset_bytes", field_offset_bytes, 0),
        ("base_bytes", base_bytes, 0),
        ("lanes", lanes, 1),
    ):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise TypeError(f"{name} must be an int, got {type(value).__name__}")
        if value < low:
            raise RooflineError(f"{name}={value} must be >= {low}")
    if lanes > WARP_SIZE:
        raise RooflineError(f"lanes={lanes} exceeds the warp size of {WARP_SIZE}")
    # In Python ints: numpy's int64 would wrap silently past 2**63 (at most 32 lanes).
    addresses = [int(base_bytes) + (i * int(stride) + int(offset)) * int(element_bytes) + int(field_offset_bytes)
                 for i in range(int(lanes))]
    if addresses[-1] > MAX_ADDRESS:
        raise RooflineError(
            f"offset={offset}, stride={stride}, element_bytes={element_bytes}, base_bytes={base_bytes} reach "
            f"byte address {addresses[-1]}, past the 64-bit address range ({MAX_ADDRESS})"
        )
    return np.array(addresses, dtype=np.int64)


def _store_transactions(segments: np.ndarray) -> list[int]:
    """Group touched 32-byte segments into 1-, 2- or 4-segment store transactions."""
    sizes: list[int] = []
    for region in np.unique(segments // 4):
        quarters = {int(s) % 4 for s in segments if s // 4 == region}
        if len(quarters) == 1:
            sizes.append(SECTOR_BYTES)
        elif quarters <= {0, 1} or quarters <= {2, 3}:
            sizes.append(2 * SECTOR_BYTES)
        else:
            sizes.append(4 * SECTOR_BYTES)
    return sizes


def warp_transactions(
    byte_addresses: Sequence[int | float | None] | np.ndarray,
    access_bytes: int = 4,
    operation: Literal["load", "store"] = "load",
    cached: bool = True,
    *,
    active: Sequence[bool] | np.ndarray | None = None,
) -> WarpTransactions:
    """Transactions, bytes moved and bus efficiency of one warp's global-memory access.

    Parameters
    ----------
    byte_addresses : sequence of int, None or NaN
        Byte address each lane accesses (1 to 32 lanes). ``None`` or ``NaN`` marks an
        inactive lane (one that a branch switched off).
    access_bytes : int
        Bytes per lane: 1, 2, 4, 8 or 16; addresses must be multiples of it.
    operation : {"load", "store"}
        Loads use `cached`; stores always go to L2 in 32-byte segments.
    cached : bool
        For loads: True = through L1 in 128-byte lines, False = L2 only in 32-byte segments.
    active : sequence of bool, optional
        Lane mask, ANDed with the lanes whose address is not None/NaN.

    Returns
    -------
    WarpTransactions

    Raises
    ------
    RooflineError
        Misaligned or negative addresses, more than 32 lanes, unknown operation.
    TypeError
        Addresses that are not numbers.

    Examples
    --------
    >>> from roofline.memory import warp_addresses, warp_transactions
    >>> warp_transactions(warp_addresses(offset=11), cached=True).efficiency
    0.5
    """
    access_bytes = _check_access_bytes(access_bytes)
    if not isinstance(operation, str):
        raise TypeError(f"operation must be 'load' or 'store', not {type(operation).__name__}")
    if operation not in ("load", "store"):
        raise RooflineError(f"operation={operation!r} must be 'load' or 'store'")
    if not isinstance(cached, (bool, np.bool_)):
        raise TypeError(f"cached must be a bool, got {type(cached).__name__}")
    addresses, valid = _lanes(byte_addresses, access_bytes, active)
    active_lanes = int(valid.sum())
    live = addresses[valid]
    useful = int(np.unique(live).size) * access_bytes
    sectors = int(distinct_per_row((live // SECTOR_BYTES)[None, :], np.ones((1, live.size), bool))[0])
    if operation == "store":
        sizes = _store_transactions(np.unique(live // SECTOR_BYTES))
        cached = False
    else:
        granule = CACHE_LINE_BYTES if cached else SECTOR_BYTES
        sizes = [granule] * int(np.unique(live // granule).size)
    moved = sum(sizes)
    return WarpTransactions(
        operation=operation,
        cached=bool(cached),
        access_bytes=access_bytes,
        active_lanes=active_lanes,
        transactions=len(sizes),
        transaction_bytes=tuple(sizes),
        requested_bytes=active_lanes * access_bytes,
        useful_bytes=useful,
        moved_bytes=moved,
        efficiency=useful / moved if moved else 1.0,
        sectors=sectors,
    )


def bank_conflicts(
    byte_addresses: Sequence[int | float | None] | np.ndarray,
    access_bytes: int = 4,
    *,
    active: Sequence[bool] | np.ndarray | None = None,
) -> BankConflicts:
    """Bank conflicts of one warp's shared-memory access.

    Rule: 32 banks, 4 bytes wide; 4-byte word ``w`` is in bank ``w % 32``. Lanes that read
    the same word are served together (broadcast), so only *distinct* words in one bank
    conflict. Accesses of 4 bytes or less are served for all 32 lanes at once, 8-byte
    accesses per half-warp (2 phases) and 16-byte accesses per quarter-warp (4 phases);
    an 8- or 16-byte access covers 2 or 4 consecutive words. Each phase needs as many
    wavefronts as its worst bank's distinct words (CUDA C Programming Guide, "Shared
    Memory" in Compute Capabilities; Cheng et al. ch.5).

    Parameters
    ----------
    byte_addresses : sequence of int, None or NaN
        Shared-memory byte address of each lane (None/NaN = inactive).
    access_bytes : int
        1, 2, 4, 8 or 16.
    active : sequence of bool, optional
        Lane mask.

    Returns
    -------
    BankConflicts

    Examples
    --------
    >>> from roofline.memory import bank_conflicts, warp_addresses
    >>> bank_conflicts(warp_addresses(stride=33)).conflict_free  # padded tile column
    True
    """
    access_bytes = _check_access_bytes(access_bytes)
    addresses, valid = _lanes(byte_addresses, access_bytes, active)
    wavefronts, ways = bank_wavefronts(addresses[None, :], valid[None, :], access_bytes)
    per_phase = lanes_per_phase(access_bytes)
    phases = -(-addresses.size // per_phase)
    busy_phases = sum(
        bool(valid[p * per_phase : (p + 1) * per_phase].any()) for p in range(phases)
    )
    total = int(wavefronts[0])
    return BankConflicts(
        access_bytes=access_bytes,
        active_lanes=int(valid.sum()),
        phases=phases,
        lanes_per_phase=per_phase,
        wavefronts=total,
        ways=int(ways[0]),
        conflict_free=int(ways[0]) <= 1,
        efficiency=busy_phases / total if total else 1.0,
    )
