"""Probes of the time model's compute and latency side, measured on the device.

`validate/kernels/compute.cu` holds three probes; each measures one parameter of
`roofline.predict`, never a kernel family or a corpus kernel the model is checked on:

* **Trip latency**: one block of 1024 threads, alone on the GPU (one SM), walks a
  grid-stride loop whose next trip's addresses depend on this trip's loads (L2 bypassed in
  L1, lines far past L2), each trip reading 4, 8, 16 or 32 KiB: the time per trip (the
  difference of two trip counts) against the bytes per trip rises at what one SM's port
  moves when no other SM competes (``trip_bytes_per_second``; the trips term gives an SM the
  GPU's bandwidth over the SMs in use, up to this, `roofline._predict.terms.waits`).
* **Overlap**: a stream of one float in and one out per thread with 0 to 256 FMAs on it
  (four independent chains) sweeps the arithmetic intensity across the ridge: each thread
  loads once, computes, then stores. ``phase_exponent`` is the ``q`` with which
  `roofline.predict`, joining a block's life with its SM's issue for one round as
  ``(life**q + issue**q) ** (1/q)`` (`roofline.terms.overlap`), comes out at the measured
  times (`model_phase_exponent`; docs/prediction.md, "Load, then compute: the phases take
  turns"). The sweep's own sides (the time without FMAs, the FMAs at the compute-bound end's
  slope) and their exponent ``overlap_exponent`` are reported beside it, not used.
* **FMA latency**: one warp per SM runs one dependent FMA chain: the cycles per FMA at the
  clock the driver reports (``fma_latency_cycles``, the lone warp's issue interval).

The tensor pipe's sustained rate (``tensor_rate_fraction``) is the ceilings probe's fp16
tensor ceiling (wgmma, the clock under tensor load included) over the datasheet's rate.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np
import occupancy
import roofline
from pydantic import BaseModel, ConfigDict

from ..device import DeviceInfo, Session, StopRules, benchmark, compile_kernels, kernel_source, takes_session
from ._calibration import measured_calibration, measurement_origin
from ._ceilings import Ceilings
from ._prediction import PredictionCheck
from ._probe import Figures, Probe, RunContext

__all__ = [
    "ComputeEffects",
    "ComputeProbe",
    "compute_calibration",
    "derive_compute",
    "fit_overlap",
    "fit_overlap_exponent",
    "fit_trip_line",
    "measure_compute",
    "model_phase_exponent",
    "overlap_sweep_kernel",
    "render_compute",
]

_FROZEN = ConfigDict(frozen=True, extra="forbid")
#: Threads per block of the trip probe, and the floats each thread reads per trip.
TRIP_THREADS, TRIP_FLOATS = 1024, (1, 2, 4, 8)
#: FMAs per element of the overlap sweep (multiples of the kernel's four chains).
OVERLAP_FMAS = (0, 4, 8, 16, 24, 32, 48, 64, 96, 128, 192, 256)
#: Overlap points whose two sides are within this ratio of each other fit the exponent.
OVERLAP_WINDOW = 4.0
#: Threads per block of the overlap sweep.
OVERLAP_THREADS = 256
#: The exponents `model_phase_exponent` searches (1: the sides add; 16: nearly their maximum).
EXPONENT_RANGE = (1.0, 16.0)


class ComputeEffects(BaseModel):
    """What the probes measured and the parameters derived from them.

    Attributes
    ----------
    trip_points : dict[int, float]
        Seconds per trip by bytes per block and trip.
    trip_latency_seconds, trip_bytes_per_second : float
        The line through them: intercept, and the inverse of the slope.
    overlap_points : dict[int, float]
        Seconds of the overlap sweep by FMAs per element.
    overlap_elements : int
        Elements the sweep streams.
    memory_seconds : float
        The sweep's time without FMAs (its memory side).
    fma_seconds : float
        Seconds per FMA per element at the compute-bound end (its compute side's slope).
    overlap_exponent : float
    fma_chain_seconds : float
        Seconds per FMA of one dependent chain.
    clock_hz : float
        The SM clock the chain's cycles are counted at.
    fma_latency_cycles : float
    tensor_rate_fraction : float or None
        The fp16 tensor ceiling over the datasheet's (None: not measured).
    model_phase_exponent : float or None
        The exponent with which `roofline.predict` fits the sweep (`model_phase_exponent`),
        the calibration's ``phase_exponent``; None where it was not fitted.
    model_phase_fmas : tuple of int
        The sweep's points that fit it.
    """

    model_config = _FROZEN

    trip_points: dict[int, float]
    trip_latency_seconds: float
    trip_bytes_per_second: float | None
    overlap_points: dict[int, float]
    overlap_elements: int
    memory_seconds: float
    fma_seconds: float
    overlap_exponent: float
    fma_chain_seconds: float
    clock_hz: float
    fma_latency_cycles: float
    tensor_rate_fraction: float | None = None
    model_phase_exponent: float | None = None
    model_phase_fmas: tuple[int, ...] = ()


def fit_trip_line(points: Mapping[int, float]) -> tuple[float, float | None]:
    """(latency, bytes per second) of the line ``latency + bytes / rate`` through
    ``{bytes per block and trip: seconds per trip}``; the rate is None for a flat or
    falling line (the bytes cost nothing measurable) and the latency at least 1 ns."""
    x = np.array([float(b) for b in points], dtype=float)
    y = np.array([float(s) for s in points.values()], dtype=float)
    if x.size >= 2 and np.ptp(x) > 0:
        slope, intercept = np.polyfit(x, y, 1)
    else:
        slope, intercept = 0.0, float(y.mean())
    if slope <= 0:
        return max(1e-9, float(y.min())), None
    return max(1e-9, float(intercept)), 1.0 / float(slope)


def fit_overlap_exponent(points: Mapping[int, float], memory_seconds: float, fma_seconds: float) -> float:
    """The ``p`` (1 to 16) whose ``(m**p + c**p) ** (1/p)`` fits the sweep's points best in
    log space, where ``m`` is `memory_seconds`, ``c`` the FMAs times `fma_seconds` and only
    points with ``m / 4 <= c <= 4 m`` count; 16 (nearly a plain maximum) when none does."""
    chosen = [(fmas * fma_seconds, seconds) for fmas, seconds in points.items()
              if fmas and memory_seconds / OVERLAP_WINDOW <= fmas * fma_seconds <= OVERLAP_WINDOW * memory_seconds]
    if not chosen:
        return 16.0
    compute = np.array([c for c, _ in chosen])
    measured = np.log(np.array([s for _, s in chosen]))
    grid = np.linspace(1.0, 16.0, 1501)

    def cost(p: float) -> float:
        model = np.log((memory_seconds ** p + compute ** p) ** (1.0 / p))
        return float(np.sum((model - measured) ** 2))

    return float(min(grid, key=cost))


def fit_overlap(points: Mapping[int, float], memory_seconds: float) -> tuple[float, float]:
    """(seconds per FMA per element, exponent) of the sweep: for each exponent ``p`` the
    compute side is what makes the most compute-bound point come out, ``(t**p - m**p) **
    (1/p)`` over its FMAs; the ``p`` whose curve fits best (`fit_overlap_exponent`) wins."""
    fmas, last = max(points.items())
    best = (float("inf"), last / max(1, fmas), 16.0)
    for p in np.linspace(1.0, 16.0, 301):
        c = (max(0.0, last ** p - memory_seconds ** p)) ** (1.0 / p) / max(1, fmas) or last / max(1, fmas)
        q = fit_overlap_exponent(points, memory_seconds, c)
        model = {f: (memory_seconds ** q + (f * c) ** q) ** (1.0 / q) for f in points if f}
        cost = sum((np.log(model[f]) - np.log(points[f])) ** 2 for f in model)
        if cost < best[0]:
            best = (cost, c, q)
    return best[1], best[2]


def overlap_sweep_kernel(fmas: int, elements: int, resources: occupancy.KernelResources) -> roofline.Kernel:
    """The overlap sweep's launch at ``fmas`` FMAs per element as `roofline.predict` takes it:
    one float read and one written per element, ``2 x fmas`` flops each, one thread an element
    in blocks of `OVERLAP_THREADS`, every warp on the same path (``fmas`` is the launch's
    argument)."""
    launch = occupancy.Launch(grid=-(-elements // OVERLAP_THREADS), block=OVERLAP_THREADS, resources=resources)
    return roofline.Kernel(name=f"overlap_sweep fmas={fmas}", flops=2.0 * fmas * elements, dram_bytes=8.0 * elements,
                           branch_issue_factor=1.0, launch=launch)


def model_phase_exponent(gpu: roofline.GPU | str, calibration: roofline.Calibration,
                           resources: occupancy.KernelResources, points: Mapping[int, float],
                           elements: int) -> tuple[float | None, tuple[int, ...]]:
    """The ``phase_exponent`` with which `roofline.predict` comes out at the overlap sweep's
    measured times, and the points that fit it.

    Each candidate exponent is a copy of ``calibration`` and every point is predicted with it
    (`overlap_sweep_kernel`): the fit calls the model it fits. The points are those whose FMAs
    are a whole number of the sweep's unrolled loop body (the SASS hot loop's FFMAs): there the
    SASS estimate counts the instructions the warps issue (other counts run the remainder
    loops, whose trips the flops do not tell). The exponent minimises the squared log ratios
    predicted / measured (golden-section search over `EXPONENT_RANGE`, in log p).

    Returns
    -------
    (float or None, tuple of int)
        The exponent (None where no point qualifies or ``resources`` carry no SASS loop), and
        the FMA counts of the points that fit it.
    """
    sass = resources.sass
    if sass is None or sass.hot_loop is None:
        return None, ()
    body = sass.loops[sass.hot_loop].instructions.fp32_fma
    chosen = tuple(sorted(f for f in points if f > 0 and body and f % body == 0))
    if not chosen:
        return None, ()
    kernels = {f: overlap_sweep_kernel(f, elements, resources) for f in chosen}

    def cost(log_p: float) -> float:
        cal = calibration.model_copy(update={"phase_exponent": float(np.exp(log_p))})
        return sum(np.log(roofline.predict(gpu, kernels[f], calibration=cal).seconds / points[f]) ** 2
                   for f in chosen)

    lo, hi = np.log(EXPONENT_RANGE[0]), np.log(EXPONENT_RANGE[1])
    ratio = (np.sqrt(5.0) - 1.0) / 2.0
    a, b = hi - ratio * (hi - lo), lo + ratio * (hi - lo)
    fa, fb = cost(a), cost(b)
    while hi - lo > 1e-4:  # golden section: the cost of one exponent is unimodal on the sweep
        if fa <= fb:
            hi, b, fb = b, a, fa
            a = hi - ratio * (hi - lo)
            fa = cost(a)
        else:
            lo, a, fa = a, b, fb
            b = lo + ratio * (hi - lo)
            fb = cost(b)
    return round(float(np.exp((lo + hi) / 2.0)), 3), chosen


def derive_compute(*, trip_points: Mapping[int, float], overlap_points: Mapping[int, float], overlap_elements: int,
                   fma_chain_seconds: float, clock_hz: float,
                   tensor_rate_fraction: float | None = None) -> ComputeEffects:
    """The parameters from the probes' times (a plain function, tested on the CPU).

    The overlap sweep's memory side is its time without FMAs; its compute side and the
    exponent are fitted together (`fit_overlap`).
    """
    latency, rate = fit_trip_line(trip_points)
    sweep = sorted((int(k), float(v)) for k, v in overlap_points.items())
    memory = dict(sweep).get(0, sweep[0][1])
    fma, exponent = fit_overlap(dict(sweep), memory)
    return ComputeEffects(
        trip_points={int(k): float(v) for k, v in trip_points.items()}, trip_latency_seconds=latency,
        trip_bytes_per_second=rate, overlap_points=dict(sweep), overlap_elements=overlap_elements,
        memory_seconds=memory, fma_seconds=fma, overlap_exponent=exponent,
        fma_chain_seconds=fma_chain_seconds, clock_hz=clock_hz, fma_latency_cycles=fma_chain_seconds * clock_hz,
        tensor_rate_fraction=tensor_rate_fraction)


@takes_session
def measure_compute(session: Session, info: DeviceInfo, *, quick: bool = False,
                    tensor_rate_fraction: float | None = None,
                    progress: Callable[[str], None] = lambda message: None) -> ComputeEffects:
    """Run the probes on the device (a few seconds).

    Parameters
    ----------
    session : validate.Session
    info : DeviceInfo
    quick : bool
        Fewer trips and repetitions, a smaller sweep.
    tensor_rate_fraction : float, optional
        The ceilings probe's fp16 tensor ceiling over the datasheet's, carried into the result.
    """
    kernels = compile_kernels(kernel_source("compute.cu"), ["trip_walk", "overlap_sweep", "fma_chain"],
                              arch=session.arch, name="compute.cu")
    rules = StopRules(warmup=1, repetitions=3 if quick else 7)

    def timed(kernel: str, grid: int, block: int, args: tuple) -> float:
        run = session.launcher(kernels[kernel], (grid, 1, 1), (block, 1, 1), args)
        return benchmark(run, timer=session.timer, rules=rules).median_seconds

    words = max(1 << 20, min(4 * info.l2_cache_bytes, info.memory_size_bytes // 8) // 4)
    walk = session.allocate(words * 4)
    session.poison(walk, words * 4)
    sink = session.allocate(4096)
    few, many = (16, 64) if quick else (64, 256)

    def trip(floats: int) -> float:
        # the longest walk covers the whole buffer once: every trip misses L2 on every repeat
        stride = max(TRIP_THREADS * floats, words // many)

        def run(trips: int) -> float:
            # one block: one SM's port alone, the rest of the GPU idle
            return timed("trip_walk", 1, TRIP_THREADS,
                         (walk, sink, np.uint32(words), np.int32(trips), np.int32(floats), np.uint32(stride)))
        return max(1e-10, (run(many) - run(few)) / (many - few))

    trip_points = {floats * 4 * TRIP_THREADS: trip(floats) for floats in TRIP_FLOATS}
    elements = min(words, 1 << (22 if quick else 25))
    out = session.allocate(elements * 4)
    grid = -(-elements // 256)
    sweep = OVERLAP_FMAS[::2] + (OVERLAP_FMAS[-1],) if quick else OVERLAP_FMAS
    overlap_points = {fmas: timed("overlap_sweep", grid, 256, (walk, out, np.uint32(elements), np.int32(fmas)))
                      for fmas in sorted(set(sweep))}
    length = 1 << (14 if quick else 16)
    chain = (timed("fma_chain", info.sm_count, 32, (sink, np.int32(2 * length), np.float32(1.0)))
             - timed("fma_chain", info.sm_count, 32, (sink, np.int32(length), np.float32(1.0)))) / length
    session.synchronize()
    del walk, out
    result = derive_compute(trip_points=trip_points, overlap_points=overlap_points, overlap_elements=elements,
                            fma_chain_seconds=max(1e-12, chain), clock_hz=info.clock_hz,
                            tensor_rate_fraction=tensor_rate_fraction)
    progress(f"compute: trip {result.trip_latency_seconds * 1e9:.0f} ns + "
             f"{(1e9 * 1024 / result.trip_bytes_per_second) if result.trip_bytes_per_second else 0:.1f} ns per KiB, "
             f"overlap exponent {result.overlap_exponent:.2f}, FMA latency {result.fma_latency_cycles:.1f} cycles")
    return result


def _trip_points(effects: ComputeEffects) -> str:
    """The walk's time per trip at each size, e.g. ``4 KiB 340 ns, 8 KiB 341 ns``."""
    return ", ".join(f"{b // 1024} KiB {s * 1e9:.0f} ns" for b, s in sorted(effects.trip_points.items()))


