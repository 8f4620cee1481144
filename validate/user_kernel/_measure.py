"""`measure`: time a user's own kernel on the GPU, check its outputs, and set it beside the prediction.

The kernel (CUDA C++ source, PTX, a cubin or a fatbin) is loaded through cuda.core and
launched with the user's `occupancy.Launch` (grid, block, cluster, dynamic shared memory);
every other option is one `MeasureOptions`. Timing goes through validate's one timing loop
(`validate.device.benchmark`: CUDA events, warm-up, the median) with two ways of keeping
the host's launch overhead out of the figures:

* ``l2="flush"`` (default): before every timed launch a memset of 4x the L2 size evicts
  the cache (cold L2, the roofline models' assumption); the memset runs for tens of
  microseconds, so the next launch is already queued when the GPU reaches it and the
  events bracket only the kernel;
* ``l2="warm"``: a CUDA graph of several back-to-back launches is replayed between one
  pair of events and the time divided by the launch count (data stays in L2 between
  launches).

Repetitions continue until the spread (interquartile range over the median) is below
``target_spread`` or the device-time budget is spent. SM and memory clocks are sampled
through NVML while the timed launches run.
"""

from __future__ import annotations

import math
import os
import re
import statistics
from collections.abc import Callable, Mapping, Sequence
from typing import NamedTuple, TYPE_CHECKING

import numpy as np
import occupancy
import roofline
from occupancy import KernelResources
from roofline.memory import sass_loads_per_thread
from occupancy.common import Displayed, Shown, percent, sequence, shown, si
from pydantic import BaseModel, ConfigDict, Field

from ..device import (
    ClockSample,
    DeviceError,
    JsonDict,
    Session,
    TimingResult,
    benchmark,
    check_session,
    cuda_errors,
    kernel_resources,
    open_clock_monitor,
    open_session,
)
from ._kernel_args import KernelArg, _described, parse_kernel_arg
from ._load import load_kernel, resolve_code
from ._options import MeasureOptions
from ._sass import with_sass

if TYPE_CHECKING:
    from cuda.core import Buffer, Kernel, Stream

__all__ = ["ClockReading", "Measurement", "OutputCheck", "database_gpu", "measure"]

_FROZEN = ConfigDict(frozen=True, extra="forbid")


class OutputCheck(BaseModel):
    """Outputs compared with a reference before any timing: ``||out - ref|| / ||ref||``.

    NaN in the reference marks elements the check ignores; NaN in the output where the
    reference has a number is an unwritten element (outputs are poisoned with NaN).
    """

    model_config = _FROZEN

    ok: bool
    relative_error: float
    unwritten: int
    tolerance: float
    arguments: tuple[int, ...] = Field(description="Indices of the arguments checked.")
    message: str


class ClockReading(BaseModel):
    """SM and memory clocks sampled through NVML while the timed launches ran (Hz)."""

    model_config = _FROZEN

    samples: int
    sm_clock_hz: float
    sm_clock_min_hz: float
    sm_clock_max_hz: float
    memory_clock_hz: float | None = None
    source: str = "NVML"


class Measurement(Displayed):
    """One kernel launch timed on a GPU, with its check, counts and prediction (SI units).

    ``seconds`` is the median time of one launch. ``prediction_error`` is
    ``predicted_seconds / seconds - 1`` (negative: the model predicts faster than measured).
    """

    model_config = _FROZEN

    kernel: str
    device: str
    arch: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    cluster: tuple[int, int, int] | None = None
    dynamic_shared_memory: int = 0
    resources: KernelResources
    occupancy: float | None = Field(default=None, description="occupancy.calculate for this launch.")
    occupancy_driver: float | None = Field(default=None, description="cuOccupancyMaxActiveBlocksPerMultiprocessor.")
    method: str = Field(description="How launches were timed and host overhead kept out.")
    launches_per_sample: int = 1
    l2_flushed: bool
    check: OutputCheck | None = None
    timing: TimingResult | None = None
    seconds: float | None = None
    clocks: ClockReading | None = None
    counts: JsonDict | None = Field(default=None, description="flops, precision and bytes per level.")
    achieved_flops_per_second: float | None = None
    achieved_bytes_per_second: dict[str, float] = Field(default_factory=dict)
    predicted_seconds: float | None = None
    predicted_limiter: str | None = None
    roofline_seconds: float | None = None
    prediction_error: float | None = None
    notes: tuple[str, ...] = ()

    headline = (
        shown("kernel"), shown("device"), shown("seconds", si("s"), label="time"),
        shown("predicted_seconds", si("s"), label="predicted"), shown("predicted_limiter", label="limiter"),
        shown("prediction_error", lambda e: f"{e:+.1%}", label="error"), shown("occupancy", percent),
        Shown("check", lambda m: None if m.check is None else ("ok" if m.check.ok else "FAILED")),
    )

    @property
    def ok(self) -> bool:
        """True when the outputs passed the check (or none was asked for) and a time was taken."""
        return self.seconds is not None and (self.check is None or self.check.ok)


