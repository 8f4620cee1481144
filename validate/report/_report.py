"""The validation report: one schema-versioned model per device, a `ReportSet` of one or many
devices in ``report.json``, written with Markdown and plots."""

from __future__ import annotations

import io
import math
import os
from collections.abc import Callable, Sequence
from pathlib import Path

import roofline
from occupancy.common import check_range, check_writable, integer, write_atomic
from pydantic import BaseModel, ConfigDict, Field
from roofline import RooflineError

from ..checks import OccupancyCheck
from ..device import DeviceComparison, DeviceInfo, JsonDict
from ..probes import (
    Ceilings,
    ComputeEffects,
    GlobalCas,
    L2Writes,
    OpenLines,
    HostLinks,
    LatencyLadder,
    LaunchOverhead,
    MemoryEffects,
    MemoryTerms,
    NsightLaunch,
    Persistence,
    PredictionCheck,
    References,
    SharedAtomics,
    WorkingSet,
    plot_working_set,
)
from ..suite import FamilyReport, KernelValidation, PredictionSummary, plot_families, render_family_markdown
from . import _measurement_report as sections
from ._calibration_file import write_calibration
from ._prediction_report import plot_bandwidth_occupancy, render_prediction_markdown
from ._registry import PROBES

__all__ = ["REPORT_SCHEMA_VERSION", "ReportSet", "SpreadRow", "ValidationReport", "render_markdown", "write_report"]

REPORT_SCHEMA_VERSION = 2


class ValidationReport(BaseModel):
    """Everything one ``gpuroof validate`` run measured (SI units throughout)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: int = REPORT_SCHEMA_VERSION
    gpuroof_version: str
    created_utc: str
    quick: bool
    runtime_seconds: float
    seed: int = Field(description="Seed of the random inputs (fresh per run, kept to reproduce it).")
    device: DeviceInfo
    comparison: DeviceComparison
    ceilings: Ceilings
    occupancy_check: OccupancyCheck | None
    occupancy_check_error: str | None = None
    kernels: tuple[KernelValidation, ...]
    summary: PredictionSummary
    prediction: PredictionCheck | None = Field(
        default=None, description="Calibration and copy sweep of roofline.predict (None when skipped).")
    prediction_error: str | None = None
    host: str = Field(default="", description="Host name, so reports of many hosts can be merged.")
    references: References | None = Field(default=None, description="cuBLAS and library copies, same session.")
    launch: LaunchOverhead | None = None
    nsight_launch: NsightLaunch | None = Field(
        default=None, description="An empty kernel's duration under Nsight Compute (or why it was not measured).")
    latency: LatencyLadder | None = None
    working_set: WorkingSet | None = None
    host_links: HostLinks | None = None
    persistence: Persistence | None = None
    effects: MemoryEffects | None = Field(default=None, description="The time model's memory-effect probes.")
    compute: ComputeEffects | None = Field(default=None, description="The time model's compute-side probes.")
    memory_terms: MemoryTerms | None = Field(
        default=None, description="The memory terms' probes: L2 requests, global atomics, random DRAM bursts.")
    shared_atomics: SharedAtomics | None = Field(
        default=None, description="One SM's shared-atomic rates and a shared compare-and-swap's round trip.")
    global_cas: GlobalCas | None = Field(
        default=None, description="A returning global compare-and-swap's round trip and the rate of 32-lane "
        "compare-and-swaps on one line a warp.")
    l2_writes: L2Writes | None = Field(
        default=None, description="The written bytes L2 keeps at a kernel's end, by Nsight Compute.")
    open_lines: OpenLines | None = Field(
        default=None, description="The open lines of a row walk at which L2 lets them go, by Nsight Compute.")
    calibration: JsonDict | None = Field(
        default=None, description="roofline.Calibration: the fitted parameters plus the measured figures.")
    measurement_errors: dict[str, str] = Field(default_factory=dict, description="Measurements that failed.")
    step_seconds: dict[str, float] = Field(default_factory=dict, description="Wall time of each step of the run.")
    late_timer_samples: int | None = Field(
        default=None, description="Samples the queued event timer retook because the host was late.")
    families: FamilyReport | None = Field(
        default=None, description="The kernel families: every launch measured (its record, to predict again) and "
        "roofline.predict's and the plain roofline's error, per family, with this run's calibration.")
    families_error: str | None = None


class SpreadRow(BaseModel):
    """One figure across the devices of one model: how far apart they are."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: str = Field(description="Device name shared by the devices compared.")
    figure: str
    unit: str
    devices: tuple[str, ...] = Field(description="host:index of each device, in the order of `values`.")
    values: tuple[float, ...]
    minimum: float
    maximum: float
    median: float
    spread: float = Field(description="(maximum - minimum) / median.")


