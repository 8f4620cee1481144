"""Roofline plots: read the drawn ceilings back from the matplotlib Axes."""

from __future__ import annotations

import numpy as np
import pytest

import roofline
from roofline import KernelCounts, RooflineError

pytest.importorskip("matplotlib")

KERNELS = [
    KernelCounts(name="stream", flops=2**26, dram_bytes=12 * 2**26, l2_bytes=12 * 2**26),
    KernelCounts(name="gemm", flops=2 * 4096**3, dram_bytes=3 * 4 * 4096**2,
                 l2_bytes=2 * 4 * 4096**3 / 16, l1_bytes=2 * 4 * 4096**3 / 4),
]


def _lines(fig):
    ax = fig.axes[0]
    return ax, {line.get_gid(): line for line in ax.get_lines() if line.get_gid()}


def test_every_ceiling_is_drawn_at_its_value():
    g = roofline.gpu("H100-SXM")
    fig = roofline.plot_roofline(g, KERNELS)
    ax, lines = _lines(fig)
    # Compute ceilings: horizontal at the derived peak; equal peaks share one line.
    for precision in g.supported_precisions():
        gid = next(k for k in lines if k.startswith("ceiling:") and precision in k.split(":")[1].split("+"))
        y = np.asarray(lines[gid].get_ydata())
        assert np.allclose(y, g.peak_flops(precision)), precision
    assert "ceiling:fp16_tensor+bf16_tensor:theoretical" in lines
    # Memory roofs: slope-1 lines y = bandwidth x intensity.
    for level in ("dram", "l2", "l1"):
        line = lines[f"ceiling:{level}:theoretical"]
        x, y = np.asarray(line.get_xdata()), np.asarray(line.get_ydata())
        assert np.allclose(y / x, g.bandwidth(level))
        # ... ending at the highest compute ceiling.
        assert y.max() == pytest.approx(g.peak_flops("fp8_tensor"))


def test_ridge_points_and_kernel_points():
    g = roofline.gpu("A100-SXM4-40GB")
    fig = roofline.plot_roofline(g, KERNELS)
    ax, lines = _lines(fig)
    ridge = lines["ridge:dram"]
    assert ridge.get_xdata()[0] == pytest.approx(g.ridge_point("fp32"))
    assert ridge.get_ydata()[0] == pytest.approx(g.peak_flops("fp32"))
    # A kernel's points at several levels share one attainable value and are joined.
    gemm = lines["kernel:gemm:predicted"]
    assert len(gemm.get_xdata()) == 3
    assert len(set(gemm.get_ydata())) == 1
    expected = roofline.analyze(g, KERNELS[1]).attainable_flops_per_second
    assert gemm.get_ydata()[0] == pytest.approx(expected)


def test_axes_extend_past_the_data():
    g = roofline.gpu("T4")
    tiny = KernelCounts(name="tiny", flops=1, dram_bytes=1e6)
    huge = KernelCounts(name="huge", flops=1e15, dram_bytes=1)
    fig = roofline.plot_roofline(g, [tiny, huge], levels=["dram"])
    ax = fig.axes[0]
    x0, x1 = ax.get_xlim()
    y0, y1 = ax.get_ylim()
    assert x0 < 1e-6 and x1 > 1e15
    assert y0 < roofline.analyze(g, tiny).attainable_flops_per_second
    assert y1 > g.peak_flops("int8_tensor")


def test_measured_ceilings_sit_next_to_theoretical():
    g = roofline.gpu("H100-SXM")
    fig = roofline.plot_roofline(g, KERNELS, measured_ceilings={"dram": 2.9e12, "fp32": 55e12},
                                 measured_points={"stream": 0.2e12})
    ax, lines = _lines(fig)
    dram = lines["ceiling:dram:measured"]
    assert np.allclose(np.asarray(dram.get_ydata()) / np.asarray(dram.get_xdata()), 2.9e12)
    assert dram.get_linestyle() == "--"
    assert np.allclose(lines["ceiling:fp32:measured"].get_ydata(), 55e12)
    assert "ceiling:dram:theoretical" in lines
    assert np.allclose(lines["kernel:stream:measured"].get_ydata(), 0.2e12)


def test_measured_point_for_unknown_kernel_is_an_error():
    with pytest.raises(RooflineError, match="measured_points has kernel 'nope'"):
        roofline.roofline_chart("H100-SXM", KERNELS, measured_points={"nope": 1e12})


@pytest.mark.parametrize("suffix,magic", [(".png", b"\x89PNG"), (".svg", b"<?xml"), (".pdf", b"%PDF")])
def test_writes_png_svg_pdf(tmp_path, suffix, magic):
    path = tmp_path / f"r{suffix}"
    roofline.plot_roofline("L4", KERNELS, path=path)
    assert path.read_bytes().startswith(magic)


def test_bad_suffix():
    with pytest.raises(RooflineError, match="unsupported suffix"):
        roofline.plot_roofline("L4", KERNELS, path="r.bmp")


@pytest.mark.parametrize("suffix", [".json", ".csv"])
def test_export_round_trip_and_replot(tmp_path, suffix):
    chart = roofline.roofline_chart("H100-SXM", KERNELS, measured_ceilings={"dram": 3e12})
    path = roofline.save_chart(chart, tmp_path / f"chart{suffix}")
    back = roofline.load_chart(path)
    assert back == chart
    _, original = _lines(roofline.plot_roofline(chart))
    _, replotted = _lines(roofline.plot_roofline(back))
    assert original.keys() == replotted.keys()
    for gid in original:
        assert np.allclose(original[gid].get_ydata(), replotted[gid].get_ydata())


def test_export_is_versioned(tmp_path):
    import json

    chart = roofline.roofline_chart("L4", KERNELS)
    path = roofline.save_chart(chart, tmp_path / "c.json")
    data = json.loads(path.read_text())
    assert data["schema"] == "gpuroof.roofline" and data["schema_version"] == roofline.CHART_SCHEMA_VERSION
    data["schema_version"] = 99
    path.write_text(json.dumps(data))
    with pytest.raises(RooflineError, match="schema_version=99"):
        roofline.load_chart(path)
    with pytest.raises(RooflineError, match=r"\.json or \.csv"):
        roofline.save_chart(chart, tmp_path / "c.txt")