def _clock_reading(samples: list[ClockSample]) -> ClockReading | None:
    """The SM and memory clocks of the readings taken while the timed launches ran."""
    sm = [s.sm_clock_hz for s in samples if s.sm_clock_hz is not None]
    memory = [s.memory_clock_hz for s in samples if s.memory_clock_hz is not None]
    if not sm:
        return None
    return ClockReading(samples=len(sm), sm_clock_hz=statistics.median(sm), sm_clock_min_hz=min(sm),
                        sm_clock_max_hz=max(sm), memory_clock_hz=statistics.median(memory) if memory else None)


# ---------------------------------------------------------------------------------------
# arguments, launch, check


def _normalise_args(args: Sequence[object], sizes: Mapping[str, int] | None) -> list[object]:
    out: list[object] = []
    for i, a in enumerate(sequence("args", args, "a sequence with one entry per kernel parameter")):
        if isinstance(a, str):
            a = parse_kernel_arg(a, sizes)
        if isinstance(a, (bool, int, float)) and not isinstance(a, np.generic):
            raise TypeError(f"argument {i} = {a!r} is a Python {type(a).__name__}: give its C type as a numpy "
                            f"scalar (np.int32({a!r}), np.float32(...)) or a spec string ('i32={a}')")
        if not isinstance(a, (KernelArg, np.ndarray, np.generic)):
            raise TypeError(f"argument {i} is a {type(a).__name__}; use a numpy array, a numpy scalar, "
                            "a KernelArg or a spec string")
        if isinstance(a, np.ndarray) and a.size == 0:
            raise ValueError(f"argument {i} is an empty array")
        out.append(a)
    return out


def _check_against_kernel(kernel: Kernel, name: str, args: Sequence[object]) -> str | None:
    """Compare the argument list with the kernel's parameters (count and sizes); a note if unknown."""
    try:
        info = list(kernel.arguments_info)
    except Exception as exc:  # noqa: BLE001 - cuFuncGetParamInfo needs a recent driver
        return f"argument list not checked against the kernel ({type(exc).__name__})"
    if len(info) != len(args):
        given = ", ".join(_described(a) for a in args) or "none"
        raise ValueError(f"kernel {name!r} takes {len(info)} arguments, {len(args)} given ({given})")
    for i, (param, a) in enumerate(zip(info, args)):
        size = int(getattr(param, "size", param[1] if isinstance(param, tuple) else 0))
        is_array = isinstance(a, np.ndarray) or (isinstance(a, KernelArg) and a.kind != "scalar")
        want = 8 if is_array else (a.dtype.itemsize if isinstance(a, np.generic) else np.dtype(a.dtype).itemsize)
        if size and size != want:
            what = "a pointer" if is_array else f"{want} bytes"
            raise ValueError(f"argument {i} ({_described(a)}) is {what}, but parameter {i} of {name!r} is {size} bytes")
    return None


def _compare(outputs: Mapping[int, np.ndarray], expected: Mapping[int, np.ndarray], tolerance: float) -> OutputCheck:
    worst, unwritten, problems = 0.0, 0, []
    for index, want in expected.items():
        got = np.asarray(outputs[index], dtype=np.float64).reshape(-1)
        ref = np.asarray(want, dtype=np.float64).reshape(-1)
        if got.size != ref.size:
            raise ValueError(f"expected[{index}] has {ref.size} elements; argument {index} has {got.size}")
        care = np.isfinite(ref)
        missing = int(np.sum(care & np.isnan(got)))
        unwritten += missing
        diff = np.where(care, np.nan_to_num(got - ref, nan=np.inf), 0.0)
        norm = float(np.linalg.norm(ref[care])) or 1.0
        error = float(np.linalg.norm(diff)) / norm if not missing else math.inf
        worst = max(worst, error)
        if missing:
            problems.append(f"argument {index}: {missing} of {int(care.sum())} elements unwritten (still NaN)")
        elif error > tolerance:
            problems.append(f"argument {index}: ||out - ref|| / ||ref|| = {error:.3g} > tolerance {tolerance:g}")
    ok = not problems
    message = "outputs match the reference" if ok else "; ".join(problems)
    return OutputCheck(ok=ok, relative_error=worst, unwritten=unwritten, tolerance=tolerance,
                       arguments=tuple(sorted(expected)), message=message)


