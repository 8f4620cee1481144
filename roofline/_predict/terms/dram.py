"""DRAM: the kernel's DRAM bytes (as the DRAM spends them) at the rate Little's law allows.

A block lives for its loads' round trips, its bytes through its SM's port, its barriers and
its L1 passes queued behind the other resident blocks' (`latency.queued_life`); a full wave
sustains ``resident blocks x bytes per block / block life`` (Little's law), and
`achieved_bandwidth` takes the soft minimum of that and the DRAM roof of the kernel's mix of
reads and writes (`mixed_dram_bandwidth`, as `dram_roof`), under the block-dispatch rate; the bytes are
`dram_equivalent_bytes`. Grids smaller than one wave or with a partial last wave run that
wave at its own, lower concurrency. The hot loop's waits (`waits.loop_waits`), the barriers'
(`barriers.barrier_wait`) and the L1 passes (`l1_shared.l1_seconds_per_block`) are other
terms' quantities, handed in by the composition.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from ..derive import Derived, DramTraffic
from ..params import DramGranularity, DramParams
from ..rules import on
from .barriers import BarrierWait, phase_seconds
from .dram_bytes import dram_sides, flush_writeback_bytes, mixed_dram_bandwidth, open_line_refetch_bytes, \
    written_back_bytes
from .latency import achieved_bandwidth, overlap, queued_life
from .waits import LoopWaits
from ._term import Limiter, Term

__all__ = ["TAIL_SHARE", "DramTime", "dram_term", "wave_seconds"]

#: The DRAM term names the tail (a partial last wave) its limiter when that wave adds more
#: than this share to the time every block would take at a full wave's bandwidth: the
#: docs' "a partial last wave costs more than a fifth"; below it, what limits the full
#: waves' rate is what a user should change.
TAIL_SHARE = 0.2


@dataclass(frozen=True)
class DramTime:
    """The DRAM term, with the two figures of it a prediction reports: the bytes the DRAM
    spends (``equivalent_bytes``) and the bytes outstanding across the GPU in a full wave."""

    term: Term
    equivalent_bytes: float
    bytes_in_flight: float


def wave_seconds(blocks: int, slots: int, bytes_per_block: float,
                 bandwidth_of_blocks: Callable[[int], float]) -> float:
    """Seconds `blocks` blocks of `bytes_per_block` take in waves of `slots` resident blocks,
    each wave at the bandwidth its own blocks reach (a partial last wave at its own, lower
    concurrency)."""
    full, rest = divmod(blocks, slots)
    seconds = 0.0
    if full:
        seconds += full * slots * bytes_per_block / bandwidth_of_blocks(slots)
    if rest:
        seconds += rest * bytes_per_block / bandwidth_of_blocks(rest)
    return seconds


def _outside_rounds(d: Derived, waits: LoopWaits) -> int:
    """Round trips a thread makes for the loads outside its hot loop: a group in flight each."""
    elements = d.loads.elements_per_thread
    outside = max(0.0, elements - waits.hot_loop.loads_per_thread)
    return math.ceil(outside / min(int(d.loads.in_flight_per_thread), elements))


def _chain_seconds(d: Derived, latency: float, waits: LoopWaits | None) -> float:
    """Seconds a block waits for its loads: a round trip per group in flight; where the hot loop
    has known trips (`waits`), its rounds take the latency of the level their loads reach
    instead, and the loads outside the loop keep a round trip per group in flight."""
    if waits is None or not on("dram_hot_loop_waits"):
        return d.loads.rounds * latency
    return _outside_rounds(d, waits) * latency + waits.seconds


def _rounds(d: Derived, waits: LoopWaits | None) -> float:
    """Round trips a thread makes, those of its hot loop's trips included where `_chain_seconds`
    counts them: what the bytes in flight are shared over."""
    if waits is None or not on("dram_hot_loop_waits"):
        return float(d.loads.rounds)
    loop = waits.hot_loop
    return max(1.0, _outside_rounds(d, waits) + loop.trips_per_warp * loop.rounds_per_trip)


def dram_term(d: Derived, params: DramParams, *, waits: LoopWaits | None, barriers: BarrierWait,
              l1_seconds_per_block: float, exposed_issue_seconds: float = 0.0) -> DramTime:
    """The DRAM time of the launch: its waves, each at the bandwidth its resident blocks reach.

    A block lives its loads' waits (`_chain_seconds`) + bytes per block / SM bandwidth + its
    barriers (`barriers`) + its L1 passes, queued behind the others' (`queued_life`): the
    queue's customers are the warps resident on the SM, each waiting for its own loads while
    the others use the pipe, or whole blocks where barriers keep a block's warps in one phase
    (`Barriers.phased`); the bandwidth of ``n`` resident blocks is `achieved_bandwidth` of
    Little's law's rate, the dispatch rate and the DRAM roof of the read/write mix. The
    limiter it names when it binds: ``tail`` when the partial last wave adds more than
    `TAIL_SHARE`, else the smallest of the three rates of a full wave (``dram_bandwidth``,
    ``block_scheduling``, ``memory_latency``; ``issue`` for the last where the block's life is
    mostly its SM's issue, below). The round trips of barrier-split load phases
    (`phase_seconds`) lengthen the life of a block that shares its SM; blocks alone on their
    SMs run their phases in step, and the busiest SM's blocks, each its life and those round
    trips, one after the other, floor the time (``memory_latency`` where they bind). Where each
    thread loads once, then computes (`Derived.phases_in_turn`), a warp holds no load in flight
    while it computes: the block's life is joined with the part of its SM's issue for one round
    of its resident blocks that waits with no load in flight (``exposed_issue_seconds``,
    `exposed_issue_seconds`) by `overlap` at ``phase_exponent`` (docs/prediction.md, "Load,
    then compute: the phases take turns").
    """
    grid = d.grid
    blocks, slots, rounds, sms = grid.blocks, grid.slots, d.loads.rounds, grid.sm_count
    granularity = params.granularity if on("dram_granularity") else DramGranularity(None, None, None, None, None)
    read_bytes, written_bytes, flushed = _sides_after_flush(d.dram, granularity, params)
    dram_bytes = read_bytes + (written_bytes or 0.0)
    bytes_per_block = dram_bytes / blocks
    peak_bw = mixed_dram_bandwidth(read_bytes, written_bytes,
                                   copy_bytes_per_second=params.memory_bandwidth * params.sustained_bandwidth_fraction,
                                   read_bytes_per_second=params.dram_read_bytes_per_second
                                   if on("read_write_roof") else None)
    latency, sm_bandwidth, l1_seconds = params.idle_latency_seconds, params.sm_bandwidth_bytes_per_second, \
        l1_seconds_per_block if on("dram_l1_passes") else 0.0
    tree_seconds = barriers.seconds_per_block
    # the block's bytes pass through its SM's port on top of the waits
    port_seconds = bytes_per_block / sm_bandwidth if on("sm_port") else 0.0
    chain_seconds = _chain_seconds(d, latency, waits)
    in_life, in_step = phase_seconds(barriers, latency, chain_seconds, alone=grid.first_wave_blocks == 1)
    block_seconds = chain_seconds + port_seconds + l1_seconds + tree_seconds + in_life
    memory_life = block_seconds
    joined = exposed_issue_seconds > 0 and params.phase_exponent is not None
    if joined:
        block_seconds = overlap(block_seconds, exposed_issue_seconds, params.phase_exponent)
    # the queue's customers: the resident warps where each waits for its own loads and takes
    # its turn at the pipe (its block's other warps included); whole blocks where barriers
    # hold the warps of a block to one phase
    warps = 1 if d.barriers.phased or not on("warp_customers") else grid.warps_per_block
    queued = on("l1_queue")

    def rates(resident_blocks: int) -> tuple[float, float]:
        life = queued_life(block_seconds - l1_seconds, l1_seconds / warps, resident_blocks * warps / sms) \
            if queued else block_seconds
        in_flight_rate = resident_blocks * bytes_per_block / life
        dispatch = (
            min(resident_blocks, sms) * bytes_per_block / params.block_dispatch_seconds
            if params.block_dispatch_seconds > 0 and on("block_dispatch") else math.inf
        )
        return in_flight_rate, dispatch

    def bandwidth_of_blocks(resident_blocks: int) -> float:
        in_flight_rate, dispatch = rates(resident_blocks)
        if not on("dram_knee"):
            return min(in_flight_rate, peak_bw, dispatch)
        return achieved_bandwidth(in_flight_rate * latency, peak_bytes_per_second=peak_bw, latency_seconds=latency,
                                  knee_sharpness=params.knee_sharpness, dispatch_bytes_per_second=dispatch)

    full_wave_seconds = dram_bytes / bandwidth_of_blocks(min(blocks, slots)) if dram_bytes else 0.0
    seconds = (wave_seconds(blocks, slots, bytes_per_block, bandwidth_of_blocks) if on("wave_tail")
               else full_wave_seconds) if dram_bytes else 0.0
    lockstep_seconds = math.ceil(blocks / sms) * (block_seconds + in_step) if in_step else 0.0
    in_flight_rate, dispatch = rates(min(blocks, slots))
    limiter: Limiter
    if lockstep_seconds > seconds:
        seconds, limiter = lockstep_seconds, "memory_latency"
    elif seconds > (1 + TAIL_SHARE) * full_wave_seconds and on("tail_limiter"):
        limiter = "tail"
    else:
        smallest = min(in_flight_rate, dispatch, peak_bw)
        limiter = ("dram_bandwidth" if smallest == peak_bw
                   else "block_scheduling" if smallest == dispatch else "memory_latency")
        if joined and limiter == "memory_latency" and exposed_issue_seconds > memory_life:
            limiter = "issue"  # the block's life is mostly its SM's issue: its loads wait on arithmetic
    # an unlimited dispatch rate (no dispatch interval measured) is left out: the inputs stay finite for JSON
    dispatch_input = {"dispatch_bytes_per_second": dispatch} if math.isfinite(dispatch) else {}
    in_flight = min(blocks, slots) * bytes_per_block / _rounds(d, waits)
    # the plain roof of this level (`roofline_bound`): the kernel's DRAM bytes at the datasheet's
    # bandwidth (or the term's roof, were it higher); the term spends at least these bytes
    # (`dram_equivalent_bytes`) at most at its roof. Written lines L2 keeps past the kernel's
    # end (`l2_keeps_writes`) move after it: the roof counts the bytes moved while it runs.
    roof_bytes = min(d.dram.bytes, dram_bytes)
    roof_seconds = roof_bytes / max(params.memory_bandwidth, peak_bw)
    notes = barriers.notes
    if joined:
        notes += (f"each thread loads once, then computes (no load in a loop, no barrier): a block's life takes the "
                  f"issue its warps spend with no load in flight, {memory_life * 1e9:.0f} -> {block_seconds * 1e9:.0f} "
                  "ns (rule phases_take_turns)",)
    term = Term(name="dram", side="memory", seconds=seconds, limiter=limiter, notes=notes,
                roof_seconds=roof_seconds, inputs={
                    **dispatch_input, "dram_equivalent_bytes": dram_bytes, "roof_bytes": roof_bytes,
                    "flush_writeback_bytes": flushed,
                    "dram_read_bytes": read_bytes, "dram_written_bytes": written_bytes or 0.0,
                    "bytes_per_block": bytes_per_block, "bytes_in_flight": in_flight,
                    "rounds": rounds, "latency_seconds": latency, "block_seconds": block_seconds,
                    "barrier_seconds_per_block": tree_seconds, "l1_seconds_per_block": l1_seconds,
                    "sm_bytes_per_second": sm_bandwidth, "roof_bytes_per_second": peak_bw,
                    "little_bytes_per_second": in_flight_rate, "roof_seconds": roof_seconds,
                    "full_wave_seconds": full_wave_seconds, "waves": blocks / slots,
                    **({"memory_life_seconds": memory_life, "exposed_issue_seconds": exposed_issue_seconds,
                        "phase_exponent": params.phase_exponent} if joined else {}),
                    **({"lockstep_seconds": lockstep_seconds} if in_step else {})})
    return DramTime(term=term, equivalent_bytes=dram_bytes, bytes_in_flight=in_flight)


def _sides_after_flush(dram: DramTraffic, granularity: DramGranularity,
                       params: DramParams) -> tuple[float, float | None, float]:
    """The DRAM bytes read and written during the kernel, and of the written the flush's lines
    it displaces (`flush_writeback_bytes`; 0 unless it starts from validate's flush). The read
    side holds the sectors L2 fetches again once the open lines outgrow it
    (`open_line_refetch_bytes`)."""
    read_bytes, written_bytes = dram_sides(dram, granularity)
    read_bytes += open_line_refetch_bytes(dram, granularity, params.l2_open_lines_onset_bytes,
                                          params.l2_open_lines_full_bytes)
    if not dram.after_l2_flush:
        return read_bytes, written_bytes, 0.0
    flushed = flush_writeback_bytes(read_bytes + (written_bytes or 0.0), params.flush_dirty_bytes) \
        if on("flush_writeback") else 0.0
    if written_bytes and on("l2_keeps_writes"):
        # after the flush, the lines the kernel displaces are the flush's (`flushed`); its own
        # written lines that L2 still holds at its end are written back after it. Launches back
        # to back instead displace the last launch's, as many as they leave: all written bytes.
        written_bytes = written_back_bytes(read_bytes, written_bytes, params.l2_cache_bytes,
                                           params.l2_kept_written_bytes if on("l2_written_cap") else None)
    if flushed:
        written_bytes = (written_bytes or 0.0) + flushed
    return read_bytes, written_bytes, flushed
