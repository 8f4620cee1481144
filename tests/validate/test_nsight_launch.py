"""The launch-under-Nsight probe (validate.probes._nsight_launch) with a stand-in for ncu, and on a GPU."""

from __future__ import annotations

import csv
import io
import shutil
from pathlib import Path

import pytest

import roofline
from tests.validate.ncu_stand_in import ncu_runner
from validate.probes import NsightLaunchProbe
from validate.probes._nsight_launch import NsightLaunch, measure_nsight_launch

PROBE = NsightLaunchProbe()

USER = Path(__file__).parents[1] / "data" / "ncu" / "user_kernels.raw.csv"


def _export(durations_us: list[float]) -> str:
    """ncu's printed raw page: ==PROF== lines, the program's output, one row per empty launch."""
    rows = list(csv.reader(USER.open()))
    header, units, row = rows[0], rows[1], rows[2]
    column = header.index("gpu__time_duration.sum")
    assert units[column] == "us"
    out = io.StringIO()
    writer = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n")
    writer.writerows([header, units])
    for i, d in enumerate(durations_us):
        r = list(row)
        r[0], r[column] = str(i), f"{d:.2f}"
        writer.writerow(r)
    return "==PROF== Connected to process 7\n" + out.getvalue() + "==PROF== Disconnected from process 7\n"


def test_the_median_duration_under_ncu_becomes_the_calibration_figure():
    seen: list = []
    result = measure_nsight_launch(ncu="/opt/ncu", runner=ncu_runner(_export([1.5, 1.3, 1.4, 1.45, 1.35]), seen=seen))
    assert result.empty_kernel_seconds == pytest.approx(1.4e-6) and result.launches == 5
    assert result.spread_seconds == pytest.approx(0.2e-6)
    command = seen[0]
    assert command[0] == "/opt/ncu" and "--clock-control" in command and command[command.index("--clock-control") + 1] == "none"
    assert "gpu__time_duration.sum" in command and "validate.probes._nsight_launch" in command
    value, how = PROBE.figures(result)["nsight_empty_kernel_seconds"]
    assert value == result.empty_kernel_seconds and "median of 5" in how
    cal = roofline.calibration("H200").model_copy(update={"nsight_empty_kernel_seconds": value})
    assert "1.40 us" in roofline.nsight_calibration("H200", cal)[1]


@pytest.mark.parametrize("runner, ncu, reason", [
    (None, None, "ncu (Nsight Compute) is not on PATH"),
    (ncu_runner(stderr="==ERROR== ERR_NVGPUCTRPERM - The user does not have permission", code=1), "/opt/ncu",
     "cannot read the GPU's performance counters"),
    (ncu_runner(stderr="==ERROR== The application returned an error code (1).", code=1), "/opt/ncu",
     "ncu exited with 1: ==ERROR== The application returned an error code (1)."),
    (ncu_runner(stdout="==PROF== Disconnected\n"), "/opt/ncu", "ncu's output could not be read"),
], ids=["no-ncu", "counters-blocked", "ncu-fails", "no-table"])
def test_the_probe_is_skipped_with_a_stated_reason(monkeypatch, runner, ncu, reason):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    result = measure_nsight_launch(ncu=ncu, runner=runner or ncu_runner())
    assert result.empty_kernel_seconds is None and reason in result.skipped
    assert PROBE.figures(result) == {"nsight_empty_kernel_seconds": (None, PROBE.figures(result)[
        "nsight_empty_kernel_seconds"][1])}  # a None figure is left out of calibration.json
    assert any(reason.split(":")[0] in line for line in PROBE.render(result, "##", ""))


@pytest.mark.gpu
def test_on_the_device_the_empty_kernel_lasts_about_a_microsecond_under_nsight():
    """Issue 22: 1.3-1.5 us on an H200. Skips without ncu; a stated reason where counters are blocked."""
    if shutil.which("ncu") is None:
        pytest.skip("ncu is not on PATH")
    result = measure_nsight_launch()
    if result.skipped:
        pytest.skip(result.skipped)
    assert isinstance(result, NsightLaunch) and 0.5e-6 < result.empty_kernel_seconds < 4e-6
