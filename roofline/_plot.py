"""Draw a roofline chart with matplotlib (imported here only, when a plot is asked for)."""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

import numpy as np

from occupancy.common import FIGURE_FORMATS, check_figure_path, figure_class, integer, save_figure

from ._chart import LEVEL_LABELS, Ceiling, RooflineChart, format_bandwidth, roofline_chart
from ._errors import RooflineError
from ._gpu import GPU
from ._instruction_roofline import InstructionRoofline
from ._kernel import Kernel, KernelLike
from ._plot_panels import (
    LEVEL_MARKERS,
    MEMORY_COLORS,
    ORIGIN_STYLES,
    TEXT_BOX,
    Color,
    bandwidth_panel,
    darker,
    instruction_panel,
    kernel_order,
    marker_fill,
)
from ._plot_axes import PLOT_RANGE, chart_figures, decade_ceil, decade_floor, instruction_figures, plottable
from ._precision import PRECISION_LABELS
from ._predict.terms.latency import soft_minimum

if TYPE_CHECKING:  # matplotlib is imported only when a plot is drawn
    from matplotlib.artist import Artist
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D

__all__ = ["PLOT_FORMATS", "plot_roofline"]

#: File suffixes `plot_roofline` can write (every figure gpuroof writes takes these).
PLOT_FORMATS: tuple[str, ...] = FIGURE_FORMATS
# An 11 x 6.5 inch figure at 1200 dpi is already 100 megapixels; more runs out of memory.
MAX_DPI = 1200
MAX_KNEE_SHARPNESS = 64

# Kernel markers, points; a marker that a later one would cover grows until this many pixels
# of it show around that one.
_MARKER_SIZE, _VISIBLE_RING = 6.0, 2.5
# White pad around a kernel number, in font sizes.
_LABEL_PAD = 0.3
# Compute ceilings other than the chart's own precision (red), told apart in the legend.
_CEILING_COLORS = ("0.3", "#b35806", "#4d9221", "#762a83", "#8c510a", "0.55")


def _import_pyplot() -> ModuleType:
    try:
        import matplotlib

        if matplotlib.get_backend().lower() not in {"agg", "pdf", "svg", "cairo"}:
            # Headless by default: a library must not open windows. Users who want one
            # can pass their own `ax`.
            import matplotlib.pyplot as plt  # noqa: F401
        Figure = figure_class()
    except ImportError as exc:  # pragma: no cover - matplotlib is a dependency
        raise ImportError("plot_roofline needs matplotlib: pip install matplotlib") from exc
    return Figure


def _group_compute(ceilings):
    """Merge compute ceilings of equal value into one line ("FP16 / BF16 tensor")."""
    groups: list[list] = []
    for c in ceilings:
        for group in groups:
            if abs(group[0].value - c.value) <= 1e-9 * c.value:
                group.append(c)
                break
        else:
            groups.append([c])
    return groups


def _group_label(group) -> str:
    names = [PRECISION_LABELS.get(c.name, c.name) for c in group]
    if all(n.endswith(" tensor") for n in names) and len(names) > 1:
        names = [n.removesuffix(" tensor") for n in names[:-1]] + [names[-1]]
    unit = "TOP/s" if all(c.name == "int8_tensor" for c in group) else "TFLOP/s"
    suffix = " (measured)" if group[0].origin == "measured" else ""
    return f"{' / '.join(names)}: {group[0].value / 1e12:.4g} {unit}{suffix}"


