"""Measured ceilings: microbenchmarks of DRAM, L2, shared memory and arithmetic throughput.

Tensor-core ceilings come from `validate.probes._tensor`; clocks and power around each ceiling
from `validate.device._clocks`; `validate.probes._references.apply_references` raises a ceiling to an
independent library figure (cuBLAS, CuPy) measured higher in the same session.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Literal

import numpy as np
import roofline
from pydantic import BaseModel, ConfigDict, Field

from ..device import (
    ClockMonitor,
    ClockRecord,
    DeviceError,
    DeviceInfo,
    Session,
    StopRules,
    TimingResult,
    benchmark,
    compile_kernels,
    kernel_source,
    takes_session,
)
from ._probe import Probe, RunContext
from ._tensor import TENSOR_CEILINGS, measure_tensor, tensor_kernels

__all__ = ["CEILING_NAMES", "Ceiling", "Ceilings", "CeilingsProbe", "TARGETS", "datasheet_figures", "measure_ceilings"]

CEILING_NAMES = (
    "dram_read", "dram_write", "dram_copy", "dram_triad", "l2_read", "shared_read",
    "fp32_fma", "fp64_fma", *TENSOR_CEILINGS,
)

# Fractions of the datasheet figure the issues set as targets on the lent GPU.
TARGETS = {"dram_copy": 0.85, "fp32_fma": 0.95}


class Ceiling(BaseModel):
    """One measured ceiling against its datasheet figure."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    unit: Literal["bytes_per_second", "flops_per_second"]
    measured: float = Field(gt=0, description="Work per launch / median launch time.")
    datasheet: float | None = Field(default=None, description="The roofline database's figure.")
    fraction_of_datasheet: float | None = None
    target_fraction: float | None = None
    meets_target: bool | None = None
    work_per_launch: float = Field(gt=0, description="Bytes or flops one launch does.")
    timing: TimingResult
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    note: str = ""
    reference_name: str | None = Field(default=None, description="Best independent figure for this ceiling.")
    reference_value: float | None = None
    reference_library: str | None = None
    value: float | None = Field(
        default=None, description="The ceiling: the higher of `measured` and `reference_value` (None: measured).")
    value_source: str = Field(default="gpuroof kernel", description="Which figure `value` is.")
    clocks: ClockRecord | None = Field(default=None, description="Clocks and power around the measurement.")

    @property
    def ceiling(self) -> float:
        """The ceiling to use: `value` when set, else `measured`."""
        return self.measured if self.value is None else self.value


