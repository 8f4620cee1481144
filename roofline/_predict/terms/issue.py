"""Issue: the arithmetic at its roof (slowed when too few FMAs are in flight) and the warp
instructions at one per scheduler and cycle, on the SMs and schedulers the grid occupies."""

from __future__ import annotations

from ..._precision import TENSOR_PRECISIONS
from ..._roofline import compute_roof
from ._term import Setting, Term
from ..derive.sass import instructions_from_sass

__all__ = ["arithmetic_term", "busiest_sm", "instructions_term"]


def _paths(setting: Setting) -> float:
    # a divergent warp runs each side of its branches with the other lanes idle
    return float(setting.kernel.branch_issue_factor or 1.0)


def busiest_sm(setting: Setting) -> tuple[float, float, float]:
    """The share of the launch the busiest SM runs, its schedulers' share of the SM, and
    the warps each of them holds at once.

    Blocks go to the SMs in turn, so the busiest SM runs ``ceil(blocks / SMs)`` of them
    (a grid of less than one block per SM leaves SMs idle; a last partial round leaves
    some SMs one block short), weighed by their trips where these follow the thread's index
    (`Setting.busiest_sm_factor`). On that SM ``min(resident blocks, its blocks) x warps per
    block`` warps are resident; they occupy ``min(sub-partitions, warps)`` schedulers.

    Returns
    -------
    tuple of float
        (share of the launch's blocks on the busiest SM, share of its schedulers in use,
        warps per scheduler in use).
    """
    gpu = setting.gpu
    resident_warps = setting.first_wave_blocks * setting.occupancy.warps_per_block
    subs = gpu.architecture.sub_partitions
    used = min(subs, resident_warps)
    return setting.busiest_sm_factor / gpu.sm_count, used / subs, resident_warps / used


def _issue_efficiency(setting: Setting, warps_per_scheduler: float) -> float:
    # a lone warp issues its next dependent instruction a pipe latency later: the scheduler
    # is busy only when enough warps (or independent chains within one) take turns
    return min(1.0, warps_per_scheduler * setting.fma_chains_per_thread / setting.calibration.fma_latency_cycles)


def arithmetic_term(setting: Setting) -> Term:
    """``paths x flops / (peak x issue efficiency)`` on the busiest SM.

    The busiest SM runs its share of the blocks (`busiest_sm`) on the schedulers its warps
    occupy. FP32/FP64 arithmetic issues at ``min(1, warps per scheduler x
    fma_chains_per_thread / FMA latency)``: too few independent FMAs in flight leave the
    units idle between dependent ones. A tensor precision runs at the share of its
    datasheet rate the tensor pipe sustains under load (``tensor_rate_fraction``, the
    measured tensor ceiling: its clock under tensor load included); one warp instruction
    keeps the pipe busy for many cycles, so the FMA latency does not apply. ``paths`` is
    ``kernel.branch_issue_factor``. Binding, it names ``compute`` when the units run at
    their roof (efficiency 1), else ``issue``.
    """
    gpu, kernel, cal = setting.gpu, setting.kernel, setting.calibration
    precision, peak_flops = compute_roof(gpu, kernel)
    flops = float(kernel.flops)
    share, schedulers, warps_per_scheduler = busiest_sm(setting)
    if precision in TENSOR_PRECISIONS:
        efficiency = 1.0
        peak_flops *= cal.tensor_rate_fraction or 1.0
    else:
        efficiency = _issue_efficiency(setting, warps_per_scheduler)
    paths = _paths(setting)
    sm_rate = peak_flops / gpu.sm_count * schedulers * efficiency
    seconds = paths * flops * share / sm_rate if flops else 0.0
    return Term(name="arithmetic", side="compute", seconds=seconds, limiter="compute" if efficiency >= 1.0 else "issue",
                inputs={"flops": flops, "peak_flops_per_second": peak_flops, "issue_efficiency": efficiency,
                        "warps_per_scheduler": warps_per_scheduler, "paths_per_warp": paths,
                        "busiest_sm_share": share, "schedulers_in_use": schedulers})


def instructions_term(setting: Setting) -> Term:
    """Warp instructions at one per scheduler and cycle on the busiest SM (``kernel.instructions``,
    else estimated by `instructions_from_sass` from the launch's SASS, times the paths per warp).

    Every warp instruction takes an issue slot of its scheduler; a divergent branch's two
    sides are both issued, which the count includes. The busiest SM runs its share of the
    blocks (`busiest_sm`) on the schedulers its warps occupy, each issuing at ``min(1,
    warps per scheduler x fma_chains_per_thread / FMA latency)`` (a warp waits a pipe
    latency between dependent instructions).
    """
    gpu, kernel, launch = setting.gpu, setting.kernel, setting.launch
    instructions = kernel.instructions
    sass = setting.sass
    notes: tuple[str, ...] = ()
    if instructions is None and sass is not None:
        instructions = instructions_from_sass(sass, kernel, launch)
        if instructions is not None:
            paths = _paths(setting)
            instructions *= paths
            notes = (f"{instructions / launch.blocks:.0f} warp instructions per block, estimated from "
                     "the SASS (the hot loop runs once per group of its global loads"
                     + (f"; x{paths:g} paths per warp through divergent branches" if paths > 1 else "")
                     + ")",)
    share, used, warps_per_scheduler = busiest_sm(setting)
    efficiency = _issue_efficiency(setting, warps_per_scheduler)
    schedulers = gpu.architecture.sub_partitions * used
    rate = schedulers * gpu.boost_clock_hz * efficiency
    seconds = float(instructions) * share / rate if instructions else 0.0
    return Term(name="instructions", side="compute", seconds=seconds, limiter="issue", notes=notes,
                inputs={"warp_instructions": float(instructions or 0), "schedulers": gpu.sm_count * gpu.architecture.sub_partitions,
                        "clock_hz": gpu.boost_clock_hz, "busiest_sm_share": share, "schedulers_in_use": used,
                        "issue_efficiency": efficiency, "warps_per_scheduler": warps_per_scheduler})
