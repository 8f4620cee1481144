"""Prediction against measurement for every kernel of the suite."""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Mapping, Sequence
from typing import Literal

import numpy as np
import occupancy
import roofline
from occupancy import KernelResources
from occupancy.common import sequence
from pydantic import BaseModel, ConfigDict, Field
from roofline import RooflineError

from ..device import (
    DeviceError,
    DeviceInfo,
    JsonDict,
    Session,
    StopRules,
    TimingResult,
    benchmark,
    compile_kernels,
    kernel_resources,
    kernel_source,
    takes_session,
    with_defines,
)
from ..probes import Ceilings, Probe, RunCalibration, RunContext
from ._kernels import KernelCase, build_case, check_outputs, launch_case

__all__ = [
    "KernelValidation",
    "PredictionInputs",
    "PredictionSummary",
    "RegimeSummary",
    "SuiteProbe",
    "kernel_rules",
    "measured_prediction",
    "run_suite",
    "summarize_predictions",
]

Regime = Literal["dram", "cache", "compute"]


class KernelValidation(BaseModel):
    """One kernel: what the model predicts, what the GPU did, and how far apart they are.

    Times in seconds, rates in flops/s and bytes/s. ``ratio`` is measured over predicted
    time (>= 1 when the model is a true lower bound); the absolute percentage error is
    ``|predicted - measured| / measured x 100``.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    label: str
    parameters: JsonDict
    status: Literal["ok", "unsupported", "compile_error", "launch_error", "verify_error"]
    error: str | None = None
    function: str | None = None
    grid: tuple[int, int, int] | None = None
    block: tuple[int, int, int] | None = None
    resources: KernelResources | None = None
    model_registers_per_thread: int | None = None
    model_static_shared_memory: int | None = None
    occupancy_calculated: float | None = None
    occupancy_runtime: float | None = None
    flops: float
    dram_bytes: float
    l2_bytes: float | None = None
    l1_bytes: float | None = None
    precision: str = "fp32"
    predicted_seconds: float | None = Field(description="Time lower bound from datasheet ceilings.")
    predicted_bound: str | None = None
    predicted_attainable_flops_per_second: float | None = None
    predicted_seconds_measured_ceilings: float | None = None
    predicted_bound_measured_ceilings: str | None = None
    regime: Regime | None = None
    measured_seconds: float | None = None
    timing: TimingResult | None = None
    measured_flops_per_second: float | None = None
    measured_dram_bytes_per_second: float | None = None
    ratio: float | None = Field(default=None, description="measured_seconds / predicted_seconds.")
    ratio_measured_ceilings: float | None = None
    ape_percent: float | None = Field(default=None, description="Versus the datasheet prediction.")
    ape_percent_measured_ceilings: float | None = None
    model_predicted_seconds: float | None = Field(
        default=None, description="roofline.predict (occupancy and Little's law) with the run's calibration.")
    model_limiter: str | None = None
    ape_percent_model: float | None = None
    relative_error: float | None = Field(default=None, description="||out - ref|| / ||ref|| of the check.")


class RegimeSummary(BaseModel):
    """Absolute percentage errors of one regime's kernels."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    regime: str
    kernels: int
    median_ape_percent: float | None
    worst_ape_percent: float | None
    worst_kernel: str | None
    median_ape_percent_measured_ceilings: float | None
    worst_ape_percent_measured_ceilings: float | None
    worst_kernel_measured_ceilings: str | None
    median_ape_percent_model: float | None = None
    worst_ape_percent_model: float | None = None
    worst_kernel_model: str | None = None


