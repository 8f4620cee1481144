"""The kernel families, measured: each launch checked against numpy, then timed.

Families: streaming (copy, vector_add, triad), strided reads and writes, offset reads and
writes, AoS/SoA, the transposes of `roofline.models.transpose`, blur radius 1 to 4, the
four classic reductions, naive and tiled matmul, lane-divergent vs warp-uniform branches,
grid-stride copies at low occupancy, and a shared-memory stride sweep. `family_specs` lists
the launches; `measure_families` checks each against its numpy reference and times it on
the device (CUDA events, median, L2 flushed when the footprint fits in it), reusing the
suite's measurement where the suite ran the same kernel, and returns one `FamilyRecord`
per launch. A record holds what was measured and how to rebuild the kernel's description
(`model` and `arguments`), so the predictions can be made again, on any CPU, for a model
that changed since (`validate.family_report`).
"""

from __future__ import annotations

import functools
import json
import math
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import occupancy
import roofline
from occupancy import SassSummary
from occupancy.common import short_repr
from pydantic import BaseModel, ConfigDict, Field, PositiveInt, field_validator
from roofline import RooflineError, models
from roofline.divergence import branch_divergence

from ..device import (
    DeviceError,
    DeviceInfo,
    JsonDict,
    Session,
    benchmark,
    compile_kernels,
    kernel_resources,
    kernel_source,
    takes_session,
    with_defines,
)
from ._kernels import F32, KernelCase, _normal, build_case, check_outputs, launch_case
from ._suite import KernelValidation, kernel_rules

__all__ = ["FAMILIES", "FamilyRecord", "check_families", "family_model", "family_specs", "measure_families"]

#: The families, in the order reports list them.
FAMILIES: tuple[str, ...] = (
    "streaming", "strided_read", "strided_write", "offset", "aos_soa", "transpose", "blur", "reduction", "matmul",
    "divergence", "grid_stride_low_occupancy", "shared_stride",
)

REDUCTION_VARIANTS = ("interleaved", "interleaved_compact", "sequential", "warp_shuffle")
#: Strides of the strided reads and writes: every power of two and the odd steps between,
#: 10 of the 32 the first H200 baseline measured (the run time stays under a minute).
STRIDES = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32)
#: Misalignments of the offset reads and writes, in floats (32: aligned again).
OFFSETS = (1, 11, 32)
SHARED_STRIDES = (1, 2, 3, 4, 8, 16, 32)
SHARED_ITERS = 4096
BRANCH_ITERS = 256
#: Transposes beside the ten variants at 16 x 16: the shared-memory tiles at Cheng's
#: 32 x 32 (the suite's) and 32 x 16 (ch.5's transposeSmemPad).
TRANSPOSE_TILES = ((32, 32), (32, 16))

#: The family of each suite model (every suite kernel belongs to one).
SUITE_FAMILY = {
    "copy": "streaming", "vector_add": "streaming", "triad": "streaming", "offset_read": "offset",
    "offset_write": "offset", "strided_read": "strided_read", "strided_write": "strided_write", "aos": "aos_soa",
    "soa": "aos_soa", "reduction": "reduction", "blur": "blur", "matmul_naive": "matmul", "matmul_tiled": "matmul",
    "transpose": "transpose",
}


