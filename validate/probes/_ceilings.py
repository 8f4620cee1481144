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
    bench = _CeilingBench(session, info, datasheet, quick=quick, progress=progress, clocks=clocks)
    _measure_dram(bench)
    _measure_caches(bench)
    _measure_fma(bench)
    for precision in tensor_kernels(info.compute_capability):
        def tensor(precision: str = precision) -> Ceiling:
            m = measure_tensor(session, info, precision, quick=quick)
            return _ceiling(precision, "flops_per_second", m.work, m.timing, datasheet.get(precision), m.grid,
                            m.block, m.note)

        bench.run(precision, tensor)
    return Ceilings(items=tuple(bench.items), errors=bench.errors)


def _dram_variants(info: DeviceInfo) -> dict[str, list[str]]:
    """The DRAM kernels of each kind (read, write, copy, triad) the ceiling is the best of."""
    variants = {
        kind: [f"dram_{kind}_u{u}{suffix}" for u in (1, 2, 4) for suffix in
               (("", "_cs") if kind == "copy" else ("",))]
        for kind in ("read", "write", "copy", "triad")
    }
    variants["copy"] += [f"dram_copy_chunk_u{u}" for u in (1, 2, 4, 8)]
    if int(info.compute_capability.split(".")[0]) >= 8:  # the L2::256B hint needs sm_80
        variants["copy"] += [f"dram_copy_pf_u{u}" for u in (1, 2, 4)]
    return variants


