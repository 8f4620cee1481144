"""DRAM: the kernel's DRAM bytes (as the DRAM spends them) at the rate Little's law allows.

A full wave sustains ``resident blocks x bytes per block / block life`` (`latency`);
`achieved_bandwidth` takes the soft minimum of that, the block-dispatch rate and the DRAM
roof of the kernel's mix of reads and writes (`dram_roof`); the bytes are
`dram_equivalent_bytes`. Grids smaller than one wave or with a partial last wave run that
wave at its own, lower concurrency.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from ..._calibration import Calibration
from ..._errors import RooflineError
from ..._facts import gpu as _lookup_gpu
from ..._gpu import GPU
from ..._kernel import Kernel, kernel_of
from ..._locality import MEASURED_ON, Locality
from ..._locality import locality as _locality_of
from .barriers import barrier_seconds
from .l1_shared import l1_seconds_per_block
from .latency import achieved_bandwidth, queued_life
from .trips import loop_waits
from ._term import Limiter, Setting, Term, finite_nonnegative, finite_positive

__all__ = ["TAIL_SHARE", "dram_equivalent_bytes", "dram_roof", "dram_sides", "dram_term", "flush_writeback_bytes",
           "mixed_dram_bandwidth", "wave_seconds"]

#: The DRAM term names the tail (a partial last wave) its limiter when that wave adds more
#: than this share to the time every block would take at a full wave's bandwidth: the
#: docs' "a partial last wave costs more than a fifth"; below it, what limits the full
#: waves' rate is what a user should change.
TAIL_SHARE = 0.2


def dram_equivalent_bytes(kernel: Kernel, calibration: Calibration, *, locality: Locality | None = None) -> float:
    """Bytes the DRAM spends on `kernel`'s traffic, counting how it moves them.

    ``dram_bytes`` counts 32-byte sectors. Where the kernel gives its footprint (built by
    `roofline.traffic`) and the calibration the DRAM's granularity, the read side costs at
    least ``64 x bursts`` (a DRAM that reads 64-byte bursts fetches both sectors of one)
    and ``dram_read_line_bytes`` per line read; a sector written in part is read whole first,
    a 32-byte fill on the read side (as Nsight counts it, in ``dram__bytes_read``), unless the
    lines holding one cost more at ``dram_partial_write_line_bytes`` each (the line probe's
    figure, its fills included), which then stand on the written side for both. Each side's
    DRAM pages opened beyond a stream's (``dram_*_page_visits`` over ``bytes /
    dram_page_bytes``) add ``dram_page_visit_bytes`` each; where every
    burst read opens a page of its own (a random gather) a burst costs
    ``dram_random_burst_bytes`` instead, as the random-burst probe measured it.

    Parameters
    ----------
    kernel : Kernel
    calibration : Calibration
    locality : Locality, optional
        The GPU's DRAM page size (`roofline.locality`); default the H200's, where
        `roofline.traffic` measured the page visits.

    Returns
    -------
    float
        Bytes; ``kernel.dram_bytes`` when the kernel does not give its footprint.

    Raises
    ------
    RooflineError
        If the kernel has no ``dram_bytes``.

    Examples
    --------
    >>> import roofline
    >>> k = roofline.models.strided_read(1 << 20, 32)
    >>> cal = roofline.calibration("H200")
    >>> roofline.dram_equivalent_bytes(k, cal) > k.dram_bytes  # one sector per 64-byte burst
    True
    """
    kernel = kernel_of(kernel)
    if not isinstance(calibration, Calibration):
        raise TypeError(f"calibration must be a roofline.Calibration, not {type(calibration).__name__}")
    figures = _locality_of(MEASURED_ON) if locality is None else locality
    load, write = dram_sides(kernel, calibration, figures)
    return load + (write or 0.0)


def flush_writeback_bytes(dram_bytes: float, calibration: Calibration) -> float:
    """Bytes of the L2 flush's written lines a kernel moving `dram_bytes` writes back.

    After validate's L2 flush L2 holds ``W = calibration.flush_dirty_bytes`` of written
    lines. Each line the kernel brings into L2 displaces one, written while any are left in
    the share they still hold: ``W x (1 - exp(-dram_bytes / W))`` (all of them for a kernel
    far larger than W, about ``dram_bytes`` for one far smaller). 0 without the figure.

    Examples
    --------
    >>> import roofline
    >>> cal = roofline.calibration("H200").model_copy(update={"flush_dirty_bytes": 20e6})
    >>> round(flush_writeback_bytes(1e6, cal) / 1e6, 3), round(flush_writeback_bytes(1e9, cal) / 1e6, 3)
    (0.975, 20.0)
    """
    dirty = calibration.flush_dirty_bytes
    if not dirty or dram_bytes <= 0:
        return 0.0
    return float(dirty) * -math.expm1(-float(dram_bytes) / float(dirty))


def dram_sides(kernel: Kernel, calibration: Calibration, locality: Locality) -> tuple[float, float | None]:
    """`dram_equivalent_bytes` as (read, written); written is None when the kernel has no
    ``traffic`` to say which of its bytes are written (its ``dram_bytes`` are then the read side)."""
    if kernel.dram_bytes is None:
        raise RooflineError(f"kernel {kernel.name!r} has no dram_bytes (roofline.traffic() counts them)")
    total = float(kernel.dram_bytes)
    traffic = kernel.traffic
    if traffic is None:
        return total, None
    store = min(float(traffic.dram_store_bytes), total)
    load = total - store
    page = calibration.dram_page_visit_bytes or 0.0

    def opened(visits: float | None, nbytes: float) -> float:
        # pages opened beyond the ones a stream of the same bytes opens, at their cost
        return page * max(0.0, float(visits) - nbytes / locality.dram_page_bytes) if page and visits is not None else 0.0

    bursts, visits = traffic.dram_load_bursts, traffic.dram_load_page_visits
    if load > 0 and calibration.dram_random_burst_bytes and bursts and visits is not None and visits >= bursts:
        # every burst opens a page of its own (a gather at random): what the random-burst probe measured
        load = max(load, float(bursts) * calibration.dram_random_burst_bytes)
    elif load > 0:
        if (calibration.dram_burst_bytes or 32) > 32 and bursts is not None:
            load = max(load, float(bursts) * calibration.dram_burst_bytes)
        load += opened(visits, load)
        if calibration.dram_read_line_bytes and traffic.dram_load_lines:
            load = max(load, float(traffic.dram_load_lines) * calibration.dram_read_line_bytes)
    partial = float(traffic.dram_store_partial_sectors or 0)
    # a sector written in part is read whole before it is written back (the fill): a read
    fill = 32.0 * partial
    write = store + opened(traffic.dram_store_page_visits, store)
    line_bytes = calibration.dram_partial_write_line_bytes
    if partial and line_bytes and traffic.dram_store_lines:
        floor = min(float(traffic.dram_store_lines), partial) * line_bytes
        if floor > write + fill:
            # lone lines written in part cost what the line probe measured, its fills included
            return load, floor
    return load + fill, write


def dram_roof(gpu: GPU | str, calibration: Calibration, read_bytes: float, write_bytes: float | None) -> float:
    """DRAM bytes per second a kernel reaches at best with this mix of reads and writes.

    The copy (half read, half written) reaches ``memory_bandwidth x
    sustained_bandwidth_fraction``; a pure read stream reaches the calibration's measured
    ``dram_read_bytes_per_second`` (the bus never turns around for writes). A written byte
    then costs what makes the copy come out: ``2 / copy - 1 / read`` seconds per byte.

    Parameters
    ----------
    gpu : GPU or str
    calibration : Calibration
    read_bytes, write_bytes : float
        DRAM-equivalent bytes read and written (`dram_equivalent_bytes`' two sides);
        `write_bytes` None when unknown (the copy's rate is returned).

    Returns
    -------
    float
        Bytes per second.

    Examples
    --------
    >>> import roofline
    >>> cal = roofline.calibration("H200")
    >>> copy = roofline.dram_roof("H200", cal, 1.0, 1.0)
    >>> roofline.dram_roof("H200", cal, 1.0, 0.0) > copy > roofline.dram_roof("H200", cal, 0.0, 1.0)
    True
    """
    record = _lookup_gpu(gpu)
    if not isinstance(calibration, Calibration):
        raise TypeError(f"calibration must be a roofline.Calibration, not {type(calibration).__name__}")
    copy = record.memory_bandwidth * calibration.sustained_bandwidth_fraction
    return mixed_dram_bandwidth(read_bytes, write_bytes, copy_bytes_per_second=copy,
                                read_bytes_per_second=calibration.dram_read_bytes_per_second)


def mixed_dram_bandwidth(read_bytes: float, write_bytes: float | None, *, copy_bytes_per_second: float,
                         read_bytes_per_second: float | None) -> float:
    """`dram_roof`'s rule on plain figures: bytes per second of this read/write mix.

    A read byte takes ``1 / read_bytes_per_second``, a written byte ``2 / copy - 1 / read``
    (the copy, half of each, comes out at `copy_bytes_per_second`). The copy's rate when
    `write_bytes` is None, the read rate is unknown, or it does not exceed the copy's (so a
    write is never faster than a copy). Any finite mix gives a finite rate > 0, from half
    the copy's (all writes) to the read's (all reads): the sums are taken relative to the
    larger side, so bytes and rates as small as 5e-324 neither underflow to 0/0 nor overflow.

    Examples
    --------
    >>> from roofline import mixed_dram_bandwidth
    >>> round(mixed_dram_bandwidth(0.0, 1.0, copy_bytes_per_second=4e12, read_bytes_per_second=5e12) / 1e12, 3)
    3.333
    """
    copy = finite_positive("copy_bytes_per_second", copy_bytes_per_second)
    read = None if read_bytes_per_second is None else finite_positive("read_bytes_per_second", read_bytes_per_second)
    read_bytes = finite_nonnegative("read_bytes", read_bytes)
    write_bytes = None if write_bytes is None else finite_nonnegative("write_bytes", write_bytes)
    if write_bytes is None or read is None or read <= copy or read_bytes + write_bytes <= 0:
        return copy
    # In units of the copy's time per byte: a read byte costs ratio (< 1), a written byte
    # 2 - ratio (> 1); the bytes relative to the larger side, so that neither underflows.
    ratio = copy / read
    largest = max(read_bytes, write_bytes)
    reads, writes = read_bytes / largest, write_bytes / largest
    cost = reads * ratio + writes * (2.0 - ratio)
    if cost <= 0:  # copy / read underflowed with no writes to speak of: a pure read stream
        return read
    # `or copy`: a copy rate of a few subnormals rounds its half to 0; the copy's is as near.
    return min(read, copy * ((reads + writes) / cost)) or copy


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


def dram_term(setting: Setting) -> Term:
    """The DRAM time of the launch: its waves, each at the bandwidth its resident blocks reach.

    A block lives ``rounds x latency + bytes per block / SM bandwidth`` plus its barriers; where
    the kernel's hot loop has known trips (`loop_waits`), its rounds take the latency of the
    level their loads reach instead of ``latency`` each (the loads outside the loop keep it)
    (`barrier_seconds`) and its L1 passes queued behind the others' (`queued_life`): the
    queue's customers are the warps resident on the SM, each waiting for its own loads while
    the others use the pipe, or whole blocks where the kernel passes barriers (its SASS holds
    a ``BAR``; without SASS, ``kernel.barriers_per_block``: they keep a block's warps in one
    phase); the bandwidth of ``n`` resident blocks is `achieved_bandwidth` of
    Little's law's rate, the dispatch rate and `dram_roof`. The limiter it names when it
    binds: ``tail`` when the partial last wave adds more than `TAIL_SHARE`, else the
    smallest of the three rates of a full wave (``dram_bandwidth``, ``block_scheduling``,
    ``memory_latency``).
    """
    gpu, cal, kernel, launch = setting.gpu, setting.calibration, setting.kernel, setting.launch
    blocks, slots, rounds = launch.blocks, setting.slots, setting.rounds
    read_bytes, written_bytes = dram_sides(kernel, cal, setting.locality)
    flushed = flush_writeback_bytes(read_bytes + (written_bytes or 0.0), cal) if setting.after_l2_flush else 0.0
    if flushed:
        written_bytes = (written_bytes or 0.0) + flushed
    dram_bytes = read_bytes + (written_bytes or 0.0)
    bytes_per_block = dram_bytes / blocks
    peak_bw = dram_roof(gpu, cal, read_bytes, written_bytes)
    latency = cal.idle_latency_seconds
    sm_bandwidth = cal.sm_bandwidth_bytes_per_second or gpu.l2_bandwidth / gpu.sm_count
    tree_seconds, notes = barrier_seconds(setting)
    l1_seconds = l1_seconds_per_block(setting)
    chain_seconds = rounds * latency
    waits = loop_waits(setting)
    if waits is not None:
        # the hot loop's rounds wait as long as their loads take where they hit (`loop_waits`:
        # the round's own bytes delay its last load); the loads outside it wait a round trip
        # per group in flight
        elements = launch.elements_per_thread
        outside = max(0.0, elements - waits["loop_loads_per_thread"])
        in_flight = min(int(setting.loads_in_flight_per_thread), elements)
        chain_seconds = math.ceil(outside / in_flight) * latency + waits["seconds"]
    # the block's bytes pass through its SM's port on top of the waits
    block_seconds = chain_seconds + bytes_per_block / sm_bandwidth + l1_seconds + tree_seconds

    # the queue's customers: the resident warps where each waits for its own loads and takes
    # its turn at the pipe (its block's other warps included); whole blocks where barriers
    # hold the warps of a block to one phase
    sass = setting.sass
    phased = bool(sass.instructions.barriers if sass is not None else kernel.barriers_per_block)
    warps = 1 if phased else setting.occupancy.warps_per_block

    def rates(resident_blocks: int) -> tuple[float, float]:
        life = queued_life(block_seconds - l1_seconds, l1_seconds / warps, resident_blocks * warps / gpu.sm_count)
        in_flight_rate = resident_blocks * bytes_per_block / life
        dispatch = (
            min(resident_blocks, gpu.sm_count) * bytes_per_block / cal.block_dispatch_seconds
            if cal.block_dispatch_seconds > 0 else math.inf
        )
        return in_flight_rate, dispatch

    def bandwidth_of_blocks(resident_blocks: int) -> float:
        in_flight_rate, dispatch = rates(resident_blocks)
        return achieved_bandwidth(in_flight_rate * latency, peak_bytes_per_second=peak_bw, latency_seconds=latency,
                                  knee_sharpness=cal.knee_sharpness, dispatch_bytes_per_second=dispatch)

    seconds = wave_seconds(blocks, slots, bytes_per_block, bandwidth_of_blocks) if dram_bytes else 0.0
    full_wave_seconds = dram_bytes / bandwidth_of_blocks(min(blocks, slots)) if dram_bytes else 0.0
    in_flight_rate, dispatch = rates(min(blocks, slots))
    limiter: Limiter
    if seconds > (1 + TAIL_SHARE) * full_wave_seconds:
        limiter = "tail"
    else:
        smallest = min(in_flight_rate, dispatch, peak_bw)
        limiter = ("dram_bandwidth" if smallest == peak_bw
                   else "block_scheduling" if smallest == dispatch else "memory_latency")
    # an unlimited dispatch rate (no dispatch interval measured) is left out: the inputs stay finite for JSON
    dispatch_input = {"dispatch_bytes_per_second": dispatch} if math.isfinite(dispatch) else {}
    return Term(name="dram", side="memory", seconds=seconds, limiter=limiter, notes=notes, inputs={
        **dispatch_input, "dram_equivalent_bytes": dram_bytes, "flush_writeback_bytes": flushed, "dram_read_bytes": read_bytes, "dram_written_bytes": written_bytes or 0.0,
        "bytes_per_block": bytes_per_block, "bytes_in_flight": min(blocks, slots) * bytes_per_block / rounds,
        "rounds": rounds, "latency_seconds": latency, "block_seconds": block_seconds,
        "barrier_seconds_per_block": tree_seconds, "l1_seconds_per_block": l1_seconds,
        "sm_bytes_per_second": sm_bandwidth, "roof_bytes_per_second": peak_bw,
        "little_bytes_per_second": in_flight_rate,
        # the plain roof of this level (`roofline_bound`): the compulsory bytes at the roof, nothing else
        "roof_seconds": float(kernel.dram_bytes) / peak_bw,
        "full_wave_seconds": full_wave_seconds, "waves": blocks / slots})