class FamilyRecord(BaseModel):
    """One measured launch of a family: what ran, how long it took, how to rebuild its model.

    Times in seconds. ``model`` and ``arguments`` rebuild the kernel's description with
    `family_model` (a `roofline.models` name, or one of this module's own kernels); the
    launch predicted is that model's with the measured ``grid``, ``block``, registers and
    shared memory.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    family: str
    label: str
    model: str = Field(description="roofline.models name, or shared_stride / branches / grid_stride_copy.")
    arguments: JsonDict = Field(description="Keyword arguments of the model function (JSON values).")
    source: str = Field(description="File of validate/kernels holding the CUDA function.")
    function: str
    grid: tuple[PositiveInt, PositiveInt, PositiveInt]
    block: tuple[PositiveInt, PositiveInt, PositiveInt]
    registers_per_thread: int | None = Field(default=None, ge=0, le=255)
    static_shared_memory: int | None = Field(default=None, ge=0)
    dynamic_shared_memory: int = Field(default=0, ge=0)
    measured_seconds: float | None = Field(default=None, gt=0)
    spread: float | None = Field(default=None, ge=0, description="Interquartile range over the median.")
    repetitions: int | None = None
    l2_flushed: bool = False
    relative_error: float | None = Field(default=None, description="||out - ref|| / ||ref|| of the check.")
    origin: Literal["families", "suite"] = Field(
        default="families", description="Measured by the family run, or taken from the suite's run of the kernel.")
    error: str | None = Field(default=None, description="Why there is no time (compile, launch or check).")
    defines: dict[str, int] = Field(default_factory=dict, description="Preprocessor values the source was built with.")
    loads_in_flight_per_thread: int | None = Field(
        default=None, ge=1, description="Global loads per thread in flight, read from the SASS (None: not read).")
    sass: SassSummary | None = Field(default=None, description="The kernel's SASS in figures (None: not read).")

    @field_validator("arguments")
    @classmethod
    def _json_values(cls, value: JsonDict) -> JsonDict:
        return json_values(value, "arguments")


def sass_summary(source: str, function: str, arch: str) -> occupancy.SassSummary | None:
    """`function`'s SASS in figures (`occupancy.SassSummary`: NVRTC, then nvdisasm), or None
    where it cannot be read here (no nvdisasm, no NVRTC); the model then stands alone."""
    try:
        resources = occupancy.kernel_resources(source, kernel=function, arch=arch)
    except (occupancy.OccupancyError, OSError) as exc:
        warnings.warn(f"SASS of {function} not read: {exc}", stacklevel=2)
        return None
    return resources.sass


def json_values(value: JsonDict, name: str) -> JsonDict:
    """`value` if it is plain JSON (finite numbers); a ValueError naming `name` otherwise."""
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must hold JSON values (finite numbers): {exc}") from None
    return value


@dataclass(frozen=True)
class FamilySpec:
    """One launch of a family: its model (name and arguments) and its checked CUDA case."""

    family: str
    label: str
    model: str
    arguments: Mapping[str, object]
    source: str
    case: Callable[[np.random.Generator], KernelCase]

    def kernel(self) -> roofline.Kernel:
        """The `roofline.Kernel` that describes the launch."""
        return family_model(self.model, self.arguments)


# ------------------------------------------------------------------ the family-only kernels


def _shared_model(grid: int, block: int, stride: int) -> roofline.Kernel:
    threads = grid * block
    ways = math.gcd(stride, 32)
    wavefronts = threads // 32 * SHARED_ITERS * ways
    return roofline.Kernel(
        name="shared_stride", flops=threads * SHARED_ITERS, precision="fp32",
        load_bytes=grid * 2048 * 4, store_bytes=4 * threads, dram_bytes=2048 * 4 + 4 * threads,
        l1_bytes=grid * 2048 * 4 + 4 * threads + wavefronts * 128, shared_bytes=4 * threads * SHARED_ITERS,
        bank_conflict_ways=ways, parameters={"grid": grid, "block": block, "stride": stride, "iters": SHARED_ITERS},
        formula="acc += s[(tid * STRIDE) % 1024 + (k % 32) * 32]  (ITERS times)",
        launch=occupancy.Launch(grid=grid, block=block, static_shared_memory=8192))


def _branch_model(n: int, block: int, uniform: bool) -> roofline.Kernel:
    thread = np.arange(block)
    side = (thread // 32) & 1 if uniform else thread & 1  # the kernel's `side` within a block of whole warps
    return roofline.Kernel(
        branch_issue_factor=branch_divergence(side).issue_factor,
        name="branches", flops=2 * BRANCH_ITERS * n, precision="fp32", load_bytes=8 * n, store_bytes=4 * n,
        dram_bytes=12 * n, l2_bytes=12 * n,
        parameters={"n": n, "block": block, "branch": "warp" if uniform else "lane", "iters": BRANCH_ITERS},
        formula="side ? x = fmaf(x, x, a[i]) : x = fmaf(x, 0.5f, b[i])  (ITERS times); y[i] = x",
        launch=occupancy.Launch(grid=-(-n // block), block=block))


def _grid_stride_model(n: int, grid: int, block: int, loads_in_flight: int) -> roofline.Kernel:
    model = models.copy(n, block=block)
    per_thread = -(-n // (grid * block))
    launch = model.launch.model_copy(update={"grid": (grid, 1, 1), "elements_per_thread": per_thread,
                                             "loads_in_flight_per_thread": loads_in_flight})
    return model.model_copy(update={"launch": launch, "parameters": {
        "n": n, "grid": grid, "block": block, "loads_in_flight": loads_in_flight}})


#: Kernels of validate/kernels/families.cu with no `roofline.models` function.
_FAMILY_MODELS: dict[str, Callable[..., roofline.Kernel]] = {
    "branches": _branch_model,
    "grid_stride_copy": _grid_stride_model,
    "shared_stride": _shared_model,
}


@functools.lru_cache(maxsize=256)
def _cached_model(model: str, arguments: str) -> roofline.Kernel:
    kwargs = json.loads(arguments)
    if model in _FAMILY_MODELS:
        try:
            return _FAMILY_MODELS[model](**kwargs)
        except TypeError as exc:
            raise RooflineError(f"{model}(): {exc}") from None
    return models.get(model, **kwargs)


def family_model(model: str, arguments: Mapping[str, object]) -> roofline.Kernel:
    """The `roofline.Kernel` of a family launch, rebuilt from its record's model and arguments.

    Parameters
    ----------
    model : str
        A `roofline.models` name, or ``"shared_stride"``, ``"branches"`` or
        ``"grid_stride_copy"`` (kernels of ``validate/kernels/families.cu``).
    arguments : mapping
        Keyword arguments of the model function, JSON values.

    Returns
    -------
    roofline.Kernel
        Built by today's code: a model edited since the measurement gives its new figures.

    Raises
    ------
    roofline.RooflineError
        For an unknown model or arguments it does not take.

    Examples
    --------
    >>> family_model("strided_read", {"n": 1 << 20, "stride": 4}).parameters["stride"]
    4
    """
    if not isinstance(model, str):
        raise TypeError(f"model must be a str, not {type(model).__name__}")
    if not isinstance(arguments, Mapping):
        raise TypeError(f"arguments must be a mapping, not {type(arguments).__name__}")
    if model not in _FAMILY_MODELS and model not in models.names():
        known = ", ".join(sorted((*models.names(), *_FAMILY_MODELS)))
        raise RooflineError(f"model={model!r} is not a family model; known: {known}")
    try:
        key = json.dumps(dict(arguments), sort_keys=True, allow_nan=False)
    except (TypeError, ValueError):
        raise RooflineError(f"arguments of {model} must be JSON values, got {short_repr(dict(arguments))}") from None
    return _cached_model(model, key)


# ------------------------------------------------------------------ checked CUDA cases


def _reduction_case(n: int, block: int, variant: str) -> Callable[[np.random.Generator], KernelCase]:
    def build(rng: np.random.Generator) -> KernelCase:
        x = _normal(rng, n)
        blocks = -(-n // block)

        def partials(i: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
            padded = np.zeros(blocks * block, np.float64)
            padded[:n] = i["x"]
            return {"partial": padded.reshape(blocks, block).sum(axis=1)}

        return KernelCase(f"reduce_{variant}", f"reduce_{variant}", (blocks, 1, 1), (block, 1, 1), {"x": x},
                          {"partial": ((blocks,), F32)}, ("x", "partial", np.int32(n)), partials,
                          defines={"BLOCK": block}, tolerance=1e-5)

    return build


def _shared_case(grid: int, block: int, stride: int) -> Callable[[np.random.Generator], KernelCase]:
    def build(rng: np.random.Generator) -> KernelCase:
        x = rng.random(2048, dtype=F32)

        def reference(i: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
            tid = np.arange(block)
            base = (tid * stride) % 1024
            words = base[:, None] + (np.arange(SHARED_ITERS) % 32)[None, :] * 32
            per_thread = i["x"].astype(np.float64)[words].sum(axis=1)
            return {"y": np.tile(per_thread, grid)}

        return KernelCase("shared_stride", "shared_stride", (grid, 1, 1), (block, 1, 1), {"x": x},
                          {"y": ((grid * block,), F32)}, ("x", "y"), reference,
                          defines={"STRIDE": stride, "ITERS": SHARED_ITERS}, tolerance=1e-4)

    return build


def _branch_case(n: int, block: int, uniform: bool) -> Callable[[np.random.Generator], KernelCase]:
    def build(rng: np.random.Generator) -> KernelCase:
        a = ((rng.random(n, dtype=F32) - 0.5) * 0.4).astype(F32)
        b = (rng.random(n, dtype=F32) * 2 - 1).astype(F32)

        def reference(i: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
            index = np.arange(n)
            side = ((index // 32) & 1) if uniform else (index & 1)
            x = np.zeros(n)
            av, bv = i["a"].astype(np.float64), i["b"].astype(np.float64)
            for _ in range(BRANCH_ITERS):
                x = np.where(side == 1, x * x + av, 0.5 * x + bv)
            return {"y": x}

        return KernelCase("branches", "branches", (-(-n // block), 1, 1), (block, 1, 1), {"a": a, "b": b},
                          {"y": ((n,), F32)}, ("a", "b", "y", np.int32(n)), reference,
                          defines={"UNIFORM": int(uniform), "ITERS": BRANCH_ITERS}, tolerance=1e-5)

    return build


def _grid_stride_case(n: int, grid: int, block: int, ept: int) -> Callable[[np.random.Generator], KernelCase]:
    def build(rng: np.random.Generator) -> KernelCase:
        x = _normal(rng, n)
        return KernelCase("grid_stride_copy", "grid_stride_copy", (grid, 1, 1), (block, 1, 1), {"x": x},
                          {"y": ((n,), F32)}, ("x", "y", np.int32(n)), lambda i: {"y": i["x"]},
                          defines={"EPT": ept})

    return build


def _suite_case(model: str, arguments: Mapping[str, object]) -> Callable[[np.random.Generator], KernelCase]:
    return lambda rng: build_case(family_model(model, arguments), rng)


# ------------------------------------------------------------------ the launches


def family_specs(sm_count: int, *, quick: bool = False, families: Sequence[str] | None = None) -> tuple[FamilySpec, ...]:
    """The launches of the families, for a GPU of ``sm_count`` SMs.

    Parameters
    ----------
    sm_count : int
        SMs of the GPU (the low-occupancy and shared-memory grids are a few blocks per SM).
    quick : bool
        Small sizes (2**20 floats, 512 x 512 images and matrices) and one or two launches
        per family (for a test on any GPU).
    families : sequence of str, optional
        Only these families (names of `FAMILIES`); default all.

    Returns
    -------
    tuple of FamilySpec

    Examples
    --------
    >>> specs = family_specs(132)
    >>> len(specs), sorted({s.family for s in specs}) == sorted(FAMILIES)
    (90, True)
    """
    if isinstance(sm_count, bool) or not isinstance(sm_count, int):
        raise TypeError(f"sm_count must be an int, not {type(sm_count).__name__}")
    if not 1 <= sm_count <= 4096:
        raise RooflineError(f"sm_count={sm_count} must be from 1 to 4096")
    wanted = check_families(families)
    vector = 1 << (20 if quick else 26)
    image = 512 if quick else 4096
    matrix = 512 if quick else 4096
    square = 512 if quick else 8192
    specs: list[FamilySpec] = []

    def add(family: str, label: str, model: str, arguments: JsonDict, source: str = "suite.cu",
            case: Callable[[np.random.Generator], KernelCase] | None = None) -> None:
        if family in wanted:
            specs.append(FamilySpec(family, label, model, arguments, source, case or _suite_case(model, arguments)))

    for name in ("copy",) if quick else ("copy", "vector_add", "triad"):
        add("streaming", name, name, {"n": vector})
    for stride in (1, 8) if quick else STRIDES:
        add("strided_read", f"strided_read(stride={stride})", "strided_read", {"n": vector, "stride": stride})
    for stride in (1, 8) if quick else STRIDES:
        add("strided_write", f"strided_write(stride={stride})", "strided_write", {"n": vector, "stride": stride})
    for name in ("offset_read", "offset_write"):
        for offset in (11,) if quick else OFFSETS:
            add("offset", f"{name}(offset={offset})", name, {"n": vector, "offset": offset})
    for name in ("aos", "soa"):
        add("aos_soa", name, name, {"n": vector})
    variants = ("naive_row", "shared_padded") if quick else (
        "copy_row", "copy_column", "naive_row", "naive_column", "unroll4_row", "unroll4_column", "diagonal_row",
        "diagonal_column", "shared", "shared_padded")
    for variant in variants:
        add("transpose", f"transpose({variant})", "transpose",
            {"rows": square, "cols": square, "variant": variant, "block": [16, 16]})
    for bx, by in () if quick else TRANSPOSE_TILES:
        for variant in ("shared", "shared_padded"):
            add("transpose", f"transpose({variant}, block={bx}x{by})", "transpose",
                {"rows": square, "cols": square, "variant": variant, "block": [bx, by]})
    for radius in (1, 3) if quick else (1, 2, 3, 4):
        add("blur", f"blur(radius={radius})", "blur", {"width": image, "height": image, "radius": radius})
    for block in (256,) if quick else (256, 1024):
        for variant in REDUCTION_VARIANTS:
            add("reduction", f"reduction({variant}, block={block})", "reduction",
                {"n": vector, "block": block, "variant": variant}, "families.cu", _reduction_case(vector, block, variant))
    add("matmul", "matmul_naive", "matmul_naive", {"m": matrix})
    for tile in (16,) if quick else (16, 32):
        add("matmul", f"matmul_tiled(tile={tile})", "matmul_tiled", {"m": matrix, "tile": tile})
    branch_n = 1 << (16 if quick else 24)
    for uniform in (False, True):
        add("divergence", f"branches({'warp' if uniform else 'lane'})", "branches",
            {"n": branch_n, "block": 256, "uniform": uniform}, "families.cu", _branch_case(branch_n, 256, uniform))
    for blocks_per_sm in (1,) if quick else (1, 2, 4):
        grid = blocks_per_sm * sm_count
        for ept in (1, 16) if quick else (1, 2, 4, 8, 16):
            add("grid_stride_low_occupancy", f"grid_stride_copy(blocks_per_sm={blocks_per_sm}, ept={ept})",
                "grid_stride_copy", {"n": vector, "grid": grid, "block": 256, "loads_in_flight": ept}, "families.cu",
                _grid_stride_case(vector, grid, 256, ept))
    shared_grid = 8 * sm_count
    for stride in (1, 32) if quick else SHARED_STRIDES:
        add("shared_stride", f"shared_stride(stride={stride})", "shared_stride",
            {"grid": shared_grid, "block": 256, "stride": stride}, "families.cu", _shared_case(shared_grid, 256, stride))
    return tuple(specs)


def check_families(families: Sequence[str] | None) -> tuple[str, ...]:
    if families is None:
        return FAMILIES
    if isinstance(families, (str, bytes)) or not isinstance(families, Sequence):
        raise TypeError(f"families must be a sequence of family names, not {type(families).__name__}")
    for name in families:
        if not isinstance(name, str):
            raise TypeError(f"families must hold names (str), not {type(name).__name__}")
    unknown = [name for name in families if name not in FAMILIES]
    if unknown:
        raise RooflineError(f"families={unknown} are not families; known: {', '.join(FAMILIES)}")
    return tuple(families)


# ------------------------------------------------------------------ measuring


def _suite_record(row: KernelValidation, spec: FamilySpec | None) -> FamilyRecord:
    """A suite kernel's measurement as a family record (its family's label where one matches)."""
    timing = row.timing
    return FamilyRecord(
        family=spec.family if spec else SUITE_FAMILY[row.name], label=spec.label if spec else row.label,
        model=row.name, arguments=dict(spec.arguments) if spec else dict(row.parameters), source="suite.cu",
        function=row.function, grid=row.grid, block=row.block,
        registers_per_thread=row.resources.registers_per_thread if row.resources else None,
        static_shared_memory=row.resources.static_shared_memory if row.resources else None,
        measured_seconds=row.measured_seconds, spread=timing.spread if timing else None,
        repetitions=timing.repetitions if timing else None, l2_flushed=bool(timing and timing.l2_flushed),
        relative_error=row.relative_error, origin="suite",
        error=None if row.status == "ok" else f"{row.status}: {row.error}")


def _matching_spec(row: KernelValidation, specs: Sequence[FamilySpec]) -> FamilySpec | None:
    """The family launch that is the suite row's kernel: same model, source, launch and parameters."""
    for spec in specs:
        if spec.model != row.name or spec.source != "suite.cu" or row.grid is None:
            continue
        kernel = spec.kernel()
        grid = tuple((tuple(kernel.launch.grid) + (1, 1, 1))[:3])
        block = tuple((tuple(kernel.launch.block) + (1, 1, 1))[:3])
        if grid == tuple(row.grid) and block == tuple(row.block) and dict(kernel.parameters) == dict(row.parameters):
            return spec
    return None