def compute_calibration(effects: ComputeEffects) -> dict[str, tuple[float | None, str]]:
    """The calibration entries the probes give: name -> (value, how it was measured).

    The one-block trip walk gives what one SM's port moves alone (``trip_bytes_per_second``,
    the slope of its time per trip against the bytes, where the line rises). Its latency is
    reported, not used: on an H200 (2026-11-27) the time per trip was flat at 340 ns from 4 to
    16 KiB and rose at 32 KiB (440 ns), so the line's intercept (310 ns) understates the flat
    part, which the latency ladder's DRAM latency (356 ns) already gives within 5 %. The
    overlap sweep gives ``phase_exponent``, the one `roofline.predict` itself needs to come out
    at its times (``model_phase_exponent``, where the run fitted it), used for kernels that load
    once, then compute; the exponent of the sweep's own sides (``overlap_exponent``, p = 1.06 on
    an H200, 2026-11-26: nearly their sum) is reported, not used: applied to every kernel it
    took the families' loops, whose loads are in flight while they compute, from 7 % to 23 %. (Run on every SM with a modulo per load, the walk is issue-bound: on an H200,
    270 ns at 1 KiB, then about 400 ns per KiB.)
    """
    points = _trip_points(effects)
    entries: dict[str, tuple[float | None, str]] = {
        "fma_latency_cycles": (effects.fma_latency_cycles,
                               f"one warp per SM, one dependent FMA chain: {effects.fma_chain_seconds * 1e9:.2f} ns per "
                               f"FMA at {effects.clock_hz / 1e6:.0f} MHz"),
    }
    if effects.trip_bytes_per_second is not None:
        entries["trip_bytes_per_second"] = (
            effects.trip_bytes_per_second,
            f"one block of {TRIP_THREADS} threads alone on the GPU, dependent trips that miss L2: the slope of the "
            f"time per trip against its bytes ({points})")
    if effects.tensor_rate_fraction is not None:
        entries["tensor_rate_fraction"] = (effects.tensor_rate_fraction,
                                           "the ceilings probe's fp16 tensor ceiling over the datasheet's rate")
    if effects.model_phase_exponent is not None:
        entries["phase_exponent"] = (
            effects.model_phase_exponent,
            f"the overlap sweep (one float in and one out a thread, FMAs on it in four chains, "
            f"{effects.overlap_elements} threads in blocks of {OVERLAP_THREADS}) fitted with roofline.predict's own "
            f"terms at {', '.join(str(f) for f in effects.model_phase_fmas)} FMAs "
            f"(model_phase_exponent); used for kernels that load once, then compute")
    return entries


