"""Warp memory transactions and shared-memory bank conflicts against the textbook tables."""

from __future__ import annotations

import doctest
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import roofline._warp_access
import roofline.memory
from roofline._errors import RooflineError
from roofline.memory import bank_conflicts, warp_addresses, warp_transactions

# (id, addresses, access_bytes, operation, cached, transactions, moved_bytes, efficiency, source)
TRANSACTIONS = [
    # Cheng et al., Professional CUDA C Programming, ch.4 "Cached Loads", figures 4-9 to 4-13.
    ("cached aligned coalesced", warp_addresses(), 4, "load", True, 1, 128, 1.0),
    ("cached aligned permuted", warp_addresses()[::-1].copy(), 4, "load", True, 1, 128, 1.0),
    ("cached misaligned by 11 floats", warp_addresses(offset=11), 4, "load", True, 2, 256, 0.5),
    ("cached every lane one address", [0] * 32, 4, "load", True, 1, 128, 0.03125),
    # "Uncached Loads", figures 4-14 to 4-18.
    ("uncached aligned coalesced", warp_addresses(), 4, "load", False, 4, 128, 1.0),
    ("uncached misaligned by 11 floats", warp_addresses(offset=11), 4, "load", False, 5, 160, 0.8),
    ("uncached every lane one address", [0] * 32, 4, "load", False, 1, 32, 0.125),
    # Cheng ch.4 "Array of Structures": one float field of struct {float x, y;} is 50%.
    ("cached aos field x", warp_addresses(element_bytes=8), 4, "load", True, 2, 256, 0.5),
    ("uncached aos field y", warp_addresses(element_bytes=8, field_offset_bytes=4), 4, "load",
     False, 8, 256, 0.5),
    # Cheng ch.4 "Global Memory Writes", figures 4-19 to 4-21.
    ("store aligned 128 bytes", warp_addresses(), 4, "store", True, 1, 128, 1.0),
    ("store aligned 64 bytes", warp_addresses(lanes=16), 4, "store", True, 1, 64, 1.0),
    ("store scattered in 192 bytes", [96, 160, 256], 4, "store", True, 3, 96, 0.125),
    # CUDA C Best Practices Guide, "Coalesced Access to Global Memory": a 64-bit access by a
    # warp, aligned, is four 32-byte segments per 128 bytes -> 256 bytes, 8 sectors.
    ("uncached 8-byte coalesced", warp_addresses(element_bytes=8), 8, "load", False, 8, 256, 1.0),
    # Strided by 2 floats: half the moved bytes used (Best Practices, "Strided Accesses").
    ("uncached stride 2", warp_addresses(stride=2), 4, "load", False, 8, 256, 0.5),
]


@pytest.mark.parametrize(
    "addresses, access_bytes, operation, cached, transactions, moved, efficiency",
    [t[1:] for t in TRANSACTIONS],
    ids=[t[0] for t in TRANSACTIONS],
)
def test_textbook_transactions(addresses, access_bytes, operation, cached, transactions, moved, efficiency):
    result = warp_transactions(addresses, access_bytes, operation, cached)
    assert result.transactions == transactions
    assert result.moved_bytes == moved
    assert result.efficiency == pytest.approx(efficiency)


def test_store_two_segment_and_four_segment_rules():
    # Cheng ch.4: segments within one aligned 64-byte half form a 2-segment transaction;
    # segments in both halves of a 128-byte region need a 4-segment one.
    assert warp_transactions([0, 32], operation="store").transaction_bytes == (64,)
    assert warp_transactions([0, 64], operation="store").transaction_bytes == (128,)
    assert warp_transactions([64, 96], operation="store").transaction_bytes == (64,)


def test_inactive_lanes_by_none_nan_and_mask_agree():
    base = warp_addresses()
    half = [int(a) if lane < 16 else None for lane, a in enumerate(base)]
    nan = np.where(np.arange(32) < 16, base, np.nan)
    mask = np.arange(32) < 16
    a = warp_transactions(half, cached=False)
    b = warp_transactions(nan, cached=False)
    c = warp_transactions(base, cached=False, active=mask)
    assert a == b == c
    assert (a.active_lanes, a.transactions, a.requested_bytes) == (16, 2, 64)


def test_no_active_lane_moves_nothing():
    result = warp_transactions([None] * 32)
    assert (result.transactions, result.moved_bytes, result.efficiency) == (0, 0, 1.0)


