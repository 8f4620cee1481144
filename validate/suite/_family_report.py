"""Error by kernel family: `roofline.predict` and the plain roofline against the measured families.

`family_rows` predicts every measured launch (a `FamilyRecord`) with today's models, on
the CPU, and summarises the error per family (`_family_source.family_report` reads the
records from a report or file first). `render_family_markdown`, `plot_families`
(families.png) and `write_family_report` publish it.
"""

from __future__ import annotations

import json
import os
import statistics
from collections.abc import Sequence
from pathlib import Path

import occupancy
import roofline
from occupancy.common import (Progress, check_figure_path, check_writable, no_progress, progress_step,
                               save_figure, write_atomic)
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from roofline import RooflineError

from ..device import JsonDict
from ..probes import Probe, RunCalibration, RunContext
from ._families import FAMILIES, FamilyRecord, family_model, json_values, measure_families

__all__ = [
    "FamiliesProbe",
    "FamilyReport",
    "FamilyRow",
    "FamilySummary",
    "family_rows",
    "plot_families",
    "render_family_markdown",
    "write_family_report",
]

_FROZEN = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

#: Half-width of the band around y = x in families.png, and of the "within" count, percent.
TOLERANCE_PERCENT = 20.0
#: The accuracy targets roofline.predict is held to (percent): the median |error| over every
#: launch, the worst family's median |error|, and the worst single launch's |error|.
TARGET_MEDIAN_PERCENT, TARGET_FAMILY_MEDIAN_PERCENT, TARGET_WORST_PERCENT = 10.0, 20.0, 35.0


class FamilyRow(BaseModel):
    """One measured launch and what `roofline.predict` and the plain roofline say for it.

    Times in seconds; errors in percent of the measured time, signed:
    ``100 (predicted - measured) / measured`` (negative: predicted too fast).
    """

    model_config = _FROZEN

    record: FamilyRecord
    predict_seconds: float | None = None
    predict_limiter: str | None = None
    roofline_seconds: float | None = Field(default=None, description=(
        "The plain roofline of the bytes the prediction moves (roofline.analyze of roofline.terms.bound_counts: "
        "the prediction's roofline_seconds), never above predict_seconds."))
    roofline_bound: str | None = None
    predict_error_percent: float | None = None
    roofline_error_percent: float | None = None
    error: str | None = Field(default=None, description="Why a prediction is missing.")


class FamilySummary(BaseModel):
    """|error| of one family's launches (or of all of them, ``family="all"``), percent."""

    model_config = _FROZEN

    family: str
    launches: int = Field(description="Launches with a measured time.")
    predict_median_abs_percent: float | None = None
    predict_worst_abs_percent: float | None = None
    predict_worst_label: str | None = None
    predict_median_percent: float | None = Field(
        default=None, description="Median of the signed errors: the family's bias (negative: predicted too fast).")
    predict_within_tolerance: int = Field(default=0, description="Launches within TOLERANCE_PERCENT.")
    roofline_median_abs_percent: float | None = None
    roofline_worst_abs_percent: float | None = None
    roofline_worst_label: str | None = None


class FamilyReport(BaseModel):
    """The error of `roofline.predict` and of the plain roofline, per family and per launch."""

    model_config = _FROZEN

    gpu: str = Field(description="Database GPU the launches were predicted for.")
    device: str = Field(default="", description="The device measured (its name).")
    source: str = Field(default="", description="Where the measurements come from.")
    calibration: JsonDict = Field(description="The roofline.Calibration used, with its sources.")
    calibration_source: str
    tolerance_percent: float = TOLERANCE_PERCENT
    rows: tuple[FamilyRow, ...]
    families: tuple[FamilySummary, ...]
    overall: FamilySummary

    @field_validator("calibration")
    @classmethod
    def _json_values(cls, value: JsonDict) -> JsonDict:
        return json_values(value, "calibration")

    @property
    def records(self) -> tuple[FamilyRecord, ...]:
        """The measured launches, to predict again (`family_report`)."""
        return tuple(row.record for row in self.rows)


