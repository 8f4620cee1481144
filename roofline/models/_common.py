"""Argument checks shared by the kernel models."""

from __future__ import annotations

import numbers

from occupancy import MAX_GRID_DIMS

from .._errors import RooflineError
from .._warps import SHARED_WAVEFRONT_BYTES

__all__ = [
    "FLOAT_BYTES",
    "MAX_ELEMENTS",
    "SHARED_WAVEFRONT_BYTES",
    "blocks_for",
    "check_block_1d",
    "check_block_2d",
    "check_elements",
    "check_grid",
    "check_int",
]

FLOAT_BYTES = 4
MAX_THREADS_PER_BLOCK = 1024
# The kernels index their arrays with `int` (validate/kernels/suite.cu), so no array can
# hold more elements than an int counts; this also keeps every address within int64.
MAX_ELEMENTS = 2**31 - 1


def check_int(name: str, value: object, low: int = 1, high: int | None = None) -> int:
    """Return ``value`` as an int in [low, high] or raise TypeError / RooflineError."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    value = int(value)
    if value < low:
        raise RooflineError(f"{name}={value} must be >= {low}")
    if high is not None and value > high:
        why = " (the kernel indexes with int: 2**31 - 1)" if high == MAX_ELEMENTS else ""
        raise RooflineError(f"{name}={value} must be <= {high}{why}")
    return value


def check_elements(what: str, count: int) -> int:
    """Refuse an array of more than `MAX_ELEMENTS` elements; `what` names the parameters."""
    if count > MAX_ELEMENTS:
        raise RooflineError(
            f"{what} gives an array of {count} elements; the kernel indexes with int, so at most "
            f"{MAX_ELEMENTS} (2**31 - 1)"
        )
    return count


def check_grid(grid: tuple[int, ...], what: tuple[str, ...]) -> None:
    """Refuse a grid past CUDA's limits; `what` names the parameter behind each dimension."""
    for axis, (blocks, limit, name) in enumerate(zip(grid, MAX_GRID_DIMS, what)):
        if blocks > limit:
            raise RooflineError(
                f"{name} needs grid.{'xyz'[axis]}={blocks} blocks; CUDA allows at most {limit}"
            )


def check_block_1d(block: object) -> int:
    """A 1-D block size: 1 to 1024 threads."""
    return check_int("block", block, 1, MAX_THREADS_PER_BLOCK)


def check_block_2d(block: object) -> tuple[int, int]:
    """A 2-D block (x, y) of at most 1024 threads."""
    if not isinstance(block, (tuple, list)) or len(block) != 2:
        raise TypeError(f"block must be a pair (x, y) of ints, got {type(block).__name__}")
    bx = check_int("block[0]", block[0], 1, MAX_THREADS_PER_BLOCK)
    by = check_int("block[1]", block[1], 1, MAX_THREADS_PER_BLOCK)
    if bx * by > MAX_THREADS_PER_BLOCK:
        raise RooflineError(
            f"block={bx}x{by} has {bx * by} threads; the maximum is {MAX_THREADS_PER_BLOCK}"
        )
    return bx, by


def blocks_for(extent: int, per_block: int) -> int:
    """ceil(extent / per_block)."""
    return -(-extent // per_block)
