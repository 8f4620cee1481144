"""Markdown of the measured ceilings, with their independent figures and clocks."""

from __future__ import annotations

from ..device import format_mhz, format_rate
from ..probes import Ceilings

__all__ = ["render_ceilings"]


def render_ceilings(ceilings: Ceilings, h: str = "##") -> list[str]:
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
            f"{format_rate(item.reference_value, unit)} ({item.reference_name}; ours "
            f"{'>=' if item.measured >= item.reference_value else '<'} it)")
        fraction = "-" if item.fraction_of_datasheet is None else f"{item.fraction_of_datasheet:.1%}"
        lines.append(
            f"| {item.name} | {format_rate(item.measured, unit)} | {format_rate(item.datasheet, unit)} | {fraction} | {target} "
            f"| {independent} | {format_rate(item.ceiling, unit)} ({item.value_source}) "
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
                f"| {item.name} | {format_mhz(b and b.sm_clock_hz)} / {format_mhz(a and a.sm_clock_hz)} "
                f"| {format_mhz(b and b.memory_clock_hz)} / {format_mhz(a and a.memory_clock_hz)} "
                f"| {format_mhz(c.min_sm_clock_hz)} / {format_mhz(c.median_sm_clock_hz)} | {state} "
                f"| {'-' if c.max_power_watts is None else f'{c.max_power_watts:.0f}'} | {c.samples_during} "
                f"| {', '.join(r for r in c.reasons if r != 'gpu_idle') or '-'} "
                f"| {'**yes**: ' + c.note if c.throttled else 'no'} |")
        limit = next((item.clocks.power_limit_watts for item in clocked if item.clocks.power_limit_watts), None)
        top = next((item.clocks.max_sm_clock_hz for item in clocked if item.clocks.max_sm_clock_hz), None)
        lines += ["", f"Maximum SM clock {format_mhz(top)} MHz, enforced power limit "
                      f"{'-' if limit is None else f'{limit:.0f} W'}.", ""]
    return lines


