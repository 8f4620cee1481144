"""Issue: the arithmetic at its roof (slowed when too few FMAs are in flight) and the warp
instructions at one per scheduler and cycle, on the SMs and schedulers the grid occupies."""

from __future__ import annotations

from ..derive import Grid, IssueSlots, Loads
from ..params import IssueParams
from ..rules import on
from ._term import Term

__all__ = ["arithmetic_term", "exposed_issue_seconds", "instructions_term", "issue_efficiency"]


def issue_efficiency(issue: IssueSlots, params: IssueParams) -> float:
    """``min(1, warps per scheduler x fma_chains_per_thread / FMA latency)``: a lone warp issues
    its next dependent instruction a pipe latency later, so the scheduler is busy only when
    enough warps (or independent chains within one) take turns."""
    if not on("issue_efficiency"):
        return 1.0
    return min(1.0, issue.warps_per_scheduler * issue.fma_chains_per_thread / params.fma_latency_cycles)


def arithmetic_term(issue: IssueSlots, params: IssueParams) -> Term:
    """``paths x flops / (peak x issue efficiency)`` on the busiest SM.

    The busiest SM runs its share of the blocks (`IssueSlots.busiest_sm_share`) on the
    schedulers its warps occupy. FP32/FP64 arithmetic issues at `issue_efficiency`: too few
    independent FMAs in flight leave the units idle between dependent ones. A tensor
    precision runs at the share of its datasheet rate the tensor pipe sustains under load
    (``tensor_rate_fraction``, the measured tensor ceiling: its clock under tensor load
    included); one warp instruction keeps the pipe busy for many cycles, so the FMA latency
    does not apply. ``paths`` is ``kernel.branch_issue_factor``. Binding, it names
    ``compute`` when the units run at their roof (efficiency 1), else ``issue``.
    """
    peak_flops = datasheet_flops = issue.peak_flops_per_second
    if issue.tensor:
        efficiency = 1.0
        peak_flops *= (params.tensor_rate_fraction or 1.0) if on("tensor_rate_fraction") else 1.0
    else:
        efficiency = issue_efficiency(issue, params)
    flops, share, paths = issue.flops, issue.busiest_sm_share, issue.paths_per_warp
    sm_rate = peak_flops / issue.sm_count * issue.schedulers_in_use * efficiency
    seconds = paths * flops * share / sm_rate if flops else 0.0
    # the plain roof (`roofline_bound`): the flops at the datasheet's compute roof
    roof = flops / datasheet_flops if datasheet_flops else None
    return Term(name="arithmetic", side="compute", seconds=seconds, limiter="compute" if efficiency >= 1.0 else "issue",
                roof_seconds=roof,
                inputs={"flops": flops, "peak_flops_per_second": peak_flops, "issue_efficiency": efficiency,
                        "warps_per_scheduler": issue.warps_per_scheduler, "paths_per_warp": paths,
                        "busiest_sm_share": share, "schedulers_in_use": issue.schedulers_in_use})


def instructions_term(issue: IssueSlots, params: IssueParams) -> Term:
    """Warp instructions at one per scheduler and cycle on the busiest SM (`IssueSlots.warp_instructions`:
    ``kernel.instructions``, else estimated from the launch's SASS, times the paths per warp).

    Every warp instruction takes an issue slot of its scheduler; a divergent branch's two
    sides are both issued, which the count includes. The busiest SM runs its share of the
    blocks on the schedulers its warps occupy, each issuing at `issue_efficiency` (a warp
    waits a pipe latency between dependent instructions).
    """
    instructions, share, used = issue.warp_instructions, issue.busiest_sm_share, issue.schedulers_in_use
    efficiency = issue_efficiency(issue, params)
    schedulers = issue.sub_partitions * used
    rate = schedulers * issue.clock_hz * efficiency
    seconds = float(instructions) * share / rate if instructions else 0.0
    return Term(name="instructions", side="compute", seconds=seconds, limiter="issue", notes=issue.notes,
                inputs={"warp_instructions": float(instructions or 0), "schedulers": issue.schedulers,
                        "clock_hz": issue.clock_hz, "busiest_sm_share": share, "schedulers_in_use": used,
                        "issue_efficiency": efficiency, "warps_per_scheduler": issue.warps_per_scheduler,
                        "paths_per_warp": issue.paths_per_warp, "straight_line_listed": issue.straight_line_listed,
                        "straight_line_issued": issue.straight_line_issued})


def exposed_issue_seconds(instructions_seconds: float, issue: IssueSlots, grid: Grid, loads: Loads) -> float:
    """Seconds of one round's issue a block's warps spend with no load in flight, for a kernel
    whose threads load once, then compute.

    One round's issue is the `instructions_term`'s ``instructions_seconds`` over the rounds of
    blocks the busiest SM runs (its share of the grid over the blocks it holds at once; all of
    it for a grid of one round). A thread that loads ``k`` independent elements computes on the
    first while the others are still on their way, so only about one element's share of its
    compute waits with nothing in flight: the round's issue over the loads a thread keeps in
    flight (the phases probe: 1 to 8 loads a thread, docs/prediction.md, "Load, then compute:
    the phases take turns").
    """
    rounds = issue.busiest_sm_share * grid.blocks / max(1, grid.first_wave_blocks)
    return instructions_seconds / max(1.0, rounds) / max(1, loads.in_flight_per_thread)