class Ceilings(BaseModel):
    """All measured ceilings, plus the failures of those that could not be measured."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    items: tuple[Ceiling, ...]
    errors: dict[str, str] = Field(default_factory=dict)

    def get(self, name: str) -> Ceiling | None:
        """The ceiling called ``name`` (see `CEILING_NAMES`), None when not measured."""
        for item in self.items:
            if item.name == name:
                return item
        return None

    def value(self, name: str) -> float | None:
        """The ceiling ``name`` (the higher of ours and the best independent figure), None when not measured."""
        item = self.get(name)
        return None if item is None else item.ceiling


def _ceiling(name: str, unit: str, work: float, timing: TimingResult, datasheet: float | None,
             grid: tuple[int, ...], block: tuple[int, ...], note: str = "") -> Ceiling:
    measured = work / timing.median_seconds
    fraction = measured / datasheet if datasheet else None
    target = TARGETS.get(name)
    return Ceiling(
        name=name, unit=unit, measured=measured, datasheet=datasheet, fraction_of_datasheet=fraction,
        target_fraction=target, meets_target=None if target is None or fraction is None else fraction >= target,
        work_per_launch=work, timing=timing, grid=tuple((tuple(grid) + (1, 1, 1))[:3]),
        block=tuple((tuple(block) + (1, 1, 1))[:3]), note=note,
    )


@takes_session
def measure_ceilings(
    session: Session,
    info: DeviceInfo,
    datasheet: Mapping[str, float | None],
    *,
    quick: bool = False,
    progress: Callable[[str], None] = lambda message: None,
    clocks: ClockMonitor | None = None,
) -> Ceilings:
    """Run the microbenchmarks on an open device.

    Parameters
    ----------
    session : validate.Session
    info : DeviceInfo
        Sizes the grids (SMs, threads per SM) and buffers (L2 size).
    datasheet : mapping
        Ceiling name to the datasheet figure (bytes/s or flops/s), or None.
    quick : bool
        Smaller buffers and fewer repetitions.
    progress : callable
        Receives one line per ceiling.
    clocks : ClockMonitor, optional
        Reads clocks and power before, during and after each ceiling.

    Returns
    -------
    Ceilings
        A ceiling whose kernel fails is left out and its error recorded in ``errors``.
    """
    dram_variants = {
        kind: [f"dram_{kind}_u{u}{suffix}" for u in (1, 2, 4) for suffix in
               (("", "_cs") if kind == "copy" else ("",))]
        for kind in ("read", "write", "copy", "triad")
    }
    dram_variants["copy"] += [f"dram_copy_chunk_u{u}" for u in (1, 2, 4, 8)]
    if int(info.compute_capability.split(".")[0]) >= 8:  # the L2::256B hint needs sm_80
        dram_variants["copy"] += [f"dram_copy_pf_u{u}" for u in (1, 2, 4)]
    kernels = compile_kernels(
        kernel_source("ceilings.cu"),
        (*[k for names in dram_variants.values() for k in names], "l2_read", "shared_read",
         "fma_fp32", "fma_fp64"),
        arch=info.arch, name="ceilings.cu",
    )
    threads = 256
    # One full wave of resident blocks: every SM at its thread limit, grid-stride loops.
    blocks = info.sm_count * max(1, info.max_threads_per_sm // threads)
    grid, block = (blocks, 1, 1), (threads, 1, 1)
    reps = 10 if quick else 30
    array_bytes = max(16 * info.l2_cache_bytes, (256 if quick else 1024) << 20)
    vectors = array_bytes // 16
    sink = session.allocate(4 * 1024)
    items: list[Ceiling] = []
    errors: dict[str, str] = {}

    def run(name: str, function: Callable[[], Ceiling]) -> None:
        try:
            if clocks is None:
                item = function()
            else:
                with clocks.watch() as record:
                    item = function()
                item = item.model_copy(update={"clocks": record[0]})
        except DeviceError as exc:
            errors[name] = str(exc)
            progress(f"ceiling {name}: failed: {exc}")
            return
        items.append(item)
        scale = 1e12 if item.unit == "flops_per_second" else 1e9
        unit = "TFLOP/s" if item.unit == "flops_per_second" else "GB/s"
        ds = f" ({item.fraction_of_datasheet:.0%} of datasheet)" if item.fraction_of_datasheet else ""
        flag = f"; {item.clocks.note}" if item.clocks is not None and item.clocks.throttled else ""
        progress(f"ceiling {name}: {item.measured / scale:,.1f} {unit}{ds}{flag}")

    def timed(kernel: str, args: tuple[object, ...], shared: int = 0, on: tuple[int, int, int] = grid,
              repetitions: int | None = None) -> TimingResult:
        launch = session.launcher(kernels[kernel], on, block, args, shared)
        result = benchmark(launch, timer=session.timer,
                           rules=StopRules(warmup=3 if repetitions is None else 1, repetitions=repetitions or reps))
        session.synchronize()
        return result

    def best_dram(name: str, kind: str, work: float, args: tuple[object, ...], note: str) -> Ceiling:
        # Sweep the variants and grids briefly, then time the fastest properly.
        grids = [(blocks * waves, 1, 1) for waves in (1, 4)]

        def grids_of(kernel: str) -> list[tuple[int, int, int]]:
            if "_chunk_u" not in kernel:
                return grids
            per_block = threads * int(kernel.rsplit("_u", 1)[1])
            return [(-(-vectors // per_block), 1, 1)]  # one pass: every vector once

        trials = [(timed(k, args, on=g, repetitions=5).median_seconds, k, g)
                  for k in dram_variants[kind] for g in grids_of(k)]
        _, kernel, best_grid = min(trials)
        timing = timed(kernel, args, on=best_grid)
        return _ceiling(name, "bytes_per_second", work, timing, datasheet.get("dram"), best_grid, block,
                        f"{note}; best of {len(trials)} variants and grids: {kernel}, grid {best_grid[0]}")

    a = session.allocate(array_bytes)
    b = session.allocate(array_bytes)
    c = session.allocate(array_bytes)
    for buffer in (a, b, c):
        session.poison(buffer, array_bytes)  # NaN-free data is not needed; any bits stream the same
    n = np.int64(vectors)
    sentinel = np.float32(1.2345e38)
    run("dram_read", lambda: best_dram("dram_read", "read", array_bytes, (a, sink, n, sentinel), "bytes read"))
    run("dram_write", lambda: best_dram("dram_write", "write", array_bytes, (a, n, np.float32(1.0)),
                                        "bytes written"))
    run("dram_copy", lambda: best_dram("dram_copy", "copy", 2 * array_bytes, (a, b, n),
                                       "bytes read plus bytes written"))
    run("dram_triad", lambda: best_dram("dram_triad", "triad", 3 * array_bytes, (a, b, c, np.float32(3.0), n),
                                        "STREAM triad: two reads, one write"))
    del a, b, c

    # L2: a quarter of L2 (Hopper and Ampere split L2 in two partitions, and a far
    # partition's lines may be duplicated in the near one), re-read many times.
    l2_bytes = max(1 << 20, info.l2_cache_bytes // 4)
    l2_buffer = session.allocate(l2_bytes)
    session.poison(l2_buffer, l2_bytes)
    passes = 16 if quick else 64
    run("l2_read", lambda: _ceiling("l2_read", "bytes_per_second", passes * l2_bytes,
                                    timed("l2_read", (l2_buffer, sink, np.int64(l2_bytes // 16), np.int32(passes),
                                                      sentinel)),
                                    datasheet.get("l2"), grid, block, f"{l2_bytes} bytes, ld.global.cg, {passes} passes"))

    iterations = 1024 if quick else 4096
    run("shared_read", lambda: _ceiling("shared_read", "bytes_per_second", blocks * threads * iterations * 4 * 16,
                                        timed("shared_read", (sink, np.int32(iterations), np.int32(32), sentinel)),
                                        datasheet.get("l1"), grid, block, "conflict-free 16-byte loads"))
    fma_iterations = 512 if quick else 2048
    fma_flops = blocks * threads * fma_iterations * 16 * 8 * 2
    run("fp32_fma", lambda: _ceiling("fp32_fma", "flops_per_second", fma_flops,
                                     timed("fma_fp32", (sink, np.int32(fma_iterations), np.float32(0.9999999),
                                                        np.float32(1e-7), sentinel)),
                                     datasheet.get("fp32"), grid, block, "8 independent FMA chains per thread"))
    fp64_iterations = fma_iterations // 4
    run("fp64_fma", lambda: _ceiling("fp64_fma", "flops_per_second", blocks * threads * fp64_iterations * 16 * 8 * 2,
                                     timed("fma_fp64", (sink, np.int32(fp64_iterations), np.float64(0.9999999),
                                                        np.float64(1e-7), np.float64(1.2345e300))),
                                     datasheet.get("fp64"), grid, block, "8 independent FMA chains per thread"))
    for precision in tensor_kernels(info.compute_capability):
        def tensor(precision: str = precision) -> Ceiling:
            m = measure_tensor(session, info, precision, quick=quick)
            return _ceiling(precision, "flops_per_second", m.work, m.timing, datasheet.get(precision), m.grid,
                            m.block, m.note)

        run(precision, tensor)
    return Ceilings(items=tuple(items), errors=errors)


_PRECISIONS = ("fp32", "fp64", *TENSOR_CEILINGS)


def datasheet_figures(entry: roofline.GPU | None, info: DeviceInfo) -> dict[str, float | None]:
    """Datasheet figures of the matched database entry; a precision the GPU lacks is None."""
    out: dict[str, float | None] = {"dram": info.memory_bandwidth}
    if entry is None:
        return out
    for level in ("dram", "l2", "l1"):
        out[level] = float(entry.bandwidth(level))
    supported = entry.supported_precisions()
    for precision in _PRECISIONS:
        try:
            out[precision] = float(entry.peak_flops(precision)) if precision in supported else None
        except roofline.RooflineError:  # no per-SM rate table for this compute capability
            out[precision] = None
    return out


class CeilingsProbe(Probe[Ceilings]):
    """The measured ceilings (`measure_ceilings`) against the database entry's datasheet, with
    clocks and power around each; the report cannot be written without them."""

    name = "ceilings"
    step = "ceilings"
    required = True

    def run(self, ctx: RunContext) -> Ceilings:
        return measure_ceilings(ctx.session, ctx.info, datasheet_figures(ctx.entry, ctx.info), quick=ctx.quick,
                                progress=ctx.progress, clocks=ctx.clocks)
