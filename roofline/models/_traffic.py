"""Exact per-warp traffic of a 2-D launch without visiting every block.

A warp's sector count depends on where its block sits only through (a) the boundary
guards, which differ for the first and last few blocks of each grid dimension, and (b) the
alignment of its addresses to 32 bytes. Addresses are ``4 x`` an integer affine function of
the thread coordinates (or of whole 4-byte words), so moving a block by 8 blocks in x or y
shifts every address by a multiple of 32 bytes and leaves its sectors' count unchanged.
Blocks are therefore grouped into classes: the `edge` blocks at each end of a dimension on
their own, the rest by block index modulo 8. One representative block per class is
evaluated with numpy and weighted by the class size. The result is exact.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .._warps import SECTOR_BYTES, WARP_SIZE, bank_wavefronts, distinct_per_row

__all__ = ["Access", "Coords", "GridTraffic", "SharedAccess", "grid_traffic", "shared_traffic"]

_PERIOD = 8


@dataclass(frozen=True)
class Coords:
    """Block and thread indices, broadcastable to (classes, threads_per_block)."""

    block_x: np.ndarray
    block_y: np.ndarray
    thread_x: np.ndarray
    thread_y: np.ndarray
    block_dim: tuple[int, int]
    grid_dim: tuple[int, int]

    @property
    def x(self) -> np.ndarray:
        """blockIdx.x * blockDim.x + threadIdx.x."""
        return self.block_x * self.block_dim[0] + self.thread_x

    @property
    def y(self) -> np.ndarray:
        """blockIdx.y * blockDim.y + threadIdx.y."""
        return self.block_y * self.block_dim[1] + self.thread_y


AddressFn = Callable[[Coords], tuple[np.ndarray, np.ndarray]]


@dataclass(frozen=True)
class Access:
    """One global-memory instruction: byte addresses and the lanes that execute it."""

    addresses: AddressFn
    operation: str  # "load" or "store"
    weight: int = 1  # how many times the instruction runs with this pattern
    access_bytes: int = 4


@dataclass(frozen=True)
class SharedAccess:
    """One shared-memory instruction of a full block (every lane active)."""

    addresses: Callable[[np.ndarray, np.ndarray], np.ndarray]  # (tx, ty) -> byte address
    weight: int = 1
    access_bytes: int = 4


@dataclass(frozen=True)
class GridTraffic:
    """Totals over the grid."""

    load_bytes: int
    store_bytes: int
    l2_bytes: int


def _classes(blocks: int, edge: int) -> tuple[np.ndarray, np.ndarray]:
    """Representative block indices of one grid dimension and how many blocks each stands for."""
    if blocks <= 2 * edge + _PERIOD:
        return np.arange(blocks), np.ones(blocks, dtype=np.int64)
    # The middle blocks edge .. blocks - edge - 1 by residue modulo 8, counted without
    # listing them: memory stays constant however large the grid.
    start, stop = edge, blocks - edge
    reps, counts = [], []
    for residue in range(_PERIOD):
        first = start + (residue - start) % _PERIOD
        if first < stop:
            reps.append(first)
            counts.append((stop - 1 - first) // _PERIOD + 1)
    index = np.concatenate([np.arange(edge), reps, np.arange(blocks - edge, blocks)])
    weight = np.concatenate([np.ones(edge), counts, np.ones(edge)]).astype(np.int64)
    return index, weight


def _threads(block: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """threadIdx.x and threadIdx.y of a block's threads in linear (x-first) order."""
    linear = np.arange(block[0] * block[1])
    return linear % block[0], linear // block[0]


def _warps(values: np.ndarray, fill: object) -> np.ndarray:
    """Reshape (classes, threads) into (classes * warps, 32), padding the last warp."""
    classes, threads = values.shape
    warps = -(-threads // WARP_SIZE)
    padded = np.full((classes, warps * WARP_SIZE), fill, dtype=values.dtype)
    padded[:, :threads] = values
    return padded.reshape(classes * warps, WARP_SIZE)


def grid_traffic(
    grid: tuple[int, int],
    block: tuple[int, int],
    accesses: list[Access],
    *,
    edge: int = 1,
) -> GridTraffic:
    """Requested bytes and per-warp 32-byte-sector traffic of every access over the grid.

    Parameters
    ----------
    grid, block : tuple of int
        gridDim and blockDim in (x, y).
    accesses : list of Access
        The kernel's global-memory instructions.
    edge : int
        Blocks at each end of each dimension whose guards differ from the interior.
    """
    ix, wx = _classes(grid[0], edge)
    iy, wy = _classes(grid[1], edge)
    block_x = np.repeat(ix, iy.size)[:, None]
    block_y = np.tile(iy, ix.size)[:, None]
    weight = np.repeat(wx, wy.size) * np.tile(wy, wx.size)
    tx, ty = _threads(block)
    coords = Coords(block_x, block_y, tx[None, :], ty[None, :], block, grid)
    warps_per_block = -(-(block[0] * block[1]) // WARP_SIZE)
    warp_weight = np.repeat(weight, warps_per_block)
    totals = {"load": 0, "store": 0, "l2": 0}
    for access in accesses:
        address, mask = access.addresses(coords)
        shape = (block_x.shape[0], tx.size)
        address = np.broadcast_to(address, shape).astype(np.int64)
        mask = np.broadcast_to(mask, shape)
        lanes = int((mask.sum(axis=1) * weight).sum())
        totals[access.operation] += lanes * access.access_bytes * access.weight
        sectors = distinct_per_row(_warps(address // SECTOR_BYTES, 0), _warps(mask, False))
        totals["l2"] += int((sectors * warp_weight).sum()) * SECTOR_BYTES * access.weight
    return GridTraffic(totals["load"], totals["store"], totals["l2"])


def shared_traffic(
    block: tuple[int, int], accesses: list[SharedAccess]
) -> tuple[int, int, int]:
    """Shared-memory bytes, wavefronts and worst conflict degree of one full block.

    Returns
    -------
    tuple of int
        ``(bytes, wavefronts, ways)`` for one block executing every access once per weight.
    """
    tx, ty = _threads(block)
    total_bytes = total_wavefronts = worst = 0
    for access in accesses:
        address = np.broadcast_to(access.addresses(tx, ty), tx.shape).astype(np.int64)
        wavefronts, ways = bank_wavefronts(
            _warps(address[None, :], 0),
            _warps(np.ones((1, tx.size), dtype=bool), False),
            access.access_bytes,
        )
        total_bytes += tx.size * access.access_bytes * access.weight
        total_wavefronts += int(wavefronts.sum()) * access.weight
        worst = max(worst, int(ways.max()))
    return total_bytes, total_wavefronts, worst
