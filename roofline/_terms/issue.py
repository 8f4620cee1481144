"""Issue: the arithmetic at its roof (slowed when too few FMAs are in flight) and the warp
instructions at one per scheduler and cycle."""

from __future__ import annotations

from .._roofline import compute_roof
from ._term import Setting, Term
from .sass import instructions_from_sass

__all__ = ["arithmetic_term", "instructions_term"]


def _paths(setting: Setting) -> float:
    # a divergent warp runs each side of its branches with the other lanes idle
    return float(setting.kernel.branch_issue_factor or 1.0)


def arithmetic_term(setting: Setting) -> Term:
    """``paths x flops / (peak x issue efficiency)``.

    The issue efficiency is ``min(1, warps per scheduler x fma_chains_per_thread / FMA
    latency)``: too few independent FMAs in flight leave the arithmetic units idle between
    dependent ones. ``paths`` is ``kernel.branch_issue_factor``. Binding, it names
    ``compute`` when the units run at their roof (efficiency 1), else ``issue``.
    """
    gpu, kernel, cal = setting.gpu, setting.kernel, setting.calibration
    precision, peak_flops = compute_roof(gpu, kernel)
    flops = float(kernel.flops)
    warps_per_scheduler = setting.occupancy.active_warps_per_sm / gpu.architecture.sub_partitions
    efficiency = min(1.0, warps_per_scheduler * setting.fma_chains_per_thread / cal.fma_latency_cycles)
    paths = _paths(setting)
    seconds = paths * flops / (peak_flops * efficiency) if flops else 0.0
    return Term(name="arithmetic", side="compute", seconds=seconds, limiter="compute" if efficiency >= 1.0 else "issue",
                inputs={"flops": flops, "peak_flops_per_second": peak_flops, "issue_efficiency": efficiency,
                        "warps_per_scheduler": warps_per_scheduler, "paths_per_warp": paths})


def instructions_term(setting: Setting) -> Term:
    """Warp instructions at one per scheduler and cycle (``kernel.instructions``, else
    estimated by `instructions_from_sass` from the launch's SASS, times the paths per warp).

    Every warp instruction takes an issue slot of its scheduler; a divergent branch's two
    sides are both issued, which the count includes. Independent instructions of one warp
    issue back to back, so the warps' count does not lower this rate.
    """
    gpu, kernel, launch = setting.gpu, setting.kernel, setting.launch
    instructions = kernel.instructions
    sass = launch.resources.sass if launch.resources is not None else None
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
    schedulers = gpu.sm_count * gpu.architecture.sub_partitions
    seconds = float(instructions) / (schedulers * gpu.boost_clock_hz) if instructions else 0.0
    return Term(name="instructions", side="compute", seconds=seconds, limiter="issue", notes=notes,
                inputs={"warp_instructions": float(instructions or 0), "schedulers": schedulers,
                        "clock_hz": gpu.boost_clock_hz})
