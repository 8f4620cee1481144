"""Calibrating and checking `roofline.predict` on a GPU: pointer chase, copy sweep, a cliff.

The sweep launches one copy kernel over block sizes, resident blocks per SM (limited with
dynamic shared memory) and independent elements per thread, so that the bytes in flight
range from a trickle to far past the bandwidth-delay product. The block sizes 64 and 1024
(the extremes) of the sweep fit the model's latency, SM bandwidth, block-dispatch interval and knee
(`CALIBRATION_FIT_PARAMETERS`; the fit calls `roofline.predict` at every point, `validate.probes._fit`);
every other point is a prediction the fit never saw. Where the launch probe measured the block
ramp (one block after another on an SM), the fit leaves the dispatch interval out (`sweep_base`):
the sweep's launches that the block scheduler binds measure it on their own, before the fit
(`scheduler_interval`). The pointer chase (one thread, one
dependent load at a time) is reported beside them: it is the latency of a lone load,
shorter than a block's load-to-retire round trip that the model needs.
"""

from __future__ import annotations

import functools
import itertools
import math
import statistics
from collections.abc import Callable, Mapping, Sequence

import numpy as np
import occupancy
from occupancy.common import Displayed, Shown, percent, shown, si
import roofline
from pydantic import BaseModel, ConfigDict, Field
from roofline import RooflineError, models

from ..device import (
    JsonDict,
    Session,
    StopRules,
    benchmark,
    compile_kernels,
    kernel_resources,
    kernel_source,
    takes_session,
    with_defines,
)
from ._fit import CALIBRATION_FIT_PARAMETERS, CalibrationFit, FIT_EVALUATIONS, FitParameter, fit_to_measurements
from ._probe import Probe, RunContext

__all__ = [
    "CliffCheck",
    "PredictionCheck",
    "PredictionCheckProbe",
    "SweepPoint",
    "fit_calibration",
    "fit_sweep",
    "predict_sweep_point",
    "run_prediction_check",
    "scheduler_interval",
    "sweep_base",
    "sweep_configurations",
]

_FROZEN = ConfigDict(frozen=True, extra="forbid")

#: Elements of the swept copy (float32): 256 MiB per array, far past any L2.
SWEEP_ELEMENTS = 1 << 26
SWEEP_BLOCK_SIZES = (64, 128, 256, 512, 1024)
SWEEP_ELEMENTS_PER_THREAD = (1, 2, 4, 8)
#: Resident-block limits; None means no limit (the kernel's natural occupancy).
SWEEP_BLOCK_LIMITS: tuple[int | None, ...] = (1, 2, 4, None)
CALIBRATION_BLOCK_SIZE = 256
#: Block sizes whose sweep points calibrate the model; the others only check it.
CALIBRATION_BLOCK_SIZES = (64, 1024)
TOLERANCE = 0.15


class SweepPoint(BaseModel):
    """One launch of the swept copy kernel: its configuration, measurement and prediction."""

    model_config = _FROZEN

    block_size: int
    elements_per_thread: int
    blocks_per_sm_limit: int | None
    dynamic_shared_memory: int
    registers_per_thread: int
    active_blocks_per_sm: int
    runtime_active_blocks_per_sm: int | None
    measured_seconds: float
    measured_bytes_per_second: float
    predicted_seconds: float | None = None
    predicted_bytes_per_second: float | None = None
    limiter: str | None = None
    used_for_calibration: bool = False

    @property
    def error(self) -> float | None:
        """Predicted over measured bandwidth, minus one."""
        if self.predicted_bytes_per_second is None:
            return None
        return self.predicted_bytes_per_second / self.measured_bytes_per_second - 1.0


class CliffCheck(BaseModel):
    """Time on both sides of one shared-memory occupancy cliff, measured and predicted."""

    model_config = _FROZEN

    block_size: int
    dynamic_shared_memory_before: int
    dynamic_shared_memory_after: int
    active_blocks_before: int
    active_blocks_after: int
    measured_seconds_before: float
    measured_seconds_after: float
    predicted_seconds_before: float
    predicted_seconds_after: float