class PredictionSummary(BaseModel):
    """Prediction error per regime (DRAM-, cache- and compute-bound) and over all kernels."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    regimes: tuple[RegimeSummary, ...]
    overall: RegimeSummary
    failed: tuple[str, ...] = ()


def measured_prediction(
    flops: float, level_bytes: Mapping[str, float], peak_flops_per_second: float | None,
    bandwidths: Mapping[str, float | None],
) -> tuple[float | None, str | None]:
    """The roofline time bound from measured ceilings: the slowest of compute and each level.

    Parameters
    ----------
    flops : float
        Operations of the kernel.
    level_bytes : mapping
        Level ("dram", "l2", "l1") to bytes moved there.
    peak_flops_per_second : float or None
        Measured arithmetic ceiling of the kernel's precision.
    bandwidths : mapping
        Level to measured bytes/s (None when not measured: that level is skipped).

    Returns
    -------
    (seconds, binding)
        ``binding`` is "compute" or the level; (None, None) with nothing to bound.

    Examples
    --------
    >>> measured_prediction(1e9, {"dram": 4e9}, 1e12, {"dram": 2e12})
    (0.002, 'dram')
    """
    def number(name: str, value: object, optional: bool = False) -> float | None:
        if value is None and optional:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError(f"{name} must be a number, not {type(value).__name__}")
        figure = float(value) if abs(value) < 1e308 else math.inf
        if not (math.isfinite(figure) and figure >= 0):
            raise RooflineError(f"{name}={value!r} must be >= 0 and finite")
        return figure

    if not isinstance(level_bytes, Mapping) or not isinstance(bandwidths, Mapping):
        raise TypeError("level_bytes and bandwidths must be mappings of level to a number")
    flops = number("flops", flops)
    peak_flops_per_second = number("peak_flops_per_second", peak_flops_per_second, optional=True)
    level_bytes = {level: number(f"level_bytes[{level!r}]", moved) for level, moved in level_bytes.items()}
    bandwidths = {level: number(f"bandwidths[{level!r}]", bw, optional=True) for level, bw in bandwidths.items()}
    times: dict[str, float] = {}
    if flops and peak_flops_per_second:
        times["compute"] = flops / peak_flops_per_second
    for level, moved in level_bytes.items():
        bandwidth = bandwidths.get(level)
        if moved and bandwidth:
            times[level] = moved / bandwidth
    if not times:
        return None, None
    binding = max(times, key=lambda k: times[k])
    return times[binding], binding


def _regime(binding: str | None) -> Regime | None:
    if binding is None:
        return None
    if binding == "compute":
        return "compute"
    return "dram" if binding == "dram" else "cache"


def _ape(predicted: float | None, measured: float | None) -> float | None:
    if predicted is None or measured is None or measured <= 0:
        return None
    return abs(predicted - measured) / measured * 100.0


def _summary(regime: str, rows: Sequence[KernelValidation]) -> RegimeSummary:
    def stats(key: str) -> tuple[float | None, float | None, str | None]:
        pairs = [(getattr(r, key), r.label) for r in rows if getattr(r, key) is not None]
        if not pairs:
            return None, None, None
        worst = max(pairs)
        return statistics.median(p for p, _ in pairs), worst[0], worst[1]

    m, w, wk = stats("ape_percent")
    mm, wm, wkm = stats("ape_percent_measured_ceilings")
    pm, pw, pwk = stats("ape_percent_model")
    return RegimeSummary(regime=regime, kernels=len(rows), median_ape_percent=m, worst_ape_percent=w,
                         worst_kernel=wk, median_ape_percent_measured_ceilings=mm,
                         worst_ape_percent_measured_ceilings=wm, worst_kernel_measured_ceilings=wkm,
                         median_ape_percent_model=pm, worst_ape_percent_model=pw, worst_kernel_model=pwk)


def summarize_predictions(rows: Sequence[KernelValidation]) -> PredictionSummary:
    """Median and worst absolute percentage error per regime and overall.

    Examples
    --------
    >>> summarize_predictions([]).overall.kernels
    0
    """
    rows = sequence("rows", rows, "a sequence of KernelValidation")
    for row in rows:
        if not isinstance(row, KernelValidation):
            raise TypeError(f"rows must hold KernelValidation, not {type(row).__name__}")
    ok = [r for r in rows if r.status == "ok"]
    regimes = tuple(_summary(g, [r for r in ok if r.regime == g]) for g in ("dram", "cache", "compute"))
    return PredictionSummary(regimes=regimes, overall=_summary("all", ok),
                             failed=tuple(r.label for r in rows if r.status != "ok"))


def kernel_rules(quick: bool) -> StopRules:
    """When a kernel of the suite or the families stops being timed: 20 runs after 3 warm-ups, more
    to fill 50 ms of device time (200 at most); 10 runs after 2 in a quick run."""
    return StopRules(warmup=2 if quick else 3, repetitions=10 if quick else 20,
                     budget_seconds=None if quick else 0.05, max_repetitions=200)


def _label(model: roofline.Kernel) -> str:
    label = getattr(model, "label", None)
    if label:
        return str(label)
    extras = ",".join(f"{k}={v}" for k, v in model.parameters.items() if k not in ("n", "block"))
    return f"{model.name}({extras})" if extras else model.name


class PredictionInputs(BaseModel):
    """What each suite kernel is predicted from: the database entry's datasheet ceilings, the
    ceilings measured in the same run, and the parameters of `roofline.predict`.

    Attributes
    ----------
    database_gpu : roofline.GPU or None
        Datasheet ceilings (None: no datasheet prediction and no `roofline.predict` column).
    measured : dict
        Measured ceilings: "dram", "l2", "l1" in bytes/s and precisions in flops/s (None:
        not measured).
    calibration : roofline.Calibration or None
        Parameters of `roofline.predict`; None: the packaged calibration of the GPU.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    database_gpu: roofline.GPU | None = None
    measured: dict[str, float | None] = Field(default_factory=dict)
    calibration: roofline.Calibration | None = None