# ------------------------------------------------------------------ predicting


def _percent(predicted: float | None, measured: float | None) -> float | None:
    if predicted is None or measured is None:
        return None
    return (predicted - measured) / measured * 100.0


def _first_line(exc: BaseException) -> str:
    return (str(exc).splitlines() or [""])[0][:300]


def _predict_row(record: FamilyRecord, gpu: roofline.GPU, calibration: roofline.Calibration) -> FamilyRow:
    if record.measured_seconds is None:
        return FamilyRow(record=record, error=f"not measured: {record.error}")
    try:
        model = family_model(record.model, record.arguments)
        update = {"grid": record.grid, "block": record.block, "dynamic_shared_memory": record.dynamic_shared_memory}
        if record.registers_per_thread is not None:
            update["registers_per_thread"] = record.registers_per_thread
        if record.static_shared_memory is not None:
            update["static_shared_memory"] = record.static_shared_memory
        if record.loads_in_flight_per_thread is not None:
            # the compiler's loads in flight (read from the SASS) replace the model's guess
            update["loads_in_flight_per_thread"] = record.loads_in_flight_per_thread
        if record.sass is not None and record.registers_per_thread is not None:
            # the kernel's SASS rides with its resources: predict counts its issue slots
            update["resources"] = occupancy.KernelResources(
                kernel=record.function, architecture=record.sass.architecture,
                registers_per_thread=record.registers_per_thread,
                static_shared_memory=record.static_shared_memory or 0, sass=record.sass)
        launch = occupancy.Launch.model_validate({**model.launch.model_dump(), **update})
        p = roofline.predict(gpu, model, launch, calibration=calibration, after_l2_flush=record.l2_flushed)
    except (roofline.RooflineError, occupancy.OccupancyError, ValidationError, TypeError) as exc:
        # a record the models refuse (a launch that cannot run, arguments of another
        # version): the row says why, the others are still predicted
        return FamilyRow(record=record, error=f"no prediction: {type(exc).__name__}: {_first_line(exc)}")
    try:
        verdict = roofline.analyze(gpu, roofline.terms.bound_counts(model, p.terms))
        bound, bound_name = verdict.time_lower_bound_seconds, verdict.bound_level or verdict.bound
    except roofline.RooflineError:  # a precision without a peak on this GPU: no roofline column
        bound, bound_name = None, None
    return FamilyRow(record=record, predict_seconds=p.seconds, predict_limiter=p.limiter, roofline_seconds=bound,
                     roofline_bound=bound_name, predict_error_percent=_percent(p.seconds, record.measured_seconds),
                     roofline_error_percent=_percent(bound, record.measured_seconds))


def _summary(family: str, rows: Sequence[FamilyRow], tolerance: float) -> FamilySummary:
    measured = [r for r in rows if r.record.measured_seconds is not None]

    def stats(key: str) -> tuple[float | None, float | None, str | None, list[float]]:
        pairs = [(getattr(r, f"{key}_error_percent"), r.record.label) for r in measured
                 if getattr(r, f"{key}_error_percent") is not None]
        if not pairs:
            return None, None, None, []
        worst = max(pairs, key=lambda p: abs(p[0]))
        return (statistics.median(abs(e) for e, _ in pairs), abs(worst[0]), worst[1], [e for e, _ in pairs])

    pm, pw, pl, signed = stats("predict")
    rm, rw, rl, _ = stats("roofline")
    return FamilySummary(
        family=family, launches=len(measured), predict_median_abs_percent=pm, predict_worst_abs_percent=pw,
        predict_worst_label=pl, predict_median_percent=statistics.median(signed) if signed else None,
        predict_within_tolerance=sum(abs(e) <= tolerance for e in signed), roofline_median_abs_percent=rm,
        roofline_worst_abs_percent=rw, roofline_worst_label=rl)