class PredictionCheck(Displayed):
    """Everything the prediction check measured, ready for a report."""

    model_config = _FROZEN

    gpu: str
    calibration: JsonDict
    pointer_chase_latency_seconds: float
    launch_overhead_seconds: float
    sweep: tuple[SweepPoint, ...]
    cliff: CliffCheck | None
    within_tolerance: int
    points: int
    median_abs_error: float
    max_abs_error: float
    tolerance: float = TOLERANCE
    fit: CalibrationFit | None = Field(
        default=None, description="How the calibration was fitted, with its error on the fitted and held-out points.")

    headline = (
        shown("gpu"), Shown("within_tolerance", lambda c: f"{c.within_tolerance} of {c.points} (±{c.tolerance:.0%})"),
        shown("median_abs_error", percent, label="median_error"), shown("max_abs_error", percent, label="max_error"),
        shown("pointer_chase_latency_seconds", si("s"), label="dram_latency"),
    )


def sweep_configurations(quick: bool = False) -> list[tuple[int, int, int | None]]:
    """(block size, elements per thread, resident-block limit) of every sweep point.

    The quick sweep keeps the calibration block size and the extremes of the other axes.
    """
    if quick:
        return list(itertools.product((128, CALIBRATION_BLOCK_SIZE, 1024), (1, 4), (1, 4, None)))
    return list(itertools.product(SWEEP_BLOCK_SIZES, SWEEP_ELEMENTS_PER_THREAD, SWEEP_BLOCK_LIMITS))


def _launch_for(arch: occupancy.Architecture, block_size: int, elements: int, registers: int, dynamic_shared: int, n: int) -> occupancy.Launch:
    """The sweep kernel's launch, as `run_prediction_check` makes it: the kernel opts in to
    the architecture's whole shared memory and prefers the largest carveout."""
    return occupancy.Launch(
        grid=math.ceil(n / (block_size * elements)),
        block=block_size,
        registers_per_thread=registers,
        dynamic_shared_memory=dynamic_shared,
        max_dynamic_shared_memory=arch.max_shared_memory_per_block_optin,
        carveout=100,
        elements_per_thread=elements,
    )


@functools.lru_cache(maxsize=8)
def _copy_model(n: int) -> roofline.Kernel:
    return models.copy(n)


def predict_sweep_point(gpu: roofline.GPU, calibration: roofline.Calibration, point: SweepPoint, n: int = SWEEP_ELEMENTS) -> SweepPoint:
    """Return `point` with the prediction of `roofline.predict` filled in."""
    kernel = _copy_model(n)
    launch = _launch_for(gpu.architecture, point.block_size, point.elements_per_thread,
                         point.registers_per_thread, point.dynamic_shared_memory, n)
    result = roofline.predict(gpu, kernel, launch, calibration=calibration)
    return point.model_copy(
        update={
            "predicted_seconds": result.seconds,
            "predicted_bytes_per_second": kernel.dram_bytes / result.seconds,
            "limiter": result.limiter,
        }
    )


def _sweep_launches(gpu: roofline.GPU, points: Sequence[SweepPoint], n: int) -> list[tuple[roofline.Kernel, occupancy.Launch, float]]:
    """(kernel, launch, measured seconds) of each sweep point, as `predict_sweep_point` predicts it."""
    if isinstance(points, (str, bytes)) or not isinstance(points, Sequence):
        raise TypeError(f"points must be a sequence of SweepPoint, not {type(points).__name__}")
    for p in points:
        if not isinstance(p, SweepPoint):
            raise TypeError(f"points must hold SweepPoint, not {type(p).__name__}")
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"n must be an int, not {type(n).__name__}")
    if not 1 <= n <= 2**40:
        raise RooflineError(f"n={n} must be from 1 to {2**40}")
    kernel = _copy_model(n)
    return [(kernel, _launch_for(gpu.architecture, p.block_size, p.elements_per_thread, p.registers_per_thread,
                                 p.dynamic_shared_memory, n), p.measured_seconds) for p in points]


