"""L2 persistence: what an access-policy window buys, measured against `roofline.transfer.l2_persistence`.

The kernel (`stream_hot` in `validate/kernels/memory.cu`) streams a large array once while
re-reading a hot set, one hot vector per `ratio` streamed ones. Without a window the
stream's lines push the hot set out of L2 whenever its reuse distance (hot bytes x
(1 + ratio)) exceeds L2; with a window over the hot set (``hitProp`` persisting, ``missProp``
streaming) the designated lines stay in the set-aside part of L2. Each configuration sets
``cudaLimitPersistingL2CacheSize`` and the stream's access-policy window, resets the
persisting lines, warms up and times; afterwards the window is removed, the persisting
lines reset and the limit restored to what it was.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np
import roofline
from pydantic import BaseModel, ConfigDict, Field

from ..device import (
    DeviceError,
    DeviceInfo,
    Session,
    StopRules,
    TimingResult,
    benchmark,
    compile_kernels,
    cuda_errors,
    driver_call,
    format_size,
    kernel_source,
    takes_session,
)
from ._ceilings import Ceilings
from ._probe import Probe, RunContext
from ._workingset import WorkingSet

__all__ = [
    "Persistence",
    "PersistenceCase",
    "PersistencePoint",
    "PersistenceProbe",
    "measure_persistence",
    "persistence_cases",
    "persistence_points",
    "render_persistence",
    "repredict",
]

_FROZEN = ConfigDict(frozen=True, extra="forbid")
MiB = 1 << 20
#: Streamed vectors per hot vector (a power of two: the kernel shifts).
RATIO = 4


class PersistenceCase(BaseModel):
    """One configuration: hot-set size, window hit ratio (None: no window), set-aside."""

    model_config = _FROZEN

    hot_bytes: int = Field(gt=0)
    stream_bytes: int = Field(gt=0)
    ratio: int = Field(gt=0, description="Streamed vectors per hot vector, a power of two.")
    hit_ratio: float | None = Field(description="accessPolicyWindow.hitRatio; None for no window.")
    set_aside_bytes: int = Field(ge=0, description="cudaLimitPersistingL2CacheSize requested.")


class PersistencePoint(BaseModel):
    """A configuration, its measured time, and what `roofline.transfer.l2_persistence` predicted."""

    model_config = _FROZEN

    case: PersistenceCase
    median_seconds: float = Field(gt=0)
    spread: float = Field(ge=0)
    baseline_seconds: float = Field(
        gt=0, description="With a window: the same hot set and set-aside without it. Without one: nothing set aside.")
    measured_time_ratio: float = Field(description="median / baseline.")
    predicted_time_ratio: float | None = None
    error: float | None = Field(default=None, description="predicted / measured ratio - 1.")
    buys_nothing_predicted: bool | None = None
    reason: str = ""


class Persistence(BaseModel):
    """Every configuration measured, the device's persisting-L2 limits, and errors."""

    model_config = _FROZEN

    points: tuple[PersistencePoint, ...]
    max_persisting_bytes: int
    max_window_bytes: int
    dram_bytes_per_second: float = Field(description="Bandwidth the prediction used (the sweep's DRAM plateau).")
    l2_bytes_per_second: float = Field(description="L2 bandwidth the prediction used.")
    errors: dict[str, str] = Field(default_factory=dict)


