"""Measured time per kernel family, beside `roofline.predict` and the plain roofline.

Issue 11's baseline: the families on which the time model is known to be weak (the four
classic reductions, strided reads and column writes, blur radius 1-4, a shared-memory
stride sweep, lane-divergent vs warp-uniform branches, a grid-stride copy at low
occupancy, the transpose variants). `family_specs` lists the launches; `measure_families`
checks each against its numpy reference and times it on the device (CUDA events, median,
L2 flushed when the footprint fits in it); `predict_families` adds what `roofline.predict`
and `roofline.analyze` say, on the CPU, from the recorded registers; `family_table` gives
the median and worst |error| per family.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict

from ._kernels import F32, KernelCase, build_case, check_outputs

__all__ = [
    "FamilyRow",
    "FamilySpec",
    "family_specs",
    "family_table",
    "measure_families",
    "predict_families",
    "render_families_markdown",
]

REDUCTION_VARIANTS = ("interleaved", "interleaved_compact", "sequential", "warp_shuffle")
SHARED_STRIDES = (1, 2, 3, 4, 8, 16, 32)
SHARED_ITERS = 4096
BRANCH_ITERS = 256


@dataclass(frozen=True)
class FamilySpec:
    """One launch of a family: its model (built on demand) and its checked CUDA case."""

    family: str
    label: str
    model: Callable[[], Any]
    """Returns the `roofline.Kernel` that describes the launch."""
    case: Callable[[np.random.Generator], KernelCase]
    source: str
    """The file of validate/kernels that holds the function."""


class FamilyRow(BaseModel):
    """One measured launch and what the two models say for it (seconds)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    family: str
    label: str
    function: str
    parameters: dict[str, Any]
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    registers_per_thread: int
    static_shared_memory: int
    measured_seconds: float
    spread: float
    l2_flushed: bool
    relative_error: float
    predict_seconds: float | None = None
    predict_limiter: str | None = None
    roofline_seconds: float | None = None
    roofline_bound: str | None = None


def _sized(model: Any, **launch: Any) -> Any:
    return model.model_copy(update={"launch": model.launch.model_copy(update=launch)})


