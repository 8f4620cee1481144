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


def test_merge_reports_json_prints_the_merged_report(tmp_path, capsys):
    out = tmp_path / "merged"
    assert main(["merge-reports", str(RESULTS / "h200"), str(RESULTS / "h100-sxm"), "--out", str(out), "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)  # JSON only, no "merged ..." line
    assert printed == json.loads((out / "report.json").read_text())
    assert sorted(r["device"]["name"] for r in printed["reports"]) == ["NVIDIA H100 80GB HBM3", "NVIDIA H200"]


def test_every_command_takes_json():
    """README: "Every command takes `--json`"."""
    from gpuroof._main import COMMANDS, _subparser, build_parser

    lacking = [c for c in COMMANDS
               if not any("--json" in a.option_strings for a in _subparser(build_parser(c), c)._actions)]
    assert lacking == []


def test_merge_reports_of_a_missing_file_exits_2(tmp_path, capsys):
    assert main(["merge-reports", str(tmp_path / "nothing.json"), "--out", str(tmp_path / "o")]) == 2
    assert "nothing.json" in capsys.readouterr().err


# Run in a fresh process, with every GPU hidden (where there is one): the exit code, the lines on
# stderr and what the run had built or loaded by the time it gave up.
_NO_GPU_PROBE = """
import contextlib, io, json, pathlib, sys
from gpuroof._main import main
err = io.StringIO()
with contextlib.redirect_stderr(err):
    code = main(["validate", "--out", sys.argv[1]])
from roofline.models._registry import suite
maps = pathlib.Path("/proc/self/maps")
print(json.dumps({"code": code, "stderr": err.getvalue(), "suite_built": suite.cache_info().currsize,
                  "matplotlib": "matplotlib" in sys.modules,
                  "nvrtc_loaded": maps.exists() and "libnvrtc" in maps.read_text()}))
"""


def test_validate_without_a_gpu_fails_before_building_anything(tmp_path):
    """Issue 21: it built the whole kernel suite (9 s) before it looked for the GPU. The time
    itself is a benchmark (benchmarks/bench_startup.py); here, that nothing heavy was done."""
    import os
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", _NO_GPU_PROBE, str(tmp_path / "out")], capture_output=True,
                          text=True, timeout=120, env={**os.environ, "CUDA_VISIBLE_DEVICES": ""})
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen["code"] == 3  # gpuroof's documented exit code for "no GPU or no cuda-python"
    lines = seen["stderr"].strip().splitlines()
    assert len(lines) == 1 and ("GPU" in lines[0] or "cuda-python" in lines[0]), lines
    assert seen["suite_built"] == 0 and not seen["matplotlib"] and not seen["nvrtc_loaded"]
