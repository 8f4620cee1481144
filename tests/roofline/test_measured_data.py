"""Measured data against the model: host-link transfers, L2 persistence, measured ceilings, calibration.

The recorded measurements under tests/data are the ones `gpuroof validate` took on the lent
H200 and H100 SXM (docs/results/*/report.json, 2026-11-22); the packaged fits and model must
stay within 15% of them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import roofline
from roofline._errors import RooflineError

DATA = Path(__file__).resolve().parent.parent / "data"
MiB = 1 << 20
RECORDS = [("H200", "h200"), ("H100-SXM", "h100-sxm")]


def _link_points(slug):
    data = json.loads((DATA / f"host_links_{slug}.json").read_text())
    # managed: the model is the first touch (the migration); second touches find the pages resident
    return [p for p in data["points"] if p["bytes"] >= MiB and p["touch"] != "second"]


@pytest.mark.parametrize("gpu, slug", RECORDS, ids=[r[0] for r in RECORDS])
def test_transfer_time_within_15_percent_of_measurement_from_1_mib(gpu, slug):
    points = _link_points(slug)
    assert {(p["memory"], p["direction"]) for p in points} == {
        (m, d) for m in ("pinned", "pageable", "mapped", "managed") for d in ("h2d", "d2h")}
    worst = 0.0
    for p in points:
        predicted = roofline.transfer.transfer_time(roofline.gpu(gpu), p["bytes"], memory=p["memory"], direction=p["direction"])
        assert predicted.source.startswith("measured")
        error = abs(predicted.seconds / p["median_seconds"] - 1)
        worst = max(worst, error)
        assert error <= 0.15, (p, predicted.seconds)
    assert worst > 0  # the data are real measurements, not the fit's own values


def test_measured_link_directions_differ_and_pinned_beats_pageable():
    h200 = roofline.gpu("H200")
    pinned = roofline.transfer.transfer_time(h200, 1 << 30, memory="pinned", direction="h2d")
    pageable = roofline.transfer.transfer_time(h200, 1 << 30, memory="pageable", direction="h2d")
    assert pinned.bytes_per_second > 3 * pageable.bytes_per_second
    d2h = roofline.transfer.transfer_time(h200, 1 << 30, memory="pageable", direction="d2h")
    assert d2h.direction == "d2h" and d2h.seconds != pageable.seconds


def test_two_segment_fit_switches_rate_with_size():
    # The H200's pageable host-to-device copies slowed down from 256 MiB (recorded data).
    h200 = roofline.gpu("H200")
    small = roofline.transfer.transfer_time(h200, 64 * MiB, memory="pageable")
    large = roofline.transfer.transfer_time(h200, 1024 * MiB, memory="pageable")
    assert large.bytes_per_second < small.bytes_per_second


def test_unmeasured_gpu_keeps_the_datasheet_model_and_factors_override():
    a100 = roofline.gpu("A100")
    assert roofline.transfer.transfer_time(a100, 1 << 30).source.startswith("model")
    h200 = roofline.gpu("H200")
    assert roofline.transfer.transfer_time(h200, 1 << 30, efficiency=0.5).source.startswith("model")


def test_managed_needs_a_measurement():
    with pytest.raises(RooflineError, match="managed.*H200"):
        roofline.transfer.transfer_time(roofline.gpu("A100"), 1 << 20, memory="managed")


@pytest.mark.parametrize("kwargs", [{"direction": "up"}, {"memory": "unified"}], ids=["direction", "memory"])
def test_bad_transfer_arguments(kwargs):
    with pytest.raises(RooflineError):
        roofline.transfer.transfer_time(roofline.gpu("H200"), 1 << 20, **kwargs)


# ------------------------------------------------------------------------ persistence


def _persistence(slug):
    return json.loads((DATA / f"persistence_{slug}.json").read_text())


@pytest.mark.parametrize("gpu, slug", RECORDS, ids=[r[0] for r in RECORDS])
def test_l2_persistence_predicts_recorded_time_ratios_within_15_percent(gpu, slug):
    data = _persistence(slug)
    pers = data["persistence"]
    windows = [p for p in pers["points"] if p["case"]["hit_ratio"] is not None]
    assert len(windows) >= 12
    for p in windows:
        c = p["case"]
        predicted = roofline.transfer.l2_persistence(
            roofline.transfer.AccessPolicyWindow(num_bytes=c["hot_bytes"], hit_ratio=c["hit_ratio"]),
            set_aside_bytes=c["set_aside_bytes"], l2_cache_bytes=data["l2_cache_bytes"],
            max_persisting_bytes=pers["max_persisting_bytes"],
            traffic=roofline.transfer.WindowTraffic(
                window_reads_bytes=c["stream_bytes"] / c["ratio"], other_bytes=c["stream_bytes"],
                dram_bytes_per_second=pers["dram_bytes_per_second"], l2_bytes_per_second=pers["l2_bytes_per_second"]))
        measured = p["median_seconds"] / p["baseline_seconds"]
        assert abs(predicted.time_ratio / measured - 1) <= 0.15, (c, predicted.time_ratio, measured)


@pytest.mark.parametrize("gpu, slug", RECORDS, ids=[r[0] for r in RECORDS])
def test_persistence_buys_nothing_for_a_hot_set_that_stays_anyway(gpu, slug):
    data = _persistence(slug)
    small = [p for p in data["persistence"]["points"]
             if p["case"]["hit_ratio"] is not None and p["case"]["hot_bytes"] < data["l2_cache_bytes"] // 8]
    assert small and all(p["buys_nothing_predicted"] for p in small)
    assert all(abs(p["median_seconds"] / p["baseline_seconds"] - 1) < 0.05 for p in small)  # measured: ~no change


@pytest.mark.parametrize(
    "window, hit_ratio, set_aside, expected_ratio, buys_nothing",
    [
        (16 * MiB, 1.0, 36 * MiB, 0.8, False),  # fits the per-partition room: every hot read hits
        (32 * MiB, 1.0, 36 * MiB, 1 - 0.2 * 18 / 32, False),  # room 18 MiB of 32 MiB designated
        (32 * MiB, 0.0, 36 * MiB, 1.0, True),  # nothing designated
        (2 * MiB, 1.0, 36 * MiB, 1.0, True),  # reuse distance fits L2 / 2 already
    ],
    ids=["fits", "partial", "hit ratio 0", "stays anyway"],
)
def test_l2_persistence_time_model(window, hit_ratio, set_aside, expected_ratio, buys_nothing):
    p = roofline.transfer.l2_persistence(
        roofline.transfer.AccessPolicyWindow(num_bytes=window, hit_ratio=hit_ratio), set_aside_bytes=set_aside,
        l2_cache_bytes=60 * MiB, traffic=_traffic())
    assert p.time_ratio == pytest.approx(expected_ratio)
    assert p.buys_nothing is buys_nothing and p.reason


def test_l2_persistence_is_l2_bound_when_l2_is_slow():
    p = roofline.transfer.l2_persistence(
        roofline.transfer.AccessPolicyWindow(num_bytes=16 * MiB, hit_ratio=1.0), set_aside_bytes=36 * MiB,
        l2_cache_bytes=60 * MiB, traffic=_traffic(l2_bytes_per_second=1e12))
    assert p.buys_nothing and "L2 bandwidth" in p.reason


def test_l2_partitions_must_be_a_positive_integer():
    window = roofline.transfer.AccessPolicyWindow(num_bytes=MiB, hit_ratio=1.0)
    traffic = roofline.transfer.WindowTraffic(window_reads_bytes=MiB, dram_bytes_per_second=1e12)
    with pytest.raises(RooflineError, match="l2_partitions=0"):
        roofline.transfer.l2_persistence(window, set_aside_bytes=MiB, l2_cache_bytes=60 * MiB, traffic=traffic,
                                         l2_partitions=0)


def _traffic(**fields):
    """128 MiB read from the window, 512 MiB streamed, DRAM at 4 TB/s (the cases above)."""
    return roofline.transfer.WindowTraffic(window_reads_bytes=128 * MiB, other_bytes=512 * MiB,
                                           dram_bytes_per_second=4e12, **fields)


# ------------------------------------------------------------------------ ceilings, calibration


@pytest.mark.parametrize("gpu", ["H200", "H100-SXM"])
def test_measured_ceilings_carry_their_sources_and_beat_the_libraries(gpu):
    ceilings = roofline.measured_ceilings(gpu)
    assert {"dram_copy", "bf16_tensor", "fp64_tensor", "fp32_fma"} <= set(ceilings)
    for c in ceilings.values():
        assert c.source.startswith("measured:") and "gpuroof validate" in c.source
        assert c.value >= c.ours
        if c.reference_value is not None:
            assert c.value >= c.reference_value
    # the targets, on the recorded runs: ours >= cuBLAS and CuPy, FP32 >= 95% of peak
    for name in ("dram_copy", "bf16_tensor", "fp64_tensor"):
        assert ceilings[name].ours >= ceilings[name].reference_value
    assert ceilings["fp32_fma"].ours >= 0.95 * roofline.gpu(gpu).peak_flops("fp32")


@pytest.mark.parametrize("gpu", ["H200", "H100-SXM"])
def test_packaged_calibration_has_the_measured_latencies_in_order(gpu):
    cal = roofline.calibration(gpu)
    assert cal.l1_hit_latency_seconds < cal.l2_hit_latency_seconds < cal.dram_latency_seconds
    assert cal.l2_near_hit_latency_seconds < cal.l2_far_hit_latency_seconds
    assert cal.l1_read_bytes_per_second > cal.l2_read_bytes_per_second > cal.dram_read_bytes_per_second
    for name in ("dram_latency_seconds", "l2_hit_latency_seconds", "graph_kernel_seconds", "dram_read_bytes_per_second"):
        assert cal.sources[name].startswith("measured:") and gpu.split("-")[0] in cal.sources[name]
    assert "misses L2 by construction" in cal.sources["dram_latency_seconds"]


def test_unmeasured_gpu_has_no_figures():
    cal = roofline.calibration("A100-SXM4-40GB")
    assert cal.dram_latency_seconds is None and cal.l2_read_bytes_per_second is None
    assert roofline.measured_ceilings("A100-SXM4-40GB") == {}
