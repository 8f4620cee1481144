"""Barriers: the time a block waits at the levels of its tree (``__syncthreads()``), and the
round trips its load phases wait one after the other."""

from __future__ import annotations

from dataclasses import dataclass

from ..derive import Barriers
from ..params import BarrierParams
from ..rules import on

__all__ = ["BarrierWait", "barrier_wait", "phase_round_trips", "phase_seconds"]


@dataclass(frozen=True)
class BarrierWait:
    """Seconds one block spends at its barriers, the round trips its load phases wait at
    least (0: no floor), and what that assumed."""

    seconds_per_block: float
    round_trips: float = 0.0
    notes: tuple[str, ...] = ()


def phase_round_trips(barriers: Barriers) -> float:
    """Round trips a block's loads wait at least: one per stretch between barriers in which it
    loads (`Barriers.load_phases`).

    A barrier lets no warp past before every warp of the block has reached it, and a warp
    reaches it once its loads of the stretch before have returned (their values go to shared
    memory ahead of it); so the next stretch's loads leave only after the slowest of this
    one's came back, and the stretches' round trips follow each other. 0 where the block
    passes no barrier or its load phases are not known.
    """
    if not barriers.phased or not barriers.load_phases or not on("load_phases"):
        return 0.0
    return barriers.load_phases


def barrier_wait(barriers: Barriers, params: BarrierParams) -> BarrierWait:
    """Each barrier the block passes (`Barriers.per_block`: the levels of a tree) costs the
    calibration's ``tree_level_seconds`` plus ``tree_level_warp_seconds`` per warp of the
    block (the whole block waits for its last warp). Without ``tree_level_seconds`` barriers
    cost nothing, and the note says so. The block's load phases wait `phase_round_trips`."""
    level_seconds = (params.tree_level_seconds or 0.0) + (params.tree_level_warp_seconds or 0.0) * \
        barriers.warps_per_block
    count = barriers.per_block
    seconds = count * level_seconds if count and params.tree_level_seconds and on("barrier_wait") else 0.0
    notes = ("barriers cost no time: the calibration has no tree_level_seconds",) \
        if count and not params.tree_level_seconds else ()
    return BarrierWait(seconds_per_block=seconds, round_trips=phase_round_trips(barriers), notes=notes)


def phase_seconds(wait: BarrierWait, latency_seconds: float, chain_seconds: float, *, alone: bool) -> tuple[float, float]:
    """Seconds the load phases' round trips (``wait.round_trips`` x `latency_seconds`) add
    beyond the loads' own waits (`chain_seconds`): ``(to the block's life, to each block's
    time alone in step)``.

    A block that shares its SM with others lives its round trips while the others' loads
    fill the DRAM's gaps (Little's law takes them in the block's life). A block alone on its
    SM (one resident at a time) runs its phases in step with the other SMs' blocks: its
    round trips are not hidden by another block of its SM, so its SM takes at least its
    life with them, while the DRAM, busy with the other phases' bytes (stores drain behind
    the barriers), keeps its own time (no Little's-law rate bent by gaps it does not see).
    """
    extra = max(0.0, wait.round_trips * latency_seconds - chain_seconds)
    return (0.0, extra) if alone else (extra, 0.0)
