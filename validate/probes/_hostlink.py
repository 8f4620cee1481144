"""Host links: what moving data between host and device costs, each way, 4 KiB to 1 GiB.

Four kinds of host memory, both directions:

* **pinned** (``cuMemHostAlloc``): ``cuMemcpy*Async`` timed with CUDA events behind a spin
  kernel (`QueuedEventTimer`), so the GPU-side time of the DMA only;
* **pageable** (a numpy array): the synchronous ``cuMemcpyHtoD``/``DtoH``, timed on the host
  clock, because the driver stages pageable memory through a pinned buffer on the CPU and
  part of that work runs before any event on the stream could see it;
* **mapped** (pinned and mapped into the device's address space): a kernel reads (host to
  device) or writes (device to host) host memory in place, events behind a spin kernel;
* **managed** (``cuMemAllocManaged``): first touch migrates pages (host to device: the host
  writes, then a kernel reads, timed with plain events, the launch's own driver work
  included; device to host: a kernel writes, then the host reads, host clock) and second
  touch finds them resident. Never more than the card has free.

`fit_link` fits ``seconds = latency + bytes / rate`` to the sizes >= 1 MiB of each kind and
direction, minimising the largest relative error. Where one line misses some size by more
than 10% (on an H200 host, pageable host-to-device copies ran at 17 GB/s up to 64 MiB and at
9.5 GB/s from 256 MiB), `fit_segments` splits the sizes in two at the point that fits best,
each segment with its own latency and rate. ``roofline.transfer.transfer_time`` uses those fits.
"""

from __future__ import annotations

import ctypes
import math
from collections.abc import Callable, Sequence
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field
from roofline import RooflineError

from roofline.transfer import LinkSegment

from ..device import (
    DeviceError,
    DeviceInfo,
    EventTimer,
    MAX_SECONDS,
    Session,
    StopRules,
    TimingResult,
    benchmark,
    compile_kernels,
    driver_call,
    format_size,
    kernel_source,
    positive_series,
    takes_session,
)
from ._probe import Probe, RunContext

__all__ = [
    "HostLinkFit",
    "HostLinkPoint",
    "HostLinks",
    "HostLinksProbe",
    "LinkSegment",
    "fit_link",
    "fit_links",
    "fit_segments",
    "host_link_sizes",
    "measure_host_links",
    "render_host_links",
]

_FROZEN = ConfigDict(frozen=True, extra="forbid")
KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30
#: Sizes at and above this are fitted and held to the 15% criterion.
FIT_MIN_BYTES = 1 * MiB
#: One segment is kept when it fits every size within this; otherwise two are tried.
ONE_SEGMENT_TOLERANCE = 0.10

Memory = Literal["pinned", "pageable", "mapped", "managed"]
Direction = Literal["h2d", "d2h"]


class HostLinkPoint(BaseModel):
    """One transfer size of one kind of host memory in one direction."""

    model_config = _FROZEN

    memory: Memory
    direction: Direction
    touch: Literal["first", "second"] | None = Field(default=None, description="Managed memory only.")
    bytes: int = Field(gt=0)
    median_seconds: float = Field(gt=0)
    bytes_per_second: float = Field(gt=0)
    spread: float = Field(ge=0)
    repetitions: int = Field(gt=0)
    timer: Literal["events", "host"] = Field(
        description="events: CUDA events behind a spin kernel (GPU-side); host: perf_counter around a blocking call.")


class HostLinkFit(BaseModel):
    """The fit of one kind and direction: one segment, or two split at a size."""

    model_config = _FROZEN

    memory: Memory
    direction: Direction
    segments: tuple[LinkSegment, ...] = Field(min_length=1, max_length=2)
    max_relative_error: float = Field(ge=0, description="Largest |fit - measured| / measured over the fitted sizes.")
    sizes: tuple[int, ...] = Field(description="Sizes fitted, bytes.")

    @property
    def bytes_per_second(self) -> float:
        """The rate of the largest transfers (the last segment)."""
        return self.segments[-1].bytes_per_second

    @property
    def latency_seconds(self) -> float:
        """The fixed cost of the first segment."""
        return self.segments[0].latency_seconds

    def seconds(self, nbytes: float) -> float:
        """The fitted time of a transfer of `nbytes`."""
        segment = [s for s in self.segments if s.from_bytes <= nbytes] or [self.segments[0]]
        return segment[-1].latency_seconds + nbytes / segment[-1].bytes_per_second


