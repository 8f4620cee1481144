"""Working-set sweep: read bandwidth against footprint, and the hierarchical ceilings it shows.

Every block re-reads its own slice of one buffer (`read_slices_ca` / `read_slices_cg` in
`validate/kernels/memory.cu`), so an SM's share of the footprint is footprint / SMs: with
``ld.global.ca`` the share is served from L1 while it fits there, with ``ld.global.cg``
(L1 bypassed) the whole footprint from L2 while it fits there, and beyond L2 everything
streams from DRAM. The plateaus are taken where the level is certain by capacity:

* L1: ``.ca`` points with footprint <= SMs x 64 KiB (a quarter of Hopper's 256 KiB L1);
* L2: ``.cg`` points with footprint <= L2 / 2 (both partitions' worth of lines stay resident);
* DRAM: every point with footprint >= 4 x L2.

Footprints between are transitions and are labelled so.
"""

from __future__ import annotations

import io
import math
import statistics
from collections.abc import Callable, Sequence
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from ..device import (
    DeviceInfo,
    Session,
    StopRules,
    benchmark,
    compile_kernels,
    format_rate,
    format_size,
    kernel_source,
    takes_session,
)
from ._probe import Figures, Probe, RunContext

__all__ = [
    "WorkingSet",
    "WorkingSetPlateaus",
    "WorkingSetPoint",
    "WorkingSetProbe",
    "footprint_level",
    "measure_working_set",
    "plot_working_set",
    "render_working_set",
    "working_set_footprints",
    "working_set_plateaus",
]

_FROZEN = ConfigDict(frozen=True, extra="forbid")
MiB, GiB = 1 << 20, 1 << 30
#: A per-SM share that surely stays in L1 (a quarter of Hopper's 256 KiB L1 and shared memory).
L1_SHARE_BYTES = 64 << 10


class WorkingSetPoint(BaseModel):
    """Read bandwidth at one footprint with one load kind."""

    model_config = _FROZEN

    cache: Literal["ca", "cg"]
    footprint_bytes: int = Field(gt=0, description="Distinct bytes the launch reads (its slices).")
    bytes_read: float = Field(gt=0, description="Bytes loaded per launch (footprint x passes).")
    median_seconds: float = Field(gt=0)
    bytes_per_second: float = Field(gt=0)
    spread: float = Field(ge=0)
    level: Literal["l1", "l2", "dram", "transition"]


class WorkingSetPlateaus(BaseModel):
    """Hierarchical read ceilings (bytes/s): the median of the points certain to hit each level."""

    model_config = _FROZEN

    l1_bytes_per_second: float | None = None
    l2_bytes_per_second: float | None = None
    dram_bytes_per_second: float | None = None
    l1_points: int = 0
    l2_points: int = 0
    dram_points: int = 0


class WorkingSet(BaseModel):
    """The sweep's points and plateaus."""

    model_config = _FROZEN

    points: tuple[WorkingSetPoint, ...]
    plateaus: WorkingSetPlateaus
    grid: int
    threads_per_block: int


def working_set_footprints(quick: bool = False) -> tuple[int, ...]:
    """Footprints of the sweep, bytes: powers of two from 1 MiB to 4 GiB (fewer when quick).

    Examples
    --------
    >>> [f >> 20 for f in working_set_footprints(quick=True)]
    [1, 8, 32, 256, 4096]
    """
    if quick:
        return (1 * MiB, 8 * MiB, 32 * MiB, 256 * MiB, 4 * GiB)
    return tuple(1 << k for k in range(20, 33))


def footprint_level(cache: str, footprint_bytes: int, *, sm_count: int, l2_cache_bytes: int) -> str:
    """The level a point reads from, by capacity: "l1", "l2", "dram" or "transition".

    An ``.ca`` point too large to be sure of L1 but small enough for L2 may be served by
    either: it is a transition, like every point between L2 / 2 and 4 x L2.

    Examples
    --------
    >>> footprint_level("ca", 1 << 20, sm_count=132, l2_cache_bytes=60 << 20)
    'l1'
    >>> footprint_level("cg", 1 << 20, sm_count=132, l2_cache_bytes=60 << 20)
    'l2'
    >>> footprint_level("ca", 16 << 20, sm_count=132, l2_cache_bytes=60 << 20)
    'transition'
    """
    if footprint_bytes >= 4 * l2_cache_bytes:
        return "dram"
    if cache == "ca":
        return "l1" if footprint_bytes <= sm_count * L1_SHARE_BYTES else "transition"
    if footprint_bytes <= l2_cache_bytes // 2:
        return "l2"
    return "transition"