def plot_roofline(
    chart_or_gpu: RooflineChart | GPU | str,
    kernels: Iterable[Kernel | KernelLike] = (),
    *,
    path: str | Path | None = None,
    ax: Axes | None = None,
    dpi: int = 150,
    knee_sharpness: float | None = None,
    instructions: InstructionRoofline | None = None,
    **chart_options: object,
) -> Figure:
    """Draw a log-log roofline: every ceiling, ridge points and labelled kernel points.

    Compute ceilings are horizontal lines (equal peaks share one line), memory roofs are
    diagonal lines of slope 1 (y = bandwidth x intensity) up to the highest compute
    ceiling. Measured ceilings are dashed, next to the theoretical ones. Each kernel's
    points at DRAM, L2 and L1 (circle, square, triangle) are joined by a line: the roofline
    bound filled on a solid line, the time model's time half-filled on a dashed one, measured
    points hollow on a dotted one. The ridge points of the chart's precision are marked with an x.
    Each drawn line carries a ``gid`` ("ceiling:<name>:<origin>", "kernel:<name>:<origin>")
    so tests and tools can find it.

    Parameters
    ----------
    chart_or_gpu
        A `RooflineChart` (for example from `load_chart`), or a GPU/name, in which case
        the chart is built with `roofline_chart(gpu, kernels, **chart_options)`.
    kernels
        Kernel models or counts (only with a GPU).
    path
        Optional output file; ``.png``, ``.svg`` or ``.pdf``.
    ax
        Optional matplotlib Axes to draw into; a new Figure is made otherwise.
    dpi
        Resolution of PNG output, 10 to 1200.
    knee_sharpness
        When given, also draw the soft knee of each theoretical DRAM roof with the chart's
        compute ceiling: ``(1 / (I x B)**p + 1 / P**p) ** (-1/p)`` (dotted), the smooth
        corner real kernels follow near the ridge (`roofline.terms.achieved_bandwidth`'s soft
        minimum; ``roofline.calibration(gpu).knee_sharpness`` is a measured ``p``).
    instructions
        An `InstructionRoofline` (`instruction_roofline` of a profile report): drawn in a
        panel beside the FLOP roofline, warp instructions/s against warp instructions per
        32-byte transaction at each level, under the issue ceiling and each level's
        transaction roof (Ding & Williams). Needs a new figure (no ``ax``).

    Returns
    -------
    matplotlib.figure.Figure
        A Figure that a Jupyter notebook displays inline as its image (``_repr_png_``); the
        one given with ``ax`` when ``ax`` is passed.

    Raises
    ------
    RooflineError
        Unsupported file suffix, a dpi or knee out of range, bad chart options, or a figure
        to place (ceiling, ridge point, kernel point) outside ``PLOT_RANGE``, 1e-100 to 1e100.
    TypeError
        Arguments of the wrong type.
    """

    _check_options(path, dpi, knee_sharpness, ax)
    if isinstance(chart_or_gpu, RooflineChart):
        if chart_options or kernels:
            raise RooflineError("kernels and chart options apply only when a GPU is given")
        chart = chart_or_gpu
    else:
        chart = roofline_chart(chart_or_gpu, kernels, **chart_options)
    Figure = _import_pyplot()
    names = kernel_order(chart)
    if instructions is not None:
        if not isinstance(instructions, InstructionRoofline):
            raise TypeError(f"instructions must be a roofline.instructions.InstructionRoofline, not {type(instructions).__name__}")
        if ax is not None:
            raise RooflineError("instructions= draws a panel of its own: leave ax out")
        names += [n for n in dict.fromkeys(p.kernel for p in instructions.points) if n not in names]
    panels = _panels(Figure, ax, bool(chart.bandwidth_points), instructions is not None)
    roofs = _roofs(chart)
    plottable(chart_figures(chart, roofs.primary))
    if instructions is not None:
        plottable(instruction_figures(instructions))
    box = _limits(panels.ax, chart, roofs)
    legend = _draw_compute(panels.ax, chart, roofs, box) + _draw_memory(panels.ax, roofs, box) + _draw_ridges(panels.ax, roofs)
    if knee_sharpness is not None:
        legend += _draw_knee(panels.ax, roofs, box, knee_sharpness)
    colors = dict(zip(names, _colormap(len(names))))
    numbers = {name: i + 1 for i, name in enumerate(names)}
    marks, anchors = _draw_kernels(panels.ax, chart, names, colors)
    _finish_axes(panels, chart, legend + _kernel_legend(chart))
    if panels.side is not None:
        bandwidth_panel(panels.side, chart, names, colors)
    if panels.instructions is not None and instructions is not None:
        instruction_panel(panels.instructions, instructions, numbers, colors)
    panels.figure.draw_without_rendering()  # the layout fixes where each point lands in pixels
    _unhide_markers(panels.ax, marks)
    _place_numbers(panels.figure, panels.ax, anchors, numbers, colors, marks)
    if path is not None:
        save_figure(panels.figure, path, RooflineError, dpi=dpi)
    return panels.figure