def fit_sweep(
    gpu: roofline.GPU,
    base: roofline.Calibration,
    points: Sequence[SweepPoint],
    *,
    parameters: Sequence[FitParameter] = CALIBRATION_FIT_PARAMETERS,
    n: int = SWEEP_ELEMENTS,
    max_evaluations: int = FIT_EVALUATIONS,
) -> tuple[roofline.Calibration, CalibrationFit]:
    """Fit on the points marked ``used_for_calibration`` and check on the others.

    Where `parameters` leave the dispatch interval out (the launch probe measured the ramp),
    the launches of all the points that the block scheduler binds give it first
    (`scheduler_interval`).

    Returns
    -------
    (roofline.Calibration, CalibrationFit)
        The fitted calibration, and the fit with its train and test errors.
    """
    record = roofline.gpu(gpu)
    _sweep_launches(record, points, n)  # checks them all
    if not any(p.name == "block_dispatch_seconds" for p in parameters):
        base = scheduler_interval(record, base, points, n=n)
    train = [p for p in points if p.used_for_calibration]
    test = [p for p in points if not p.used_for_calibration]
    fitted, fit = fit_to_measurements(record, base, _sweep_launches(record, train, n), parameters=parameters,
                                      max_evaluations=max_evaluations)
    if test:
        errors = [abs(predict_sweep_point(record, fitted, p, n).error) for p in test]
        fit = fit.model_copy(update={"test_points": len(test), "test_median_abs_error": statistics.median(errors),
                                     "test_max_abs_error": max(errors)})
    return fitted, fit


#: The dispatch interval's own fit: one parameter over the few launches the scheduler binds.
_DISPATCH = next(p for p in CALIBRATION_FIT_PARAMETERS if p.name == "block_dispatch_seconds")
_DISPATCH_EVALUATIONS = 200


def scheduler_interval(
    gpu: roofline.GPU,
    base: roofline.Calibration,
    points: Sequence[SweepPoint],
    *,
    n: int = SWEEP_ELEMENTS,
) -> roofline.Calibration:
    """`base` with the block scheduler's interval under load, from the sweep launches it binds.

    The launches that `base` predicts bound by the block scheduler (the smallest blocks at
    full occupancy: a block's bytes are few, the SM starts one block per interval) measure
    that interval themselves: ``block_dispatch_seconds`` is fitted alone to them, by
    `roofline.predict` (`fit_to_measurements`). The launch probe's ramp, an empty kernel's
    blocks started one after another, spreads from run to run (70 to 86 ns on the H200 and the
    H100 SXM, 2026-11-27) where these launches give 79 ns in every run: a block that moves
    memory does not leave its SM as an empty one does. The ramp stays the ramp term's
    (``block_ramp_seconds``). `base` unchanged where no launch is bound by the scheduler.

    Parameters
    ----------
    gpu : roofline.GPU
    base : roofline.Calibration
        The calibration that says which launches the scheduler binds (its
        ``block_dispatch_seconds`` is the start).
    points : sequence of SweepPoint
        The measured sweep.
    n : int
        Elements of the swept copy.

    Returns
    -------
    roofline.Calibration
    """
    record = roofline.gpu(gpu)
    bound = [p for p in points if predict_sweep_point(record, base, p, n).limiter == "block_scheduling"]
    if not bound:
        return base
    fitted, fit = fit_to_measurements(record, base, _sweep_launches(record, bound, n), parameters=(_DISPATCH,),
                                      max_evaluations=_DISPATCH_EVALUATIONS)
    shapes = sorted({p.block_size for p in bound})
    how = (f"measured: the copy sweep's {len(bound)} launches the block scheduler binds (blocks of "
           f"{', '.join(map(str, shapes))} threads at full occupancy), the interval fitted alone to them "
           f"(worst error {fit.train_max_abs_error:.1%})")
    return fitted.model_copy(update={"sources": {**fitted.sources, "block_dispatch_seconds": how}})