def working_set_plateaus(points: Sequence[WorkingSetPoint]) -> WorkingSetPlateaus:
    """The median bandwidth of the points at each level (`footprint_level`).

    Examples
    --------
    >>> row = lambda cache, mib, rate, level: WorkingSetPoint(cache=cache, footprint_bytes=mib << 20,
    ...     bytes_read=1e9, median_seconds=1e9 / rate, bytes_per_second=rate, spread=0.0, level=level)
    >>> p = working_set_plateaus([row("ca", 1, 26e12, "l1"), row("cg", 1, 7e12, "l2"), row("cg", 4, 8e12, "l2"),
    ...                          row("cg", 64, 6e12, "transition"), row("cg", 512, 4.5e12, "dram")])
    >>> p.l1_bytes_per_second, p.l2_bytes_per_second, p.dram_bytes_per_second, p.l2_points
    (26000000000000.0, 7500000000000.0, 4500000000000.0, 2)
    """
    def median(rows: list[WorkingSetPoint]) -> float | None:
        return statistics.median(p.bytes_per_second for p in rows) if rows else None

    l1 = [p for p in points if p.level == "l1"]
    l2 = [p for p in points if p.level == "l2"]
    dram = [p for p in points if p.level == "dram"]
    return WorkingSetPlateaus(l1_bytes_per_second=median(l1), l2_bytes_per_second=median(l2),
                              dram_bytes_per_second=median(dram), l1_points=len(l1), l2_points=len(l2),
                              dram_points=len(dram))


