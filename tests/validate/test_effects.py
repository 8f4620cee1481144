"""The memory-effect probes' parameters from their times (CPU), and the recorded families."""

from pathlib import Path

import pytest

import roofline
import validate
from validate._effects import derive_effects, effects_calibration

DATA = Path(__file__).parents[1] / "data"


@pytest.mark.parametrize(("other", "burst"), [(1.0, 64), (0.8, 64), (0.74, 32), (0.5, 32)])
def test_burst_from_the_two_reads(other, burst):
    e = derive_effects(sector_read_seconds=1e-3, other_sector_read_seconds=other * 1e-3, line_read_seconds=5e-4,
                       line_write_seconds=1e-3, buffer_bytes=1 << 30, dram_bytes_per_second=3e12,
                       l2_partial_store_seconds=1e-3, l2_partial_stores=10**6,
                       tree_level_points={128: 2.6e-8, 256: 3.2e-8, 512: 4.4e-8, 1024: 6.8e-8})
    assert e.dram_burst_bytes == burst
    lines = (1 << 30) // 128
    assert e.dram_read_line_bytes == pytest.approx(max(burst, 5e-4 * 3e12 / lines))
    assert e.dram_partial_write_line_bytes == pytest.approx(1e-3 * 3e12 / lines)
    # the line through the four block sizes: 20 ns + 1.5 ns per warp
    assert e.tree_level_seconds == pytest.approx(20e-9) and e.tree_level_warp_seconds == pytest.approx(1.5e-9)
    entries = effects_calibration(e)
    cal = roofline.calibration("H200").model_copy(update={k: v for k, (v, _) in entries.items()})
    assert cal.dram_burst_bytes == burst


@pytest.mark.parametrize(("gpu", "path"), [("H200", "families_h200.json"), ("H100-SXM", "families_h100-sxm.json")])
def test_strided_families_within_twenty_percent(gpu, path):
    """Recorded on the lent GPUs (2026-11-22); parameters from the probes, not from these kernels."""
    report = validate.family_report(str(DATA / path), gpu=gpu)
    table = {e.family: e for e in report.families}
    for family in ("strided_read", "strided_write"):
        assert table[family].predict_median_abs_percent < 15, table[family]
        assert table[family].predict_median_abs_percent < table[family].roofline_median_abs_percent / 3
        assert table[family].predict_worst_abs_percent < 20, table[family]


@pytest.mark.parametrize(("gpu", "path"), [("H200", "families_h200.json"), ("H100-SXM", "families_h100-sxm.json")])
def test_grid_stride_loads_in_flight_from_the_sass(gpu, path):
    """The recorded loads in flight (nvdisasm on NVRTC's sm_90 build) hold the grid-stride copies at
    low occupancy within 15% (median); the source's EPT alone put them 21-34% off."""
    report = validate.family_report(str(DATA / path), gpu=gpu)
    rows = [r for r in report.rows if r.record.family == "grid_stride_low_occupancy"]
    assert {r.record.loads_in_flight_per_thread for r in rows} == {4, 7}
    summary = next(e for e in report.families if e.family == "grid_stride_low_occupancy")
    assert summary.predict_median_abs_percent < 15


def test_build_case_keeps_the_callers_launch():
    """The GPU test that launches half a copy's grid to see the output check fail needs the
    half grid to reach the case (it was lost when build_case rebuilt models from parameters)."""
    import numpy as np

    from roofline import models
    from validate._kernels import build_case

    model = models.copy(1 << 16)
    half = model.model_copy(update={"launch": model.launch.model_copy(update={"grid": (128, 1, 1)})})
    assert build_case(half, np.random.default_rng(1)).grid == (128, 1, 1)
    assert build_case(model, np.random.default_rng(1)).grid == (256, 1, 1)
