"""The latency ladder: pointer chases that each land on one level of the memory hierarchy.

One thread follows a chain of 8-byte links, one dependent load per hop, and the kernel
records every hop's SM cycles (`validate/kernels/latency.cu`); the kernel's own
clock64/globaltimer ratio converts cycles to seconds. Each chase is built so that the
level it reports is known by construction, never by guessing from the number:

* **L1 hit**: 128 lines (16 KiB) with ``ld.global.ca``, warmed by one pass in the same launch.
* **L2 hit**: 4,096 random lines spread over a quarter of L2 with ``ld.global.cg`` (no L1),
  warmed by one pass; Hopper's L2 has two partitions, and the per-hop times split into a
  near and a far mode where the partitions are visible.
* **DRAM**: 4,096 random lines spread over at least 4x L2, L2 overwritten (a memset of 4x L2)
  before every launch, each line visited once per launch: every recorded load is the first
  touch of its line since the flush, so it cannot hit L2.
* **TLB**: the same warm L2 chase with its lines spread ever wider (stride sweep, one line per
  stride, and footprint sweep, random lines): the lines still hit L2, so any rise is the
  address translation missing its TLBs; cold chases over large footprints add it to DRAM.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field
from roofline import RooflineError

from ..device import (
    DeviceError,
    DeviceInfo,
    MAX_SECONDS,
    Session,
    compile_kernels,
    format_ns,
    format_size,
    kernel_source,
    positive_series,
    takes_session,
)
from ._probe import Figures, Probe, RunContext

__all__ = [
    "CHASE_HOPS",
    "ChasePlan",
    "ChasePoint",
    "LatencyLadder",
    "LatencyLevels",
    "LatencyProbe",
    "ModeSplit",
    "chase_plans",
    "latency_levels",
    "measure_latency_ladder",
    "node_offsets",
    "render_latency",
    "split_modes",
    "summarize_chase",
]

_FROZEN = ConfigDict(frozen=True, extra="forbid")

#: Hops recorded per launch (the kernel's shared-memory record holds this many).
CHASE_HOPS = 4096
LINE_BYTES = 128
#: Page size of large device allocations (cudaMalloc maps 2 MiB pages), for counting pages.
PAGE_BYTES = 2 << 20
KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30

Level = Literal["l1", "l2", "dram"]
Sweep = Literal["ladder", "footprint_warm", "footprint_cold", "stride_warm", "stride_cold"]


class ChasePlan(BaseModel):
    """How one chase is built: where its nodes lie, how they are loaded, what it hits."""

    model_config = _FROZEN

    name: str
    sweep: Sweep
    level: Level = Field(description="The level every recorded hop hits, by construction.")
    footprint_bytes: int = Field(gt=0, description="Span of the buffer the nodes are spread over.")
    stride_bytes: int = Field(gt=0, description="Nodes sit at multiples of this offset.")
    nodes: int = Field(gt=0, description="Distinct nodes (lines) of the chain.")
    order: Literal["random", "sequential"]
    cache: Literal["ca", "cg"] = Field(description="ld.global.ca (L1 and L2) or .cg (L2 only).")
    warm: bool = Field(description="One unrecorded pass over the chain first, in the same launch.")
    flush: bool = Field(description="L2 overwritten before every launch.")
    hops: int = Field(gt=0, le=CHASE_HOPS)


class ModeSplit(BaseModel):
    """Two modes of a latency distribution (near and far L2 partition), if there are two."""

    model_config = _FROZEN

    separated: bool = Field(description="Two modes, each >= 10% of hops, far apart for their spread.")
    low_seconds: float
    high_seconds: float
    high_fraction: float
    threshold_seconds: float
    separation: float = Field(description="(mean log high - mean log low) / (sd low + sd high).")


class ChasePoint(BaseModel):
    """One measured chase: its plan and per-hop latency statistics."""

    model_config = _FROZEN

    plan: ChasePlan
    median_seconds: float
    p10_seconds: float
    p90_seconds: float
    median_cycles: float
    clock_hz: float = Field(description="SM clock during the chase (cycles / globaltimer).")
    launches: int
    pages_touched: int = Field(description=f"Distinct {PAGE_BYTES >> 20} MiB pages the nodes lie in.")
    misses_l2_by_construction: bool
    modes: ModeSplit | None = None


class LatencyLevels(BaseModel):
    """The latency of each level, seconds, with how each was established."""

    model_config = _FROZEN

    l1_hit_seconds: float | None = None
    l2_hit_seconds: float | None = None
    l2_near_hit_seconds: float | None = None
    l2_far_hit_seconds: float | None = None
    l2_far_fraction: float | None = None
    dram_seconds: float | None = None
    dram_proof: str = ""
    tlb_miss_penalty_seconds: float | None = Field(
        default=None, description="Warm L2 chase at the widest stride minus at one line per hop.")
    tlb_reach_bytes: int | None = Field(
        default=None, description="Largest stride-sweep footprint with no TLB penalty (> 10%).")
    notes: tuple[str, ...] = ()


class LatencyLadder(BaseModel):
    """Every chase and the per-level figures drawn from them."""

    model_config = _FROZEN

    points: tuple[ChasePoint, ...]
    levels: LatencyLevels
    errors: dict[str, str] = Field(default_factory=dict)


def _pow2_at_least(value: int) -> int:
    return 1 << max(0, math.ceil(math.log2(max(1, value))))


def chase_plans(l2_cache_bytes: int, memory_bytes: int, *, quick: bool = False) -> tuple[ChasePlan, ...]:
    """The chases of the ladder and its sweeps for a GPU's L2 and memory size.

    Parameters
    ----------
    l2_cache_bytes : int
        L2 size (the device's), bytes.
    memory_bytes : int
        Device memory, bytes; no chase spans more than a quarter of it (nor 16 GiB).
    quick : bool
        The three levels and the ends of each sweep.

    Examples
    --------
    >>> [p.level for p in chase_plans(60 << 20, 140 << 30) if p.sweep == "ladder"]
    ['l1', 'l2', 'dram']
    """
    cap = min(16 * GiB, memory_bytes // 4 // PAGE_BYTES * PAGE_BYTES)
    dram_span = min(cap, _pow2_at_least(4 * l2_cache_bytes))
    n = CHASE_HOPS
    plans = [
        ChasePlan(name="l1", sweep="ladder", level="l1", footprint_bytes=16 * KiB, stride_bytes=LINE_BYTES,
                  nodes=16 * KiB // LINE_BYTES, order="random", cache="ca", warm=True, flush=False, hops=n),
        ChasePlan(name="l2", sweep="ladder", level="l2", footprint_bytes=l2_cache_bytes // 4 // LINE_BYTES * LINE_BYTES,
                  stride_bytes=LINE_BYTES, nodes=n, order="random", cache="cg", warm=True, flush=False, hops=n),
        ChasePlan(name="dram", sweep="ladder", level="dram", footprint_bytes=dram_span, stride_bytes=LINE_BYTES,
                  nodes=n, order="random", cache="cg", warm=False, flush=True, hops=n),
    ]
    spans = (1 * MiB, 4 * GiB) if quick else (1 * MiB, 16 * MiB, 256 * MiB, 4 * GiB, 16 * GiB)
    for span in sorted({min(cap, s) for s in spans}):
        plans.append(ChasePlan(name=f"warm random {span >> 20} MiB", sweep="footprint_warm", level="l2",
                               footprint_bytes=span, stride_bytes=LINE_BYTES, nodes=n, order="random", cache="cg",
                               warm=True, flush=False, hops=n))
    for span in sorted({min(cap, s) for s in ((4 * GiB,) if quick else (1 * GiB, 4 * GiB, 16 * GiB))} - {dram_span}):
        plans.append(ChasePlan(name=f"cold random {span >> 20} MiB", sweep="footprint_cold", level="dram",
                               footprint_bytes=span, stride_bytes=LINE_BYTES, nodes=n, order="random", cache="cg",
                               warm=False, flush=True, hops=n))
    strides = (LINE_BYTES, 2 * MiB) if quick else (LINE_BYTES, 4 * KiB, 64 * KiB, 2 * MiB, 8 * MiB)
    for stride in strides:
        nodes = min(n, cap // stride)
        plans.append(ChasePlan(name=f"warm stride {_size(stride)}", sweep="stride_warm", level="l2",
                               footprint_bytes=nodes * stride, stride_bytes=stride, nodes=nodes, order="sequential",
                               cache="cg", warm=True, flush=False, hops=n))
    nodes = min(n, cap // (2 * MiB))
    plans.append(ChasePlan(name="cold stride 2 MiB", sweep="stride_cold", level="dram", footprint_bytes=nodes * 2 * MiB,
                           stride_bytes=2 * MiB, nodes=nodes, order="sequential", cache="cg", warm=False, flush=True,
                           hops=nodes))
    return tuple(plans)


def _size(nbytes: int) -> str:
    for unit, scale in (("GiB", GiB), ("MiB", MiB), ("KiB", KiB)):
        if nbytes >= scale and nbytes % scale == 0:
            return f"{nbytes // scale} {unit}"
    return f"{nbytes} B"


def node_offsets(plan: ChasePlan, rng: np.random.Generator) -> np.ndarray:
    """Byte offsets of the plan's nodes in chase order (uint64): distinct multiples of its stride.

    Examples
    --------
    >>> plan = chase_plans(60 << 20, 140 << 30)[0]
    >>> offsets = node_offsets(plan, np.random.default_rng(0))
    >>> len(set(offsets.tolist())) == plan.nodes, int(offsets.max()) < plan.footprint_bytes
    (True, True)
    """
    slots = plan.footprint_bytes // plan.stride_bytes
    if plan.nodes > slots:
        raise ValueError(f"nodes={plan.nodes} exceeds the {slots} slots of footprint {plan.footprint_bytes}")
    if plan.order == "sequential":
        chosen = np.arange(plan.nodes, dtype=np.uint64)
    elif slots <= 4 * plan.nodes:
        chosen = rng.permutation(slots)[: plan.nodes].astype(np.uint64)
    else:
        # Draw with replacement and keep first occurrences: cheap for huge footprints.
        picked: list[int] = []
        seen: set[int] = set()
        while len(picked) < plan.nodes:
            for slot in rng.integers(0, slots, size=2 * plan.nodes).tolist():
                if slot not in seen:
                    seen.add(slot)
                    picked.append(slot)
                    if len(picked) == plan.nodes:
                        break
        chosen = np.array(picked, dtype=np.uint64)
    return chosen * np.uint64(plan.stride_bytes)


def split_modes(seconds: Sequence[float] | np.ndarray) -> ModeSplit:
    """Split per-hop latencies into a low and a high mode (Otsu's threshold on their logarithm).

    The split counts as two modes when each holds at least 10% of the hops and the modes
    are at least two spreads apart: ``(mean log high - mean log low) / (sd low + sd high) >= 2``
    (a single normal mode split this way scores about 1.3).

    Raises
    ------
    roofline.RooflineError
        Fewer than 4 latencies, or one outside [1 ps, 1 day].
    TypeError
        When `seconds` is not a sequence (or 1-D array) of numbers.

    Examples
    --------
    >>> near, far = [200e-9] * 60, [260e-9] * 40
    >>> split = split_modes(np.array(near + far) * (1 + 0.01 * np.sin(np.arange(100))))
    >>> split.separated, round(split.high_fraction, 2)
    (True, 0.4)
    """
    # A hop is at least a picosecond (a tenth of a cycle at any clock) and at most a day.
    values = np.sort(np.log(positive_series("seconds", seconds, 1e-12, MAX_SECONDS, " s")))
    n = len(values)
    if n < 4:
        raise RooflineError(f"need at least 4 latencies to split, got {n}")
    cumulative = np.cumsum(values)
    total = cumulative[-1]
    k = np.arange(1, n)
    low_mean = cumulative[:-1] / k
    high_mean = (total - cumulative[:-1]) / (n - k)
    between = k * (n - k) * (high_mean - low_mean) ** 2
    split = int(np.argmax(between)) + 1
    low, high = values[:split], values[split:]
    # Hops quantised to whole cycles can give modes without spread: the floor (one part in
    # 1e12 of the log) keeps the separation finite, so the report stays valid JSON, and
    # equal modes (every hop alike) score 0, not infinitely far apart.
    spread = max(float(low.std() + high.std()), 1e-12)
    separation = float((high.mean() - low.mean()) / spread)
    fraction = len(high) / n
    return ModeSplit(
        separated=bool(min(fraction, 1 - fraction) >= 0.10 and separation >= 2.0),
        low_seconds=float(np.exp(np.median(low))), high_seconds=float(np.exp(np.median(high))),
        high_fraction=fraction, threshold_seconds=float(np.exp((low[-1] + high[0]) / 2)), separation=separation,
    )


def summarize_chase(plan: ChasePlan, cycles: Sequence[np.ndarray], elapsed_ns: Sequence[float],
                    elapsed_cycles: Sequence[float], *, l2_cache_bytes: int, pages_touched: int) -> ChasePoint:
    """Statistics of one chase from each launch's per-hop cycles and its clock reading.

    Parameters
    ----------
    plan : ChasePlan
    cycles : sequence of arrays
        Per-hop SM cycles, one array per launch.
    elapsed_ns, elapsed_cycles : sequence of float
        Each launch's recorded section in globaltimer nanoseconds and in SM cycles.
    l2_cache_bytes : int
        For the L2-miss proof of cold chases.
    pages_touched : int
        Distinct pages the nodes lie in.
    """
    seconds, all_cycles, clocks = [], [], []
    for hop_cycles, ns, total in zip(cycles, elapsed_ns, elapsed_cycles):
        clock = total / ns * 1e9 if ns > 0 else float("nan")
        clocks.append(clock)
        all_cycles.append(np.asarray(hop_cycles, dtype=float))
        seconds.append(np.asarray(hop_cycles, dtype=float) / clock)
    hops = np.concatenate(seconds)
    misses = bool(plan.flush and not plan.warm and plan.hops <= plan.nodes
                  and plan.footprint_bytes >= 4 * l2_cache_bytes)
    return ChasePoint(
        plan=plan, median_seconds=float(np.median(hops)), p10_seconds=float(np.percentile(hops, 10)),
        p90_seconds=float(np.percentile(hops, 90)), median_cycles=float(np.median(np.concatenate(all_cycles))),
        clock_hz=float(statistics.median(clocks)), launches=len(cycles), pages_touched=int(pages_touched),
        misses_l2_by_construction=misses, modes=split_modes(hops) if plan.name == "l2" else None,
    )


def latency_levels(points: Sequence[ChasePoint], *, l2_cache_bytes: int) -> LatencyLevels:
    """The per-level latencies and the TLB figures, from the ladder's and the sweeps' chases.

    Examples
    --------
    >>> plans = {p.name: p for p in chase_plans(60 << 20, 140 << 30, quick=True)}
    >>> point = lambda name, s: ChasePoint(plan=plans[name], median_seconds=s, p10_seconds=s, p90_seconds=s,
    ...     median_cycles=s * 2e9, clock_hz=2e9, launches=1, pages_touched=1,
    ...     misses_l2_by_construction=name == "dram")
    >>> levels = latency_levels([point("l1", 20e-9), point("l2", 250e-9), point("dram", 700e-9)],
    ...                         l2_cache_bytes=60 << 20)
    >>> levels.l1_hit_seconds < levels.l2_hit_seconds < levels.dram_seconds
    True
    """
    by_name = {p.plan.name: p for p in points}
    notes = []
    l1, l2, dram = by_name.get("l1"), by_name.get("l2"), by_name.get("dram")
    fields: dict[str, object] = {}
    if l1:
        fields["l1_hit_seconds"] = l1.median_seconds
    if l2:
        fields["l2_hit_seconds"] = l2.median_seconds
        if l2.modes is not None and l2.modes.separated:
            fields.update(l2_near_hit_seconds=l2.modes.low_seconds, l2_far_hit_seconds=l2.modes.high_seconds,
                          l2_far_fraction=l2.modes.high_fraction)
        elif l2.modes is not None:
            notes.append("L2 hits show one mode: near and far partitions not told apart")
    if dram:
        fields["dram_seconds"] = dram.median_seconds
        p = dram.plan
        fields["dram_proof"] = (
            f"{p.nodes} distinct random lines over {p.footprint_bytes / l2_cache_bytes:.1f}x L2, L2 overwritten by "
            f"a 4x-L2 memset before each launch, each line loaded once per launch: every recorded load is the "
            f"first touch of its line since the flush" if dram.misses_l2_by_construction
            else "NOT established: the chase does not meet the L2-miss construction")
        if l2 and dram.median_seconds < 1.2 * l2.median_seconds:
            notes.append("the DRAM chase is not clearly slower than the L2 chase")
    if l1 and l2 and not l1.median_seconds < l2.median_seconds:
        notes.append("the L1 chase is not faster than the L2 chase")
    strides = sorted((p for p in points if p.plan.sweep == "stride_warm"), key=lambda p: p.plan.footprint_bytes)
    if len(strides) >= 2:
        base = strides[0].median_seconds
        fields["tlb_miss_penalty_seconds"] = strides[-1].median_seconds - base
        within = [p.plan.footprint_bytes for p in strides if p.median_seconds <= 1.10 * base]
        fields["tlb_reach_bytes"] = max(within)
    return LatencyLevels(notes=tuple(notes), **fields)


@takes_session
def measure_latency_ladder(session: Session, info: DeviceInfo, *, quick: bool = False, launches: int = 3,
                           progress: Callable[[str], None] = lambda message: None) -> LatencyLadder:
    """Run every chase of `chase_plans` on the device and derive the per-level latencies.

    Parameters
    ----------
    session : validate.Session
    info : DeviceInfo
        L2 and memory size.
    quick : bool
        Fewer chases (`chase_plans`).
    launches : int
        Launches per chase (their hops are pooled).
    progress : callable
        One line per level.
    """
    plans = chase_plans(info.l2_cache_bytes, info.memory_size_bytes, quick=quick)
    kernels = compile_kernels(kernel_source("latency.cu"), ["chase_link", "chase_ca", "chase_cg"],
                              arch=session.arch, name="latency.cu")
    span = max(p.footprint_bytes for p in plans)
    chain = session.allocate(span)
    cycles = session.allocate(4 * CHASE_HOPS)
    out = session.allocate(64)
    rng = np.random.default_rng(2026)
    points, errors = [], {}
    for plan in plans:
        try:
            offsets = node_offsets(plan, rng)
            device_offsets = session.upload(offsets)
            session.launcher(kernels["chase_link"], (math.ceil(plan.nodes / 256), 1, 1), (256, 1, 1),
                             (chain, device_offsets, np.int32(plan.nodes)))()
            run = session.launcher(kernels[f"chase_{plan.cache}"], (1, 1, 1), (1, 1, 1),
                                   (chain, np.uint64(offsets[0]), np.int32(plan.nodes if plan.warm else 0),
                                    np.int32(plan.hops), cycles, out))
            hop_cycles, ns, total = [], [], []
            for _ in range(launches):
                if plan.flush:
                    session.flush_l2()
                run()
                hop_cycles.append(session.download(cycles, (plan.hops,), np.uint32)[: plan.hops].copy())
                record = session.download(out, (3,), np.uint64)
                ns.append(float(record[1]))
                total.append(float(record[2]))
            pages = len(np.unique(offsets // np.uint64(PAGE_BYTES)))
            points.append(summarize_chase(plan, hop_cycles, ns, total, l2_cache_bytes=info.l2_cache_bytes,
                                          pages_touched=pages))
            del device_offsets
        except (DeviceError, ValueError) as exc:
            errors[plan.name] = str(exc)
            progress(f"chase {plan.name}: failed: {exc}")
    del chain
    levels = latency_levels(points, l2_cache_bytes=info.l2_cache_bytes)

    def ns_of(value: float | None) -> str:
        return "-" if value is None else f"{value * 1e9:.0f} ns"

    split = ""
    if levels.l2_near_hit_seconds is not None:
        split = f" (near {ns_of(levels.l2_near_hit_seconds)}, far {ns_of(levels.l2_far_hit_seconds)})"
    progress(f"latency: L1 hit {ns_of(levels.l1_hit_seconds)}, L2 hit {ns_of(levels.l2_hit_seconds)}{split}, "
             f"DRAM {ns_of(levels.dram_seconds)}, TLB miss +{ns_of(levels.tlb_miss_penalty_seconds)}")
    return LatencyLadder(points=tuple(points), levels=levels, errors=errors)


def render_latency(ladder: LatencyLadder, h: str = "##") -> list[str]:
    """The per-level latencies with their proofs, and every chase of the sweeps."""
    v = ladder.levels
    lines = [f"{h} Latency ladder (pointer chases)", "",
             "One thread, one dependent 8-byte load per hop, every hop's SM cycles recorded in the kernel and "
             "converted with the kernel's own clock; each chase hits one level by construction.", "",
             "| level | latency | how the level is established |", "| --- | --- | --- |",
             f"| L1 hit | {format_ns(v.l1_hit_seconds)} | 128 lines (16 KiB), ld.global.ca, warmed in the same launch |",
             f"| L2 hit | {format_ns(v.l2_hit_seconds)} | 4,096 random lines over L2/4, ld.global.cg (no L1), warmed |"]
    if v.l2_near_hit_seconds is not None:
        lines += [f"| L2 hit, near partition | {format_ns(v.l2_near_hit_seconds)} | low mode of the L2 chase's hops "
                  f"({1 - v.l2_far_fraction:.0%}) |",
                  f"| L2 hit, far partition | {format_ns(v.l2_far_hit_seconds)} | high mode ({v.l2_far_fraction:.0%}) |"]
    lines += [f"| DRAM (L2 miss) | {format_ns(v.dram_seconds)} | {v.dram_proof} |",
              f"| TLB miss (added to an L2 hit) | {format_ns(v.tlb_miss_penalty_seconds)} | warm L2 chase, one line per "
              f"widest stride minus one line per 128 B; no penalty up to a "
              f"{'-' if v.tlb_reach_bytes is None else format_size(v.tlb_reach_bytes)} span |", ""]
    for note in v.notes:
        lines.append(f"- {note}")
    lines += ["", "| chase | sweep | level | span | stride | nodes | load | warm | L2 flushed | pages (2 MiB) "
              "| median | p10 | p90 | cycles | SM clock (MHz) |",
              "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for p in ladder.points:
        q = p.plan
        lines.append(f"| {q.name} | {q.sweep} | {q.level} | {format_size(q.footprint_bytes)} | {format_size(q.stride_bytes)} "
                     f"| {q.nodes} | {q.cache} | {'yes' if q.warm else 'no'} | {'yes' if q.flush else 'no'} "
                     f"| {p.pages_touched} | {format_ns(p.median_seconds)} | {format_ns(p.p10_seconds)} | {format_ns(p.p90_seconds)} "
                     f"| {p.median_cycles:,.0f} | {p.clock_hz / 1e6:.0f} |")
    for name, error in ladder.errors.items():
        lines.append(f"| {name} | failed: {error} | | | | | | | | | | | | | |")
    return lines + [""]


class LatencyProbe(Probe[LatencyLadder]):
    """The latency ladder (`measure_latency_ladder`); gives the calibration each level's latency."""

    name = "latency"
    step = "latency ladder"

    def run(self, ctx: RunContext) -> LatencyLadder:
        return measure_latency_ladder(ctx.session, ctx.info, quick=ctx.quick, progress=ctx.progress)

    def figures(self, result: LatencyLadder) -> Figures:
        levels = result.levels
        figures: Figures = {
            "l1_hit_latency_seconds": (
                levels.l1_hit_seconds,
                "pointer chase, 128 lines in 16 KiB, ld.global.ca, warmed in the same launch, median hop"),
            "l2_hit_latency_seconds": (
                levels.l2_hit_seconds, "pointer chase, 4096 random lines over L2/4, ld.global.cg, warmed, median hop"),
            "l2_near_hit_latency_seconds": (levels.l2_near_hit_seconds, "the low mode of the L2-hit chase's hops"),
            "l2_far_hit_latency_seconds": (levels.l2_far_hit_seconds, "the high mode of the L2-hit chase's hops"),
            "dram_latency_seconds": (
                levels.dram_seconds, f"pointer chase that misses L2 by construction ({levels.dram_proof})"),
        }
        penalty = levels.tlb_miss_penalty_seconds
        how = "warm L2 chase at the widest stride minus at one line per hop"
        if penalty is not None and penalty < 0:
            # the widest stride as fast as one line per hop, less the chase's noise: no penalty
            penalty, how = 0.0, f"{how} ({penalty * 1e9:.2f} ns: no penalty, recorded as 0)"
        figures["tlb_miss_penalty_seconds"] = (penalty, how)
        return figures

    def render(self, result: LatencyLadder, heading: str, assets: str) -> list[str]:
        return render_latency(result, heading)
