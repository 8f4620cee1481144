"""The bytes as the DRAM spends them, and the DRAM roof of a mix of reads and writes.

``dram_bytes`` counts 32-byte sectors; the DRAM moves bursts, lines and pages
(`dram_equivalent_bytes`, with the calibration's `DramGranularity`), writes back what the L2
flush left (`flush_writeback_bytes`), and reaches a higher rate for reads than for writes
(`dram_roof`, `mixed_dram_bandwidth`). The DRAM term (`roofline._predict.terms.dram`) takes
these.
"""

from __future__ import annotations

import math

from ..._calibration import Calibration
from ..._facts import gpu as _lookup_gpu
from ..._gpu import GPU
from ..._kernel import Kernel, kernel_of
from ..._locality import MEASURED_ON, Locality
from ..._locality import locality as _locality_of
from ..derive import DramTraffic, dram_traffic
from ..params import DramGranularity, dram_granularity
from ..rules import on
from ._term import finite_nonnegative, finite_positive

__all__ = ["dram_equivalent_bytes", "dram_roof", "dram_sides", "flush_writeback_bytes", "mixed_dram_bandwidth",
           "open_line_refetch_bytes", "written_back_bytes"]


def dram_equivalent_bytes(kernel: Kernel, calibration: Calibration, *, locality: Locality | None = None) -> float:
    """Bytes the DRAM spends on `kernel`'s traffic, counting how it moves them.

    ``dram_bytes`` counts 32-byte sectors. Where the kernel gives its footprint (built by
    `roofline.memory.traffic`) and the calibration the DRAM's granularity, the read side costs at
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
        The GPU's DRAM page size (`roofline.memory.locality`); default the H200's, where
        `roofline.memory.traffic` measured the page visits.

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
    >>> roofline.terms.dram_equivalent_bytes(k, cal) > k.dram_bytes  # one sector per 64-byte burst
    True
    """
    kernel = kernel_of(kernel)
    if not isinstance(calibration, Calibration):
        raise TypeError(f"calibration must be a roofline.Calibration, not {type(calibration).__name__}")
    figures = _locality_of(MEASURED_ON) if locality is None else locality
    load, write = dram_sides(dram_traffic(kernel, figures), dram_granularity(calibration))
    return load + (write or 0.0)


def flush_writeback_bytes(dram_bytes: float, dirty_bytes: float | None) -> float:
    """Bytes of the L2 flush's written lines a kernel moving `dram_bytes` writes back.

    After validate's L2 flush L2 holds ``W = dirty_bytes`` of written lines (the
    calibration's ``flush_dirty_bytes``). Each line the kernel brings into L2 displaces one, written while any are left in
    the share they still hold: ``W x (1 - exp(-dram_bytes / W))`` (all of them for a kernel
    far larger than W, about ``dram_bytes`` for one far smaller). 0 without the figure.

    Examples
    --------
    >>> round(flush_writeback_bytes(1e6, 20e6) / 1e6, 3), round(flush_writeback_bytes(1e9, 20e6) / 1e6, 3)
    (0.975, 20.0)
    """
    if not dirty_bytes or dram_bytes <= 0:
        return 0.0
    return float(dirty_bytes) * -math.expm1(-float(dram_bytes) / float(dirty_bytes))


def open_line_refetch_bytes(traffic: DramTraffic, granularity: DramGranularity, onset_bytes: float | None,
                            full_bytes: float | None) -> float:
    """DRAM bytes (as the DRAM spends them) of the sectors L2 fetches again because the resident
    blocks' open lines outgrow it (rule ``l2_open_lines``).

    The share of the sectors requested again (``traffic.rerequested_bytes / 32``) that miss L2
    rises in a straight line from 0 at ``onset_bytes`` of open lines
    (``traffic.open_line_bytes``) to 1 at ``full_bytes`` (the open-lines probe's figures). Each
    is a lone burst at a place of its own (a row of its own): ``dram_random_burst_bytes``, as
    the random-burst probe measured it, else ``dram_burst_bytes``, else the sector. 0 without
    the figures or the counts.

    >>> from roofline._predict.derive import DramTraffic
    >>> t = DramTraffic(bytes=0.0, store_bytes=0.0, load_bursts=None, load_page_visits=None, load_lines=None,
    ...                 store_partial_sectors=0.0, store_filled_sectors=0.0, store_page_visits=None,
    ...                 store_lines=None, page_bytes=2048.0, after_l2_flush=False, open_line_bytes=50e6,
    ...                 rerequested_bytes=32e6)
    >>> g = DramGranularity(64.0, None, None, None, 96.0)
    >>> open_line_refetch_bytes(t, g, 40e6, 60e6) / 1e6  # half of a million sectors, 96 bytes each
    48.0
    """
    opened, again = traffic.open_line_bytes, traffic.rerequested_bytes
    if opened is None or not again or not onset_bytes or not full_bytes or full_bytes <= onset_bytes:
        return 0.0
    share = min(1.0, max(0.0, (opened - onset_bytes) / (full_bytes - onset_bytes)))
    burst = granularity.dram_random_burst_bytes or granularity.dram_burst_bytes or 32.0
    return share * again / 32.0 * burst


