"""A full Nsight Compute export cut to the default sections' metrics (``ncu`` without ``--set``
or ``--section``; tests/data/ncu/default_sections.py lists them with their sources): the
adapter reads the DRAM bytes, warp instructions and SM clock from SpeedOfLight's breakdown, so
the cut predicts close to the full export, where the adapter that read nothing extra predicted
nothing; and every count the cut lacks is named with its fallback, in the report, the table
and gpuroof ncu --json."""

from __future__ import annotations

import importlib.util
import json
import statistics
from pathlib import Path

import pytest

import roofline
from gpuroof import main
from roofline._ncu_metrics import kernel_from_metrics
from roofline._profile_missing import missing_counts

DATA = Path(__file__).resolve().parents[1] / "data" / "ncu"
_spec = importlib.util.spec_from_file_location("default_sections", DATA / "default_sections.py")
sections = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(sections)
EXPORTS = ["suite.raw_base.csv", "user_kernels.raw.csv", "torch_roofline.raw.csv"]


def _cut(tmp_path: Path, name: str, alternatives: bool) -> roofline.ProfileReport:
    keep = sections.default_section_metrics()
    if not alternatives:
        keep = keep - sections.READ_BY_ALTERNATIVES
    path = tmp_path / f"{name}.{'after' if alternatives else 'before'}.csv"
    path.write_text(sections.cut_export(DATA / name, keep))
    return roofline.profile_report(path)


@pytest.mark.parametrize("name", EXPORTS, ids=[n.split(".")[0] for n in EXPORTS])
def test_cut_predicts_close_to_the_full_export(tmp_path, name):
    full = {r.kernel.id: r for r in roofline.profile_report(DATA / name).kernels}
    before, after = _cut(tmp_path, name, False), _cut(tmp_path, name, True)
    assert all(r.predicted_seconds is None for r in before.kernels)  # no DRAM bytes: nothing predicted
    assert all(r.predicted_seconds is not None for r in after.kernels)
    # the DRAM bytes: SpeedOfLight's share times the bus-width peak against the full export's dram__bytes
    for r in after.kernels:
        assert r.kernel.dram_bytes == pytest.approx(full[r.kernel.id].kernel.dram_bytes, rel=2e-3)
    gaps = [abs(r.predicted_seconds / full[r.kernel.id].predicted_seconds - 1) for r in after.kernels]
    assert statistics.median(gaps) < 0.01


@pytest.mark.parametrize("name", EXPORTS, ids=[n.split(".")[0] for n in EXPORTS])
def test_cut_names_every_missing_count_with_its_fallback(tmp_path, name):
    after = _cut(tmp_path, name, True)
    for row in after.kernels:
        named = {m.count: m for m in row.missing_counts}
        # none of these is in the default sections (their metrics are MemoryWorkloadAnalysis' or --metrics')
        assert {"l1_hit_rate", "l2_hit_rate", "global_load_instructions", "l2_requests"} <= set(named)
        assert "dram_bytes" not in named and "instructions" not in named
        assert all(m.fallback and m.metric for m in named.values())
    text = roofline.format_profile_report(after)
    assert f"counts missing from the profile, all {len(after.kernels)} kernels: " in text
    # without the roofline sections there are no flops: the bound column says so, not a bare "dram"
    assert all(r.flops is None and r.bound for r in after.kernels)
    rows = text.split("\n")[4:4 + len(after.kernels)]  # after the summary, a blank, the header and its rule
    assert all(f"{r.bound}, no flops" in line for r, line in zip(after.kernels, rows))
    assert "l2_hit_rate -> the L2 miss share from the bytes" in text


def test_cli_json_lists_the_missing_counts(tmp_path, capsys):
    path = tmp_path / "user.cut.csv"
    path.write_text(sections.cut_export(DATA / "user_kernels.raw.csv"))
    assert main(["ncu", str(path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    for row in data["kernels"]:
        counts = {m["count"]: m["fallback"] for m in row["missing_counts"]}
        assert counts["l1_hit_rate"] and counts["global_store_sectors"] == "no partial-store term"


@pytest.mark.parametrize("gpu", ["h200", "h100-sxm"])
def test_the_corpus_profiles_miss_nothing(gpu):
    """The corpus's launches carry every metric gpuroof profile collects: no count is named."""
    import corpus

    for project in corpus.load_corpus(gpu):
        for kernel in project.kernels:
            launch = kernel.launches[0]
            k = kernel_from_metrics(launch.ncu, project.ncu_units, where=kernel.id)
            assert missing_counts(k) == (), kernel.id