@takes_session
def run_suite(
    session: Session,
    info: DeviceInfo,
    models: Sequence[roofline.Kernel],
    *,
    inputs: PredictionInputs,
    quick: bool = False,
    rng: np.random.Generator,
    progress: Callable[[str], None] = lambda message: None,
) -> tuple[KernelValidation, ...]:
    """Compile, check and time every model's CUDA kernel; predict each from both ceilings.

    Parameters
    ----------
    session, info
        The open device and its description.
    models : sequence of roofline.Kernel
    inputs : PredictionInputs
        The datasheet ceilings, the measured ceilings and the calibration each kernel is
        predicted from.
    quick : bool
        Fewer repetitions.
    rng : numpy.random.Generator
        Fresh inputs for every kernel.
    progress : callable
        Receives one line per kernel.

    Returns
    -------
    tuple of KernelValidation
        A kernel that fails to compile, launch or verify is recorded with its error.
    """
    if not isinstance(inputs, PredictionInputs):
        raise TypeError(f"inputs must be a PredictionInputs, not {type(inputs).__name__}")
    rows = []
    for model in models:
        row = _run_one(session, info, model, inputs=inputs, quick=quick, rng=rng)
        rows.append(row)
        if row.status == "ok":
            progress(f"kernel {row.label}: {row.measured_seconds * 1e3:.3f} ms measured, "
                     f"{(row.predicted_seconds or math.nan) * 1e3:.3f} ms predicted "
                     f"({row.ape_percent if row.ape_percent is not None else math.nan:.0f}% error)")
        else:
            progress(f"kernel {row.label}: {row.status}: {row.error}")
    return tuple(rows)


def _model_prediction(database_gpu: roofline.GPU | None, model: roofline.Kernel, case: KernelCase, resources: KernelResources,
                      calibration: roofline.Calibration | None) -> JsonDict:
    """`roofline.predict` for the launch as compiled: the real registers and shared memory."""
    if database_gpu is None:
        return {}
    launch = model.launch.model_copy(update={
        "grid": tuple(case.grid), "block": tuple(case.block),
        "registers_per_thread": resources.registers_per_thread,
        "static_shared_memory": resources.static_shared_memory,
        "dynamic_shared_memory": case.dynamic_shared_memory,
    })
    try:
        p = roofline.predict(database_gpu, model, launch, calibration=calibration)
    except roofline.RooflineError:  # a launch the model says cannot run: no model column
        return {}
    return {"model_predicted_seconds": p.seconds, "model_limiter": p.limiter}


def _roofline_predictions(model: roofline.Kernel, inputs: PredictionInputs) -> tuple[dict[str, object], float | None]:
    """A row's description and its plain-roofline predictions from the datasheet and from the
    measured ceilings; and the latter's seconds (None: a ceiling not measured)."""
    level_bytes = {"dram": float(model.dram_bytes)}
    if getattr(model, "l2_bytes", None) is not None:
        level_bytes["l2"] = float(model.l2_bytes)
    if getattr(model, "l1_bytes", None) is not None:
        level_bytes["l1"] = float(model.l1_bytes)
    precision = getattr(model, "precision", "fp32") or "fp32"
    base: dict[str, object] = dict(
        name=model.name, label=_label(model), parameters=dict(model.parameters), flops=float(model.flops),
        dram_bytes=float(model.dram_bytes), l2_bytes=level_bytes.get("l2"), l1_bytes=level_bytes.get("l1"),
        precision=precision, model_registers_per_thread=model.launch.registers_per_thread,
        model_static_shared_memory=model.launch.static_shared_memory,
    )
    if inputs.database_gpu is not None:
        try:
            verdict = roofline.analyze(inputs.database_gpu, model)
            base.update(predicted_seconds=verdict.time_lower_bound_seconds,
                        predicted_bound=verdict.bound_level or verdict.bound,
                        predicted_attainable_flops_per_second=verdict.attainable_flops_per_second)
        except roofline.RooflineError:  # a precision the database entry has no peak for
            base.update(predicted_seconds=None)
    else:
        base.update(predicted_seconds=None)
    measured = inputs.measured
    seconds_m, binding_m = measured_prediction(float(model.flops), level_bytes, measured.get(precision), measured)
    base.update(predicted_seconds_measured_ceilings=seconds_m, predicted_bound_measured_ceilings=binding_m,
                regime=_regime(binding_m or base.get("predicted_bound")))
    return base, seconds_m