@takes_session
def measure_families(
    session: Session,
    info: DeviceInfo,
    *,
    quick: bool = False,
    families: Sequence[str] | None = None,
    suite_rows: Sequence[KernelValidation] = (),
    rng: np.random.Generator | None = None,
    progress: Callable[[str], None] = lambda message: None,
) -> tuple[FamilyRecord, ...]:
    """Check every family launch against numpy and time it on the device.

    Parameters
    ----------
    session : validate.Session
        An open device.
    info : validate.DeviceInfo
        Its description (SMs, architecture, L2 size).
    quick : bool
        Small sizes, one or two launches per family, fewer repetitions.
    families : sequence of str, optional
        Only these families; default all of `FAMILIES`.
    suite_rows : sequence of KernelValidation
        The suite's rows of the same run: a family launch the suite measured (same model,
        parameters and launch) is taken from it rather than run again, and every suite
        kernel joins its family (``origin="suite"``).
    rng : numpy.random.Generator, optional
        Source of the inputs (default a fresh one).
    progress : callable
        Receives one line per launch.

    Returns
    -------
    tuple of FamilyRecord
        A launch that fails to compile, launch or verify is recorded with its error and
        no time.
    """
    rng = np.random.default_rng() if rng is None else rng
    specs = family_specs(info.sm_count, quick=quick, families=families)
    records, reused = _suite_records(suite_rows, specs, check_families(families), rng, info)
    started = time.perf_counter()
    for spec in specs:
        if spec.label not in reused:
            records.append(_measure_spec(session, info, spec, rng, quick, progress))
    order = {name: i for i, name in enumerate(FAMILIES)}
    records.sort(key=lambda r: order[r.family])  # stable: the suite's first within a family
    from_suite = sum(r.origin == "suite" for r in records)
    progress(f"families: {len(records)} launches, {len(records) - from_suite} run here in "
             f"{time.perf_counter() - started:.1f} s and {from_suite} from the suite")
    return tuple(records)