@pytest.mark.parametrize(
    "kwargs, error",
    [
        ({"byte_addresses": [2], "access_bytes": 4}, RooflineError),
        ({"byte_addresses": [-4]}, RooflineError),
        ({"byte_addresses": list(range(0, 33 * 4, 4))}, RooflineError),
        ({"byte_addresses": [0], "access_bytes": 3}, RooflineError),
        ({"byte_addresses": [0], "operation": "atomic"}, RooflineError),
        ({"byte_addresses": ["0"]}, TypeError),
        ({"byte_addresses": 0}, TypeError),
        ({"byte_addresses": [0], "active": [1]}, TypeError),
    ],
    ids=["misaligned", "negative", "33 lanes", "3-byte access", "bad operation",
         "string address", "scalar", "int mask"],
)
def test_bad_input(kwargs, error):
    with pytest.raises(error):
        warp_transactions(**kwargs)


def test_misalignment_message_names_parameter_and_value():
    with pytest.raises(RooflineError, match=r"byte_addresses\[0\]=6 .*access_bytes=4"):
        warp_transactions([6])


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.one_of(st.none(), st.integers(0, 4096)), min_size=1, max_size=32),
    st.sampled_from([1, 2, 4, 8, 16]),
    st.sampled_from([("load", True), ("load", False), ("store", False)]),
)
def test_efficiency_in_unit_interval_and_moved_covers_useful(lanes, size, kind):
    addresses = [None if a is None else a * size for a in lanes]
    result = warp_transactions(addresses, size, kind[0], kind[1])
    assert 0 < result.efficiency <= 1
    assert result.moved_bytes >= result.useful_bytes
    assert result.useful_bytes <= result.requested_bytes
    # Loads move at least the sectors touched; uncached loads exactly those.
    if result.operation == "load":
        assert result.sectors * 32 <= result.moved_bytes
        assert (result.sectors * 32 == result.moved_bytes) or result.cached


# (id, addresses, access_bytes, wavefronts, ways, source)
BANKS = [
    # CUDA C Programming Guide, "Shared Memory" figures (compute capability 5.x+):
    ("stride 1 word", warp_addresses(stride=1), 4, 1, 1),
    ("stride 2 words (2-way)", warp_addresses(stride=2), 4, 2, 2),
    ("stride 3 words", warp_addresses(stride=3), 4, 1, 1),
    ("broadcast, one word", [0] * 32, 4, 1, 1),
    ("several lanes one word in a bank", [20] * 5 + list(range(0, 27 * 4, 4)), 4, 1, 1),
    # Cheng et al. ch.5: column of a 32x32 float tile is a 32-way conflict; padding by one
    # float removes it.
    ("column of 32x32 tile", warp_addresses(stride=32), 4, 32, 32),
    ("column of padded 32x33 tile", warp_addresses(stride=33), 4, 1, 1),
    # Two distinct words in bank 0 plus a broadcast: 2-way.
    ("two words one bank", [0, 128] + [0] * 30, 4, 2, 2),
    # 8-byte accesses per half-warp: consecutive doubles are conflict free in 2 phases.
    ("8-byte consecutive", warp_addresses(element_bytes=8), 8, 2, 1),
    ("8-byte stride 2", warp_addresses(stride=2, element_bytes=8), 8, 4, 2),
    # 16-byte accesses per quarter-warp: consecutive float4 in 4 phases.
    ("16-byte consecutive", warp_addresses(element_bytes=16), 16, 4, 1),
    # Byte accesses: four lanes share each word.
    ("1-byte consecutive", warp_addresses(element_bytes=1), 1, 1, 1),
]


@pytest.mark.parametrize(
    "addresses, access_bytes, wavefronts, ways", [b[1:] for b in BANKS], ids=[b[0] for b in BANKS]
)
def test_bank_conflict_table(addresses, access_bytes, wavefronts, ways):
    result = bank_conflicts(addresses, access_bytes)
    assert (result.wavefronts, result.ways) == (wavefronts, ways)
    assert result.conflict_free == (ways == 1)


@pytest.mark.parametrize("stride", range(1, 65), ids=lambda s: f"stride{s}")
def test_stride_conflict_degree_is_gcd(stride):
    # A stride of s words hits 32 / gcd(s, 32) banks: gcd(s, 32)-way (Programming Guide).
    assert bank_conflicts(warp_addresses(stride=stride)).ways == math.gcd(stride, 32)


def test_doctests():
    for module in (roofline.memory, roofline._warp_access):
        assert doctest.testmod(module, optionflags=doctest.ELLIPSIS).failed == 0


def test_all_is_the_public_surface():
    public = {n for n in vars(roofline.memory) if not n.startswith("_")} - {"annotations"}
    assert set(roofline.memory.__all__) == public
    assert roofline.memory.__all__ == sorted(roofline.memory.__all__)
