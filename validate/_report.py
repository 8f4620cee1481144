"""The validation report: one schema-versioned model, written as JSON, Markdown and a plot."""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from occupancy._files import check_writable, write_atomic
from pydantic import BaseModel, ConfigDict, Field
from roofline import RooflineError

from ._ceilings import Ceilings
from ._device import DeviceComparison, DeviceInfo
from ._occupancy_check import OccupancyCheck
from ._prediction import PredictionCheck
from ._suite import KernelValidation, PredictionSummary

__all__ = ["REPORT_SCHEMA_VERSION", "ValidationReport", "render_markdown", "write_report"]

REPORT_SCHEMA_VERSION = 1


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


def _si(value: float | None, unit: str, scale: float = 1e9, digits: int = 1) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return f"{value / scale:,.{digits}f} {unit}"


def _pct(value: float | None, digits: int = 0) -> str:
    return "-" if value is None else f"{value:.{digits}f}%"


def _ms(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1e3:.3f}"


def render_markdown(report: ValidationReport) -> str:
    """The human report: device, ceilings, occupancy check, kernels, error summary."""
    if not isinstance(report, ValidationReport):
        raise TypeError(f"report must be a ValidationReport, not {type(report).__name__}")
    d, c = report.device, report.comparison
    lines = [
        f"# gpuroof validation: {d.name}",
        "",
        f"Schema {report.schema_version}, gpuroof {report.gpuroof_version}, {report.created_utc}, "
        f"{'quick' if report.quick else 'full'} run in {report.runtime_seconds:.1f} s (seed {report.seed}).",
        "",
        "## Device",
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

    lines += ["## Measured ceilings", "",
              "| ceiling | measured | datasheet | fraction | target | median time (ms) | spread |",
              "| --- | --- | --- | --- | --- | --- | --- |"]
    for item in report.ceilings.items:
        flops = item.unit == "flops_per_second"
        scale, unit = (1e12, "TFLOP/s") if flops else (1e9, "GB/s")
        target = "-" if item.target_fraction is None else (
            f"{item.target_fraction:.0%} {'met' if item.meets_target else 'MISSED'}")
        lines.append(
            f"| {item.name} | {_si(item.measured, unit, scale)} | {_si(item.datasheet, unit, scale)} | "
            f"{'-' if item.fraction_of_datasheet is None else f'{item.fraction_of_datasheet:.1%}'} | {target} | "
            f"{_ms(item.timing.median_seconds)} | {item.timing.spread:.1%} |")
    for name, error in report.ceilings.errors.items():
        lines.append(f"| {name} | failed: {error} | | | | | |")
    lines.append("")

    lines += ["## Occupancy check", ""]
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

    lines += ["## Kernels: prediction against measurement", "",
              "Predicted = roofline time lower bound; APE = |predicted - measured| / measured. "
              "Model = `roofline.predict` (occupancy, Little's law, waves) with this run's calibration.", "",
              "| kernel | regime | regs | measured (ms) | predicted (ms) | APE | predicted, measured ceilings (ms) "
              "| APE | model (ms) | APE | limiter | achieved | status |",
              "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for k in report.kernels:
        achieved = (_si(k.measured_flops_per_second, "GFLOP/s") if k.flops
                    else _si(k.measured_dram_bytes_per_second, "GB/s"))
        regs = "-" if k.resources is None else str(k.resources.registers_per_thread)
        status = k.status if k.status == "ok" else f"{k.status}: {(k.error or '').splitlines()[0][:120]}"
        lines.append(
            f"| {k.label} | {k.regime or '-'} | {regs} | {_ms(k.measured_seconds)} | {_ms(k.predicted_seconds)} | "
            f"{_pct(k.ape_percent)} | {_ms(k.predicted_seconds_measured_ceilings)} | "
            f"{_pct(k.ape_percent_measured_ceilings)} | {_ms(k.model_predicted_seconds)} | "
            f"{_pct(k.ape_percent_model)} | {k.model_limiter or '-'} | {achieved if k.status == 'ok' else '-'} | "
            f"{status} |")
    lines += ["", "## Prediction error by regime", "",
              "| regime | kernels | median APE | worst APE (kernel) | median APE, measured ceilings "
              "| worst APE, measured ceilings (kernel) | median APE, model | worst APE, model (kernel) |",
              "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for s in (*report.summary.regimes, report.summary.overall):
        lines.append(
            f"| {s.regime} | {s.kernels} | {_pct(s.median_ape_percent)} | "
            f"{_pct(s.worst_ape_percent)} ({s.worst_kernel or '-'}) | {_pct(s.median_ape_percent_measured_ceilings)} | "
            f"{_pct(s.worst_ape_percent_measured_ceilings)} ({s.worst_kernel_measured_ceilings or '-'}) | "
            f"{_pct(s.median_ape_percent_model)} | {_pct(s.worst_ape_percent_model)} ({s.worst_kernel_model or '-'}) |")
    if report.summary.failed:
        lines += ["", f"Failed kernels: {', '.join(report.summary.failed)}."]
    lines += ["", "![roofline](roofline.png)", ""]
    if report.prediction is not None:
        from ._prediction_report import render_prediction_markdown

        lines += [render_prediction_markdown(report.prediction, level=2),
                  "![bandwidth against occupancy](bandwidth_occupancy.png)", ""]
    elif report.prediction_error:
        lines += ["## Prediction check", "", f"Not run: {report.prediction_error}", ""]
    return "\n".join(lines)


def _plot_png(report: ValidationReport, models: Sequence[Any]) -> bytes | None:
    """roofline.plot_roofline with the measured ceilings and measured kernel points."""
    import io

    import roofline

    if report.comparison.database_gpu is None:
        return None
    names = {"dram_copy": "dram", "l2_read": "l2", "shared_read": "l1", "fp32_fma": "fp32",
             "fp64_fma": "fp64", "fp16_tensor": "fp16_tensor", "bf16_tensor": "bf16_tensor"}
    measured_ceilings = {names[c.name]: c.measured for c in report.ceilings.items if c.name in names}
    rows = {k.label: k for k in report.kernels}
    counts, points = [], {}
    for model in models:
        label = getattr(model, "label", None) or model.name
        row = rows.get(label)
        if not model.flops or row is None:
            continue
        counts.append(roofline.KernelCounts(flops=float(model.flops), dram_bytes=float(model.dram_bytes),
                                            l2_bytes=getattr(model, "l2_bytes", None),
                                            l1_bytes=getattr(model, "l1_bytes", None), name=label,
                                            precision=getattr(model, "precision", None)))
        if row.status == "ok" and row.measured_flops_per_second:
            points[label] = row.measured_flops_per_second
    figure = roofline.plot_roofline(
        report.comparison.database_gpu, counts, measured_ceilings=measured_ceilings, measured_points=points,
        title=f"{report.device.name}: measured (hollow) vs predicted; dashed roofs measured",
    )
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=150)
    return buffer.getvalue()


def write_report(report: ValidationReport, out: str | os.PathLike[str], models: Sequence[Any] = (),
                 progress: Callable[[str], None] = lambda message: None) -> dict[str, Path]:
    """Write report.json, report.md and roofline.png into ``out``, each atomically.

    Parameters
    ----------
    report : ValidationReport
    out : path
        Folder (created if missing).
    models : sequence of roofline.models.KernelModel
        The kernels, for the plot's points (no plot without them).

    Returns
    -------
    dict
        File kind ("json", "markdown", "plot") to path written. The plot is skipped, with
        a progress line, when it cannot be drawn.
    """
    if not isinstance(report, ValidationReport):
        raise TypeError(f"report must be a ValidationReport, not {type(report).__name__}")
    folder = check_writable(out, RooflineError, folder=True, name="out")
    written = {}
    json_path = folder / "report.json"
    write_atomic(json_path, report.model_dump_json(indent=2) + "\n", RooflineError)
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
    if report.prediction is not None:
        from ._prediction_report import calibration_json, plot_bandwidth_occupancy

        calibration_path = folder / "calibration.json"
        write_atomic(calibration_path, calibration_json(report.prediction), RooflineError)
        written["calibration"] = calibration_path
        try:
            sweep_path = folder / "bandwidth_occupancy.png"
            plot_bandwidth_occupancy(report.prediction, sweep_path)
            written["sweep_plot"] = sweep_path
        except Exception as exc:  # noqa: BLE001 - a plot failure must not lose the measurements
            progress(f"bandwidth_occupancy.png not written: {type(exc).__name__}: {exc}")
    return written