class _CeilingBench:
    """The ceiling kernels compiled for one session, the launch they run at, and the ceilings
    measured so far (with the failures)."""

    def __init__(self, session: Session, info: DeviceInfo, datasheet: Mapping[str, float | None], *, quick: bool,
                 progress: Callable[[str], None], clocks: ClockMonitor | None) -> None:
        self.session, self.info, self.datasheet = session, info, datasheet
        self.quick, self.progress, self.clocks = quick, progress, clocks
        self.dram_variants = _dram_variants(info)
        self.kernels = compile_kernels(
            kernel_source("ceilings.cu"),
            (*[k for names in self.dram_variants.values() for k in names], "l2_read", "shared_read",
             "fma_fp32", "fma_fp64"),
            arch=info.arch, name="ceilings.cu",
        )
        self.threads = 256
        # One full wave of resident blocks: every SM at its thread limit, grid-stride loops.
        self.blocks = info.sm_count * max(1, info.max_threads_per_sm // self.threads)
        self.grid, self.block = (self.blocks, 1, 1), (self.threads, 1, 1)
        self.reps = 10 if quick else 30
        self.sink = session.allocate(4 * 1024)
        self.items: list[Ceiling] = []
        self.errors: dict[str, str] = {}

    def run(self, name: str, function: Callable[[], Ceiling]) -> None:
        """Measure one ceiling (with the clocks around it); a device error is recorded, not raised."""
        try:
            if self.clocks is None:
                item = function()
            else:
                with self.clocks.watch() as record:
                    item = function()
                item = item.model_copy(update={"clocks": record[0]})
        except DeviceError as exc:
            self.errors[name] = str(exc)
            self.progress(f"ceiling {name}: failed: {exc}")
            return
        self.items.append(item)
        scale = 1e12 if item.unit == "flops_per_second" else 1e9
        unit = "TFLOP/s" if item.unit == "flops_per_second" else "GB/s"
        ds = f" ({item.fraction_of_datasheet:.0%} of datasheet)" if item.fraction_of_datasheet else ""
        flag = f"; {item.clocks.note}" if item.clocks is not None and item.clocks.throttled else ""
        self.progress(f"ceiling {name}: {item.measured / scale:,.1f} {unit}{ds}{flag}")

    def timed(self, kernel: str, args: tuple[object, ...], shared: int = 0, on: tuple[int, int, int] | None = None,
              repetitions: int | None = None) -> TimingResult:
        """Time one kernel (on the full wave unless `on` says otherwise)."""
        launch = self.session.launcher(self.kernels[kernel], on or self.grid, self.block, args, shared)
        result = benchmark(launch, timer=self.session.timer,
                           rules=StopRules(warmup=3 if repetitions is None else 1, repetitions=repetitions or self.reps))
        self.session.synchronize()
        return result

    def best_dram(self, name: str, kind: str, work: float, args: tuple[object, ...], note: str,
                  vectors: int) -> Ceiling:
        """The fastest of `kind`'s variants and grids, timed properly after a brief sweep."""
        grids = [(self.blocks * waves, 1, 1) for waves in (1, 4)]

        def grids_of(kernel: str) -> list[tuple[int, int, int]]:
            if "_chunk_u" not in kernel:
                return grids
            per_block = self.threads * int(kernel.rsplit("_u", 1)[1])
            return [(-(-vectors // per_block), 1, 1)]  # one pass: every vector once

        trials = [(self.timed(k, args, on=g, repetitions=5).median_seconds, k, g)
                  for k in self.dram_variants[kind] for g in grids_of(k)]
        _, kernel, best_grid = min(trials)
        timing = self.timed(kernel, args, on=best_grid)
        return _ceiling(name, "bytes_per_second", work, timing, self.datasheet.get("dram"), best_grid, self.block,
                        f"{note}; best of {len(trials)} variants and grids: {kernel}, grid {best_grid[0]}")


#: What the kernels compare their sum with before a store to the sink: a store the compiler cannot
#: prove dead keeps the loads and arithmetic alive.
_SENTINEL = np.float32(1.2345e38)


def _measure_dram(bench: _CeilingBench) -> None:
    """DRAM read, write, copy and triad over arrays far past L2."""
    session = bench.session
    array_bytes = max(16 * bench.info.l2_cache_bytes, (256 if bench.quick else 1024) << 20)
    vectors = array_bytes // 16
    a = session.allocate(array_bytes)
    b = session.allocate(array_bytes)
    c = session.allocate(array_bytes)
    for buffer in (a, b, c):
        session.poison(buffer, array_bytes)  # NaN-free data is not needed; any bits stream the same
    n = np.int64(vectors)
    sink = bench.sink
    bench.run("dram_read", lambda: bench.best_dram("dram_read", "read", array_bytes, (a, sink, n, _SENTINEL),
                                                   "bytes read", vectors))
    bench.run("dram_write", lambda: bench.best_dram("dram_write", "write", array_bytes, (a, n, np.float32(1.0)),
                                                    "bytes written", vectors))
    bench.run("dram_copy", lambda: bench.best_dram("dram_copy", "copy", 2 * array_bytes, (a, b, n),
                                                   "bytes read plus bytes written", vectors))
    bench.run("dram_triad", lambda: bench.best_dram("dram_triad", "triad", 3 * array_bytes,
                                                    (a, b, c, np.float32(3.0), n),
                                                    "STREAM triad: two reads, one write", vectors))
    del a, b, c


def _measure_caches(bench: _CeilingBench) -> None:
    """L2 reads of an L2-resident buffer and conflict-free shared-memory loads."""
    # L2: a quarter of L2 (Hopper and Ampere split L2 in two partitions, and a far
    # partition's lines may be duplicated in the near one), re-read many times.
    l2_bytes = max(1 << 20, bench.info.l2_cache_bytes // 4)
    l2_buffer = bench.session.allocate(l2_bytes)
    bench.session.poison(l2_buffer, l2_bytes)
    passes = 16 if bench.quick else 64
    grid, block, sink = bench.grid, bench.block, bench.sink
    bench.run("l2_read", lambda: _ceiling("l2_read", "bytes_per_second", passes * l2_bytes,
                                          bench.timed("l2_read", (l2_buffer, sink, np.int64(l2_bytes // 16),
                                                                  np.int32(passes), _SENTINEL)),
                                          bench.datasheet.get("l2"), grid, block,
                                          f"{l2_bytes} bytes, ld.global.cg, {passes} passes"))
    iterations = 1024 if bench.quick else 4096
    bench.run("shared_read", lambda: _ceiling("shared_read", "bytes_per_second",
                                              bench.blocks * bench.threads * iterations * 4 * 16,
                                              bench.timed("shared_read", (sink, np.int32(iterations), np.int32(32),
                                                                          _SENTINEL)),
                                              bench.datasheet.get("l1"), grid, block, "conflict-free 16-byte loads"))


def _measure_fma(bench: _CeilingBench) -> None:
    """FP32 and FP64 fused multiply-adds: 8 independent chains per thread."""
    grid, block, sink = bench.grid, bench.block, bench.sink
    fma_iterations = 512 if bench.quick else 2048
    fma_flops = bench.blocks * bench.threads * fma_iterations * 16 * 8 * 2
    bench.run("fp32_fma", lambda: _ceiling("fp32_fma", "flops_per_second", fma_flops,
                                           bench.timed("fma_fp32", (sink, np.int32(fma_iterations),
                                                                    np.float32(0.9999999), np.float32(1e-7),
                                                                    _SENTINEL)),
                                           bench.datasheet.get("fp32"), grid, block,
                                           "8 independent FMA chains per thread"))
    fp64_iterations = fma_iterations // 4
    bench.run("fp64_fma", lambda: _ceiling("fp64_fma", "flops_per_second",
                                           bench.blocks * bench.threads * fp64_iterations * 16 * 8 * 2,
                                           bench.timed("fma_fp64", (sink, np.int32(fp64_iterations),
                                                                    np.float64(0.9999999), np.float64(1e-7),
                                                                    np.float64(1.2345e300))),
                                           bench.datasheet.get("fp64"), grid, block,
                                           "8 independent FMA chains per thread"))


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
