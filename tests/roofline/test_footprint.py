"""The footprint counts of `roofline.traffic` (bursts, lines, partial sectors) and what
`roofline.dram_equivalent_bytes` makes of them, checked against a brute-force count."""

import numpy as np
import pytest

import roofline
from roofline import models


def brute(n, stride, kind):
    """Every touched byte of the strided array, listed."""
    touched = np.arange(0, n, stride, dtype=np.int64) * 4
    sectors = np.unique(touched // 32)
    per_sector = np.bincount(np.searchsorted(sectors, touched // 32), minlength=sectors.size)
    return {"bursts": np.unique(touched // 64).size, "lines": np.unique(touched // 128).size,
            "sectors": sectors.size, "partial": int((per_sector * 4 < 32).sum())}


@pytest.mark.parametrize("stride", [1, 2, 3, 5, 8, 12, 16, 24, 32, 33, 64])
def test_strided_write_footprint_matches_brute_force(stride):
    n = 1 << 16
    k = models.strided_write(n, stride)
    want = brute(n, stride, "store")
    assert k.dram_store_lines == want["lines"]
    assert k.dram_store_bytes == 32 * want["sectors"]
    assert k.dram_store_partial_sectors == want["partial"]


@pytest.mark.parametrize("stride", [1, 2, 7, 8, 16, 17, 32, 64])
def test_strided_read_footprint_matches_brute_force(stride):
    n = 1 << 16
    k = models.strided_read(n, stride)
    want = brute(n, stride, "load")
    # the read side also reads nothing else: the write goes to its own array
    assert k.dram_load_bursts == want["bursts"]
    assert k.dram_load_lines == want["lines"]


def test_fast_and_exhaustive_counts_agree():
    n = 4096 * 3 + 17
    accesses = [roofline.Access(array="x", index=lambda c: c.x * 3, guard=lambda c: c.x < n),
                roofline.Access(array="y", index=lambda c: c.x * 5, guard=lambda c: c.x < n, kind="store")]
    grid = -(-n // 128)
    fast = roofline.traffic(grid, 128, accesses)
    slow = roofline.traffic(grid, 128, accesses, exhaustive=True)
    assert fast == slow
    assert fast.l2_partial_store_sectors > 0 and fast.dram_store_partial_sectors == fast.dram_store_bytes // 32


CAL = roofline.calibration("H200")


@pytest.mark.parametrize(
    ("kernel", "expect"),
    [
        # contiguous: bursts and lines cost nothing beyond the sectors
        (models.copy(1 << 20), lambda k: k.dram_bytes),
        # one sector per line read: at least a lone line's bytes each (more than the 64-byte burst)
        (models.strided_read(1 << 20, 32), lambda k: k.dram_load_lines * CAL.dram_read_line_bytes
         + k.dram_store_bytes),
        # one float per line written: the partial-write line cost, plus the contiguous read
        (models.strided_write(1 << 20, 32), lambda k: (k.dram_bytes - k.dram_store_bytes)
         + k.dram_store_lines * CAL.dram_partial_write_line_bytes),
        # every sector written in part: fill + write back (64 bytes a sector) beats the line floor
        (models.strided_write(1 << 20, 2), lambda k: (k.dram_bytes - k.dram_store_bytes) + 2 * k.dram_store_bytes),
    ],
    ids=["copy", "read-stride-32", "write-stride-32", "write-stride-2"],
)
def test_dram_equivalent_bytes(kernel, expect):
    assert roofline.dram_equivalent_bytes(kernel, CAL) == pytest.approx(expect(kernel))


def test_without_footprint_or_granularity_the_sectors_count():
    k = models.strided_read(1 << 20, 32).model_copy(update={"dram_store_bytes": None})
    assert roofline.dram_equivalent_bytes(k, CAL) == k.dram_bytes
    plain = roofline.calibration("A100 SXM4 80GB")
    k = models.strided_read(1 << 20, 32)
    assert roofline.dram_equivalent_bytes(k, plain) == k.dram_bytes  # no burst, no line cost measured


def test_barriers_lengthen_the_block():
    k = models.reduction(1 << 24, block=256, variant="sequential")
    without = roofline.predict("H200", k, calibration=CAL.model_copy(update={"tree_level_seconds": None}))
    with_tree = roofline.predict("H200", k, calibration=CAL)
    assert k.barriers_per_block == 9
    assert with_tree.seconds > without.seconds
    assert any("tree_level_seconds" in a for a in without.assumptions)


def test_l1_passes_lengthen_the_block():
    # a column read (one line per lane) against the same bytes read by rows: the block's 16x
    # more L1 passes add 128-byte-per-clock time to its life, so the latency-bound launch slows
    rows = models.transpose(4096, 4096, variant="copy_row")
    columns = rows.model_copy(update={"l1_bytes": rows.l1_bytes * 16})
    gpu = roofline.gpu("H200")
    p_rows, p_columns = roofline.predict(gpu, rows), roofline.predict(gpu, columns)
    assert p_rows.limiter == "memory_latency"
    per_block = (columns.l1_bytes - rows.l1_bytes) / rows.launch.blocks / (128 * gpu.boost_clock_hz)
    assert per_block > 0 and p_columns.seconds > p_rows.seconds


def test_instructions_bind_through_issue_slots():
    k = models.copy(1 << 20)
    gpu = roofline.gpu("H200")
    slots = gpu.sm_count * gpu.architecture.sub_partitions * gpu.boost_clock_hz
    plain = roofline.predict("H200", k)
    heavy = roofline.predict("H200", k.model_copy(update={"instructions": 1e9}))
    assert heavy.compute_seconds == pytest.approx(1e9 / slots)
    assert heavy.limiter == "issue" and heavy.seconds > plain.seconds
    light = roofline.predict("H200", k.model_copy(update={"instructions": 10}))
    assert light.seconds == plain.seconds


def test_profiled_instructions_reach_the_prediction():
    from pathlib import Path

    p = roofline.load_ncu(Path(__file__).parents[1] / "data" / "ncu" / "torch_roofline.raw.csv")
    sgemm = next(k for k in p.kernels if "Kernel2" in k.name)
    assert sgemm.instructions == 301505536  # the profile's inst_executed column
    report = roofline.profile_report(p, gpu="H200")
    row = next(r for r in report.kernels if r.kernel is sgemm or r.kernel.name == sgemm.name)
    gpu = roofline.gpu("H200")
    assert row.predicted_seconds >= sgemm.instructions / (gpu.sm_count * 4 * gpu.boost_clock_hz)


def _sass(total, loops=(), hot=None, ldg=0, lds=0, width=4, ffma=0):
    """A SassSummary: loops are (depth, instructions, global loads, shared loads[, FFMAs])."""
    import occupancy

    def counts(n, g=0, s=0, f=0):
        return occupancy.SassCounts(total=n, global_loads=g, shared_loads=s, fp32_fma=f)

    return occupancy.SassSummary(
        architecture="sm_90", disassembler="test", instructions=counts(total, ldg, lds, ffma),
        loops=tuple(occupancy.SassLoop(start_offset=16 * i, end_offset=16 * i + 8, depth=loop[0],
                                       instructions=counts(*loop[1:]), global_loads_in_flight=loop[2])
                    for i, loop in enumerate(loops)),
        hot_loop=hot, global_loads_in_flight_per_thread=1, global_load_bytes=width)


@pytest.mark.parametrize(
    ("sass", "kernel", "per_thread"),
    [
        # straight line: the SASS once per thread
        (_sass(40, ldg=1), models.copy(1 << 20), 40),
        # blur-like: 156 outside, a nested hot loop of 34 with 4 loads; 81 loads per thread
        (_sass(247, [(1, 91, 7, 0), (2, 34, 4, 0)], hot=1, ldg=7), None, 156 + 34 / 4 * 81),
        # a shared-only loop of 52 with 8 shared loads beside a global loop of 7 with 1 load
        (_sass(87, [(1, 7, 1, 0), (1, 52, 0, 8)], hot=0, ldg=1, lds=8), "shared", None),
    ],
    ids=["straight", "nested-hot-loop", "shared-loop"],
)
def test_instructions_from_sass(sass, kernel, per_thread):
    import occupancy

    if kernel is None:  # 81 loads of 4 bytes per thread
        kernel = roofline.Kernel(name="k", load_bytes=81 * 4 * 256 * 64, dram_bytes=1,
                                 launch=occupancy.Launch(grid=64, block=256))
    if kernel == "shared":  # 8 global loads and 4096 shared loads per thread
        kernel = roofline.Kernel(name="k", load_bytes=8 * 4 * 256 * 64, shared_bytes=4096 * 4 * 256 * 64,
                                 dram_bytes=1, launch=occupancy.Launch(grid=64, block=256))
        # 28 outside, the global loop 8 times (7 each), the shared loop 4096 / 8 times (52 each)
        per_thread = 28 + 8 * 7 + 4096 / 8 * 52
    warps = kernel.launch.blocks * kernel.launch.threads_per_block // 32
    assert roofline.instructions_from_sass(sass, kernel) == pytest.approx(per_thread * warps)


def test_instructions_from_sass_unknown_trip_count():
    # a loop with neither memory accesses nor arithmetic: no estimate
    sass = _sass(48, [(1, 7, 0, 0)], hot=0, ldg=2)
    assert roofline.instructions_from_sass(sass, models.copy(1 << 20)) is None
    # an arithmetic loop in a kernel that gives no flops: no estimate either
    sass = _sass(48, [(1, 7, 0, 0, 4)], hot=0, ldg=2, ffma=6)
    assert roofline.instructions_from_sass(sass, models.copy(1 << 20)) is None


@pytest.mark.parametrize("update", [{"precision": "fp16"}, {"flops_by_precision": {"fp16_tensor": 10**9}}],
                         ids=["half", "tensor"])
def test_arithmetic_loops_tie_to_scalar_flops_only(update):
    sass = _sass(48, [(1, 7, 0, 0, 4)], hot=0, ldg=2, ffma=6)
    kernel = _branches(1.0).model_copy(update=update)
    assert roofline.instructions_from_sass(sass, kernel) is None


def _branches(factor):
    import occupancy

    # validate/kernels/families.cu `branches`: each thread runs 256 FMAs on one of two
    # sides, each side a loop of 7 instructions with 4 FFMAs; 4 FFMAs outside the loops
    n = 1 << 20
    return roofline.Kernel(name="branches", flops=2 * 256 * n, dram_bytes=12 * n, load_bytes=8 * n,
                           branch_issue_factor=factor, launch=occupancy.Launch(grid=n // 256, block=256))


def test_arithmetic_loops_run_as_often_as_the_flops_need():
    sass = _sass(48, [(1, 7, 0, 0, 4), (1, 7, 0, 0, 4)], hot=0, ldg=2, ffma=12)
    kernel = _branches(1.0)
    # outside: 48 - 14 instructions and 4 FFMAs (8 flops); the two loops share 512 - 8 flops, 16 per trip
    per_thread = 34 + (512 - 8) / 16 * 14
    warps = kernel.launch.blocks * 8
    assert roofline.instructions_from_sass(sass, kernel) == pytest.approx(per_thread * warps)


@pytest.mark.parametrize("factor", [1.0, 1.5, 2.0])
def test_divergent_branches_issue_both_sides(factor):
    import occupancy

    sass = _sass(48, [(1, 7, 0, 0, 4), (1, 7, 0, 0, 4)], hot=0, ldg=2, ffma=12)
    kernel = _branches(factor)
    resources = occupancy.KernelResources(kernel="branches", architecture="sm_90", registers_per_thread=16, sass=sass)
    launch = kernel.launch.model_copy(update={"resources": resources})
    base = roofline.predict("H200", _branches(1.0), launch)
    p = roofline.predict("H200", kernel, launch)
    assert p.limiter == base.limiter == "issue"
    assert p.compute_seconds == pytest.approx(factor * base.compute_seconds)
    # without SASS the arithmetic time alone scales
    q, q1 = roofline.predict("H200", kernel), roofline.predict("H200", _branches(1.0))
    assert q.compute_seconds == pytest.approx(factor * q1.compute_seconds)


@pytest.mark.parametrize(
    ("window", "reads"),
    [
        (None, "l2"),                  # no stream counted: every warp's sectors
        (1 << 10, "stream"),           # two iterations fit every resident block: the stream
        (1 << 30, "l2"),               # they do not fit: no reuse
    ],
    ids=["no-stream", "window-fits", "window-too-big"],
)
def test_l1_keeps_the_iteration_before(window, reads):
    import occupancy

    k = models.matmul_naive(1024)
    assert k.l1_footprint_bytes_per_block * 8 > 256 * 1024  # the whole footprint does not fit
    k = k.model_copy(update={"l1_window_bytes_per_block": window})
    launch = k.launch
    occ = occupancy.calculate("sm_90", **launch.occupancy_keywords(assumed_registers_per_thread=32))
    got = roofline.l2_bytes_with_l1_reuse(k, launch, occ)
    expect = {"l2": k.l2_bytes,
              "stream": launch.blocks * k.l1_stream_bytes_per_block + k.l2_store_bytes}[reads]
    assert got == pytest.approx(expect)
    assert got <= k.l2_bytes


# ------------------------------------------------------------------ partial-sector writes into L2


def _fields(n, offsets, width=4):
    """One warp-wide store per offset: result[2 * i + offset] (fields of an array of pairs)."""
    return [roofline.Access(array="r", index=lambda c, o=o: 2 * c.x + o, guard=lambda c: c.x < n, kind="store",
                            element_bytes=width) for o in offsets]


@pytest.mark.parametrize(
    ("offsets", "partial_per_warp"),
    [
        ((0,), 8),        # one field: 32 lanes x 4 bytes spread over 8 sectors, half of each
        ((0, 1), 0),      # both fields: the warp's two stores fill the 8 sectors together
        ((0, 0), 8),      # the same field twice: still half of each sector
    ],
    ids=["one-field", "both-fields", "same-field-twice"],
)
def test_a_warps_own_stores_combine_in_l1(offsets, partial_per_warp):
    n = 1 << 14
    t = roofline.traffic(n // 256, 256, _fields(n, offsets))
    assert t.l2_partial_store_sectors == partial_per_warp * n // 32


def test_pieces_other_warps_write_are_counted_apart():
    # the naive transpose: each warp writes 8 bytes of 16 sectors; four warps fill a sector
    k = models.transpose(1024, 1024, variant="naive_row")
    assert k.l2_partial_store_sectors == 16 * (1024 * 1024 // 32)
    assert models.aos(1 << 20).l2_partial_store_sectors == 0  # x and y of one struct, one warp


@pytest.mark.parametrize("rate", [None, 1e9, 1e12])
def test_partial_writes_bound_the_time_at_the_probes_rate(rate):
    k = models.transpose(4096, 4096, variant="naive_row")
    cal = CAL.model_copy(update={"l2_partial_store_sectors_per_second": rate})
    p = roofline.predict("H200", k, calibration=cal)
    floor = k.l2_partial_store_sectors / rate if rate else 0.0
    assert p.cache_seconds >= floor
    if rate == 1e9:  # far slower than anything else: it binds
        assert p.limiter == "cache_bandwidth" and p.seconds == pytest.approx(floor + p.launch_seconds)
