"""The instruction roofline (Ding & Williams) of real H200 profiles (tests/data/ncu)."""

from __future__ import annotations

from pathlib import Path

import pytest

import roofline
from roofline import RooflineError

DATA = Path(__file__).parents[1] / "data" / "ncu"


@pytest.fixture(scope="module", params=["user_kernels.raw.csv", "torch_roofline.raw.csv"])
def report(request):
    return roofline.profile_report(DATA / request.param)


def test_the_issue_ceiling_is_sms_times_schedulers_times_the_profile_s_clock(report):
    ir = roofline.instructions.instruction_roofline(report)
    h200 = roofline.gpu("H200")
    clocks = sorted(r.kernel.measured.sm_clock_hz for r in report.kernels)
    assert ir.issue_rate == pytest.approx(h200.sm_count * 4 * clocks[len(clocks) // 2])
    dram = next(c for c in ir.ceilings if c.name == "dram")
    assert dram.value == pytest.approx(h200.memory_bandwidth / 32)
    assert roofline.instructions.instruction_roofline(report, sm_clock_hz=1e9).issue_rate == h200.sm_count * 4 * 1e9


def test_each_kernel_sits_at_its_counts_and_under_the_issue_ceiling(report):
    ir = roofline.instructions.instruction_roofline(report)
    by_label = {r.label: r.kernel for r in report.kernels}
    assert {p.kernel for p in ir.points} == set(by_label)  # every kernel: Nsight counted its instructions
    for p in ir.points:
        k = by_label[p.kernel]
        assert p.instructions_per_second == pytest.approx(k.measured.instructions / k.measured.duration_seconds)
        nbytes = {"dram": k.dram_bytes, "l2": k.measured.l2_sector_bytes or k.l2_bytes, "l1": k.l1_bytes}[p.level]
        assert p.instructions_per_transaction == pytest.approx(k.measured.instructions * 32 / nbytes)
        # a measured issue rate above what the schedulers can issue at the kernel's clock would be a misread count
        assert p.instructions_per_second <= ir.issue_rate * k.measured.sm_clock_hz / sorted(
            r.kernel.measured.sm_clock_hz for r in report.kernels)[len(report.kernels) // 2] * 1.001


def test_the_plot_draws_the_instruction_panel_beside_the_flop_roofline(report, tmp_path):
    ir = roofline.instructions.instruction_roofline(report)
    fig = roofline.chart.plot_roofline(roofline.chart.profile_chart(report), path=tmp_path / "r.png", instructions=ir)
    gids = {line.get_gid() for ax in fig.axes for line in ax.get_lines()}
    assert {"instruction-ceiling:issue", "instruction-ceiling:dram", "instruction-ceiling:l2"} <= gids
    assert {f"instruction-kernel:{r.label}" for r in report.kernels} <= gids
    assert len(fig.axes) == 3 and (tmp_path / "r.png").stat().st_size > 50_000
    with pytest.raises(RooflineError, match="leave ax out"):
        roofline.chart.plot_roofline(roofline.chart.profile_chart(report), ax=fig.axes[0], instructions=ir)
    with pytest.raises(TypeError, match="InstructionRoofline"):
        roofline.chart.plot_roofline(roofline.chart.profile_chart(report), instructions="x")
