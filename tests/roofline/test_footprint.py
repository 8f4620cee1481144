"""The footprint counts of `roofline.memory.traffic` (bursts, lines, partial sectors) and what
`roofline.terms.dram_equivalent_bytes` makes of them, checked against a brute-force count."""

import math
import numpy as np
import pytest

import roofline
from roofline import models
from roofline._predict import queued_life
from roofline.terms import disabled


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
    assert k.traffic.dram_store_lines == want["lines"]
    assert k.traffic.dram_store_bytes == 32 * want["sectors"]
    assert k.traffic.dram_store_partial_sectors == want["partial"]


@pytest.mark.parametrize("stride", [1, 2, 7, 8, 16, 17, 32, 64])
def test_strided_read_footprint_matches_brute_force(stride):
    n = 1 << 16
    k = models.strided_read(n, stride)
    want = brute(n, stride, "load")
    # the read side also reads nothing else: the write goes to its own array
    assert k.traffic.dram_load_bursts == want["bursts"]
    assert k.traffic.dram_load_lines == want["lines"]


def test_fast_and_exhaustive_counts_agree():
    n = 4096 * 3 + 17
    accesses = [roofline.memory.Access(array="x", index=lambda c: c.x * 3, guard=lambda c: c.x < n),
                roofline.memory.Access(array="y", index=lambda c: c.x * 5, guard=lambda c: c.x < n, kind="store")]
    grid = -(-n // 128)
    fast = roofline.memory.traffic(grid, 128, accesses)
    slow = roofline.memory.traffic(grid, 128, accesses, exhaustive=True)
    assert fast == slow
    assert fast.l2_partial_store_sectors > 0 and fast.dram_store_partial_sectors == fast.dram_store_bytes // 32


def _brute_loaded_partial(n, load_stride, store_stride):
    """Sectors of x written in part (stride >= 2 floats: all of them) that the loads touch too."""
    stored = np.unique(np.arange(0, n, dtype=np.int64) * store_stride * 4 // 32)
    loaded = np.unique(np.arange(0, n, dtype=np.int64) * load_stride * 4 // 32)
    return int(np.intersect1d(stored, loaded).size)


@pytest.mark.parametrize("load_stride, store_stride, load_array", [
    (2, 2, "x"),   # a read-modify-write of every other float: every partial sector loaded
    (2, 2, "w"),   # the loads go to another array: none loaded
    (4, 2, "x"),   # the loads cover the first half of the stored span
    (16, 2, "x"),  # the loads touch every other sector of the stored span: half loaded
    (2, 16, "x"),  # the stores span eight times the loads: one in eight loaded
], ids=["update", "other-array", "half", "loads-sparser", "stores-sparser"])
@pytest.mark.parametrize("exhaustive", [False, True], ids=["fast", "exhaustive"])
def test_loaded_partial_sectors_match_brute_force(load_stride, store_stride, load_array, exhaustive):
    n = 1 << 14
    accesses = [roofline.memory.Access(array=load_array, index=lambda c: c.x * load_stride),
                roofline.memory.Access(array="x", index=lambda c: c.x * store_stride, kind="store")]
    t = roofline.memory.traffic(n // 256, 256, accesses, exhaustive=exhaustive)
    assert t.dram_store_partial_sectors == t.dram_store_bytes // 32  # every written sector in part
    want = _brute_loaded_partial(n, load_stride, store_stride) if load_array == "x" else 0
    assert t.dram_store_loaded_partial_sectors == want


CAL = roofline.calibration("H200")


@pytest.mark.parametrize(
    ("kernel", "expect"),
    [
        # contiguous: bursts and lines cost nothing beyond the sectors
        (models.copy(1 << 20), lambda k: k.dram_bytes),
        # one sector per line read: at least a lone line's bytes each (more than the 64-byte burst)
        (models.strided_read(1 << 20, 32), lambda k: k.traffic.dram_load_lines * CAL.dram_read_line_bytes
         + k.traffic.dram_store_bytes),
        # one float per line written: the partial-write line cost, plus the contiguous read
        (models.strided_write(1 << 20, 32), lambda k: (k.dram_bytes - k.traffic.dram_store_bytes)
         + k.traffic.dram_store_lines * CAL.dram_partial_write_line_bytes),
        # every sector written in part: fill (read) + write back, 64 bytes a sector, beat the line floor
        (models.strided_write(1 << 20, 2), lambda k: (k.dram_bytes - k.traffic.dram_store_bytes) + 2 * k.traffic.dram_store_bytes),
    ],
    ids=["copy", "read-stride-32", "write-stride-32", "write-stride-2"],
)
def test_dram_equivalent_bytes(kernel, expect):
    assert roofline.terms.dram_equivalent_bytes(kernel, CAL) == pytest.approx(expect(kernel))


@pytest.mark.parametrize(
    ("stride", "read", "written"),
    [
        # every sector written in part: its fill is read whole (Nsight counts it in dram__bytes_read)
        (2, lambda k: (k.dram_bytes - k.traffic.dram_store_bytes) + 32 * k.traffic.dram_store_partial_sectors,
         lambda k: k.traffic.dram_store_bytes),
        # a lone float per line: the line probe's figure, fills included, on the written side
        (32, lambda k: k.dram_bytes - k.traffic.dram_store_bytes,
         lambda k: k.traffic.dram_store_lines * CAL.dram_partial_write_line_bytes),
    ],
    ids=["stride-2", "stride-32"],
)
def test_a_partial_sector_fill_is_a_read(stride, read, written):
    k = models.strided_write(1 << 20, stride)
    dram = roofline.predict("H200", k, calibration=CAL).terms[0]
    assert dram.name == "dram"
    assert dram.inputs["dram_read_bytes"] == pytest.approx(read(k))
    assert dram.inputs["dram_written_bytes"] == pytest.approx(written(k))


def test_without_footprint_or_granularity_the_sectors_count():
    k = models.strided_read(1 << 20, 32).model_copy(update={"traffic": None})
    assert roofline.terms.dram_equivalent_bytes(k, CAL) == k.dram_bytes
    plain = roofline.calibration("A100 SXM4 80GB")
    k = models.strided_read(1 << 20, 32)
    assert roofline.terms.dram_equivalent_bytes(k, plain) == k.dram_bytes  # no burst, no line cost measured


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
    # the busiest SM issues for its whole blocks: ceil(blocks / SMs) of them, not the average
    blocks = k.launch.blocks
    busiest = math.ceil(blocks / gpu.sm_count) / (blocks / gpu.sm_count)
    assert busiest > 1 and heavy.compute_seconds == pytest.approx(1e9 / slots * busiest)
    assert heavy.limiter == "issue" and heavy.seconds > plain.seconds
    light = roofline.predict("H200", k.model_copy(update={"instructions": 10}))
    assert light.seconds == pytest.approx(plain.seconds, rel=1e-12)


def test_profiled_instructions_reach_the_prediction():
    from pathlib import Path

    p = roofline.load_ncu(Path(__file__).parents[1] / "data" / "ncu" / "torch_roofline.raw.csv")
    sgemm = next(k for k in p.kernels if "Kernel2" in k.name)
    assert sgemm.measured.instructions == 301505536  # the profile's inst_executed column
    report = roofline.profile_report(p, gpu="H200")
    row = next(r for r in report.kernels if r.kernel is sgemm or r.kernel.name == sgemm.name)
    gpu = roofline.gpu("H200")
    assert row.predicted_seconds >= sgemm.measured.instructions / (gpu.sm_count * 4 * gpu.boost_clock_hz)


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
    assert roofline.terms.instructions_from_sass(sass, kernel) == pytest.approx(per_thread * warps)


def _tree(loop_barriers: int):
    """reduce0's SASS: 59 instructions, a barrier before its loop of 28 (2 shared loads, 1 store)."""
    import occupancy

    def counts(n, shared, barriers):
        return occupancy.SassCounts(total=n, global_loads=1 if n == 59 else 0, shared_loads=shared,
                                    barriers=barriers)

    return occupancy.SassSummary(
        architecture="sm_90", disassembler="test", instructions=counts(59, 3, 1 + loop_barriers),
        loops=(occupancy.SassLoop(start_offset=352, end_offset=784, depth=1, global_loads_in_flight=0,
                                  instructions=counts(28, 3, loop_barriers)),),
        hot_loop=0, global_loads_in_flight_per_thread=1, global_load_bytes=4)


@pytest.mark.parametrize(("loop_barriers", "barriers_per_block", "rule", "per_thread"), [
    (1, 9, True, 31 + 8 * 28),      # 256 threads: 8 levels in the loop after the first barrier
    (1, 11, True, 31 + 10 * 28),    # 11 barriers (a block of 1024 threads): 10 levels
    (1, None, True, None),          # no barrier count: the trips stay unknown
    (0, 9, True, None),             # the loop holds no barrier: its trips are not the barriers'
    (1, 9, False, None),            # the rule off: no estimate, as before
], ids=["256", "1024", "no-count", "no-barrier-in-loop", "rule-off"])
def test_a_barrier_loop_runs_as_often_as_the_barriers_say(loop_barriers, barriers_per_block, rule, per_thread):
    import occupancy
    from roofline.terms import disabled

    kernel = roofline.Kernel(name="reduce0", dram_bytes=1, load_bytes=4 * 256 * 64,
                             barriers_per_block=barriers_per_block, launch=occupancy.Launch(grid=64, block=256))
    with disabled(set() if rule else {"barrier_loop_trips"}):
        got = roofline.terms.instructions_from_sass(_tree(loop_barriers), kernel)
    assert got == (None if per_thread is None else pytest.approx(per_thread * 64 * 8))


def test_instructions_from_sass_unknown_trip_count():
    # a loop with neither memory accesses nor arithmetic: no estimate
    sass = _sass(48, [(1, 7, 0, 0)], hot=0, ldg=2)
    assert roofline.terms.instructions_from_sass(sass, models.copy(1 << 20)) is None
    # an arithmetic loop in a kernel that gives no flops: no estimate either
    sass = _sass(48, [(1, 7, 0, 0, 4)], hot=0, ldg=2, ffma=6)
    assert roofline.terms.instructions_from_sass(sass, models.copy(1 << 20)) is None


@pytest.mark.parametrize("update", [{"precision": "fp16"}, {"flops_by_precision": {"fp16_tensor": 10**9}}],
                         ids=["half", "tensor"])
def test_arithmetic_loops_tie_to_scalar_flops_only(update):
    sass = _sass(48, [(1, 7, 0, 0, 4)], hot=0, ldg=2, ffma=6)
    kernel = _branches(1.0).model_copy(update=update)
    assert roofline.terms.instructions_from_sass(sass, kernel) is None


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
    assert roofline.terms.instructions_from_sass(sass, kernel) == pytest.approx(per_thread * warps)


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
    # the loops' trips come from one side's flops: a divergent warp runs them `factor` times; the 34
    # instructions outside them list both sides already and are issued once
    loops = (512 - 8) / 16 * 14
    assert p.compute_seconds == pytest.approx(base.compute_seconds * (34 + factor * loops) / (34 + loops))
    with disabled(["branch_sides_in_sass"]):  # the rule off: the whole estimate scales
        assert roofline.predict("H200", kernel, launch).compute_seconds == pytest.approx(
            factor * roofline.predict("H200", _branches(1.0), launch).compute_seconds)
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
    assert k.traffic.l1_footprint_bytes_per_block * 8 > 256 * 1024  # the whole footprint does not fit
    k = k.model_copy(update={"traffic": k.traffic.model_copy(update={"l1_window_bytes_per_block": window})})
    launch = k.launch
    occ = occupancy.calculate("sm_90", launch.assuming_registers(32))
    got = roofline.terms.l2_bytes_with_l1_reuse(k, launch, occ)
    expect = {"l2": k.l2_bytes,
              "stream": launch.blocks * k.traffic.l1_stream_bytes_per_block + k.traffic.l2_store_bytes}[reads]
    assert got == pytest.approx(expect)
    assert got <= k.l2_bytes


# ------------------------------------------------------------------ partial-sector writes into L2


def _fields(n, offsets, width=4):
    """One warp-wide store per offset: result[2 * i + offset] (fields of an array of pairs)."""
    return [roofline.memory.Access(array="r", index=lambda c, o=o: 2 * c.x + o, guard=lambda c: c.x < n, kind="store",
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
    t = roofline.memory.traffic(n // 256, 256, _fields(n, offsets))
    assert t.l2_partial_store_sectors == partial_per_warp * n // 32


def test_pieces_other_warps_write_are_counted_apart():
    # the naive transpose: each warp writes 8 bytes of 16 sectors; four warps fill a sector
    k = models.transpose(1024, 1024, variant="naive_row")
    assert k.traffic.l2_partial_store_sectors == 16 * (1024 * 1024 // 32)
    assert models.aos(1 << 20).traffic.l2_partial_store_sectors == 0  # x and y of one struct, one warp


@pytest.mark.parametrize("rate", [None, 1e9, 1e12])
def test_partial_writes_bound_the_time_at_the_probes_rate(rate):
    k = models.transpose(4096, 4096, variant="naive_row")
    cal = CAL.model_copy(update={"l2_partial_store_sectors_per_second": rate})
    p = roofline.predict("H200", k, calibration=cal)
    # each SM merges its own blocks' sectors: the busiest SM's share of the blocks sets the time
    blocks, sms = k.launch.blocks, roofline.gpu("H200").sm_count
    busiest = math.ceil(blocks / sms) * sms / blocks
    floor = k.traffic.l2_partial_store_sectors * busiest / rate if rate else 0.0
    assert p.cache_seconds >= floor
    if rate == 1e9:  # far slower than anything else: it binds
        assert p.limiter == "cache_bandwidth" and p.seconds == pytest.approx(floor + p.launch_seconds)


# ----------------------------------------------------------------- DRAM pages opened


def _pages_brute(grid, block, accesses, figures):
    """Pages opened by the aligned middle window, listed thread by thread in plain Python
    (each loop iteration opens the pages of the bursts it reaches first), scaled."""
    gx, gy, gz = grid
    bx, by, bz = block
    threads = bx * by * bz
    blocks = gx * gy * gz
    window = max(1, min(blocks, figures.page_window_threads // threads))
    first = blocks // 2 // window * window
    out = {"load": 0, "store": 0}
    for kind in out:
        seen, opened = {}, set()
        for a in accesses:
            if a.kind != kind:
                continue
            for step in range(a.loop):
                for b in range(first, first + window):
                    for t in range(threads):
                        one = lambda v: np.array([[v]], dtype=np.int64)  # noqa: E731
                        c = roofline.memory.Coords(one(b % gx), one(b // gx % gy), one(b // (gx * gy)), one(t % bx),
                                            one(t // bx % by), one(t // (bx * by)), one(step), block, grid)
                        if a.guard is not None and not bool(np.asarray(a.guard(c)).ravel()[0]):
                            continue
                        burst = (a.array, int(np.asarray(a.index(c)).ravel()[0]) * a.element_bytes // 64)
                        seen[burst] = min(seen.get(burst, step), step)
        for (array, burst), step in seen.items():
            opened.add((array, burst * 64 // figures.dram_page_bytes, step))
        out[kind] = round(len(opened) * blocks / window)
    return out


@pytest.mark.parametrize(
    ("grid", "block", "accesses"),
    [
        # a column of a row-major matrix: 4 rows a window, each row its own page
        ((8, 64, 1), (16, 16, 1), [roofline.memory.Access(array="a", index=lambda c: c.x * 2048 + c.y)]),
        # a row: pages whole
        ((64, 8, 1), (16, 16, 1), [roofline.memory.Access(array="a", index=lambda c: c.y * 1024 + c.x),
                                   roofline.memory.Access(array="b", index=lambda c: c.y * 1024 + c.x, kind="store")]),
        # a loop walking down rows: every iteration reaches new bursts of new pages
        ((4, 1, 1), (256, 1, 1), [roofline.memory.Access(array="a", index=lambda c: c.loop * 4096 + c.x, loop=3),
                                  roofline.memory.Access(array="a", index=lambda c: c.x * 2, guard=lambda c: c.x < 700,
                                                  kind="store")]),
        # the same bursts again in the next iteration: nothing new opened
        ((2, 1, 1), (128, 1, 1), [roofline.memory.Access(array="a", index=lambda c: c.x // 2, loop=4)]),
    ],
    ids=["column", "row", "loop-rows", "loop-again"],
)
def test_page_visits_match_a_thread_by_thread_count(grid, block, accesses):
    figures = roofline.memory.locality("H200").model_copy(update={"page_window_threads": 1024})
    t = roofline.memory.traffic(grid, block, accesses, locality=figures)
    want = _pages_brute(grid, block, accesses, figures)
    assert (t.dram_load_page_visits, t.dram_store_page_visits) == (want["load"], want["store"])


@pytest.mark.parametrize(
    ("variant", "load_visit", "store_visit"),
    [("copy_row", 1024, 1024), ("naive_column", 64, 1024), ("naive_row", 1024, 64), ("copy_column", 64, 64),
     ("shared_padded", 1024, 64), ("unroll4_column", 64, 1024)],
)
def test_transposes_open_a_page_per_column_visit(variant, load_visit, store_visit):
    # 8192 x 8192 floats, 16 x 16 blocks: the window (64 blocks) lies in one block row, so a
    # column's 16 floats of a block are all the window reads of that page; a row's 64 blocks
    # read 4 KiB of it
    k = models.transpose(8192, 8192, variant=variant)
    assert k.traffic.dram_load_bursts * 64 / k.traffic.dram_load_page_visits == load_visit
    assert k.traffic.dram_store_bytes / k.traffic.dram_store_page_visits == store_visit


def test_the_page_probes_visits_are_the_models():
    """validate's page probe reads at the visit sizes it claims, as roofline.memory.traffic counts them."""
    from roofline._traffic.combining import page_visits
    from roofline._traffic.space import Space
    from validate.probes._memory_effects import page_probe_rows

    from validate.probes._memory_effects import page_probe_visit

    chunks = (1 << 30) // 128
    warps = chunks // 8
    space = Space((chunks * 4 // 256, 1, 1), (256, 1, 1))
    assert page_probe_rows(warps) == (1024, 8192, 65536)
    for rows in (*page_probe_rows(warps), 8, 32):
        visit = page_probe_visit(rows)
        def at(u, rows=rows):
            def index(c):
                w = (c.x >> 5) + u * warps
                return ((w % rows) * (chunks // rows) + w // rows) * 32 + (c.x & 31)
            return roofline.memory.Access(array="x", index=index)
        pages = page_visits(space, [at(u) for u in range(8)], roofline.memory.locality("H200"))
        assert pages == {"load": chunks * 128 // visit, "store": 0}, visit


@pytest.mark.parametrize("page", [None, 0.0, 96.0, 200.0])
def test_pages_opened_beyond_a_streams_cost_the_calibrations_bytes(page):
    # the page figure alone: where every burst opens its own page the random-burst figure
    # replaces burst plus page (test_memory_terms), so it is left out here
    cal = CAL.model_copy(update={"dram_page_visit_bytes": page, "dram_random_burst_bytes": None})
    rows = models.transpose(8192, 8192, variant="copy_row")
    columns = models.transpose(8192, 8192, variant="naive_column")
    assert roofline.terms.dram_equivalent_bytes(rows, cal) == pytest.approx(rows.dram_bytes)
    extra = (columns.traffic.dram_load_page_visits - columns.traffic.dram_load_bursts * 64 / roofline.memory.locality("H200").dram_page_bytes) * (page or 0)
    assert roofline.terms.dram_equivalent_bytes(columns, cal) == pytest.approx(columns.dram_bytes + extra)
    free = CAL.model_copy(update={"dram_page_visit_bytes": None, "dram_random_burst_bytes": None})
    slower = roofline.predict("H200", columns, calibration=cal).seconds
    assert (slower > roofline.predict("H200", columns, calibration=free).seconds) == bool(page)


# ------------------------------------------------------------------- read/write mix


@pytest.mark.parametrize(
    ("read", "write", "want"),
    [
        (1.0, 1.0, lambda copy, rd: copy),                        # the copy the sweep measured
        (1.0, 0.0, lambda copy, rd: rd),                          # a read stream
        (0.0, 1.0, lambda copy, rd: 1 / (2 / copy - 1 / rd)),     # writes alone
        (3.0, 1.0, lambda copy, rd: 4 / (3 / rd + (2 / copy - 1 / rd))),
        (1.0, None, lambda copy, rd: copy),                       # mix unknown
    ],
)
def test_the_dram_roof_follows_the_read_write_mix(read, write, want):
    gpu = roofline.gpu("H200")
    copy = gpu.memory_bandwidth * CAL.sustained_bandwidth_fraction
    assert roofline.terms.dram_roof(gpu, CAL, read, write) == pytest.approx(want(copy, CAL.dram_read_bytes_per_second))


def test_without_a_read_figure_every_mix_streams_at_the_copys_rate():
    cal = CAL.model_copy(update={"dram_read_bytes_per_second": None})
    copy = roofline.gpu("H200").memory_bandwidth * CAL.sustained_bandwidth_fraction
    assert roofline.terms.dram_roof("H200", cal, 1.0, 0.0) == pytest.approx(copy)
    # a read plateau under the copy's (reads slower than copies) would make writes free: refused
    slow = CAL.model_copy(update={"dram_read_bytes_per_second": copy / 3})
    assert roofline.terms.dram_roof("H200", slow, 1.0, 0.0) == pytest.approx(copy)


@pytest.mark.parametrize(("read", "write", "error"), [(-1.0, 1.0, roofline.RooflineError),
                                                       (1.0, float("nan"), roofline.RooflineError),
                                                       ("a", 1.0, TypeError)])
def test_the_dram_roof_refuses_bad_bytes(read, write, error):
    with pytest.raises(error):
        roofline.terms.dram_roof("H200", CAL, read, write)


def test_a_read_only_kernel_streams_faster_than_a_copy():
    reduce = models.reduction(1 << 26, block=256, variant="warp_shuffle")
    copy = models.copy(1 << 25)
    gpu = roofline.gpu("H200")
    for k in (reduce, copy):
        p = roofline.predict(gpu, k)
        assert p.achieved_bytes_per_second < roofline.terms.dram_roof(gpu, CAL, *_sides(k))
    assert roofline.terms.dram_roof(gpu, CAL, *_sides(reduce)) > roofline.terms.dram_roof(gpu, CAL, *_sides(copy))


def _sides(k):
    written = float(k.traffic.dram_store_bytes)
    return float(k.dram_bytes) - written, written


# ------------------------------------------------------------- the SM's L1 pipe, queued


@pytest.mark.parametrize("blocks", [1, 2, 3, 8, 32])
def test_blocks_queue_for_the_l1_pipe(blocks):
    other, l1 = 1e-6, 2e-7
    life = queued_life(other, l1, blocks)
    assert life >= other + l1 - 1e-18                   # never shorter than alone
    assert life >= blocks * l1                          # the pipe serves one block at a time
    assert life <= other + blocks * l1 + 1e-18         # nor longer than waiting for all others
    if blocks == 1:
        assert life == pytest.approx(other + l1)
    assert queued_life(other, l1, blocks + 1) > life   # one more block, a longer queue
    assert queued_life(other, 0.0, blocks) == other


def test_a_conflicted_tile_transpose_waits_for_the_pipe():
    # 32 x 32 tiles at two blocks per SM: each block's 32-way conflicted read holds the pipe
    # ~1,000 clocks; the other block's turn lengthens the life beyond the block's own pass
    k = models.transpose(8192, 8192, variant="shared", block=(32, 32))
    p = roofline.predict("H200", k, calibration=CAL)
    alone = roofline.predict("H200", k.model_copy(update={"launch": k.launch.model_copy(
        update={"dynamic_shared_memory": 150_000, "max_dynamic_shared_memory": 150_000})}),
        calibration=CAL)  # one block per SM
    assert p.active_blocks_per_sm == 2 and alone.active_blocks_per_sm == 1
    assert p.seconds > alone.seconds / 2


# ------------------------------------------------ pieces of warps a shared load wakes together


def _column_copy(n, same_array=False, load=True):
    src = "out" if same_array else "in"
    out = [roofline.memory.Access(array="out", index=lambda c: c.x * n + c.y, kind="store")]
    return ([roofline.memory.Access(array=src, index=lambda c: c.x * n + c.y)] if load else []) + out


@pytest.mark.parametrize(
    ("block", "accesses", "combined"),
    [
        ((16, 16), _column_copy(1024), True),                    # 4 warps load the same 16 sectors, wake together
        ((8, 32), _column_copy(1024), True),                     # 8 sectors per warp store
        ((32, 8), _column_copy(1024), False),                    # 32 sectors per warp store: too far apart
        ((16, 16), _column_copy(1024, same_array=True), True),   # in place: a[i] = f(a[i])
        ((16, 16), _column_copy(1024, load=False), False),       # no load to wake on: each warp on its own
        # a load of other elements (the naive transpose's row) wakes no two warps together
        ((16, 16), [roofline.memory.Access(array="in", index=lambda c: c.y * 1024 + c.x),
                    roofline.memory.Access(array="out", index=lambda c: c.x * 1024 + c.y, kind="store")], False),
    ],
    ids=["16x16", "8x32", "32x8", "in-place", "no-load", "other-elements"],
)
def test_l1_combines_pieces_of_warps_woken_together(block, accesses, combined):
    grid = (1024 // block[0], 1024 // block[1])
    t = roofline.memory.traffic(grid, block, accesses)
    # apart, every warp store writes each of its sectors in part (32 // rows-per-warp bytes of 32)
    apart = 1024 * 1024 // 32 * min(32, block[0])
    assert t.l2_partial_store_sectors == (0 if combined else apart)


def test_the_combining_limit_is_the_warps_sectors():
    assert roofline.memory.locality("H200").l1_combine_sectors == 16
    wide = roofline.memory.traffic((64, 64), (16, 16), _column_copy(1024))
    narrow = roofline.memory.traffic((32, 128), (32, 8), _column_copy(1024))
    # 32 x 8: one row of 32 floats per warp, 32 sectors written 4 bytes each
    assert wide.l2_partial_store_sectors == 0 and narrow.l2_partial_store_sectors == 1024 * 1024


@pytest.mark.parametrize(("factor", "per_warp"), [
    (None, 600),   # not given: the code as listed, both sides of each branch
    (1.0, 310),    # every warp takes one side: the longest path
    (1.5, 465),    # between
    (2.0, 600),    # every warp split: both sides, each once (not twice the listing)
    (4.0, 600),
])
def test_straight_line_code_issues_the_sides_its_warps_take(factor, per_warp):
    import occupancy

    sass = occupancy.SassSummary(architecture="sm_90", disassembler="test", global_loads_in_flight_per_thread=0,
                                 instructions=occupancy.SassCounts(total=600, fp32_fma=512),
                                 longest_path_instructions=310)
    resources = occupancy.KernelResources(kernel="sides", architecture="sm_90", registers_per_thread=32, sass=sass)
    launch = occupancy.Launch(grid=132 * 64, block=256, resources=resources)
    kernel = roofline.Kernel(name="sides", flops=launch.threads * 528.0, dram_bytes=4 * launch.threads,
                             branch_issue_factor=factor, launch=launch)
    term = next(t for t in roofline.predict("H100 SXM", kernel, fma_chains_per_thread=8).terms
                if t.name == "instructions")
    assert term.inputs["warp_instructions"] == pytest.approx(per_warp * launch.blocks * 8)


@pytest.mark.parametrize("factor", [None, 1.0, 2.0])
def test_the_hot_loop_trips_read_back_from_the_issued_instructions(factor):
    """`Setting.path_instructions` inverts the estimate: a kernel given the instructions the SASS
    estimate issues (100 trips of a 20-instruction loop, 100 outside it, a 60-long path there)
    reads the same 100 trips back at any number of paths."""
    import occupancy

    loop = occupancy.SassLoop(start_offset=0x100, end_offset=0x200, depth=1, global_loads_in_flight=2,
                              instructions=occupancy.SassCounts(total=20, global_loads=2))
    sass = occupancy.SassSummary(architecture="sm_90", disassembler="test", global_loads_in_flight_per_thread=2,
                                 instructions=occupancy.SassCounts(total=120, global_loads=3), loops=(loop,),
                                 hot_loop=0, global_load_bytes=4, longest_path_instructions=60)
    resources = occupancy.KernelResources(kernel="k", architecture="sm_90", registers_per_thread=32, sass=sass)
    launch = occupancy.Launch(grid=264, block=256, resources=resources)
    kernel = roofline.Kernel(name="k", flops=0.0, dram_bytes=64e6, load_bytes=264 * 256 * 4 * 201.0,
                             branch_issue_factor=factor, launch=launch)

    def terms(k):
        return {t.name: t for t in roofline.predict("H200", k).terms}

    estimated = terms(kernel)
    issued = estimated["instructions"].inputs["warp_instructions"]
    outside = 100 if factor in (None, 2.0) else 60
    assert issued == pytest.approx(264 * 8 * (outside + (factor or 1.0) * 100 * 20))
    counted = terms(kernel.model_copy(update={"instructions": issued}))
    assert counted["trips"].inputs["trips_per_warp"] == estimated["trips"].inputs["trips_per_warp"] == 100.0


@pytest.mark.parametrize(("other", "runs", "other_loads", "loads_per_warp", "trips", "trips_off", "said"), [
    # a store loop beside the hot loop, run 100 times: its 30 instructions a run read as the hot
    # loop's are 100 + 99 x 30 / 20 = 248.5 trips; the 201 loads counted (1 outside, 2 a trip) are 100
    ("beside", 100, 0, 201.0, 100.0, 248.5, "loads"),
    ("beside", 100, 0, None, 248.5, 248.5, None),      # no load count: the instructions alone
    ("beside", 1, 0, 201.0, 100.0, 100.0, None),       # run once: the two counts agree, the instructions stand
    # a loop beside with a load of its own: the loads are not all the hot loop's; the disagreement is said
    ("beside", 100, 1, 201.0, 248.5, 248.5, "instructions"),
    (None, 0, 0, 41.0, 100.0, 100.0, "instructions"),  # no loop beside: the instructions are the hot loop's
])
def test_loops_beside_the_hot_loop_take_their_trips_from_the_counted_loads(other, runs, other_loads, loads_per_warp,
                                                                          trips, trips_off, said):
    """`counted_load_trips`: 100 trips of a 20-instruction hot loop (2 loads), 100 instructions and
    a load outside the loops, and (``other``) a loop of 30 instructions beside it, run ``runs``
    times. Where the instructions, read as the hot loop's alone, imply more than
    IMPLIED_LOADS_LIMIT times the counted loads and the loops beside it load nothing, the counted
    loads give the trips."""
    import occupancy

    hot = occupancy.SassLoop(start_offset=0x100, end_offset=0x200, depth=1, global_loads_in_flight=2,
                             instructions=occupancy.SassCounts(total=20, global_loads=2))
    loops = (hot,) if other is None else (hot, occupancy.SassLoop(
        start_offset=0x300, end_offset=0x500, depth=1, global_loads_in_flight=other_loads,
        instructions=occupancy.SassCounts(total=30, global_loads=other_loads)))
    body = 30 if other else 0
    sass = occupancy.SassSummary(architecture="sm_90", disassembler="test", global_loads_in_flight_per_thread=2,
                                 instructions=occupancy.SassCounts(total=120 + body, global_loads=3 + other_loads),
                                 loops=loops, hot_loop=0, global_load_bytes=4)
    resources = occupancy.KernelResources(kernel="k", architecture="sm_90", registers_per_thread=32, sass=sass)
    launch = occupancy.Launch(grid=264, block=256, resources=resources)
    warps = 264 * 8
    kernel = roofline.Kernel(name="k", flops=0.0, dram_bytes=64e6, launch=launch,
                             instructions=warps * (100.0 + 100 * 20 + runs * body))
    measured = None if loads_per_warp is None else roofline.ProfileCounts(
        global_load_instructions=warps * loads_per_warp)

    def read() -> float:
        return next(t for t in roofline.predict("H200", kernel, measured=measured).terms
                    if t.name == "trips").inputs["trips_per_warp"]

    assert read() == pytest.approx(trips)
    with disabled({"counted_load_trips"}):
        assert read() == pytest.approx(trips_off)
    # the trips term says where its trips came from where the rule gave them, and where the two
    # counts disagree with no rule to say which holds
    notes = next(t for t in roofline.predict("H200", kernel, measured=measured).terms if t.name == "trips").notes
    if said is None:
        assert notes == ()
    elif said == "loads":
        assert notes == (f"the hot loop's trips from the profile's load count, {trips:.4g} a warp: its instructions "
                         f"read as the hot loop's alone give {trips_off:.4g}, the loops beside it issue the rest "
                         "(rule counted_load_trips)",)
    else:
        assert len(notes) == 1 and notes[0].startswith(f"the hot loop's trips from the instructions, {trips:.4g} a warp")


@pytest.mark.parametrize(("factor", "path", "noted"), [
    (None, 310, True),    # both sides listed, the factor not given: said
    (1.0, 310, False),    # given
    (2.0, 310, False),
    (None, 590, False),   # 10 beyond the path: a bounds check, not worth a line
    (None, None, False),  # a summary without the path
])
def test_predict_says_when_the_listing_holds_sides_it_may_not_issue(factor, path, noted):
    import occupancy

    sass = occupancy.SassSummary(architecture="sm_90", disassembler="test", global_loads_in_flight_per_thread=0,
                                 instructions=occupancy.SassCounts(total=600, fp32_fma=512),
                                 longest_path_instructions=path)
    resources = occupancy.KernelResources(kernel="sides", architecture="sm_90", registers_per_thread=32, sass=sass)
    launch = occupancy.Launch(grid=132 * 64, block=256, resources=resources)
    kernel = roofline.Kernel(name="sides", flops=launch.threads * 528.0, dram_bytes=4 * launch.threads,
                             branch_issue_factor=factor, launch=launch)
    said = [a for a in roofline.predict("H100 SXM", kernel).assumptions if "one path through them" in a]
    assert bool(said) == noted
    if noted:
        assert said == ["the SASS outside its loops lists 600 instructions, one path through them 310: the "
                        "instructions counted as listed (give branch_issue_factor: --count branch_issue_factor=1 "
                        "if each warp takes one side of its branches, 2 if each is split in two)"]


@pytest.mark.parametrize(("sass_source", "noted"), [
    ("not read: nvdisasm not found (pip install nvidia-cuda-nvdisasm)", True),
    (None, False),  # loose numbers: no binary, nothing to read
])
def test_predict_says_when_the_kernel_s_sass_was_not_read(sass_source, noted):
    import occupancy

    sources = {"registers_per_thread": "cubin k.cubin"} | ({"sass": sass_source} if sass_source else {})
    resources = occupancy.KernelResources(kernel="k", architecture="sm_90", registers_per_thread=32, sources=sources)
    kernel = roofline.Kernel(name="k", flops=0.0, dram_bytes=1e6,
                             launch=occupancy.Launch(grid=264, block=256, resources=resources))
    said = [a for a in roofline.predict("H200", kernel).assumptions if a.startswith("the kernel's SASS was")]
    assert said == ([f"the kernel's SASS was {sass_source}; without it no instruction estimate, hot loop or "
                     "branch paths"] if noted else [])


def test_a_loop_described_by_its_elements_or_its_bytes_is_one_prediction():
    """Rule elements_as_loads: a grid-stride loop of one load a trip (the grid-stride probe's
    gs_sum), 1024 elements a thread, gives the same time and the same bytes in flight (a trip's,
    not the launch's) whether the launch says its elements or the kernel its load bytes."""
    import occupancy

    loop = occupancy.SassLoop(start_offset=0x1b0, end_offset=0x250, depth=1, global_loads_in_flight=1,
                              instructions=occupancy.SassCounts(total=11, global_loads=1, fp32_add=1))
    sass = occupancy.SassSummary(architecture="sm_90", disassembler="test", global_loads_in_flight_per_thread=1,
                                 instructions=occupancy.SassCounts(total=41, global_loads=1, global_stores=1,
                                                                   fp32_add=1), loops=(loop,), hot_loop=0,
                                 global_load_bytes=4, longest_path_instructions=30)
    resources = occupancy.KernelResources(kernel="gs_sum", architecture="sm_90", registers_per_thread=16, sass=sass)
    threads = 132 * 256
    counts = dict(name="gs_sum", flops=1024.0 * threads, dram_bytes=1028.0 * 4 * threads)
    by_elements = roofline.Kernel(**counts, launch=occupancy.Launch(grid=132, block=256, resources=resources,
                                                                     elements_per_thread=1024))
    by_bytes = roofline.Kernel(**counts, load_bytes=1024.0 * 4 * threads, store_bytes=4.0 * threads,
                               launch=occupancy.Launch(grid=132, block=256, resources=resources))
    a, b = roofline.predict("H100 SXM", by_elements), roofline.predict("H100 SXM", by_bytes)
    assert a.seconds == pytest.approx(b.seconds, rel=1e-9)
    assert a.bytes_in_flight == pytest.approx(b.bytes_in_flight, rel=1e-9)
    assert b.bytes_in_flight < 256 * 1024  # a trip's (about 132 KiB), not the launch's 139 MB
    with disabled({"elements_as_loads"}):  # the rounds at the copy sweep's fitted latency: 1.5x
        assert roofline.predict("H100 SXM", by_elements).seconds > 1.4 * b.seconds


@pytest.mark.parametrize(("given", "elements", "noted"), [
    (4, 1024, True),    # another figure than the hot loop's, its trips known: said
    (1, 1024, False),   # the hot loop's own
    (None, 1024, False),
    (4, 1, False),      # the trips not known: the launch's figure is the one used
])
def test_predict_says_whose_loads_in_flight_the_hot_loop_waits_for(given, elements, noted):
    import occupancy

    loop = occupancy.SassLoop(start_offset=0x1b0, end_offset=0x250, depth=1, global_loads_in_flight=1,
                              instructions=occupancy.SassCounts(total=11, global_loads=1))
    sass = occupancy.SassSummary(architecture="sm_90", disassembler="test", global_loads_in_flight_per_thread=1,
                                 instructions=occupancy.SassCounts(total=41, global_loads=1), loops=(loop,),
                                 hot_loop=0, global_load_bytes=4)
    resources = occupancy.KernelResources(kernel="gs", architecture="sm_90", registers_per_thread=16, sass=sass)
    kernel = roofline.Kernel(name="gs", flops=0.0, dram_bytes=4e6, launch=occupancy.Launch(
        grid=132, block=256, resources=resources, elements_per_thread=elements))
    said = [a for a in roofline.predict("H100 SXM", kernel, loads_in_flight_per_thread=given).assumptions
            if a.startswith("the SASS's hot loop keeps")]
    assert said == (["the SASS's hot loop keeps 1 load in flight a trip, which its trips wait for: "
                     "loads_in_flight_per_thread=4 counts the loads outside it"] if noted else [])
