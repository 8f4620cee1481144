"""Control divergence: a boundary check ``if (x < extent_x && y < ...)``, and any branch.

Threads of a block are numbered x first (``threadIdx.x + blockDim.x * (threadIdx.y +
blockDim.y * threadIdx.z)``) and cut into warps of 32 (PMPP 4th ed. §4.5, CUDA C
Programming Guide "SIMT Architecture"). A warp diverges when some of its threads pass the
check and others fail it; a warp whose threads all fail it skips the body without
divergence. The count is exact: blocks are grouped into at most eight classes (interior or
last in each dimension), each evaluated once.

Examples
--------
>>> from roofline.divergence import boundary_divergence
>>> boundary_divergence(1000, 256).divergent_warps  # 1000 = 31 * 32 + 8
1
"""

from __future__ import annotations

import math
import numbers

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from occupancy import MAX_BLOCK_DIMS, MAX_GRID_DIMS

from ._errors import RooflineError
from ._warps import WARP_SIZE

__all__ = ["BoundaryDivergence", "BranchDivergence", "boundary_divergence", "branch_divergence"]


class BoundaryDivergence(BaseModel):
    """Warps a boundary check splits, and what it costs."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    extent: tuple[int, int, int] = Field(description="Data extent (x, y, z) in elements.")
    block: tuple[int, int, int] = Field(description="blockDim (x, y, z).")
    grid: tuple[int, int, int] = Field(description="gridDim = ceil(extent / block).")
    total_warps: int = Field(description="Warps in the grid.")
    divergent_warps: int = Field(description="Warps with threads on both sides of the check.")
    inactive_warps: int = Field(description="Warps whose threads all fail the check.")
    fraction: float = Field(description="divergent_warps / total_warps.")
    active_threads: int = Field(description="Threads that pass the check (= extent volume).")
    issued_lanes: int = Field(
        description="32 x warps with at least one passing thread: lane slots the body occupies."
    )
    simd_efficiency: float = Field(description="active_threads / issued_lanes.")
    estimated_cost: float = Field(
        description=(
            "Fraction of the body's issued lane slots that do no work, "
            "1 - simd_efficiency: the time a guarded body loses to the check."
        )
    )


def _triple(name: str, value: object) -> tuple[int, int, int]:
    items = value if isinstance(value, (tuple, list)) else (value,)
    if not 1 <= len(items) <= 3:
        raise TypeError(f"{name} must be an int or 1 to 3 ints, got {len(items)} values")
    out = []
    for i, item in enumerate(items):
        if isinstance(item, bool) or not isinstance(item, numbers.Integral):
            raise TypeError(f"{name}[{i}] must be an int, got {type(item).__name__}")
        if item < 1:
            raise RooflineError(f"{name}[{i}]={item} must be >= 1")
        out.append(int(item))
    return (*out, *(1,) * (3 - len(out)))  # type: ignore[return-value]


def boundary_divergence(
    extent: int | tuple[int, ...], block: int | tuple[int, ...]
) -> BoundaryDivergence:
    """Exact count of warps that diverge at a launch's boundary check.

    Parameters
    ----------
    extent : int or tuple of int
        Elements in x (and y, z) the kernel covers; threads with any coordinate beyond it
        fail the check.
    block : int or tuple of int
        blockDim (x, y, z); the grid is ``ceil(extent / block)`` per dimension.

    Returns
    -------
    BoundaryDivergence

    Raises
    ------
    RooflineError
        A size < 1, a block of more than 1024 threads or past CUDA's per-dimension limits,
        or an extent that needs a grid past CUDA's limits (2**31 - 1 blocks in x, 65535 in
        y and z).

    Examples
    --------
    >>> from roofline.divergence import boundary_divergence
    >>> r = boundary_divergence((76, 62), (16, 16))  # PMPP's 76 x 62 picture
    >>> r.total_warps, r.divergent_warps, r.inactive_warps
    (160, 31, 5)
    """
    ext = _triple("extent", extent)
    blk = _triple("block", block)
    threads = math.prod(blk)
    if threads > 1024:
        raise RooflineError(f"block={blk} has {threads} threads; the maximum is 1024")
    for axis, (b, limit) in enumerate(zip(blk, MAX_BLOCK_DIMS)):
        if b > limit:
            raise RooflineError(f"block[{axis}]={b} exceeds CUDA's maximum of {limit} threads")
    grid = tuple(-(-e // b) for e, b in zip(ext, blk))
    for axis, (g, limit) in enumerate(zip(grid, MAX_GRID_DIMS)):
        if g > limit:
            raise RooflineError(
                f"extent[{axis}]={ext[axis]} needs grid.{'xyz'[axis]}={g} blocks of {blk[axis]}; "
                f"CUDA allows at most {limit}"
            )
    warps_per_block = -(-threads // WARP_SIZE)
    linear = np.arange(threads)
    tx = linear % blk[0]
    ty = (linear // blk[0]) % blk[1]
    tz = linear // (blk[0] * blk[1])
    divergent = inactive = issued = 0
    # Per dimension, blocks are interior (every coordinate inside) or the last one.
    for cx, cy, cz in np.ndindex(2, 2, 2):
        counts = []
        valid = np.ones(threads, dtype=bool)
        for dim, last, t in ((0, cx, tx), (1, cy, ty), (2, cz, tz)):
            if last:
                counts.append(1)
                valid &= t < ext[dim] - (grid[dim] - 1) * blk[dim]
            else:
                counts.append(grid[dim] - 1)
        weight = math.prod(counts)
        if weight == 0:
            continue
        padded = np.zeros(warps_per_block * WARP_SIZE, dtype=np.int8)  # 0 = no thread
        padded[:threads] = np.where(valid, 1, 2)
        lanes = padded.reshape(warps_per_block, WARP_SIZE)
        has_in = (lanes == 1).any(axis=1)
        has_out = (lanes == 2).any(axis=1)
        divergent += weight * int((has_in & has_out).sum())
        inactive += weight * int((has_out & ~has_in).sum())
        issued += weight * int(has_in.sum()) * WARP_SIZE
    total = math.prod(grid) * warps_per_block
    active = math.prod(ext)
    efficiency = active / issued
    return BoundaryDivergence(
        extent=ext,
        block=blk,
        grid=grid,  # type: ignore[arg-type]
        total_warps=total,
        divergent_warps=divergent,
        inactive_warps=inactive,
        fraction=divergent / total,
        active_threads=active,
        issued_lanes=issued,
        simd_efficiency=efficiency,
        estimated_cost=1.0 - efficiency,
    )


class BranchDivergence(BaseModel):
    """How the warps of a block split over a branch's sides, and what it costs in issue slots."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    threads: int = Field(description="Threads of the block.")
    warps: int = Field(description="Warps of the block.")
    sides: int = Field(description="Distinct sides the block's threads take.")
    divergent_warps: int = Field(description="Warps with threads on more than one side.")
    paths_issued: int = Field(description="Sum over warps of the sides each runs: the warp paths issued.")
    issue_factor: float = Field(
        description=(
            "paths_issued / warps: the branch's issue slots relative to warp-uniform code "
            "(Kernel.branch_issue_factor)."
        )
    )
    simd_efficiency: float = Field(
        description="threads / (32 x paths_issued) when the sides are equally long: lanes that do work."
    )