def _check_options(path: str | Path | None, dpi: int, knee_sharpness: float | None, ax: Axes | None) -> None:
    """`plot_roofline`'s drawing options checked (RooflineError or TypeError naming the option)."""
    if path is not None:
        check_figure_path(path, RooflineError)
    if not 10 <= integer("dpi", dpi) <= MAX_DPI:
        raise RooflineError(f"dpi={dpi} must be from 10 to {MAX_DPI}")
    if knee_sharpness is not None:
        if isinstance(knee_sharpness, bool) or not isinstance(knee_sharpness, numbers.Real):
            raise TypeError(f"knee_sharpness must be a number, not {type(knee_sharpness).__name__}")
        # Past 64 the soft knee is the hard corner to the pixel; larger exponents only overflow.
        if not 0 < knee_sharpness <= MAX_KNEE_SHARPNESS:
            raise RooflineError(f"knee_sharpness={knee_sharpness!r} must be > 0 and at most {MAX_KNEE_SHARPNESS}")
    if ax is not None and not hasattr(ax, "figure"):
        raise TypeError(f"ax must be a matplotlib Axes, not {type(ax).__name__}")


@dataclass(frozen=True)
class _Panels:
    """The figure and its axes: the roofline, the bandwidth panel and the instruction panel
    (None where not drawn); `own_figure` when the figure was made here, not given by ``ax``."""

    figure: Figure
    ax: Axes
    side: Axes | None
    instructions: Axes | None
    own_figure: bool


def _panels(figure_type: type, ax: Axes | None, bandwidth: bool, instructions: bool) -> _Panels:
    """The given `ax` alone, or a new figure with the roofline, the instruction panel (with
    `instructions`) and the bandwidth panel (with `bandwidth` points), side by side."""
    if ax is not None:
        return _Panels(ax.figure, ax, None, None, own_figure=False)
    widths = (2.3, *((1.7,) if instructions else ()), *((1,) if bandwidth else ()))
    size = {1: (11, 7.5), 2: (15, 8.5)}.get(len(widths), (21, 8.5))
    fig = figure_type(figsize=size, layout="constrained")
    grid = fig.add_gridspec(1, len(widths), width_ratios=widths)
    ax = fig.add_subplot(grid[0])
    inst_ax = fig.add_subplot(grid[1]) if instructions else None
    side = fig.add_subplot(grid[len(widths) - 1]) if bandwidth else None
    return _Panels(fig, ax, side, inst_ax, own_figure=True)


@dataclass(frozen=True)
class _Roofs:
    """The chart's ceilings to draw: compute and memory, the highest compute ceiling and the
    fastest memory roof (FLOP/s, bytes/s), and `primary`, the chart's precision's ceiling."""

    compute: list[Ceiling]
    memory: list[Ceiling]
    top: float
    fastest: float
    primary: Ceiling


def _roofs(chart: RooflineChart) -> _Roofs:
    """The chart's ceilings, split by kind; a chart without a compute or a memory one is refused."""
    compute = [c for c in chart.ceilings if c.kind == "compute"]
    memory = [c for c in chart.ceilings if c.kind == "memory"]
    if not compute or not memory:
        raise RooflineError("a roofline chart needs at least one compute and one memory ceiling")
    primary = next(
        (c for c in compute if c.name == chart.precision and c.origin == "theoretical"), compute[0]
    )
    return _Roofs(compute, memory, top=max(c.value for c in compute), fastest=max(c.value for c in memory),
                  primary=primary)


