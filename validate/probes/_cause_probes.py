"""The cause probes on the device: each variant of `_cause_variants` timed through `validate.measure`
beside the prediction from its own description; run from the repository's root:

    python -m validate.probes._cause_probes [--out FILE.json] [--only CAUSE ...] [--budget SECONDS]

Each variant is predicted twice: as `validate.measure` predicts it (the driver's registers, no SASS,
one load per thread: every load of a thread taken as one round trip), and, where this machine
compiles the kernels and reads their SASS (`compiled_sass`), as the corpus's source path does: the
launch carries the compiled SASS (its hot loop and the loads it keeps in flight) and the loads each
thread makes, counted from the description (``predicted_with_sass_seconds``).

Each variant's counts are built from its description (`probe_kernel`: `roofline.memory.traffic` of
its accesses, the shared-memory wavefronts added to the L1 bytes, the barriers and atomics as
`roofline.Kernel` fields, as the corpus's source path builds them), and `validate.measure` compiles
the kernel (NVRTC), checks its outputs against numpy once, times it after validate's L2 flush and
predicts it with the compiled registers. A variant that fails (a compile, launch or check) is
recorded with its message and the others go on; the exit code is the number that failed.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import numpy as np
import occupancy
import roofline
from pydantic import BaseModel, ConfigDict
from roofline.memory import sass_loads_per_thread, traffic

from ..device import Session, kernel_source, open_session
from ..user_kernel import MeasureOptions, measure
from ..user_kernel import database_gpu
from ._cause_variants import CAUSE_VARIANTS, CAUSES, CauseVariant

__all__ = ["CauseResult", "compiled_sass", "main", "offline_prediction", "probe_kernel", "render_causes",
           "run_cause_probes"]

_FROZEN = ConfigDict(frozen=True, extra="forbid")
#: Device time of the timed launches of one variant: 33 variants stay within a minute or so.
BUDGET_SECONDS = 0.15
#: The prediction's terms recorded beside it (`roofline.Prediction`'s fields, seconds).
_TERMS = ("memory_seconds", "dram_seconds", "cache_seconds", "compute_seconds", "launch_seconds")


class CauseResult(BaseModel):
    """One variant's measurement beside its prediction.

    ``error`` is ``predicted_seconds / measured_seconds - 1`` (negative: predicted faster);
    ``failure`` says why a variant has no measurement (compile, launch or output check).
    ``terms`` are the prediction's terms in seconds, at the compiled registers.
    ``predicted_with_sass_seconds`` and ``error_with_sass``: the prediction with the compiled SASS
    and the counted loads per thread (`offline_prediction` with ``sass``), None where no SASS was read.
    """

    model_config = _FROZEN

    cause: str
    variant: str
    kernel: str
    device: str | None = None
    grid: int
    block: int
    measured_seconds: float | None = None
    predicted_seconds: float | None = None
    limiter: str | None = None
    error: float | None = None
    registers_per_thread: int | None = None
    predicted_with_sass_seconds: float | None = None
    error_with_sass: float | None = None
    terms: dict[str, float] = {}
    failure: str | None = None


def probe_kernel(variant: CauseVariant) -> roofline.Kernel:
    """The counts of ``variant`` from its description: a `roofline.Kernel` for `validate.measure`.

    The shared-memory wavefronts join the global accesses' wavefronts in ``l1_bytes`` (one
    128-byte line each); the other counts are `roofline.Kernel` fields.
    """
    if not isinstance(variant, CauseVariant):
        raise TypeError(f"variant must be a CauseVariant, not {type(variant).__name__}")
    return traffic(variant.grid, variant.block, variant.accesses).kernel(
        name=variant.kernel, flops=variant.flops, precision="fp32",
        launch=occupancy.Launch(grid=variant.grid, block=variant.block), **variant.counts)


def offline_prediction(variant: CauseVariant, gpu: roofline.GPU | str = "H100 SXM",
                       registers_per_thread: int | None = None,
                       sass: occupancy.SassSummary | None = None) -> roofline.Prediction:
    """`roofline.predict` of ``variant`` after the L2 flush, without a GPU.

    ``registers_per_thread``: the compiled kernel's (None: not known, the model assumes).
    ``sass``: the compiled kernel's SASS summary (`compiled_sass`); with it the launch carries
    the SASS and the loads each thread makes, counted from the description (``load_bytes`` over
    the threads and the SASS's load width), as the corpus's source path predicts; without it the
    prediction is `validate.measure`'s (one load per thread, no loop).
    """
    device = roofline.gpu(gpu) if isinstance(gpu, str) else gpu
    kernel = probe_kernel(variant)
    if sass is None:
        launch = roofline.measured_launch(variant.grid, variant.block, registers_per_thread=registers_per_thread)
    else:
        resources = occupancy.KernelResources(kernel=variant.kernel, architecture=sass.architecture,
                                              registers_per_thread=registers_per_thread or 0, sass=sass,
                                              sources={"sass": "cause_probes.cu, compiled here"})
        loads = sass_loads_per_thread(sass, load_bytes=kernel.traffic.load_bytes, threads=variant.grid * variant.block)
        launch = roofline.measured_launch(variant.grid, variant.block, registers_per_thread=registers_per_thread,
                                          resources=resources, elements_per_thread=loads)
    return roofline.predict(device, roofline.counted_kernel(kernel, launch), after_l2_flush=True)


def compiled_sass(arch: str = "sm_90") -> Mapping[str, occupancy.SassSummary] | None:
    """The SASS summary of every kernel of ``cause_probes.cu`` compiled for ``arch`` (nvcc and
    nvdisasm on this machine), by kernel name; None where it cannot be compiled or read."""
    try:
        found = occupancy.all_kernel_resources(kernel_source("cause_probes.cu"), arch=arch, sass=True)
    except (ValueError, OSError) as exc:
        print(f"no SASS of cause_probes.cu for {arch}: {exc}", file=sys.stderr)
        return None
    summaries = {name: r.sass for name, r in found.items() if r.sass is not None}
    return summaries or None


def _measured(variant: CauseVariant, source: str, session: Session, budget_seconds: float,
              rng: np.random.Generator, sass: Mapping[str, occupancy.SassSummary] | None = None) -> CauseResult:
    args, expected = variant.arguments(rng)
    options = MeasureOptions(warmup=2, repetitions=5, max_repetitions=100, budget_seconds=budget_seconds, seed=0,
                             tolerance=variant.tolerance)
    kernel = probe_kernel(variant)
    m = measure(source, variant.kernel, launch=occupancy.Launch(grid=variant.grid, block=variant.block), args=args,
                options=options, expected=expected,
                counts=kernel, session=session)
    base = dict(cause=variant.cause, variant=variant.variant, kernel=variant.kernel, grid=variant.grid,
                block=variant.block, device=m.device, registers_per_thread=m.resources.registers_per_thread)
    if not m.ok:
        return CauseResult(**base, failure=m.check.message if m.check is not None else m.method)
    terms, with_sass = {}, {}
    gpu = database_gpu(m.device, None)
    if gpu is not None:
        p = offline_prediction(variant, gpu, m.resources.registers_per_thread)
        terms = {name: float(getattr(p, name)) for name in _TERMS}
        summary = (sass or {}).get(variant.kernel)
        if summary is not None and m.seconds:
            seconds = offline_prediction(variant, gpu, m.resources.registers_per_thread, summary).seconds
            with_sass = {"predicted_with_sass_seconds": seconds, "error_with_sass": seconds / m.seconds - 1.0}
    return CauseResult(**base, measured_seconds=m.seconds, predicted_seconds=m.predicted_seconds,
                       limiter=m.predicted_limiter, error=m.prediction_error, terms=terms, **with_sass)


def run_cause_probes(session: Session, variants: Sequence[CauseVariant] = CAUSE_VARIANTS, *,
                     budget_seconds: float = BUDGET_SECONDS,
                     progress: Callable[[int, int, CauseResult], None] | None = None) -> list[CauseResult]:
    """Measure every variant once through `validate.measure`; a failing one is recorded, not raised.

    Parameters
    ----------
    session : validate.Session
        The open device.
    variants : sequence of CauseVariant
        What to run (default every variant).
    budget_seconds : float
        Device time of each variant's timed launches, seconds (validate's L2 flush before each).
    progress : callable, optional
        Called with ``(done, total, result)`` after each variant.
    """
    source = kernel_source("cause_probes.cu")
    sass = compiled_sass(session.arch)
    rng = np.random.default_rng(0)
    results = []
    for i, v in enumerate(variants):
        try:
            result = _measured(v, source, session, budget_seconds, rng, sass)
        except Exception as exc:  # noqa: BLE001 - one variant's failure is reported, the rest go on
            result = CauseResult(cause=v.cause, variant=v.variant, kernel=v.kernel, grid=v.grid, block=v.block,
                                 failure=f"{type(exc).__name__}: {exc}")
        results.append(result)
        if progress is not None:
            progress(i + 1, len(variants), result)
    return results


def render_causes(results: Sequence[CauseResult]) -> str:
    """A Markdown table of the results: measured and predicted microseconds, limiter, error, and
    the prediction with the compiled SASS and its error."""
    lines = ["| cause | variant | measured (us) | predicted (us) | limiter | error | with SASS (us) | error |",
             "|---|---|---|---|---|---|---|---|"]
    for r in results:
        if r.failure is not None:
            lines.append(f"| {r.cause} | {r.variant} | failed: {r.failure} | | | | | |")
            continue
        predicted = f"{r.predicted_seconds * 1e6:.1f}" if r.predicted_seconds is not None else "-"
        error = f"{r.error:+.0%}" if r.error is not None else "-"
        with_sass = f"{r.predicted_with_sass_seconds * 1e6:.1f}" if r.predicted_with_sass_seconds is not None else "-"
        sass_error = f"{r.error_with_sass:+.0%}" if r.error_with_sass is not None else "-"
        lines.append(f"| {r.cause} | {r.variant} | {r.measured_seconds * 1e6:.1f} | {predicted} | "
                     f"{r.limiter or '-'} | {error} | {with_sass} | {sass_error} |")
    return "\n".join(lines)


def main(*, out: Path | None = None, only: Sequence[str] = (), budget_seconds: float = BUDGET_SECONDS) -> int:
    """Run the probes on the GPU, print the table (progress on stderr) and write ``out`` (JSON).

    Parameters
    ----------
    out : Path, optional
        Where the results go, as JSON.
    only : sequence of str
        Only these causes (`CAUSES`); all when empty.
    budget_seconds : float
        Device seconds of each variant's timed launches.

    Returns
    -------
    int
        The number of variants that failed.
    """
    variants = [v for v in CAUSE_VARIANTS if not only or v.cause in only]
    start = time.perf_counter()

    def progress(done: int, total: int, r: CauseResult) -> None:
        what = r.failure or f"{r.measured_seconds * 1e6:.1f} us"
        print(f"[{done}/{total}] {time.perf_counter() - start:5.1f} s  {r.cause} {r.variant}: {what}",
              file=sys.stderr, flush=True)

    session = open_session()
    results = run_cause_probes(session, variants, budget_seconds=budget_seconds, progress=progress)
    print(render_causes(results))
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        device = next((r.device for r in results if r.device is not None), None)
        out.write_text(json.dumps({"device": device, "seconds": time.perf_counter() - start,
                                        "results": [r.model_dump(mode="json") for r in results]}, indent=1) + "\n")
    return sum(1 for r in results if r.failure is not None)

