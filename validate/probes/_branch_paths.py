"""The branch-paths probe: what a branch in straight-line code costs in issue slots, the probe
of the model's rule ``branch_sides_in_sass`` (docs/prediction.md, "Branches in straight-line SASS").

The SASS of straight-line code lists both sides of a branch, and `instructions_from_sass`
counts each instruction once a warp: a warp split over both sides issues that listing, a
warp-uniform one one path through it (``SassSummary.longest_path_instructions``). Before the
rule, `predict` multiplied the listing by ``branch_issue_factor``, counting a split warp's code
twice and a uniform warp's both sides.

`validate/kernels/branch_paths.cu` holds three kernels of fully unrolled FP32 FMA chains (no loop
in the SASS, the schedulers bind):

* ``branch_lanes``: a branch on bit 1 of ``threadIdx.x``, every warp split 16/16 over two sides
  of different arithmetic and the same length (both issued: ``branch_issue_factor`` 2, as
  `roofline.divergence.branch_divergence` counts it);
* ``branch_warps``: the same code branching on bit 5, one side a warp (factor 1);
* ``branch_none``: one side for every thread, no branch (factor 1).

Each runs ``WAVES`` and ``2 x WAVES`` full waves of ``THREADS``-thread blocks (CUDA events, the
median of the timed launches); a kernel's figure is the time the longer launch adds (the
launch's cost and its tail cancel). Beside each, `roofline.predict` of the same launches from
the kernel's flops and its compiled SASS (``instructions`` left to the SASS estimate), with
``branch_issue_factor`` 2 for ``branch_lanes`` and 1 for the others, and again with 1 for
``branch_lanes`` (``branch_lanes_one_path``). `derive_branch_paths` gives the measured and the
predicted ratios of the three, the SASS's static ratios, and the share of its static count
each branching kernel issues. Measured ``branch_lanes / branch_warps`` near 2 and
``branch_warps / branch_none`` near 1 say a divergent warp issues the static count and a
uniform one half of it (H100 SXM, 2026-12-07: 1.90 and 1.02).

Not part of ``gpuroof validate``: no calibration figure comes from it. About a hundred launches of
at most a few hundred microseconds. From the repository's root:
``python scripts/branch_paths_probe.py [--out FILE.json] [--gpu NAME]``.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

import numpy as np
import occupancy
import roofline
from pydantic import BaseModel, ConfigDict, Field
from roofline.divergence import branch_divergence

from ..device import (
    DeviceInfo,
    Session,
    StopRules,
    benchmark,
    compile_kernels,
    kernel_source,
    open_session,
    query_device,
    takes_session,
)
from ..user_kernel import database_gpu

__all__ = [
    "BranchPathTimes",
    "BranchPaths",
    "branch_kernel",
    "derive_branch_paths",
    "main",
    "measure_branch_paths",
    "predicted_seconds",
    "render_branch_paths",
]

_FROZEN = ConfigDict(frozen=True, extra="forbid")
SOURCE = "branch_paths.cu"
#: Threads of a block; the waves are the device's threads an SM over these (8 blocks on sm_90).
THREADS = 256
#: Full waves of the shorter launch (the longer runs twice as many).
WAVES = 16
#: The source's ``CHAINS`` and ``STEPS``: independent FMA chains a thread, unrolled steps a side.
CHAINS, STEPS = 8, 32
#: Floating-point operations a thread: its side's FMAs (2 each), the start's multiplies, the sum's adds.
FLOPS_PER_THREAD = 2 * CHAINS * STEPS + 2 * CHAINS
#: The argument the values start from: small enough that no value overflows (the source says why).
SEED = 1e-4
#: The bit of ``threadIdx.x`` each branching kernel tests.
BITS: dict[str, int] = {"branch_lanes": 1, "branch_warps": 5}
KERNELS: tuple[str, ...] = ("branch_lanes", "branch_warps", "branch_none")
#: The measured ratios (numerator, denominator) and the model's, which adds the lanes kernel at one path.
RATIOS: tuple[tuple[str, str], ...] = (
    ("branch_lanes", "branch_warps"), ("branch_lanes", "branch_none"), ("branch_warps", "branch_none"))
MODEL_RATIOS: tuple[tuple[str, str], ...] = RATIOS + (
    ("branch_lanes_one_path", "branch_warps"), ("branch_lanes_one_path", "branch_none"))


def _paths(kernel: str) -> float:
    """The kernel's ``branch_issue_factor``: `branch_divergence` of the sides a block's threads take."""
    if kernel not in BITS:
        return 1.0
    return branch_divergence((np.arange(THREADS) >> BITS[kernel]) & 1).issue_factor


#: The predictions: label -> (kernel, branch_issue_factor).
PREDICTIONS: dict[str, tuple[str, float]] = {
    **{kernel: (kernel, _paths(kernel)) for kernel in KERNELS},
    "branch_lanes_one_path": ("branch_lanes", 1.0),
}


class BranchPathTimes(BaseModel):
    """What the probe timed and read: the input of `derive_branch_paths`."""

    model_config = _FROZEN

    sm_count: int = Field(gt=0, description="SMs of the device.")
    blocks_per_sm: int = Field(gt=0, description="Blocks of a full wave on one SM.")
    threads_per_block: int = Field(gt=0)
    waves: int = Field(gt=0, description="Full waves of the shorter launch (the longer: twice as many).")
    seconds: dict[str, tuple[float, float]] = Field(
        description="Kernel -> (seconds at waves, seconds at 2 x waves), median of the timed launches.")
    gpu: str | None = Field(default=None, description="The database GPU of the predictions (None: none made).")
    predicted_seconds: dict[str, tuple[float, float]] = Field(
        default_factory=dict, description="Prediction label (`PREDICTIONS`) -> (seconds at waves, at 2 x waves).")
    static_instructions: dict[str, int] = Field(
        default_factory=dict, description="Kernel -> SASS instructions, each counted once (empty: SASS not read).")
    static_fp32_fma: dict[str, int] = Field(default_factory=dict, description="Kernel -> FFMA in its SASS.")
    static_branches: dict[str, int] = Field(default_factory=dict, description="Kernel -> BRA in its SASS.")


class BranchPaths(BranchPathTimes):
    """The times, and what they say (None: a longer launch that added no time, or nothing to divide)."""

    measured_added_seconds: dict[str, float | None] = Field(
        description="Kernel -> the time the longer launch adds, seconds.")
    predicted_added_seconds: dict[str, float | None] = Field(
        description="Prediction label -> the time the longer launch adds, seconds.")
    measured_ratios: dict[str, float | None] = Field(description="'a/b' -> a's added time over b's (`RATIOS`).")
    predicted_ratios: dict[str, float | None] = Field(description="The model's, `MODEL_RATIOS`.")
    static_ratios: dict[str, float | None] = Field(description="The SASS's static counts' `RATIOS`.")
    issued_over_static: dict[str, float | None] = Field(
        description="Branching kernel -> (its measured time over branch_none's) over (its static count over "
                    "branch_none's): the share of its static count a warp issues (1: both sides, about 1/2: one).")


def _ratio(numerator: float | None, denominator: float | None) -> float | None:
    return None if numerator is None or not denominator else numerator / denominator


def _added(times: Mapping[str, tuple[float, float]]) -> dict[str, float | None]:
    return {name: (long - short if long > short else None) for name, (short, long) in times.items()}


def _ratios(values: Mapping[str, float | int | None], pairs: tuple[tuple[str, str], ...]) -> dict[str, float | None]:
    return {f"{a}/{b}": _ratio(values.get(a), values.get(b)) for a, b in pairs if a in values and b in values}


def derive_branch_paths(times: BranchPathTimes) -> BranchPaths:
    """The added times, the measured, predicted and static ratios, and the issued share of the
    static count (a plain function, tested on the CPU).

    Parameters
    ----------
    times : BranchPathTimes
        Seconds at ``waves`` and ``2 x waves`` (measured by kernel, predicted by label) and the
        SASS's static counts.

    Returns
    -------
    BranchPaths

    Raises
    ------
    TypeError
        If `times` is not a `BranchPathTimes`.
    """
    if not isinstance(times, BranchPathTimes):
        raise TypeError(f"times must be a BranchPathTimes, not {type(times).__name__}")
    measured, predicted = _added(times.seconds), _added(times.predicted_seconds)
    measured_ratios = _ratios(measured, RATIOS)
    static_ratios = _ratios(times.static_instructions, RATIOS)
    issued = {kernel: _ratio(measured_ratios.get(f"{kernel}/branch_none"), static_ratios.get(f"{kernel}/branch_none"))
              for kernel in BITS if f"{kernel}/branch_none" in measured_ratios.keys() & static_ratios.keys()}
    return BranchPaths(**times.model_dump(), measured_added_seconds=measured, predicted_added_seconds=predicted,
                       measured_ratios=measured_ratios, predicted_ratios=_ratios(predicted, MODEL_RATIOS),
                       static_ratios=static_ratios, issued_over_static=issued)


def branch_kernel(kernel: str, resources: occupancy.KernelResources, blocks: int, paths: float) -> roofline.Kernel:
    """The `roofline.Kernel` of one launch of a probe kernel: its flops, its one store a thread,
    its compiled resources (the SASS estimates the instructions) and ``branch_issue_factor``.

    Parameters
    ----------
    kernel : str
        One of `KERNELS`.
    resources : occupancy.KernelResources
        The compiled kernel's, with its SASS.
    blocks : int
        Blocks of ``THREADS`` threads.
    paths : float
        ``branch_issue_factor``.
    """
    threads = blocks * THREADS
    launch = occupancy.Launch(grid=blocks, block=THREADS, resources=resources)
    return roofline.Kernel(name=kernel, flops=threads * FLOPS_PER_THREAD, precision="fp32", store_bytes=threads * 4,
                           dram_bytes=threads * 4, branch_issue_factor=paths, launch=launch)


def predicted_seconds(gpu: roofline.GPU | str, resources: Mapping[str, occupancy.KernelResources], sm_count: int,
                      blocks_per_sm: int, waves: int = WAVES) -> dict[str, tuple[float, float]]:
    """`roofline.predict` of every `PREDICTIONS` label at ``waves`` and ``2 x waves`` full waves.

    Parameters
    ----------
    gpu : roofline.GPU or str
        The database GPU.
    resources : mapping
        Kernel -> its compiled `occupancy.KernelResources` (with SASS).
    sm_count, blocks_per_sm : int
        The device's SMs and the blocks of one SM's full wave.
    waves : int
        Full waves of the shorter launch.

    Returns
    -------
    dict
        Label -> (seconds at waves, seconds at 2 x waves).
    """
    return {label: tuple(roofline.predict(gpu, branch_kernel(kernel, resources[kernel], n * sm_count * blocks_per_sm,
                                                            paths)).seconds for n in (waves, 2 * waves))
            for label, (kernel, paths) in PREDICTIONS.items()}


def _compiled(arch: str, progress: Callable[[str], None]) -> dict[str, occupancy.KernelResources]:
    """Each kernel's resources with its SASS (NVRTC and nvdisasm here); empty where they cannot be read."""
    try:  # one compile of the file gives all three (extern "C": found by their names)
        every = occupancy.all_kernel_resources(kernel_source(SOURCE), arch=arch, sass=True)
    except (ImportError, OSError, ValueError) as exc:
        progress(f"branch paths: no SASS of {SOURCE} for {arch} ({exc}); measured only")
        return {}
    found = {k: every[k] for k in KERNELS if k in every}
    if len(found) < len(KERNELS) or any(r.sass is None for r in found.values()):
        progress(f"branch paths: nvdisasm did not read {SOURCE} for {arch}; measured only")
        return {}
    return found