def _prediction(gpu: roofline.GPU | None, counts: object, launch: occupancy.Launch, resources: KernelResources,
                seconds: float | None, after_l2_flush: bool = False) -> tuple[JsonDict, list[str]]:
    notes: list[str] = []
    c = roofline.counted_kernel(counts)
    out: JsonDict = {"counts": c.model_dump(mode="json")}
    if seconds:
        out["achieved_flops_per_second"] = c.flops / seconds
        out["achieved_bytes_per_second"] = {
            level: n / seconds for level, n in (("dram", c.dram_bytes), ("l2", c.l2_bytes), ("l1", c.l1_bytes))
            if n is not None}
    if gpu is None:
        notes.append("no prediction: the GPU is not in gpuroof's database (pass MeasureOptions(gpu=...))")
        return out, notes
    sass = resources.sass
    # the loads a thread makes, as the source path counts them: the SASS's own in straight-line
    # code, else the counted load bytes at its load width; each one round trip without SASS
    loads = sass_loads_per_thread(sass, load_bytes=c.count("load_bytes"), threads=launch.threads)
    measured = roofline.measured_launch(launch.grid, launch.block, registers_per_thread=resources.registers_per_thread,
                                        static_shared_memory=resources.static_shared_memory,
                                        dynamic_shared_memory=launch.dynamic_shared_memory,
                                        resources=resources if sass is not None else None,
                                        elements_per_thread=loads or 1)
    if sass is None:
        notes.append(f"no SASS ({resources.sources.get('sass', 'not read')}): one global load round trip "
                     "per thread assumed")
    try:
        # a profiled kernel's measured counts (hit rates, loads, occupancy) reach the model beside it
        profiled = counts.measured if isinstance(counts, roofline.NcuKernel) else None
        p = roofline.predict(gpu, roofline.counted_kernel(c, measured), after_l2_flush=after_l2_flush,
                             measured=profiled)
    except (ValueError, TypeError) as exc:
        notes.append(f"no prediction: {exc}")
        return out, notes
    out.update(predicted_seconds=p.seconds, predicted_limiter=p.limiter, roofline_seconds=p.roofline_seconds)
    notes += p.assumptions  # what the model assumed for this launch (a loop's unknown trips, ...)
    if seconds:
        out["prediction_error"] = p.seconds / seconds - 1.0
    return out, notes


def database_gpu(name: str, gpu: roofline.GPU | None) -> roofline.GPU | None:
    """``gpu``, else the database's GPU for a device's name (with or without "NVIDIA "), else None."""
    if gpu is not None:
        return gpu
    for candidate in (name, re.sub(r"^NVIDIA\s+", "", name)):
        try:
            return roofline.gpu(candidate)
        except (ValueError, KeyError):
            continue
    return None


class _Device(NamedTuple):
    """What `measure` reads of the open device once."""

    arch: str
    name: str
    l2_bytes: int
    max_threads_per_sm: int
    max_dynamic_shared_memory: int
    pci_bus_id: str | None


class _Timed(NamedTuple):
    """The timing of `measure`: the statistics, how, and the clocks while it ran."""

    timing: TimingResult
    method: str
    launches_per_sample: int
    clocks: ClockReading | None
    notes: list[str]