@dataclass(frozen=True)
class _Box:
    """The axes' limits: arithmetic intensity (FLOP/byte) and performance (FLOP/s)."""

    x_lo: float
    x_hi: float
    y_lo: float
    y_hi: float


def _limits(ax: Axes, chart: RooflineChart, roofs: _Roofs) -> _Box:
    """Log axes over decades that always enclose every point, ridge point and ceiling."""
    xs = [p.arithmetic_intensity for p in chart.points]
    xs += [roofs.primary.value / m.value for m in roofs.memory] + [c.value / roofs.fastest for c in roofs.compute]
    ys = [p.flops_per_second for p in chart.points] + [c.value for c in roofs.compute]
    x_lo, x_hi = decade_floor(min(xs) / 2), decade_ceil(max(xs) * 2)
    y_hi = min(roofs.top * 3, PLOT_RANGE[1])
    slowest = min(m.value for m in roofs.memory)
    y_lo = decade_floor(min(min(ys), slowest * x_lo * 4) / 2)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(x_lo, x_hi)
    ax.set_ylim(y_lo, y_hi)
    return _Box(x_lo, x_hi, y_lo, y_hi)


def _draw_compute(ax: Axes, chart: RooflineChart, roofs: _Roofs, box: _Box) -> list[Artist]:
    """Compute ceilings: horizontal, from where they meet the fastest memory roof; equal
    peaks share one line, the chart's precision's is red and thick. Returns their lines."""
    theoretical = [c for c in roofs.compute if c.origin == "theoretical"]
    measured = [c for c in roofs.compute if c.origin == "measured"]
    groups = _group_compute(sorted(theoretical, key=lambda c: -c.value))
    groups += _group_compute(sorted(measured, key=lambda c: -c.value))
    others = iter(_CEILING_COLORS)
    lines: list[Artist] = []
    for group in groups:
        c = group[0]
        start = max(box.x_lo, c.value / roofs.fastest)
        is_primary = any(g.name == chart.precision for g in group)
        (line,) = ax.plot(
            [start, box.x_hi], [c.value, c.value],
            color="#b22222" if is_primary else next(others, "0.35"),
            linewidth=2.2 if is_primary else 1.1,
            linestyle="--" if c.origin == "measured" else "-",
            zorder=2, label=_group_label(group),
        )
        line.set_gid(f"ceiling:{'+'.join(g.name for g in group)}:{c.origin}")
        lines.append(line)
        ax.text(box.x_hi / 1.15, c.value * 1.06, _group_label(group), ha="right", va="bottom",
                fontsize=7.5, color=line.get_color(), zorder=5, bbox=TEXT_BOX)
    return lines


def _draw_memory(ax: Axes, roofs: _Roofs, box: _Box) -> list[Artist]:
    """Memory roofs: y = bandwidth x intensity, from the left edge up to the top ceiling, each
    labelled along its line. Returns their lines."""
    lines: list[Artist] = []
    for m in sorted(roofs.memory, key=lambda c: (c.origin, c.value)):
        end = min(box.x_hi, roofs.top / m.value)
        label = f"{LEVEL_LABELS.get(m.name, m.name)} {format_bandwidth(m.value)}"
        if m.origin == "measured":
            label += " (measured)"
        (line,) = ax.plot(
            [box.x_lo, end], [m.value * box.x_lo, m.value * end],
            color=MEMORY_COLORS.get(m.name, "0.2"),
            linewidth=2.0 if m.name == "dram" else 1.4,
            linestyle="--" if m.origin == "measured" else "-",
            zorder=2, label=label,
        )
        line.set_gid(f"ceiling:{m.name}:{m.origin}")
        lines.append(line)
        # Label along the roof, a little before it ends, rotated to its on-screen slope.
        x_text = max(box.x_lo * 1.5, end / 30)
        y_text = m.value * x_text
        if y_text < box.y_lo * 3:
            x_text = box.y_lo * 3 / m.value
            y_text = box.y_lo * 3
        p0 = ax.transData.transform((x_text, y_text))
        p1 = ax.transData.transform((x_text * 10, y_text * 10))
        angle = math.degrees(math.atan2(p1[1] - p0[1], p1[0] - p0[0]))
        ax.text(x_text, y_text * 1.25, label, rotation=angle, rotation_mode="anchor",
                fontsize=7.5, color=line.get_color(), ha="left", va="bottom", zorder=5,
                bbox=TEXT_BOX)
    return lines


