"""Trips: the launch's waves of warps, each waiting its hot loop's rounds one after the other."""

from __future__ import annotations

from ..derive import Grid
from .waits import LoopWaits
from ._term import Term

__all__ = ["trips_term"]


def trips_term(grid: Grid, waits: LoopWaits | None) -> Term:
    """``max(1, blocks / resident slots) x`` the `loop_waits` of a thread, whose trips are the
    mean warp's: a grid of one wave waits for its slowest warp, which makes
    ``Grid.slowest_warp_factor`` times as many where the trips follow the thread's index (a
    triangle). 0 without them.
    """
    if waits is None:
        return Term(name="trips", side="memory", seconds=0.0, limiter="memory_latency")
    waves = max(1.0, grid.blocks / grid.slots)
    slowest = grid.slowest_warp_factor
    return Term(name="trips", side="memory", seconds=waves * slowest * waits.seconds, limiter="memory_latency",
                inputs={**waits.inputs(), "waves": waves, "slowest_warp_factor": slowest},
                notes=waits.hot_loop.notes)