def measure(
    code: str | bytes | os.PathLike[str],
    kernel: str,
    *,
    launch: occupancy.Launch,
    args: Sequence[object],
    options: MeasureOptions | None = None,
    expected: Mapping[int, np.ndarray] | Callable[[list[object]], Mapping[int, np.ndarray]] | None = None,
    counts: object = None,
    session: Session | None = None,
) -> Measurement:
    """Launch a user's kernel on the GPU, check its outputs, time it, and compare with the prediction.

    Parameters
    ----------
    code : str, bytes or path
        CUDA C++ source, PTX text, cubin/fatbin bytes, or a ``.cu``/``.ptx``/``.cubin``/
        ``.fatbin`` file. Source and PTX are compiled for the device's architecture (NVRTC).
    kernel : str
        The kernel's name (``extern "C"`` name, or a C++ name expression such as ``"k<float>"``).
    launch : occupancy.Launch
        Its grid and block (1 to 3 dimensions), cluster (sm_90+; the grid stays in blocks and
        must divide) and dynamic shared memory (bytes per block; above 48 KiB the kernel's limit
        is raised first). The kernel's registers and static shared memory are read from it once
        loaded, not from the launch.
    args : sequence
        One per kernel parameter: numpy arrays (uploaded; may be checked as outputs),
        numpy scalars (``np.int32(n)``), `KernelArg` objects or spec strings
        (``"f32[n]=random"``, ``"f32[n]"`` for an output, ``"i32=1024"``).
    options : MeasureOptions, optional
        How to compile (code type, NVRTC options), check (tolerance), time (cold or warm L2,
        the stop rules), predict (the database GPU), the seed and the device index.
    expected : mapping or callable, optional
        Reference outputs by argument index (NaN elements are ignored), or a function of
        the host arguments (arrays, scalars, None for outputs) returning that mapping. The
        outputs are compared after one launch, before any timing; on a mismatch nothing is
        timed and ``check.ok`` is False.
    counts : optional
        The kernel's flops and bytes: a `roofline.Kernel` (your counts, a kernel model) or an
        `roofline.NcuKernel` from a profile; gives achieved rates and the prediction.
    session : validate.Session, optional
        An open device to reuse (``options.device`` is then ignored).

    Returns
    -------
    Measurement

    Raises
    ------
    ValueError, TypeError
        A wrong argument list (count, types, sizes against the kernel's parameters), bad
        dimensions or options; raised before any launch.
    DeviceError
        No GPU, a compile error (with the log), an unknown kernel name, or a launch that
        fails (too many threads, too much shared memory, a fault).

    Examples
    --------
    >>> import occupancy, validate
    >>> options = validate.MeasureOptions(l2="warm", budget_seconds=0.1)
    >>> launch = occupancy.Launch(grid=4096, block=256)
    >>> m = validate.measure("saxpy.cu", "saxpy", launch=launch, args=["f32[n]"], options=options)  # doctest: +SKIP
    """
    options = MeasureOptions() if options is None else options
    if not isinstance(options, MeasureOptions):
        raise TypeError(f"options must be a validate.MeasureOptions, not {type(options).__name__}")
    if not isinstance(kernel, str) or not kernel:
        raise TypeError("kernel must be the kernel's name (a non-empty str)")
    if not isinstance(launch, occupancy.Launch):
        raise TypeError(f"launch must be an occupancy.Launch (occupancy.Launch(grid=..., block=...)), "
                        f"not {type(launch).__name__}")
    arguments = _normalise_args(args, options.sizes)
    resolved = resolve_code(code, options.code_type)
    _check_expected(expected, arguments)

    session = open_session(options.device) if session is None else check_session(session)
    device = _device(session)
    loaded, binary = load_kernel(resolved, kernel, arch=device.arch, options=options.compile_options,
                                 compiler=options.compiler)
    notes: list[str] = []
    note = _check_against_kernel(loaded, kernel, arguments)
    if note:
        notes.append(note)
    resources = kernel_resources(loaded)
    _fit_launch(session, loaded, kernel, launch, resources, device)
    if counts is not None:
        resources = with_sass(resources, binary, kernel, device.arch)
    host, device_args, buffers = _upload(session, arguments, np.random.default_rng(options.seed))
    working_set = sum(math.prod(shape) * dtype.itemsize for _, shape, dtype in buffers.values())

    core = session.cuda.core
    with cuda_errors("building the launch configuration"):
        grid = tuple(g // c for g, c in zip(launch.grid, launch.cluster)) if launch.cluster else launch.grid
        config = core.LaunchConfig(grid=grid, block=launch.block, cluster=launch.cluster,
                                   shmem_size=launch.dynamic_shared_memory)

    def run(stream: Stream = session.stream) -> None:
        with cuda_errors(f"launching {kernel}"):
            core.launch(stream, config, loaded, *device_args)

    run()
    session.synchronize()
    occ, occ_driver = _occupancies(loaded, launch, resources, device, notes)
    base: dict[str, object] = dict(
        kernel=kernel, device=device.name, arch=device.arch, grid=launch.grid, block=launch.block,
        cluster=launch.cluster, dynamic_shared_memory=launch.dynamic_shared_memory, resources=resources,
        occupancy=occ, occupancy_driver=occ_driver, l2_flushed=options.l2 == "flush",
    )
    check = None
    if expected is not None:
        wanted = expected(list(host)) if callable(expected) else expected
        outputs = {i: session.download(buffers[i][0], buffers[i][1], buffers[i][2]) for i in wanted}
        check = _compare(outputs, wanted, options.tolerance)
        if not check.ok:
            return Measurement(method="not timed: the outputs did not match the reference", check=check,
                               notes=tuple(notes), **base)

    timed = _time(session, run, options, device.pci_bus_id)
    notes += timed.notes
    if working_set <= device.l2_bytes and options.l2 == "warm":
        notes.append(f"the {working_set} bytes of buffers fit in the {device.l2_bytes}-byte L2: "
                     "warm timings measure L2")
    seconds = timed.timing.median_seconds
    extra: dict[str, object] = {}
    if counts is not None:
        extra, more = _prediction(database_gpu(device.name, options.gpu), counts, launch, resources, seconds,
                                  after_l2_flush=options.l2 == "flush")
        notes += more
    return Measurement(method=timed.method, launches_per_sample=timed.launches_per_sample, check=check,
                       timing=timed.timing, seconds=seconds, clocks=timed.clocks, notes=tuple(notes), **base, **extra)


def _check_expected(expected: object, arguments: Sequence[object]) -> None:
    """Refuse reference outputs for indices that are not arrays of the argument list."""
    if callable(expected) or expected is None:
        return
    bad = [i for i in expected if not (0 <= i < len(arguments))
           or isinstance(arguments[i], np.generic)
           or (isinstance(arguments[i], KernelArg) and arguments[i].kind == "scalar")]
    if bad:
        raise ValueError(f"expected has argument indices {bad} that are not arrays of the argument list")


def _device(session: Session) -> _Device:
    """The open device's architecture, name and the limits `measure` checks against."""
    dev = session.device
    with cuda_errors("querying the device"):
        cc = dev.compute_capability
        try:
            pci = str(dev.pci_bus_id)
        except Exception:  # noqa: BLE001 - only used to find the NVML handle
            pci = None
        return _Device(arch=f"sm_{cc.major}{cc.minor}", name=str(dev.name),
                       l2_bytes=int(dev.properties.l2_cache_size),
                       max_threads_per_sm=int(dev.properties.max_threads_per_multiprocessor),
                       max_dynamic_shared_memory=int(dev.properties.max_shared_memory_per_block_optin),
                       pci_bus_id=pci)


def _fit_launch(session: Session, loaded: Kernel, kernel: str, launch: occupancy.Launch,
                resources: KernelResources, device: _Device) -> None:
    """Refuse a launch the loaded kernel cannot take; raise its dynamic shared memory limit when asked."""
    threads = math.prod(launch.block)
    dynamic = launch.dynamic_shared_memory
    if threads > resources.max_threads_per_block:
        raise ValueError(f"block={launch.block} has {threads} threads; kernel {kernel!r} launches with at most "
                         f"{resources.max_threads_per_block} on {device.arch}")
    if dynamic + resources.static_shared_memory > device.max_dynamic_shared_memory:
        raise ValueError(f"dynamic_shared_memory={dynamic} plus the kernel's "
                         f"{resources.static_shared_memory} static bytes exceed the "
                         f"{device.max_dynamic_shared_memory} bytes a block may use on this {device.name}")
    if dynamic > occupancy.architecture(device.arch).max_shared_memory_per_block:
        session.set_kernel_attribute(loaded, "MAX_DYNAMIC_SHARED_SIZE_BYTES", dynamic)


def _upload(session: Session, arguments: Sequence[object], rng: np.random.Generator) -> tuple[
        list[object], list[object], dict[int, tuple[Buffer, tuple[int, ...], np.dtype]]]:
    """The host arguments (None for outputs), the device arguments, and each array's buffer,
    shape and dtype by argument index."""
    host: list[object] = []
    device_args: list[object] = []
    buffers: dict[int, tuple[Buffer, tuple[int, ...], np.dtype]] = {}
    for i, a in enumerate(arguments):
        if isinstance(a, np.generic):
            host.append(a)
            device_args.append(a)
        elif isinstance(a, KernelArg) and a.kind == "scalar":
            host.append(a.scalar())
            device_args.append(a.scalar())
        elif isinstance(a, KernelArg) and a.kind == "output":
            buffer = _poisoned_output(session, a.elements, np.dtype(a.dtype))
            buffers[i] = (buffer, (a.elements,), np.dtype(a.dtype))
            host.append(None)
            device_args.append(buffer)
        else:
            array = a if isinstance(a, np.ndarray) else a.host_array(rng)
            buffer = session.upload(array)
            buffers[i] = (buffer, array.shape, array.dtype)
            host.append(array)
            device_args.append(buffer)
    return host, device_args, buffers


def _occupancies(loaded: Kernel, launch: occupancy.Launch, resources: KernelResources, device: _Device,
                 notes: list[str]) -> tuple[float | None, float | None]:
    """`occupancy.calculate`'s occupancy of the launch and the driver's; a note where either is missing."""
    occ = occ_driver = None
    threads = math.prod(launch.block)
    dynamic = launch.dynamic_shared_memory
    default_limit = occupancy.architecture(device.arch).max_shared_memory_per_block
    try:
        most = max(dynamic, default_limit - resources.static_shared_memory)
        occ = occupancy.calculate(device.arch, threads_per_block=threads,
                                  registers_per_thread=resources.registers_per_thread,
                                  static_shared_memory=resources.static_shared_memory, dynamic_shared_memory=dynamic,
                                  max_dynamic_shared_memory=most).occupancy
    except ValueError as exc:
        notes.append(f"occupancy not calculated: {exc}")
    try:
        blocks = loaded.occupancy.max_active_blocks_per_multiprocessor(threads, dynamic)
        occ_driver = blocks * threads / device.max_threads_per_sm
    except Exception as exc:  # noqa: BLE001 - informational cross-check
        notes.append(f"driver occupancy not read: {type(exc).__name__}")
    return occ, occ_driver


def _time(session: Session, run: Callable[[Stream], None], options: MeasureOptions, pci: str | None) -> _Timed:
    """Time ``run`` by the options' L2 state and stop rules, the clocks sampled through NVML meanwhile."""
    timer = session.timer
    if options.l2 == "flush":
        method = "CUDA events around each launch, after a memset of 4x L2 that evicts it (host overhead hidden)"
        per_sample, sample, flush = 1, run, session.flush_l2
    else:
        estimate = timer(run)
        per_sample = max(1, min(1000, math.ceil(1e-3 / max(estimate, 1e-7))))
        sample, method = _graph_of(session, run, per_sample)
        flush = None
    monitor = open_clock_monitor(pci)
    first = monitor.sample()
    with monitor.sampling() as samples:
        timing = benchmark(sample, timer=timer, rules=options.stop_rules, launches_per_sample=per_sample, flush=flush)
        session.synchronize()
    notes = [] if monitor.available else ["clocks not read: NVML unavailable (pip install nvidia-ml-py)"]
    clocks = _clock_reading([*([first] if first else []), *samples])
    return _Timed(timing=timing, method=method, launches_per_sample=per_sample, clocks=clocks, notes=notes)


def _poisoned_output(session: Session, elements: int, dtype: np.dtype) -> Buffer:
    """A device buffer for an output: NaN for floats (all bits set for integers), so that
    unwritten elements show in the check."""
    if dtype == np.float32:
        buffer = session.allocate(elements * 4)
        session.poison(buffer, elements * 4)
        return buffer
    fill = np.nan if dtype.kind == "f" else np.iinfo(dtype).max
    return session.upload(np.full(elements, fill, dtype))


def _graph_of(session: Session, launch: Callable[[Stream], None], count: int) -> tuple[Callable[[], None], str]:
    """A function that replays ``count`` launches captured in one CUDA graph (or, when
    cuda.core cannot capture, enqueues them back to back)."""
    stream = session.stream
    try:
        with cuda_errors("capturing a CUDA graph"):
            builder = stream.create_graph_builder().begin_building()
            for _ in range(count):
                launch(builder)
            builder.end_building()
            graph = builder.complete()
            graph.upload(stream)
    except (DeviceError, AttributeError) as exc:
        def back_to_back() -> None:
            for _ in range(count):
                launch()

        return back_to_back, (f"{count} back-to-back launches between one pair of CUDA events, time divided by "
                              f"{count} (no graph: {exc})")

    def replay() -> None:
        with cuda_errors("launching the CUDA graph"):
            graph.launch(stream)

    return replay, f"a CUDA graph of {count} back-to-back launches between one pair of CUDA events, time / {count}"
