"""One lane runs the hot loop (`roofline._predict.derive.hot_loop.lone_warp`, the ``lone_thread``
rule): nothing overlaps its trips, so each trip waits the level its load is served from plus the
loop's issue, one instruction a clock. The expected waits are computed here from the packaged
calibration's measured latencies and rates, by the derivation in docs/prediction.md ('One lane
runs the loop'), not read back from the model."""

from __future__ import annotations

import occupancy
import pytest
from occupancy import SassCounts, SassLoop, SassSummary

import roofline
from roofline._predict.rules import disabled

GPU = "H100 SXM"
CAL = roofline.calibration(GPU)
CLOCK_HZ = roofline.gpu(GPU).boost_clock_hz
BLOCKS, THREADS, TRIPS, BODY = 132, 256, 256, 9
#: one SM's share of the bandwidth with every SM in use, at most its own port's (`trip_latency`)
RATE = min(CAL.trip_bytes_per_second, CAL.sm_bandwidth_bytes_per_second)


def _sass(lone: str | None) -> SassSummary:
    # the probe's loop: 9 instructions, one 4-byte load, nothing else in flight
    loop = SassLoop(start_offset=272, end_offset=400, depth=1, global_loads_in_flight=1,
                    instructions=SassCounts(total=BODY, global_loads=1, fp32_add=1, branches=1))
    return SassSummary(architecture="sm_90", disassembler="test", instructions=SassCounts(total=29, global_loads=1),
                       loops=(loop,), hot_loop=0, global_loads_in_flight_per_thread=1, global_load_bytes=4,
                       lone_thread=lone)


def _kernel(lone: str | None, index, guard, blocks: int = BLOCKS) -> roofline.Kernel:
    resources = occupancy.KernelResources(kernel="walk", architecture="sm_90", registers_per_thread=16,
                                          sass=_sass(lone))
    launch = occupancy.Launch(grid=blocks, block=THREADS, registers_per_thread=16, resources=resources)
    traffic = roofline.memory.traffic(blocks, THREADS, [
        roofline.memory.Access(array="a", index=index, guard=guard, loop=TRIPS),
        roofline.memory.Access(array="y", index=lambda c: c.block_x, guard=guard, kind="store")])
    # a user's count by hand: the loop's warps are left to the SASS
    return traffic.model_copy(update={"loop_warp_share": None}).kernel(name="walk", flops=0.0, launch=launch)


def _grid_lane(c):
    return c.x == 0


def _block_lane(c):
    return c.thread_x == 0


def _dram_round(l1_miss: float) -> float:
    """A DRAM round of one lane's 4 bytes: the latency and the bytes that miss L1 through the port."""
    return CAL.dram_latency_seconds + 4 * l1_miss / RATE


def _fresh_line() -> float:
    return _dram_round(1.0)


def _row_walk() -> float:
    # 8 floats a sector: one load in 8 misses L1, and that one misses L2 too (a fresh sector)
    l1, l2 = CAL.l1_hit_latency_seconds, CAL.l2_hit_latency_seconds
    return l1 + (l2 - l1) / 8 + (_dram_round(1 / 8) - l2) / 8


#: (lone kind, index, guard, seconds of a round by the derivation)
CASES = {
    "grid_lane_fresh_lines": ("global", lambda c: c.loop * 32, _grid_lane, _fresh_line),
    "grid_lane_walks_a_row": ("global", lambda c: c.loop, _grid_lane, _row_walk),
    "block_lanes_own_lines": ("thread", lambda c: c.block_x * TRIPS * 32 + c.loop * 32, _block_lane, _fresh_line),
}


def _trips(p: roofline.Prediction) -> roofline.terms.Term:
    return next(t for t in p.terms if t.name == "trips")


@pytest.mark.parametrize(("lone", "index", "guard", "round_seconds"), CASES.values(), ids=CASES.keys())
def test_each_trip_of_one_lane_waits_its_level_and_its_issue(lone, index, guard, round_seconds):
    p = roofline.predict(GPU, _kernel(lone, index, guard), after_l2_flush=True)
    trips = _trips(p)
    assert trips.inputs["trips_per_warp"] == pytest.approx(TRIPS)
    assert trips.inputs["warps_sharing_a_line"] == 1.0
    assert trips.inputs["issue_seconds_per_trip"] == pytest.approx(BODY / CLOCK_HZ)
    assert trips.seconds == pytest.approx(TRIPS * (round_seconds() + BODY / CLOCK_HZ), rel=1e-9)
    # the other warps leave at once: the lone lanes' waits are the launch's memory time, the DRAM
    # term's block life adding only the block's few bytes through its SM's port
    overhead = sum(t.seconds for t in p.terms if t.side == "overhead")
    assert trips.seconds + overhead <= p.seconds <= 1.02 * (trips.seconds + overhead)


@pytest.mark.parametrize(("lone", "index", "guard", "blocks"), [
    (*CASES["grid_lane_fresh_lines"][:3], BLOCKS),
    (*CASES["grid_lane_walks_a_row"][:3], BLOCKS),
    (*CASES["block_lanes_own_lines"][:3], BLOCKS),
    (*CASES["block_lanes_own_lines"][:3], BLOCKS * 16 + 1),  # more than a wave: the rule does not apply
], ids=["grid_lane_fresh_lines", "grid_lane_walks_a_row", "block_lanes_own_lines", "block_lanes_two_waves"])
def test_with_the_rule_off_the_sass_exit_is_not_read(lone, index, guard, blocks):
    kernel = _kernel(lone, index, guard, blocks)
    plain = _kernel(None, index, guard, blocks)
    with disabled({"lone_thread"}):
        off = roofline.predict(GPU, kernel, after_l2_flush=True)
    assert off.seconds == roofline.predict(GPU, plain, after_l2_flush=True).seconds
    on = roofline.predict(GPU, kernel, after_l2_flush=True)
    assert (on.seconds == off.seconds) == (blocks > BLOCKS)