def _suite_records(suite_rows: Sequence[KernelValidation], specs: Sequence[FamilySpec], wanted: Sequence[str],
                   rng: np.random.Generator, info: DeviceInfo) -> tuple[list[FamilyRecord], set[str]]:
    """The suite's rows of the wanted families as family records, each read like a family's
    launch (its defines and its SASS), and the labels of the `specs` they are (not run again)."""
    records: list[FamilyRecord] = []
    reused: set[str] = set()
    for row in suite_rows:
        if SUITE_FAMILY.get(row.name) not in wanted:
            continue
        spec = _matching_spec(row, specs)
        if spec is not None:
            reused.add(spec.label)
        record = _suite_record(row, spec)
        if record.error is None:
            defines = dict(build_case(family_model(record.model, record.arguments), rng).defines)
            sass = sass_summary(with_defines(kernel_source(record.source), defines), record.function, info.arch)
            record = record.model_copy(update={"defines": defines, "sass": sass, "loads_in_flight_per_thread": (
                sass.global_loads_in_flight_per_thread or None) if sass is not None else None})
        records.append(record)
    return records, reused


def _measure_spec(session: Session, info: DeviceInfo, spec: FamilySpec, rng: np.random.Generator, quick: bool,
                  progress: Callable[[str], None]) -> FamilyRecord:
    """One family launch compiled, checked against numpy and timed (its error where one fails)."""
    case = spec.case(rng)
    base: dict[str, object] = dict(family=spec.family, label=spec.label, model=spec.model,
                                   arguments=dict(spec.arguments), source=spec.source, function=case.function,
                                   grid=case.grid, block=case.block,
                                   dynamic_shared_memory=case.dynamic_shared_memory)
    try:
        source = with_defines(kernel_source(spec.source), case.defines)
        kernel = compile_kernels(source, [case.function], arch=info.arch,
                                 name=f"{spec.source}:{case.function}")[case.function]
        resources = kernel_resources(kernel, case.function)
        base.update(registers_per_thread=resources.registers_per_thread,
                    static_shared_memory=resources.static_shared_memory, defines=dict(case.defines))
        sass = sass_summary(source, case.function, info.arch)
        if sass is not None:
            base.update(sass=sass, loads_in_flight_per_thread=sass.global_loads_in_flight_per_thread or None)
        launch, outputs = launch_case(session, kernel, case)
    except DeviceError as exc:
        record = FamilyRecord(**base, error=str(exc))
        progress(f"family {spec.label}: {exc}")
        return record
    check = check_outputs(case, outputs)
    del outputs
    base["relative_error"] = check.relative_error
    if not check.ok:
        record = FamilyRecord(**base, error=f"verify_error: {check.message}")
        progress(f"family {spec.label}: verify error: {check.message}")
        return record
    flush = session.flush_l2 if case.working_set_bytes <= info.l2_cache_bytes else None
    try:
        timing = benchmark(launch, timer=session.timer, rules=kernel_rules(quick), flush=flush)
        session.synchronize()
    except DeviceError as exc:
        record = FamilyRecord(**base, error=str(exc))
        progress(f"family {spec.label}: {exc}")
        return record
    record = FamilyRecord(**base, measured_seconds=timing.median_seconds, spread=timing.spread,
                          repetitions=timing.repetitions, l2_flushed=flush is not None)
    progress(f"family {spec.label}: {timing.median_seconds * 1e6:.1f} us (spread {timing.spread:.3f})")
    return record
