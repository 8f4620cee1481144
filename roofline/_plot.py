"""Draw a roofline chart with matplotlib (imported here only, when a plot is asked for)."""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from ._chart import LEVEL_LABELS, RooflineChart, format_bandwidth, roofline_chart
from ._errors import RooflineError
from ._precision import PRECISION_LABELS

__all__ = ["PLOT_FORMATS", "plot_roofline"]

#: File suffixes `plot_roofline` can write.
PLOT_FORMATS: tuple[str, ...] = (".png", ".svg", ".pdf")
# An 11 x 6.5 inch figure at 1200 dpi is already 100 megapixels; more runs out of memory.
MAX_DPI = 1200
MAX_KNEE_SHARPNESS = 64

_LEVEL_MARKERS = {"dram": "o", "l2": "s", "l1": "^"}
_TEXT_BOX = {"facecolor": "white", "edgecolor": "none", "alpha": 0.75, "pad": 0.6}
_MEMORY_COLORS = {"dram": "#1f4e9c", "l2": "#2a9d8f", "l1": "#8a5a9e"}


def _import_pyplot() -> Any:
    try:
        import matplotlib

        if matplotlib.get_backend().lower() not in {"agg", "pdf", "svg", "cairo"}:
            # Headless by default: a library must not open windows. Users who want one
            # can pass their own `ax`.
            import matplotlib.pyplot as plt  # noqa: F401
        from matplotlib.figure import Figure
    except ImportError as exc:  # pragma: no cover - matplotlib is a dependency
        raise ImportError("plot_roofline needs matplotlib: pip install matplotlib") from exc
    return Figure


def _decade_floor(x: float) -> float:
    return 10 ** math.floor(math.log10(x))


