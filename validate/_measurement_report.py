"""Markdown for the measurements of the hierarchy: ceilings with their independent figures and
clocks, the latency ladder, launch cost, the working-set sweep, host links, L2 persistence."""

from __future__ import annotations

from typing import Any

__all__ = [
    "render_ceilings",
    "render_host_links",
    "render_latency",
    "render_launch",
    "render_persistence",
    "render_working_set",
]


def _rate(value: float | None, unit: str) -> str:
    if value is None:
        return "-"
    if unit == "bytes_per_second":
        return f"{value / 1e9:,.1f} GB/s"
    return f"{value / 1e12:,.1f} T{'OP' if unit == 'ops_per_second' else 'FLOP'}/s"


def _mhz(hz: float | None) -> str:
    return "-" if hz is None else f"{hz / 1e6:.0f}"


def _ns(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1e9:,.0f} ns"


def _size(nbytes: float) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if nbytes >= scale:
            value = nbytes / scale
            return f"{value:.0f} {unit}" if value == int(value) else f"{value:.1f} {unit}"
    return f"{nbytes:.0f} B"


def render_ceilings(ceilings: Any, h: str = "##") -> list[str]:
    """The ceilings table (ours, the best independent figure, the ceiling used) and the clocks table."""
    lines = [f"{h} Measured ceilings", "",
             "Ours = gpuroof's kernel; independent = the best library figure measured in the same session "
             "(cuBLAS through PyTorch, CuPy's and PyTorch's copies); the ceiling used is the higher, and "
             "its source is named.", "",
             "| ceiling | ours | datasheet | of datasheet | target | independent | ceiling used (source) "
             "| median time (ms) | spread |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for item in ceilings.items:
        unit = item.unit
        target = "-" if item.target_fraction is None else (
            f"{item.target_fraction:.0%} {'met' if item.meets_target else 'MISSED'}")
        independent = "-" if item.reference_value is None else (
            f"{_rate(item.reference_value, unit)} ({item.reference_name}; ours "
            f"{'>=' if item.measured >= item.reference_value else '<'} it)")
        fraction = "-" if item.fraction_of_datasheet is None else f"{item.fraction_of_datasheet:.1%}"
        lines.append(
            f"| {item.name} | {_rate(item.measured, unit)} | {_rate(item.datasheet, unit)} | {fraction} | {target} "
            f"| {independent} | {_rate(item.ceiling, unit)} ({item.value_source}) "
            f"| {item.timing.median_seconds * 1e3:.3f} | {item.timing.spread:.1%} |")
    for name, error in ceilings.errors.items():
        lines.append(f"| {name} | failed: {error} | | | | | | | |")
    notes = [f"- {item.name}: {item.note}" for item in ceilings.items if item.note]
    lines += ["", "How each was measured:", "", *notes, ""]
    clocked = [item for item in ceilings.items if item.clocks is not None]
    if clocked:
        lines += [f"{h}# Clocks and power around each ceiling (NVML)", "",
                  "SM / memory clock in MHz before and after, the lowest and median busy SM clock while it ran, "
                  "P-state, the highest power read, and the clock-event reasons seen. *Throttled* = a power, "
                  "thermal or hardware slowdown reason, or a busy SM clock below 90% of the maximum.", "",
                  "| ceiling | SM before / after | memory before / after | busy SM min / median | P-state "
                  "| max power (W) | readings | reasons | throttled |",
                  "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
        for item in clocked:
            c = item.clocks
            if c.throttled is None:
                lines.append(f"| {item.name} | - | - | - | - | - | 0 | {c.note} | - |")
                continue
            b, a = c.before, c.after
            state = "-" if b is None or b.performance_state is None else f"P{b.performance_state}"
            lines.append(
                f"| {item.name} | {_mhz(b and b.sm_clock_hz)} / {_mhz(a and a.sm_clock_hz)} "
                f"| {_mhz(b and b.memory_clock_hz)} / {_mhz(a and a.memory_clock_hz)} "
                f"| {_mhz(c.min_sm_clock_hz)} / {_mhz(c.median_sm_clock_hz)} | {state} "
                f"| {'-' if c.max_power_watts is None else f'{c.max_power_watts:.0f}'} | {c.samples_during} "
                f"| {', '.join(r for r in c.reasons if r != 'gpu_idle') or '-'} "
                f"| {'**yes**: ' + c.note if c.throttled else 'no'} |")
        limit = next((item.clocks.power_limit_watts for item in clocked if item.clocks.power_limit_watts), None)
        top = next((item.clocks.max_sm_clock_hz for item in clocked if item.clocks.max_sm_clock_hz), None)
        lines += ["", f"Maximum SM clock {_mhz(top)} MHz, enforced power limit "
                      f"{'-' if limit is None else f'{limit:.0f} W'}.", ""]
    return lines


def render_latency(ladder: Any, h: str = "##") -> list[str]:
    """The per-level latencies with their proofs, and every chase of the sweeps."""
    v = ladder.levels
    lines = [f"{h} Latency ladder (pointer chases)", "",
             "One thread, one dependent 8-byte load per hop, every hop's SM cycles recorded in the kernel and "
             "converted with the kernel's own clock; each chase hits one level by construction.", "",
             "| level | latency | how the level is established |", "| --- | --- | --- |",
             f"| L1 hit | {_ns(v.l1_hit_seconds)} | 128 lines (16 KiB), ld.global.ca, warmed in the same launch |",
             f"| L2 hit | {_ns(v.l2_hit_seconds)} | 4,096 random lines over L2/4, ld.global.cg (no L1), warmed |"]
    if v.l2_near_hit_seconds is not None:
        lines += [f"| L2 hit, near partition | {_ns(v.l2_near_hit_seconds)} | low mode of the L2 chase's hops "
                  f"({1 - v.l2_far_fraction:.0%}) |",
                  f"| L2 hit, far partition | {_ns(v.l2_far_hit_seconds)} | high mode ({v.l2_far_fraction:.0%}) |"]
    lines += [f"| DRAM (L2 miss) | {_ns(v.dram_seconds)} | {v.dram_proof} |",
              f"| TLB miss (added to an L2 hit) | {_ns(v.tlb_miss_penalty_seconds)} | warm L2 chase, one line per "
              f"widest stride minus one line per 128 B; no penalty up to a "
              f"{'-' if v.tlb_reach_bytes is None else _size(v.tlb_reach_bytes)} span |", ""]
    for note in v.notes:
        lines.append(f"- {note}")
    lines += ["", "| chase | sweep | level | span | stride | nodes | load | warm | L2 flushed | pages (2 MiB) "
              "| median | p10 | p90 | cycles | SM clock (MHz) |",
              "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for p in ladder.points:
        q = p.plan
        lines.append(f"| {q.name} | {q.sweep} | {q.level} | {_size(q.footprint_bytes)} | {_size(q.stride_bytes)} "
                     f"| {q.nodes} | {q.cache} | {'yes' if q.warm else 'no'} | {'yes' if q.flush else 'no'} "
                     f"| {p.pages_touched} | {_ns(p.median_seconds)} | {_ns(p.p10_seconds)} | {_ns(p.p90_seconds)} "
                     f"| {p.median_cycles:,.0f} | {p.clock_hz / 1e6:.0f} |")
    for name, error in ladder.errors.items():
        lines.append(f"| {name} | failed: {error} | | | | | | | | | | | | | |")
    return lines + [""]


def render_launch(launch: Any, h: str = "##") -> list[str]:
    """Launch cost with and without the host."""
    return [f"{h} Launch overhead", "",
            "| what | time | how |", "| --- | --- | --- |",
            f"| empty kernel, GPU side | {launch.queued_kernel_seconds * 1e6:.2f} us | CUDA events around one launch "
            f"queued behind a spin kernel (no host time), median of {launch.repetitions} |",
            f"| per kernel, back to back | {launch.graph_kernel_seconds * 1e6:.2f} us | a CUDA graph of "
            f"{launch.graph_kernels} empty kernels replayed behind a spin kernel, time / {launch.graph_kernels} |",
            f"| one launch from Python, idle GPU | {launch.event_pair_seconds * 1e6:.2f} us | CUDA events around one "
            f"cuda.core launch with nothing queued: includes the host's Python launch path |",
            f"| host time of one launch call | {launch.host_launch_seconds * 1e6:.2f} us | perf_counter over 100 "
            f"cuda.core launches, median of 5 batches |", ""]


def render_working_set(working_set: Any, h: str = "##", image: str | None = "working_set.png") -> list[str]:
    """Bandwidth against footprint and the plateaus taken as hierarchical ceilings."""
    p = working_set.plateaus
    lines = [f"{h} Working-set sweep (hierarchical read ceilings)", "",
             f"Each of {working_set.grid} blocks of {working_set.threads_per_block} threads re-reads its own slice "
             "of the footprint; plateaus are the medians of the points certain to hit each level by capacity.", "",
             "| level | read bandwidth | points |", "| --- | --- | --- |",
             f"| L1 | {_rate(p.l1_bytes_per_second, 'bytes_per_second')} | {p.l1_points} |",
             f"| L2 | {_rate(p.l2_bytes_per_second, 'bytes_per_second')} | {p.l2_points} |",
             f"| DRAM | {_rate(p.dram_bytes_per_second, 'bytes_per_second')} | {p.dram_points} |", "",
             "| footprint | ld.global.ca | level | ld.global.cg | level |", "| --- | --- | --- | --- | --- |"]
    by_size: dict[int, dict[str, Any]] = {}
    for point in working_set.points:
        by_size.setdefault(point.footprint_bytes, {})[point.cache] = point
    for size in sorted(by_size):
        ca, cg = by_size[size].get("ca"), by_size[size].get("cg")
        lines.append(f"| {_size(size)} | {_rate(ca and ca.bytes_per_second, 'bytes_per_second')} | "
                     f"{ca.level if ca else '-'} | {_rate(cg and cg.bytes_per_second, 'bytes_per_second')} | "
                     f"{cg.level if cg else '-'} |")
    if image:
        lines += ["", f"![working-set sweep]({image})"]
    return lines + [""]


def render_host_links(links: Any, h: str = "##") -> list[str]:
    """Every host-link transfer and the fits `roofline.transfer_time` uses."""
    lines = [f"{h} Host links", "",
             "Pinned and mapped: CUDA events behind a spin kernel (GPU-side). Pageable and managed device-to-host: "
             "host clock around the blocking call (the CPU's staging or page faults are part of the cost). "
             "Managed: first touch migrates the pages, second touch finds them resident.", "",
             "Fit: seconds = latency + bytes / rate over the sizes >= 1 MiB (two segments where one line misses "
             "a size by more than 10%); `roofline.transfer_time` uses it.", "",
             "| memory | direction | from | fit: rate | fit: latency | worst fit error >= 1 MiB |",
             "| --- | --- | --- | --- | --- | --- |"]
    for fit in links.fits:
        for segment in fit.segments:
            lines.append(f"| {fit.memory} | {fit.direction} | {_size(segment.from_bytes) if segment.from_bytes else '-'} "
                         f"| {segment.bytes_per_second / 1e9:.2f} GB/s | {segment.latency_seconds * 1e6:.1f} us "
                         f"| {fit.max_relative_error:.1%} |")
    kinds = sorted({(p.memory, p.direction, p.touch or "") for p in links.points})
    sizes = sorted({p.bytes for p in links.points})
    table = {(p.memory, p.direction, p.touch or "", p.bytes): p for p in links.points}
    lines += ["", "| size | " + " | ".join(f"{m} {d}{' ' + t if t else ''}" for m, d, t in kinds) + " |",
              "| --- |" + " --- |" * len(kinds)]
    for size in sizes:
        cells = []
        for m, d, t in kinds:
            p = table.get((m, d, t, size))
            cells.append("-" if p is None else f"{p.bytes_per_second / 1e9:.2f} GB/s ({p.median_seconds * 1e6:,.1f} us)")
        lines.append(f"| {_size(size)} | " + " | ".join(cells) + " |")
    for name, error in links.errors.items():
        lines.append(f"- {name}: {error}")
    return lines + [""]


def render_persistence(persistence: Any, h: str = "##") -> list[str]:
    """Measured against predicted time ratios of the access-policy windows."""
    lines = [f"{h} L2 persistence (access-policy window)", "",
             f"persistingL2CacheMaxSize {_size(persistence.max_persisting_bytes)}, accessPolicyMaxWindowSize "
             f"{_size(persistence.max_window_bytes)}. Time ratio = with the window / without; predicted by "
             f"`roofline.l2_persistence` with DRAM {persistence.dram_bytes_per_second / 1e12:.2f} TB/s and L2 "
             f"{persistence.l2_bytes_per_second / 1e12:.2f} TB/s.", "",
             "| hot set | stream | hit ratio | set-aside | time (us) | baseline (us) | measured ratio | predicted "
             "| error | buys nothing (predicted) | why |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for p in persistence.points:
        c = p.case
        lines.append(
            f"| {_size(c.hot_bytes)} | {_size(c.stream_bytes)} | {'none' if c.hit_ratio is None else c.hit_ratio} | "
            f"{_size(c.set_aside_bytes) if c.set_aside_bytes else '0'} | {p.median_seconds * 1e6:,.1f} | "
            f"{p.baseline_seconds * 1e6:,.1f} | {p.measured_time_ratio:.3f} | "
            f"{'-' if p.predicted_time_ratio is None else f'{p.predicted_time_ratio:.3f}'} | "
            f"{'-' if p.error is None else f'{p.error:+.1%}'} | "
            f"{'-' if p.buys_nothing_predicted is None else ('yes' if p.buys_nothing_predicted else 'no')} | "
            f"{p.reason} |")
    for name, error in persistence.errors.items():
        lines.append(f"- {name}: {error}")
    return lines + [""]
