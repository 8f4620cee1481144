"""The family table on the recorded H200 baseline (tests/data/families_h200.json), and the specs."""

import json
import statistics
from pathlib import Path

import numpy as np
import pytest

from validate._families import FamilyRow, family_specs, family_table, predict_families, render_families_markdown

DATA = Path(__file__).parents[1] / "data" / "families_h200.json"
RAW = Path(__file__).parents[2] / "docs" / "results" / "h200" / "families_raw.json"


@pytest.fixture(scope="module")
def recorded():
    document = json.loads(DATA.read_text())
    return document, tuple(FamilyRow(**row) for row in document["rows"])


def _row(family, label, measured, predict, roofline):
    return FamilyRow(family=family, label=label, function="f", parameters={}, grid=(1, 1, 1), block=(32, 1, 1),
                     registers_per_thread=8, static_shared_memory=0, measured_seconds=measured, spread=0.0,
                     l2_flushed=False, relative_error=0.0, predict_seconds=predict, roofline_seconds=roofline)


def test_table_by_hand():
    rows = [_row("a", "a1", 1.0, 1.1, 0.5), _row("a", "a2", 2.0, 1.6, 1.0), _row("a", "a3", 4.0, 2.0, 4.0),
            _row("b", "b1", 1.0, None, 0.9)]
    a, b = family_table(rows)
    # predict errors 10%, 20%, 50%; roofline 50%, 50%, 0%
    assert (a["family"], a["launches"]) == ("a", 3)
    assert a["predict_median_percent"] == pytest.approx(20.0)
    assert (a["predict_worst_percent"], a["predict_worst_label"]) == (pytest.approx(50.0), "a3")
    assert a["roofline_median_percent"] == pytest.approx(50.0)
    assert b["predict_median_percent"] is None and b["predict_worst_label"] is None
    assert b["roofline_worst_percent"] == pytest.approx(10.0)


def test_recorded_table_matches_its_rows(recorded):
    document, rows = recorded
    assert document["families"] == family_table(rows)
    for entry in document["families"]:
        members = [r for r in rows if r.family == entry["family"]]
        for key in ("predict", "roofline"):
            errors = [abs(getattr(r, f"{key}_seconds") - r.measured_seconds) / r.measured_seconds * 100
                      for r in members]
            assert entry[f"{key}_median_percent"] == pytest.approx(statistics.median(errors))
            assert entry[f"{key}_worst_percent"] == pytest.approx(max(errors))


def test_recorded_baseline_covers_every_family(recorded):
    document, rows = recorded
    families = {r.family for r in rows}
    assert families == {"reduction", "strided_read", "strided_write", "blur", "shared_stride", "divergence",
                        "grid_stride_low_occupancy", "transpose"}
    assert len(rows) == len(family_specs(132)) == 110
    assert all(r.relative_error < 1e-4 and r.measured_seconds > 0 for r in rows)


def test_recorded_effects_the_model_misses(recorded):
    """The measured effects issue 11 names, as recorded (the next session's targets)."""
    _, rows = recorded
    t = {r.label: r.measured_seconds for r in rows}
    assert t["branches(lane)"] / t["branches(warp)"] > 1.5  # the two sides serialize
    assert t["shared_stride(stride=32)"] / t["shared_stride(stride=1)"] > 10  # 32-way conflicts
    assert t["reduction(interleaved_compact, block=256)"] > t["reduction(warp_shuffle, block=256)"] * 1.5


def test_predictions_rebuild_from_the_raw_records():
    raw = json.loads(RAW.read_text())
    records = [r for r in raw["records"] if r["family"] in ("reduction", "shared_stride")]
    rows = predict_families(records, family_specs(raw["sm_count"]), "H200")
    assert len(rows) == len(records) == 15
    assert all(r.predict_seconds > 0 and r.roofline_seconds > 0 for r in rows)
    text = render_families_markdown(rows, title="t")
    assert "| reduction | 8 |" in text and "| shared_stride | 7 |" in text


@pytest.mark.parametrize("label", ["reduction(interleaved, block=256)", "shared_stride(stride=3)"], ids=str)
def test_small_references(label):
    spec = next(s for s in family_specs(4) if s.label == label)
    case = spec.case(np.random.default_rng(0))
    assert case.reference(case.inputs)