def branch_divergence(sides: object) -> BranchDivergence:
    """Count the warps a branch splits, from the side each thread of a block takes.

    A warp runs each side one of its threads takes, one after the other, with the other
    lanes masked (CUDA C Programming Guide, "SIMT Architecture"; PMPP 4th ed. §4.5): a
    warp whose 32 threads take one side issues it once, a warp split over two sides
    issues both. Threads are numbered x first and cut into warps of 32.

    Parameters
    ----------
    sides : array_like of int or bool
        The side (any integer label) each thread of one block takes, in thread order
        (``threadIdx.x + blockDim.x * (threadIdx.y + ...)``); 1 to 1024 threads.

    Returns
    -------
    BranchDivergence

    Raises
    ------
    RooflineError
        If `sides` is empty, longer than 1024 or not one-dimensional integers.

    Examples
    --------
    >>> import numpy as np
    >>> from roofline.divergence import branch_divergence
    >>> t = np.arange(256)
    >>> branch_divergence(t & 1).issue_factor          # lane parity: every warp runs both sides
    2.0
    >>> branch_divergence((t // 32) & 1).issue_factor  # warp parity: one side per warp
    1.0
    """
    try:
        values = np.asarray(sides)
    except (TypeError, ValueError) as exc:
        raise RooflineError(f"sides must be an array of integers, one per thread: {exc}") from None
    if values.ndim != 1 or not 1 <= values.size <= 1024:
        raise RooflineError(f"sides must be one side per thread of a block (1 to 1024 values), got shape {values.shape}")
    if values.dtype == bool:
        values = values.astype(np.int64)
    if not np.issubdtype(values.dtype, np.integer):
        raise RooflineError(f"sides must be integers or booleans, not {values.dtype}")
    threads = int(values.size)
    warps = -(-threads // WARP_SIZE)
    paths = divergent = 0
    for w in range(warps):
        taken = np.unique(values[w * WARP_SIZE:(w + 1) * WARP_SIZE]).size
        paths += taken
        divergent += taken > 1
    return BranchDivergence(
        threads=threads, warps=warps, sides=int(np.unique(values).size), divergent_warps=divergent,
        paths_issued=paths, issue_factor=paths / warps, simd_efficiency=threads / (WARP_SIZE * paths),
    )
