"""Every parameter of the time model's terms names the ``gpuroof validate`` probe that measures it
(`roofline._predict.params`): a registered probe whose module writes that calibration field."""

from __future__ import annotations

import inspect
import re
import sys

import pytest

import roofline._calibration  # a private module: loaded by name (roofline loads its names lazily)
from roofline._predict import probes
from validate.report._registry import PROBES

BY_NAME = {probe.name: probe for probe in PROBES}


@pytest.mark.parametrize(("field", "probe"), sorted(probes().items()), ids=sorted(probes()))
def test_a_term_parameter_names_the_probe_that_measures_it(field, probe):
    assert field in roofline._calibration.Calibration.model_fields
    assert probe in BY_NAME, f"{field} names {probe!r}, not one of {sorted(BY_NAME)}"
    source = inspect.getsource(sys.modules[type(BY_NAME[probe]).__module__])
    assert re.search(rf"\b{field}\b", source), f"validate's {probe} probe never writes {field}"


def test_the_terms_read_every_model_parameter():
    # the figures no term reads: reported (the latency ladder's near and far L2 modes and TLB
    # penalty, the graph launch cost, L1's plateau)
    reported = {"l2_near_hit_latency_seconds", "l2_far_hit_latency_seconds", "tlb_miss_penalty_seconds",
                "graph_kernel_seconds", "l1_read_bytes_per_second"}
    calibration = set(roofline._calibration.CALIBRATION_PARAMETERS + roofline._calibration.CALIBRATION_FIGURES)
    assert set(probes()) == calibration - reported