class HostLinks(BaseModel):
    """Every transfer measured, the fits, and what could not be measured."""

    model_config = _FROZEN

    points: tuple[HostLinkPoint, ...]
    fits: tuple[HostLinkFit, ...]
    errors: dict[str, str] = Field(default_factory=dict)

    def fit(self, memory: str, direction: str) -> HostLinkFit | None:
        """The fit of one kind and direction, None when not measured."""
        return next((f for f in self.fits if f.memory == memory and f.direction == direction), None)


def host_link_sizes(quick: bool = False) -> tuple[int, ...]:
    """Transfer sizes, bytes: 4 KiB x 4^k up to 1 GiB (three sizes when quick).

    Examples
    --------
    >>> [s >> 10 for s in host_link_sizes(quick=True)]
    [4, 1024, 65536]
    """
    if quick:
        return (4 * KiB, 1 * MiB, 64 * MiB)
    return tuple(4 * KiB * 4**k for k in range(10))


def fit_link(sizes: Sequence[int], seconds: Sequence[float]) -> tuple[float, float, float]:
    """Fit ``t = latency + bytes / rate`` minimising the largest relative error.

    Parameters
    ----------
    sizes : sequence of int
        Bytes, at least two distinct.
    seconds : sequence of float
        Measured times, > 0.

    Returns
    -------
    (latency_seconds, bytes_per_second, max_relative_error)

    Raises
    ------
    roofline.RooflineError
        Fewer than two distinct sizes, lengths that differ, a size outside [1, 2**63] bytes
        or a time outside [1 ns, 1 day].
    TypeError
        When `sizes` or `seconds` is not a sequence of numbers.

    Examples
    --------
    >>> sizes = [1 << 20, 1 << 24, 1 << 28]
    >>> latency, rate, error = fit_link(sizes, [10e-6 + s / 50e9 for s in sizes])
    >>> round(latency * 1e6, 1), round(rate / 1e9, 1), error < 1e-3
    (10.0, 50.0, True)
    """
    # A timed copy is at least a nanosecond and at most a day; sizes fit in 64 bits.
    b = positive_series("sizes", sizes, 1, 2.0**63, " bytes")
    t = positive_series("seconds", seconds, 1e-9, MAX_SECONDS, " s")
    if len(b) != len(t):
        raise RooflineError(f"sizes has {len(b)} values and seconds {len(t)}; give one time per size")
    if len(set(b.tolist())) < 2:
        raise RooflineError(f"need two distinct sizes to fit a latency and a rate, got {sorted(set(b.tolist()))}")

    def worst(latency: np.ndarray, inverse_rate: np.ndarray) -> np.ndarray:
        model = latency[..., None] + inverse_rate[..., None] * b
        return np.abs(model / t - 1.0).max(axis=-1)

    # For a given latency the error is convex in 1/rate: search a coarse grid of both,
    # then zoom in around the best pair twice.
    lat_hi = float(t.min())
    latencies = np.concatenate([[0.0], np.geomspace(lat_hi * 1e-4, lat_hi * 0.999, 200)])
    slopes = t / b
    inverse = np.geomspace(slopes.min() * 0.5, slopes.max() * 1.5, 600)
    best = (0.0, float(inverse[0]), math.inf)
    for _ in range(3):
        grid_l, grid_x = np.meshgrid(latencies, inverse, indexing="ij")
        errors = worst(grid_l, grid_x)
        i, j = np.unravel_index(int(np.argmin(errors)), errors.shape)
        if errors[i, j] < best[2]:
            best = (float(grid_l[i, j]), float(grid_x[i, j]), float(errors[i, j]))
        lat, x = best[0], best[1]
        span_l = max(lat * 0.2, lat_hi * 1e-4)
        latencies = np.clip(np.linspace(lat - span_l, lat + span_l, 121), 0.0, lat_hi)
        inverse = np.linspace(x * 0.97, x * 1.03, 241)
    return best[0], 1.0 / best[1], best[2]


