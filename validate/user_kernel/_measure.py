"""`measure`: time a user's own kernel on the GPU, check its outputs, and set it beside the prediction.

The kernel (CUDA C++ source, PTX, a cubin or a fatbin) is loaded through cuda.core and
launched with the user's grid, block, cluster and dynamic shared memory. Timing follows
validate's rules (`_timing`: CUDA events, warm-up, the median) with two ways of keeping
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
from pathlib import Path
from typing import Literal, TYPE_CHECKING

import numpy as np
import occupancy
import roofline
from occupancy import CompileError, KernelResources
from occupancy.common import Displayed, Shown, percent, sequence, shown, si
from pydantic import BaseModel, ConfigDict, Field

from ..device import (
    ClockSample,
    DeviceError,
    JsonDict,
    Session,
    StopRules,
    TimingResult,
    benchmark,
    check_session,
    compile_cubin,
    cuda_errors,
    kernel_resources,
    load_object_code,
    open_clock_monitor,
    open_session,
)
from ._kernel_args import KernelArg, _described, parse_kernel_arg

if TYPE_CHECKING:
    from cuda.core import Buffer, Kernel, Stream

__all__ = ["ClockReading", "Measurement", "OutputCheck", "measure"]

_FROZEN = ConfigDict(frozen=True, extra="forbid")

CodeType = Literal["cuda", "ptx", "cubin", "fatbin"]


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
# loading the kernel


def _code_type(code: object, code_type: str | None) -> tuple[CodeType, str | bytes, str]:
    """Decide what ``code`` is; return (type, payload, name for messages)."""
    allowed = ("cuda", "ptx", "cubin", "fatbin")
    if code_type is not None and code_type not in allowed:
        raise ValueError(f"code_type={code_type!r} is not one of {', '.join(allowed)}")
    if isinstance(code, Path) or (isinstance(code, str) and "\n" not in code and len(code) < 4096
                                  and Path(code).suffix in (".cu", ".cuh", ".ptx", ".cubin", ".fatbin")):
        path = Path(code)
        if not path.is_file():
            raise ValueError(f"code={str(code)!r}: no such file")
        suffix = {".cu": "cuda", ".cuh": "cuda", ".ptx": "ptx", ".cubin": "cubin", ".fatbin": "fatbin"}.get(path.suffix)
        kind = code_type or suffix
        if kind is None:
            raise ValueError(f"code={str(code)!r}: say code_type= (one of {', '.join(allowed)}) for this suffix")
        payload = path.read_bytes() if kind in ("cubin", "fatbin") else path.read_text(encoding="utf-8")
        return kind, payload, path.name  # type: ignore[return-value]
    if isinstance(code, (bytes, bytearray)):
        data = bytes(code)
        if code_type in ("cubin", "fatbin"):
            return code_type, data, code_type  # type: ignore[return-value]
        if data[:4] == b"\x7fELF":
            return "cubin", data, "cubin"
        return (code_type or "fatbin"), data, "binary"  # type: ignore[return-value]
    if isinstance(code, str):
        if code_type:
            return code_type, code, code_type  # type: ignore[return-value]
        if re.search(r"^\s*\.(version|entry|visible)\b", code, re.MULTILINE):
            return "ptx", code, "PTX"
        return "cuda", code, "source"
    raise TypeError(f"code must be CUDA source or PTX (str), a cubin/fatbin (bytes) or a path, "
                    f"not {type(code).__name__}")


def _kernel_names_in_source(source: str) -> list[str]:
    return sorted(set(re.findall(r"__global__\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?void\s+(\w+)", source)))


def _load_kernel(resolved: tuple[str, str | bytes, str], name: str, *, arch: str,
                 defines: Mapping[str, object] | None, include_paths: Sequence[str], std: str | None,
                 max_register_count: int | None) -> Kernel:
    kind, payload, label = resolved
    with cuda_errors(f"loading kernel {name!r} from {label}"):
        if kind in ("cuda", "ptx"):
            try:
                module = compile_cubin(payload, arch=arch, name=label, language="c++" if kind == "cuda" else "ptx",
                                       std=std, defines=defines, include_paths=include_paths,
                                       max_register_count=max_register_count,
                                       name_expressions=(name,) if kind == "cuda" else ())
            except Exception as exc:
                # the user's source or PTX is bad input (exit 2), not a missing GPU: one
                # CompileError carrying the compiler's log, as occupancy.kernel_resources raises
                if not (type(exc).__module__ or "").startswith("cuda."):
                    raise
                log = str(exc).replace("\x00", "").strip()
                if kind == "cuda" and "name expression" in log:
                    # NVRTC looks the kernel up by its name expression: an unknown name, not bad code
                    known = _kernel_names_in_source(payload)
                    hint = f"; kernels in the source: {', '.join(known)}" if known else ""
                    raise ValueError(f"kernel={name!r} is not a kernel of {label}{hint}") from None
                raise CompileError(f"compiling {label} for {arch} failed", log) from None
        else:
            module = load_object_code(payload, kind)
    try:
        with cuda_errors(f"finding kernel {name!r} in {label}"):
            return module.get_kernel(name)
    except DeviceError as exc:
        known = _kernel_names_in_source(payload) if kind == "cuda" else []
        hint = f"; kernels in the source: {', '.join(known)}" if known else ""
        raise DeviceError(f"{exc}{hint}") from None


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


def _prediction(gpu: roofline.GPU, counts: object, grid: tuple[int, int, int], block: tuple[int, int, int],
                resources: KernelResources, dynamic: int, seconds: float | None,
                after_l2_flush: bool = False) -> tuple[JsonDict, list[str]]:
    notes: list[str] = []
    c = roofline.counted_kernel(counts)
    out: JsonDict = {"counts": c.model_dump(mode="json")}
    if seconds:
        out["achieved_flops_per_second"] = c.flops / seconds
        out["achieved_bytes_per_second"] = {
            level: n / seconds for level, n in (("dram", c.dram_bytes), ("l2", c.l2_bytes), ("l1", c.l1_bytes))
            if n is not None}
    if gpu is None:
        notes.append("no prediction: the GPU is not in gpuroof's database (pass gpu=)")
        return out, notes
    launch = roofline.measured_launch(grid, block, registers_per_thread=resources.registers_per_thread,
                                      static_shared_memory=resources.static_shared_memory,
                                      dynamic_shared_memory=dynamic)
    try:
        p = roofline.predict(gpu, roofline.counted_kernel(c, launch), after_l2_flush=after_l2_flush)
    except (ValueError, TypeError) as exc:
        notes.append(f"no prediction: {exc}")
        return out, notes
    out.update(predicted_seconds=p.seconds, predicted_limiter=p.limiter, roofline_seconds=p.roofline_seconds)
    if seconds:
        out["prediction_error"] = p.seconds / seconds - 1.0
    return out, notes


def _database_gpu(name: str, gpu: roofline.GPU | str | None) -> roofline.GPU | None:
    if gpu is not None:
        return roofline.gpu(gpu) if isinstance(gpu, str) else gpu
    for candidate in (name, re.sub(r"^NVIDIA\s+", "", name)):
        try:
            return roofline.gpu(candidate)
        except (ValueError, KeyError):
            continue
    return None


def measure(
    code: str | bytes | os.PathLike[str],
    kernel: str,
    *,
    grid: int | Sequence[int],
    block: int | Sequence[int],
    args: Sequence[object],
    cluster: int | Sequence[int] | None = None,
    dynamic_shared_memory: int = 0,
    sizes: Mapping[str, int] | None = None,
    code_type: CodeType | None = None,
    defines: Mapping[str, object] | None = None,
    include_paths: Sequence[str] = (),
    std: str | None = None,
    max_register_count: int | None = None,
    expected: Mapping[int, np.ndarray] | Callable[[list[object]], Mapping[int, np.ndarray]] | None = None,
    tolerance: float = 1e-5,
    counts: object = None,
    gpu: roofline.GPU | str | None = None,
    l2: Literal["flush", "warm"] = "flush",
    warmup: int = 3,
    min_repetitions: int = 10,
    max_repetitions: int = 1000,
    target_spread: float = 0.02,
    budget_seconds: float = 1.0,
    seed: int | None = None,
    device: int = 0,
    session: Session = None,
) -> Measurement:
    """Launch a user's kernel on the GPU, check its outputs, time it, and compare with the prediction.

    Parameters
    ----------
    code : str, bytes or path
        CUDA C++ source, PTX text, cubin/fatbin bytes, or a ``.cu``/``.ptx``/``.cubin``/
        ``.fatbin`` file. Source and PTX are compiled for the device's architecture (NVRTC).
    kernel : str
        The kernel's name (``extern "C"`` name, or a C++ name expression such as ``"k<float>"``).
    grid, block : int or tuple of int
        Blocks in the grid and threads per block (1 to 3 dimensions).
    args : sequence
        One per kernel parameter: numpy arrays (uploaded; may be checked as outputs),
        numpy scalars (``np.int32(n)``), `KernelArg` objects or spec strings
        (``"f32[n]=random"``, ``"f32[n]"`` for an output, ``"i32=1024"``).
    cluster : int or tuple, optional
        Thread-block cluster dimensions (sm_90+); ``grid`` stays in blocks and must divide.
    dynamic_shared_memory : int
        Bytes per block; above 48 KiB the kernel's limit is raised first.
    sizes : mapping, optional
        Names usable in spec-string sizes.
    code_type : {"cuda", "ptx", "cubin", "fatbin"}, optional
        What ``code`` is, when it cannot be told from a suffix or the content.
    defines, include_paths, std, max_register_count
        NVRTC options for source.
    expected : mapping or callable, optional
        Reference outputs by argument index (NaN elements are ignored), or a function of
        the host arguments (arrays, scalars, None for outputs) returning that mapping. The
        outputs are compared after one launch, before any timing; on a mismatch nothing is
        timed and ``check.ok`` is False.
    tolerance : float
        Largest ``||out - ref|| / ||ref||``.
    counts : optional
        The kernel's flops and bytes: a `roofline.Kernel` (your counts, a kernel model) or an
        `roofline.NcuKernel` from a profile; gives achieved rates and the prediction.
    gpu : optional
        `roofline.GPU` or name for the prediction; default: the device's database entry.
    l2 : {"flush", "warm"}
        Cold L2 before each timed launch (events around one launch), or warm L2 (a CUDA
        graph of back-to-back launches between one pair of events).
    warmup, min_repetitions, max_repetitions, target_spread, budget_seconds
        The stop rules of `benchmark` (``min_repetitions`` is its round size).
    seed : int, optional
        Seed of the random inputs.
    device : int
        CUDA device index (ignored with ``session``).
    session : validate.Session, optional
        An open device to reuse.

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
    """
    if l2 not in ("flush", "warm"):
        raise ValueError(f"l2={l2!r} must be 'flush' or 'warm'")
    if not isinstance(kernel, str) or not kernel:
        raise TypeError("kernel must be the kernel's name (a non-empty str)")
    shape = occupancy.Launch(grid=grid, block=block, cluster=cluster)  # dims checked and normalised once
    grid3, block3, cluster3 = shape.grid, shape.block, shape.cluster
    if isinstance(dynamic_shared_memory, bool) or not isinstance(dynamic_shared_memory, int) or dynamic_shared_memory < 0:
        raise ValueError(f"dynamic_shared_memory={dynamic_shared_memory!r} must be an int >= 0 (bytes)")
    if not tolerance >= 0:
        raise ValueError(f"tolerance={tolerance!r} must be >= 0")
    arguments = _normalise_args(args, sizes)
    resolved = _code_type(code, code_type)
    if not callable(expected) and expected is not None:
        bad = [i for i in expected if not (0 <= i < len(arguments))
               or isinstance(arguments[i], np.generic)
               or (isinstance(arguments[i], KernelArg) and arguments[i].kind == "scalar")]
        if bad:
            raise ValueError(f"expected has argument indices {bad} that are not arrays of the argument list")

    session = open_session(device) if session is None else check_session(session)
    core = session.cuda.core
    dev = session.device
    with cuda_errors("querying the device"):
        cc = dev.compute_capability
        arch = f"sm_{cc.major}{cc.minor}"
        device_name = str(dev.name)
        l2_bytes = int(dev.properties.l2_cache_size)
        max_threads_per_sm = int(dev.properties.max_threads_per_multiprocessor)
        max_dynamic = int(dev.properties.max_shared_memory_per_block_optin)
        try:
            pci = str(dev.pci_bus_id)
        except Exception:  # noqa: BLE001 - only used to find the NVML handle
            pci = None
    loaded = _load_kernel(resolved, kernel, arch=arch, defines=defines,
                          include_paths=include_paths, std=std, max_register_count=max_register_count)
    notes: list[str] = []
    note = _check_against_kernel(loaded, kernel, arguments)
    if note:
        notes.append(note)
    resources = kernel_resources(loaded)
    threads = math.prod(block3)
    if threads > resources.max_threads_per_block:
        raise ValueError(f"block={block3} has {threads} threads; kernel {kernel!r} launches with at most "
                         f"{resources.max_threads_per_block} on {arch}")
    if dynamic_shared_memory + resources.static_shared_memory > max_dynamic:
        raise ValueError(f"dynamic_shared_memory={dynamic_shared_memory} plus the kernel's "
                         f"{resources.static_shared_memory} static bytes exceed the {max_dynamic} bytes a block "
                         f"may use on this {device_name}")
    default_limit = occupancy.architecture(arch).max_shared_memory_per_block
    if dynamic_shared_memory > default_limit:
        session.set_kernel_attribute(loaded, "MAX_DYNAMIC_SHARED_SIZE_BYTES", dynamic_shared_memory)

    rng = np.random.default_rng(seed)
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
    working_set = sum(math.prod(shape) * dtype.itemsize for _, shape, dtype in buffers.values())

    with cuda_errors("building the launch configuration"):
        config = core.LaunchConfig(
            grid=tuple(g // c for g, c in zip(grid3, cluster3)) if cluster3 else grid3,
            block=block3, cluster=cluster3, shmem_size=dynamic_shared_memory)

    def launch(stream: Stream = session.stream) -> None:
        with cuda_errors(f"launching {kernel}"):
            core.launch(stream, config, loaded, *device_args)

    launch()
    session.synchronize()

    occ = occ_driver = None
    try:
        occ = occupancy.calculate(arch, threads_per_block=threads, registers_per_thread=resources.registers_per_thread,
                                  static_shared_memory=resources.static_shared_memory,
                                  dynamic_shared_memory=dynamic_shared_memory,
                                  max_dynamic_shared_memory=max(dynamic_shared_memory,
                                                                default_limit - resources.static_shared_memory)).occupancy
    except ValueError as exc:
        notes.append(f"occupancy not calculated: {exc}")
    try:
        blocks = loaded.occupancy.max_active_blocks_per_multiprocessor(threads, dynamic_shared_memory)
        occ_driver = blocks * threads / max_threads_per_sm
    except Exception as exc:  # noqa: BLE001 - informational cross-check
        notes.append(f"driver occupancy not read: {type(exc).__name__}")

    base: dict[str, object] = dict(
        kernel=kernel, device=device_name, arch=arch, grid=grid3, block=block3, cluster=cluster3,
        dynamic_shared_memory=dynamic_shared_memory, resources=resources, occupancy=occ,
        occupancy_driver=occ_driver, l2_flushed=l2 == "flush",
    )
    check = None
    if expected is not None:
        wanted = expected(list(host)) if callable(expected) else expected
        outputs = {i: session.download(buffers[i][0], buffers[i][1], buffers[i][2]) for i in wanted}
        check = _compare(outputs, wanted, tolerance)
        if not check.ok:
            return Measurement(method="not timed: the outputs did not match the reference", check=check,
                               notes=tuple(notes), **base)

    timer = session.timer
    if l2 == "flush":
        method = "CUDA events around each launch, after a memset of 4x L2 that evicts it (host overhead hidden)"
        per_sample, sample, flush = 1, launch, session.flush_l2
    else:
        estimate = timer(launch)
        per_sample = max(1, min(1000, math.ceil(1e-3 / max(estimate, 1e-7))))
        sample, method = _graph_of(session, launch, per_sample)
        flush = None
    monitor = open_clock_monitor(pci)
    first = monitor.sample()
    with monitor.sampling() as samples:
        timing = benchmark(sample, timer=timer, rules=StopRules(warmup=warmup, repetitions=min_repetitions, max_repetitions=max_repetitions, target_spread=target_spread, budget_seconds=budget_seconds), launches_per_sample=per_sample, flush=flush)
        session.synchronize()
    if not monitor.available:
        notes.append("clocks not read: NVML unavailable (pip install nvidia-ml-py)")
    if working_set <= l2_bytes and l2 == "warm":
        notes.append(f"the {working_set} bytes of buffers fit in the {l2_bytes}-byte L2: warm timings measure L2")
    seconds = timing.median_seconds
    extra: dict[str, object] = {}
    if counts is not None:
        extra, more = _prediction(_database_gpu(device_name, gpu), counts, grid3, block3, resources,
                                  dynamic_shared_memory, seconds, after_l2_flush=l2 == "flush")
        notes += more
    return Measurement(method=method, launches_per_sample=per_sample, check=check, timing=timing, seconds=seconds,
                       clocks=_clock_reading([*([first] if first else []), *samples]), notes=tuple(notes), **base, **extra)


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