def fit_calibration(
    gpu: roofline.GPU,
    base: roofline.Calibration,
    points: Sequence[SweepPoint],
    *,
    parameters: Sequence[FitParameter] = CALIBRATION_FIT_PARAMETERS,
    n: int = SWEEP_ELEMENTS,
    max_evaluations: int = FIT_EVALUATIONS,
) -> roofline.Calibration:
    """Fit the declared parameters so that `roofline.predict` matches the copy-sweep `points`.

    Every candidate calibration predicts every point with `roofline.predict` (the launch of
    `predict_sweep_point`), so the fit and the model cannot disagree; the search and its
    criterion (the worst relative error) are `fit_to_measurements`'.

    Parameters
    ----------
    gpu : roofline.GPU or str
        The GPU measured.
    base : roofline.Calibration
        Calibration holding the measured bandwidth fraction and launch overhead, and the
        start of the search.
    points : sequence of SweepPoint
        Measured points of the copy kernel (all of them are fitted).
    parameters : sequence of FitParameter
        The calibration fields to fit, with their grids (default `CALIBRATION_FIT_PARAMETERS`).
    n : int
        Elements of the swept copy.
    max_evaluations : int
        Parameter sets to try at most.

    Returns
    -------
    roofline.Calibration
        `base` with the fitted parameters replaced and marked measured.

    Examples
    --------
    >>> import roofline
    >>> gpu, cal = roofline.gpu("H100 SXM"), roofline.calibration("H100 SXM")
    >>> p = SweepPoint(block_size=256, elements_per_thread=4, blocks_per_sm_limit=None, dynamic_shared_memory=0,
    ...                registers_per_thread=16, active_blocks_per_sm=8, runtime_active_blocks_per_sm=None,
    ...                measured_seconds=1.0, measured_bytes_per_second=1.0)
    >>> truth = predict_sweep_point(gpu, cal, p)
    >>> p = p.model_copy(update={"measured_seconds": truth.predicted_seconds,
    ...                          "measured_bytes_per_second": truth.predicted_bytes_per_second})
    >>> fitted = fit_calibration(gpu, cal, [p])
    >>> abs(predict_sweep_point(gpu, fitted, p).error) < 1e-3
    True
    """
    record = roofline.gpu(gpu)
    fitted, _ = fit_to_measurements(record, base, _sweep_launches(record, points, n), parameters=parameters,
                                    max_evaluations=max_evaluations)
    return fitted


def _dynamic_shared_for_limit(arch: occupancy.Architecture, block_size: int, registers: int, limit: int | None) -> int:
    """Dynamic shared memory that holds residency at `limit` blocks per SM (0 for no limit)."""
    if limit is None:
        return 0
    natural = occupancy.calculate(arch, threads_per_block=block_size, registers_per_thread=registers,
                                  carveout=100).active_blocks_per_sm
    if limit >= natural:
        return 0
    return occupancy.available_dynamic_shared_memory(
        arch, registers_per_thread=registers, num_blocks=limit, threads_per_block=block_size,
        max_dynamic_shared_memory=arch.max_shared_memory_per_block_optin,
    )


def sweep_base(gpu: roofline.GPU, launch_overhead_seconds: float, best_bytes_per_second: float,
               block_dispatch: tuple[float, str] | None = None) -> tuple[roofline.Calibration, tuple[FitParameter, ...]]:
    """The copy sweep fit's start and the parameters it fits.

    The packaged calibration of `gpu` with the run's launch overhead and its best copy
    bandwidth over the datasheet's (the sustained fraction). A measured `block_dispatch`
    ``(seconds, how)`` is the block ramp and the dispatch interval's start, and the fit leaves
    the interval out of `CALIBRATION_FIT_PARAMETERS`: with it fitted with the others, the
    dispatch interval, the knee and the SM bandwidth traded along a flat valley of the sweep,
    and one GPU's fitted knee moved from 2.5 to 2.8 between runs whose points agree
    (docs/prediction.md). `fit_sweep` then measures the interval from the launches the block
    scheduler binds (`scheduler_interval`).

    Examples
    --------
    >>> base, fitted = sweep_base(roofline.gpu("H200"), 2.8e-6, 4.1e12, (7.5e-8, "a probe"))
    >>> base.block_dispatch_seconds, base.block_ramp_seconds, [p.name for p in fitted]
    (7.5e-08, 7.5e-08, ['idle_latency_seconds', 'sm_bandwidth_bytes_per_second', 'knee_sharpness'])
    """
    base = roofline.calibration(gpu)
    sources = dict(base.sources)
    sources["launch_overhead_seconds"] = ("measured: CUDA events around an empty one-block kernel queued behind a spin kernel "
                                         "(GPU side, no host time), median of 200")
    sources["sustained_bandwidth_fraction"] = "measured: best copy-sweep bandwidth over the datasheet bandwidth"
    update: dict[str, object] = {
        "launch_overhead_seconds": launch_overhead_seconds,
        "sustained_bandwidth_fraction": min(1.0, best_bytes_per_second / gpu.memory_bandwidth),
    }
    parameters = CALIBRATION_FIT_PARAMETERS
    if block_dispatch is not None:
        # one interval: the ramp term's and the dispatch cap's, as the run's calibration has them
        seconds, how = block_dispatch
        update["block_dispatch_seconds"] = update["block_ramp_seconds"] = seconds
        sources["block_dispatch_seconds"] = sources["block_ramp_seconds"] = f"measured: {how}"
        parameters = tuple(p for p in parameters if p.name != "block_dispatch_seconds")
    return base.model_copy(update={**update, "sources": sources}), parameters


