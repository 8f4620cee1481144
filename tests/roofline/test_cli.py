"""The roofline subcommands of `gpuroof`, called through gpuroof.main."""

from __future__ import annotations

import json

import pytest

import roofline
from gpuroof import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_gpus_json_lists_the_database(capsys):
    code, out, _ = run(capsys, "gpus", "--json")
    assert code == 0
    rows = json.loads(out)
    assert [r["name"] for r in rows] == [g.name for g in roofline.gpus()]
    h100 = next(r for r in rows if r["name"] == "H100-SXM")
    assert h100["memory_bandwidth"] == roofline.gpu("H100-SXM").memory_bandwidth


def test_gpus_table(capsys):
    code, out, _ = run(capsys, "gpus")
    assert code == 0 and "RTX-5090" in out and "ridge" in out


def test_gpu_shows_every_ceiling_with_its_source(capsys):
    code, out, _ = run(capsys, "gpu", "a100 pcie 40gb", "--json")
    data = json.loads(out)
    assert code == 0 and data["name"] == "A100-PCIe-40GB"
    ceilings = {c["quantity"]: c for c in data["ceilings"]}
    assert ceilings["fp32"]["value"] == roofline.gpu("A100-PCIe-40GB").peak_flops("fp32")
    assert "5120 B/clk" in ceilings["l2"]["formula"] and ceilings["l2"]["source"]
    code, out, _ = run(capsys, "gpu", "H100-SXM")
    assert code == 0 and "tensor clock" in out and "[1]" in out


def test_roofline_with_flops_and_bytes(capsys):
    code, out, _ = run(capsys, "roofline", "--gpu", "A100-SXM4-40GB", "--flops", "1e9",
                       "--bytes", "4e9", "--json")
    data = json.loads(out)
    assert code == 0 and data["bound"] == "memory"
    assert data["attainable_flops_per_second"] == pytest.approx(0.25 * 1555.2e9)


def test_roofline_with_a_model(capsys):
    models = pytest.importorskip("roofline.models")
    if not hasattr(models, "get"):
        pytest.skip("roofline.models.get not available yet")
    code, out, _ = run(capsys, "roofline", "--model", "vector_add", "--param", "n=1048576", "--json")
    data = json.loads(out)
    assert code == 0 and data["name"] == "vector_add"
    assert data["flops"] == models.vector_add(1048576).flops


@pytest.mark.parametrize(
    "argv,match",
    [
        (["gpu", "H1000"], "unknown GPU 'H1000'; close matches"),
        (["roofline", "--flops", "1e9"], "give your kernel's --dram-bytes (and --flops, default 0)"),
        (["roofline", "--flops", "-1", "--bytes", "1"], "flops"),
        (["roofline", "--flops", "1", "--bytes", "1", "--precision", "fp7"], "precision='fp7'"),
        (["roofline", "--gpu", "V100", "--flops", "1", "--bytes", "1", "--precision", "fp8"], "not supported on V100-SXM2"),
    ],
    ids=["unknown-gpu", "missing-bytes", "negative", "bad-precision", "unsupported"],
)
def test_bad_input_is_one_line_and_exit_2(capsys, argv, match):
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert err.startswith("gpuroof: error:") and err.count("\n") == 1
    assert match in err


def test_plot_writes_and_replots(capsys, tmp_path):
    png, js = tmp_path / "r.png", tmp_path / "r.json"
    code, out, _ = run(capsys, "plot", "--gpu", "L4", "--flops", "1e12", "--bytes", "1e10", "-o", str(js))
    assert code == 0 and js.exists()
    chart = roofline.chart.load_chart(js)
    assert chart.gpu == "L4" and len(chart.points) == 1
    code, out, _ = run(capsys, "plot", "--from", str(js), "-o", str(png))
    assert code == 0 and png.read_bytes().startswith(b"\x89PNG")


def test_memory_spaces(capsys):
    if not hasattr(roofline.memory, "memory_spaces"):
        pytest.skip("roofline.memory.memory_spaces not available yet")
    code, out, _ = run(capsys, "memory-spaces", "--json")
    assert code == 0 and len(json.loads(out)) >= 5


def test_demo_writes_table_and_plot(capsys, tmp_path):
    models = pytest.importorskip("roofline.models")
    if not hasattr(models, "suite"):
        pytest.skip("roofline.models.suite not available yet")
    code, out, _ = run(capsys, "demo", "--out", str(tmp_path))
    assert code == 0
    assert f"on {roofline.DEFAULT_GPU}" in out and "occupancy" in out
    for name in ("suite.json", "suite.csv", "suite.md", "roofline.png", "roofline.json"):
        assert (tmp_path / name).stat().st_size > 0
    table = json.loads((tmp_path / "suite.json").read_text())
    assert [r["kernel"] for r in table["rows"]] == [k.name for k in roofline.suite.demo_kernels()]
    assert all(0 < r["occupancy"] <= 1 for r in table["rows"])
    # The compiled registers, and what they cost the SGEMM, reach the printed table, which fits
    # 100 columns (the wide one is --wide's).
    assert "regs: validate/kernels/suite.cu compiled by NVRTC" in out
    # (the "wrote PATH" lines are as long as the temporary folder's path, which grows with pytest's runs)
    assert max(len(line) for line in out.splitlines() if not line.startswith("wrote ")) <= 100
    sgemm = next(line for line in out.splitlines() if line.startswith("matmul_register_tiled"))
    registers = roofline.suite.demo_resources().registers_per_thread["matmul_register_tiled"]["sm_90"]
    assert sgemm.split()[-3:] == [str(registers), "25%", "registers"]
    # Every suite kernel is bounded on the default GPU as analyze() says.
    first = models.suite()[1]
    r = roofline.analyze(roofline.DEFAULT_GPU, first)
    assert table["rows"][1]["time_lower_bound_seconds"] == pytest.approx(r.time_lower_bound_seconds)


def test_demo_wide_prints_every_column(capsys, tmp_path, monkeypatch):
    """--wide reaches the table: the columns the default one leaves out. The analysis and the
    files are the demo's own (test_demo_writes_table_and_plot); here the suite is one kernel."""
    one = roofline.suite.analyze_suite(roofline.DEFAULT_GPU, roofline.suite.demo_kernels()[:1])
    monkeypatch.setattr(roofline.suite, "analyze_suite", lambda *args, **kwargs: one)
    monkeypatch.setattr(roofline.suite, "write_suite_report", lambda report, out: {})
    default = run(capsys, "demo", "--out", str(tmp_path))[1]
    code, wide, _ = run(capsys, "demo", "--out", str(tmp_path), "--wide")
    headers = [next(line for line in out.splitlines() if line.startswith("kernel ")) for out in (default, wide)]
    dropped = ("AI requested", "AI DRAM", "TFLOP/s", "DRAM GB/s", "threads/block")
    assert code == 0 and all(h in headers[1] for h in dropped) and not any(h in headers[0] for h in dropped)
    assert wide == default.replace(roofline.suite.format_suite_table(one), roofline.suite.format_suite_table(one, wide=True))