def fit_segments(sizes: Sequence[int], seconds: Sequence[float], *,
                 tolerance: float = ONE_SEGMENT_TOLERANCE) -> tuple[tuple[LinkSegment, ...], float]:
    """One `fit_link` segment, or two when one misses a size by more than `tolerance`.

    Two segments split the sorted sizes at the point that gives the smallest largest
    error; a segment of one size has no latency of its own (rate = bytes / seconds).

    Returns
    -------
    (segments, max_relative_error)

    Examples
    --------
    >>> sizes = [1 << 20, 1 << 22, 1 << 24, 1 << 26, 1 << 28, 1 << 30]
    >>> times = [s / 17e9 if s <= 1 << 26 else s / 9.5e9 for s in sizes]
    >>> segments, error = fit_segments(sizes, times)
    >>> len(segments), segments[1].from_bytes == 1 << 28, error < 0.01
    (2, True, True)
    """
    order = np.argsort(np.asarray(sizes))
    b = [int(sizes[i]) for i in order]
    t = [float(seconds[i]) for i in order]

    def segment(lo: int, hi: int) -> tuple[LinkSegment, float]:
        if hi - lo == 1:
            return LinkSegment(from_bytes=b[lo], latency_seconds=0.0, bytes_per_second=b[lo] / t[lo]), 0.0
        latency, rate, error = fit_link(b[lo:hi], t[lo:hi])
        return LinkSegment(from_bytes=b[lo], latency_seconds=latency, bytes_per_second=rate), error

    one, error = segment(0, len(b))
    best: tuple[tuple[LinkSegment, ...], float] = ((one.model_copy(update={"from_bytes": 0}),), error)
    if error <= tolerance or len(b) < 3:
        return best
    for split in range(2, len(b)):
        (left, e_left), (right, e_right) = segment(0, split), segment(split, len(b))
        if max(e_left, e_right) < best[1]:
            best = ((left.model_copy(update={"from_bytes": 0}), right), max(e_left, e_right))
    return best


def fit_links(points: Sequence[HostLinkPoint], *, min_bytes: int = FIT_MIN_BYTES) -> tuple[HostLinkFit, ...]:
    """One `fit_segments` per kind and direction over its sizes >= `min_bytes`.

    Managed memory is fitted on its first touch (the migration); second touches find the
    pages resident and are not a link transfer.
    """
    fits = []
    groups: dict[tuple[str, str], list[HostLinkPoint]] = {}
    for p in points:
        if p.bytes >= min_bytes and p.touch != "second":
            groups.setdefault((p.memory, p.direction), []).append(p)
    for (memory, direction), rows in sorted(groups.items()):
        if len({p.bytes for p in rows}) < 2:
            continue
        rows.sort(key=lambda p: p.bytes)
        segments, error = fit_segments([p.bytes for p in rows], [p.median_seconds for p in rows])
        fits.append(HostLinkFit(memory=memory, direction=direction, segments=segments, max_relative_error=error,
                                sizes=tuple(p.bytes for p in rows)))
    return tuple(fits)


def _repetitions(nbytes: int, quick: bool) -> int:
    if nbytes <= MiB:
        return 10 if quick else 20
    if nbytes <= 64 * MiB:
        return 5 if quick else 10
    return 3 if nbytes > 256 * MiB or quick else 5


def _host_view(pointer: int, nbytes: int) -> np.ndarray:
    return np.frombuffer((ctypes.c_char * nbytes).from_address(pointer), dtype=np.uint8)


@takes_session
def measure_host_links(session: Session, info: DeviceInfo, *, quick: bool = False,
                       progress: Callable[[str], None] = lambda message: None) -> HostLinks:
    """Measure every kind of host memory, both directions, over `host_link_sizes`.

    Parameters
    ----------
    session : validate.Session
    info : DeviceInfo
        Sizes the kernels' grids.
    quick : bool
        Three sizes instead of ten.
    progress : callable
        One line per kind and direction.

    Returns
    -------
    HostLinks
        A kind that fails is recorded in ``errors``; managed sizes the card has no room for
        are skipped (and said so).
    """
    bench = _LinkBench(session, info, quick)
    for name, step in (("pinned and mapped", bench.pinned_and_mapped), ("pageable", bench.pageable),
                       ("managed", bench.managed)):
        try:
            step()
        except (DeviceError, ValueError, MemoryError) as exc:
            bench.errors[name] = str(exc)
            progress(f"host link {name}: failed: {exc}")
    del bench.device
    fits = fit_links(bench.points)
    for fit in fits:
        shown = "; ".join((f"from {s.from_bytes >> 20} MiB " if s.from_bytes else "") +
                          f"{s.bytes_per_second / 1e9:.1f} GB/s + {s.latency_seconds * 1e6:.1f} us" for s in fit.segments)
        progress(f"host link {fit.memory} {fit.direction}: {shown} (fit within {fit.max_relative_error:.0%} >= 1 MiB)")
    return HostLinks(points=tuple(bench.points), fits=fits, errors=bench.errors)