@takes_session
def measure_branch_paths(session: Session, info: DeviceInfo, *, quick: bool = False, gpu: roofline.GPU | None = None,
                         progress: Callable[[str], None] = lambda message: None) -> BranchPaths:
    """Time the three kernels at ``WAVES`` and ``2 x WAVES`` full waves, predict them, derive.

    Parameters
    ----------
    session : validate.Session
    info : DeviceInfo
    quick : bool
        Fewer timed launches.
    gpu : roofline.GPU, optional
        The database GPU of the predictions; default the device's own (none: no predictions).
    progress : callable
        Receives one line when done.
    """
    kernels = compile_kernels(kernel_source(SOURCE), list(KERNELS), arch=session.arch, name=SOURCE)
    blocks_per_sm = info.max_threads_per_sm // THREADS
    wave = info.sm_count * blocks_per_sm
    out = session.allocate(2 * WAVES * wave * THREADS * 4)
    rules = StopRules(warmup=3, repetitions=5 if quick else 15)
    seconds = {kernel: tuple(
        benchmark(session.launcher(kernels[kernel], (n * wave, 1, 1), (THREADS, 1, 1), (out, np.float32(SEED))),
                  timer=session.timer, rules=rules).median_seconds for n in (WAVES, 2 * WAVES))
        for kernel in KERNELS}
    session.synchronize()
    resources = _compiled(session.arch, progress)
    record = database_gpu(info.name, gpu)
    predicted = predicted_seconds(record, resources, info.sm_count, blocks_per_sm) if record and resources else {}
    counts = {k: r.sass.instructions for k, r in resources.items() if r.sass is not None}
    result = derive_branch_paths(BranchPathTimes(
        sm_count=info.sm_count, blocks_per_sm=blocks_per_sm, threads_per_block=THREADS, waves=WAVES, seconds=seconds,
        gpu=record.name if record and predicted else None, predicted_seconds=predicted,
        static_instructions={k: c.total for k, c in counts.items()},
        static_fp32_fma={k: c.fp32_fma for k, c in counts.items()},
        static_branches={k: c.branches for k, c in counts.items()}))
    progress("branch paths: measured " + ", ".join(f"{k} {_shown(v)}" for k, v in result.measured_ratios.items()))
    return result


