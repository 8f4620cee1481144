"""Rendering the prediction check: Markdown, the bandwidth-against-occupancy plot, files.

`gpuroof calibrate` writes them on their own; `gpuroof validate` folds them into its report.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from occupancy.common import check_figure_path, check_writable, dumps_json, save_figure, write_atomic
from roofline import RooflineError

from ..probes import CalibrationFit, PredictionCheck
from ._calibration_file import write_calibration

__all__ = ["plot_bandwidth_occupancy", "render_prediction_markdown", "write_prediction_report"]


def render_prediction_markdown(check: PredictionCheck, level: int = 1) -> str:
    """Markdown of a `PredictionCheck`: calibration, the sweep table, the cliff.

    ``level`` is the heading level of its title (2 inside the validation report).
    """
    h1, h2 = "#" * level, "#" * (level + 1)
    cal = check.calibration
    lines = [
        f"{h1} Prediction check on {check.gpu}",
        "",
        f"Copy sweep: **{check.within_tolerance} of {check.points}** points within "
        f"{check.tolerance:.0%} (median absolute error {check.median_abs_error:.1%}, "
        f"worst {check.max_abs_error:.1%}).",
        "",
        *_fit_lines(check.fit),
        f"{h2} Calibration",
        "",
        "| parameter | value | source |",
        "| --- | --- | --- |",
    ]
    for name, value in cal.items():
        if name in ("gpu", "sources"):
            continue
        shown = "derived" if value is None else f"{value:.4g}"
        lines.append(f"| {name} | {shown} | {cal['sources'].get(name, '')} |")
    lines += [
        "",
        f"Pointer-chase latency {check.pointer_chase_latency_seconds * 1e9:.0f} ns; "
        f"launch overhead {check.launch_overhead_seconds * 1e6:.2f} us.",
        "",
        f"{h2} Copy sweep (float32, 2^26 elements, bandwidth counts bytes read + written)",
        "",
        "| block | elements/thread | limit | blocks/SM (ours / runtime) | measured GB/s | predicted GB/s "
        "| error | limiter | fit |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |",
    ]
    for p in check.sweep:
        limit = "-" if p.blocks_per_sm_limit is None else str(p.blocks_per_sm_limit)
        runtime = "?" if p.runtime_active_blocks_per_sm is None else str(p.runtime_active_blocks_per_sm)
        lines.append(
            f"| {p.block_size} | {p.elements_per_thread} | {limit} | {p.active_blocks_per_sm} / {runtime} | "
            f"{p.measured_bytes_per_second / 1e9:,.0f} | {p.predicted_bytes_per_second / 1e9:,.0f} | "
            f"{p.error:+.1%} | {p.limiter} | {'yes' if p.used_for_calibration else ''} |"
        )
    if check.cliff is not None:
        c = check.cliff
        lines += [
            "",
            f"{h2} A shared-memory cliff, measured",
            "",
            f"Block size {c.block_size}, one element per thread: {c.dynamic_shared_memory_before} B of dynamic "
            f"shared memory gives {c.active_blocks_before} blocks/SM, {c.dynamic_shared_memory_after} B gives "
            f"{c.active_blocks_after}.",
            "",
            "| | measured us | predicted us |",
            "| --- | ---: | ---: |",
            f"| before | {c.measured_seconds_before * 1e6:.1f} | {c.predicted_seconds_before * 1e6:.1f} |",
            f"| after | {c.measured_seconds_after * 1e6:.1f} | {c.predicted_seconds_after * 1e6:.1f} |",
            f"| ratio | {c.measured_seconds_after / c.measured_seconds_before:.2f} | "
            f"{c.predicted_seconds_after / c.predicted_seconds_before:.2f} |",
        ]
    return "\n".join(lines) + "\n"


def _fit_lines(fit: CalibrationFit) -> list[str]:
    if fit is None:
        return []
    test = ("" if fit.test_max_abs_error is None else
            f"; on the {fit.test_points} points it never saw: median {fit.test_median_abs_error:.1%}, "
            f"worst {fit.test_max_abs_error:.1%}")
    return [f"Fit of {', '.join(fit.parameters)} by calling `roofline.predict` ({fit.method}; "
            f"{fit.evaluations} parameter sets, {fit.seconds:.1f} s): on the {fit.train_points} fitted points "
            f"median {fit.train_median_abs_error:.1%}, worst {fit.train_max_abs_error:.1%}{test}.", ""]


def plot_bandwidth_occupancy(check: PredictionCheck, path: Path) -> None:
    """Draw measured and predicted copy bandwidth against resident warps per SM to `path` (atomic)."""
    check_figure_path(path, RooflineError)
    import matplotlib.pyplot as plt

    fig = _draw(check)
    try:
        save_figure(fig, path, RooflineError, dpi=120)
    finally:
        plt.close(fig)


def _draw(check: PredictionCheck):  # -> matplotlib.figure.Figure
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 5), constrained_layout=True)
    markers = {1: "o", 2: "s", 4: "^", 8: "D"}
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, elements in enumerate(sorted({p.elements_per_thread for p in check.sweep})):
        rows = [p for p in check.sweep if p.elements_per_thread == elements]
        color, marker = colors[i % len(colors)], markers.get(elements, "o")
        warps = [p.active_blocks_per_sm * p.block_size / 32 for p in rows]
        left.scatter(warps, [p.measured_bytes_per_second / 1e12 for p in rows], marker=marker, color=color,
                     label=f"measured, {elements} elem/thread", zorder=3)
        left.scatter(warps, [p.predicted_bytes_per_second / 1e12 for p in rows], marker=marker,
                     facecolors="none", edgecolors=color, label=f"predicted, {elements} elem/thread", zorder=2)
        right.scatter([p.measured_bytes_per_second / 1e12 for p in rows],
                      [p.predicted_bytes_per_second / 1e12 for p in rows], marker=marker, color=color,
                      label=f"{elements} elem/thread")
    left.set_xscale("log", base=2)
    left.set_xlabel("resident warps per SM")
    left.set_ylabel("DRAM bandwidth, read + write (TB/s)")
    left.set_title("copy sweep: bandwidth against occupancy")
    left.legend(fontsize=7, ncol=2)
    top = max(max(p.measured_bytes_per_second, p.predicted_bytes_per_second) for p in check.sweep) / 1e12 * 1.05
    line = [0, top]
    right.plot(line, line, color="black", lw=1)
    right.fill_between(line, [v * (1 - check.tolerance) for v in line], [v * (1 + check.tolerance) for v in line],
                       color="gray", alpha=0.2, label=f"within {check.tolerance:.0%}")
    right.set_xlim(0, top)
    right.set_ylim(0, top)
    right.set_xlabel("measured (TB/s)")
    right.set_ylabel("predicted (TB/s)")
    right.set_title(f"{check.within_tolerance} of {check.points} points within {check.tolerance:.0%}")
    right.legend(fontsize=7)
    for ax in (left, right):
        ax.grid(True, which="both", alpha=0.3)
    fig.suptitle(f"{check.gpu}: roofline.predict against the copy sweep")
    return fig


def write_prediction_report(check: PredictionCheck, out: str | Path) -> dict[str, Path]:
    """Write calibration.json, prediction.json, prediction.md and bandwidth_occupancy.png to `out`."""
    if not isinstance(check, PredictionCheck):
        raise TypeError(f"check must be a PredictionCheck, not {type(check).__name__}")
    folder = check_writable(out, RooflineError, folder=True, name="out")
    files = {
        "calibration": folder / "calibration.json",
        "json": folder / "prediction.json",
        "markdown": folder / "prediction.md",
        "plot": folder / "bandwidth_occupancy.png",
    }
    write_calibration(check.calibration, folder)
    data = json.loads(check.model_dump_json())
    for row, point in zip(data["sweep"], check.sweep):
        error = point.error
        row["error"] = error if error is None or math.isfinite(error) else None
    write_atomic(files["json"], dumps_json({"schema_version": 1, **data}), RooflineError)
    write_atomic(files["markdown"], render_prediction_markdown(check), RooflineError)
    plot_bandwidth_occupancy(check, files["plot"])
    return files