def _draw_ridges(ax: Axes, roofs: _Roofs) -> list[Artist]:
    """Ridge points of the chart's precision against every theoretical memory roof (x marks);
    returns their one legend entry, or none."""
    from matplotlib.lines import Line2D

    primary = roofs.primary
    ridges = []
    for m in roofs.memory:
        if m.origin != "theoretical":
            continue
        ridge = primary.value / m.value
        ax.plot([ridge], [primary.value], marker="x", markersize=8, color="black",
                linestyle="none", zorder=4, gid=f"ridge:{m.name}")
        ridges.append(f"{LEVEL_LABELS.get(m.name, m.name)} {ridge:.3g}")
    if not ridges:
        return []
    return [Line2D([], [], color="black", marker="x", linestyle="none",
                   label=f"ridge points ({PRECISION_LABELS.get(primary.name, primary.name)}, flop/B): "
                         + ", ".join(ridges))]


def _draw_knee(ax: Axes, roofs: _Roofs, box: _Box, knee_sharpness: float) -> list[Artist]:
    """The soft knee of each theoretical DRAM roof with the chart's compute ceiling (dotted)."""
    grid_x = np.logspace(math.log10(box.x_lo), math.log10(box.x_hi), 400)
    lines: list[Artist] = []
    for m in roofs.memory:
        if m.origin != "theoretical" or m.name != "dram":
            continue
        soft = soft_minimum(grid_x * m.value, roofs.primary.value, knee_sharpness)
        (knee,) = ax.plot(grid_x, soft, color="black", linestyle=":", linewidth=1.0,
                          zorder=2, gid=f"knee:{m.name}", label=f"soft DRAM knee (p = {knee_sharpness:g})")
        lines.append(knee)
    return lines


def _draw_kernels(ax: Axes, chart: RooflineChart, names: list[str], colors: dict[str, Color]
                  ) -> tuple[list[Line2D], list[tuple[str, float, float]]]:
    """Kernel points: one colour per kernel, joined across levels; each origin in its style
    (`ORIGIN_STYLES`: roofline bound filled and solid, time model half-filled and dashed,
    measured hollow and dotted). Returns the markers in drawing order and each kernel's anchor
    for its number: its DRAM point of the last origin drawn (measured, else the time model's,
    else the bound), the one a reader compares with the others."""
    anchors: list[tuple[str, float, float]] = []
    marks: list[Line2D] = []
    for name in names:
        color = colors[name]
        anchor = None
        for origin, style in ORIGIN_STYLES.items():
            pts = sorted(
                (p for p in chart.points if p.kernel == name and p.origin == origin),
                key=lambda p: p.arithmetic_intensity,
            )
            if not pts:
                continue
            (line,) = ax.plot([p.arithmetic_intensity for p in pts],
                              [p.flops_per_second for p in pts],
                              color=color, linewidth=0.9, alpha=0.7, linestyle=style.linestyle, zorder=3)
            line.set_gid(f"kernel:{name}:{origin}")
            for p in pts:
                (mark,) = ax.plot([p.arithmetic_intensity], [p.flops_per_second],
                                  marker=LEVEL_MARKERS[p.level], markersize=_MARKER_SIZE, linestyle="none",
                                  **marker_fill(origin, color), markeredgecolor=color, zorder=4)
                mark.set_gid(f"marker:{name}:{p.level}:{origin}")
                marks.append(mark)
            anchor = next((p for p in pts if p.level == "dram"), pts[0])
        if anchor is not None:
            anchors.append((name, anchor.arithmetic_intensity, anchor.flops_per_second))
    return marks, anchors


