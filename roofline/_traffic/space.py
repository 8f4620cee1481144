"""The launch being counted: its accesses (`Access`, `Coords`), the grid they run on and how an access is evaluated on rows of blocks and threads."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field, fields
from typing import Literal

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from .._gpu import translate_validation_error

__all__ = [
    "AXES",
    "Access",
    "BURST_BYTES",
    "CHUNK_ELEMENTS",
    "Coords",
    "EXPAND_ELEMENTS",
    "FOOTPRINT_ELEMENTS",
    "Key",
    "LINE_BYTES",
    "Pass",
    "Space",
    "describe",
    "dim_size",
    "dims_of",
    "evaluate_rows",
    "segment_key",
    "sorted_unique",
]


#: DRAM's read burst and the cache line, bytes (the footprint's coarser units).
BURST_BYTES = 64
LINE_BYTES = 128

AXES = ("x", "y", "z")
_ELEMENT_BYTES = (1, 2, 4, 8, 16)
# Sectors listed when accesses to one array move by different steps along a dimension.
EXPAND_ELEMENTS = 1 << 23
# Rows (blocks x threads) evaluated in one numpy call of the exhaustive count.
CHUNK_ELEMENTS = 1 << 22
# Loads of the middle block listed for its L1 footprint and two-iteration window (`block_footprint`,
# `block_stream`); beyond them L1 reuse is left uncounted (None). 16 Mi covers a 1024-thread block
# walking a 4096-long loop of four loads (0.3 to 11 s of CPU on the corpus, docs/prediction.md).
FOOTPRINT_ELEMENTS = 1 << 24
# A dimension's segmentation key: a grid axis, or ("loop", its length).
Key = str | tuple[str, int]
# One counting pass: "totals" (bytes and sectors by kind), "distinct" ((array, kind) -> pieces),
# "loop_warps" (access index -> warp executions with a lane active, for accesses in a loop) and, in
# the sector pass, "loaded_stores" (array -> its stored sectors the kernel also loads, where known).
Pass = dict[str, dict[Hashable, int]]


@dataclass(frozen=True)
class Coords:
    """Block, thread and loop indices handed to an `Access`'s functions.

    Each attribute is an integer numpy array; all broadcast to (rows, threads per block).
    Threads are numbered x first, then y, then z, and cut into warps of 32 in that order.

    Attributes
    ----------
    block_x, block_y, block_z : numpy.ndarray
        ``blockIdx``.
    thread_x, thread_y, thread_z : numpy.ndarray
        ``threadIdx``.
    loop : numpy.ndarray
        The iteration of the access's loop (0 for an access outside a loop).
    block_dim, grid_dim : tuple of int
        ``blockDim`` and ``gridDim`` as (x, y, z).
    """

    block_x: np.ndarray
    block_y: np.ndarray
    block_z: np.ndarray
    thread_x: np.ndarray
    thread_y: np.ndarray
    thread_z: np.ndarray
    loop: np.ndarray
    block_dim: tuple[int, int, int]
    grid_dim: tuple[int, int, int]

    def __getattr__(self, name: str) -> np.ndarray:
        # only reached for a name Coords lacks: a CUDA spelling (c.threadIdx) is the usual slip,
        # and numpy's bare "no attribute" leaves the user guessing what an index may read
        if name.startswith("__"):
            raise AttributeError(name)
        known = ", ".join((*(f.name for f in fields(self)), "x", "y", "z"))
        raise AttributeError(f"Coords has no attribute {name!r}; an index or guard reads {known} "
                             "(threadIdx.x is c.thread_x, blockIdx.x is c.block_x, blockDim is c.block_dim)")

    @functools.cached_property
    def x(self) -> np.ndarray:
        """``blockIdx.x * blockDim.x + threadIdx.x``."""
        return self.block_x * self.block_dim[0] + self.thread_x

    @functools.cached_property
    def y(self) -> np.ndarray:
        """``blockIdx.y * blockDim.y + threadIdx.y``."""
        return self.block_y * self.block_dim[1] + self.thread_y

    @functools.cached_property
    def z(self) -> np.ndarray:
        """``blockIdx.z * blockDim.z + threadIdx.z``."""
        return self.block_z * self.block_dim[2] + self.thread_z


class Access(BaseModel):
    """One global-memory instruction of a kernel: which element of which array each thread touches.

    Attributes
    ----------
    array : str
        The allocation accessed. Arrays are separate, 256-byte aligned allocations
        (``cudaMalloc``); accesses that name the same array share its DRAM sectors.
    index : callable
        ``index(c) -> array of int``: the element of `array` each thread accesses, from
        the `Coords` ``c``; the byte address is ``index * element_bytes``.
    guard : callable or None
        ``guard(c) -> array of bool``: the threads that execute the access (the ``if``
        around it); None: every thread.
    kind : {"load", "store"}
        A read or a write (a read-modify-write is one of each).
    element_bytes : int
        Bytes per thread: 1, 2, 4, 8 or 16 (``float4``); the index counts in these units.
    loop : int
        The access runs in a loop of this many iterations; ``c.loop`` is the iteration.
    phase : int
        The loop the access runs in, in program order: accesses of one phase share their
        loop's iterations; every iteration of a phase runs after all of a lower phase's (a
        row read in one loop, then read again in a second: phases 0 and 1).

    Examples
    --------
    >>> import roofline
    >>> n = 1000
    >>> load = roofline.memory.Access(array="x", index=lambda c: c.x, guard=lambda c: c.x < n)
    >>> load.kind, load.element_bytes
    ('load', 4)
    """

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)

    array: str = Field(min_length=1, description="The allocation accessed.")
    index: Callable[[Coords], npt.ArrayLike] = Field(description="Element index of each thread.")
    guard: Callable[[Coords], npt.ArrayLike] | None = Field(default=None, description="Threads that execute it.")
    kind: Literal["load", "store"] = Field(default="load", description="Read or write.")
    element_bytes: int = Field(default=4, description="Bytes per thread.")
    loop: int = Field(default=1, ge=1, description="Iterations of the loop around the access.")
    phase: int = Field(default=0, ge=0, description="The loop it runs in, in program order.")

    @field_validator("element_bytes")
    @classmethod
    def _width(cls, value: int) -> int:
        if value not in _ELEMENT_BYTES:
            raise ValueError(f"element_bytes={value} must be one of {', '.join(map(str, _ELEMENT_BYTES))}")
        return value

    def __init__(self, **data: object) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise translate_validation_error(exc, "Access") from None


# ----------------------------------------------------------------------------- evaluation


@dataclass
class Space:
    """The launch's index space: grid, block, threads in warp order."""

    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    thread_x: np.ndarray = field(init=False)
    thread_y: np.ndarray = field(init=False)
    thread_z: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        linear = np.arange(math.prod(self.block), dtype=np.int64)
        bx, by = self.block[0], self.block[1]
        self.thread_x = (linear % bx)[None, :]
        self.thread_y = (linear // bx % by)[None, :]
        self.thread_z = (linear // (bx * by))[None, :]

    @property
    def threads(self) -> int:
        return self.thread_x.shape[1]


def dims_of(access: Access) -> tuple[str, ...]:
    return (*AXES, "loop") if access.loop > 1 else AXES


def segment_key(access: Access, dim: str) -> Key:
    """The segmentation a dimension of an access shares: grid axes with every access,
    a loop with the accesses of the same loop length."""
    return ("loop", access.loop) if dim == "loop" else dim


def dim_size(space: Space, access: Access, dim: str) -> int:
    return access.loop if dim == "loop" else space.grid[AXES.index(dim)]


def evaluate_rows(space: Space, access: Access, rows: dict[str, np.ndarray], where: str) -> tuple[np.ndarray, np.ndarray]:
    """Byte addresses and guards of `access` at ``rows`` (dim -> index per row): (rows, threads)."""
    n = len(next(iter(rows.values())))
    column = {d: np.asarray(rows.get(d, np.zeros(n, dtype=np.int64)), dtype=np.int64)[:, None] for d in (*AXES, "loop")}
    c = Coords(column["x"], column["y"], column["z"], space.thread_x, space.thread_y, space.thread_z,
               column["loop"], space.block, space.grid)
    shape = (n, space.threads)
    index = np.asarray(access.index(c))
    if index.dtype.kind not in "iu":
        raise TypeError(
            f"{where}: index must return integers, not {index.dtype} (use // for integer division)"
        )
    address = np.broadcast_to(index.astype(np.int64) * access.element_bytes, shape)
    if access.guard is None:
        mask = np.ones(shape, dtype=bool)
    else:
        mask = np.asarray(access.guard(c))
        if mask.dtype != bool:
            raise TypeError(f"{where}: guard must return booleans, not {mask.dtype}")
        mask = np.broadcast_to(mask, shape)
    return address, mask


def describe(i: int, access: Access) -> str:
    return f"accesses[{i}] ({access.kind} of {access.array!r})"


def sorted_unique(values: np.ndarray) -> np.ndarray:
    """The distinct values of a 1-D integer array, ascending: `np.unique` by a sort.

    numpy 2.4's `np.unique` of millions of int64 keys took 4 s where the sort took 0.25 s
    (a block's L1 footprint and window list up to `FOOTPRINT_ELEMENTS` of them)."""
    ordered = np.sort(np.asarray(values).ravel())
    if ordered.size < 2:
        return ordered
    keep = np.empty(ordered.size, dtype=bool)
    keep[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=keep[1:])
    return ordered[keep]