@takes_session
def run_prediction_check(
    session: Session,
    gpu: roofline.GPU,
    *,
    progress: Callable[[str], None] = lambda message: None,
    n: int = SWEEP_ELEMENTS,
    repetitions: int = 20,
    quick: bool = False,
    block_dispatch: tuple[float, str] | None = None,
) -> PredictionCheck:
    """Measure the calibration and the copy sweep on `session`'s GPU and check predictions.

    Parameters
    ----------
    session : validate Session
        An open device.
    gpu : roofline.GPU
        The database entry (or device description) of that device.
    progress : callable
        Receives one line per step.
    n : int
        Elements of the swept copy.
    repetitions : int
        Timed repetitions per point (median kept).
    quick : bool
        A smaller sweep (18 points instead of 80) and fewer repetitions.
    block_dispatch : (float, str), optional
        The interval between block launches on an SM, seconds, measured by a probe of its
        own (the launch probe's ``block_ramp_seconds``), and how: the fit keeps it (`sweep_base`).
    """
    _check_block_dispatch(block_dispatch)
    arch = gpu.architecture
    arch_name = f"sm_{arch.major}{arch.minor}"
    source = kernel_source("prediction.cu")
    base_kernels = compile_kernels(with_defines(source, {"ELEMS": 1}), ["pointer_chase", "empty_kernel"],
                                   arch=arch_name, name="prediction")
    out = session.allocate(4096)
    rng = np.random.default_rng(12345)
    launch_overhead, latency = _launch_overhead_and_latency(session, base_kernels, out, rng, progress)

    if quick:
        repetitions = min(repetitions, 10)
    bench = _CopySweep(session, arch, arch_name, source, rng, n, repetitions)
    measured = []
    for block, elements, limit in sweep_configurations(quick):
        measured.append(bench.measure(block, elements, limit))
    rates = [p.measured_bytes_per_second for p in measured]
    progress(f"copy sweep: {len(measured)} points, {min(rates) / 1e12:.2f} to {max(rates) / 1e12:.2f} TB/s")
    best_bandwidth = max(p.measured_bytes_per_second for p in measured)

    base, parameters = sweep_base(gpu, launch_overhead, best_bandwidth, block_dispatch)
    fitted, fit = fit_sweep(gpu, base, measured, n=n, parameters=parameters)
    progress(f"fitted latency {fitted.idle_latency_seconds * 1e9:.0f} ns, SM bandwidth "
             f"{fitted.sm_bandwidth_bytes_per_second / 1e9:.0f} GB/s, block dispatch "
             f"{fitted.block_dispatch_seconds * 1e9:.0f} ns, knee {fitted.knee_sharpness:.2f} "
             f"({fit.evaluations} parameter sets in {fit.seconds:.1f} s; worst error {fit.train_max_abs_error:.1%} "
             f"on the {fit.train_points} fitted points, {fit.test_max_abs_error or 0:.1%} on the {fit.test_points} others)")
    sweep = tuple(predict_sweep_point(gpu, fitted, p, n) for p in measured)
    cliff = _cliff_check(bench, gpu, fitted, progress)

    errors = [abs(p.error) for p in sweep]
    return PredictionCheck(
        gpu=gpu.name,
        calibration=fitted.model_dump(),
        pointer_chase_latency_seconds=latency,
        launch_overhead_seconds=launch_overhead,
        sweep=sweep,
        cliff=cliff,
        within_tolerance=sum(e <= TOLERANCE for e in errors),
        points=len(errors),
        median_abs_error=statistics.median(errors),
        max_abs_error=max(errors),
        fit=fit,
    )


