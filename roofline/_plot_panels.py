"""The side panels of a roofline plot: each kernel's achieved bandwidth per memory level, and
the instruction roofline beside the FLOP chart; the colours and markers they share with it."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ._chart import LEVEL_LABELS, RooflineChart
from ._instruction_roofline import InstructionRoofline
from ._plot_axes import PLOT_RANGE, decade_ceil, decade_floor

if TYPE_CHECKING:  # matplotlib is imported only when a plot is drawn
    from matplotlib.axes import Axes

__all__ = ["Color", "LEVEL_MARKERS", "MEMORY_COLORS", "ORIGIN_STYLES", "TEXT_BOX", "bandwidth_panel", "darker",
           "instruction_panel", "kernel_order", "marker_fill"]

#: A matplotlib color: a name or an RGB(A) tuple.
Color = str | tuple[float, ...]

LEVEL_MARKERS = {"dram": "o", "l2": "s", "l1": "^"}
TEXT_BOX = {"facecolor": "white", "edgecolor": "none", "alpha": 0.75, "pad": 0.6}
MEMORY_COLORS = {"dram": "#1f4e9c", "l2": "#2a9d8f", "l1": "#8a5a9e"}


@dataclass(frozen=True)
class OriginStyle:
    """How the points of one origin are drawn: marker fill, joining line, legend entry, and
    the offset from the kernel's row on the bandwidth panel (rows, where origins meet)."""

    fill: str
    linestyle: str
    legend: str
    row_offset: float


#: One style per point origin, in drawing order; the legend says what each fill and line mean.
ORIGIN_STYLES = {
    "roofline": OriginStyle("full", "-", "roofline bound (filled, solid)", 0.0),
    "model": OriginStyle("left", "--", "time model (half-filled, dashed)", 0.18),
    "measured": OriginStyle("none", ":", "measured (hollow, dotted)", -0.18),
}


def marker_fill(origin: str, color: Color) -> dict[str, object]:
    """The matplotlib marker options that fill a point of `origin` in `color`."""
    fill = ORIGIN_STYLES[origin].fill
    if fill == "none":
        return {"markerfacecolor": "none"}
    # a half-filled marker's other half white, so a line behind it does not show through
    return {"markerfacecolor": color, "fillstyle": fill, "markerfacecoloralt": "white"}


def instruction_panel(ax: Axes, ir: InstructionRoofline, numbers: dict[str, int], colors: dict[str, Color]) -> None:
    """The instruction roofline: warp instructions/s against warp instructions per transaction."""
    from matplotlib.ticker import EngFormatter

    issue = ir.issue_rate
    roofs = [c for c in ir.ceilings if c.kind == "memory"]
    xs = [p.instructions_per_transaction for p in ir.points] + [issue / r.value for r in roofs]
    ys = [p.instructions_per_second for p in ir.points] + [issue]
    x_lo, x_hi = decade_floor(min(xs) / 2), decade_ceil(max(xs) * 2)
    y_lo, y_hi = decade_floor(min(ys + [min(r.value for r in roofs) * x_lo]) / 2), min(issue * 3, PLOT_RANGE[1])
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(x_lo, x_hi)
    ax.set_ylim(y_lo, y_hi)
    fastest = max(r.value for r in roofs)
    (line,) = ax.plot([issue / fastest, x_hi], [issue, issue], color="#b22222", linewidth=2.0, zorder=2)
    line.set_gid("instruction-ceiling:issue")
    ax.text(x_hi / 1.15, issue * 1.08, f"issue {issue / 1e9:,.0f} warp GIPS", ha="right", va="bottom",
            fontsize=7.5, color="#b22222", bbox=TEXT_BOX)
    for r in sorted(roofs, key=lambda c: c.value):
        end = min(x_hi, issue / r.value)
        (line,) = ax.plot([x_lo, end], [r.value * x_lo, r.value * end], color=MEMORY_COLORS.get(r.name, "0.2"),
                          linewidth=1.6 if r.name == "dram" else 1.2, zorder=2)
        line.set_gid(f"instruction-ceiling:{r.name}")
        x_text = max(x_lo * 1.5, end / 30)
        p0 = ax.transData.transform((x_text, r.value * x_text))
        p1 = ax.transData.transform((x_text * 10, r.value * x_text * 10))
        angle = math.degrees(math.atan2(p1[1] - p0[1], p1[0] - p0[0]))
        ax.text(x_text, r.value * x_text * 1.25, f"{LEVEL_LABELS.get(r.name, r.name)} {r.value / 1e9:,.0f} G txn/s",
                rotation=angle, rotation_mode="anchor", fontsize=7.5, color=line.get_color(), ha="left",
                va="bottom", bbox=TEXT_BOX)
    for name in dict.fromkeys(p.kernel for p in ir.points):
        color = colors.get(name, "0.4")
        pts = sorted((p for p in ir.points if p.kernel == name), key=lambda p: p.instructions_per_transaction)
        (line,) = ax.plot([p.instructions_per_transaction for p in pts], [p.instructions_per_second for p in pts],
                          color=color, linewidth=0.9, alpha=0.7, linestyle=":", zorder=3)
        line.set_gid(f"instruction-kernel:{name}")
        for p in pts:
            ax.plot([p.instructions_per_transaction], [p.instructions_per_second], marker=LEVEL_MARKERS[p.level],
                    markersize=6, linestyle="none", markerfacecolor="none", markeredgecolor=color, zorder=4)
        anchor = next((p for p in pts if p.level == "dram"), pts[0])
        ax.annotate(str(numbers.get(name, "?")), (anchor.instructions_per_transaction, anchor.instructions_per_second),
                    xytext=(4, 4), textcoords="offset points", fontsize=7.5, color=darker(color), zorder=5)
    ax.yaxis.set_major_formatter(EngFormatter(unit="inst/s"))
    ax.set_xlabel("Instruction intensity (warp instructions per 32-byte transaction)")
    ax.set_ylabel("Warp instructions per second")
    ax.set_title("Instruction roofline (Ding & Williams), measured", fontsize=10)
    ax.grid(True, which="major", linewidth=0.4, alpha=0.5)


