"""Barrier-split load phases (`roofline._predict.terms.barriers`): a round trip per load phase,
in the block's life where it shares its SM, as a floor under the wave where it is alone on it.
Expected values are worked by hand from docs/prediction.md 'Barrier phases' and the packaged
H100 SXM calibration's figures."""

from __future__ import annotations

import occupancy
import pytest

import roofline
from roofline import Kernel
from roofline._predict.derive import Barriers
from roofline._predict.terms.barriers import BarrierWait, phase_round_trips, phase_seconds
from roofline.terms import disabled

GPU = "H100 SXM"
CAL = roofline.calibration(GPU)
LATENCY = CAL.idle_latency_seconds
SM_BANDWIDTH = CAL.sm_bandwidth_bytes_per_second


@pytest.mark.parametrize("phased, load_phases, expected", [
    (True, 64.0, 64.0),
    (True, None, 0.0),
    (False, 64.0, 0.0),
], ids=["phased", "phases-not-known", "no-barrier"])
def test_a_phased_block_waits_a_round_trip_per_load_phase(phased, load_phases, expected):
    barriers = Barriers(per_block=10.0, warps_per_block=8, phased=phased, load_phases=load_phases)
    assert phase_round_trips(barriers) == expected


@pytest.mark.parametrize("round_trips, chain, alone, expected", [
    # 64 round trips of 1 us beyond a chain of one: 63 us more, in the wave's floor or in the life
    (64.0, 1e-6, True, (0.0, 63e-6)),
    (64.0, 1e-6, False, (63e-6, 0.0)),
    # the loads' own waits already longer than the phases' round trips: nothing more
    (8.0, 10e-6, True, (0.0, 0.0)),
    (0.0, 1e-6, False, (0.0, 0.0)),
], ids=["alone", "shared-sm", "chain-longer", "no-phases"])
def test_the_phases_add_to_the_life_or_to_the_wave(round_trips, chain, alone, expected):
    wait = BarrierWait(seconds_per_block=0.0, round_trips=round_trips)
    assert phase_seconds(wait, 1e-6, chain, alone=alone) == pytest.approx(expected, abs=1e-15)


def _kernel(blocks: int, threads: int, **fields) -> Kernel:
    launch = occupancy.Launch(grid=blocks, block=threads, registers_per_thread=32)
    return Kernel(name="phased", flops=0.0, dram_bytes=blocks * 8192, launch=launch, **fields)


def _dram(kernel: Kernel) -> roofline.terms.Term:
    return next(t for t in roofline.predict(GPU, kernel).terms if t.name == "dram")


def _tree_seconds(barriers: int, warps: int) -> float:
    return barriers * (CAL.tree_level_seconds + warps * CAL.tree_level_warp_seconds)


def test_one_block_per_sm_in_step_takes_its_life_with_every_round_trip():
    # 132 blocks of 1024 threads, one per SM: 8 phases, 96 barriers, 8 KiB a block through its port
    dram = _dram(_kernel(132, 1024, barriers_per_block=96, load_phases_per_block=8))
    expected = 8 * LATENCY + 8192 / SM_BANDWIDTH + _tree_seconds(96, 32)
    assert dram.seconds == pytest.approx(expected, rel=1e-9)
    assert dram.limiter == "memory_latency"


def test_blocks_that_share_an_sm_live_the_round_trips():
    # 528 blocks of 256 threads, four per SM: the phases lengthen each block's life, no floor
    dram = _dram(_kernel(528, 256, barriers_per_block=96, load_phases_per_block=8))
    expected = 8 * LATENCY + 8192 / SM_BANDWIDTH + _tree_seconds(96, 8)
    assert dram.inputs["block_seconds"] == pytest.approx(expected, rel=1e-9)
    assert "lockstep_seconds" not in dram.inputs


@pytest.mark.parametrize("blocks, threads", [(132, 1024), (528, 256)], ids=["alone", "shared-sm"])
def test_without_the_rule_or_the_count_the_prediction_is_the_loads_rounds_alone(blocks, threads):
    plain = roofline.predict(GPU, _kernel(blocks, threads, barriers_per_block=96)).seconds
    phased = _kernel(blocks, threads, barriers_per_block=96, load_phases_per_block=8)
    assert roofline.predict(GPU, phased).seconds > plain
    with disabled({"load_phases"}):
        assert roofline.predict(GPU, phased).seconds == plain
    # phases without a barrier between them are no phases
    assert roofline.predict(GPU, _kernel(blocks, threads, load_phases_per_block=8)).seconds == \
        roofline.predict(GPU, _kernel(blocks, threads)).seconds


def _tile_loop(trips: int, load_phases: int | None) -> Kernel:
    """16 blocks of 256 threads (one a SM, alone) whose hot loop holds a ``BAR`` and one global
    load a trip, run ``trips`` times (the warp instructions say so), every load an L1 hit."""
    body = occupancy.SassCounts(total=10, global_loads=1, barriers=1)
    sass = occupancy.SassSummary(
        architecture="sm_90", disassembler="test", instructions=occupancy.SassCounts(total=30, global_loads=1,
                                                                                     barriers=1),
        loops=(occupancy.SassLoop(start_offset=0, end_offset=80, depth=1, instructions=body,
                                  global_loads_in_flight=1),),
        hot_loop=0, global_loads_in_flight_per_thread=1)
    resources = occupancy.KernelResources(kernel="tiles", architecture="sm_90", registers_per_thread=32, sass=sass)
    launch = occupancy.Launch(grid=16, block=256, registers_per_thread=32, resources=resources,
                              elements_per_thread=trips)
    warps = 16 * 8
    return Kernel(name="tiles", flops=0.0, dram_bytes=16 * 8192, instructions=warps * (20 + 10 * trips),
                  launch=launch, load_phases_per_block=load_phases)


@pytest.mark.parametrize("load_phases, adds", [(None, False), (1000, True)], ids=["sass-alone", "kernel-gives"])
def test_the_sass_barrier_loop_gives_no_load_phases_its_trips_are_waited(load_phases, adds):
    # the hot loop's 1000 trips are its phases, and the waits already take them one after the
    # other at their loads' level (an L1 hit here); a phase's idle DRAM round trip on top would
    # charge 1000 x idle latency for loads that never leave the SM. The kernel's own count adds
    # max(0, 1000 x idle latency - the chain) to the lone block's time in step.
    hits = roofline.ProfileCounts(l1_hit_rate=1.0, l2_hit_rate=1.0)
    kernel = _tile_loop(1000, load_phases)
    prediction = roofline.predict(GPU, kernel, measured=hits)
    with disabled({"load_phases"}):
        plain = roofline.predict(GPU, kernel, measured=hits)
    trips = next(t for t in prediction.terms if t.name == "trips").inputs
    assert trips["trips_per_warp"] == pytest.approx(1000)
    dram = next(t for t in prediction.terms if t.name == "dram").inputs
    chain = 1000 * trips["trip_latency_seconds"]
    if adds:
        assert dram["lockstep_seconds"] == pytest.approx(dram["block_seconds"] + 1000 * LATENCY - chain, rel=1e-9)
        assert prediction.seconds > plain.seconds
    else:
        assert "lockstep_seconds" not in dram
        assert prediction.seconds == plain.seconds
