"""The memory side of the time model (issue 23): the bound over the prediction's ceilings,
the L2 request term, DRAM random bursts and large strides, global atomics."""

from __future__ import annotations

import pytest

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
