"""The calibrate report: rendering and files, from a synthetic check (no GPU)."""

from __future__ import annotations

import json

import roofline
from validate.report._prediction_report import render_prediction_markdown, write_prediction_report
from validate.probes._prediction import PredictionCheck, SweepPoint, predict_sweep_point, sweep_configurations

N = 1 << 22


def _check() -> PredictionCheck:
    gpu = roofline.gpu("H100-SXM")
    cal = roofline.calibration(gpu)
    points = []
    for block, elements, limit in sweep_configurations()[:12]:
        p = SweepPoint(block_size=block, elements_per_thread=elements, blocks_per_sm_limit=limit,
                       dynamic_shared_memory=0, registers_per_thread=16, active_blocks_per_sm=2048 // block,
                       runtime_active_blocks_per_sm=None, measured_seconds=1e-4,
                       measured_bytes_per_second=8 * N / 1e-4)
        points.append(predict_sweep_point(gpu, cal, p, n=N))
    errors = [abs(p.error) for p in points]
    return PredictionCheck(gpu=gpu.name, calibration=cal.model_dump(), pointer_chase_latency_seconds=6e-7,
                           launch_overhead_seconds=2e-6, sweep=tuple(points), cliff=None,
                           within_tolerance=sum(e <= 0.15 for e in errors), points=len(points),
                           median_abs_error=sorted(errors)[len(errors) // 2], max_abs_error=max(errors))


def test_markdown_lists_every_point_and_parameter():
    check = _check()
    text = render_prediction_markdown(check)
    assert f"{check.within_tolerance} of {check.points}" in text
    table = [line for line in text.splitlines() if line.startswith("| ") and line.split("|")[1].strip().isdigit()]
    assert len(table) == check.points
    for name in ("idle_latency_seconds", "knee_sharpness", "block_dispatch_seconds"):
        assert f"| {name} |" in text


def test_files_written_and_calibration_loads_back(tmp_path):
    check = _check()
    files = write_prediction_report(check, tmp_path)
    assert {p.name for p in tmp_path.iterdir()} == {p.name for p in files.values()}
    assert roofline.load_calibration(files["calibration"]) == roofline.Calibration.model_validate(check.calibration)
    data = json.loads(files["json"].read_text())
    assert data["schema_version"] == 1
    assert [row["error"] for row in data["sweep"]] == [p.error for p in check.sweep]
    assert files["plot"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_validation_report_carries_the_prediction_check(tmp_path, make_report):
    """A full report with a prediction section writes its calibration and sweep plot too."""
    from validate.report import _report

    check = _check()
    report = make_report().model_copy(update={"prediction": check})
    files = _report.write_report(report, tmp_path)
    assert {"calibration", "sweep_plot"} <= set(files)
    md = files["markdown"].read_text()
    assert f"{check.within_tolerance} of {check.points}" in md
    assert "bandwidth_occupancy.png" in md
    data = json.loads(files["json"].read_text())["reports"][0]
    assert data["prediction"]["points"] == check.points
    assert _report.ValidationReport.model_validate(data) == report