def _kernel_legend(chart: RooflineChart) -> list[Artist]:
    """Legend entries for the kernel points: one marker per level drawn, and the style of
    each origin in use (roofline bound, time model, measured)."""
    from matplotlib.lines import Line2D

    levels = sorted({p.level for p in chart.points} | {b.level for b in chart.bandwidth_points},
                    key=list(LEVEL_MARKERS).index)
    legend: list[Artist] = [Line2D([], [], color="0.3", marker=LEVEL_MARKERS[lvl], linestyle="none",
                                   label=f"kernel at {LEVEL_LABELS[lvl]}") for lvl in levels]
    origins = {p.origin for p in chart.points} | {b.origin for b in chart.bandwidth_points}
    for origin, style in ORIGIN_STYLES.items():
        if origin in origins:
            legend.append(Line2D([], [], color="0.3", marker="o", linestyle=style.linestyle, linewidth=0.9,
                                 **marker_fill(origin, "0.3"), label=style.legend))
    return legend


def _finish_axes(panels: _Panels, chart: RooflineChart, legend: list[Artist]) -> None:
    """Axis labels, title, grid and the legend: below the panels on a figure of its own
    (where it hides no point), inside the given Axes otherwise."""
    from matplotlib.ticker import EngFormatter

    ax = panels.ax
    ax.set_xlabel("arithmetic intensity (FLOP/byte)")
    ax.set_ylabel("performance (FLOP/s)")
    ax.yaxis.set_major_formatter(EngFormatter(unit="FLOP/s"))
    ax.set_title(chart.title or f"Roofline: {chart.gpu}", fontsize=11)
    ax.grid(True, which="major", linewidth=0.4, alpha=0.5)
    ax.grid(True, which="minor", linewidth=0.2, alpha=0.3)
    if panels.own_figure:
        panels.figure.legend(handles=legend, loc="outside lower center", ncol=min(4, len(legend)), fontsize=7.5,
                             frameon=False)
    else:
        ax.legend(handles=legend, loc="best", fontsize=7, framealpha=0.9)


def _marker_discs(ax: Axes, marks: list[Line2D]) -> list[tuple[str, np.ndarray, float]]:
    """Each kernel marker as (kernel, centre in pixels, radius in pixels), in drawing order."""
    scale = ax.figure.dpi / 72.0
    return [(mark.get_gid().split(":")[1], np.asarray(ax.transData.transform((mark.get_xdata()[0], mark.get_ydata()[0]))),
             mark.get_markersize() * scale / 2) for mark in marks]


def _unhide_markers(ax: Axes, marks: list[Line2D]) -> None:
    """Grow each marker that a later-drawn one would (nearly) cover, so every point stays in sight.

    Two kernels at the same point (vector_add and offset_read) would show as one marker;
    the one drawn first grows until a ring of it shows around the later one
    (`_VISIBLE_RING` pixels). A kernel's own markers (its DRAM and L2 points) may coincide.
    Positions stay exact; markers that only touch keep their size.
    """
    discs = _marker_discs(ax, marks)
    scale = ax.figure.dpi / 72.0
    radii = [r for _, _, r in discs]
    for j in range(len(marks) - 2, -1, -1):  # the later markers first: their sizes are final
        owner, centre = discs[j][0], discs[j][1]
        for k in range(j + 1, len(marks)):
            if discs[k][0] == owner:  # a kernel's own levels at one point: the same colour either way
                continue
            d = float(np.hypot(*(discs[k][1] - centre)))
            if d + radii[j] < radii[k] + _VISIBLE_RING:
                radii[j] = d + radii[k] + _VISIBLE_RING
        marks[j].set_markersize(2 * radii[j] / scale)


