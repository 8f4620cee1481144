"""What a profile's memory and instruction counts add to the time model (issue 23): L1
data-pipe wavefronts, hit rates, partial stores, whole loop nests, and the busiest SM."""

from __future__ import annotations

import math

import pytest

import occupancy
import roofline
from occupancy import Launch, SassCounts, SassLoop, SassSummary
from roofline._adapters import counts_from
from roofline._ncu_metrics import Reader, read_kernel
from roofline._predict import (
    barriers_from_instructions,
    duplicate_warps,
    kernel_misses,
    loads_from_instructions,
    parameters,
    shared_lines,
    trip_latency,
)

CAL = roofline.calibration("H200")
SMS = roofline.gpu("H200").sm_count


def _round_latency(measured, calibration, bytes_per_block_trip, loads_per_round=1, **shared):
    """`trip_latency` of one round of loads on an H200, its misses the hit rates a profile `measured`."""
    waits = parameters(calibration, roofline.gpu("H200")).waits
    misses = kernel_misses(roofline.Kernel(flops=0, dram_bytes=1), measured)
    return trip_latency(waits, misses, bytes_per_block_trip, loads_per_round, **shared)


def _profiled(metrics: dict[str, float], grid=(1024, 1, 1), block=(256, 1, 1)) -> roofline.NcuKernel:
    """An NcuKernel read from `metrics` (base units) the way load_ncu reads a raw page."""
    base = {"gpu__time_duration.sum": (1e5, "ns"), "dram__bytes_read.sum": (1 << 20, "byte"),
            "launch__grid_size": (float(math.prod(grid)), ""), "launch__block_size": (float(math.prod(block)), ""),
            "Grid Size": (str(grid), ""), "Block Size": (str(block), ""),
            "dram__bytes_write.sum": (0.0, "byte")}
    values = {**base, **{k: v if isinstance(v, tuple) else (v, "") for k, v in metrics.items()}}
    reader = Reader(lambda name: values.get(name), "test")
    k = read_kernel(reader, index=0, demangled="k(float*)", nvtx=None, missing_cc=None)
    return k.model_copy(update={"grid": grid, "block": block})


def _term(p, name):
    return next(t for t in p.terms if t.name == name)


# ------------------------------------------------------------- L1 wavefronts

@pytest.mark.parametrize(("wavefronts", "writeback_bytes", "l1_bytes"), [
    (None, 4096.0, 4096.0),        # no wavefront count: Nsight's writeback bytes, as before
    (1000.0, None, 128_000.0),     # a pass moves up to one 128-byte line
    (1000.0, 1e6, 1e6),            # never less than the writeback bytes
    (1e6, 4096.0, 128e6),          # an access spread over 32 lines: 32 passes each
])
def test_l1_bytes_of_a_profile_are_its_wavefronts(wavefronts, writeback_bytes, l1_bytes):
    k = roofline.NcuKernel(id=0, name="k", demangled_name="k", grid=(1, 1, 1), block=(32, 1, 1), flops={"fp32": 0.0},
                           dram_bytes=1.0, l1_bytes=writeback_bytes,
                           measured=roofline.ProfileCounts(l1_wavefronts=wavefronts))
    assert counts_from(k).l1_bytes == pytest.approx(l1_bytes)


def test_load_ncu_reads_the_wavefronts_hits_and_stores():
    k = _profiled({"l1tex__data_pipe_lsu_wavefronts.sum": 5e6,
                   "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": 400.0,
                   "l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum": 100.0,
                   "lts__t_sectors_srcunit_tex.sum": 1000.0, "lts__t_sectors_srcunit_tex_lookup_hit.sum": 1000.0,
                   "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum": 3200.0,
                   "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum": 100.0})
    m = k.measured
    assert (m.l1_wavefronts, m.l1_hit_rate, m.l2_hit_rate) == (5e6, 0.25, 1.0)
    assert (m.global_store_sectors, m.global_store_requests) == (3200.0, 100.0)
    kernel = counts_from(k)
    assert kernel.l2_partial_store_sectors == 3200.0  # 32 sectors a request: at most 16 bytes of each written


def _sass_of_width(width: int) -> SassSummary:
    return SassSummary(architecture="sm_90", disassembler="test", instructions=SassCounts(total=10, global_loads=1),
                       global_load_bytes=width, global_loads_in_flight_per_thread=1)


@pytest.mark.parametrize(("width", "sectors_per_request", "partial"), [
    (4, 4, False), (4, 4.1, False), (4, 8, True), (4, 32, True),   # 4-byte stores fill 4 sectors a request
    (16, 16, False), (8, 8, False), (8, 16, True),                 # float4 and double stores fill 16 and 8
    (None, 8, False), (None, 16, False), (None, 32, True),         # no SASS: only what is partial at any width
])
def test_store_sectors_are_partial_where_a_request_spreads_past_its_bytes(width, sectors_per_request, partial):
    k = roofline.NcuKernel(id=0, name="k", demangled_name="k", grid=(1, 1, 1), block=(32, 1, 1), flops={"fp32": 0.0},
                           dram_bytes=1.0, measured=roofline.ProfileCounts(
                               global_store_sectors=100.0 * sectors_per_request, global_store_requests=100.0), sass=None if width is None else _sass_of_width(width))
    expected = 100.0 * sectors_per_request if partial else 0.0
    assert counts_from(k).l2_partial_store_sectors == pytest.approx(expected)


def test_wavefronts_bind_an_uncoalesced_loop_on_the_busiest_sm():
    launch = Launch(grid=4096, block=256, registers_per_thread=32)
    wavefronts = 1e9  # an access spread over 32 lines a request, many times
    k = roofline.Kernel(flops=0, dram_bytes=1 << 20, l1_bytes=128 * wavefronts, launch=launch)
    p = roofline.predict("H200", k, calibration=CAL)
    l1 = _term(p, "l1_shared")
    busiest = math.ceil(4096 / SMS) * SMS / 4096
    assert l1.seconds == pytest.approx(128 * wavefronts * busiest / roofline.gpu("H200").bandwidth("l1"))
    assert p.binding == "l1_shared" and p.limiter == "cache_bandwidth"


@pytest.mark.parametrize(("blocks", "factor"), [(SMS, 1.0), (2 * SMS, 1.0), (1, SMS), (SMS + 1, 2 * SMS / (SMS + 1))])
def test_the_busiest_sm_runs_its_share_of_the_l1_and_partial_store_work(blocks, factor):
    launch = Launch(grid=blocks, block=256, registers_per_thread=32)
    k = roofline.Kernel(flops=0, dram_bytes=1 << 20, l1_bytes=1e9, l2_partial_store_sectors=1e7, launch=launch)
    cal = CAL.model_copy(update={"sm_partial_store_sectors_per_second": None})
    p = roofline.predict("H200", k, calibration=cal)
    assert _term(p, "l1_shared").inputs["busiest_sm_factor"] == pytest.approx(factor)
    assert _term(p, "l2_partial_stores").seconds == pytest.approx(
        1e7 * factor / CAL.l2_partial_store_sectors_per_second)