def family_rows(records: Sequence[FamilyRecord], gpu: roofline.GPU, calibration: roofline.Calibration, calibration_source: str,
                device: str = "", source: str = "", progress: Progress = no_progress) -> FamilyReport:
    predicted = []
    for done, record in enumerate(records):
        progress_step(progress, f"family {record.family}", done, len(records))
        predicted.append(_predict_row(record, gpu, calibration))
    rows = tuple(predicted)
    order = [f for f in FAMILIES if any(r.record.family == f for r in rows)]
    order += sorted({r.record.family for r in rows} - set(order))
    families = tuple(_summary(f, [r for r in rows if r.record.family == f], TOLERANCE_PERCENT) for f in order)
    return FamilyReport(gpu=gpu.name, device=device, source=source, calibration=calibration.model_dump(mode="json"),
                        calibration_source=calibration_source, rows=rows, families=families,
                        overall=_summary("all", rows, TOLERANCE_PERCENT))


# ------------------------------------------------------------------ publishing


def _pct(value: float | None, signed: bool = False) -> str:
    if value is None:
        return "-"
    return f"{value:+.0f}%" if signed else f"{value:.0f}%"


def _us(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1e6:,.1f}"


def _targets(report: FamilyReport) -> str:
    measured = [f for f in report.families if f.predict_median_abs_percent is not None]
    if report.overall.predict_median_abs_percent is None or not measured:
        return ""
    worst_family = max(measured, key=lambda f: f.predict_median_abs_percent)

    def verdict(value: float, target: float) -> str:
        return f"target <= {target:.0f}%: {'met' if value <= target else 'not met'}"

    o = report.overall
    return (f"Issue 11's targets for `roofline.predict`: median |error| {o.predict_median_abs_percent:.1f}% "
            f"({verdict(o.predict_median_abs_percent, TARGET_MEDIAN_PERCENT)}); worst family median "
            f"{worst_family.predict_median_abs_percent:.1f}% ({worst_family.family}; "
            f"{verdict(worst_family.predict_median_abs_percent, TARGET_FAMILY_MEDIAN_PERCENT)}); worst launch "
            f"{o.predict_worst_abs_percent:.1f}% ({o.predict_worst_label}; "
            f"{verdict(o.predict_worst_abs_percent, TARGET_WORST_PERCENT)}).")