def _occupancies(info: DeviceInfo, kernel: object, case: KernelCase, resources: KernelResources) -> dict[str, float]:
    """The occupancy of the launch as compiled, from `occupancy.calculate` and from the driver
    (a column the calculator or the driver cannot fill is left out)."""
    found: dict[str, float] = {}
    threads = math.prod(case.block)
    try:
        calc = occupancy.calculate(info.compute_capability, threads_per_block=threads,
                                   registers_per_thread=resources.registers_per_thread,
                                   static_shared_memory=resources.static_shared_memory,
                                   dynamic_shared_memory=case.dynamic_shared_memory)
        found.update(occupancy_calculated=calc.occupancy)
    except occupancy.OccupancyError:  # a launch the calculator rejects: the column stays empty
        pass
    try:
        blocks = kernel.occupancy.max_active_blocks_per_multiprocessor(threads, case.dynamic_shared_memory)
        found.update(occupancy_runtime=blocks * threads / info.max_threads_per_sm)
    except Exception:  # noqa: BLE001 - informational
        pass
    return found


def _run_one(session: Session, info: DeviceInfo, model: roofline.Kernel, *, inputs: PredictionInputs, quick: bool,
             rng: np.random.Generator) -> KernelValidation:
    base, seconds_m = _roofline_predictions(model, inputs)
    try:
        case = build_case(model, rng)
    except roofline.RooflineError as exc:
        return KernelValidation(status="unsupported", error=str(exc), **base)
    base.update(function=case.function, grid=case.grid, block=case.block)
    try:
        source = with_defines(kernel_source("suite.cu"), case.defines)
        kernel = compile_kernels(source, [case.function], arch=info.arch, name=f"suite.cu:{case.function}")[
            case.function]
        resources = kernel_resources(kernel, case.function)
    except DeviceError as exc:
        return KernelValidation(status="compile_error", error=str(exc), **base)
    base.update(resources=resources)
    base.update(_model_prediction(inputs.database_gpu, model, case, resources, inputs.calibration))
    base.update(_occupancies(info, kernel, case, resources))
    try:
        launch, outputs = launch_case(session, kernel, case)
    except DeviceError as exc:
        return KernelValidation(status="launch_error", error=str(exc), **base)
    check = check_outputs(case, outputs)
    base.update(relative_error=check.relative_error)
    if not check.ok:
        return KernelValidation(status="verify_error", error=check.message, **base)
    flush = session.flush_l2 if case.working_set_bytes <= info.l2_cache_bytes else None
    try:
        timing = benchmark(launch, timer=session.timer, rules=kernel_rules(quick), flush=flush)
        session.synchronize()
    except DeviceError as exc:
        return KernelValidation(status="launch_error", error=str(exc), **base)
    t = timing.median_seconds
    return KernelValidation(
        status="ok", measured_seconds=t, timing=timing,
        measured_flops_per_second=float(model.flops) / t,
        measured_dram_bytes_per_second=float(model.dram_bytes) / t,
        ratio=t / base["predicted_seconds"] if base.get("predicted_seconds") else None,
        ratio_measured_ceilings=t / seconds_m if seconds_m else None,
        ape_percent=_ape(base.get("predicted_seconds"), t),
        ape_percent_measured_ceilings=_ape(seconds_m, t),
        ape_percent_model=_ape(base.get("model_predicted_seconds"), t),
        **base,
    )


#: Report name of a measured ceiling -> the roofline level or precision it stands for.
_MEASURED = {"dram": "dram_copy", "l2": "l2_read", "l1": "shared_read", "fp32": "fp32_fma", "fp64": "fp64_fma",
             "fp16_tensor": "fp16_tensor", "bf16_tensor": "bf16_tensor"}


class SuiteProbe(Probe[tuple[KernelValidation, ...]]):
    """Compile, check and time every kernel of the suite (`run_suite`) against its prediction
    with the database entry, the measured ceilings and the run's calibration; the report cannot
    be written without it."""

    name = "kernels"
    step = "kernels"
    required = True

    def run(self, ctx: RunContext) -> tuple[KernelValidation, ...]:
        ceilings = ctx.result("ceilings", Ceilings)
        measured = {level: ceilings.value(name) if ceilings is not None else None for level, name in _MEASURED.items()}
        calibration = ctx.result("calibration", RunCalibration)
        inputs = PredictionInputs(database_gpu=ctx.entry, measured=measured,
                                  calibration=None if calibration is None else calibration.calibration)
        return run_suite(ctx.session, ctx.info, ctx.models, inputs=inputs, quick=ctx.quick, rng=ctx.rng,
                         progress=ctx.progress)

    def fields(self, result: tuple[KernelValidation, ...]) -> Mapping[str, object]:
        return {"kernels": result, "summary": summarize_predictions(result)}