GPU_RATE = 58.2e9
@pytest.mark.parametrize(("blocks", "alone", "per_sm"), [
    (SMS, None, GPU_RATE / SMS),            # no one-SM figure: every SM's share, as before
    (SMS, 0.98e9, GPU_RATE / SMS),          # every SM storing: the GPU's rate binds
    (1, 0.98e9, 0.98e9),                    # one SM alone: its own port
    (16, 0.98e9, 0.98e9),                   # 16 SMs' share (3.6 G/s each) is more than a port moves
    (100, 0.98e9, GPU_RATE / 100),          # 100 SMs: 0.58 G/s each
])
def test_partial_stores_of_few_sms_go_at_their_port(blocks, alone, per_sm):
    launch = Launch(grid=blocks, block=256, registers_per_thread=32)
    k = roofline.Kernel(flops=0, dram_bytes=1 << 20, l2_partial_store_sectors=1e7, launch=launch)
    cal = CAL.model_copy(update={"sm_partial_store_sectors_per_second": alone,
                                 "l2_partial_store_sectors_per_second": GPU_RATE})
    term = _term(roofline.predict("H200", k, calibration=cal), "l2_partial_stores")
    busiest = 1e7 * math.ceil(blocks / SMS) / blocks  # sectors on the busiest SM
    assert term.inputs["sm_partial_store_sectors_per_second"] == pytest.approx(per_sm)
    assert term.seconds == pytest.approx(busiest / per_sm)


# ------------------------------------------------------------- loops whose trips follow the thread's index

def _triangle_sass(follows: str | None, per_index: float = 1.0) -> SassSummary:
    body = SassCounts(total=12, global_loads=2, global_stores=1, fp32_fma=1)
    loop = SassLoop(start_offset=0x100, end_offset=0x200, depth=1, instructions=body, global_loads_in_flight=2,
                    index_trips=follows, trips_per_index=per_index if follows else None)
    return SassSummary(architecture="sm_90", disassembler="x", instructions=SassCounts(total=30, global_loads=2,
                       global_stores=1, fp32_fma=1), loops=(loop,), hot_loop=0, global_loads_in_flight_per_thread=2)