def render_family_markdown(report: FamilyReport, *, level: int = 1, title: str | None = None,
                           plot: str | None = None) -> str:
    """The family report as Markdown: the table per family, the targets, every launch.

    Parameters
    ----------
    report : FamilyReport
    level : int
        Heading level of the title (2 or 3 inside a validation report).
    title : str, optional
        Default "Kernel families on <device>".
    plot : str, optional
        Path of families.png relative to the Markdown file, shown under the table.
    """
    if not isinstance(report, FamilyReport):
        raise TypeError(f"report must be a FamilyReport, not {type(report).__name__}")

    if isinstance(level, bool) or not isinstance(level, int):
        raise TypeError(f"level must be an int, not {type(level).__name__}")
    if not 1 <= level <= 5:
        raise RooflineError(f"level={level} must be from 1 to 5")
    for name, value in (("title", title), ("plot", plot)):
        if value is not None and not isinstance(value, str):
            raise TypeError(f"{name} must be a str, not {type(value).__name__}")
    h1, h2 = "#" * level, "#" * (level + 1)
    tol = report.tolerance_percent
    lines = [
        f"{h1} {title or f'Kernel families on the {report.device or report.gpu}'}", "",
        *([f"Measured: {report.source}", ""] if report.source else []),
        f"|error| = |predicted - measured| / measured. `predict`: `roofline.predict` for the {report.gpu} "
        f"({report.calibration_source}); roofline: the plain roofline (datasheet ceilings) of the bytes the "
        "prediction moves (`roofline.analyze` of `roofline.terms.bound_counts`). Bias: the median signed error (negative: predicted too fast). Every launch was checked "
        "against numpy before it was timed.", "",
        "| family | launches | predict median | predict worst | bias | within "
        f"{tol:.0f}% | roofline median | roofline worst |",
        "| --- | ---: | ---: | --- | ---: | ---: | ---: | --- |",
    ]
    for s in (*report.families, report.overall):
        name = "**all**" if s.family == "all" else s.family
        lines.append(
            f"| {name} | {s.launches} | {_pct(s.predict_median_abs_percent)} | {_pct(s.predict_worst_abs_percent)} "
            f"({s.predict_worst_label or '-'}) | {_pct(s.predict_median_percent, signed=True)} | "
            f"{s.predict_within_tolerance} | {_pct(s.roofline_median_abs_percent)} | "
            f"{_pct(s.roofline_worst_abs_percent)} ({s.roofline_worst_label or '-'}) |")
    targets = _targets(report)
    lines += ["", *([targets, ""] if targets else [])]
    if plot:
        lines += [f"![predicted against measured time, per family]({plot})", ""]
    lines += [f"{h2} Every launch", "",
              "| family | launch | grid | block | regs | measured us | predict us | error | limiter | roofline us "
              "| error | bound |",
              "| --- | --- | --- | --- | ---: | ---: | ---: | ---: | --- | ---: | ---: | --- |"]
    for r in report.rows:
        rec = r.record
        regs = "-" if rec.registers_per_thread is None else str(rec.registers_per_thread)
        origin = " (suite)" if rec.origin == "suite" else ""
        lines.append(
            f"| {rec.family} | {rec.label}{origin} | {'x'.join(map(str, rec.grid))} | {'x'.join(map(str, rec.block))} "
            f"| {regs} | {_us(rec.measured_seconds)} | {_us(r.predict_seconds)} | "
            f"{_pct(r.predict_error_percent, signed=True)} | {r.predict_limiter or '-'} | {_us(r.roofline_seconds)} "
            f"| {_pct(r.roofline_error_percent, signed=True)} | {r.roofline_bound or '-'} |")
    failed = [r for r in report.rows if r.error]
    if failed:
        lines += ["", f"{h2} Launches without a prediction", ""]
        lines += [f"- {r.record.label}: {r.error.splitlines()[0][:200]}" for r in failed]
    return "\n".join(lines) + "\n"


_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">", "*", "h", "p", "8", "d")


def plot_families(report: FamilyReport, path: str | os.PathLike[str], *, title: str | None = None) -> Path:
    """Draw families.png: predicted against measured time, log-log, one marker and colour per family.

    Two panels, `roofline.predict` and the plain roofline, on the same axes; the line
    y = x and a band of +-`TOLERANCE_PERCENT` around it. The axes span every launch.

    Returns
    -------
    Path
        The file written (atomically).

    Raises
    ------
    roofline.RooflineError
        A `path` whose suffix is not one of ``occupancy.common.FIGURE_FORMATS`` (before
        drawing), or a report with nothing to plot.
    OSError
        When the file cannot be written (one line naming `path` and the cause).
    """
    if not isinstance(report, FamilyReport):
        raise TypeError(f"report must be a FamilyReport, not {type(report).__name__}")
    if title is not None and not isinstance(title, str):
        raise TypeError(f"title must be a str, not {type(title).__name__}")
    check_figure_path(path, RooflineError)
    try:
        import matplotlib
    except ImportError:
        raise RooflineError("plot_families needs matplotlib: pip install matplotlib") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [r for r in report.rows if r.record.measured_seconds is not None and r.predict_seconds is not None]
    values = [v for r in rows for v in (r.record.measured_seconds, r.predict_seconds, r.roofline_seconds)
              if v is not None and v > 0]
    if not values:
        raise RooflineError("the report has no launch with a measured and a predicted time to plot")
    lo, hi = min(values) / 1.5, max(values) * 1.5
    families = [s.family for s in report.families if any(r.record.family == s.family for r in rows)]
    # tab20's dark shades first (ten distinct hues), then its light ones
    palette = [plt.get_cmap("tab20")(i) for i in (*range(0, 20, 2), *range(1, 20, 2))]
    colors = [palette[i % len(palette)] for i in range(len(families))]
    tol = report.tolerance_percent / 100
    fig, axes = plt.subplots(1, 2, figsize=(14, 7.2), sharex=True, sharey=True, layout="constrained")
    for ax, key, name in zip(axes, ("predict", "roofline"), ("roofline.predict", "plain roofline (datasheet)")):
        summary_median = getattr(report.overall, f"{key}_median_abs_percent")
        for i, family in enumerate(families):
            members = [r for r in rows if r.record.family == family and getattr(r, f"{key}_seconds") is not None]
            ax.scatter([r.record.measured_seconds for r in members], [getattr(r, f"{key}_seconds") for r in members],
                       marker=_MARKERS[i % len(_MARKERS)], color=colors[i], edgecolors="black", linewidths=0.4,
                       s=36, alpha=0.8, label=f"{family} ({len(members)})", zorder=3)
        ax.plot([lo, hi], [lo, hi], color="black", lw=1, zorder=2)
        ax.fill_between([lo, hi], [lo * (1 - tol), hi * (1 - tol)], [lo * (1 + tol), hi * (1 + tol)], color="gray",
                        alpha=0.2, zorder=1, label=f"within {report.tolerance_percent:.0f}%")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(lo, hi)
        ax.set_ylim(lo, hi)
        ax.set_aspect("equal")
        ax.grid(True, which="both", alpha=0.3)
        ax.set_xlabel("measured time (s)")
        ax.set_title(f"{name}: median |error| {_pct(summary_median)}")
    axes[0].set_ylabel("predicted time (s)")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=min(7, len(labels)), fontsize=8)
    fig.suptitle(title or f"{report.device or report.gpu}: predicted against measured time, per kernel family")
    try:
        return save_figure(fig, path, RooflineError, dpi=120)
    finally:
        plt.close(fig)


