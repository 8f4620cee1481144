"""Load waits: how long a round of the hot loop's loads waits, and a thread's waits in all.

A round waits for its slowest load (`trip_latency`: the level one of its loads reaches, from
the loads' L1 and L2 misses). `loop_waits` is one thread's waits over the hot loop's rounds
(`roofline._predict.derive.HotLoop`); the ``trips`` term is the launch's waves of them, and
the DRAM term's block life takes them in place of a round trip per group of the loop's loads.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..derive import HotLoop
from ..params import WaitParams
from ..rules import on

__all__ = ["LoopWaits", "loop_waits", "trip_latency"]


def trip_latency(params: WaitParams, misses: tuple[float, float], bytes_per_block_trip: float,
                 loads_per_round: int = 1, duplicates: float = 1.0, sharing_blocks: float = 1.0,
                 sms_in_use: float = 1.0) -> float | None:
    """Seconds one round of a thread's loads takes: as long as its slowest load.

    A round of ``loads_per_round`` loads in flight waits for the deepest level any of them
    reaches. The share of global load sectors that miss L1 and of those that miss L2
    (``misses``, as `load_misses` gives them) are taken as gathered on one load of the round:
    the round reaches L2 with probability ``min(1, loads x L1 misses)`` and DRAM with
    ``min(that, loads x L1 misses x L2 misses)``. The levels' latencies are measured: an L1 hit
    (``l1_hit_latency_seconds``), an L2 hit (``l2_hit_latency_seconds``) and a DRAM trip,
    the dependent load that misses L2 (``trip_latency_seconds`` where the trip probe gave
    it, else the latency ladder's ``dram_latency_seconds``) plus the block's bytes of the
    round that miss L1 at one SM's share of the bandwidth: the copy sweep's
    ``sm_bandwidth_bytes_per_second`` is an SM's share when every SM streams, so an SM gets
    that over ``sms_in_use`` (the share of the SMs the grid occupies), up to what its own
    port moves alone (``trip_bytes_per_second``, the trip probe's one block; without it, the
    full GPU's share). A level without a latency counts as missed. Warps that load the same
    line in the same round (``duplicates`` warps of a block per distinct line, `shared_lines`)
    wait together: one misses and the others hit a line still on its way, waiting as long,
    so the L1 misses a round sees are the share missed times ``duplicates`` (at most all);
    blocks resident together that load the same line in the same round (``sharing_blocks``)
    do the same at L2. None without a DRAM latency.
    """
    p = params
    latency = p.trip_latency_seconds if p.trip_latency_seconds is not None else p.dram_latency_seconds
    if latency is None:
        return None
    l1_miss, l2_miss = misses
    share, port = p.sm_bandwidth_bytes_per_second, p.trip_bytes_per_second
    # fewer SMs share the GPU's bandwidth, each at most at its own port's rate
    rate = min(port, share / min(1.0, max(sms_in_use, 1e-9))) if share and port else share or port
    # only the bytes that miss L1 come through the SM's port from L2 or DRAM
    dram = latency + (bytes_per_block_trip * l1_miss / rate if rate and on("trip_port_bytes") else 0.0)
    l2 = min(dram, p.l2_hit_latency_seconds or dram)
    l1 = min(l2, p.l1_hit_latency_seconds or l2)
    l1_miss = min(1.0, l1_miss * max(1.0, duplicates))
    l2_miss = min(1.0, l2_miss * max(1.0, sharing_blocks))
    loads = max(1, int(loads_per_round))
    to_l2 = min(1.0, loads * l1_miss)
    to_dram = min(to_l2, loads * l1_miss * l2_miss)
    return l1 + to_l2 * (l2 - l1) + to_dram * (dram - l2)


@dataclass(frozen=True)
class LoopWaits:
    """One thread's waits over its hot loop: the latency of a round, of a burst around the loop,
    and the seconds they take in all (``trips x (rounds x latency + issue)`` + the bursts')."""

    hot_loop: HotLoop
    trip_latency_seconds: float
    leftover_round_latency_seconds: float | None
    seconds: float

    def inputs(self) -> dict[str, float]:
        """The named quantities of the waits, for the ``trips`` term's report."""
        loop = self.hot_loop
        named = {"trips_per_warp": loop.trips_per_warp, "rounds_per_trip": loop.rounds_per_trip,
                 "trip_latency_seconds": self.trip_latency_seconds, "warps_sharing_a_line": loop.warps_sharing_a_line,
                 "blocks_sharing_a_line": loop.blocks_sharing_a_line, "bytes_per_block_round": loop.bytes_per_block_round}
        if loop.issue_seconds_per_trip:
            named["issue_seconds_per_trip"] = loop.issue_seconds_per_trip
        if loop.leftover is not None and self.leftover_round_latency_seconds is not None:
            around = loop.leftover.around
            named.update(passes_per_warp=around.passes_per_warp, barriers_per_pass=around.barriers_per_pass,
                         leftover_loads_per_thread=around.leftover_loads_per_thread,
                         loads_per_leftover_round=around.loads_per_leftover_round,
                         leftover_rounds=around.leftover_rounds,
                         leftover_round_latency_seconds=self.leftover_round_latency_seconds)
        return named


def loop_waits(loop: HotLoop | None, params: WaitParams) -> LoopWaits | None:
    """The waits of the hot loop of one thread: its trips x (rounds per trip x the latency of a
    round (`trip_latency`) + the issue a trip adds, ``HotLoop.issue_seconds_per_trip``), and
    the remainder's bursts around the loop, one after the other, each at its own latency. None
    without a hot loop (`derive`'s `HotLoop`) or without a DRAM latency."""
    if loop is None:
        return None

    def latency_of(bytes_per_round: float, loads_per_round: int) -> float | None:
        return trip_latency(params, loop.misses, bytes_per_round, loads_per_round, loop.warps_sharing_a_line,
                            loop.blocks_sharing_a_line, loop.sms_in_use_share)

    latency = latency_of(loop.bytes_per_block_round, loop.loads_per_round)
    if latency is None:
        return None
    seconds = loop.trips_per_warp * loop.rounds_per_trip * latency + loop.trips_per_warp * loop.issue_seconds_per_trip
    burst_latency = None
    if loop.leftover is not None:
        around = loop.leftover.around
        burst_latency = latency_of(loop.leftover.bytes_per_block_round, int(around.loads_per_leftover_round))
        seconds = seconds + around.leftover_rounds * burst_latency  # not None: `latency` was not
    return LoopWaits(hot_loop=loop, trip_latency_seconds=latency, leftover_round_latency_seconds=burst_latency,
                     seconds=seconds)
