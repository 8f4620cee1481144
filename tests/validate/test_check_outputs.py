"""`check_outputs` compares a chunk at a time: the same verdicts as comparing whole arrays.

The oracle is the whole-array comparison `check_outputs` used before (main at 996ea2c),
kept here verbatim in `_whole_array`.
"""

import math

import numpy as np
import pytest

from validate.suite import _kernels
from validate.suite._kernels import F32, KernelCase


def _whole_array(got, want, tolerance):
    """(problems, relative error, unwritten) of one output, as the whole-array version computed them."""
    problems, unwritten, worst = [], 0, 0.0
    got = np.asarray(got, dtype=np.float64).reshape(want.shape)
    want = want.astype(np.float64)
    keep = np.isnan(want)
    if np.any(~np.isnan(got[keep])):
        problems.append(f"y: {int(np.sum(~np.isnan(got[keep])))} elements written that must not be")
    live = ~keep
    missing = int(np.sum(np.isnan(got[live])))
    unwritten += missing
    if missing:
        problems.append(f"y: {missing} of {int(live.sum())} elements unwritten (still NaN)")
        return problems, worst, unwritten
    diff = got[live] - want[live]
    norm = float(np.linalg.norm(want[live]))
    error = float(np.linalg.norm(diff)) / norm if norm > 0 else float(np.linalg.norm(diff))
    worst = max(worst, error)
    if tolerance == 0:
        bad = np.abs(diff) > 2 * np.finfo(np.float32).eps * np.maximum(np.abs(want[live]), 1e-30)
        if np.any(bad):
            i = int(np.flatnonzero(bad)[0])
            problems.append(f"y: {int(bad.sum())} elements differ, first at flat index {i}")
    elif not error <= tolerance:
        problems.append(f"y: relative error {error:.3g} exceeds {tolerance:.0e}")
    return problems, worst, unwritten


def _case(want, tolerance):
    return KernelCase("t", "t", (1, 1, 1), (32, 1, 1), {"x": want}, {"y": (want.shape, F32)}, ("x", "y"),
                      lambda i: {"y": i["x"]}, tolerance=tolerance)


@pytest.mark.parametrize("seed", range(12), ids=lambda s: f"seed{s}")
@pytest.mark.parametrize("tolerance", [0.0, 1e-5], ids=["exact", "relative"])
def test_chunks_agree_with_whole_arrays(seed, tolerance, monkeypatch):
    monkeypatch.setattr(_kernels, "_CHUNK", 7)  # many chunk boundaries in a small array
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 200))
    want = (rng.random(n) * 2 - 1).astype(F32)
    kind = seed % 6
    if kind in (1, 2, 5):  # elements the kernel must leave alone
        want[rng.random(n) < 0.3] = np.nan
    got = want.copy()
    if kind == 2:  # one stray write
        holes = np.flatnonzero(np.isnan(want))
        if holes.size:
            got[holes[0]] = 1.0
    if kind == 3:  # unwritten elements
        got[rng.integers(0, n, 3)] = np.nan
    if kind in (4, 5):  # wrong values
        got[rng.integers(0, n, 2)] += 0.5
    if kind == 0 and seed:  # below the relative tolerance
        got = (got * (1 + 1e-7)).astype(F32)
    result = _kernels.check_outputs(_case(want, tolerance), {"y": got})
    problems, worst, unwritten = _whole_array(got, want, tolerance)
    assert result.message == ("ok" if not problems else "; ".join(problems))
    assert result.ok == (not problems) and result.unwritten == unwritten
    assert result.relative_error == pytest.approx(worst, rel=1e-12, abs=1e-300)


def test_a_large_output_checks_quickly():
    """2**24 floats (a quarter of the suite's vectors) in well under the old seconds."""
    import time

    want = np.random.default_rng(0).random(1 << 24, dtype=F32)
    started = time.perf_counter()
    assert _kernels.check_outputs(_case(want, 0.0), {"y": want.copy()}).ok
    assert time.perf_counter() - started < 5 and math.isfinite(started)