class ReportSet(BaseModel):
    """What report.json holds: the reports of one or many devices (one schema for both), and the
    spread between devices of the same model."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: int = REPORT_SCHEMA_VERSION
    created_utc: str
    reports: tuple[ValidationReport, ...]
    spread: tuple[SpreadRow, ...] = ()
    errors: dict[str, str] = Field(default_factory=dict, description="Devices whose run failed, and why.")


def _si(value: float | None, unit: str, scale: float = 1e9, digits: int = 1) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return f"{value / scale:,.{digits}f} {unit}"


def _pct(value: float | None, digits: int = 0) -> str:
    return "-" if value is None else f"{value:.{digits}f}%"


def _ms(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1e3:.3f}"


#: The deepest title level: the family report's sections sit two levels below it.
MAX_TITLE_LEVEL = 4


def render_markdown(report: ValidationReport, *, level: int = 1, assets: str = "") -> str:
    """The human report: device, ceilings, occupancy check, kernels, error summary, hierarchy.

    ``level`` is the heading level of the title, 1 to 4 (2 inside a report of many devices;
    sections sit one level below it and the family report's two, and Markdown stops at 6);
    ``assets`` prefixes the image paths (the device's folder in such a report).

    Raises
    ------
    TypeError
        For a report that is not a ValidationReport, a level that is not an int, or assets
        that is not a str.
    roofline.RooflineError
        For a level outside 1 to 4.
    """
    if not isinstance(report, ValidationReport):
        raise TypeError(f"report must be a ValidationReport, not {type(report).__name__}")
    level = integer("level", level)
    check_range("level", level, 1, MAX_TITLE_LEVEL, RooflineError, " (Markdown headings stop at 6)")
    if not isinstance(assets, str):
        raise TypeError(f"assets must be a str (a folder prefix such as 'h100/'), not {type(assets).__name__}")
    h2 = "#" * (level + 1)
    lines = _render_device(report, level)
    lines += sections.render_ceilings(report.ceilings, h2)
    lines += _render_occupancy_check(report, h2)
    lines += _render_kernels(report, h2, assets)
    lines += _render_later_sections(report, level, assets)
    return "\n".join(lines)


def _render_device(report: ValidationReport, level: int) -> list[str]:
    """The title, the run, the device and how it compares with its database entry."""
    d, c = report.device, report.comparison
    h1, h2 = "#" * level, "#" * (level + 1)
    lines = [
        f"{h1} gpuroof validation: {d.name}" + (f" (device {d.index}{', ' + report.host if report.host else ''})"
                                                 if level > 1 else ""),
        "",
        f"Schema {report.schema_version}, gpuroof {report.gpuroof_version}, {report.created_utc}, "
        f"{'quick' if report.quick else 'full'} run in {report.runtime_seconds:.1f} s (seed {report.seed}).",
        "",
        *([f"Wall time by step: {', '.join(f'{k} {v:.1f} s' for k, v in report.step_seconds.items())}; "
           f"{report.late_timer_samples or 0} timer samples retaken because the host was late.", ""]
          if report.step_seconds else []),
        f"{h2} Device",
        "",
        f"- {d.name}, compute capability {d.compute_capability} ({d.arch}), {d.sm_count} SMs, "
        f"SM clock {d.clock_hz / 1e6:.0f} MHz"
        + (f" (NVML max {d.nvml_max_sm_clock_hz / 1e6:.0f} MHz)" if d.nvml_max_sm_clock_hz else ""),
        f"- memory {d.memory_size_bytes / 2**30:.1f} GiB, {d.memory_bus_width_bits}-bit bus at "
        f"{d.memory_clock_hz / 1e6:.0f} MHz: {d.memory_bandwidth / 1e12:.2f} TB/s theoretical; "
        f"L2 {d.l2_cache_bytes / 2**20:.0f} MiB",
        f"- shared memory {d.shared_memory_per_sm} B/SM, {d.max_shared_memory_per_block_optin} B/block opt-in, "
        f"{d.reserved_shared_memory_per_block} B reserved per block; {d.registers_per_sm} registers/SM",
        f"- driver {d.driver_version}, cuda.core {d.cuda_core_version}, cuda.bindings {d.cuda_bindings_version}",
        f"- database entry: **{c.database_gpu or 'none'}** (matched by {c.match})",
        "",
    ]
    if c.differences or c.architecture_differences:
        lines += ["| figure | device | database | difference |", "| --- | --- | --- | --- |"]
        for diff in (*c.differences, *c.architecture_differences):
            rel = "-" if diff.relative_difference is None else f"{diff.relative_difference:+.1%}"
            lines.append(f"| {diff.field} | {diff.device} | {diff.database} | {rel} |")
        lines.append("")
    else:
        lines += ["The device matches its database entry and occupancy architecture.", ""]
    return lines


def _render_occupancy_check(report: ValidationReport, h2: str) -> list[str]:
    """The occupancy calculator against the driver: counts, and every mismatch."""
    lines = [f"{h2} Occupancy check", ""]
    oc = report.occupancy_check
    if oc is None:
        lines += [f"Not run: {report.occupancy_check_error}", ""]
    else:
        lines += [
            f"{oc.launches_checked:,} launch configurations and {oc.block_size_checks:,} "
            f"max_potential_block_size queries over {oc.kernels} generated kernels "
            f"(registers {', '.join(map(str, oc.registers_seen))}; static shared memory "
            f"{', '.join(map(str, oc.static_shared_memory_seen))} B; barriers "
            f"{', '.join(map(str, oc.barriers_seen))}) on {oc.architecture}: "
            f"**{oc.mismatch_count} mismatches** ({oc.seconds:.1f} s).",
            "",
        ]
        if oc.mismatches:
            lines += ["| query | kernel | regs | static | barriers | threads | dynamic | max dynamic | carveout "
                      "| runtime | calculated |", "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
            for m in oc.mismatches:
                lines.append(
                    f"| {m.query} | {m.kernel} | {m.registers_per_thread} | {m.static_shared_memory} | "
                    f"{m.block_barriers} | {m.threads_per_block if m.threads_per_block is not None else '-'} | "
                    f"{m.dynamic_shared_memory} | {m.max_dynamic_shared_memory if m.max_dynamic_shared_memory is not None else 'default'} | "
                    f"{m.carveout if m.carveout is not None else 'default'} | {m.runtime} | {m.calculated} |")
            lines.append("")
        for name, error in oc.compile_errors.items():
            lines.append(f"- {name}: compile error: {error}")
    return lines


def _render_kernels(report: ValidationReport, h2: str, assets: str) -> list[str]:
    """Each suite kernel's prediction against its measurement, and the error by regime."""
    # With a family report, roofline.predict's errors are there (every suite kernel is in a
    # family, beside the plain roofline's): one table of the model's errors, not two.
    model = report.families is None
    lines = [f"{h2} Kernels: prediction against measurement", "",
             "Predicted = roofline time lower bound; APE = |predicted - measured| / measured. "
             + ("Model = `roofline.predict` (occupancy, Little's law, waves) with this run's calibration."
                if model else "`roofline.predict`'s error on each kernel is in the family report below."), "",
             "| kernel | regime | regs | measured (ms) | predicted (ms) | APE | predicted, measured ceilings (ms) "
             "| APE | " + ("model (ms) | APE | limiter | " if model else "") + "achieved | status |",
             "| --- " * (13 if model else 10) + "|"]
    for k in report.kernels:
        achieved = (_si(k.measured_flops_per_second, "GFLOP/s") if k.flops
                    else _si(k.measured_dram_bytes_per_second, "GB/s"))
        regs = "-" if k.resources is None else str(k.resources.registers_per_thread)
        status = k.status if k.status == "ok" else f"{k.status}: {(k.error or '').splitlines()[0][:120]}"
        model_cells = (f"{_ms(k.model_predicted_seconds)} | {_pct(k.ape_percent_model)} | {k.model_limiter or '-'} | "
                       if model else "")
        lines.append(
            f"| {k.label} | {k.regime or '-'} | {regs} | {_ms(k.measured_seconds)} | {_ms(k.predicted_seconds)} | "
            f"{_pct(k.ape_percent)} | {_ms(k.predicted_seconds_measured_ceilings)} | "
            f"{_pct(k.ape_percent_measured_ceilings)} | {model_cells}{achieved if k.status == 'ok' else '-'} | "
            f"{status} |")
    lines += ["", f"{h2} Prediction error by regime", "",
              "| regime | kernels | median APE | worst APE (kernel) | median APE, measured ceilings "
              "| worst APE, measured ceilings (kernel) |" + (" median APE, model | worst APE, model (kernel) |"
                                                             if model else ""),
              "| --- " * (8 if model else 6) + "|"]
    for s in (*report.summary.regimes, report.summary.overall):
        lines.append(
            f"| {s.regime} | {s.kernels} | {_pct(s.median_ape_percent)} | "
            f"{_pct(s.worst_ape_percent)} ({s.worst_kernel or '-'}) | {_pct(s.median_ape_percent_measured_ceilings)} | "
            f"{_pct(s.worst_ape_percent_measured_ceilings)} ({s.worst_kernel_measured_ceilings or '-'}) |"
            + (f" {_pct(s.median_ape_percent_model)} | {_pct(s.worst_ape_percent_model)} "
               f"({s.worst_kernel_model or '-'}) |" if model else ""))
    if report.summary.failed:
        lines += ["", f"Failed kernels: {', '.join(report.summary.failed)}."]
    lines += ["", f"![roofline]({assets}roofline.png)", ""]
    return lines


def _render_later_sections(report: ValidationReport, level: int, assets: str) -> list[str]:
    """The family report, the prediction check, references not measured, each probe's section,
    and the measurements that failed."""
    h2 = "#" * (level + 1)
    lines: list[str] = []
    if report.families is not None:
        lines += [render_family_markdown(report.families, level=level + 1, plot=f"{assets}families.png",
                                         title="Kernel families: roofline.predict and the plain roofline, by family")]
    elif report.families_error:
        lines += [f"{h2} Kernel families", "", f"Not measured: {report.families_error}", ""]
    if report.prediction is not None:
        lines += [render_prediction_markdown(report.prediction, level=level + 1),
                  f"![bandwidth against occupancy]({assets}bandwidth_occupancy.png)", ""]
    elif report.prediction_error:
        lines += [f"{h2} Prediction check", "", f"Not run: {report.prediction_error}", ""]
    if report.references is not None and report.references.errors:
        lines += [f"{h2} Independent figures not measured", ""]
        lines += [f"- {name}: {error}" for name, error in report.references.errors.items()] + [""]
    for probe in PROBES:
        result = getattr(report, probe.name)
        if result is not None:
            lines += probe.render(result, h2, assets)
    if report.measurement_errors:
        lines += [f"{h2} Measurements that failed", ""]
        lines += [f"- {name}: {error}" for name, error in report.measurement_errors.items()] + [""]
    return lines


def _plot_png(report: ValidationReport, models: Sequence[roofline.Kernel]) -> bytes | None:
    """roofline.chart.plot_roofline with the measured ceilings and measured kernel points."""
    if report.comparison.database_gpu is None:
        return None
    names = {"dram_copy": "dram", "l2_read": "l2", "shared_read": "l1", "fp32_fma": "fp32",
             "fp64_fma": "fp64", "fp16_tensor": "fp16_tensor", "bf16_tensor": "bf16_tensor"}
    measured_ceilings = {names[c.name]: c.ceiling for c in report.ceilings.items if c.name in names}
    rows = {k.label: k for k in report.kernels}
    kernels, seconds = [], {}
    for model in models:
        label = getattr(model, "label", None) or model.name
        row = rows.get(label)
        if row is None:
            continue
        kernels.append(roofline.Kernel(name=label, flops=float(model.flops), dram_bytes=float(model.dram_bytes),
                                       l2_bytes=getattr(model, "l2_bytes", None),
                                       l1_bytes=getattr(model, "l1_bytes", None),
                                       precision=getattr(model, "precision", None)))
        if row.status == "ok" and row.measured_seconds:
            seconds[label] = row.measured_seconds
    figure = roofline.chart.plot_roofline(
        report.comparison.database_gpu, kernels,
        measured=roofline.chart.Measurements(ceilings=measured_ceilings, seconds=seconds),
        title=f"{report.device.name}: measured (hollow) vs predicted; dashed roofs measured",
    )
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=150)
    return buffer.getvalue()


def write_report(report: ValidationReport, out: str | os.PathLike[str], models: Sequence[roofline.Kernel] = (),
                 progress: Callable[[str], None] = lambda message: None) -> dict[str, Path]:
    """Write report.json (a `ReportSet` of this one report), report.md, the plots and
    calibration.json into ``out``, each atomically.

    Parameters
    ----------
    report : ValidationReport
    out : path
        Folder (created if missing).
    models : sequence of roofline.Kernel
        The kernels, for the plot's points (no plot without them).

    Returns
    -------
    dict
        File kind ("json", "markdown", "plot", "calibration", "sweep_plot", "working_set_plot",
        "families_plot")
        to path written. A plot is skipped, with a progress line, when it cannot be drawn.
    """
    if not isinstance(report, ValidationReport):
        raise TypeError(f"report must be a ValidationReport, not {type(report).__name__}")
    folder = check_writable(out, RooflineError, folder=True, name="out")
    written = {}
    json_path = folder / "report.json"
    one = ReportSet(created_utc=report.created_utc, reports=(report,))
    write_atomic(json_path, one.model_dump_json(indent=2) + "\n", RooflineError)
    written["json"] = json_path
    md_path = folder / "report.md"
    write_atomic(md_path, render_markdown(report), RooflineError)
    written["markdown"] = md_path
    try:
        png = _plot_png(report, models)
    except Exception as exc:  # noqa: BLE001 - a plot failure must not lose the measurements
        progress(f"roofline.png not written: {type(exc).__name__}: {exc}")
        png = None
    if png:
        png_path = folder / "roofline.png"
        write_atomic(png_path, png, RooflineError)
        written["plot"] = png_path
    calibration = report.calibration or (None if report.prediction is None else report.prediction.calibration)
    if calibration is not None:
        written["calibration"] = write_calibration(calibration, folder)
    if report.working_set is not None:
        try:
            png = plot_working_set(report.working_set, title=f"{report.device.name}: read bandwidth against footprint",
                                   l2_cache_bytes=report.device.l2_cache_bytes, sm_count=report.device.sm_count)
            write_atomic(folder / "working_set.png", png, RooflineError)
            written["working_set_plot"] = folder / "working_set.png"
        except Exception as exc:  # noqa: BLE001 - a plot failure must not lose the measurements
            progress(f"working_set.png not written: {type(exc).__name__}: {exc}")
    if report.families is not None:
        try:
            written["families_plot"] = plot_families(report.families, folder / "families.png")
        except Exception as exc:  # noqa: BLE001 - a plot failure must not lose the measurements
            progress(f"families.png not written: {type(exc).__name__}: {exc}")
    if report.prediction is not None:
        try:
            sweep_path = folder / "bandwidth_occupancy.png"
            plot_bandwidth_occupancy(report.prediction, sweep_path)
            written["sweep_plot"] = sweep_path
        except Exception as exc:  # noqa: BLE001 - a plot failure must not lose the measurements
            progress(f"bandwidth_occupancy.png not written: {type(exc).__name__}: {exc}")
    return written