def _check_block_dispatch(block_dispatch: tuple[float, str] | None) -> None:
    """A (seconds > 0, how) pair or None, checked before the GPU is busy: a bad figure must not
    cost the sweep."""
    if block_dispatch is None:
        return
    if (not isinstance(block_dispatch, tuple) or len(block_dispatch) != 2
            or not isinstance(block_dispatch[1], str)):
        raise TypeError("block_dispatch must be a (seconds, how it was measured) pair, not "
                        f"{type(block_dispatch).__name__}")
    seconds = block_dispatch[0]
    if (isinstance(seconds, bool) or not isinstance(seconds, (int, float))
            or not (math.isfinite(seconds) and seconds > 0)):
        raise RooflineError(f"block_dispatch seconds={seconds!r} must be a finite number > 0")


def _launch_overhead_and_latency(session: Session, base_kernels: Mapping[str, object], out: object,
                                 rng: np.random.Generator, progress: Callable[[str], None]) -> tuple[float, float]:
    """(launch overhead, pointer-chase latency), seconds: an empty kernel's median, and the
    difference of two chases of a random cycle over one word per 128-byte line."""
    timer = session.timer
    empty = session.launcher(base_kernels["empty_kernel"], (1, 1, 1), (32, 1, 1), (out,))
    launch_overhead = benchmark(empty, timer=timer, rules=StopRules(warmup=10, repetitions=200)).median_seconds
    progress(f"launch overhead {launch_overhead * 1e6:.2f} us")

    slots = (256 << 20) // 128  # one 4-byte hop per 128-byte line of a 256 MiB buffer
    order = rng.permutation(slots).astype(np.uint32) * 32  # word index of each line
    chain = np.zeros(slots * 32, dtype=np.uint32)
    chain[order] = np.roll(order, -1)
    chain_buffer = session.upload(chain)
    chase = {}
    for steps in (2000, 12000):
        run = session.launcher(base_kernels["pointer_chase"], (1, 1, 1), (1, 1, 1),
                               (chain_buffer, np.uint32(order[0]), np.int32(steps), out))
        chase[steps] = benchmark(run, timer=timer, rules=StopRules(warmup=2, repetitions=7)).median_seconds
    latency = (chase[12000] - chase[2000]) / 10000
    progress(f"pointer-chase latency {latency * 1e9:.0f} ns")
    return launch_overhead, latency


