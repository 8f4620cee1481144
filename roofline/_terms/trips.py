"""Load waits: a thread waits for its loads once per trip of its hot loop.

A loop whose loads cannot all be issued ahead (the next trip's addresses or its stores
depend on this trip) makes its warps wait one round trip per group of loads in flight, trip
after trip: with few warps nothing hides those waits. The term is the launch's time when
every resident warp waits its trips in turn: ``waves x trips x rounds per trip x latency of
a trip``, the latency taken where the loads hit (L1, L2 or DRAM, by the kernel's bytes at
each level), a DRAM trip being the latency ladder's DRAM latency plus the block's bytes at
one SM's share of the bandwidth (`trip_latency`).
"""

from __future__ import annotations

from .._kernel import Kernel
from ._term import Setting, Term
from .sass import loads_from_instructions

__all__ = ["hot_loop_trips", "trip_latency", "trips_term"]


def hot_loop_trips(setting: Setting) -> float | None:
    """Trips of the hot loop per warp: from the kernel's warp instructions where it gives them
    (`loads_from_instructions`), else from its load bytes over the loop's loads; None without
    a hot loop with global loads or without either count."""
    kernel, launch = setting.kernel, setting.launch
    sass = launch.resources.sass if launch.resources is not None else None
    if sass is None or sass.hot_loop is None:
        return None
    hot = sass.loops[sass.hot_loop].instructions
    if not hot.global_loads:
        return None
    if kernel.instructions:
        counted = loads_from_instructions(sass, float(kernel.instructions) / float(kernel.branch_issue_factor or 1.0),
                                          launch)
        return None if counted is None else counted[1]
    if kernel.load_bytes is None:
        return None
    loads = float(kernel.load_bytes) / launch.threads / float(sass.global_load_bytes or 4)
    outside = sass.instructions.global_loads - hot.global_loads
    return max(0.0, loads - outside) / hot.global_loads


def trip_latency(kernel: Kernel, calibration, bytes_per_block_trip: float) -> float | None:
    """Seconds one round trip of a block's loads takes, where they hit.

    The share of the bytes L1 returns that came from L2 (``l2_bytes / l1_bytes``) and of
    those that came from DRAM (``dram_bytes / l2_bytes``) weight the measured latencies: an
    L1 hit (``l1_hit_latency_seconds``), an L2 hit (``l2_hit_latency_seconds``) and a DRAM
    trip: the dependent load that misses L2 (``trip_latency_seconds`` where the trip probe
    gave it, else the latency ladder's ``dram_latency_seconds``) plus the block's bytes of
    the trip at one SM's share of the bandwidth (``trip_bytes_per_second``, else the copy
    sweep's ``sm_bandwidth_bytes_per_second``). A level the kernel gives no bytes for counts
    as missed. None without a DRAM latency.
    """
    cal = calibration
    latency = cal.trip_latency_seconds if cal.trip_latency_seconds is not None else cal.dram_latency_seconds
    if latency is None:
        return None
    rate = cal.trip_bytes_per_second or cal.sm_bandwidth_bytes_per_second
    dram = latency + (bytes_per_block_trip / rate if rate else 0.0)
    l2 = min(dram, cal.l2_hit_latency_seconds or dram)
    l1 = min(l2, cal.l1_hit_latency_seconds or l2)

    def share(part: float | None, whole: float | None) -> float:
        return 1.0 if not part or not whole else min(1.0, float(part) / float(whole))

    from_l2 = share(kernel.l2_bytes, kernel.l1_bytes)
    from_dram = share(kernel.dram_bytes, kernel.l2_bytes)
    return l1 + from_l2 * ((l2 - l1) + from_dram * (dram - l2))


def trips_term(setting: Setting) -> Term:
    """The launch's waves of warps, each waiting its hot loop's trips one after the other.

    ``max(1, blocks / resident slots) x trips x max(1, loop loads / loads in flight) x`` the
    `trip_latency` of the block's bytes per round. 0 without a hot loop with global loads,
    without its trip count (`hot_loop_trips`) or without the trip latency.
    """
    launch, kernel = setting.launch, setting.kernel
    trips = hot_loop_trips(setting)
    sass = launch.resources.sass if launch.resources is not None else None
    empty = Term(name="trips", side="memory", seconds=0.0, limiter="memory_latency")
    if trips is None or sass is None:
        return empty
    loop = sass.loops[sass.hot_loop]
    in_flight = max(1, loop.global_loads_in_flight)
    # loads beyond those in flight wait for earlier ones to return: a part of a round each
    rounds = max(1.0, loop.instructions.global_loads / in_flight)
    round_bytes = min(in_flight, loop.instructions.global_loads) * float(sass.global_load_bytes or 4) \
        * launch.threads_per_block
    latency = trip_latency(kernel, setting.calibration, round_bytes)
    if latency is None:
        return empty
    waves = max(1.0, launch.blocks / setting.slots)
    seconds = waves * trips * rounds * latency
    return Term(name="trips", side="memory", seconds=seconds, limiter="memory_latency", inputs={
        "trips_per_warp": trips, "rounds_per_trip": rounds, "trip_latency_seconds": latency,
        "bytes_per_block_round": round_bytes, "waves": waves})