def _brute_shares(follows, grid, block, sms):
    """The busiest SM's factor and the slowest warp's over the mean, thread by thread."""
    gx, bx = grid, block
    values = {"global": gx * bx, "thread": bx, "block": gx}[follows]
    warps = []  # (block, warp trips)
    for b in range(gx):
        for w in range(-(-bx // 32)):
            lanes = range(w * 32, min(bx, w * 32 + 32))
            index = {"global": lambda t: b * bx + t, "thread": lambda t: t, "block": lambda t: b}[follows]
            warps.append((b, max(values - index(t) for t in lanes)))
    on_sm = [0.0] * sms
    for b, trips in warps:
        on_sm[b % sms] += trips
    total = sum(t for _, t in warps)
    return max(on_sm) * sms / total, max(t for _, t in warps) / (total / len(warps))


@pytest.mark.parametrize(("follows", "grid", "block"), [
    ("global", 8, 64), ("global", 16, 32), ("global", 1, 512), ("global", 200, 64),
    ("thread", 8, 256), ("block", 64, 128),
])
def test_a_triangle_weighs_the_busiest_sm_and_the_slowest_warp(follows, grid, block):
    launch = Launch(grid=grid, block=block, registers_per_thread=32,
                    resources=occupancy.KernelResources(kernel="t", architecture="sm_90", registers_per_thread=32,
                                                        sass=_triangle_sass(follows)))
    k = roofline.Kernel(flops=0, dram_bytes=1 << 20, l1_bytes=1e9, l2_partial_store_sectors=1e7, launch=launch,
                        instructions=1e6)
    p = roofline.predict("H200", k, calibration=CAL)
    factor, slowest = _brute_shares(follows, grid, block, SMS)
    assert _term(p, "l1_shared").inputs["busiest_sm_factor"] == pytest.approx(factor)
    assert _term(p, "trips").inputs["slowest_warp_factor"] == pytest.approx(slowest)
    flat = roofline.predict("H200", k.model_copy(update={"launch": launch.model_copy(update={
        "resources": launch.resources.model_copy(update={"sass": _triangle_sass(None)})})}), calibration=CAL)
    assert _term(flat, "trips").seconds > 0
    assert _term(p, "trips").seconds == pytest.approx(slowest * _term(flat, "trips").seconds)
    assert slowest > 1.3  # a triangle over 32 or more index values: its slowest warp is well past the mean


@pytest.mark.parametrize(("grid", "block", "per_index", "why"), [
    (8, 256, 1 / 256, "a block-stride remainder: under TRIANGLE_TRIPS trips apart"),
    (4 * SMS * 8, 256, 1.0, "more blocks than one wave holds: the scheduler evens them out"),
])
def test_no_triangle_where_the_trips_barely_differ(grid, block, per_index, why):
    launch = Launch(grid=grid, block=block, registers_per_thread=32,
                    resources=occupancy.KernelResources(kernel="t", architecture="sm_90", registers_per_thread=32,
                                                        sass=_triangle_sass("thread", per_index)))
    k = roofline.Kernel(flops=0, dram_bytes=1 << 20, l1_bytes=1e9, launch=launch, instructions=1e6)
    p = roofline.predict("H200", k, calibration=CAL)
    assert _term(p, "trips").inputs["slowest_warp_factor"] == 1.0, why
    assert _term(p, "l1_shared").inputs["busiest_sm_factor"] == pytest.approx(math.ceil(grid / SMS) * SMS / grid)


@pytest.mark.parametrize("rate", [-0.1, 1.5, math.nan])
def test_hit_rates_are_shares(rate):
    with pytest.raises(ValueError, match="l1_hit_rate"):
        roofline.ProfileCounts(l1_hit_rate=rate)


# ------------------------------------------------------------- a round waits for its slowest load

@pytest.mark.parametrize(("l1_hit", "l2_hit", "loads", "level"), [
    (1.0, 1.0, 4, "l1"),        # everything hits L1
    (0.5, 1.0, 2, "l2"),        # two loads, half the sectors miss L1: the round reaches L2
    (0.8, 1.0, 1, None),        # one load missing L1 a fifth of the time: between L1 and L2
    (0.0, 0.0, 1, "dram"),      # every load misses both
    (0.2, 0.2, 2, "dram"),      # of two loads' sectors 80 % miss L1 and 80 % of those L2: the round reaches DRAM
])
def test_a_round_waits_for_the_deepest_level_one_of_its_loads_reaches(l1_hit, l2_hit, loads, level):
    k = roofline.ProfileCounts(l1_hit_rate=l1_hit, l2_hit_rate=l2_hit)
    seconds = _round_latency(k, CAL, 0.0, loads)
    latency = {"l1": CAL.l1_hit_latency_seconds, "l2": CAL.l2_hit_latency_seconds, "dram": CAL.dram_latency_seconds}
    if level is None:
        assert latency["l1"] < seconds < latency["l2"]
        assert seconds == pytest.approx(latency["l1"] + 0.2 * (latency["l2"] - latency["l1"]))
    else:
        assert seconds == pytest.approx(latency[level])


# ------------------------------------------------------------- trips of a loop nest

def _nest(outer_own: int, inner: int, inner_fma: int, loads: int) -> SassSummary:
    inner_counts = SassCounts(total=inner, fp32_fma=inner_fma)
    hot = SassCounts(total=outer_own + inner, global_loads=loads, fp32_fma=inner_fma)
    return SassSummary(
        architecture="sm_90", disassembler="test", instructions=SassCounts(total=outer_own + inner + 40,
                                                                           global_loads=loads, fp32_fma=inner_fma),
        loops=(SassLoop(start_offset=100, end_offset=4000, depth=1, instructions=hot, global_loads_in_flight=loads),
               SassLoop(start_offset=1000, end_offset=3000, depth=2, instructions=inner_counts,
                        global_loads_in_flight=0)),
        hot_loop=0, global_loads_in_flight_per_thread=loads)


@pytest.mark.parametrize(("trips", "inner_per_trip"), [(256, 16), (64, 1), (1000, 3)])
def test_a_hot_loop_around_an_inner_loop_gets_its_own_trips(trips, inner_per_trip):
    # a tiled GEMM: the outer loop loads a tile, the inner loop (no loads) does the FMAs
    sass = _nest(outer_own=88, inner=143, inner_fma=128, loads=8)
    launch = Launch(grid=64, block=128)
    warps = 64 * 4
    per_warp = 40 + trips * 88 + trips * inner_per_trip * 143
    flops_per_thread = 2.0 * 128 * trips * inner_per_trip
    loads, found = loads_from_instructions(sass, per_warp * warps, launch, flops_per_thread=flops_per_thread)
    assert found == pytest.approx(trips)
    assert loads == pytest.approx(8 * trips)
    # without the flops the inner loop's repeats count as the hot loop's: far too many trips
    _, alone = loads_from_instructions(sass, per_warp * warps, launch)
    assert alone > trips or inner_per_trip == 1


def test_the_dram_term_waits_the_hot_loops_rounds_where_they_hit():
    # a thread walks a column: one load a trip, every load a new line from DRAM (hit rates 0)
    sass = SassSummary(architecture="sm_90", disassembler="test",
                       instructions=SassCounts(total=30, global_loads=1),
                       loops=(SassLoop(start_offset=0, end_offset=80, depth=1,
                                       instructions=SassCounts(total=10, global_loads=1), global_loads_in_flight=1),),
                       hot_loop=0, global_loads_in_flight_per_thread=1)
    resources = occupancy.KernelResources(kernel="walk", architecture="sm_90", registers_per_thread=32, sass=sass)
    trips = 1000
    launch = Launch(grid=16, block=256, registers_per_thread=32, resources=resources, elements_per_thread=trips)
    warps = 16 * 8
    base = dict(flops=0, dram_bytes=32 * trips * warps * 8, instructions=warps * (20 + 10 * trips), launch=launch)
    missing = roofline.predict("H200", roofline.Kernel(**base), calibration=CAL,
                               measured=roofline.ProfileCounts(l1_hit_rate=0.0, l2_hit_rate=0.0))
    hitting = roofline.predict("H200", roofline.Kernel(**base), calibration=CAL,
                               measured=roofline.ProfileCounts(l1_hit_rate=1.0, l2_hit_rate=1.0))
    waits = _term(missing, "trips").inputs
    assert waits["trips_per_warp"] == pytest.approx(trips)
    # each round costs a DRAM trip when every load misses, an L1 hit when every load hits
    assert waits["trip_latency_seconds"] > CAL.dram_latency_seconds > _term(hitting, "trips").inputs[
        "trip_latency_seconds"] == pytest.approx(CAL.l1_hit_latency_seconds)
    assert missing.seconds > trips * CAL.dram_latency_seconds > hitting.seconds


# ------------------------------------------------------------- warps that duplicate one another

def _reads(components, block, loads=1):
    sass = SassSummary(architecture="sm_90", disassembler="test", instructions=SassCounts(total=30, global_loads=loads),
                       loops=(SassLoop(start_offset=0, end_offset=80, depth=1,
                                       instructions=SassCounts(total=10, global_loads=loads),
                                       global_loads_in_flight=loads),),
                       hot_loop=0, global_loads_in_flight_per_thread=loads, thread_index_components=components)
    resources = occupancy.KernelResources(kernel="row", architecture="sm_90", registers_per_thread=32, sass=sass)
    return Launch(grid=16, block=block, registers_per_thread=32, resources=resources)


@pytest.mark.parametrize(("components", "block", "duplicates"), [
    (("x",), (32, 8, 1), 8.0),          # a row kernel at 32 x 8: eight copies of one warp
    (("x",), (64, 4, 1), 4.0),          # two distinct warps (x 0-31, 32-63), each four times
    (("x",), (16, 16, 1), 8.0),         # every warp holds x 0-15 twice: all eight alike
    (("x",), (256, 1, 1), 1.0),         # one row of threads: no copies
    (("x", "y"), (32, 8, 1), 1.0),      # y read: every warp its own
    (("x", "z"), (32, 2, 4), 2.0),      # y unread: pairs of warps alike
    ((), (32, 4, 1), 4.0),              # no thread index at all
    (None, (32, 8, 1), 1.0),            # a summary that does not say: none assumed
])
def test_duplicate_warps_of_a_block(components, block, duplicates):
    assert duplicate_warps(_reads(components, block)) == duplicates


def _sourced(sources, block, grid):
    sass = SassSummary(architecture="sm_90", disassembler="test", instructions=SassCounts(total=30, global_loads=2),
                       global_loads_in_flight_per_thread=2, thread_index_components=("x", "y"),
                       hot_loop_load_sources=sources)
    resources = occupancy.KernelResources(kernel="mm", architecture="sm_90", registers_per_thread=32, sass=sass)
    return Launch(grid=grid, block=block, registers_per_thread=32, resources=resources)


A_ROW = ("y", "ctaid.y", "loop")                   # a[i][k]: the next word next trip
B_COLUMN = ("x", "ctaid.x", "loop", "stride")      # b[k][j]: a new row every trip


@pytest.mark.parametrize(("sources", "block", "grid", "resident", "shared"), [
    # naive matrix product at 32 x 8 on a 16 x 64 grid, one wave: b's line is one for the 8 warps
    # of a block and for the 64 blocks of a column of the grid
    ((A_ROW, B_COLUMN), (32, 8, 1), (16, 64, 1), 1056, (8.0, 64.0)),
    # 16 x 16: two rows of threads per warp, still 8 warps to a line; a wave of 132 blocks of a
    # 32-wide grid holds 4.125 rows of it: 132 / 32 distinct lines
    ((A_ROW, B_COLUMN), (16, 16, 1), (32, 32, 1), 132, (8.0, 132 / 32)),
    ((A_ROW,), (32, 8, 1), (16, 64, 1), 1056, (1.0, 1.0)),          # no load the loop strides
    ((("loop", "stride", "data"),), (32, 8, 1), (16, 64, 1), 1056, (1.0, 1.0)),  # a gather: unknown
    ((("loop", "stride"),), (256, 1, 1), (4, 1, 1), 1056, (8.0, 4.0)),  # one address for all
    ((), (32, 8, 1), (16, 64, 1), 1056, (1.0, 1.0)),                # no hot loop loads
    (None, (32, 8, 1), (16, 64, 1), 1056, (1.0, 1.0)),              # a summary that does not say
])
def test_warps_and_blocks_that_load_one_line_in_one_trip(sources, block, grid, resident, shared):
    assert shared_lines(_sourced(sources, block, grid), resident) == pytest.approx(shared)


def test_blocks_sharing_a_line_wait_for_its_dram_trip():
    # a naive matrix product's b: L1 catches 7 of 8 warps' sectors and L2 63 of 64 blocks'
    # requests, each a copy of the first one's miss: every trip waits for DRAM
    k = roofline.ProfileCounts(l1_hit_rate=0.875, l2_hit_rate=63 / 64)
    in_block = _round_latency(k, CAL, 0.0, 1, duplicates=8.0)
    across = _round_latency(k, CAL, 0.0, 1, duplicates=8.0, sharing_blocks=64.0)
    assert in_block < 0.5 * CAL.dram_latency_seconds
    assert across == pytest.approx(CAL.dram_latency_seconds)


@pytest.mark.parametrize("hit_rate", [0.0, 0.5, 0.95])
def test_only_the_bytes_that_miss_l1_stream_in_a_round(hit_rate):
    # the DRAM level of a round: its latency plus the block's bytes that miss L1 at one SM's share
    k = roofline.ProfileCounts(l1_hit_rate=hit_rate, l2_hit_rate=0.0)
    rate = CAL.sm_bandwidth_bytes_per_second  # every SM in use: its share of the GPU's bandwidth
    shared = _round_latency(k, CAL, 65536.0, 1, duplicates=1 / (1 - hit_rate))  # every round reaches DRAM
    assert shared == pytest.approx(CAL.dram_latency_seconds + 65536.0 * (1 - hit_rate) / rate)


@pytest.mark.parametrize(("port", "sms_in_use", "rate"), [
    (None, 1.0, 5e10),          # no port figure: the full GPU's per-SM share, whatever the grid
    (None, 0.01, 5e10),
    (3e11, 1.0, 5e10),          # every SM streams: the share binds
    (3e11, 0.5, 1e11),          # half the SMs: twice the share
    (3e11, 0.1, 3e11),          # few SMs: the port binds
    (3e11, 1 / 132, 3e11),      # one block alone: the probe's own case
])
def test_a_rounds_bytes_move_at_the_sms_share_up_to_its_port(port, sms_in_use, rate):
    cal = CAL.model_copy(update={"sm_bandwidth_bytes_per_second": 5e10, "trip_bytes_per_second": port})
    k = roofline.ProfileCounts(l1_hit_rate=0.0, l2_hit_rate=0.0)
    got = _round_latency(k, cal, 8192.0, 1, sms_in_use=sms_in_use)
    assert got == pytest.approx(cal.dram_latency_seconds + 8192.0 / rate)


def test_copies_of_a_warp_wait_for_the_line_the_first_one_misses():
    # 32 x 8 threads of a kernel that reads threadIdx.x alone: L1 "hits" 7 of 8 sectors, each a
    # copy of the first warp's miss, so the round waits as long as the miss
    k = roofline.ProfileCounts(l1_hit_rate=0.875, l2_hit_rate=0.0)
    alone = _round_latency(k, CAL, 0.0, 1)
    copied = _round_latency(k, CAL, 0.0, 1, duplicates=8.0)
    assert copied == pytest.approx(CAL.dram_latency_seconds)
    assert alone < 0.5 * copied
    trips = 1000
    base = dict(flops=0, dram_bytes=32 * trips * 16, instructions=16 * 8 * (20 + 10 * trips))
    rows = [roofline.predict("H200", roofline.Kernel(**base, launch=_reads(c, (32, 8, 1))), calibration=CAL, measured=k)
            for c in (("x",), ("x", "y"))]
    assert _term(rows[0], "trips").seconds > 2 * _term(rows[1], "trips").seconds


# ------------------------------------------------------------- barriers a block passes

def _barrier_sass(loop_counts: SassCounts, outside_barriers: int = 1, outside_total: int = 32) -> SassSummary:
    loop = SassLoop(start_offset=0, end_offset=144, depth=1, global_loads_in_flight=0, instructions=loop_counts)
    total = SassCounts(total=outside_total + loop_counts.total, barriers=outside_barriers + loop_counts.barriers,
                       global_loads=1 + loop_counts.global_loads, async_copies=loop_counts.async_copies)
    return SassSummary(architecture="sm_90", disassembler="test", loops=(loop,), hot_loop=0, instructions=total,
                       global_loads_in_flight_per_thread=1)


TREE = SassCounts(total=10, barriers=1, shared_loads=2, shared_stores=1)
TILE = SassCounts(total=40, barriers=2, global_loads=2, shared_loads=16, shared_stores=2, fp32_fma=16)
ASYNC = SassCounts(total=40, barriers=2, async_copies=2, shared_loads=16, fp32_fma=16)


@pytest.mark.parametrize(("loop", "per_warp", "barriers"), [
    (TREE, 32 + 7 * 10, 8.0),     # a tree over 128 threads: 7 levels in the loop, one barrier before it
    (TREE, 32 + 10 * 10, 11.0),   # 1024 threads: 10 levels
    (TREE, None, 2.0),            # no instruction count: the loop once
    (TREE, 20, 2.0),              # fewer instructions than the code outside the loop: still once
    (TILE, 32 + 64 * 40, 1.0),    # a tiled GEMM: its tile barriers wait for the tile's loads (the trips term)
    (ASYNC, 32 + 64 * 40, 1.0),   # the same with asynchronous copies
])
def test_barriers_a_thread_passes(loop, per_warp, barriers):
    launch = Launch(grid=4, block=128)
    issued = None if per_warp is None else per_warp * 4 * 4
    assert barriers_from_instructions(_barrier_sass(loop), issued, launch) == pytest.approx(barriers)


def test_a_tree_loops_barriers_lengthen_the_block_life():
    sass = _barrier_sass(TREE)
    resources = occupancy.KernelResources(kernel="tree", architecture="sm_90", registers_per_thread=32, sass=sass)
    launch = Launch(grid=8192, block=128, registers_per_thread=32, resources=resources)
    # 8 KiB a block: Little's law and the roof bind, not the block scheduler (a cap that
    # no block life moves)
    base = dict(flops=0, dram_bytes=64 << 20, launch=launch, instructions=8192 * 4 * (32 + 7 * 10))
    derived = roofline.predict("H200", roofline.Kernel(**base), calibration=CAL)
    stated = roofline.predict("H200", roofline.Kernel(**base, barriers_per_block=0), calibration=CAL)
    inputs = _term(derived, "dram").inputs
    per_barrier = CAL.tree_level_seconds + CAL.tree_level_warp_seconds * 4
    assert inputs["barrier_seconds_per_block"] == pytest.approx(8 * per_barrier)
    assert _term(stated, "dram").inputs["barrier_seconds_per_block"] == 0.0
    assert _term(derived, "dram").seconds > _term(stated, "dram").seconds


# ------------------------------------------------------------- warps or blocks at the L1 pipe

@pytest.mark.parametrize(("in_loop", "outside"), [(0, 0), (1, 0), (0, 1)])
def test_warps_wait_while_others_use_the_pipe_unless_barriers_hold_them(in_loop, outside):
    # a thread per row: every request 32 wavefronts, one block of 8 warps per SM; a barrier in
    # the loop or after it (a tree at the end) holds the block's warps to one phase
    barriers = in_loop + outside
    loop = SassLoop(start_offset=0, end_offset=80, depth=1, global_loads_in_flight=1,
                    instructions=SassCounts(total=10, global_loads=1, barriers=in_loop))
    sass = SassSummary(architecture="sm_90", disassembler="test", loops=(loop,), hot_loop=0,
                       instructions=SassCounts(total=30, global_loads=1, barriers=barriers),
                       global_loads_in_flight_per_thread=1)
    resources = occupancy.KernelResources(kernel="rows", architecture="sm_90", registers_per_thread=32, sass=sass)
    trips = 2000
    launch = Launch(grid=SMS, block=256, registers_per_thread=32, resources=resources)
    warps = SMS * 8
    k = roofline.Kernel(flops=0, dram_bytes=32 * trips * warps * 4, l1_bytes=128 * 32 * trips * warps,
                        instructions=warps * (20 + 10 * trips), launch=launch)
    rates = roofline.ProfileCounts(l1_hit_rate=0.875, l2_hit_rate=0.0)
    dram = _term(roofline.predict("H200", k, calibration=CAL, measured=rates), "dram").inputs
    summed = dram["block_seconds"]  # waits, port, pipe and barriers one after the other
    pipe = dram["l1_seconds_per_block"]
    life = dram["bytes_per_block"] / dram["little_bytes_per_second"] * SMS
    if barriers:
        assert life == pytest.approx(summed, rel=1e-6)
    else:
        # eight warps overlap their waits with the others' passes: the life is shorter than
        # the sum, and no shorter than the pipe's work or one warp's own path
        assert max(pipe, summed - pipe + pipe / 8) < life < summed


# ------------------------------------------------------------- atomics to one address

@pytest.mark.parametrize(("atomics", "one_address", "stated", "contended"), [
    (2, 2, None, True),      # every atomic a counter: one address
    (2, 1, None, False),     # one of them indexed: spread, as before
    (2, None, None, False),  # a summary that does not say
    (2, 2, 4096, False),     # the kernel's own count of addresses wins (4096 addresses: hardly contended)
])
def test_counter_atomics_contend_at_one_address(atomics, one_address, stated, contended):
    sass = SassSummary(architecture="sm_90", disassembler="test", instructions=SassCounts(total=40, atomics=atomics),
                       global_loads_in_flight_per_thread=0, global_atomics=atomics,
                       global_atomics_one_address=one_address)
    resources = occupancy.KernelResources(kernel="filter", architecture="sm_90", registers_per_thread=32, sass=sass)
    launch = Launch(grid=8192, block=128, registers_per_thread=32, resources=resources)
    updates = 8192 * 4
    k = roofline.Kernel(flops=0, dram_bytes=4 << 20, atomics=updates, atomic_addresses=stated, launch=launch)
    term = _term(roofline.predict("H200", k, calibration=CAL), "atomics")
    one = updates / CAL.atomic_one_address_updates_per_second
    assert (term.seconds == pytest.approx(one)) is contended
    assert term.inputs["atomic_addresses"] == (1.0 if contended else float(stated or 0))


# ------------------------------------------------------------- stores to one address

@pytest.mark.parametrize(("stores", "one", "requests", "expected"), [
    (4, 1, 524_280, 131_070.0),    # bfs-like: one of four stores sets a shared flag
    (2, 0, 524_280, None),         # no flag
    (4, None, 524_280, None),      # a summary that does not say
    (4, 1, None, None),            # no store count in the profile
])
def test_a_profile_counts_its_stores_to_one_address(stores, one, requests, expected):
    sass = SassSummary(architecture="sm_90", disassembler="test",
                       instructions=SassCounts(total=40, global_stores=stores, global_loads=1),
                       global_loads_in_flight_per_thread=1, global_stores_one_address=one)
    metrics = {} if requests is None else {"l1tex__t_requests_pipe_lsu_mem_global_op_st.sum": requests,
                                           "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum": requests * 4}
    k = _profiled(metrics).model_copy(update={"sass": sass})
    found = counts_from(k).one_address_stores
    assert found == (None if expected is None else pytest.approx(expected))


def test_stores_to_one_address_queue_at_their_rate():
    cal = CAL.model_copy(update={"one_address_stores_per_second": 2.4e9})
    base = dict(flops=0, dram_bytes=8 << 20, launch=Launch(grid=8192, block=512, registers_per_thread=16))
    flagged = roofline.predict("H200", roofline.Kernel(**base, one_address_stores=131_072), calibration=cal)
    plain = roofline.predict("H200", roofline.Kernel(**base), calibration=cal)
    term = _term(flagged, "atomics")
    assert term.seconds == pytest.approx(131_072 / 2.4e9)
    assert term.inputs["one_address_store_seconds"] == pytest.approx(131_072 / 2.4e9)
    # the queue binds: the launch takes it (and its launch cost), far longer than without the flag
    assert flagged.binding == "atomics" and flagged.seconds > 131_072 / 2.4e9 > 3 * plain.seconds
    # without the rate (a calibration from before the probe) the stores cost nothing extra
    none = roofline.predict("H200", roofline.Kernel(**base, one_address_stores=131_072),
                            calibration=CAL.model_copy(update={"one_address_stores_per_second": None}))
    assert none.seconds == pytest.approx(plain.seconds)


# ------------------------------------------------------------- a launch after validate's L2 flush

@pytest.mark.parametrize(("dram_bytes", "written"), [(1e6, 1e6 * 0.9756), (20e6, 20e6 * (1 - math.exp(-1))),
                                                     (1e9, 20e6)])
def test_the_flush_lines_written_back_saturate_at_what_l2_held(dram_bytes, written):
    from roofline._predict import flush_writeback_bytes

    assert flush_writeback_bytes(dram_bytes, 20e6) == pytest.approx(written, rel=1e-3)
    assert flush_writeback_bytes(dram_bytes, None) == 0.0


def test_a_launch_after_the_flush_writes_back_and_takes_longer():
    k = roofline.models.copy(1 << 22)  # 32 MB moved
    cal = CAL.model_copy(update={"flush_dirty_bytes": 30e6})
    clean = roofline.predict("H200", k, calibration=cal)
    flushed = roofline.predict("H200", k, calibration=cal, after_l2_flush=True)
    dram = _term(flushed, "dram").inputs
    footprint = _term(clean, "dram").inputs["dram_equivalent_bytes"]  # the kernel's own read and written bytes
    # its lines displace the flush's; its own 16 MB written stay in the H200's L2 at its end (l2_keeps_writes)
    assert dram["flush_writeback_bytes"] == pytest.approx(30e6 * -math.expm1(-footprint / 30e6))
    assert dram["dram_equivalent_bytes"] - dram["flush_writeback_bytes"] == pytest.approx(dram["dram_read_bytes"])
    assert dram["dram_read_bytes"] == pytest.approx(footprint / 2)
    assert flushed.seconds > clean.seconds
    # without the figure the flag writes back none of the flush's lines: it only keeps the kernel's own
    plain = CAL.model_copy(update={"flush_dirty_bytes": None})
    with roofline.terms.disabled({"l2_keeps_writes"}):
        assert roofline.predict("H200", k, calibration=plain, after_l2_flush=True).seconds == \
            roofline.predict("H200", k, calibration=plain).seconds
    assert roofline.predict("H200", k, calibration=plain, after_l2_flush=True).seconds < \
        roofline.predict("H200", k, calibration=plain).seconds
    with pytest.raises(TypeError, match="after_l2_flush"):
        roofline.predict("H200", k, calibration=cal, after_l2_flush="yes")


# ------------------------------------------------------------- warps that leave early

def test_a_profile_gives_its_achieved_occupancy_as_a_share():
    # a raw page gives it in percent of the SM's warp slots
    k = _profiled({"sm__warps_active.avg.pct_of_peak_sustained_active": (1.58, "%")})
    assert k.measured.achieved_occupancy == pytest.approx(0.0158)
    assert _profiled({}).measured.achieved_occupancy is None


WALK_OUTSIDE, WALK_PROLOGUE = 24, 6


def _walk_counts(achieved: float | None) -> roofline.ProfileCounts:
    """What a profile of `_one_thread_walk` measures: every load misses, `achieved` occupancy."""
    return roofline.ProfileCounts(l1_hit_rate=0.0, l2_hit_rate=0.0, achieved_occupancy=achieved)


def _one_thread_walk(blocks: int, threads: int, achieved: float | None, lone: str | None = None) -> roofline.Kernel:
    # thread 0 of each block (of the grid, for a "global" exit) walks a column: 256 trips of a
    # 16-instruction loop with 4 loads; the
    # warps that leave issue the 6 instructions before their exit, the walker the 24 outside the loop
    loop = SassLoop(start_offset=0, end_offset=240, depth=1, instructions=SassCounts(total=16, global_loads=4),
                    global_loads_in_flight=4)
    sass = SassSummary(architecture="sm_90", disassembler="test", instructions=SassCounts(total=40, global_loads=5),
                       loops=(loop,), hot_loop=0, global_loads_in_flight_per_thread=4, global_load_bytes=4,
                       lone_thread=lone)
    resources = occupancy.KernelResources(kernel="walk", architecture="sm_90", registers_per_thread=16, sass=sass)
    launch = Launch(grid=blocks, block=threads, registers_per_thread=16, resources=resources)
    walkers = 1 if lone == "global" else blocks  # thread 0 of the grid, else of each block
    leaving = blocks * threads // 32 - walkers
    instructions = walkers * (256 * 16 + WALK_OUTSIDE) + leaving * WALK_PROLOGUE
    return roofline.Kernel(flops=0, dram_bytes=blocks * 1024 * 32.0, instructions=instructions, launch=launch)


@pytest.mark.parametrize(("blocks", "threads", "achieved", "lone", "stays"), [
    (1, 256, 1.0 / 64, None, 1 / 8),       # one warp of the block's eight active: the others left at once
    (1, 1024, 1.05 / 64, None, 1.05 / 32),  # one (and a little) of 32
    (1, 1024, 2.4 / 64, None, 2.4 / 32),    # the leaving warps resident a while: the profile's share overstates
    (1, 1024, 2.4 / 64, "global", 1 / 32),  # the SASS's exit says one warp of the grid stays
    (4, 256, 1.0 / 64, "thread", 1 / 8),    # ... one of each block
    (4, 256, 1.0 / 64, "global", 1 / 32),   # ... one of the grid's 32
    (1, 256, 7.0 / 64, None, 1.0),          # seven of eight: the launch's start and end, not early exits
    (1, 256, None, None, 1.0),              # a kernel without the figure
    (132 * 8 * 2, 256, 1.0 / 64, None, 1.0),  # two waves: gaps between blocks and the tail mix in
])
def test_a_one_wave_launch_whose_warps_leave_early_runs_its_loop_in_the_warps_that_stay(blocks, threads, achieved,
                                                                                      lone, stays):
    kernel = _one_thread_walk(blocks, threads, achieved, lone)
    trips = _term(roofline.predict("H200", kernel, calibration=CAL, measured=_walk_counts(achieved)), "trips").inputs["trips_per_warp"]
    # the staying warps' instructions: all of them over the share of warps that stays
    warps = blocks * threads // 32
    assert trips == pytest.approx((kernel.instructions / (warps * stays) - WALK_OUTSIDE) / 16)
    if stays == 1 / 8 or lone is not None:  # the right share: the walk's 256 trips, give or take the prologues
        assert trips == pytest.approx(256, rel=0.06)


@pytest.mark.parametrize(("blocks", "threads", "walkers", "stays"), [
    (1, 256, 1, 1 / 8),               # thread 0 walks: one warp of eight runs the loop
    (1, 1024, 1, 1 / 32),
    (1, 256, 256, 1.0),               # every thread walks
    (1, 256, 96, 3 / 8),              # three warps of eight
    (1, 256, 160, 1.0),               # five of eight: above one half, the rule says every warp works
    (132 * 8 * 2, 256, 1, 1.0),       # two waves: as for a profile's figure
])
def test_from_source_the_warps_that_run_the_loop_are_counted(blocks, threads, walkers, stays):
    """Without a profile, the counted traffic's share of warps that run the loop (its guards)
    takes the place of the achieved occupancy, under the same rule."""
    n = 1024
    walk = roofline.memory.traffic(blocks, threads, [roofline.memory.Access(
        array="a", index=lambda c: c.loop * threads + c.thread_x, guard=lambda c: c.thread_x < walkers, loop=n)])
    assert walk.loop_warp_share == pytest.approx(-(-walkers // 32) / (threads // 32))
    base = _one_thread_walk(blocks, threads, None)
    found = roofline.predict("H200", base.model_copy(update={"traffic": walk}), calibration=CAL)
    trips = _term(found, "trips").inputs["trips_per_warp"]
    assert trips == pytest.approx((base.instructions / (blocks * threads // 32 * stays) - WALK_OUTSIDE) / 16)


@pytest.mark.parametrize(("walkers", "requests"), [
    (1, 1024),           # thread 0 alone: one warp-wide load a trip, one lane in it
    (32, 1024),          # one full warp: the same loads
    (33, 2 * 1024),      # a lane of the second warp makes it issue too
    (256, 8 * 1024),     # every warp
])
def test_warp_wide_loads_count_a_warp_however_few_lanes_take_part(walkers, requests):
    for exhaustive in (False, True):
        t = roofline.memory.traffic(1, 256, [roofline.memory.Access(array="a", index=lambda c: c.loop * 256 + c.thread_x,
                                                      guard=lambda c: c.thread_x < walkers, loop=1024)],
                             exhaustive=exhaustive)
        assert t.load_requests == requests


def test_from_source_a_walk_by_one_thread_gets_its_trips():
    # thread 0 of one 256-thread block loads 1024 elements, four a trip: 256 trips of its warp
    # (the bytes over every thread would say 1; over the warps that run it, 8)
    walk = roofline.memory.traffic(1, 256, [roofline.memory.Access(array="a", index=lambda c: c.loop, guard=lambda c: c.thread_x == 0,
                                                     loop=1024 + 1)])
    k = _one_thread_walk(1, 256, None).model_copy(update={"traffic": walk, "instructions": None, "load_bytes": 4100})
    trips = _term(roofline.predict("H200", k, calibration=CAL), "trips").inputs["trips_per_warp"]
    # the SASS's one load outside the loop is taken off every launched warp's share: 254.25
    assert trips == pytest.approx(256, rel=0.01)


def test_the_warps_that_run_a_loop_are_counted_alike_by_both_counts():
    # a triangle: lane x runs x iterations; the fast count and the walk of every block agree
    accesses = [roofline.memory.Access(array="a", index=lambda c: c.loop * 1024 + c.x, guard=lambda c: c.loop < c.x,
                                loop=1024)]
    fast = roofline.memory.traffic(4, 256, accesses)
    walked = roofline.memory.traffic(4, 256, accesses, exhaustive=True)
    assert fast.loop_warp_share == walked.loop_warp_share and 0.5 < fast.loop_warp_share < 0.52
    assert roofline.memory.traffic(4, 256, [roofline.memory.Access(array="a", index=lambda c: c.x)]).loop_warp_share is None


# ------------------------------------------------------------- the first wave's ramp

@pytest.mark.parametrize(("blocks", "threads", "interval", "ramp_blocks"), [
    (1, 256, 84e-9, 0),               # one block: the launch cost is a one-block kernel's
    (SMS, 256, 84e-9, 0),             # one block per SM
    (8 * SMS, 256, 84e-9, 7),         # a full first wave of 256-thread blocks: 8 per SM, 7 start late
    (64 * SMS, 256, 84e-9, 7),        # more waves: the first wave's ramp alone
    (3 * SMS + 1, 256, 84e-9, 3),     # the busiest SM takes 4
    (8 * SMS, 256, None, 0),          # a calibration without the figure
])
def test_the_first_wave_ramps_up_one_block_at_a_time(blocks, threads, interval, ramp_blocks):
    cal = CAL.model_copy(update={"block_ramp_seconds": interval})
    k = roofline.Kernel(flops=0, dram_bytes=1 << 20, launch=Launch(grid=blocks, block=threads, registers_per_thread=32))
    p = roofline.predict("H200", k, calibration=cal)
    ramp = _term(p, "ramp")
    assert ramp.side == "overhead" and ramp.seconds == pytest.approx(ramp_blocks * (interval or 0.0))
    assert p.launch_seconds == pytest.approx(cal.launch_overhead_seconds + ramp.seconds + _term(p, "spread").seconds)


# ------------------------------------------------------------- the first memory round's spread over the SMs

@pytest.mark.parametrize(("blocks", "dram_bytes", "per_sm", "later_sms"), [
    (1, 1 << 20, 3e-9, 0),            # one SM: a one-block kernel's round, which the memory terms hold
    (2, 1 << 20, 3e-9, 1),
    (SMS, 1 << 20, 3e-9, SMS - 1),    # every SM
    (8 * SMS, 1 << 20, 3e-9, SMS - 1),  # more blocks than SMs: the SMs in use, not the blocks
    (SMS, 0, 3e-9, 0),                # a kernel that moves no bytes (an empty kernel) has no memory round
    (SMS, 1 << 20, None, 0),          # a calibration without the figure
])
def test_the_first_memory_round_ends_later_on_more_sms(blocks, dram_bytes, per_sm, later_sms):
    cal = CAL.model_copy(update={"first_round_seconds_per_sm": per_sm})
    k = roofline.Kernel(flops=0, dram_bytes=dram_bytes,
                        launch=Launch(grid=blocks, block=256, registers_per_thread=32))
    spread = _term(roofline.predict("H200", k, calibration=cal), "spread")
    assert spread.side == "overhead" and spread.limiter == "launch"
    assert spread.seconds == pytest.approx(later_sms * (per_sm or 0.0))


@pytest.mark.parametrize(("metrics", "hit_rate"), [
    # an accumulator stored every trip: its stores hit L2, its loads' lines come from DRAM
    ({"lts__t_sectors_srcunit_tex_op_read.sum": 1000.0, "dram__bytes_read.sum": (32_000.0, "byte"),
      "lts__t_sectors_srcunit_tex.sum": 2000.0, "lts__t_sectors_srcunit_tex_lookup_hit.sum": 1000.0}, 0.0),
    ({"lts__t_sectors_srcunit_tex_op_read.sum": 1000.0, "dram__bytes_read.sum": (8_000.0, "byte"),
      "lts__t_sectors_srcunit_tex.sum": 1000.0, "lts__t_sectors_srcunit_tex_lookup_hit.sum": 750.0}, 0.75),
    # DRAM reading more than L2 was asked for (a line fetched per sector missed): all missed
    ({"lts__t_sectors_srcunit_tex_op_read.sum": 100.0, "dram__bytes_read.sum": (6_400.0, "byte")}, 0.0),
    # without the read sectors: every lookup, stores included
    ({"lts__t_sectors_srcunit_tex.sum": 2000.0, "lts__t_sectors_srcunit_tex_lookup_hit.sum": 1000.0}, 0.5),
])
def test_the_l2_hit_rate_is_the_loads(metrics, hit_rate):
    assert _profiled(metrics).measured.l2_hit_rate == pytest.approx(hit_rate)


# ------------------------------------------------------------- a loop around the hot loop

# A block walks vectors (the outer loop, 12 barriers a pass) and, in each pass, a stride loop
# over the vector: an unrolled hot loop of 32 loads and a remainder around it of 30 loads whose
# smallest burst is 2. Outside both: 20 instructions and no loads.
_HOT = SassLoop(start_offset=0x200, end_offset=0x400, depth=3, global_loads_in_flight=12,
                instructions=SassCounts(total=60, global_loads=32), fewest_loads_in_flight=10)
_STRIDE = SassLoop(start_offset=0x100, end_offset=0x800, depth=2, global_loads_in_flight=12,
                   instructions=SassCounts(total=170, global_loads=62), fewest_loads_in_flight=2)
_VECTORS = SassLoop(start_offset=0x80, end_offset=0x1000, depth=1, global_loads_in_flight=12,
                    instructions=SassCounts(total=370, global_loads=62, barriers=12))
_NEST = SassSummary(architecture="sm_90", disassembler="test", loops=(_VECTORS, _STRIDE, _HOT), hot_loop=2,
                    instructions=SassCounts(total=390, global_loads=62, barriers=12, global_stores=1),
                    global_loads_in_flight_per_thread=12)


def _nest_prediction(passes: float, trips: float, leftover: float, *, loads: float | None = -1.0):
    """The prediction of a one-wave launch (128 blocks of 256 threads) whose every warp makes
    `passes` passes with `trips` hot trips and `leftover` loads of the remainder in all
    (`loads`: the load count the kernel gives instead, None for none)."""
    resources = occupancy.KernelResources(kernel="vectors", architecture="sm_90", registers_per_thread=32,
                                          sass=_NEST)
    launch = Launch(grid=128, block=256, registers_per_thread=32, resources=resources)
    warps = 128 * 8
    per_warp = 20 + passes * (370 - 60) + trips * 60
    counted = leftover + trips * 32 if loads == -1.0 else loads
    k = roofline.Kernel(flops=0, dram_bytes=64 << 20, instructions=warps * per_warp, launch=launch)
    measured = roofline.ProfileCounts(global_load_instructions=None if counted is None else warps * counted)
    return roofline.predict("H200", k, calibration=CAL, measured=measured)


@pytest.mark.parametrize(("passes", "trips", "leftover", "expected"), [
    # the hot loop never runs: every instruction is the passes', the loads come two at a time
    (32, 0, 256, (32, 0, 256, 128)),
    (128, 0, 256, (128, 0, 256, 128)),
    # both run: the two counts give both (the code around the hot loop as written, 30 loads a pass)
    (8, 40, 8 * 30, (8, 40, 240, 120)),
])
def test_the_passes_around_the_hot_loop_from_the_instructions_and_loads(passes, trips, leftover, expected):
    p = _nest_prediction(passes, trips, leftover)
    got = _term(p, "trips").inputs
    assert (got["passes_per_warp"], got["trips_per_warp"], got["leftover_loads_per_thread"],
            got["leftover_rounds"]) == pytest.approx(expected)
    assert got["barriers_per_pass"] == 12 and got["loads_per_leftover_round"] == 2
    # each pass passes its twelve barriers, each a tree level of the calibration
    per_barrier = CAL.tree_level_seconds + CAL.tree_level_warp_seconds * 8
    assert _term(p, "dram").inputs["barrier_seconds_per_block"] == pytest.approx(passes * 12 * per_barrier)


@pytest.mark.parametrize("loads", [
    None,            # no load count: the instructions alone, as before
    62 + 32 * 40.0,  # the loads the instruction count's trips make: the counts agree
])
def test_where_the_counts_agree_the_hot_loop_keeps_the_instructions(loads):
    p = _nest_prediction(1, 40, 30, loads=loads)
    got = _term(p, "trips").inputs
    assert "passes_per_warp" not in got and "leftover_rounds" not in got
    # the code around the hot loop once, the rest the hot loop's: 40 trips
    assert got["trips_per_warp"] == pytest.approx(40)
    assert _term(p, "dram").inputs["barrier_seconds_per_block"] == 0.0


def test_without_the_load_count_the_passes_instructions_go_to_the_hot_loop():
    counted = _term(_nest_prediction(32, 0, 256), "trips")
    alone = _term(_nest_prediction(32, 0, 256, loads=None), "trips")
    # 31 passes' worth of the code around the hot loop read as its trips: 160 of them
    assert alone.inputs["trips_per_warp"] == pytest.approx(31 * 310 / 60)
    assert counted.inputs["trips_per_warp"] == 0 and counted.seconds < alone.seconds