def render_compute(e: ComputeEffects, h: str = "##") -> list[str]:
    """The compute-side parameters and what each was derived from."""
    rate = f"{1e9 * 1024 / e.trip_bytes_per_second:.1f} ns per KiB" if e.trip_bytes_per_second else "no bytes term"
    lines = [f"{h} Compute and latency effects (the time model's probes)", "",
             "| parameter | value | from |", "| --- | ---: | --- |",
             f"| trip latency | {e.trip_latency_seconds * 1e9:.0f} ns + {rate} | per trip at {_trip_points(e)} |",
             f"| overlap exponent, the sweep's own sides (reported, not used) | {e.overlap_exponent:.2f} | memory side "
             f"{e.memory_seconds * 1e6:.1f} us, {e.fma_seconds * 1e9:.3f} ns per FMA; at the ridge 2^(1/p) = "
             f"{2 ** (1 / e.overlap_exponent):.2f}x |",
             f"| FMA latency | {e.fma_latency_cycles:.1f} cycles | {e.fma_chain_seconds * 1e9:.2f} ns per dependent FMA |"]
    if e.model_phase_exponent is not None:
        lines.append(f"| phase exponent, fitted with roofline.predict | {e.model_phase_exponent:.2f} | the sweep at "
                     f"{', '.join(str(f) for f in e.model_phase_fmas)} FMAs; for kernels that load once, then compute |")
    if e.tensor_rate_fraction is not None:
        lines.append(f"| tensor rate | {e.tensor_rate_fraction:.3f} of the datasheet | fp16 tensor ceiling |")
    lines.append("")
    return lines


