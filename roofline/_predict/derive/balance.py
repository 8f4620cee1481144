"""Work that differs between threads: a loop whose trips follow the thread's index.

PolyBench's correlation kernel gives column ``j1`` (a thread of the grid) the rows ``j2 = j1 + 1
.. m - 1``: thread 0 makes ``m - 1`` trips, the last thread none. The counts of a profile (or
of `roofline.memory.traffic`) are the launch's totals, so every term that divides them among the SMs
or the warps sees the mean thread. On a grid of one wave the launch lasts as long as its
busiest SM and its slowest warp: for such a triangle, about twice the mean. The SASS says
which loops do this (``SassLoop.index_trips``); the thread with the most trips is taken to
make about as many as the index has values (the triangle spans the grid), so a thread's
trips fall by one per index value from there, and a warp runs as many as its first lane.
"""

from __future__ import annotations

import functools

import numpy as np

from occupancy import SassLoop

from .setting import Setting
from ..rules import on

__all__ = ["TRIANGLE_TRIPS", "index_loop", "work_shares"]

#: Fewer trips than this between the thread with the most and the one with the fewest is a
#: stride loop's remainder (``for (i = threadIdx.x; i < n; i += 256)``), not a triangle.
TRIANGLE_TRIPS = 8


def index_loop(setting: Setting) -> SassLoop | None:
    """The loop whose trips follow the thread's index that the hot loop runs in: the hot loop
    itself or a loop around it (``SassLoop.index_trips``), where the trips it gives differ by
    at least `TRIANGLE_TRIPS` over the index's values in this launch; None otherwise, and for
    a grid of more than one wave (blocks that finish early make room for others)."""
    sass, launch = setting.sass, setting.launch
    if sass is None or sass.hot_loop is None or launch.blocks > setting.slots:
        return None
    hot = sass.loops[sass.hot_loop]
    around = [loop for loop in sass.loops if loop.start_offset <= hot.start_offset and hot.end_offset <= loop.end_offset]
    for loop in sorted(around, key=lambda loop: loop.depth):
        if loop.index_trips is None or loop.trips_per_index is None:
            continue
        if loop.trips_per_index * _values(loop.index_trips, tuple(launch.grid), tuple(launch.block)) >= TRIANGLE_TRIPS:
            return loop
    return None


def _values(index: str, grid: tuple[int, int, int], block: tuple[int, int, int]) -> int:
    """The values the index takes in a launch: ``gridDim.x x blockDim.x``, ``blockDim.x`` or ``gridDim.x``."""
    return {"global": grid[0] * block[0], "thread": block[0], "block": grid[0]}[index]


def work_shares(setting: Setting) -> tuple[float, float]:
    """How much more than the mean the busiest SM and the slowest warp work.

    Returns
    -------
    (float, float)
        ``max over SMs of its blocks' warp trips x SMs / all warps' trips`` (blocks go to
        the SMs in turn), `Grid.busiest_sm_factor`; and the slowest warp's trips over the
        mean warp's. ``(busiest SM's blocks x SMs / blocks, 1)`` without a loop that follows
        the index (`index_loop`): every block the same.
    """
    launch, sms = setting.launch, setting.gpu.sm_count
    loop = index_loop(setting) if on("triangle_work") else None
    if loop is None:
        return (setting.busiest_sm_blocks * sms / launch.blocks if on("busiest_sm") else 1.0), 1.0
    return _shares(loop.index_trips, tuple(launch.grid), tuple(launch.block), sms)


@functools.lru_cache(maxsize=256)
def _shares(index: str, grid: tuple[int, int, int], block: tuple[int, int, int], sms: int) -> tuple[float, float]:
    threads = block[0] * block[1] * block[2]
    blocks = grid[0] * grid[1] * grid[2]
    tx = np.arange(threads) % block[0]
    bx = np.arange(blocks) % grid[0]
    # trips of each thread of each block: one fewer per value of the index, the first the most
    if index == "global":
        trips = _values(index, grid, block) - (bx[:, None] * block[0] + tx[None, :])
    elif index == "thread":
        trips = np.broadcast_to(block[0] - tx, (blocks, threads))
    else:
        trips = np.broadcast_to(grid[0] - bx[:, None], (blocks, threads))
    warps = -(-threads // 32)
    padded = np.zeros((blocks, warps * 32))
    padded[:, :threads] = trips
    warp_trips = padded.reshape(blocks, warps, 32).max(axis=2)  # a warp runs as long as its busiest lane
    block_trips = warp_trips.sum(axis=1)
    on_sm = np.bincount(np.arange(blocks) % sms, weights=block_trips, minlength=sms)
    total = float(block_trips.sum())
    return float(on_sm.max()) * sms / total, float(warp_trips.max()) / float(warp_trips.mean())