def _shorten(name: str, width: int = 44) -> str:
    """A kernel name cut to ``width`` characters, keeping a trailing ``[range]`` or ``#n``."""
    if len(name) <= width:
        return name
    tail = ""
    for mark in (" [", " #"):
        if mark in name:
            tail = name[name.index(mark):]
            break
    head = name[: max(8, width - len(tail) - 1)]
    return f"{head}\u2026{tail}"[: width + len(tail)]


def kernel_order(chart: RooflineChart) -> list[str]:
    """Kernels in the order they first appear (roofline points, then bandwidth points)."""
    return list(dict.fromkeys([p.kernel for p in chart.points] + [b.kernel for b in chart.bandwidth_points]))


def bandwidth_panel(ax: Axes, chart: RooflineChart, names: list[str], colors: dict[str, Color]) -> None:
    """Every kernel's bandwidth at each level against the memory roofs: kernels without
    flops, which the roofline cannot show, appear here too."""
    from matplotlib.ticker import EngFormatter

    with_flops = {p.kernel for p in chart.points}
    rows = {name: len(names) - 1 - i for i, name in enumerate(names)}
    values = [b.bytes_per_second for b in chart.bandwidth_points]
    roofs = [c for c in chart.ceilings if c.kind == "memory"]
    lo = decade_floor(min(values + [r.value for r in roofs]) / 2)
    hi = decade_ceil(max(values + [r.value for r in roofs]) * 1.5)
    ax.set_xscale("log")  # before the lines, which would autoscale a linear axis to one point
    ax.set_xlim(lo, hi)
    for roof in roofs:
        line = ax.axvline(roof.value, color=MEMORY_COLORS.get(roof.name, "0.2"),
                          linestyle="--" if roof.origin == "measured" else "-",
                          linewidth=1.6 if roof.name == "dram" else 1.1, zorder=1)
        line.set_gid(f"bandwidth-roof:{roof.name}:{roof.origin}")
    for name in names:
        y = rows[name]
        ax.axhline(y, color="0.9", linewidth=0.6, zorder=0)
        own = [b for b in chart.bandwidth_points if b.kernel == name]
        # one origin sits on the kernel's row; several are spread about it, told apart by fill
        spread = len({b.origin for b in own}) > 1
        for b in own:
            offset = ORIGIN_STYLES[b.origin].row_offset if spread else 0.0
            (mark,) = ax.plot([b.bytes_per_second], [y + offset], marker=LEVEL_MARKERS[b.level], markersize=6,
                              linestyle="none", color=colors[name], **marker_fill(b.origin, colors[name]), zorder=3)
            mark.set_gid(f"bandwidth:{name}:{b.level}:{b.origin}")
    decades = math.log10(hi / lo)
    if decades > 4:
        from matplotlib.ticker import LogLocator

        # One labelled tick every few decades: a label per decade would run together.
        ax.xaxis.set_major_locator(LogLocator(base=10 ** math.ceil(decades / 4)))
    ax.set_ylim(-0.8, len(names) - 0.2)
    ax.set_yticks([rows[n] for n in names])
    ax.set_yticklabels([f"{i + 1}. {_shorten(n)}" + ("" if n in with_flops else "  (no flops)")
                        for i, n in enumerate(names)], fontsize=7.5)
    for tick, name in zip(ax.get_yticklabels(), names):
        tick.set_color(darker(colors[name]))
    ax.yaxis.tick_right()
    ax.xaxis.set_major_formatter(EngFormatter(unit="B/s"))
    ax.set_xlabel("bandwidth (B/s; vertical lines: memory roofs)")
    ax.set_title("Every kernel's bandwidth", fontsize=10)
    ax.grid(True, axis="x", which="major", linewidth=0.4, alpha=0.5)


def darker(color: Color, factor: float = 0.7) -> tuple[float, float, float]:
    """The colour darkened, for text that must read on white."""
    from matplotlib.colors import to_rgb

    return tuple(channel * factor for channel in to_rgb(color))  # type: ignore[return-value]