class ComputeProbe(Probe[ComputeEffects]):
    """The time model's compute-side probes (`measure_compute`), after the ceilings (whose fp16
    tensor ceiling gives the tensor rate)."""

    name = "compute"
    step = "compute effects"
    needs = ("ceilings",)  # and the prediction check's fit, where it ran, for the overlap exponent

    def run(self, ctx: RunContext) -> ComputeEffects | None:
        ceilings = ctx.result("ceilings", Ceilings)
        tensor = ceilings.get("fp16_tensor") if ceilings is not None else None
        fraction = (min(1.0, tensor.measured / tensor.datasheet)
                    if tensor is not None and tensor.datasheet else None)
        effects = measure_compute(ctx.session, ctx.info, quick=ctx.quick, tensor_rate_fraction=fraction,
                                  progress=ctx.progress)
        prediction = ctx.result("prediction", PredictionCheck)
        if ctx.entry is None or prediction is None:
            return effects  # no fitted calibration to predict the sweep with: its exponent stays unfitted
        # the run's calibration as far as it goes: the copy sweep's fit, the earlier probes' figures, this one's
        base = roofline.Calibration.model_validate(measured_calibration(
            prediction.calibration, origin=measurement_origin(ctx.info, ctx.created_utc),
            figures={**ctx.figures, **compute_calibration(effects)}))
        resources = occupancy.all_kernel_resources(kernel_source("compute.cu"), arch=ctx.info.arch,
                                                   sass=True)["overlap_sweep"]
        exponent, fmas = model_phase_exponent(ctx.entry, base, resources, effects.overlap_points,
                                                effects.overlap_elements)
        ctx.progress(f"compute: phase exponent {exponent} fitted with roofline.predict ({fmas} FMAs)")
        return effects.model_copy(update={"model_phase_exponent": exponent, "model_phase_fmas": fmas})

    def figures(self, result: ComputeEffects) -> Figures:
        return dict(compute_calibration(result))

    def render(self, result: ComputeEffects, heading: str, assets: str) -> list[str]:
        return render_compute(result, heading)
