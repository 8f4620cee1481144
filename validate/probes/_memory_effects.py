"""Probes of the costs the time model adds beyond streaming, measured on the device.

`validate/kernels/effects.cu` holds four probes; each measures one parameter of
`roofline.predict`, never a kernel family the model is checked on:

* **DRAM burst**: reading one float per 32-byte sector and one per *other* sector of a
  1 GiB buffer take nearly the same time when the DRAM reads 64-byte bursts (HBM on Hopper:
  Nsight Compute's ``dram__bytes_read`` shows 64 bytes per lone sector); the burst is 64
  bytes when the second read takes at least 3/4 of the first's time, else 32.
* **Lone line read**: one float per 128-byte line: the DRAM-equivalent bytes a line costs
  read alone (its time x the sustained bandwidth / lines), at least one burst.
* **Partial line write**: one float per line: L2 must fill the sector from DRAM before it
  writes it back; the DRAM-equivalent bytes per line written that way.
* **L2 partial stores**: one float per line of a buffer that stays in L2, every line many
  times: partial-sector stores per second that L2 absorbs.
* **DRAM pages**: the same 1 GiB read once by 128-byte chunks in row order (a stream: each
  DRAM page opened once) and in column order over 1,024 to 65,536 rows (a page opened per
  chunk, as `roofline.memory.traffic` counts it): the DRAM-equivalent bytes each page opened
  beyond a stream's costs (the time difference x the read bandwidth / the extra pages).
* **Tree level**: one block per SM runs thousands of levels of (shared load, add, shared
  store, barrier): the latency of one level, from the difference of two level counts, at
  blocks of 128, 256, 512 and 1024 threads; a line through them gives the level's fixed
  cost and its cost per warp of the block (a barrier gathers every warp).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from pydantic import BaseModel, ConfigDict
from roofline import Calibration
from roofline.memory import locality
from roofline.terms import mixed_dram_bandwidth

from ..device import DeviceInfo, Session, StopRules, benchmark, compile_kernels, kernel_source, takes_session
from ._prediction import PredictionCheck
from ._probe import Figures, Probe, RunContext
from ._workingset import WorkingSet

__all__ = ["EffectTimes", "EffectsProbe", "MemoryEffects", "effects_calibration", "measure_effects", "render_effects"]

_FROZEN = ConfigDict(frozen=True, extra="forbid")
GiB = 1 << 30
SECTOR_BYTES, LINE_BYTES = 32, 128
#: The burst is 64 bytes when reading every other sector takes at least this share of the
#: time of reading every sector (with 32-byte bursts it would take half).
BURST_RATIO = 0.75


class EffectTimes(BaseModel):
    """What the memory-effect probes timed (seconds per launch) with the work each launch did:
    the measured input of `derive_effects`.

    Attributes
    ----------
    sector_read_seconds, other_sector_read_seconds, line_read_seconds : float
        One float per sector, per other sector, per line of a `buffer_bytes` buffer.
    line_write_seconds : float
        One float written per line of the buffer.
    buffer_bytes : int
        The DRAM probes' buffer (far past L2).
    l2_partial_store_seconds : float
        The L2 probe's time for `l2_partial_stores` partial-sector stores.
    l2_partial_stores : int
    tree_level_points : dict[int, float]
        Seconds per tree level at each block size (threads).
    sm_partial_store_seconds, sm_partial_stores : float, int or None
        The L2 probe on one block of 1,024 threads, alone on the GPU: its time for
        `sm_partial_stores` stores.
    page_row_seconds : float or None
        The DRAM-page probe's row-order read of the buffer.
    page_column_seconds : dict[int, float]
        Its column-order reads, by the rows they walk.
    """

    model_config = _FROZEN

    sector_read_seconds: float
    other_sector_read_seconds: float
    line_read_seconds: float
    line_write_seconds: float
    buffer_bytes: int
    l2_partial_store_seconds: float
    l2_partial_stores: int
    tree_level_points: dict[int, float]
    sm_partial_store_seconds: float | None = None
    sm_partial_stores: int | None = None
    page_row_seconds: float | None = None
    page_column_seconds: dict[int, float] = {}


class MemoryEffects(EffectTimes):
    """What the probes measured (`EffectTimes`, seconds per launch) and the parameters derived
    from them.

    Attributes
    ----------
    dram_bytes_per_second : float
        Sustained DRAM bandwidth the equivalent bytes are taken at.
    tree_level_seconds : float
        Latency of one tree level (shared load, add, store, barrier) at no warps: the
        line's intercept, seconds.
    tree_level_warp_seconds : float
        What each warp of the block adds to a level, seconds.
    dram_burst_bytes : int
        32 or 64.
    dram_read_line_bytes, dram_partial_write_line_bytes : float
        DRAM-equivalent bytes of one line read alone, and of one line written in part
        (each side's time at that side's bandwidth, `roofline.terms.dram_roof`).
    l2_partial_store_sectors_per_second : float
    sm_partial_store_sectors_per_second : float or None
        What one SM's stores get merged alone: ``sm_partial_stores / sm_partial_store_seconds``.
    dram_read_bytes_per_second : float or None
        The read stream's bandwidth the read probes are converted at (None: the copy's).
    dram_page_visit_bytes : float or None
        DRAM-equivalent bytes of a page opened beyond a stream's.
    """

    dram_bytes_per_second: float
    tree_level_seconds: float
    tree_level_warp_seconds: float = 0.0
    tree_level_points: dict[int, float] = {}
    dram_burst_bytes: int
    dram_read_line_bytes: float
    dram_partial_write_line_bytes: float
    l2_partial_store_sectors_per_second: float
    sm_partial_store_sectors_per_second: float | None = None
    dram_read_bytes_per_second: float | None = None
    dram_page_visit_bytes: float | None = None


def page_visit_bytes(buffer_bytes: int, row_seconds: float, column_seconds: dict[int, float],
                     read_bytes_per_second: float) -> float:
    """DRAM-equivalent bytes per page opened beyond a stream's, from the page probe.

    `column_seconds` maps the probe's rows to its column-order time. Each column order
    opens ``buffer / visit`` pages (`page_probe_visit`) where the row order, a stream,
    opens ``buffer / dram_page_bytes``; the extra time at the read bandwidth is the extra
    pages' cost: the slope of a line through the origin (at least 0).
    """
    page_bytes = locality("H200").dram_page_bytes  # roofline.memory.traffic's default figures
    extra, pages = [], []
    for rows, seconds in column_seconds.items():
        visit = page_probe_visit(rows)
        if visit < page_bytes:
            extra.append((seconds - row_seconds) * read_bytes_per_second)
            pages.append(buffer_bytes / visit - buffer_bytes / page_bytes)
    if not pages:
        return 0.0
    x, y = np.array(pages), np.array(extra)
    return max(0.0, float(x @ y / (x @ x)))


def page_probe_visit(rows: int) -> int:
    """Bytes of one page the probe's column order over `rows` rows reads per opening, as
    `roofline.memory.traffic` counts them: its window holds ``page_window_threads / 32`` warps,
    each reading one 128-byte chunk; it reads ``window / rows`` adjacent chunks of a row."""
    figures = locality("H200")  # roofline.memory.traffic's default figures
    return min(figures.dram_page_bytes, LINE_BYTES * max(1, figures.page_window_threads // 32 // rows))


def derive_effects(times: EffectTimes, *, dram_bytes_per_second: float,
                   read_bytes_per_second: float | None = None) -> MemoryEffects:
    """The parameters from the probes' times (a plain function, tested on the CPU).

    `dram_bytes_per_second` is the copy's sustained bandwidth, `read_bytes_per_second` a
    read stream's (the working-set sweep's DRAM plateau; default the copy's): read probes
    convert their time to bytes at the read bandwidth, the write probe at a written byte's
    (`roofline.terms.mixed_dram_bandwidth`, `roofline.terms.dram_roof`'s rule).
    """
    if not isinstance(times, EffectTimes):
        raise TypeError(f"times must be an EffectTimes, not {type(times).__name__}")
    t = times
    slope, intercept = _tree_level_line(t.tree_level_points)
    burst = 64 if t.other_sector_read_seconds >= BURST_RATIO * t.sector_read_seconds else 32
    lines = t.buffer_bytes // LINE_BYTES

    read = read_bytes_per_second or dram_bytes_per_second
    write = mixed_dram_bandwidth(0.0, 1.0, copy_bytes_per_second=dram_bytes_per_second, read_bytes_per_second=read)
    page = (page_visit_bytes(t.buffer_bytes, t.page_row_seconds, t.page_column_seconds, read)
            if t.page_row_seconds is not None and t.page_column_seconds else None)
    return MemoryEffects(
        **t.model_dump(include=set(EffectTimes.model_fields)), dram_bytes_per_second=dram_bytes_per_second,
        tree_level_seconds=intercept, tree_level_warp_seconds=slope, dram_burst_bytes=burst,
        dram_read_line_bytes=max(float(burst), t.line_read_seconds * read / lines),
        dram_partial_write_line_bytes=max(2.0 * SECTOR_BYTES, t.line_write_seconds * write / lines),
        l2_partial_store_sectors_per_second=t.l2_partial_stores / t.l2_partial_store_seconds,
        sm_partial_store_sectors_per_second=(t.sm_partial_stores / t.sm_partial_store_seconds
                                             if t.sm_partial_stores and t.sm_partial_store_seconds else None),
        dram_read_bytes_per_second=read_bytes_per_second, dram_page_visit_bytes=page,
    )


def _tree_level_line(points: dict[int, float]) -> tuple[float, float]:
    """(seconds per warp, seconds at no warps) of a line through a tree level's latency at each
    block size (threads); at least 0 and 1 ns. One block size: its latency, no slope."""
    warps = np.array([threads / 32 for threads in points], dtype=float)
    level = np.array(list(points.values()), dtype=float)
    if warps.size >= 2 and np.ptp(warps) > 0:
        slope, intercept = np.polyfit(warps, level, 1)
    else:
        slope, intercept = 0.0, float(level.mean())
    return max(0.0, float(slope)), max(1e-9, float(intercept))


def page_probe_rows(warps: int) -> tuple[int, ...]:
    """Rows of the page probe's column orders for a launch of `warps` warps: as many as
    keep one chunk per row in `roofline.memory.traffic`'s window (128-byte visits) and the eight
    loads of a warp a page apart (``warps / rows >= 8`` chunks), from 1,024 to 65,536."""
    window = locality("H200").page_window_threads // 32  # roofline.memory.traffic's default figures
    return tuple(rows for rows in (1024, 8192, 65536) if rows >= window and warps // rows >= 8)


@takes_session
def measure_effects(session: Session, info: DeviceInfo, *, dram_bytes_per_second: float, quick: bool = False,
                    read_bytes_per_second: float | None = None,
                    progress: Callable[[str], None] = lambda message: None) -> MemoryEffects:
    """Run the probes on the device.

    Parameters
    ----------
    session : validate.Session
    info : DeviceInfo
    dram_bytes_per_second : float
        The sustained DRAM bandwidth measured in the same session (the copy's).
    quick : bool
        A 256 MiB buffer instead of 1 GiB, fewer levels.
    read_bytes_per_second : float, optional
        A read stream's DRAM bandwidth measured in the same session (the working-set
        sweep's plateau); default the copy's.
    """
    names = ["sparse_read", "sparse_write", "l2_partial_store", "tree_levels", "page_read"]
    kernels = compile_kernels(kernel_source("effects.cu"), names, arch=session.arch, name="effects.cu")
    buffer_bytes = min((GiB // 4) if quick else GiB, info.memory_size_bytes // 4)
    floats = buffer_bytes // 4
    buffer = session.allocate(buffer_bytes)
    session.poison(buffer, buffer_bytes)
    sink = session.allocate(4096)
    threads = 256
    grid = info.sm_count * max(1, info.max_threads_per_sm // threads)
    rules = StopRules(warmup=2, repetitions=5 if quick else 9)

    def timed(kernel: str, launch_grid: int, args: tuple, block: int = threads) -> float:
        run = session.launcher(kernels[kernel], (launch_grid, 1, 1), (block, 1, 1), args)
        return benchmark(run, timer=session.timer, rules=rules).median_seconds

    def read(log2: int) -> float:
        return timed("sparse_read", grid, (buffer, sink, np.uint32(floats >> log2), np.int32(log2)))

    sector, other, line = read(3), read(4), read(5)
    write = timed("sparse_write", grid, (buffer, np.uint32(floats >> 5), np.int32(5)))
    l2_lines = max(1, info.l2_cache_bytes // 4 // LINE_BYTES)
    passes = 64 if quick else 256
    l2 = timed("l2_partial_store", grid, (buffer, np.uint32(l2_lines), np.int32(passes)))
    # one SM alone: what its own port merges where no other SM shares L2's rate
    sm_passes = 2 if quick else 4
    sm_l2 = timed("l2_partial_store", 1, (buffer, np.uint32(l2_lines), np.int32(sm_passes)), 1024)
    few, many = (256, 1024) if quick else (1024, 4096)

    def level(block: int) -> float:
        def run(levels: int) -> float:
            return timed("tree_levels", info.sm_count, (sink, np.int32(levels)), block)

        return max(1e-10, (run(many) - run(few)) / (many - few))

    points = {block: level(block) for block in (128, 256, 512, 1024)}
    chunks = buffer_bytes // LINE_BYTES
    page_grid = chunks * 4 // threads  # 8 chunks per warp

    def pages(rows: int, column: int) -> float:
        return timed("page_read", page_grid, (buffer, sink, np.uint32(chunks), np.uint32(rows), np.int32(column)))

    page_row = pages(1, 0)
    page_columns = {rows: pages(rows, 1) for rows in page_probe_rows(chunks // 8)}
    session.synchronize()
    del buffer
    times = EffectTimes(sector_read_seconds=sector, other_sector_read_seconds=other, line_read_seconds=line,
                        line_write_seconds=write, buffer_bytes=buffer_bytes, l2_partial_store_seconds=l2,
                        l2_partial_stores=l2_lines * passes, tree_level_points=points,
                        sm_partial_store_seconds=sm_l2, sm_partial_stores=l2_lines * sm_passes,
                        page_row_seconds=page_row, page_column_seconds=page_columns)
    effects = derive_effects(times, dram_bytes_per_second=dram_bytes_per_second,
                             read_bytes_per_second=read_bytes_per_second)
    progress(f"effects: DRAM burst {effects.dram_burst_bytes} B, lone line read {effects.dram_read_line_bytes:.0f} B, "
             f"partial line write {effects.dram_partial_write_line_bytes:.0f} B, L2 partial stores "
             f"{effects.l2_partial_store_sectors_per_second / 1e9:.1f} G/s "
             f"({(effects.sm_partial_store_sectors_per_second or 0) / 1e9:.2f} G/s on one SM), tree level "
             f"{effects.tree_level_seconds * 1e9:.1f} ns + {effects.tree_level_warp_seconds * 1e9:.2f} ns per warp, "
             f"DRAM page opened {effects.dram_page_visit_bytes or 0:.0f} B")
    return effects


def effects_calibration(effects: MemoryEffects) -> dict[str, tuple[float, str]]:
    """The calibration entries the probes give: name -> (value, how it was measured).

    `validate.measured_calibration` adds where and when to each description.
    """
    entries = {
        "dram_burst_bytes": (float(effects.dram_burst_bytes),
                             f"one float per other sector took {effects.other_sector_read_seconds / effects.sector_read_seconds:.2f} "
                             f"of one per sector over {effects.buffer_bytes >> 20} MiB"),
        "dram_read_line_bytes": (effects.dram_read_line_bytes,
                                 "one float per 128-byte line, time x sustained bandwidth / lines"),
        "dram_partial_write_line_bytes": (effects.dram_partial_write_line_bytes,
                                          "one float written per 128-byte line, time x sustained bandwidth / lines"),
        "l2_partial_store_sectors_per_second": (effects.l2_partial_store_sectors_per_second,
                                                f"one float stored per line of an L2-resident buffer, "
                                                f"{effects.l2_partial_stores} stores"),
        "tree_level_seconds": (effects.tree_level_seconds,
                               "one block per SM, (shared load, add, store, barrier) levels, difference "
                               "of two level counts, intercept of a line over blocks of 128-1024 threads"),
    }
    if effects.sm_partial_store_sectors_per_second is not None:
        entries["sm_partial_store_sectors_per_second"] = (
            effects.sm_partial_store_sectors_per_second,
            f"the same stores from one block of 1024 threads alone on the GPU, {effects.sm_partial_stores} stores")
    if effects.dram_page_visit_bytes is not None:
        row = effects.page_row_seconds or 0.0
        points = ", ".join(f"{rows} rows {seconds / row:.2f}x" for rows, seconds in sorted(effects.page_column_seconds.items()))
        entries["dram_page_visit_bytes"] = (
            effects.dram_page_visit_bytes,
            f"{effects.buffer_bytes >> 20} MiB read by 128-byte chunks in column order ({points} the row-order "
            "time); extra time x read bandwidth / pages opened beyond a stream's")
    if len(effects.tree_level_points) >= 2:
        entries["tree_level_warp_seconds"] = (effects.tree_level_warp_seconds,
                                              "the same line's slope per warp of the block")
    return entries


def render_effects(e: MemoryEffects, h: str = "##") -> list[str]:
    """The memory-effect parameters and what each was derived from."""
    lines = [f"{h} Memory effects (the time model's probes)", "",
             "| parameter | value | from |", "| --- | ---: | --- |",
             f"| DRAM burst | {e.dram_burst_bytes} B | one float per other sector took "
             f"{e.other_sector_read_seconds / e.sector_read_seconds:.2f} of one per sector |",
             f"| lone line read | {e.dram_read_line_bytes:.0f} B | {e.line_read_seconds * 1e6:.1f} us for "
             f"{e.buffer_bytes // 128} lines |",
             f"| partial line write | {e.dram_partial_write_line_bytes:.0f} B | {e.line_write_seconds * 1e6:.1f} us "
             f"for {e.buffer_bytes // 128} lines |",
             f"| L2 partial stores | {e.l2_partial_store_sectors_per_second / 1e9:.1f} G/s | "
             f"{e.l2_partial_stores} stores in {e.l2_partial_store_seconds * 1e6:.1f} us |",
             *([f"| L2 partial stores of one SM alone | {e.sm_partial_store_sectors_per_second / 1e9:.2f} G/s | "
                f"{e.sm_partial_stores} stores of one block in {(e.sm_partial_store_seconds or 0) * 1e6:.1f} us |"]
               if e.sm_partial_store_sectors_per_second is not None else []),
             f"| tree level | {e.tree_level_seconds * 1e9:.1f} ns + {e.tree_level_warp_seconds * 1e9:.2f} ns "
             f"per warp | shared load, add, store, barrier; per level at "
             + ", ".join(f"{b} threads {t * 1e9:.1f} ns" for b, t in e.tree_level_points.items()) + " |"]
    if e.dram_page_visit_bytes is not None and e.page_row_seconds:
        lines.append(f"| DRAM page opened | {e.dram_page_visit_bytes:.0f} B | {e.buffer_bytes >> 20} MiB by 128-byte "
                     f"chunks: row order {e.page_row_seconds * 1e6:.1f} us, column order "
                     + ", ".join(f"over {rows} rows {t * 1e6:.1f} us" for rows, t in sorted(e.page_column_seconds.items()))
                     + " |")
    lines.append("")
    return lines


class EffectsProbe(Probe[MemoryEffects]):
    """The time model's memory-effect probes (`measure_effects`), after the prediction check: the
    sustained DRAM bandwidth comes from its fitted calibration."""

    name = "effects"
    step = "memory effects"
    needs = ("prediction",)

    def run(self, ctx: RunContext) -> MemoryEffects | None:
        prediction = ctx.result("prediction", PredictionCheck)
        if ctx.entry is None or prediction is None:
            return None
        fitted = Calibration.model_validate(prediction.calibration)
        working_set = ctx.result("working_set", WorkingSet)
        plateaus = working_set.plateaus if working_set is not None else None
        sustained = ctx.entry.memory_bandwidth * fitted.sustained_bandwidth_fraction
        return measure_effects(ctx.session, ctx.info, dram_bytes_per_second=sustained,
                               read_bytes_per_second=plateaus.dram_bytes_per_second if plateaus else None,
                               quick=ctx.quick, progress=ctx.progress)

    def figures(self, result: MemoryEffects) -> Figures:
        return dict(effects_calibration(result))

    def render(self, result: MemoryEffects, heading: str, assets: str) -> list[str]:
        return render_effects(result, heading)
