"""Host-device transfer time and L2 persistence."""

from __future__ import annotations

import doctest
from types import SimpleNamespace

import pytest

import roofline._transfer
from roofline._errors import RooflineError
from roofline._transfer import (
    MAX_PERSISTING_FRACTION,
    PAGEABLE_FACTOR,
    PINNED_EFFICIENCY,
    AccessPolicyWindow,
    WindowTraffic,
    l2_persistence,
    transfer_time,
)

# PCIe Gen3 x16: 16 lanes x 8 GT/s x 128/130 / 8 bytes per second per direction.
GEN3_X16 = 16 * 8e9 * 128 / 130 / 8


def _gpu(rate=GEN3_X16, kind="pcie"):
    return SimpleNamespace(host_link=SimpleNamespace(kind=kind, bytes_per_second=rate))


def test_pinned_reaches_best_practices_12_gb_per_s_on_gen3_x16():
    # CUDA C Best Practices Guide, Pinned Memory: roughly 12 GB/s on PCIe x16 Gen3.
    result = transfer_time(_gpu(), 1 << 30, memory="pinned")
    assert result.bytes_per_second == pytest.approx(12e9)
    assert result.seconds == pytest.approx(10e-6 + (1 << 30) / 12e9)


def test_pageable_is_slower_by_the_measured_factor():
    # bandwidthTest, GTX TITAN Black (jungfrau-photoncounter#18): 4026.1 vs 5836.3 MB/s.
    pinned = transfer_time(_gpu(), 1 << 26)
    pageable = transfer_time(_gpu(), 1 << 26, memory="pageable")
    assert pageable.bytes_per_second / pinned.bytes_per_second == pytest.approx(4026.1 / 5836.3)
    assert pageable.seconds > pinned.seconds


def test_mapped_pays_per_access():
    once = transfer_time(_gpu(), 1 << 20, memory="mapped", latency_seconds=0)
    thrice = transfer_time(_gpu(), 1 << 20, memory="mapped", accesses=3, latency_seconds=0)
    assert thrice.seconds == pytest.approx(3 * once.seconds)
    assert once.latency_seconds == 0


@pytest.mark.parametrize("size", [0, 1, 1 << 10, 1 << 20, 1 << 30])
def test_time_grows_with_size_and_latency_dominates_small_copies(size):
    result = transfer_time(_gpu(), size)
    assert result.seconds >= result.latency_seconds
    assert transfer_time(_gpu(), size + 4096).seconds > result.seconds


def test_faster_link_is_faster():
    slow, fast = transfer_time(_gpu(GEN3_X16), 1 << 30), transfer_time(_gpu(4 * GEN3_X16), 1 << 30)
    assert fast.seconds < slow.seconds


def test_works_with_the_gpu_database():
    roofline = pytest.importorskip("roofline")
    if not hasattr(roofline, "gpu"):
        pytest.skip("roofline.gpu not available yet")
    gpu = roofline.gpu("A100-SXM4-40GB")
    result = transfer_time(gpu, 1 << 30)
    assert result.link_bytes_per_second == gpu.host_link.bytes_per_second


@pytest.mark.parametrize(
    "kwargs, error",
    [
        ({"bytes": -1}, RooflineError),
        ({"bytes": 1, "memory": "unified"}, RooflineError),
        ({"bytes": 1, "accesses": 2}, RooflineError),
        ({"bytes": 1, "pageable_factor": 1.5}, RooflineError),
        ({"bytes": "1"}, TypeError),
    ],
    ids=["negative", "unknown memory", "accesses on a copy", "factor > 1", "string bytes"],
)
def test_bad_transfer_input(kwargs, error):
    with pytest.raises(error):
        transfer_time(_gpu(), **kwargs)


def test_gpu_without_host_link_is_a_type_error():
    with pytest.raises(TypeError, match="host_link"):
        transfer_time(object(), 1)


def test_constants_match_their_sources():
    assert PINNED_EFFICIENCY == pytest.approx(12e9 / 15.753846e9, rel=1e-6)
    assert PAGEABLE_FACTOR == pytest.approx(0.69, abs=0.005)
    # A100: persistingL2CacheMaxSize 31457280 / l2CacheSize 41943040.
    assert MAX_PERSISTING_FRACTION == 31457280 / 41943040


MiB = 1 << 20