class _CopySweep:
    """The swept copy of `n` floats: its buffers, its kernel at each elements-per-thread, and
    one timed point at a block size, elements per thread and blocks-per-SM limit."""

    def __init__(self, session: Session, arch: occupancy.Architecture, arch_name: str, source: str,
                 rng: np.random.Generator, n: int, repetitions: int) -> None:
        self.session, self.arch, self.n, self.repetitions = session, arch, n, repetitions
        self.x = session.upload(rng.random(n, dtype=np.float32))
        self.y = session.allocate(4 * n)
        self.kernels = {
            e: compile_kernels(with_defines(source, {"ELEMS": e}), ["copy_sweep"], arch=arch_name,
                               name=f"copy_sweep_{e}")["copy_sweep"]
            for e in SWEEP_ELEMENTS_PER_THREAD
        }
        for kernel in self.kernels.values():
            session.set_kernel_attribute(kernel, "MAX_DYNAMIC_SHARED_SIZE_BYTES", arch.max_shared_memory_per_block_optin)
            session.set_kernel_attribute(kernel, "PREFERRED_SHARED_MEMORY_CARVEOUT", 100)

    def measure(self, block: int, elements: int, limit: int | None, dynamic: int | None = None) -> SweepPoint:
        """One point: dynamic shared memory that caps the blocks per SM at `limit` (or `dynamic` bytes)."""
        arch, n = self.arch, self.n
        kernel = self.kernels[elements]
        registers = kernel_resources(kernel, "copy_sweep").registers_per_thread
        shared = _dynamic_shared_for_limit(arch, block, registers, limit) if dynamic is None else dynamic
        launch = _launch_for(arch, block, elements, registers, shared, n)
        ours = occupancy.calculate(arch, launch=launch).active_blocks_per_sm
        try:
            runtime = int(kernel.occupancy.max_active_blocks_per_multiprocessor(block, shared))
        except Exception:  # noqa: BLE001 - informative only; ours is what the prediction uses
            runtime = None
        run = self.session.launcher(kernel, launch.grid, launch.block, (self.x, self.y, np.int64(n)), shared=shared)
        seconds = benchmark(run, timer=self.session.timer,
                            rules=StopRules(warmup=3, repetitions=self.repetitions)).median_seconds
        return SweepPoint(
            block_size=block, elements_per_thread=elements, blocks_per_sm_limit=limit,
            dynamic_shared_memory=shared, registers_per_thread=registers, active_blocks_per_sm=ours,
            runtime_active_blocks_per_sm=runtime, measured_seconds=seconds,
            measured_bytes_per_second=8 * n / seconds,
            used_for_calibration=block in CALIBRATION_BLOCK_SIZES,
        )


def _cliff_check(bench: _CopySweep, gpu: roofline.GPU, fitted: roofline.Calibration,
                 progress: Callable[[str], None]) -> CliffCheck | None:
    """One shared-memory cliff, both sides: the most dynamic shared memory that keeps two blocks
    per SM, and one byte more (None when no shared memory keeps two)."""
    registers = kernel_resources(bench.kernels[1], "copy_sweep").registers_per_thread
    before = _dynamic_shared_for_limit(bench.arch, CALIBRATION_BLOCK_SIZE, registers, 2)
    if before <= 0:
        return None
    n = bench.n
    p_before = predict_sweep_point(gpu, fitted, bench.measure(CALIBRATION_BLOCK_SIZE, 1, 2, before), n)
    p_after = predict_sweep_point(gpu, fitted, bench.measure(CALIBRATION_BLOCK_SIZE, 1, 2, before + 1), n)
    progress(f"cliff at {before} B: {before + 1} B drops {p_before.active_blocks_per_sm} -> "
             f"{p_after.active_blocks_per_sm} blocks/SM")
    return CliffCheck(
        block_size=CALIBRATION_BLOCK_SIZE,
        dynamic_shared_memory_before=before, dynamic_shared_memory_after=before + 1,
        active_blocks_before=p_before.active_blocks_per_sm, active_blocks_after=p_after.active_blocks_per_sm,
        measured_seconds_before=p_before.measured_seconds, measured_seconds_after=p_after.measured_seconds,
        predicted_seconds_before=p_before.predicted_seconds, predicted_seconds_after=p_after.predicted_seconds,
    )


class PredictionCheckProbe(Probe[PredictionCheck]):
    """The copy sweep and the fit of the time model's parameters (`run_prediction_check`) on the
    database entry; its section is laid out by `render_markdown` after the kernel families."""

    name = "prediction"
    step = "prediction check"
    error_field = "prediction_error"

    def run(self, ctx: RunContext) -> PredictionCheck:
        if ctx.entry is None:
            raise RooflineError("no database entry for this device: the prediction check predicts for one")
        # the launch probe ran before: its block ramp is the dispatch interval
        ramp = ctx.figures.get("block_ramp_seconds")
        return run_prediction_check(ctx.session, ctx.entry, progress=ctx.progress, quick=ctx.quick,
                                    block_dispatch=None if ramp is None or ramp[0] is None else (
                                        ramp[0], f"the launch probe's block ramp ({ramp[1]})"))
