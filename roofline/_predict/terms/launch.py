"""Launch: the fixed cost of one launch, the ramp of its first wave and the spread of its first
memory round over the SMs, added to the rest."""

from __future__ import annotations

from ..derive import Grid
from ..params import LaunchParams, RampParams, SpreadParams
from ._term import Term

__all__ = ["launch_term", "ramp_term", "spread_term"]


def launch_term(params: LaunchParams) -> Term:
    """The calibration's ``launch_overhead_seconds`` (what CUDA events around one launch see
    beyond the kernel's own work)."""
    seconds = params.launch_overhead_seconds
    return Term(name="launch", side="overhead", seconds=seconds, limiter="launch",
                inputs={"launch_overhead_seconds": seconds})


def ramp_term(grid: Grid, params: RampParams) -> Term:
    """The first wave's ramp: its blocks start on an SM one ``block_ramp_seconds`` after another.

    The launch cost is that of a one-block kernel; an SM that takes ``n`` blocks in the
    first wave (the blocks it can hold, or its share of a smaller grid) starts its last one
    ``(n - 1) x block_ramp_seconds`` later (an empty kernel of 8 blocks per SM takes 0.7 us
    longer than one of one block on an H200). Added to the rest, as the launch cost is: the
    kernel's work starts in full only once the SMs are filled. 0 without the figure.
    """
    interval = params.block_ramp_seconds or 0.0
    first_wave = grid.first_wave_blocks
    return Term(name="ramp", side="overhead", seconds=max(0, first_wave - 1) * interval, limiter="launch",
                inputs={"first_wave_blocks_per_sm": float(first_wave), "block_ramp_seconds": interval})


def spread_term(grid: Grid, params: SpreadParams) -> Term:
    """The first memory round of a launch on many SMs ends later than on one.

    The launch cost is that of an empty kernel, and the memory terms take a kernel's first
    round of loads as long as one block's. A kernel that touches memory on ``k`` SMs
    finishes its first round ``(k - 1) x first_round_seconds_per_sm`` later than on one, before
    any bandwidth matters: the launch probe's one float loaded and stored per thread after
    validate's L2 flush takes 0.4-0.5 us longer on every SM of an H200 than on one, beyond an
    empty kernel on the same grid, which takes no longer on many SMs than on one. The SMs
    in use are the grid's blocks, at most the GPU's SMs. Added to the rest, as the launch
    cost is. 0 without the figure or for a kernel that moves no bytes (`Grid.moves_bytes`).
    """
    per_sm = params.first_round_seconds_per_sm or 0.0
    sms = grid.sms_in_use if grid.moves_bytes else 1
    return Term(name="spread", side="overhead", seconds=max(0, sms - 1) * per_sm, limiter="launch",
                inputs={"sms_in_use": float(sms), "first_round_seconds_per_sm": per_sm})
