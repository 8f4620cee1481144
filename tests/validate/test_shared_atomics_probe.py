"""The shared-atomics probe (validate.probes._shared_atomics) on the CPU: its figures from times
worked by hand, its kernels in the source, its figures as calibration fields the term reads; and
the cause probes' shared-atomics variants describing their atomics."""

from __future__ import annotations

import json
import re

import pytest

import roofline
from roofline._predict.params import probes
from validate.device import kernel_source
from validate.probes import SharedAtomicsProbe, _doubled, _shared_atomics
from validate.probes._cause_variants import CAUSE_VARIANTS
from validate.probes._shared_atomics import KERNELS, SharedAtomicTimes, derive_shared_atomics

# 256 and 512 operations a thread, 132 SMs; each row: (short, long) seconds
TIMES = SharedAtomicTimes(iters=256, sm_count=132, seconds={
    "shared_add_one_word": (8e-6, 12e-6), "shared_add_spread": (8e-6, 10e-6),
    "shared_cas_one_word": (30e-6, 30e-6), "shared_cas_spread": (20e-6, 40e-6), "shared_cas_chain": (20e-6, 45.6e-6)})

#: By hand: 1024 threads x 256 operations over the added time; the chain's added time over 256.
EXPECTED = {
    "sm_shared_atomic_one_word_updates_per_second": 262_144 / 4e-6,
    "sm_shared_atomic_spread_updates_per_second": 262_144 / 2e-6,
    "sm_shared_cas_one_word_attempts_per_second": None,  # the longer launch added no time
    "sm_shared_cas_spread_attempts_per_second": 262_144 / 20e-6,
    "shared_cas_round_trip_seconds": 25.6e-6 / 256,
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_the_figures_from_the_added_time(name):
    value = getattr(derive_shared_atomics(TIMES), name)
    assert value == (None if EXPECTED[name] is None else pytest.approx(EXPECTED[name], rel=1e-12))


def test_the_probe_gives_the_fields_the_term_reads_and_its_kernels_are_in_the_source():
    figures = SharedAtomicsProbe().figures(derive_shared_atomics(TIMES))
    assert set(figures) == set(EXPECTED) <= set(roofline.Calibration.model_fields)
    assert {name for name, probe in probes().items() if probe == "shared_atomics"} == set(EXPECTED)
    source = kernel_source("shared_atomics.cu")
    assert {k for k, _, _ in KERNELS} == set(re.findall(r'extern "C" __global__ void (\w+)\(', source))


def test_times_of_another_kind_are_refused():
    with pytest.raises(TypeError, match="SharedAtomicTimes"):
        derive_shared_atomics({"iters": 256})


SHARED = [v for v in CAUSE_VARIANTS if v.cause == "shared_atomics"]


@pytest.mark.parametrize("variant", SHARED, ids=[v.variant for v in SHARED])
def test_the_cause_variants_describe_their_shared_atomics(variant):
    bins, iters = (int(x) for x in re.findall(r"bins=(\d+) iters=(\d+)", variant.variant)[0])
    updates = variant.grid * variant.block * iters  # every thread adds 1 iters times
    counts = variant.counts
    assert counts["shared_atomic_words"] == bins
    if variant.kernel == "shared_cas_count":
        # one bin: the block's 256 threads on one word; 1024 bins: each thread on a word of its own
        assert counts["shared_cas"] == updates and "shared_atomics" not in counts
        assert counts["shared_cas_contenders"] == {1: 256, 1024: 1}[bins]
    else:
        assert counts["shared_atomics"] == updates and "shared_cas" not in counts


def test_main_prints_the_section_and_writes_the_figures(tmp_path, monkeypatch, capsys):
    info = type("Info", (), {"name": "NVIDIA H100 80GB HBM3"})()
    monkeypatch.setattr(_doubled, "open_session", lambda: object())
    monkeypatch.setattr(_doubled, "query_device", lambda session: info)
    monkeypatch.setattr(_shared_atomics, "measure_shared_atomics", lambda *a, **k: derive_shared_atomics(TIMES))
    out = tmp_path / "shared_atomics.json"
    assert _shared_atomics.main(out=out) == 1  # the one-word CAS launch that added no time
    assert "## Shared-memory atomics (per SM)" in capsys.readouterr().out
    written = json.loads(out.read_text())
    assert written["device"] == info.name
    round_trip = written["figures"]["shared_cas_round_trip_seconds"][0]
    assert round_trip == pytest.approx(EXPECTED["shared_cas_round_trip_seconds"])
