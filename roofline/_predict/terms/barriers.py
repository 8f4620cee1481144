"""Barriers: the time a block waits at the levels of its tree (``__syncthreads()``)."""

from __future__ import annotations

from dataclasses import dataclass

from ..derive import Barriers
from ..params import BarrierParams
from ..rules import on

__all__ = ["BarrierWait", "barrier_wait"]


@dataclass(frozen=True)
class BarrierWait:
    """Seconds one block spends at its barriers, and what that assumed."""

    seconds_per_block: float
    notes: tuple[str, ...] = ()


def barrier_wait(barriers: Barriers, params: BarrierParams) -> BarrierWait:
    """Each barrier the block passes (`Barriers.per_block`: the levels of a tree) costs the
    calibration's ``tree_level_seconds`` plus ``tree_level_warp_seconds`` per warp of the
    block (the whole block waits for its last warp). Without ``tree_level_seconds`` barriers
    cost nothing, and the note says so."""
    level_seconds = (params.tree_level_seconds or 0.0) + (params.tree_level_warp_seconds or 0.0) * \
        barriers.warps_per_block
    count = barriers.per_block
    seconds = count * level_seconds if count and params.tree_level_seconds and on("barrier_wait") else 0.0
    notes = ("barriers cost no time: the calibration has no tree_level_seconds",) \
        if count and not params.tree_level_seconds else ()
    return BarrierWait(seconds_per_block=seconds, notes=notes)