def write_family_report(report: FamilyReport, out: str | os.PathLike[str]) -> dict[str, Path]:
    """Write families.json (the report, records included), families.md and families.png into `out`.

    Returns
    -------
    dict
        "json", "markdown" and "plot" to the paths written.
    """
    if not isinstance(report, FamilyReport):
        raise TypeError(f"report must be a FamilyReport, not {type(report).__name__}")
    folder = check_writable(out, RooflineError, folder=True, name="out")
    files = {"json": folder / "families.json", "markdown": folder / "families.md", "plot": folder / "families.png"}
    write_atomic(files["json"], json.dumps(json.loads(report.model_dump_json()), indent=1) + "\n", RooflineError)
    write_atomic(files["markdown"], render_family_markdown(report, plot="families.png"), RooflineError)
    plot_families(report, files["plot"])
    return files


class FamiliesProbe(Probe[FamilyReport]):
    """Check and time the kernel families (the suite's kernels among them, `measure_families`)
    and give `roofline.predict`'s and the plain roofline's error per family with this run's
    calibration (the packaged one where it failed); its section is laid out by `render_markdown`
    after the kernels."""

    name = "families"
    step = "families"
    error_field = "families_error"

    def run(self, ctx: RunContext) -> FamilyReport | None:
        if not ctx.families:
            return None
        records = measure_families(ctx.session, ctx.info, quick=ctx.quick, families=ctx.families,
                                   suite_rows=ctx.result("kernels", tuple) or (), rng=ctx.rng, progress=ctx.progress)
        if ctx.entry is None:
            raise RooflineError(f"{len(records)} launches measured, but no database entry to predict them for")
        calibration = ctx.result("calibration", RunCalibration)
        where = ("this run's calibration (fitted to its copy sweep, with its measured figures)"
                 if calibration is not None else "packaged: this run's calibration failed")
        report = family_rows(records, ctx.entry,
                             roofline.calibration(ctx.entry) if calibration is None else calibration.calibration,
                             where, ctx.info.name, f"gpuroof validate, {ctx.created_utc}, {ctx.host}")
        o = report.overall
        ctx.progress(f"families: roofline.predict median |error| {o.predict_median_abs_percent or 0:.0f}% "
                     f"(worst {o.predict_worst_abs_percent or 0:.0f}%, {o.predict_worst_label}), plain roofline "
                     f"{o.roofline_median_abs_percent or 0:.0f}%")
        return report