def _reduction_case(n: int, block: int, variant: str) -> Callable[[np.random.Generator], KernelCase]:
    def build(rng: np.random.Generator) -> KernelCase:
        x = (rng.random(n, dtype=F32) * 2 - 1).astype(F32)
        blocks = -(-n // block)

        def partials(i: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
            padded = np.zeros(blocks * block, np.float64)
            padded[:n] = i["x"]
            return {"partial": padded.reshape(blocks, block).sum(axis=1)}

        return KernelCase(f"reduce_{variant}", f"reduce_{variant}", (blocks, 1, 1), (block, 1, 1), {"x": x},
                          {"partial": ((blocks,), F32)}, ("x", "partial", np.int32(n)), partials,
                          defines={"BLOCK": block}, tolerance=1e-5)

    return build


def _shared_model(grid: int, block: int, stride: int) -> Any:
    import occupancy
    import roofline

    threads = grid * block
    ways = math.gcd(stride, 32)
    wavefronts = threads // 32 * SHARED_ITERS * ways
    return roofline.Kernel(
        name="shared_stride", flops=threads * SHARED_ITERS, precision="fp32",
        load_bytes=grid * 2048 * 4, store_bytes=4 * threads, dram_bytes=2048 * 4 + 4 * threads,
        l1_bytes=grid * 2048 * 4 + 4 * threads + wavefronts * 128, shared_bytes=4 * threads * SHARED_ITERS,
        bank_conflict_ways=ways, parameters={"stride": stride, "iters": SHARED_ITERS},
        formula="acc += s[(tid * STRIDE) % 1024 + (k % 32) * 32]  (ITERS times)",
        launch=occupancy.Launch(grid=grid, block=block, static_shared_memory=8192))


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
                          defines={"STRIDE": stride, "ITERS": SHARED_ITERS}, tolerance=1e-5)

    return build


def _branch_model(n: int, block: int, uniform: bool) -> Any:
    import occupancy
    import roofline

    return roofline.Kernel(
        name="branches", flops=2 * BRANCH_ITERS * n, precision="fp32", load_bytes=8 * n, store_bytes=4 * n,
        dram_bytes=12 * n, l2_bytes=12 * n, parameters={"n": n, "branch": "warp" if uniform else "lane",
                                                         "iters": BRANCH_ITERS},
        formula="side ? x = fmaf(x, x, a[i]) : x = fmaf(x, 0.5f, b[i])  (ITERS times); y[i] = x",
        launch=occupancy.Launch(grid=-(-n // block), block=block))


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
        x = rng.random(n, dtype=F32)
        return KernelCase("grid_stride_copy", "grid_stride_copy", (grid, 1, 1), (block, 1, 1), {"x": x},
                          {"y": ((n,), F32)}, ("x", "y", np.int32(n)), lambda i: {"y": i["x"]},
                          defines={"EPT": ept})

    return build


def _suite_case(model: Callable[[], Any]) -> Callable[[np.random.Generator], KernelCase]:
    return lambda rng: build_case(model(), rng)


def family_specs(sm_count: int, *, quick: bool = False) -> tuple[FamilySpec, ...]:
    """The launches of every family, for a GPU of ``sm_count`` SMs.

    Parameters
    ----------
    sm_count : int
        SMs of the GPU (the low-occupancy grids are a few blocks per SM).
    quick : bool
        Smaller sizes and fewer points (for a test on any GPU).

    Returns
    -------
    tuple of FamilySpec

    Examples
    --------
    >>> specs = family_specs(132)
    >>> sorted({s.family for s in specs})[:3]
    ['blur', 'divergence', 'grid_stride_low_occupancy']
    """
    from roofline import models

    vector = 1 << (20 if quick else 26)
    image = 512 if quick else 4096
    matrix = 512 if quick else 8192
    specs: list[FamilySpec] = []

    def add(family: str, label: str, model: Callable[[], Any], case: Callable[..., KernelCase], source: str) -> None:
        specs.append(FamilySpec(family, label, model, case, source))

    for block in (256,) if quick else (256, 1024):
        for variant in REDUCTION_VARIANTS:
            add("reduction", f"reduction({variant}, block={block})",
                lambda v=variant, b=block: models.reduction(vector, block=b, variant=v),
                _reduction_case(vector, block, variant), "families.cu")
    if quick:
        return tuple(specs)
    for stride in range(1, 33):
        m = (lambda s=stride: models.strided_read(vector, s))
        add("strided_read", f"strided_read(stride={stride})", m, _suite_case(m), "suite.cu")
    for stride in range(1, 33):
        m = (lambda s=stride: models.strided_write(vector, s))
        add("strided_write", f"strided_write(stride={stride})", m, _suite_case(m), "suite.cu")
    for radius in (1, 2, 3, 4):
        m = (lambda r=radius: models.blur(image, image, radius=r))
        add("blur", f"blur(radius={radius})", m, _suite_case(m), "suite.cu")
    grid = 8 * sm_count
    for stride in SHARED_STRIDES:
        add("shared_stride", f"shared_stride(stride={stride})", lambda s=stride: _shared_model(grid, 256, s),
            _shared_case(grid, 256, stride), "families.cu")
    for uniform in (False, True):
        add("divergence", f"branches({'warp' if uniform else 'lane'})",
            lambda u=uniform: _branch_model(1 << 24, 256, u), _branch_case(1 << 24, 256, uniform), "families.cu")
    for blocks_per_sm in (1, 2, 4):
        g = blocks_per_sm * sm_count
        for ept in (1, 2, 4, 8, 16):
            per_thread = -(-vector // (g * 256))
            add("grid_stride_low_occupancy", f"grid_stride_copy(blocks_per_sm={blocks_per_sm}, ept={ept})",
                lambda g=g, e=ept, p=per_thread: _sized(models.copy(vector), grid=(g, 1, 1), elements_per_thread=p,
                                                        loads_in_flight_per_thread=e),
                _grid_stride_case(vector, g, 256, ept), "families.cu")
    for variant in ("copy_row", "copy_column", "naive_row", "naive_column", "unroll4_row", "unroll4_column",
                    "diagonal_row", "diagonal_column", "shared", "shared_padded"):
        m = (lambda v=variant: models.transpose(matrix, variant=v))
        add("transpose", f"transpose({variant})", m, _suite_case(m), "suite.cu")
    return tuple(specs)


def measure_families(session: Any, info: Any, specs: Sequence[FamilySpec], *, rng: np.random.Generator,
                     progress: Callable[[str], None] = lambda message: None) -> list[dict[str, Any]]:
    """Check and time every launch on the device; one JSON-able record per launch.

    A launch whose output differs from the reference is recorded with ``error`` and no time.
    """
    from ._compile import compile_kernels, kernel_resources, kernel_source, with_defines
    from ._timing import benchmark

    records = []
    for spec in specs:
        case = spec.case(rng)
        record: dict[str, Any] = {"family": spec.family, "label": spec.label, "function": case.function,
                                  "grid": list(case.grid), "block": list(case.block)}
        source = with_defines(kernel_source(spec.source), case.defines)
        kernel = compile_kernels(source, [case.function], arch=info.arch, name=f"{spec.source}:{case.function}")[
            case.function]
        resources = kernel_resources(kernel, case.function)
        record.update(registers_per_thread=resources.registers_per_thread,
                      static_shared_memory=resources.static_shared_memory)
        buffers = {key: session.upload(array) for key, array in case.inputs.items()}
        for key, (shape, dtype) in case.outputs.items():
            nbytes = math.prod(shape) * np.dtype(dtype).itemsize
            buffers[key] = session.allocate(nbytes)
            session.poison(buffers[key], nbytes)
        launch = session.launcher(kernel, case.grid, case.block,
                                  tuple(buffers[a] if isinstance(a, str) else a for a in case.args))
        launch()
        session.synchronize()
        outputs = {key: session.download(buffers[key], shape, dtype) for key, (shape, dtype) in case.outputs.items()}
        check = check_outputs(case, outputs)
        record["relative_error"] = check.relative_error
        if not check.ok:
            record["error"] = check.message
            progress(f"{spec.label}: verify error: {check.message}")
            records.append(record)
            continue
        flush = session.flush_l2 if case.working_set_bytes <= info.l2_cache_bytes else None
        timing = benchmark(launch, timer=session.timer, warmup=3, repetitions=20, budget_seconds=0.05,
                           max_repetitions=200, flush=flush)
        session.synchronize()
        record.update(measured_seconds=timing.median_seconds, spread=timing.spread, l2_flushed=flush is not None)
        progress(f"{spec.label}: {timing.median_seconds * 1e6:.1f} us (spread {timing.spread:.3f})")
        records.append(record)
    return records


def predict_families(records: Sequence[Mapping[str, Any]], specs: Sequence[FamilySpec], gpu: Any,
                     calibration: Any = None) -> tuple[FamilyRow, ...]:
    """What `roofline.predict` and `roofline.analyze` say for each measured launch.

    The launch is the model's with the measured grid, block, registers and static shared
    memory, as `validate.run_validation` does. Records with an ``error`` are left out.
    """
    import roofline

    by_label = {s.label: s for s in specs}
    rows = []
    for record in records:
        if "measured_seconds" not in record:
            continue
        model = by_label[record["label"]].model()
        launch = model.launch.model_copy(update={
            "grid": tuple(record["grid"]), "block": tuple(record["block"]),
            "registers_per_thread": record["registers_per_thread"],
            "static_shared_memory": record["static_shared_memory"]})
        p = roofline.predict(gpu, model, launch, calibration=calibration)
        verdict = roofline.analyze(gpu, model)
        rows.append(FamilyRow(
            family=record["family"], label=record["label"], function=record["function"],
            parameters=dict(model.parameters), grid=tuple(record["grid"]), block=tuple(record["block"]),
            registers_per_thread=record["registers_per_thread"], static_shared_memory=record["static_shared_memory"],
            measured_seconds=record["measured_seconds"], spread=record["spread"], l2_flushed=record["l2_flushed"],
            relative_error=record["relative_error"], predict_seconds=p.seconds, predict_limiter=p.limiter,
            roofline_seconds=verdict.time_lower_bound_seconds, roofline_bound=verdict.bound_level or verdict.bound))
    return tuple(rows)


def _ape(predicted: float | None, measured: float) -> float | None:
    return None if predicted is None else abs(predicted - measured) / measured * 100.0


def family_table(rows: Sequence[FamilyRow]) -> list[dict[str, Any]]:
    """Median and worst |error| (percent of the measured time) per family, for both models.

    Families appear in the order of their first row. The worst entries name their launch.

    Examples
    --------
    >>> row = FamilyRow(family="f", label="k", function="k", parameters={}, grid=(1, 1, 1), block=(32, 1, 1),
    ...                 registers_per_thread=8, static_shared_memory=0, measured_seconds=2.0, spread=0.0,
    ...                 l2_flushed=False, relative_error=0.0, predict_seconds=1.0, roofline_seconds=0.5)
    >>> family_table([row])[0]["predict_median_percent"]
    50.0
    """
    families: dict[str, list[FamilyRow]] = {}
    for row in rows:
        families.setdefault(row.family, []).append(row)
    table = []
    for family, members in families.items():
        entry: dict[str, Any] = {"family": family, "launches": len(members)}
        for key in ("predict", "roofline"):
            errors = [(_ape(getattr(r, f"{key}_seconds"), r.measured_seconds), r.label) for r in members]
            errors = [(e, label) for e, label in errors if e is not None]
            worst = max(errors) if errors else (None, None)
            entry[f"{key}_median_percent"] = statistics.median(e for e, _ in errors) if errors else None
            entry[f"{key}_worst_percent"] = worst[0]
            entry[f"{key}_worst_label"] = worst[1]
        table.append(entry)
    return table


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f}%"


def render_families_markdown(rows: Sequence[FamilyRow], *, title: str) -> str:
    """The per-family error table and every launch, as Markdown."""
    lines = [f"# {title}", "",
             "|error| = |predicted - measured| / measured. `predict`: `roofline.predict` with the packaged",
             "calibration; roofline: `roofline.analyze(...).time_lower_bound_seconds` (datasheet ceilings).", "",
             "| family | launches | predict median | predict worst | roofline median | roofline worst |",
             "| --- | ---: | ---: | --- | ---: | --- |"]
    for e in family_table(rows):
        lines.append(f"| {e['family']} | {e['launches']} | {_percent(e['predict_median_percent'])} | "
                     f"{_percent(e['predict_worst_percent'])} ({e['predict_worst_label']}) | "
                     f"{_percent(e['roofline_median_percent'])} | {_percent(e['roofline_worst_percent'])} "
                     f"({e['roofline_worst_label']}) |")
    lines += ["", "## Every launch", "",
              "| launch | grid | block | regs | measured us | predict us | limiter | roofline us | bound |",
              "| --- | --- | --- | ---: | ---: | ---: | --- | ---: | --- |"]
    for r in rows:
        us = (lambda s: "-" if s is None else f"{s * 1e6:.1f}")
        lines.append(f"| {r.label} | {'x'.join(map(str, r.grid))} | {'x'.join(map(str, r.block))} | "
                     f"{r.registers_per_thread} | {us(r.measured_seconds)} | {us(r.predict_seconds)} | "
                     f"{r.predict_limiter or '-'} | {us(r.roofline_seconds)} | {r.roofline_bound or '-'} |")
    return "\n".join(lines) + "\n"