def _shown(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _us(value: float | None) -> str:
    return "-" if value is None else f"{value * 1e6:.1f}"


def render_branch_paths(result: BranchPaths, heading: str = "##") -> list[str]:
    """The Markdown section: one row a kernel (and the lanes kernel at one path), then the ratios."""
    rows = []
    for label, (kernel, paths) in PREDICTIONS.items():
        short, long = result.seconds.get(kernel, (None, None))
        rows.append(f"| {label} | {paths:g} | {result.static_instructions.get(kernel, '-')} | "
                    f"{_us(short)}, {_us(long)} | {_us(result.measured_added_seconds.get(kernel))} | "
                    f"{_us(result.predicted_added_seconds.get(label))} |")
    ratios = []
    for a, b in MODEL_RATIOS:  # the lanes kernel at one path was measured once, as branch_lanes
        name, timed = f"{a}/{b}", f"{PREDICTIONS[a][0]}/{b}"
        ratios.append(f"| {name} | {_shown(result.measured_ratios.get(timed))} | "
                      f"{_shown(result.predicted_ratios.get(name))} | {_shown(result.static_ratios.get(timed))} |")
    issued = ", ".join(f"{k} {_shown(v)}" for k, v in result.issued_over_static.items()) or "-"
    return [f"{heading} Branch paths: a divergent branch in straight-line code", "",
            f"{result.threads_per_block}-thread blocks, {result.blocks_per_sm} an SM on {result.sm_count} SMs; "
            f"{result.waves} and {2 * result.waves} full waves; added: the time the longer launch adds. "
            f"Predicted for {result.gpu or 'no database GPU'} from the compiled SASS.", "",
            "| kernel | branch_issue_factor | SASS instructions | measured us | added us | predicted added us |",
            "| --- | ---: | ---: | --- | ---: | ---: |", *rows, "",
            "| ratio of added times | measured | model | SASS static |", "| --- | ---: | ---: | ---: |", *ratios, "",
            f"Share of the static count a warp issues (measured over branch_none, over the static ratio): {issued}.",
            ""]


def main(*, out: Path | None = None, gpu: str | None = None) -> int:
    """Measure on the first GPU, print the section (progress on stderr), write ``out`` (JSON).

    Parameters
    ----------
    out : Path, optional
        Where to write ``{"device": ..., "result": ...}``.
    gpu : str, optional
        The database GPU of the predictions; default the device's own.

    Returns
    -------
    int
        The number of kernels whose longer launch added no time.
    """
    session = open_session()
    info = query_device(session)
    record = None if gpu is None else roofline.gpu(gpu)
    result = measure_branch_paths(session, info, gpu=record, progress=lambda message: print(message, file=sys.stderr))
    print("\n".join(render_branch_paths(result)))
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps({"device": info.name, "result": result.model_dump(mode="json")}, indent=1) + "\n")
    return sum(1 for value in result.measured_added_seconds.values() if value is None)
