"""Launch: the fixed cost of one launch, and the ramp of its first wave, added to the rest."""

from __future__ import annotations

from ._term import Setting, Term

__all__ = ["launch_term", "ramp_term"]


def launch_term(setting: Setting) -> Term:
    """The calibration's ``launch_overhead_seconds`` (what CUDA events around one launch see
    beyond the kernel's own work)."""
    seconds = setting.calibration.launch_overhead_seconds
    return Term(name="launch", side="overhead", seconds=seconds, limiter="launch",
                inputs={"launch_overhead_seconds": seconds})


def ramp_term(setting: Setting) -> Term:
    """The first wave's ramp: its blocks start on an SM one ``block_ramp_seconds`` after another.

    The launch cost is that of a one-block kernel; an SM that takes ``n`` blocks in the
    first wave (the blocks it can hold, or its share of a smaller grid) starts its last one
    ``(n - 1) x block_ramp_seconds`` later (an empty kernel of 8 blocks per SM takes 0.7 us
    longer than one of one block on an H200). Added to the rest, as the launch cost is: the
    kernel's work starts in full only once the SMs are filled. 0 without the figure.
    """
    interval = setting.calibration.block_ramp_seconds or 0.0
    first_wave = setting.first_wave_blocks
    return Term(name="ramp", side="overhead", seconds=max(0, first_wave - 1) * interval, limiter="launch",
                inputs={"first_wave_blocks_per_sm": float(first_wave), "block_ramp_seconds": interval})