class _LinkBench:
    """One session's transfers over `host_link_sizes`: a device buffer of the largest size, the
    kernels that read and write host memory in place, and the points measured so far."""

    def __init__(self, session: Session, info: DeviceInfo, quick: bool) -> None:
        self.session, self.quick = session, quick
        self.driver = session.cuda.driver
        self.stream = session.stream
        self.kernels = compile_kernels(kernel_source("memory.cu"), ["read_once", "write_once"], arch=session.arch,
                                       name="memory.cu")
        self.sizes = host_link_sizes(quick)
        self.largest = max(self.sizes)
        self.points: list[HostLinkPoint] = []
        self.errors: dict[str, str] = {}
        self.sink = session.allocate(4096)
        self.device = session.allocate(self.largest)
        self.threads = 256
        self.wave = info.sm_count * max(1, info.max_threads_per_sm // self.threads)
        self.first_touch_timer = EventTimer(self.stream)
        self.host_timer = session.host_timer

    def kernel_launch(self, name: str, pointer: int, nbytes: int) -> Callable[[], None]:
        """`read_once` or `write_once` over `nbytes` at `pointer` (at most one wave of blocks)."""
        vectors = nbytes // 16
        grid = (min(self.wave, math.ceil(vectors / self.threads)), 1, 1)
        args = ((np.uint64(pointer), self.sink, np.int64(vectors), np.float32(1.2345e38)) if name == "read_once"
                else (np.uint64(pointer), np.int64(vectors), np.float32(1.0)))
        return self.session.launcher(self.kernels[name], grid, (self.threads, 1, 1), args)

    def record(self, memory: str, direction: str, nbytes: int, timing: TimingResult, timer: str,
               touch: str | None = None) -> None:
        self.points.append(HostLinkPoint(memory=memory, direction=direction, touch=touch, bytes=nbytes,
                                         median_seconds=timing.median_seconds,
                                         bytes_per_second=nbytes / timing.median_seconds, spread=timing.spread,
                                         repetitions=timing.repetitions, timer=timer))

    def pinned_and_mapped(self) -> None:
        """Async copies from and to pinned memory, and kernels that read or write it mapped."""
        driver, session, stream, largest = self.driver, self.session, self.stream, self.largest
        host = driver_call(driver.cuMemHostAlloc, largest, driver.CU_MEMHOSTALLOC_DEVICEMAP)
        try:
            _host_view(int(host), largest)[:] = 1  # touch every page before timing
            mapped = int(driver_call(driver.cuMemHostGetDevicePointer, host, 0))
            dev = int(self.device.handle)
            for n in self.sizes:
                rules = StopRules(warmup=2, repetitions=_repetitions(n, self.quick))
                h2d = benchmark(lambda n=n: driver_call(driver.cuMemcpyHtoDAsync, dev, host, n, stream.handle),
                                timer=session.timer, rules=rules)
                self.record("pinned", "h2d", n, h2d, "events")
                d2h = benchmark(lambda n=n: driver_call(driver.cuMemcpyDtoHAsync, host, dev, n, stream.handle),
                                timer=session.timer, rules=rules)
                self.record("pinned", "d2h", n, d2h, "events")
                self.record("mapped", "h2d", n, benchmark(self.kernel_launch("read_once", mapped, n),
                                                          timer=session.timer, rules=rules), "events")
                self.record("mapped", "d2h", n, benchmark(self.kernel_launch("write_once", mapped, n),
                                                          timer=session.timer, rules=rules), "events")
        finally:
            session.synchronize()
            driver_call(driver.cuMemFreeHost, host)

    def pageable(self) -> None:
        """Synchronous copies from and to a numpy array, on the host clock."""
        driver, host_timer = self.driver, self.host_timer
        host = np.ones(self.largest, dtype=np.uint8)  # written, so every page is mapped before timing
        dev = int(self.device.handle)
        for n in self.sizes:
            rules = StopRules(warmup=2, repetitions=_repetitions(n, self.quick))
            self.record("pageable", "h2d", n,
                        benchmark(lambda n=n: driver_call(driver.cuMemcpyHtoD, dev, host.ctypes.data, n),
                                  timer=host_timer, rules=rules), "host")
            self.record("pageable", "d2h", n,
                        benchmark(lambda n=n: driver_call(driver.cuMemcpyDtoH, host.ctypes.data, dev, n),
                                  timer=host_timer, rules=rules), "host")

    def managed(self) -> None:
        """Managed memory's first touch (the migration) and second touch, each way, where it fits."""
        driver = self.driver
        destination = np.ones(self.largest, dtype=np.uint8)
        for n in self.sizes:
            free, _total = driver_call(driver.cuMemGetInfo)
            if int(free) < 2 * n + 512 * MiB:
                # Asking for more managed memory than the card has free can hang the GPU.
                self.errors[f"managed {n} B"] = f"skipped: only {int(free)} bytes free"
                continue
            pointer = int(driver_call(driver.cuMemAllocManaged, n, driver.CUmemAttach_flags.CU_MEM_ATTACH_GLOBAL))
            try:
                self._managed_size(pointer, n, destination)
            finally:
                self.session.synchronize()
                driver_call(driver.cuMemFree, pointer)

    def _managed_size(self, pointer: int, n: int, destination: np.ndarray) -> None:
        session, host_timer = self.session, self.host_timer
        view = _host_view(pointer, n)
        reps = max(2, _repetitions(n, self.quick) // 2)
        first, second = StopRules(warmup=0, repetitions=reps), StopRules(warmup=1, repetitions=reps)
        read = self.kernel_launch("read_once", pointer, n)
        write = self.kernel_launch("write_once", pointer, n)

        def to_host() -> None:
            session.synchronize()
            view[:] = 2  # the host writes every page: they then live in host memory

        def to_device() -> None:
            write()
            session.synchronize()

        # Plain events, not the queued timer: that one retakes a late sample, and a
        # retake would find the pages already migrated (the launch after a host
        # write is slow enough to be late).
        self.record("managed", "h2d", n, benchmark(read, timer=self.first_touch_timer, rules=first, flush=to_host),
                    "events", "first")
        self.record("managed", "h2d", n, benchmark(read, timer=session.timer, rules=second), "events", "second")
        copy = lambda: np.copyto(destination[:n], view)  # noqa: E731 - the host reads every page
        self.record("managed", "d2h", n, benchmark(copy, timer=host_timer, rules=first, flush=to_device),
                    "host", "first")
        self.record("managed", "d2h", n, benchmark(copy, timer=host_timer, rules=second), "host", "second")


def render_host_links(links: HostLinks, h: str = "##") -> list[str]:
    """Every host-link transfer and the fits `roofline.transfer.transfer_time` uses."""
    lines = [f"{h} Host links", "",
             "Pinned and mapped: CUDA events behind a spin kernel (GPU-side). Pageable and managed device-to-host: "
             "host clock around the blocking call (the CPU's staging or page faults are part of the cost). "
             "Managed: first touch migrates the pages, second touch finds them resident.", "",
             "Fit: seconds = latency + bytes / rate over the sizes >= 1 MiB (two segments where one line misses "
             "a size by more than 10%); `roofline.transfer.transfer_time` uses it.", "",
             "| memory | direction | from | fit: rate | fit: latency | worst fit error >= 1 MiB |",
             "| --- | --- | --- | --- | --- | --- |"]
    for fit in links.fits:
        for segment in fit.segments:
            lines.append(f"| {fit.memory} | {fit.direction} | {format_size(segment.from_bytes) if segment.from_bytes else '-'} "
                         f"| {segment.bytes_per_second / 1e9:.2f} GB/s | {segment.latency_seconds * 1e6:.1f} us "
                         f"| {fit.max_relative_error:.1%} |")
    kinds = sorted({(p.memory, p.direction, p.touch or "") for p in links.points})
    sizes = sorted({p.bytes for p in links.points})
    table = {(p.memory, p.direction, p.touch or "", p.bytes): p for p in links.points}
    lines += ["", "| size | " + " | ".join(f"{m} {d}{' ' + t if t else ''}" for m, d, t in kinds) + " |",
              "| --- |" + " --- |" * len(kinds)]
    for size in sizes:
        cells = []
        for m, d, t in kinds:
            p = table.get((m, d, t, size))
            cells.append("-" if p is None else f"{p.bytes_per_second / 1e9:.2f} GB/s ({p.median_seconds * 1e6:,.1f} us)")
        lines.append(f"| {format_size(size)} | " + " | ".join(cells) + " |")
    for name, error in links.errors.items():
        lines.append(f"- {name}: {error}")
    return lines + [""]


class HostLinksProbe(Probe[HostLinks]):
    """Host links (`measure_host_links`): pinned, pageable, mapped and managed transfers and their fits."""

    name = "host_links"
    step = "host links"

    def run(self, ctx: RunContext) -> HostLinks:
        return measure_host_links(ctx.session, ctx.info, quick=ctx.quick, progress=ctx.progress)

    def render(self, result: HostLinks, heading: str, assets: str) -> list[str]:
        return render_host_links(result, heading)
