"""The memory side of the time model (issue 23): the bound over the prediction's ceilings,
the L2 request term, DRAM random bursts and large strides, global atomics."""

from __future__ import annotations

import pytest

import occupancy
import roofline
from roofline import models
from roofline._predict import roofline_bound

SUITE = {
    # issue 23 item 10: with L1 reuse the model serves fewer L2 bytes than the datasheet
    # roofline counts; the old bound (roofline.analyze) was 104 us against 72 us predicted
    "blur r=1": lambda: models.blur(4096, 4096, radius=1),
    "copy": lambda: models.copy(1 << 26),
    "matmul_naive": lambda: models.matmul_naive(2048, 2048, 2048),
}


@pytest.mark.parametrize("gpu", ["H200", "H100 SXM"])
@pytest.mark.parametrize("make", SUITE.values(), ids=SUITE.keys())
def test_bound_never_exceeds_the_prediction(gpu, make):
    p = roofline.predict(gpu, make())
    assert 0 < p.roofline_seconds <= p.seconds
    assert p.roofline_seconds == roofline_bound(p.terms)


def test_bound_is_the_datasheet_roofline_of_the_bytes_the_prediction_moves():
    # a copy: L1 keeps nothing, so the bound is roofline.analyze's of its counts (the datasheet's
    # DRAM rate), below the DRAM term, which takes the sustained share of that rate
    p = roofline.predict("H200", models.copy(1 << 26))
    plain = roofline.analyze("H200", models.copy(1 << 26)).time_lower_bound_seconds
    dram = next(t for t in p.terms if t.name == "dram")
    assert p.roofline_seconds == pytest.approx(plain, rel=1e-12) and plain < dram.seconds
    assert p.roofline_seconds == pytest.approx(dram.inputs["dram_equivalent_bytes"] / roofline.gpu("H200").memory_bandwidth)


# ------------------------------------------------------------- L2 requests

def _term(p, name):
    return next(t for t in p.terms if t.name == name)


