"""`gpuroof validate --devices` and `gpuroof merge-reports` from the command line (no GPU needed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuroof._main import main

RESULTS = Path(__file__).resolve().parent.parent / "docs" / "results"


@pytest.mark.parametrize(
    "argv",
    [["validate", "--devices", "one"], ["validate", "--devices", "0,x"], ["validate", "--device", "0", "--devices", "all"]],
    ids=["word", "bad index", "both device options"],
)
def test_bad_devices_exit_2(argv, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "--devices" in err and len(err.strip().splitlines()) == 1


def test_merge_reports_of_two_hosts_writes_one_report(tmp_path, capsys):
    out = tmp_path / "merged"
    assert main(["merge-reports", str(RESULTS / "h200"), str(RESULTS / "h100-sxm" / "report.json"),
                 "--out", str(out)]) == 0
    assert "merged 2 device reports" in capsys.readouterr().out
    data = json.loads((out / "report.json").read_text())
    assert sorted(r["device"]["name"] for r in data["reports"]) == ["NVIDIA H100 80GB HBM3", "NVIDIA H200"]
    assert data["spread"] == []  # two models, one device each: nothing to compare
    assert (out / "report.md").read_text().startswith("# gpuroof validation: 2 devices")


def test_merge_reports_of_a_missing_file_exits_2(tmp_path, capsys):
    assert main(["merge-reports", str(tmp_path / "nothing.json"), "--out", str(tmp_path / "o")]) == 2
    assert "nothing.json" in capsys.readouterr().err