def written_back_bytes(read_bytes: float, written_bytes: float, l2_cache_bytes: float | None,
                       kept_written_bytes: float | None = None) -> float:
    """Of a kernel's `written_bytes`, those L2 writes back to DRAM before the kernel ends.

    L2 writes a line back only when a later line displaces it. A kernel whose lines enter L2
    in the order it runs leaves its last ``C = l2_cache_bytes`` of them in L2 at its end; the
    written ones among those are written back after it, outside its time. With the writes
    spread evenly over its footprint ``F = read_bytes + written_bytes``, it keeps
    ``written_bytes x min(1, C / F)`` of them (rule ``l2_keeps_writes``), at most
    ``kept_written_bytes``, the most written bytes L2 holds at a kernel's end (the L2-writes
    probe's; rule ``l2_written_cap``), and writes back the rest (all of them without ``C``).

    >>> written_back_bytes(4e6, 4e6, 50e6), written_back_bytes(60e6, 40e6, 50e6)
    (0.0, 20000000.0)
    >>> written_back_bytes(0.0, 100e6, 60e6, kept_written_bytes=29e6)
    71000000.0
    """
    footprint = read_bytes + written_bytes
    if not l2_cache_bytes or footprint <= 0:
        return written_bytes
    kept = written_bytes * min(1.0, float(l2_cache_bytes) / footprint)
    if kept_written_bytes:
        kept = min(kept, float(kept_written_bytes))
    return written_bytes - kept


def dram_sides(traffic: DramTraffic, granularity: DramGranularity) -> tuple[float, float | None]:
    """`dram_equivalent_bytes` as (read, written); written is None when the kernel has no
    ``traffic`` to say which of its bytes are written (its ``dram_bytes`` are then the read side)."""
    total = traffic.bytes
    if traffic.store_bytes is None:
        return total, None
    store = min(traffic.store_bytes, total)
    load = total - store
    g = granularity
    page = g.dram_page_visit_bytes or 0.0

    def opened(visits: float | None, nbytes: float) -> float:
        # pages opened beyond the ones a stream of the same bytes opens, at their cost
        return page * max(0.0, float(visits) - nbytes / traffic.page_bytes) if page and visits is not None else 0.0

    bursts, visits = traffic.load_bursts, traffic.load_page_visits
    if load > 0 and g.dram_random_burst_bytes and bursts and visits is not None and visits >= bursts:
        # every burst opens a page of its own (a gather at random): what the random-burst probe measured
        load = max(load, float(bursts) * g.dram_random_burst_bytes)
    elif load > 0:
        if (g.dram_burst_bytes or 32) > 32 and bursts is not None:
            load = max(load, float(bursts) * g.dram_burst_bytes)
        load += opened(visits, load)
        if g.dram_read_line_bytes and traffic.load_lines:
            load = max(load, float(traffic.load_lines) * g.dram_read_line_bytes)
    partial = traffic.store_partial_sectors
    # a sector written in part is read whole before it is written back (the fill): a read, unless
    # the kernel loaded the sector itself (L2 holds it whole: store_filled_sectors leaves it out)
    fill = 32.0 * traffic.store_filled_sectors if on("dram_partial_write_fill") else 0.0
    write = store + opened(traffic.store_page_visits, store)
    line_bytes = g.dram_partial_write_line_bytes
    if partial and line_bytes and traffic.store_lines:
        floor = min(float(traffic.store_lines), partial) * line_bytes
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
    >>> copy = roofline.terms.dram_roof("H200", cal, 1.0, 1.0)
    >>> roofline.terms.dram_roof("H200", cal, 1.0, 0.0) > copy > roofline.terms.dram_roof("H200", cal, 0.0, 1.0)
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
    >>> from roofline.terms import mixed_dram_bandwidth
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
