"""The cause probes (validate/probes/_cause_probes.py): every variant's counts and prediction built
offline, the counts checked against what the kernels' access patterns imply, and, marked ``gpu``,
one variant of each cause measured on a device."""

import math

import numpy as np
import pytest

from roofline.memory import CACHE_LINE_BYTES
from validate.device import kernel_source
from validate.probes import _cause_probes
from validate.probes._cause_probes import CauseResult, offline_prediction, render_causes, run_cause_probes
from validate.probes._cause_variants import CAUSE_VARIANTS, CAUSES
from validate.user_kernel._load import kernel_names_in_source

IDS = [f"{v.cause}-{v.variant}".replace(" ", "-") for v in CAUSE_VARIANTS]


def _variant(cause, variant):
    return next(v for v in CAUSE_VARIANTS if v.cause == cause and v.variant == variant)


@pytest.fixture(scope="module", autouse=True)
def counts_once_per_variant():
    """Each variant's counts are built once for the file (their traffic is most of its CPU): the
    offline test reads them, `offline_prediction` builds them again, and so do the tests of the
    sectors and wavefronts. The counts are a frozen `roofline.Kernel`: sharing it changes nothing
    a test reads."""
    real = _cause_probes.probe_kernel
    built: dict[int, tuple] = {}

    def probe_kernel(variant):
        if id(variant) not in built:
            built[id(variant)] = (real(variant), variant)  # the variant kept: its id stays its own
        return built[id(variant)][0]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_cause_probes, "probe_kernel", probe_kernel)
        yield


@pytest.mark.parametrize("cause", sorted(CAUSES))
def test_every_cause_has_two_to_four_variants(cause):
    assert 2 <= sum(1 for v in CAUSE_VARIANTS if v.cause == cause) <= 4


@pytest.mark.parametrize("variant", CAUSE_VARIANTS, ids=IDS)
def test_counts_and_prediction_offline(variant):
    assert variant.kernel in kernel_names_in_source(kernel_source("cause_probes.cu"))
    kernel = _cause_probes.probe_kernel(variant)
    assert kernel.launch.grid[0] == variant.grid and kernel.launch.threads_per_block == variant.block
    assert kernel.l1_bytes >= kernel.traffic.l1_global_bytes
    p = offline_prediction(variant, registers_per_thread=32)
    assert math.isfinite(p.seconds) and p.seconds > 0 and p.limiter


# Independent figures: what each access pattern moves, from the kernels' source.
MiB = 1 << 20


@pytest.mark.parametrize(("cause", "variant", "l2_per_requested"), [
    # lane l reads row l: 32 lanes x 4 bytes touch 32 sectors of 32 bytes, 8 x the bytes asked
    ("thread_per_row", "cols=512", 8.0),
    # a warp reads 32 consecutive 2-byte elements: 64 bytes, two whole sectors
    ("column_u16", "16-bit rows=512 cols=65536", 1.0),
], ids=["thread-per-row", "column-u16"])
def test_sectors_of_the_load_patterns(cause, variant, l2_per_requested):
    t = _cause_probes.probe_kernel(_variant(cause, variant)).traffic
    assert t.l2_bytes / t.requested_bytes == pytest.approx(l2_per_requested, rel=0.01)


def test_rows_read_twice_ask_twice_the_bytes_that_dram_moves_once():
    """row_logsumexp reads its 128 MiB twice; the description's DRAM bytes are compulsory (once)."""
    t = _cause_probes.probe_kernel(_variant("row_twice", "cols=262144 rows=128")).traffic
    assert t.load_bytes == 2 * 128 * MiB
    assert t.dram_bytes == pytest.approx(128 * MiB, rel=0.001)


@pytest.mark.parametrize(("variant", "per_trip"), [
    ("cas bins=1 iters=16", 1 + 32),  # the loop's load, then 32 rounds: one lane of the warp wins each
    ("add bins=1 iters=128", 1),  # one atomic a warp, every lane on one word: a broadcast wavefront
], ids=["cas", "add"])
def test_shared_wavefronts_of_the_atomic_loops(variant, per_trip):
    v = _variant("shared_atomics", variant)
    iters = int(variant.split("iters=")[1])
    bookkeeping = 2 * v.grid  # warp 0 zeroes the one bin and copies it out
    assert v.counts["shared_wavefronts"] == v.warps * iters * per_trip + bookkeeping
    k = _cause_probes.probe_kernel(v)
    assert k.l1_bytes == k.traffic.l1_global_bytes + CACHE_LINE_BYTES * v.counts["shared_wavefronts"]


@pytest.mark.parametrize("variant", [v for v in CAUSE_VARIANTS if v.cause in ("shared_atomics", "global_cas")],
                         ids=[i for v, i in zip(CAUSE_VARIANTS, IDS) if v.cause in ("shared_atomics", "global_cas")])
def test_counter_references_add_up_to_every_increment(variant):
    args, expected = variant.arguments(np.random.default_rng(0))
    (reference,) = expected.values()
    iters = int(args[1] if variant.cause == "shared_atomics" else args[2])
    assert reference.sum() == variant.grid * variant.block * iters


def test_table_shows_failures_and_errors():
    ok = CauseResult(cause="grid_stride", variant="grid=256", kernel="k", grid=1, block=32, measured_seconds=2e-4,
                     predicted_seconds=1e-4, limiter="dram_bandwidth", error=-0.5)
    failed = CauseResult(cause="global_cas", variant="addresses=1", kernel="k", grid=1, block=32, failure="boom")
    table = render_causes([ok, failed])
    assert "| 200.0 | 100.0 | dram_bandwidth | -50% |" in table and "failed: boom" in table


