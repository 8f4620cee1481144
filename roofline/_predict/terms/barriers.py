"""Barriers: the time a block waits at the levels of its tree (``__syncthreads()``)."""

from __future__ import annotations

from ._term import Setting
from ..derive.sass import barriers_from_instructions
from .trips import enclosing_passes

__all__ = ["barrier_seconds"]


def barrier_seconds(setting: Setting) -> tuple[float, tuple[str, ...]]:
    """Seconds one block spends at its barriers, and what that assumed.

    Each barrier the block passes (``kernel.barriers_per_block``: the levels of a tree; where
    the kernel does not say, its SASS's barriers with the trips of the loops that hold them,
    `barriers_from_instructions`, and those of a loop around the hot loop once per pass,
    `enclosing_passes`) costs the calibration's ``tree_level_seconds`` plus
    ``tree_level_warp_seconds`` per warp of the block (the whole block waits for its last
    warp). Without ``tree_level_seconds`` barriers cost nothing, and the note says so.
    """
    cal = setting.calibration
    kernel, sass = setting.kernel, setting.sass
    if kernel.barriers_per_block is not None or sass is None:
        barriers = float(kernel.barriers_per_block or 0)
    else:
        barriers = barriers_from_instructions(sass, setting.path_instructions, setting.launch)
        around = enclosing_passes(setting)
        if around is not None:
            # the loop around the hot loop passes its barriers once per pass (`enclosing_passes`)
            barriers += around["passes_per_warp"] * around["barriers_per_pass"]
    level_seconds = (cal.tree_level_seconds or 0.0) + (cal.tree_level_warp_seconds or 0.0) * \
        setting.occupancy.warps_per_block
    seconds = barriers * level_seconds if barriers and cal.tree_level_seconds else 0.0
    notes = ("barriers cost no time: the calibration has no tree_level_seconds",) \
        if barriers and not cal.tree_level_seconds else ()
    return seconds, notes
