"""The memory side of the time model (issue 23): the bound over the prediction's ceilings,
the L2 request term, DRAM random bursts and large strides, global atomics."""

from __future__ import annotations

import pytest

import roofline
from roofline import models
from roofline._terms import roofline_bound

SUITE = {
    # issue 23 item 10: with L1 reuse the model serves fewer L2 bytes than the datasheet
    # roofline counts; the old bound (roofline.analyze) was 104 us against 72 us predicted
    "blur r=1": lambda: models.blur(4096, 4096, radius=1),
    "blur r=3": lambda: models.blur(4096, 4096, radius=3),
    "copy": lambda: models.copy(1 << 26),
    "matmul_naive": lambda: models.matmul_naive(2048, 2048, 2048),
}


@pytest.mark.parametrize("gpu", ["H200", "H100 SXM"])
@pytest.mark.parametrize("make", SUITE.values(), ids=SUITE.keys())
def test_bound_never_exceeds_the_prediction(gpu, make):
    p = roofline.predict(gpu, make())
    assert 0 < p.roofline_seconds <= p.seconds
    assert p.roofline_seconds == roofline_bound(p.terms)


def test_bound_takes_the_prediction_ceilings_not_the_datasheet():
    # the DRAM roof the model uses (sustained fraction of the datasheet) is lower, so a
    # copy's bound is longer than the datasheet roofline's, and no longer than the DRAM term
    p = roofline.predict("H200", models.copy(1 << 26))
    plain = roofline.analyze("H200", models.copy(1 << 26)).time_lower_bound_seconds
    dram = next(t for t in p.terms if t.name == "dram")
    assert plain < p.roofline_seconds <= dram.seconds
    assert p.roofline_seconds == pytest.approx(dram.inputs["dram_equivalent_bytes"] / dram.inputs["roof_bytes_per_second"])
