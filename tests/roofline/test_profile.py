"""roofline.profile_report on the real profiles of tests/data/ncu: gpuroof's occupancy against
Nsight's theoretical occupancy (the differential check of this module), the measured roofline
points, the prediction, the table and the plot."""

from __future__ import annotations

from pathlib import Path

import pytest

import occupancy
import roofline
from roofline import RooflineError

DATA = Path(__file__).resolve().parents[1] / "data" / "ncu"
PROFILES = {
    "torch": (DATA / "torch_roofline.raw.csv", 12),
    "suite": (DATA / "suite.raw_base.csv", 19),
    "user": (DATA / "user_kernels.raw.csv", 5),
    "sol-only": (DATA / "torch_sol.raw.csv", 12),
}


@pytest.fixture(scope="module")
def reports():
    return {name: roofline.profile_report(path) for name, (path, _) in PROFILES.items()}


@pytest.mark.parametrize("name", list(PROFILES), ids=list(PROFILES))
def test_occupancy_equals_nsight_theoretical_for_every_kernel(reports, name):
    report = reports[name]
    expected = PROFILES[name][1]
    assert report.gpu == "H200" and len(report.kernels) == expected
    # Nsight's theoretical occupancy (sm__maximum_warps_per_active_cycle_pct) is the oracle
    assert (report.occupancy_agreeing, report.occupancy_compared) == (expected, expected)
    for row in report.kernels:
        assert row.occupancy == pytest.approx(row.kernel.measured.theoretical_occupancy, abs=1e-4)


@pytest.mark.parametrize("name", ["torch", "suite", "user"], ids=["torch", "suite", "user"])
def test_per_resource_limits_equal_nsight_at_the_drivers_configuration(reports, name):
    """At the shared-memory configuration the driver chose, every per-resource limit equals
    Nsight's once capped at the 32 blocks an H200 SM holds."""
    for row in reports[name].kernels:
        assert row.limit_notes == (), (row.label, row.limit_notes)
        for resource, theirs in row.nsight_block_limits.items():
            mine = row.block_limits[resource]
            assert min(32, mine if mine is not None else 32) == theirs, (row.label, resource)


def test_the_drivers_smaller_configuration_is_reported(reports):
    softmax = next(r for r in reports["torch"].kernels if r.kernel.name == "cunn_SoftMaxForwardReg")
    assert softmax.kernel.shared_memory_config == 8 * 1024
    assert softmax.block_limits["shared_memory"] == 7
    assert softmax.block_limits_largest_config["shared_memory"] == 202
    text = roofline.format_profile_report(reports["torch"])
    assert "the driver chose a smaller shared-memory configuration" in text


def test_rows_are_sorted_by_time_share(reports):
    for report in reports.values():
        shares = [r.time_share for r in report.kernels]
        assert shares == sorted(shares, reverse=True)
        assert sum(shares) == pytest.approx(1.0)
        assert report.total_seconds == pytest.approx(sum(r.kernel.measured.duration_seconds for r in report.kernels))


def test_measured_points_and_prediction(reports):
    saxpy = next(r for r in reports["user"].kernels if r.kernel.name == "saxpy4")
    k = saxpy.kernel
    assert saxpy.precision == "fp32" and saxpy.flops == pytest.approx(2 * 2**26, rel=1e-3)
    dram = next(p for p in saxpy.points if p.level == "dram")
    assert dram.origin == "measured"
    assert dram.arithmetic_intensity == pytest.approx(saxpy.flops / k.dram_bytes)
    assert dram.flops_per_second == pytest.approx(saxpy.flops / k.measured.duration_seconds)
    assert saxpy.achieved_bytes_per_second["dram"] == pytest.approx(k.dram_bytes / k.measured.duration_seconds)
    assert saxpy.bound == "dram" and saxpy.predicted_limiter == "dram_bandwidth"
    assert saxpy.gap == pytest.approx(k.measured.duration_seconds / saxpy.predicted_seconds)
    # the roofline bound is a lower bound of the measured time
    assert saxpy.roofline_seconds < k.measured.duration_seconds


def test_cliffs_and_best_block_size_come_from_occupancy(reports):
    layer_norm = next(r for r in reports["torch"].kernels if r.kernel.name == "vectorized_layer_norm_kernel")
    k = layer_norm.kernel
    assert layer_norm.occupancy == 0.75 and layer_norm.limiters == ("registers",)
    direct = occupancy.cliffs("sm_90", threads_per_block=128, registers_per_thread=39, static_shared_memory=0,
                              dynamic_shared_memory=24, carveout=8)
    assert layer_norm.cliffs.registers.gain == direct.registers.gain == 7  # 32 registers: 100%
    best = occupancy.max_potential_block_size("sm_90", registers_per_thread=k.registers_per_thread,
                                              dynamic_shared_memory=24)
    assert layer_norm.best_block_size == best.block_size


def test_missing_sections_are_said(reports):
    row = reports["sol-only"].kernels[0]
    # no flops without the roofline charts, so no measured points; the DRAM bytes and warp
    # instructions come from SpeedOfLight's breakdown, so the launch is predicted
    assert row.occupancy is not None and row.points == () and row.predicted_seconds is not None
    assert any("sections missing from the profile" in n and "SpeedOfLight_HierarchicalSingleRooflineChart" in n
               for n in row.notes)
    assert {"l1_hit_rate", "l2_hit_rate", "achieved_occupancy"} <= {m.count for m in row.missing_counts}


def test_kernel_filter_and_gpu_override():
    report = roofline.profile_report(DATA / "torch_roofline.raw.csv", kernel="matmul", gpu="H100-SXM")
    assert report.gpu == "H100-SXM" and len(report.kernels) == 3
    with pytest.raises(RooflineError, match="matches no kernel"):
        roofline.profile_report(DATA / "torch_roofline.raw.csv", kernel="zzz")


def test_unknown_device_needs_gpu(tmp_path):
    text = (DATA / "user_kernels.raw.csv").read_text().replace("NVIDIA H200", "NVIDIA H999")
    path = tmp_path / "h999.csv"
    path.write_text(text)
    with pytest.raises(RooflineError, match=r"NVIDIA H999.*pass gpu="):
        roofline.profile_report(path)
    assert roofline.profile_report(path, gpu="H200").gpu == "H200"


def test_table_and_markdown(reports):
    text = roofline.format_profile_report(reports["torch"])
    lines = text.splitlines()
    assert lines[0].endswith("occupancy equal to Nsight's theoretical for 12 of 12")
    assert lines[4].split()[1] == "Kernel2"  # the longest kernel first
    assert "launched in clusters of (2, 1, 1)" in text
    md = roofline.format_profile_report(reports["torch"], markdown=True)
    assert md.count("\n| ") == 13


def test_profile_plot_has_every_kernel(reports, tmp_path):
    pytest.importorskip("matplotlib")
    chart = roofline.chart.profile_chart(reports["torch"])
    assert {c.name for c in chart.ceilings if c.kind == "compute"} == {
        "fp32", "bf16_tensor", "fp64_tensor", "fp16_tensor", "fp16"}
    fig = roofline.chart.plot_roofline(chart, path=tmp_path / "p.png")
    labels = [t.get_text() for t in fig.axes[1].get_yticklabels()]
    assert len(labels) == 12 and labels[0].startswith("1. Kernel2") and labels[-1].startswith("12. ")
    assert {p.origin for p in chart.points} == {"measured", "model"}
    assert (tmp_path / "p.png").read_bytes().startswith(b"\x89PNG")