@pytest.mark.parametrize(
    "window, hit_ratio, set_aside, persisting, thrashing, recommended",
    [
        # CUDA Programming Guide, L2 access policy: 16 KB set-aside, 32 KB window.
        (32 * 1024, 1.0, 16 * 1024, 16 * 1024, True, 0.5),
        (32 * 1024, 0.5, 16 * 1024, 16 * 1024, False, 0.5),
        (8 * MiB, 1.0, 30 * MiB, 8 * MiB, False, 1.0),
        (8 * MiB, 0.6, 30 * MiB, int(8 * MiB * 0.6), False, 1.0),
        (100 * MiB, 1.0, 30 * MiB, 30 * MiB, True, 0.3),
    ],
    ids=["guide 1.0", "guide 0.5", "fits", "hit ratio 0.6", "window > set-aside"],
)
def test_l2_persistence(window, hit_ratio, set_aside, persisting, thrashing, recommended):
    result = l2_persistence(
        AccessPolicyWindow(num_bytes=window, hit_ratio=hit_ratio), set_aside_bytes=set_aside, l2_cache_bytes=40 * MiB
    )
    assert result.persisting_bytes == persisting
    assert result.thrashing is thrashing
    assert result.recommended_hit_ratio == pytest.approx(recommended)
    assert result.hit_fraction == pytest.approx(persisting / window)
    assert result.normal_l2_bytes == 40 * MiB - persisting


def test_set_aside_is_capped_at_the_device_maximum():
    # A100 allows 30 MiB of its 40 MiB L2 (cudaDeviceProp::persistingL2CacheMaxSize).
    window = AccessPolicyWindow(num_bytes=64 * MiB, hit_ratio=1.0)
    result = l2_persistence(window, set_aside_bytes=40 * MiB, l2_cache_bytes=40 * MiB)
    assert result.set_aside_bytes == 30 * MiB
    explicit = l2_persistence(window, set_aside_bytes=40 * MiB, l2_cache_bytes=40 * MiB, max_persisting_bytes=20 * MiB)
    assert explicit.set_aside_bytes == 20 * MiB


@pytest.mark.parametrize(
    "window, kwargs, match",
    [
        ({"num_bytes": 0}, {}, r"num_bytes=0 must be > 0"),
        ({"num_bytes": MiB + 0.5}, {}, r"num_bytes=1048576.5 must be a whole number"),
        ({"num_bytes": 2**65}, {}, r"num_bytes=3.68935e\+19 exceeds"),
        ({"hit_ratio": 1.5}, {}, r"hit_ratio=1.5 must be in \[0, 1\]"),
        ({"base_ptr": 0}, {}, r"base_ptr"),
        ({}, {"set_aside_bytes": -1}, r"set_aside_bytes=-1 must be >= 0"),
        ({}, {"max_persisting_bytes": 80 * MiB}, r"max_persisting_bytes=83886080 exceeds l2_cache_bytes"),
        ({}, {"l2_cache_bytes": 0}, r"l2_cache_bytes=0 must be > 0"),
    ],
    ids=["empty window", "fractional window", "window past 2**64", "ratio > 1", "unknown field",
         "negative set-aside", "cap above L2", "no L2"],
)
def test_bad_persistence_input(window, kwargs, match):
    def run():
        args = {"set_aside_bytes": MiB, "l2_cache_bytes": 40 * MiB, **kwargs}
        return l2_persistence(AccessPolicyWindow(**{"num_bytes": MiB, "hit_ratio": 1.0, **window}), **args)

    with pytest.raises(RooflineError, match=match):
        run()


@pytest.mark.parametrize(
    "fields, match",
    [
        ({"window_reads_bytes": 0}, r"window_reads_bytes=0 must be > 0"),
        ({"other_bytes": -1.0}, r"other_bytes=-1.0 must be >= 0"),
        ({"dram_bytes_per_second": float("inf")}, r"dram_bytes_per_second=inf must be > 0 and finite"),
        ({"l2_bytes_per_second": 0.0}, r"l2_bytes_per_second=0.0 must be > 0"),
    ],
    ids=["no window reads", "negative other bytes", "infinite DRAM", "no L2 bandwidth"],
)
def test_bad_window_traffic(fields, match):
    with pytest.raises(RooflineError, match=match):
        WindowTraffic(**{"window_reads_bytes": MiB, "dram_bytes_per_second": 1e12, **fields})


@pytest.mark.parametrize(
    "window, traffic, match",
    [
        (MiB, None, r"window must be a roofline.transfer.AccessPolicyWindow, not int"),
        (AccessPolicyWindow(num_bytes=MiB, hit_ratio=1.0), {"window_reads_bytes": MiB}, r"traffic must be .* not dict"),
    ],
    ids=["window as a number", "traffic as a dict"],
)
def test_persistence_takes_its_models(window, traffic, match):
    with pytest.raises(TypeError, match=match):
        l2_persistence(window, set_aside_bytes=MiB, l2_cache_bytes=40 * MiB, traffic=traffic)


def test_doctests():
    assert doctest.testmod(roofline._transfer).failed == 0