def persistence_cases(l2_cache_bytes: int, max_persisting_bytes: int, *, quick: bool = False) -> tuple[PersistenceCase, ...]:
    """The configurations: a hot set whose reuse distance exceeds L2, at set-asides of a
    quarter, half and all of the maximum, each without a window (its baseline) and with
    windows at hit ratios 0.25 to 1; a hot set small enough to stay in L2 without help
    (where persistence buys nothing); and nothing set aside at all.

    Examples
    --------
    >>> cases = persistence_cases(60 << 20, 37_500 << 10, quick=True)
    >>> sorted({c.hit_ratio for c in cases if c.hit_ratio is not None})
    [0.5, 1.0]
    """
    # the largest power of two not above the maximum set-aside (the kernel masks the hot index)
    hot = 1 << (max(1, max_persisting_bytes).bit_length() - 1)
    small = max(MiB, 1 << ((l2_cache_bytes // 16).bit_length() - 1))
    stream = 512 * MiB if not quick else 256 * MiB
    ratios = (0.5, 1.0) if quick else (0.25, 0.5, 0.75, 1.0)
    set_asides = (max_persisting_bytes // 2, max_persisting_bytes) if quick else \
        (max_persisting_bytes // 4, max_persisting_bytes // 2, max_persisting_bytes)

    def case(size: int, ratio: float | None, set_aside: int) -> PersistenceCase:
        return PersistenceCase(hot_bytes=size, stream_bytes=stream, ratio=RATIO, hit_ratio=ratio,
                               set_aside_bytes=set_aside)

    cases = [case(hot, None, 0)]
    for set_aside in set_asides:
        cases += [case(hot, None, set_aside)] + [case(hot, r, set_aside) for r in ratios]
    cases += [case(small, None, 0), case(small, None, max_persisting_bytes), case(small, 1.0, max_persisting_bytes)]
    return tuple(cases)


def _predict(case: PersistenceCase, *, l2_cache_bytes: int, max_persisting_bytes: int, dram: float,
             l2: float) -> roofline.transfer.L2Persistence:
    hot_reads = case.stream_bytes / case.ratio
    return roofline.transfer.l2_persistence(
        roofline.transfer.AccessPolicyWindow(num_bytes=case.hot_bytes, hit_ratio=case.hit_ratio or 0.0),
        set_aside_bytes=case.set_aside_bytes if case.hit_ratio else 0, l2_cache_bytes=l2_cache_bytes,
        max_persisting_bytes=max_persisting_bytes,
        traffic=roofline.transfer.WindowTraffic(window_reads_bytes=hot_reads, other_bytes=float(case.stream_bytes),
                                                dram_bytes_per_second=dram, l2_bytes_per_second=l2))


def persistence_points(measured: Mapping[PersistenceCase, tuple[float, float]], *, l2_cache_bytes: int,
                       max_persisting_bytes: int, dram_bytes_per_second: float,
                       l2_bytes_per_second: float) -> tuple[PersistencePoint, ...]:
    """Measured time ratios of every configuration and `roofline.transfer.l2_persistence`'s prediction.

    A window is compared with the same hot set and set-aside without it; a set-aside without
    a window with nothing set aside (what reserving L2 alone costs: measured, not predicted).

    Parameters
    ----------
    measured : mapping
        Case to (median seconds, spread).
    l2_cache_bytes, max_persisting_bytes : int
        The device's L2 and persisting maximum.
    dram_bytes_per_second, l2_bytes_per_second : float
        Bandwidths the prediction uses.
    """
    points = []
    for case, (seconds, spread) in measured.items():
        windowed = case.hit_ratio is not None
        baseline_case = case.model_copy(update={"hit_ratio": None} if windowed else {"set_aside_bytes": 0})
        if baseline_case not in measured or baseline_case == case:
            continue
        baseline = measured[baseline_case][0]
        measured_ratio = seconds / baseline
        if not windowed:
            points.append(PersistencePoint(
                case=case, median_seconds=seconds, spread=spread, baseline_seconds=baseline,
                measured_time_ratio=measured_ratio, reason="set-aside alone, no window: measured, not predicted"))
            continue
        prediction = _predict(case, l2_cache_bytes=l2_cache_bytes, max_persisting_bytes=max_persisting_bytes,
                              dram=dram_bytes_per_second, l2=l2_bytes_per_second)
        points.append(PersistencePoint(
            case=case, median_seconds=seconds, spread=spread, baseline_seconds=baseline,
            measured_time_ratio=measured_ratio, predicted_time_ratio=prediction.time_ratio,
            error=prediction.time_ratio / measured_ratio - 1.0, buys_nothing_predicted=prediction.buys_nothing,
            reason=prediction.reason))
    return tuple(points)


def repredict(persistence: Persistence, *, l2_cache_bytes: int) -> Persistence:
    """`persistence` with every prediction recomputed from its recorded times by today's model."""
    measured: dict[PersistenceCase, tuple[float, float]] = {}
    for p in persistence.points:
        measured[p.case] = (p.median_seconds, p.spread)
        baseline = p.case.model_copy(update={"hit_ratio": None} if p.case.hit_ratio is not None
                                     else {"set_aside_bytes": 0})
        measured.setdefault(baseline, (p.baseline_seconds, 0.0))
    points = persistence_points(measured, l2_cache_bytes=l2_cache_bytes,
                                max_persisting_bytes=persistence.max_persisting_bytes,
                                dram_bytes_per_second=persistence.dram_bytes_per_second,
                                l2_bytes_per_second=persistence.l2_bytes_per_second)
    order = {p.case: i for i, p in enumerate(persistence.points)}
    return persistence.model_copy(update={"points": tuple(sorted(points, key=lambda p: order.get(p.case, 1 << 30)))})


@takes_session
def measure_persistence(session: Session, info: DeviceInfo, *, dram_bytes_per_second: float, l2_bytes_per_second: float,
                        quick: bool = False, progress: Callable[[str], None] = lambda message: None) -> Persistence:
    """Measure every `persistence_cases` configuration and compare with `roofline.transfer.l2_persistence`.

    Parameters
    ----------
    session : validate.Session
    info : DeviceInfo
        L2 size and the persisting maximum.
    dram_bytes_per_second, l2_bytes_per_second : float
        Bandwidths the prediction uses (measured in this run).
    quick : bool
        Fewer configurations.
    progress : callable
        One summary line.

    Raises
    ------
    DeviceError
        When the device has no persisting L2 (``max_persisting_l2_bytes`` is 0).
    """
    if info.max_persisting_l2_bytes <= 0:
        raise DeviceError("the device has no persisting L2 (persistingL2CacheMaxSize is 0)")
    driver = session.cuda.driver
    stream = session.stream.handle
    kernel = compile_kernels(kernel_source("memory.cu"), ["stream_hot"], arch=session.arch, name="memory.cu")["stream_hot"]
    max_window = int(driver_call(driver.cuDeviceGetAttribute,
                                 driver.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE,
                                 session.device.device_id))
    cases = persistence_cases(info.l2_cache_bytes, info.max_persisting_l2_bytes, quick=quick)
    threads = 256
    grid = info.sm_count * max(1, info.max_threads_per_sm // threads)
    stream_buffer = session.allocate(max(c.stream_bytes for c in cases))
    hot_buffer = session.allocate(max(c.hot_bytes for c in cases))
    sink = session.allocate(4096)
    for buffer, size in ((stream_buffer, max(c.stream_bytes for c in cases)), (hot_buffer, max(c.hot_bytes for c in cases))):
        session.poison(buffer, size)
    limit = driver.CUlimit.CU_LIMIT_PERSISTING_L2_CACHE_SIZE
    original = int(driver_call(driver.cuCtxGetLimit, limit))
    attribute = driver.CUstreamAttrID.CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW

    def window(case: PersistenceCase) -> None:
        value = driver.CUstreamAttrValue()
        w = value.accessPolicyWindow
        w.base_ptr = int(hot_buffer.handle)
        w.num_bytes = min(case.hot_bytes, max_window) if case.hit_ratio else 0
        w.hitRatio = float(case.hit_ratio or 0.0)
        w.hitProp = driver.CUaccessProperty.CU_ACCESS_PROPERTY_PERSISTING
        w.missProp = driver.CUaccessProperty.CU_ACCESS_PROPERTY_STREAMING
        driver_call(driver.cuStreamSetAttribute, stream, attribute, value)

    timings: dict[PersistenceCase, TimingResult] = {}
    errors: dict[str, str] = {}
    try:
        for case in cases:
            with cuda_errors("setting the persisting-L2 limit"):
                session.synchronize()
                driver_call(driver.cuCtxSetLimit, limit, case.set_aside_bytes)
                window(case)
                driver_call(driver.cuCtxResetPersistingL2Cache)
            run = session.launcher(kernel, (grid, 1, 1), (threads, 1, 1),
                                   (stream_buffer, np.int64(case.stream_bytes // 16), hot_buffer,
                                    np.int64(case.hot_bytes // 16 - 1), np.int32(case.ratio.bit_length() - 1), sink,
                                    np.float32(1.2345e38)))
            timings[case] = benchmark(run, timer=session.timer,
                                      rules=StopRules(warmup=2, repetitions=5 if quick else 10))
    except DeviceError as exc:
        errors["persistence"] = str(exc)
    finally:
        session.synchronize()
        window(PersistenceCase(hot_bytes=16, stream_bytes=16, ratio=1, hit_ratio=None, set_aside_bytes=0))
        driver_call(driver.cuCtxResetPersistingL2Cache)
        driver_call(driver.cuCtxSetLimit, limit, original)
    del stream_buffer, hot_buffer
    points = persistence_points({case: (t.median_seconds, t.spread) for case, t in timings.items()},
                                l2_cache_bytes=info.l2_cache_bytes, max_persisting_bytes=info.max_persisting_l2_bytes,
                                dram_bytes_per_second=dram_bytes_per_second, l2_bytes_per_second=l2_bytes_per_second)
    with_window = [p for p in points if p.case.hit_ratio is not None]
    if with_window:
        best = min(with_window, key=lambda p: p.measured_time_ratio)
        worst = max(abs(p.error) for p in with_window if p.error is not None)
        progress(f"L2 persistence: {len(with_window)} windows, best time ratio {best.measured_time_ratio:.2f} "
                 f"(hit ratio {best.case.hit_ratio}, set-aside {best.case.set_aside_bytes >> 20} MiB); "
                 f"worst prediction error {worst:.0%}")
    return Persistence(points=tuple(points), max_persisting_bytes=info.max_persisting_l2_bytes,
                       max_window_bytes=max_window, dram_bytes_per_second=dram_bytes_per_second,
                       l2_bytes_per_second=l2_bytes_per_second, errors=errors)


def render_persistence(persistence: Persistence, h: str = "##") -> list[str]:
    """Measured against predicted time ratios of the access-policy windows."""
    lines = [f"{h} L2 persistence (access-policy window)", "",
             f"persistingL2CacheMaxSize {format_size(persistence.max_persisting_bytes)}, accessPolicyMaxWindowSize "
             f"{format_size(persistence.max_window_bytes)}. Time ratio = with the window / without; predicted by "
             f"`roofline.transfer.l2_persistence` with DRAM {persistence.dram_bytes_per_second / 1e12:.2f} TB/s and L2 "
             f"{persistence.l2_bytes_per_second / 1e12:.2f} TB/s.", "",
             "| hot set | stream | hit ratio | set-aside | time (us) | baseline (us) | measured ratio | predicted "
             "| error | buys nothing (predicted) | why |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for p in persistence.points:
        c = p.case
        lines.append(
            f"| {format_size(c.hot_bytes)} | {format_size(c.stream_bytes)} | {'none' if c.hit_ratio is None else c.hit_ratio} | "
            f"{format_size(c.set_aside_bytes) if c.set_aside_bytes else '0'} | {p.median_seconds * 1e6:,.1f} | "
            f"{p.baseline_seconds * 1e6:,.1f} | {p.measured_time_ratio:.3f} | "
            f"{'-' if p.predicted_time_ratio is None else f'{p.predicted_time_ratio:.3f}'} | "
            f"{'-' if p.error is None else f'{p.error:+.1%}'} | "
            f"{'-' if p.buys_nothing_predicted is None else ('yes' if p.buys_nothing_predicted else 'no')} | "
            f"{p.reason} |")
    for name, error in persistence.errors.items():
        lines.append(f"- {name}: {error}")
    return lines + [""]


class PersistenceProbe(Probe[Persistence]):
    """L2 persistence (`measure_persistence`), predicted with the working-set plateaus (the
    ceilings where the sweep failed); not run without both rates."""

    name = "persistence"
    step = "l2 persistence"

    def run(self, ctx: RunContext) -> Persistence | None:
        working_set = ctx.result("working_set", WorkingSet)
        plateaus = working_set.plateaus if working_set is not None else None
        ceilings = ctx.result("ceilings", Ceilings)
        dram_rate = (plateaus and plateaus.dram_bytes_per_second) or (ceilings and ceilings.value("dram_read"))
        l2_rate = (plateaus and plateaus.l2_bytes_per_second) or (ceilings and ceilings.value("l2_read"))
        if not (dram_rate and l2_rate):
            return None
        return measure_persistence(ctx.session, ctx.info, dram_bytes_per_second=dram_rate,
                                   l2_bytes_per_second=l2_rate, quick=ctx.quick, progress=ctx.progress)

    def render(self, result: Persistence, heading: str, assets: str) -> list[str]:
        return render_persistence(result, heading)
