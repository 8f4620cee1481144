"""`gpuroof ncu` and `gpuroof measure`: thin commands over roofline.profile_report and validate.measure."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from gpuroof._main import main

DATA = Path(__file__).resolve().parent / "data" / "ncu"
KERNELS = Path(__file__).resolve().parents[1] / "benchmarks" / "measure_kernels.cu"


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_ncu_table(capsys):
    code, out, err = run(capsys, "ncu", str(DATA / "user_kernels.raw.csv"))
    assert code == 0 and err == ""
    assert "occupancy equal to Nsight's theoretical for 5 of 5" in out.splitlines()[0]
    assert out.splitlines()[4].split()[1] == "poly"


def test_ncu_json_filter_and_plot(capsys, tmp_path):
    plot = tmp_path / "r.png"
    code, out, _ = run(capsys, "ncu", str(DATA / "torch_roofline.raw.csv"), "--kernel", "attention", "--json",
                       "--plot", str(plot))
    data = json.loads(out)
    assert code == 0 and [k["kernel"]["name"] for k in data["kernels"]] == ["flash_fwd_kernel"]
    assert data["occupancy_agreeing"] == 1 and plot.read_bytes().startswith(b"\x89PNG")


@pytest.mark.parametrize(
    "argv, message",
    [
        (["ncu", "missing.csv"], "no such file"),
        (["ncu", str(DATA / "details_page_head.csv")], "--page details"),
        (["ncu", str(DATA / "user_kernels.raw.csv"), "--kernel", "nope"], "matches no kernel"),
        (["ncu", str(DATA / "user_kernels.raw.csv"), "--gpu", "H999"], "H999"),
        (["measure", "x.cu", "--kernel", "k", "--grid", "1", "--block", "32"], "no such file"),
        (["measure", str(KERNELS), "--kernel", "saxpy4", "--grid", "1", "--block", "32", "--arg", "f32[m]"],
         "size name 'm'"),
        (["measure", str(KERNELS), "--kernel", "saxpy4", "--grid", "1", "--block", "32", "--arg", "float=1"],
         "type 'float'"),
        (["measure", str(KERNELS), "--kernel", "saxpy4", "--grid", "1x", "--block", "32"], "is not N"),
        (["measure", str(KERNELS), "--kernel", "saxpy4", "--grid", "1", "--block", "32", "--flops", "1"],
         "both --flops and --dram-bytes"),
        (["measure", str(KERNELS), "--kernel", "saxpy4", "--grid", "1", "--block", "32", "--load-bytes", "4"],
         "both --flops and --dram-bytes"),
        (["measure", str(KERNELS), "--kernel", "saxpy4", "--grid", "1", "--block", "32", "--flops", "1",
          "--dram-bytes", "8", "--count", "bogus=1"], "--count bogus"),
    ],
    ids=["missing", "details", "no-match", "unknown-gpu", "no-file", "size", "type", "grid", "counts",
         "load-bytes-alone", "bad-count"],
)
def test_bad_input_is_one_line_and_exit_2(capsys, argv, message):
    code, out, err = run(capsys, *argv)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1


@pytest.mark.skipif(importlib.util.find_spec("cuda") is not None, reason="cuda-python is installed here")
def test_measure_without_cuda_python_exits_3(capsys):
    code, _, err = run(capsys, "measure", str(KERNELS), "--kernel", "saxpy4", "--grid", "4", "--block", "256",
                       "--arg", "i32=256", "--arg", "f32=2", "--arg", "f32[1024]=random", "--arg", "f32[1024]")
    assert code == 3 and "cuda-python" in err


def test_measure_hands_every_count_to_the_prediction(capsys, monkeypatch):
    """--load-bytes, --store-bytes and --count reach `validate.measure`'s counts (the loop's trips
    of the SASS it reads come from the load bytes)."""
    import validate

    seen = {}

    def fake_measure(code, kernel, *, launch, args, options, counts):
        seen["counts"] = counts
        raise validate.DeviceError("stop here")

    monkeypatch.setattr(validate, "measure", fake_measure)
    run(capsys, "measure", str(KERNELS), "--kernel", "block_sum", "--grid", "1024", "--block", "256",
        "--flops", "67108864", "--dram-bytes", "268435456", "--load-bytes", "268435456", "--store-bytes", "4096",
        "--count", "atomics=1024")
    counts = seen["counts"]
    assert (counts.load_bytes, counts.store_bytes, counts.atomics, counts.dram_bytes) == (268435456, 4096, 1024, 268435456)