def _place_numbers(fig: Figure, ax: Axes, anchors: list[tuple[str, float, float]], numbers: dict[str, int],
                   colors: dict[str, Color], marks: list[Line2D]) -> None:
    """Number each kernel's anchor point: no label on another label or on any kernel's marker.

    Kernels whose anchors fall within a few pixels of each other share one label ("3,4").
    Each label takes the first position, on rings of growing radius around its point, whose
    box (measured, with its white pad) overlaps no label placed before it, no marker and no
    edge of the axes. Next to its point, the marker nearest a label must be its own kernel's
    (else it reads as the neighbour's); a label that had to move further gets a thin leader
    line to its point.
    """
    to_pixels = ax.transData.transform
    scale = fig.dpi / 72.0
    groups: list[tuple[list[str], np.ndarray]] = []
    for name, x, y in anchors:
        where = np.asarray(to_pixels((x, y)))
        for members, at in groups:
            if np.all(np.abs(at - where) < 4):
                if name not in members:
                    members.append(name)
                break
        else:
            groups.append(([name], where))
    discs = _marker_discs(ax, marks)
    frame = ax.get_window_extent()
    taken: list[tuple[float, float, float, float]] = []
    angles = np.radians([30, -30, 150, -150, 0, 180, 90, -90, 60, -60, 120, -120])

    def free(box: tuple[float, float, float, float]) -> bool:
        x0, y0, x1, y1 = box
        if x0 < frame.x0 or x1 > frame.x1 or y0 < frame.y0 or y1 > frame.y1:
            return False
        if any(x0 < b[2] and b[0] < x1 and y0 < b[3] and b[1] < y1 for b in taken):
            return False
        for _, centre, radius in discs:  # the nearest point of the box to the disc's centre
            dx = max(x0 - centre[0], 0.0, centre[0] - x1)
            dy = max(y0 - centre[1], 0.0, centre[1] - y1)
            if dx * dx + dy * dy < (radius + 1.5) ** 2:
                return False
        return True

    def nearest(centre: tuple[float, float]) -> str:
        """The kernel whose marker's edge is nearest `centre`."""
        return min(discs, key=lambda d: math.hypot(d[1][0] - centre[0], d[1][1] - centre[1]) - d[2])[0]

    for members, at in sorted(groups, key=lambda g: (g[1][0], g[1][1])):
        text = ",".join(str(numbers[m]) for m in sorted(members, key=numbers.get))
        probe = ax.text(0, 0, text, fontsize=7.5, fontweight="bold")  # measured, then drawn where it fits
        extent = probe.get_window_extent()
        probe.remove()
        pad = _LABEL_PAD * 7.5 * scale
        half_w, half_h = extent.width / 2 + pad, extent.height / 2 + pad
        own = max((r for name, c, r in discs if name in members and np.hypot(*(c - at)) < 1), default=0.0)
        first = own + max(half_w, half_h) + 1.5
        placed = None
        for step in range(12):
            radius = first + step * 4 * scale
            for angle in angles:
                cx, cy = at[0] + radius * math.cos(angle), at[1] + radius * math.sin(angle)
                box = (cx - half_w, cy - half_h, cx + half_w, cy + half_h)
                if free(box) and (step > 1 or nearest((cx, cy)) in members):
                    placed = (cx, cy, box, step)
                    break
            if placed:
                break
        if placed is None:  # nowhere free: beside the point, on top
            cx, cy = at[0] + first, at[1]
            placed = (cx, cy, (cx - half_w, cy - half_h, cx + half_w, cy + half_h), 0)
        cx, cy, box, step = placed
        taken.append(box)
        color = darker(colors[members[0]])
        # Far from its point, a leader line says whose label it is.
        leader = {"arrowstyle": "-", "color": color, "lw": 0.6, "shrinkA": 0, "shrinkB": own / scale + 1} \
            if step > 1 else None
        label = ax.annotate(text, tuple(ax.transData.inverted().transform(at)),
                            xytext=((cx - at[0]) / scale, (cy - at[1]) / scale), textcoords="offset points",
                            ha="center", va="center", fontsize=7.5, color=color, fontweight="bold", zorder=6,
                            arrowprops=leader,
                            bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.85, "pad": _LABEL_PAD})
        label.set_gid(f"number:{text}")


def _colormap(n: int) -> list:
    from matplotlib import colormaps

    cmap = colormaps["tab20" if n > 10 else "tab10"]
    return [cmap(i % cmap.N) for i in range(n)]
