"""Boundary and branch divergence: PMPP's examples, a brute-force oracle, warp paths."""

from __future__ import annotations

import doctest
import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import roofline.divergence
from roofline._errors import RooflineError
from roofline.divergence import boundary_divergence, branch_divergence

# (id, extent, block, total_warps, divergent_warps, inactive_warps, source)
CASES = [
    # PMPP 4th ed. §4.5: a vector of 100 elements in 32-thread blocks: 1 of 4 warps diverges.
    ("PMPP vector 100", 100, 32, 4, 1, 0),
    # PMPP §4.5: 1000 elements: 1 of 32 warps (about 3%).
    ("PMPP vector 1000", 1000, 32, 32, 1, 0),
    # Same with 256-thread blocks: 1000 = 31 * 32 + 8, warp 31 diverges.
    ("vector 1000 block 256", 1000, 256, 32, 1, 0),
    # 100 with 256-thread blocks: warp 3 has 4 threads in; warps 4-7 entirely out.
    ("vector 100 block 256", 100, 256, 8, 1, 4),
    # PMPP ch.3 76 x 62 picture, 16 x 16 blocks (5 x 4 blocks of 8 warps). Counted by hand:
    # right column (12 of 16 x valid): 3 blocks x 8 divergent warps; bottom row (14 of 16 y
    # valid): warp 7 all out in 4 blocks; corner: 7 divergent + 1 out.
    ("PMPP picture 76x62", (76, 62), (16, 16), 160, 31, 5),
    ("exact fit", (64, 64), (16, 16), 128, 0, 0),
    # One-warp blocks over 33 x 2 x 2: the 4 blocks at x = 32 have 1 of 32 lanes inside.
    ("3d", (33, 2, 2), (32, 1, 1), 8, 4, 0),
]


@pytest.mark.parametrize(
    "extent, block, total, divergent, inactive", [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_examples(extent, block, total, divergent, inactive):
    result = boundary_divergence(extent, block)
    assert (result.total_warps, result.divergent_warps, result.inactive_warps) == (
        total, divergent, inactive
    )
    assert result.fraction == pytest.approx(divergent / total)


def _brute(extent, block):
    ext = (*extent, 1, 1)[:3]
    blk = (*block, 1, 1)[:3]
    grid = [-(-e // b) for e, b in zip(ext, blk)]
    threads = math.prod(blk)
    divergent = inactive = 0
    for gz, gy, gx in itertools.product(*(range(g) for g in reversed(grid))):
        flags = []
        for t in range(threads):
            tx, ty, tz = t % blk[0], (t // blk[0]) % blk[1], t // (blk[0] * blk[1])
            x, y, z = gx * blk[0] + tx, gy * blk[1] + ty, gz * blk[2] + tz
            flags.append(x < ext[0] and y < ext[1] and z < ext[2])
        for w in range(0, threads, 32):
            warp = flags[w : w + 32]
            divergent += any(warp) and not all(warp)
            inactive += not any(warp)
    return divergent, inactive


@settings(max_examples=60, deadline=None)
@given(
    st.tuples(st.integers(1, 70), st.integers(1, 20), st.integers(1, 5)),
    st.tuples(st.integers(1, 40), st.integers(1, 8), st.integers(1, 3)),
)
def test_matches_brute_force(extent, block):
    result = boundary_divergence(extent, block)
    assert (result.divergent_warps, result.inactive_warps) == _brute(extent, block)
    assert 0 < result.simd_efficiency <= 1
    assert result.estimated_cost == pytest.approx(1 - result.simd_efficiency)
    assert result.divergent_warps + result.inactive_warps <= result.total_warps


def test_cost_of_pmpp_vector_100():
    # 100 threads in 4 warps: 128 lane slots issued for 100 useful ones.
    result = boundary_divergence(100, 32)
    assert result.issued_lanes == 128
    assert result.estimated_cost == pytest.approx(28 / 128)


@pytest.mark.parametrize(
    "extent, block, error",
    [(0, 32, RooflineError), (10, (32, 64), RooflineError), (10.0, 32, TypeError),
     ((1, 2, 3, 4), 32, TypeError)],
    ids=["zero extent", "block 2048", "float", "4-d"],
)
def test_bad_input(extent, block, error):
    with pytest.raises(error):
        boundary_divergence(extent, block)


def test_doctests():
    assert doctest.testmod(roofline.divergence).failed == 0


# ------------------------------------------------------------------ branch_divergence

_T = np.arange(256)


@pytest.mark.parametrize(
    ("sides", "divergent", "factor"),
    [
        (_T & 1, 8, 2.0),                       # lane parity: every warp both sides
        ((_T // 32) & 1, 0, 1.0),               # warp parity: one side per warp
        (_T < 48, 1, 9 / 8),                     # a boundary inside the second warp
        (_T % 3, 8, 3.0),                       # three sides, every warp all three
        (np.zeros(40, dtype=int), 0, 1.0),      # a partial last warp
    ],
    ids=["lane", "warp", "boundary", "three-way", "partial-warp"],
)
def test_branch_divergence(sides, divergent, factor):
    r = branch_divergence(sides)
    assert r.divergent_warps == divergent
    assert r.issue_factor == pytest.approx(factor)
    assert r.simd_efficiency == pytest.approx(r.threads / (32 * r.paths_issued))


@pytest.mark.parametrize("bad", [[], np.zeros((4, 4), dtype=int), np.zeros(1025, dtype=int), [0.5, 1.5], "ab"])
def test_branch_divergence_refuses(bad):
    with pytest.raises(RooflineError, match="sides"):
        branch_divergence(bad)