@pytest.mark.gpu
def test_one_variant_of_each_cause_on_the_gpu(gpu_session):
    first = [next(v for v in CAUSE_VARIANTS if v.cause == c) for c in CAUSES]
    results = run_cause_probes(gpu_session, first, budget_seconds=0.05)
    assert [r.failure for r in results] == [None] * len(first)
    assert all(r.measured_seconds > 0 and r.predicted_seconds > 0 for r in results)


def _one_load_loop_sass(loads_in_flight: int, width: int) -> "occupancy.SassSummary":
    """A loop of `loads_in_flight` strided loads, all in flight at once, as nvdisasm lists grid_stride_sum
    (``#pragma unroll 1``: one LDG.E a trip) or an unrolled column sum."""
    import occupancy

    body = occupancy.SassCounts(total=4 + 2 * loads_in_flight, global_loads=loads_in_flight,
                                fp32_add=loads_in_flight, branches=1)
    loop = occupancy.SassLoop(start_offset=0x120, end_offset=0x170, depth=1, instructions=body,
                              global_loads_in_flight=loads_in_flight, fewest_loads_in_flight=loads_in_flight)
    return occupancy.SassSummary(
        architecture="sm_90", disassembler="listing", loops=(loop,), hot_loop=0,
        instructions=occupancy.SassCounts(total=20 + body.total, global_loads=loads_in_flight, global_stores=1,
                                          fp32_add=loads_in_flight, branches=2),
        global_loads_in_flight_per_thread=loads_in_flight, global_load_bytes=width,
        hot_loop_load_sources=(("x", "ctaid.x", "loop", "stride"),) * loads_in_flight)


# H100 SXM's calibration (roofline/data/gpus/h100-sxm.toml): the dependent load that misses L2, and an
# SM's share of the copy sweep's bandwidth
DRAM_LATENCY_SECONDS, SM_BYTES_PER_SECOND = 3.618e-07, 4.269e10


@pytest.mark.parametrize(("variant", "trips"), [
    ("grid=256 trips=512", 512), ("grid=1024 trips=128", 128),
], ids=["one-wave-of-256", "one-wave-of-1024"])
def test_with_the_sass_a_grid_stride_loop_waits_a_dram_trip_per_load(variant, trips):
    """One load in flight a thread, a fresh line each trip: each trip waits a DRAM round trip plus
    its block's 256 x 4 bytes through the SM's port; without the SASS every load is one round."""
    v = _variant("grid_stride", variant)
    with_sass = offline_prediction(v, registers_per_thread=14, sass=_one_load_loop_sass(1, 4))
    trips_term = next(t for t in with_sass.terms if t.name == "trips")
    expected = trips * (DRAM_LATENCY_SECONDS + 256 * 4 / SM_BYTES_PER_SECOND)
    assert trips_term.seconds == pytest.approx(expected, rel=1e-3)
    without = offline_prediction(v, registers_per_thread=14)
    assert next(t for t in without.terms if t.name == "trips").seconds == 0.0
    assert with_sass.seconds > without.seconds


def _dram_rounds(p):
    return next(t for t in p.terms if t.name == "dram").inputs["rounds"]


def test_the_prediction_without_sass_is_validate_measure_s():
    """``sass=None`` keeps `validate.measure`'s launch: one load per thread, one round trip."""
    assert _dram_rounds(offline_prediction(_variant("column_u16", "16-bit rows=2048 cols=16384"),
                                           registers_per_thread=32)) == 1


@pytest.mark.parametrize(("variant", "width", "rounds"), [
    # a load a row: 2048 rows over 16 loads in flight; 512 over 16
    ("16-bit rows=2048 cols=16384", 2, 128), ("32-bit rows=512 cols=65536", 4, 32),
], ids=["u16", "f32"])
def test_with_the_sass_each_thread_makes_a_load_a_row(variant, width, rounds):
    """A thread sums its column: one load per row, counted from the description's bytes and the
    SASS's width, 16 of them in flight (the SASS's unrolled loop)."""
    p = offline_prediction(_variant("column_u16", variant), registers_per_thread=32,
                           sass=_one_load_loop_sass(16, width))
    assert _dram_rounds(p) == rounds


@pytest.mark.parametrize("cols", [16384, 132 * 256])
def test_a_stored_accumulator_stores_every_trip_and_its_control_once(cols):
    # `column_sum_stored` writes out[c] each of its rows' trips (4 bytes a thread a trip, whole
    # lines a warp); `column_sum_register` writes it once; both read the same 2^25-ish floats
    rows = (1 << 25) // cols
    stored, register = (_cause_probes.probe_kernel(next(
        v for v in CAUSE_VARIANTS if v.cause == "stored_accumulator" and v.variant == f"{kind} rows={rows} cols={cols}"))
        for kind in ("stored", "register"))
    assert stored.count("store_bytes") == 4 * rows * cols and register.count("store_bytes") == 4 * cols
    assert stored.count("load_bytes") == register.count("load_bytes") == 4 * rows * cols


def test_three_loops_over_one_row_read_dram_once_and_over_three_rows_thrice():
    # row_three_loops: 1056 rows of 8192 floats; each loop reads a row (the same one, or its own)
    one, three = (_cause_probes.probe_kernel(next(v for v in CAUSE_VARIANTS if v.cause == "loops_reread"
                                                  and v.variant.startswith(kind))) for kind in ("one row", "three rows"))
    row_bytes = 1056 * 8192 * 4
    assert one.count("load_bytes") == three.count("load_bytes") == 3 * row_bytes
    assert one.traffic.dram_load_bytes == row_bytes and three.traffic.dram_load_bytes == 3 * row_bytes