def _decade_ceil(x: float) -> float:
    return 10 ** math.ceil(math.log10(x))


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
    chart_or_gpu: RooflineChart | Any,
    kernels: Iterable[Any] = (),
    *,
    path: str | Path | None = None,
    ax: Any = None,
    dpi: int = 150,
    knee_sharpness: float | None = None,
    **chart_options: Any,
) -> Any:
    """Draw a log-log roofline: every ceiling, ridge points and labelled kernel points.

    Compute ceilings are horizontal lines (equal peaks share one line), memory roofs are
    diagonal lines of slope 1 (y = bandwidth x intensity) up to the highest compute
    ceiling. Measured ceilings are dashed, next to the theoretical ones. Each kernel's
    points at DRAM, L2 and L1 (circle, square, triangle) are joined by a line; measured
    points are hollow. The ridge points of the chart's precision are marked with an x.
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
        corner real kernels follow near the ridge (`roofline.achieved_bandwidth`'s soft
        minimum; ``roofline.calibration(gpu).knee_sharpness`` is a measured ``p``).

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    RooflineError
        Unsupported file suffix, a dpi or knee out of range, or bad chart options.
    TypeError
        Arguments of the wrong type.
    """
    from occupancy._files import as_path, atomic_path

    if path is not None and as_path(path, RooflineError).suffix.lower() not in PLOT_FORMATS:
        raise RooflineError(
            f"path={str(path)!r} has an unsupported suffix; use one of {', '.join(PLOT_FORMATS)}"
        )
    if isinstance(dpi, bool) or not isinstance(dpi, numbers.Integral):
        raise TypeError(f"dpi must be an int, not {type(dpi).__name__}")
    if not 10 <= dpi <= MAX_DPI:
        raise RooflineError(f"dpi={dpi} must be from 10 to {MAX_DPI}")
    if knee_sharpness is not None:
        if isinstance(knee_sharpness, bool) or not isinstance(knee_sharpness, numbers.Real):
            raise TypeError(f"knee_sharpness must be a number, not {type(knee_sharpness).__name__}")
        # Past 64 the soft knee is the hard corner to the pixel; larger exponents only overflow.
        if not 0 < knee_sharpness <= MAX_KNEE_SHARPNESS:
            raise RooflineError(f"knee_sharpness={knee_sharpness!r} must be > 0 and at most {MAX_KNEE_SHARPNESS}")
    if ax is not None and not hasattr(ax, "figure"):
        raise TypeError(f"ax must be a matplotlib Axes, not {type(ax).__name__}")
    if isinstance(chart_or_gpu, RooflineChart):
        if chart_options or kernels:
            raise RooflineError("kernels and chart options apply only when a GPU is given")
        chart = chart_or_gpu
    else:
        chart = roofline_chart(chart_or_gpu, kernels, **chart_options)

    Figure = _import_pyplot()
    from matplotlib.ticker import EngFormatter

    if ax is None:
        fig = Figure(figsize=(11, 6.5), layout="constrained")
        ax = fig.add_subplot()
    else:
        fig = ax.figure

    compute = [c for c in chart.ceilings if c.kind == "compute"]
    memory = [c for c in chart.ceilings if c.kind == "memory"]
    if not compute or not memory:
        raise RooflineError("a roofline chart needs at least one compute and one memory ceiling")
    top = max(c.value for c in compute)
    primary = next(
        (c for c in compute if c.name == chart.precision and c.origin == "theoretical"), compute[0]
    )
    fastest = max(c.value for c in memory)

    # Axis limits: decades that always enclose every point, ridge point and ceiling.
    xs = [p.arithmetic_intensity for p in chart.points]
    xs += [primary.value / m.value for m in memory] + [c.value / fastest for c in compute]
    ys = [p.flops_per_second for p in chart.points] + [c.value for c in compute]
    x_lo, x_hi = _decade_floor(min(xs) / 2), _decade_ceil(max(xs) * 2)
    y_hi = _decade_ceil(top * 1.5)
    slowest = min(m.value for m in memory)
    y_lo = _decade_floor(min(min(ys), slowest * x_lo * 4) / 2)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(x_lo, x_hi)
    ax.set_ylim(y_lo, y_hi)

    # Compute ceilings: horizontal, from where they meet the fastest memory roof.
    theoretical = [c for c in compute if c.origin == "theoretical"]
    measured = [c for c in compute if c.origin == "measured"]
    groups = _group_compute(sorted(theoretical, key=lambda c: -c.value))
    groups += _group_compute(sorted(measured, key=lambda c: -c.value))
    for i, group in enumerate(groups):
        c = group[0]
        start = max(x_lo, c.value / fastest)
        is_primary = any(g.name == chart.precision for g in group)
        (line,) = ax.plot(
            [start, x_hi], [c.value, c.value],
            color="#b22222" if is_primary else "0.35",
            linewidth=2.2 if is_primary else 1.1,
            linestyle="--" if c.origin == "measured" else "-",
            zorder=2,
        )
        line.set_gid(f"ceiling:{'+'.join(g.name for g in group)}:{c.origin}")
        ax.text(x_hi / 1.15, c.value * 1.06, _group_label(group), ha="right", va="bottom",
                fontsize=7.5, color=line.get_color(), zorder=5, bbox=_TEXT_BOX)

    # Memory roofs: y = bandwidth x intensity, from the left edge up to the top ceiling.
    for m in sorted(memory, key=lambda c: (c.origin, c.value)):
        end = min(x_hi, top / m.value)
        (line,) = ax.plot(
            [x_lo, end], [m.value * x_lo, m.value * end],
            color=_MEMORY_COLORS.get(m.name, "0.2"),
            linewidth=2.0 if m.name == "dram" else 1.4,
            linestyle="--" if m.origin == "measured" else "-",
            zorder=2,
        )
        line.set_gid(f"ceiling:{m.name}:{m.origin}")
        # Label along the roof, a little before it ends, rotated to its on-screen slope.
        x_text = max(x_lo * 1.5, end / 30)
        y_text = m.value * x_text
        if y_text < y_lo * 3:
            x_text = y_lo * 3 / m.value
            y_text = y_lo * 3
        p0 = ax.transData.transform((x_text, y_text))
        p1 = ax.transData.transform((x_text * 10, y_text * 10))
        angle = math.degrees(math.atan2(p1[1] - p0[1], p1[0] - p0[0]))
        label = f"{LEVEL_LABELS.get(m.name, m.name)} {format_bandwidth(m.value)}"
        if m.origin == "measured":
            label += " (measured)"
        ax.text(x_text, y_text * 1.25, label, rotation=angle, rotation_mode="anchor",
                fontsize=7.5, color=line.get_color(), ha="left", va="bottom", zorder=5,
                bbox=_TEXT_BOX)

    # Ridge points of the chart's precision against every theoretical memory roof.
    for m in memory:
        if m.origin != "theoretical":
            continue
        ridge = primary.value / m.value
        ax.plot([ridge], [primary.value], marker="x", markersize=8, color="black",
                linestyle="none", zorder=4, gid=f"ridge:{m.name}")
        ax.annotate(f"ridge {ridge:.3g}", (ridge, primary.value), xytext=(4, -11),
                    textcoords="offset points", fontsize=7, color="black")

    if knee_sharpness is not None:
        grid = np.logspace(math.log10(x_lo), math.log10(x_hi), 400)
        for m in memory:
            if m.origin != "theoretical" or m.name != "dram":
                continue
            soft = (grid * m.value) ** -knee_sharpness + primary.value ** -knee_sharpness
            ax.plot(grid, soft ** (-1 / knee_sharpness), color="black", linestyle=":", linewidth=1.0,
                    zorder=2, gid=f"knee:{m.name}", label=f"soft knee (p = {knee_sharpness:g})")

    # Kernel points: one colour per kernel, joined across levels.
    names = list(dict.fromkeys(p.kernel for p in chart.points))
    cmap = _colormap(len(names))
    handles = []
    for i, name in enumerate(names):
        color = cmap[i]
        for origin in ("predicted", "measured"):
            pts = sorted(
                (p for p in chart.points if p.kernel == name and p.origin == origin),
                key=lambda p: p.arithmetic_intensity,
            )
            if not pts:
                continue
            (line,) = ax.plot([p.arithmetic_intensity for p in pts],
                              [p.flops_per_second for p in pts],
                              color=color, linewidth=0.9, alpha=0.7,
                              linestyle=":" if origin == "measured" else "-", zorder=3)
            line.set_gid(f"kernel:{name}:{origin}")
            for p in pts:
                ax.plot([p.arithmetic_intensity], [p.flops_per_second],
                        marker=_LEVEL_MARKERS[p.level], markersize=6, linestyle="none",
                        markerfacecolor="none" if origin == "measured" else color,
                        markeredgecolor=color, zorder=4)
            if origin == "predicted" or not any(p.origin == "predicted" for p in chart.points if p.kernel == name):
                anchor = next((p for p in pts if p.level == "dram"), pts[0])
                ax.annotate(f"{i + 1}", (anchor.arithmetic_intensity, anchor.flops_per_second),
                            xytext=(3, 3), textcoords="offset points", fontsize=7, color=color)
        from matplotlib.lines import Line2D

        handles.append(Line2D([], [], color=color, marker="o", linestyle="-", linewidth=0.9,
                              label=f"{i + 1}. {name}"))
    if handles:
        from matplotlib.lines import Line2D

        levels = sorted({p.level for p in chart.points}, key=list(_LEVEL_MARKERS).index)
        handles += [Line2D([], [], color="0.3", marker=_LEVEL_MARKERS[lvl], linestyle="none",
                           label=f"at {LEVEL_LABELS[lvl]}") for lvl in levels]
        if any(p.origin == "measured" for p in chart.points):
            handles.append(Line2D([], [], color="0.3", marker="o", markerfacecolor="none",
                                  linestyle="none", label="measured"))
        ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7.5,
                  frameon=False, title="kernels", title_fontsize=8)

    ax.set_xlabel("Arithmetic intensity (flop/byte)")
    ax.set_ylabel(f"Attainable performance ({PRECISION_LABELS.get(chart.precision, '')} kernels)")
    ax.yaxis.set_major_formatter(EngFormatter(unit="FLOP/s"))
    ax.set_title(chart.title or f"Roofline: {chart.gpu}", fontsize=11)
    ax.grid(True, which="major", linewidth=0.4, alpha=0.5)
    ax.grid(True, which="minor", linewidth=0.2, alpha=0.3)

    if path is not None:
        with atomic_path(path, RooflineError) as tmp:
            fig.savefig(tmp, dpi=dpi)
    return fig


def _colormap(n: int) -> list:
    from matplotlib import colormaps

    cmap = colormaps["tab20" if n > 10 else "tab10"]
    return [cmap(i % cmap.N) for i in range(n)]
