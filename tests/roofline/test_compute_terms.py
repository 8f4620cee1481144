"""The compute-side terms of the time model (issue 23): each against the case it was made for."""

import re

import pytest

import occupancy
import roofline
from occupancy import SassCounts, SassLoop, SassSummary
from roofline._predict import loads_from_instructions
from roofline._predict import overlap

CAL = roofline.calibration("H200")


def _sass(loop_total=10, loop_loads=2, in_flight=2, total=30, loads=3):
    body = SassCounts(total=loop_total, global_loads=loop_loads)
    return SassSummary(architecture="sm_90", disassembler="x", instructions=SassCounts(total=total, global_loads=loads),
                       loops=(SassLoop(start_offset=0, end_offset=80, depth=1, instructions=body,
                                       global_loads_in_flight=in_flight),),
                       hot_loop=0, global_loads_in_flight_per_thread=in_flight)


@pytest.mark.parametrize(("per_warp", "trips"), [(20.0, 0.0), (120.0, 10.0), (1020.0, 100.0), (5.0, 0.0)])
def test_trips_from_the_instruction_count(per_warp, trips):
    launch = occupancy.Launch(grid=4, block=64)  # 8 warps
    loads, got = loads_from_instructions(_sass(), per_warp * 8, launch)
    assert got == pytest.approx(trips) and loads == pytest.approx(1 + 2 * trips)


@pytest.mark.parametrize(("m", "c", "p", "want"), [(1.0, 1.0, 2.0, 2 ** 0.5), (1.0, 0.0, 2.0, 1.0),
                                                   (3.0, 1.0, None, 3.0), (1e-300, 1e-300, 2.31, 1e-300 * 1.35)])
def test_overlap_soft_maximum(m, c, p, want):
    assert overlap(m, c, p) == pytest.approx(want, rel=1e-3)


def _profiled(grid, block, instructions, flops=0.0, precision=None, sass=None, cal=CAL, dram=1e6, l2=None, l1=None):
    resources = None if sass is None else occupancy.KernelResources(
        kernel="k", architecture="sm_90", registers_per_thread=32, static_shared_memory=0, sass=sass)
    launch = roofline.measured_launch(grid, block, registers_per_thread=32, resources=resources)
    k = roofline.Kernel(name="k", flops=flops, precision=precision, dram_bytes=dram, l2_bytes=l2, l1_bytes=l1,
                        instructions=instructions, launch=launch)
    return roofline.predict("H200", k, calibration=cal)


def test_one_block_issues_on_one_sm():
    """A grid of one block runs on one SM's schedulers, not on all 132 SMs'."""
    one = _profiled(1, 256, 1e6).terms
    term = {t.name: t for t in one}["instructions"]
    # 8 warps on one SM: 4 schedulers at 2 warps each, each busy 2 of every fma_latency_cycles cycles
    assert term.seconds == pytest.approx(1e6 / (4 * 1.98e9 * min(1.0, 2 / CAL.fma_latency_cycles)))


def test_tensor_flops_ignore_the_fma_latency():
    """8 warps per SM: the FMA rule would halve the rate; the tensor pipe runs at its sustained share."""
    p = _profiled(132 * 4, 256, None, flops=1e12, precision="fp16_tensor")
    term = {t.name: t for t in p.terms}["arithmetic"]
    peak = roofline.gpu("H200").peak_flops("fp16_tensor") * CAL.tensor_rate_fraction
    assert term.inputs["issue_efficiency"] == 1.0
    assert term.seconds == pytest.approx(1e12 / peak, rel=0.01)


@pytest.mark.parametrize(("dram", "l2", "l1", "level"), [(1e8, 1e8, 1e8, "dram"), (1e3, 1e8, 1e8, "l2"),
                                                         (1e3, 1e3, 1e11, "l1")])
def test_trip_waits_at_the_level_the_loads_hit(dram, l2, l1, level):
    """A loop of 100 trips per warp, loads hitting DRAM, L2 or L1 by the kernel's bytes at each level."""
    sass = _sass()
    p = _profiled(132, 256, 132 * 8 * (20 + 100 * 10), sass=sass, dram=dram, l2=l2, l1=l1)
    term = {t.name: t for t in p.terms}["trips"]
    assert term.inputs["trips_per_warp"] == pytest.approx(100)
    latency = term.inputs["trip_latency_seconds"]
    expected = {"dram": CAL.trip_latency_seconds or CAL.dram_latency_seconds, "l2": CAL.l2_hit_latency_seconds, "l1": CAL.l1_hit_latency_seconds}
    assert latency == pytest.approx(expected[level], rel=0.3 if level == "dram" else 0.05)
    assert term.seconds == pytest.approx(100 * latency)


@pytest.mark.parametrize("memory, compute, exponent, message", [
    (float("nan"), 1.0, 2.0, "memory_seconds=nan must be > 0 and finite"),
    (1.0, -1.0, None, "compute_seconds=-1.0 must be > 0 and finite"),
    (1.0, 1.0, 0.5, "exponent=0.5 must be >= 1"),
    (1.0, 1.0, float("inf"), "exponent=inf must be > 0 and finite"),
], ids=["nan-side", "negative-side", "exponent-below-1", "infinite-exponent"])
def test_overlap_refuses_what_has_no_time(memory, compute, exponent, message):
    with pytest.raises(roofline.RooflineError, match=re.escape(message)):
        roofline.terms.overlap(memory, compute, exponent)
    assert roofline.terms.overlap(1.0, 1.0, 1.0) == 2.0 and roofline.terms.overlap(1.0, 3.0, None) == 3.0