@takes_session
def measure_working_set(session: Session, info: DeviceInfo, *, quick: bool = False,
                        progress: Callable[[str], None] = lambda message: None) -> WorkingSet:
    """Run the sweep on the device.

    Parameters
    ----------
    session : validate.Session
    info : DeviceInfo
    quick : bool
        Five footprints instead of thirteen, less data per point.
    progress : callable
        One summary line.
    """
    kernels = compile_kernels(kernel_source("memory.cu"), ["read_slices_ca", "read_slices_cg"], arch=session.arch,
                              name="memory.cu")
    threads = 256
    grid = info.sm_count * max(1, info.max_threads_per_sm // threads)
    footprints = [f for f in working_set_footprints(quick) if f <= info.memory_size_bytes // 4]
    buffer = session.allocate(max(footprints))
    session.poison(buffer, max(footprints))
    sink = session.allocate(4096)
    target = (256 if quick else 1024) * MiB
    points = []
    for footprint in footprints:
        slice_vectors = footprint // 16 // grid
        if slice_vectors == 0:
            continue
        per_launch = grid * threads * 4 * 16  # bytes of one iteration of every thread
        one_pass = math.ceil(slice_vectors / (threads * 4))
        iterations = max(one_pass, math.ceil(target / per_launch))
        for cache in ("ca", "cg"):
            run = session.launcher(kernels[f"read_slices_{cache}"], (grid, 1, 1), (threads, 1, 1),
                                   (buffer, sink, np.uint32(slice_vectors), np.int32(iterations), np.float32(1.2345e38)))
            timing = benchmark(run, timer=session.timer, rules=StopRules(warmup=1, repetitions=3 if quick else 5))
            used = slice_vectors * 16 * grid
            moved = float(iterations * per_launch)
            points.append(WorkingSetPoint(
                cache=cache, footprint_bytes=used, bytes_read=moved, median_seconds=timing.median_seconds,
                bytes_per_second=moved / timing.median_seconds, spread=timing.spread,
                level=footprint_level(cache, used, sm_count=info.sm_count, l2_cache_bytes=info.l2_cache_bytes)))
    session.synchronize()
    del buffer
    plateaus = working_set_plateaus(points)

    def tb(value: float | None) -> str:
        return "-" if value is None else f"{value / 1e12:.2f} TB/s"

    progress(f"working set: L1 {tb(plateaus.l1_bytes_per_second)}, L2 {tb(plateaus.l2_bytes_per_second)}, "
             f"DRAM {tb(plateaus.dram_bytes_per_second)} ({len(points)} points)")
    return WorkingSet(points=tuple(points), plateaus=plateaus, grid=grid, threads_per_block=threads)


def plot_working_set(working_set: WorkingSet, *, title: str, l2_cache_bytes: int, sm_count: int) -> bytes:
    """Bandwidth against footprint (log-log), both load kinds, plateaus and capacities marked: PNG bytes."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 5), constrained_layout=True)
    for cache, marker, label in (("ca", "o", "ld.global.ca (L1 + L2)"), ("cg", "s", "ld.global.cg (L2 only)")):
        rows = sorted((p for p in working_set.points if p.cache == cache), key=lambda p: p.footprint_bytes)
        ax.plot([p.footprint_bytes / MiB for p in rows], [p.bytes_per_second / 1e12 for p in rows], marker=marker,
                label=label)
    plateaus = working_set.plateaus
    for value, name, style in ((plateaus.l1_bytes_per_second, "L1", ":"), (plateaus.l2_bytes_per_second, "L2", "--"),
                               (plateaus.dram_bytes_per_second, "DRAM", "-.")):
        if value is not None:
            ax.axhline(value / 1e12, color="gray", linestyle=style, linewidth=1)
            ax.annotate(f"{name} {value / 1e12:.2f} TB/s", (1, value / 1e12), textcoords="offset points",
                        xytext=(2, 3), fontsize=8, color="gray")
    for x, name in ((sm_count * L1_SHARE_BYTES / MiB, "SMs x 64 KiB"), (l2_cache_bytes / MiB, "L2"),
                    (4 * l2_cache_bytes / MiB, "4 x L2")):
        ax.axvline(x, color="lightgray", linewidth=1)
        ax.annotate(name, xy=(x, 0.02), xycoords=("data", "axes fraction"), rotation=90, fontsize=7,
                    color="gray", xytext=(2, 2), textcoords="offset points")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("footprint (MiB)")
    ax.set_ylabel("read bandwidth (TB/s)")
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=120)
    plt.close(fig)
    return buffer.getvalue()


def render_working_set(working_set: WorkingSet, h: str = "##", image: str | None = "working_set.png") -> list[str]:
    """Bandwidth against footprint and the plateaus taken as hierarchical ceilings."""
    p = working_set.plateaus
    lines = [f"{h} Working-set sweep (hierarchical read ceilings)", "",
             f"Each of {working_set.grid} blocks of {working_set.threads_per_block} threads re-reads its own slice "
             "of the footprint; plateaus are the medians of the points certain to hit each level by capacity.", "",
             "| level | read bandwidth | points |", "| --- | --- | --- |",
             f"| L1 | {format_rate(p.l1_bytes_per_second, 'bytes_per_second')} | {p.l1_points} |",
             f"| L2 | {format_rate(p.l2_bytes_per_second, 'bytes_per_second')} | {p.l2_points} |",
             f"| DRAM | {format_rate(p.dram_bytes_per_second, 'bytes_per_second')} | {p.dram_points} |", "",
             "| footprint | ld.global.ca | level | ld.global.cg | level |", "| --- | --- | --- | --- | --- |"]
    by_size: dict[int, dict[str, WorkingSetPoint]] = {}
    for point in working_set.points:
        by_size.setdefault(point.footprint_bytes, {})[point.cache] = point
    for size in sorted(by_size):
        ca, cg = by_size[size].get("ca"), by_size[size].get("cg")
        lines.append(f"| {format_size(size)} | {format_rate(ca and ca.bytes_per_second, 'bytes_per_second')} | "
                     f"{ca.level if ca else '-'} | {format_rate(cg and cg.bytes_per_second, 'bytes_per_second')} | "
                     f"{cg.level if cg else '-'} |")
    if image:
        lines += ["", f"![working-set sweep]({image})"]
    return lines + [""]


class WorkingSetProbe(Probe[WorkingSet]):
    """The working-set sweep (`measure_working_set`); gives the calibration the read plateaus."""

    name = "working_set"
    step = "working set"

    def run(self, ctx: RunContext) -> WorkingSet:
        return measure_working_set(ctx.session, ctx.info, quick=ctx.quick, progress=ctx.progress)

    def figures(self, result: WorkingSet) -> Figures:
        plateaus = result.plateaus
        return {
            "l1_read_bytes_per_second": (
                plateaus.l1_bytes_per_second,
                f"working-set sweep, median of {plateaus.l1_points} ld.global.ca points with footprint <= SMs x 64 KiB"),
            "l2_read_bytes_per_second": (
                plateaus.l2_bytes_per_second,
                f"working-set sweep, median of {plateaus.l2_points} ld.global.cg points with footprint <= L2/2"),
            "dram_read_bytes_per_second": (
                plateaus.dram_bytes_per_second,
                f"working-set sweep, median of {plateaus.dram_points} points with footprint >= 4x L2"),
        }

    def render(self, result: WorkingSet, heading: str, assets: str) -> list[str]:
        return render_working_set(result, heading, f"{assets}working_set.png")