def test_l2_requests_bind_where_each_request_holds_one_sector():
    # a profile's counts: 1e8 one-sector requests (3.2 GB of sectors) take requests / rate,
    # longer than the same sectors at L2's bandwidth; the same bytes as full lines do not
    cal = roofline.calibration("H200")
    launch = models.copy(1 << 20).launch
    one_sector = roofline.Kernel(flops=0, dram_bytes=1 << 20, l2_bytes=32 * 10**8, l2_requests=10**8, launch=launch)
    p = roofline.predict("H200", one_sector)
    assert _term(p, "l2_requests").seconds == pytest.approx(1e8 / cal.l2_requests_per_second)
    assert _term(p, "l2_requests").seconds > _term(p, "l2").seconds
    full_lines = one_sector.model_copy(update={"l2_requests": 10**8 // 4})
    assert _term(roofline.predict("H200", full_lines), "l2_requests").seconds < _term(p, "l2").seconds


def test_traffic_requests_reach_l2_only_where_l1_does_not_keep_them():
    # matmul_naive: every warp load is counted at L1, but L1 keeps the row it walks
    k = models.matmul_naive(512, 512, 512)
    p = roofline.predict("H200", k)
    served = _term(p, "l2").inputs["l2_bytes"] / k.l2_bytes
    assert served < 1
    assert _term(p, "l2_requests").inputs["l2_requests"] == pytest.approx(k.traffic.l1_wavefronts * served)


# ------------------------------------------------------------- atomics

ATOMICS = {  # addresses -> the part that binds
    "one counter": (1, "contention_seconds"),
    "1024 bins": (1024, "spread_seconds"),
}


@pytest.mark.parametrize("addresses, binding", ATOMICS.values(), ids=ATOMICS.keys())
def test_atomics_serialise_on_few_addresses(addresses, binding):
    cal = roofline.calibration("H200").model_copy(update={
        "atomic_spread_updates_per_second": 5e10, "atomic_one_address_updates_per_second": 1e9})
    k = roofline.Kernel(flops=0, dram_bytes=1 << 20, atomics=10**7, atomic_addresses=addresses,
                        launch=models.copy(1 << 20).launch)
    term = _term(roofline.predict("H200", k, calibration=cal), "atomics")
    assert term.seconds == term.inputs[binding] > 0
    assert term.inputs["contention_seconds"] == pytest.approx(1e7 / addresses / 1e9)


def test_atomics_without_addresses_are_taken_as_spread_and_said_so():
    cal = roofline.calibration("H200").model_copy(update={
        "atomic_spread_updates_per_second": 5e10, "atomic_one_address_updates_per_second": 1e9})
    k = roofline.Kernel(flops=0, dram_bytes=1 << 20, atomics=10**7, launch=models.copy(1 << 20).launch)
    p = roofline.predict("H200", k, calibration=cal)
    assert _term(p, "atomics").seconds == pytest.approx(1e7 / 5e10)
    assert any("addresses not known" in note for note in p.assumptions)
    assert _term(roofline.predict("H200", k.model_copy(update={"atomics": None}), calibration=cal), "atomics").seconds == 0


# k threads' CAS loops on one word: k updates take k rounds (one success each) and
# k + (k - 1) + ... + 1 attempts; each round waits one L2 round trip. With a one-address rate of
# 1e9/s and a round trip of 100 ns, per address: n updates, n (k + 1) / 2 attempts.
CAS = {  # (updates, addresses, contenders) -> expected contention seconds, by hand
    "one word, 4 threads": ((4, 1, 4), 10 / 1e9 + 4 * 100e-9),         # 4 + 3 + 2 + 1 attempts
    "one word, 256 threads": ((256, 1, 256), 32896 / 1e9 + 256 * 100e-9),  # 256 x 257 / 2
    "2 words, 3 threads each, 2 passes": ((12, 2, 3), 12 / 1e9 + 6 * 100e-9),  # 2 contests of 6 attempts
    "no sharing, 8 passes": ((8, 1, 1), 8 / 1e9 + 8 * 100e-9),  # one thread's dependent CASes
}


def _cas_term(updates, addresses, contenders, **update):
    # the global-CAS probe's figures left out unless a case measures them (the packaged H200's are)
    cal = roofline.calibration("H200").model_copy(update={
        "atomic_spread_updates_per_second": 1e12, "atomic_one_address_updates_per_second": 1e9,
        "l2_hit_latency_seconds": 100e-9, "cas_round_trip_seconds": None, "cas_line_attempts_per_second": None,
        **update})
    k = roofline.Kernel(flops=0, dram_bytes=1 << 20, atomics=updates, atomic_addresses=addresses,
                        cas_contenders=contenders, launch=models.copy(1 << 20).launch)
    return _term(roofline.predict("H200", k, calibration=cal), "atomics")


@pytest.mark.parametrize("case, expected", CAS.values(), ids=CAS.keys())
def test_a_cas_loop_takes_its_contenders_rounds_and_attempts(case, expected):
    term = _cas_term(*case)
    assert term.inputs["contention_seconds"] == pytest.approx(expected)
    assert term.seconds == pytest.approx(expected)


@pytest.mark.parametrize("case", CAS.values(), ids=CAS.keys())
def test_without_the_rule_a_cas_loop_is_its_updates_at_the_one_address_rate(case):
    updates, addresses, contenders = case[0]
    with roofline.terms.disabled({"cas_contention"}):
        term = _cas_term(updates, addresses, contenders)
    plain = _cas_term(updates, addresses, None)  # the same kernel without the field: the model before the rule
    assert term.seconds == plain.seconds == pytest.approx(updates / addresses / 1e9)


def test_a_cas_loop_without_a_round_trip_queues_its_attempts_and_says_so():
    term = _cas_term(256, 1, 256, l2_hit_latency_seconds=None)
    assert term.seconds == pytest.approx(256 / 1e9)
    assert any("l2_hit_latency_seconds" in note for note in term.notes)


# The global-CAS probe's figures (by hand; one-address rate 1e9/s, spread rate 1e12/s, a load's L2
# hit 100 ns): a measured round trip replaces the L2 hit in the rounds; a measured rate of
# 32-lane CAS on one line bounds all the loop's attempts (4096 counters of 66 threads:
# 270,336 x 67 / 2 = 9,056,256 attempts; per counter 2211 attempts and 66 rounds).
GLOBAL_CAS = {  # (case, calibration update) -> expected term seconds
    "round trip 300 ns, one word, 256 threads": (
        (256, 1, 256), {"cas_round_trip_seconds": 300e-9}, 32896 / 1e9 + 256 * 300e-9),
    "round trip 700 ns, 2 words, 3 threads each": (
        (12, 2, 3), {"cas_round_trip_seconds": 700e-9}, 12 / 1e9 + 6 * 700e-9),
    "line rate 1e10/s, 4096 counters": (
        (270336, 4096, 66), {"cas_line_attempts_per_second": 1e10}, 9056256 / 1e10),
    "line rate 1e13/s, 4096 counters (the rounds still bind)": (
        (270336, 4096, 66), {"cas_line_attempts_per_second": 1e13}, 2211 / 1e9 + 66 * 100e-9),
    "neither measured, 4096 counters": ((270336, 4096, 66), {}, 2211 / 1e9 + 66 * 100e-9),
}


@pytest.mark.parametrize("case, update, expected", GLOBAL_CAS.values(), ids=GLOBAL_CAS.keys())
def test_the_global_cas_probes_figures_where_measured(case, update, expected):
    term = _cas_term(*case, **update)
    assert term.seconds == pytest.approx(expected)
    notes = " ".join(term.notes)
    for name in ("cas_round_trip_seconds", "cas_line_attempts_per_second"):
        assert (name in notes) == (name not in update), name  # a note names the figure not measured


@pytest.mark.parametrize("case, update, expected", GLOBAL_CAS.values(), ids=GLOBAL_CAS.keys())
def test_without_the_rule_the_global_cas_figures_change_nothing(case, update, expected):
    updates, addresses, contenders = case
    with roofline.terms.disabled({"cas_contention"}):
        term = _cas_term(updates, addresses, contenders, **update)
    assert term.seconds == pytest.approx(max(updates / addresses / 1e9, updates / 1e12))
    assert not any("cas_" in note for note in term.notes)


@pytest.mark.parametrize("contenders", [0.5, -3], ids=["half", "negative"])
def test_fewer_than_one_contender_is_refused(contenders):
    with pytest.raises(roofline.RooflineError, match="cas_contenders"):
        roofline.Kernel(flops=0, dram_bytes=1, cas_contenders=contenders)


# ------------------------------------------------------------- DRAM: random bursts

def test_a_burst_that_opens_its_own_page_costs_what_the_random_burst_probe_measured():
    from roofline._locality import locality
    from roofline._predict.derive import dram_traffic
    from roofline._predict.params import dram_granularity
    from roofline._predict.terms import dram_sides

    k = models.strided_read(1 << 22, 256)  # 1 KiB apart: every 64-byte burst in a page of its own
    assert k.traffic.dram_load_page_visits >= k.traffic.dram_load_bursts
    cal = roofline.calibration("H200")
    traffic = dram_traffic(k, locality("H200"))
    read, _ = dram_sides(traffic, dram_granularity(cal))
    assert read == pytest.approx(k.traffic.dram_load_bursts * cal.dram_random_burst_bytes)
    # without the figure: a burst plus the page it opens, as before
    plain, _ = dram_sides(traffic, dram_granularity(cal.model_copy(update={"dram_random_burst_bytes": None})))
    assert plain != read and plain >= k.traffic.dram_load_bursts * cal.dram_burst_bytes


# Float and double adds to one word (rule float_atomics): the SASS's type of the one-address atomics
# picks the global-CAS probe's rate for it; by hand, 10^7 updates at rates of the test's own.
FLOAT_RATES = {"atomic_spread_updates_per_second": 1e13, "atomic_one_address_updates_per_second": 1e9,
               "atomic_one_address_f32_updates_per_second": 4e8, "atomic_one_address_f64_updates_per_second": 2.5e8}
FLOAT_ATOMICS = {  # name: (SASS one-address type, the kernel's addresses, rates left out) -> (seconds, note names)
    "float adds to one counter": (("f32", None, ()), (1e7 / 4e8, None)),
    "double adds to one counter": (("f64", None, ()), (1e7 / 2.5e8, None)),
    "integer adds to one counter": (("other", None, ()), (1e7 / 1e9, None)),
    "float adds, no float rate measured": (("f32", None, ("atomic_one_address_f32_updates_per_second",)),
                                           (1e7 / 1e9, "atomic_one_address_f32_updates_per_second")),
    # the description's 1024 bins: the SASS's counter type does not describe them
    "float adds the description spreads over 1024 addresses": (("f32", 1024, ()), (1e7 / 1024 / 1e9, None)),
}


def _float_term(kind, addresses, missing):
    sass = occupancy.SassSummary(architecture="sm_90", disassembler="listing", global_loads_in_flight_per_thread=1,
                                 instructions=occupancy.SassCounts(total=10, global_loads=1), global_atomics=1,
                                 global_atomics_one_address=1, global_atomics_one_address_type=kind)
    launch = occupancy.Launch(grid=(264, 1, 1), block=(256, 1, 1), registers_per_thread=32,
                              resources=occupancy.KernelResources(kernel="k", architecture="sm_90",
                                                                  registers_per_thread=32, sass=sass))
    cal = roofline.calibration("H200").model_copy(update={**FLOAT_RATES, **{name: None for name in missing}})
    k = roofline.Kernel(flops=0, dram_bytes=1 << 20, atomics=10**7, atomic_addresses=addresses, launch=launch)
    return roofline.predict("H200", k, calibration=cal)


@pytest.mark.parametrize("case, expected", FLOAT_ATOMICS.values(), ids=FLOAT_ATOMICS.keys())
def test_float_adds_to_one_word_queue_at_their_own_rate(case, expected):
    seconds, missing = expected
    p = _float_term(*case)
    term = _term(p, "atomics")
    assert term.seconds == pytest.approx(seconds)
    assert term.inputs["atomic_one_address_updates_per_second"] == pytest.approx(
        1e7 / seconds / (case[1] or 1))
    named = [note for note in term.notes if "_updates_per_second" in note]
    assert (missing is not None) == bool(named) and all(missing in note for note in named)


@pytest.mark.parametrize("case", [c for c, _ in FLOAT_ATOMICS.values()], ids=FLOAT_ATOMICS.keys())
def test_without_the_rule_float_adds_queue_at_the_integer_rate(case):
    with roofline.terms.disabled({"float_atomics"}):
        term = _term(_float_term(*case), "atomics")
    assert term.seconds == pytest.approx(1e7 / (case[1] or 1) / 1e9)
    assert not any("f32" in note or "f64" in note for note in term.notes)


# Written lines L2 keeps at a kernel's end (rule l2_keeps_writes): of F = read + written bytes,
# the last C (L2's) stay, so written x max(0, 1 - C / F) are written back during the kernel; of
# them at most K (rule l2_written_cap, the L2-writes probe's figure) stay.
WRITTEN_BACK = {  # name: (read, written, L2 bytes[, K]) -> written back, by hand
    "a footprint within L2": ((16e6, 16e6, 50e6), 0.0),
    "twice L2": ((50e6, 50e6, 50e6), 25e6),
    "a footprint of 4 x L2, a quarter written": ((150e6, 50e6, 50e6), 37.5e6),
    "no L2 size: all": ((16e6, 16e6, None), 16e6),
    "nothing written": ((16e6, 0.0, 50e6), 0.0),
    "store-only of 2 x L2, K kept": ((0.0, 120e6, 60e6, 29e6), 91e6),
    "within L2, more written than K": ((16e6, 40e6, 60e6, 29e6), 11e6),
    "a quarter written, the share under K": ((150e6, 50e6, 50e6, 29e6), 37.5e6),
}


@pytest.mark.parametrize("case, expected", WRITTEN_BACK.values(), ids=WRITTEN_BACK.keys())
def test_the_written_bytes_l2_writes_back_during_the_kernel(case, expected):
    from roofline._predict.terms.dram_bytes import written_back_bytes

    assert written_back_bytes(*case) == pytest.approx(expected)


@pytest.mark.parametrize("n, kept", [(1 << 22, 1.0), (1 << 26, 0.0)], ids=["32 MB copy", "512 MB copy"])
def test_after_the_flush_a_copy_that_fits_l2_writes_its_lines_back_after_it(n, kept):
    k = models.copy(n)
    written = k.traffic.dram_store_bytes
    gpu = roofline.gpu("H200")
    after = _term(roofline.predict("H200", k, after_l2_flush=True), "dram").inputs
    back_to_back = _term(roofline.predict("H200", k), "dram").inputs
    assert back_to_back["dram_written_bytes"] == pytest.approx(written)  # the last launch's lines displaced
    own = after["dram_written_bytes"] - after["flush_writeback_bytes"]
    footprint = k.traffic.dram_load_bytes + written
    cap = roofline.calibration("H200").l2_kept_written_bytes or float("inf")  # l2_written_cap
    assert own == pytest.approx(written - min(written * min(1.0, gpu.l2_cache_bytes / footprint), cap))
    assert (own == 0) == (kept == 1.0)
    with roofline.terms.disabled({"l2_keeps_writes"}):
        off = _term(roofline.predict("H200", k, after_l2_flush=True), "dram").inputs
    assert off["dram_written_bytes"] - off["flush_writeback_bytes"] == pytest.approx(written)


@pytest.mark.parametrize("gpu, n", [("A100", 1 << 22), ("A100", 1 << 23), ("H200", 1 << 22)])
def test_after_the_flush_the_roof_counts_the_bytes_moved_while_the_kernel_runs(gpu, n):
    """A copy whose written lines L2 keeps past its end, on a GPU without the flush's figure (no
    written-back flush lines to add): the DRAM term's roof is the bytes it moves while it runs,
    never above its time, and `bound_counts` carries those bytes to `roofline.analyze`
    (predict raised a ValidationError here before)."""
    from roofline.terms import bound_counts

    k = models.copy(n)
    cal = roofline.calibration(gpu).model_copy(update={"flush_dirty_bytes": None})
    p = roofline.predict(gpu, k, after_l2_flush=True, calibration=cal)
    dram = _term(p, "dram")
    assert dram.inputs["roof_bytes"] == pytest.approx(min(k.dram_bytes, dram.inputs["dram_equivalent_bytes"]))
    assert dram.inputs["roof_bytes"] < k.dram_bytes  # the kept written lines are not in it
    assert dram.roof_seconds <= dram.seconds and p.roofline_seconds <= p.seconds
    bound = roofline.analyze(gpu, bound_counts(k, p.terms)).time_lower_bound_seconds
    assert bound == pytest.approx(p.roofline_seconds)
