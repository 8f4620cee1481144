"""Roofline plots: read the drawn ceilings back from the matplotlib Axes."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import roofline
from roofline import Kernel, RooflineError
from roofline.chart import Measurements

pytest.importorskip("matplotlib")

KERNELS = [
    Kernel(name="stream", flops=2**26, dram_bytes=12 * 2**26, l2_bytes=12 * 2**26),
    Kernel(name="gemm", flops=2 * 4096**3, dram_bytes=3 * 4 * 4096**2,
                 l2_bytes=2 * 4 * 4096**3 / 16, l1_bytes=2 * 4 * 4096**3 / 4),
]


def _lines(fig):
    ax = fig.axes[0]
    return ax, {line.get_gid(): line for line in ax.get_lines() if line.get_gid()}


def test_every_ceiling_is_drawn_at_its_value():
    g = roofline.gpu("H100-SXM")
    fig = roofline.chart.plot_roofline(g, KERNELS, precisions=g.supported_precisions())
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
    fig = roofline.chart.plot_roofline(g, KERNELS)
    ax, lines = _lines(fig)
    ridge = lines["ridge:dram"]
    assert ridge.get_xdata()[0] == pytest.approx(g.ridge_point("fp32"))
    assert ridge.get_ydata()[0] == pytest.approx(g.peak_flops("fp32"))
    # A kernel's points at several levels share one attainable value and are joined.
    gemm = lines["kernel:gemm:roofline"]
    assert len(gemm.get_xdata()) == 3
    assert len(set(gemm.get_ydata())) == 1
    expected = roofline.analyze(g, KERNELS[1]).attainable_flops_per_second
    assert gemm.get_ydata()[0] == pytest.approx(expected)


def test_axes_extend_past_the_data():
    g = roofline.gpu("T4")
    tiny = Kernel(name="tiny", flops=1, dram_bytes=1e6)
    huge = Kernel(name="huge", flops=1e15, dram_bytes=1)
    fig = roofline.chart.plot_roofline(g, [tiny, huge], levels=["dram"], precisions=g.supported_precisions())
    ax = fig.axes[0]
    x0, x1 = ax.get_xlim()
    y0, y1 = ax.get_ylim()
    assert x0 < 1e-6 and x1 > 1e15
    assert y0 < roofline.analyze(g, tiny).attainable_flops_per_second
    assert y1 > g.peak_flops("int8_tensor")


def test_measured_ceilings_sit_next_to_theoretical():
    g = roofline.gpu("H100-SXM")
    fig = roofline.chart.plot_roofline(g, KERNELS, measured=Measurements(ceilings={"dram": 2.9e12, "fp32": 55e12},
                                                                      points={"stream": 0.2e12}))
    ax, lines = _lines(fig)
    dram = lines["ceiling:dram:measured"]
    assert np.allclose(np.asarray(dram.get_ydata()) / np.asarray(dram.get_xdata()), 2.9e12)
    assert dram.get_linestyle() == "--"
    assert np.allclose(lines["ceiling:fp32:measured"].get_ydata(), 55e12)
    assert "ceiling:dram:theoretical" in lines
    assert np.allclose(lines["kernel:stream:measured"].get_ydata(), 0.2e12)


def test_measured_point_for_unknown_kernel_is_an_error():
    with pytest.raises(RooflineError, match=r"measured\.points has kernel 'nope'"):
        roofline.chart.roofline_chart("H100-SXM", KERNELS, measured=Measurements(points={"nope": 1e12}))


@pytest.mark.parametrize("suffix,magic", [(".png", b"\x89PNG"), (".svg", b"<?xml"), (".pdf", b"%PDF")])
def test_writes_png_svg_pdf(tmp_path, suffix, magic):
    path = tmp_path / f"r{suffix}"
    roofline.chart.plot_roofline("L4", KERNELS, path=path)
    assert path.read_bytes().startswith(magic)


def test_bad_suffix():
    with pytest.raises(RooflineError, match=r"path='r.bmp' has the suffix '.bmp'; a figure is written as one of "
                                            r"\.png, \.svg, \.pdf"):
        roofline.chart.plot_roofline("L4", KERNELS, path="r.bmp")


@pytest.mark.parametrize("suffix", [".json", ".csv"])
def test_export_round_trip_and_replot(tmp_path, suffix):
    chart = roofline.chart.roofline_chart("H100-SXM", KERNELS, measured=Measurements(ceilings={"dram": 3e12},
                                                                                     seconds={"stream": 1e-3}),
                                          model_seconds={"gemm": 0.02})
    assert {p.origin for p in chart.points} == {"roofline", "model", "measured"}  # every origin travels
    path = roofline.chart.save_chart(chart, tmp_path / f"chart{suffix}")
    back = roofline.chart.load_chart(path)
    assert back == chart
    _, original = _lines(roofline.chart.plot_roofline(chart))
    _, replotted = _lines(roofline.chart.plot_roofline(back))
    assert original.keys() == replotted.keys()
    for gid in original:
        assert np.allclose(original[gid].get_ydata(), replotted[gid].get_ydata())


@pytest.mark.parametrize("suffix", [".json", ".csv"])
def test_version_3_charts_load_their_predicted_points_as_the_roofline_bound(tmp_path, suffix):
    """Before schema version 4 the roofline bound's origin was "predicted" (the only kind
    `roofline_chart` wrote); such a file loads with those points as "roofline"."""
    chart = roofline.chart.roofline_chart("L4", KERNELS)
    text = roofline.chart.save_chart(chart, tmp_path / f"new{suffix}").read_text()
    if suffix == ".json":
        old = text.replace('"origin": "roofline"', '"origin": "predicted"').replace(
            '"schema_version": 4', '"schema_version": 3')
    else:
        old = text.replace(",roofline,", ",predicted,").replace("\n4,", "\n3,")
    assert old.count("predicted") == len(chart.points) + len(chart.bandwidth_points)
    path = tmp_path / f"old{suffix}"
    path.write_text(old)
    assert roofline.chart.load_chart(path) == chart


def test_export_is_versioned(tmp_path):
    import json

    chart = roofline.chart.roofline_chart("L4", KERNELS)
    path = roofline.chart.save_chart(chart, tmp_path / "c.json")
    data = json.loads(path.read_text())
    assert data["schema"] == "gpuroof.roofline" and data["schema_version"] == roofline.chart.CHART_SCHEMA_VERSION
    data["schema_version"] = 99
    path.write_text(json.dumps(data))
    with pytest.raises(RooflineError, match="schema_version=99"):
        roofline.chart.load_chart(path)
    with pytest.raises(RooflineError, match=r"\.json or \.csv"):
        roofline.chart.save_chart(chart, tmp_path / "c.txt")


def test_only_the_precisions_in_play_by_default():
    g = roofline.gpu("H100-SXM")
    mixed = [*KERNELS, Kernel(name="dgemm", flops=2e12, dram_bytes=1e9, precision="fp64_tensor")]
    _, lines = _lines(roofline.chart.plot_roofline(g, mixed))
    compute = sorted(k for k in lines if k.startswith("ceiling:") and k.split(":")[1] not in ("dram", "l2", "l1"))
    # FP32 and FP64 tensor share a value on the H100 SXM (66.9 TFLOP/s): one line for both
    assert compute == ["ceiling:fp32+fp64_tensor:theoretical"]
    # the axis ends near the highest ceiling in play, not at FP8's 1979 TFLOP/s
    assert roofline.chart.plot_roofline(g, KERNELS).axes[0].get_ylim()[1] < 1e15


def test_kernels_without_flops_are_on_the_bandwidth_panel():
    copy = Kernel(name="copy", flops=0, dram_bytes=8 * 2**26)
    fig = roofline.chart.plot_roofline("H100-SXM", [*KERNELS, copy])
    roof, side = fig.axes[0], fig.axes[1]
    labels = [t.get_text() for t in side.get_yticklabels()]
    assert labels == ["1. stream", "2. gemm", "3. copy  (no flops)"]
    marks = {line.get_gid(): line for line in side.get_lines() if line.get_gid()}
    g = roofline.gpu("H100-SXM")
    assert marks["bandwidth:copy:dram:roofline"].get_xdata()[0] == pytest.approx(g.memory_bandwidth)
    assert not any("copy" in (line.get_gid() or "") for line in roof.get_lines())


def test_coinciding_kernels_share_one_label_and_labels_do_not_overlap():
    twins = [Kernel(name=f"k{i}", flops=2**26, dram_bytes=12 * 2**26) for i in range(3)]
    spread = [Kernel(name=f"s{i}", flops=2**26 * (1 + (i + 1) / 5), dram_bytes=12 * 2**26) for i in range(6)]
    fig = roofline.chart.plot_roofline("H100-SXM", twins + spread)
    ax = fig.axes[0]
    numbers = [t for t in ax.texts if (t.get_gid() or "").startswith("number:")]
    assert "number:1,2,3" in {t.get_gid() for t in numbers}
    fig.draw_without_rendering()
    boxes = [t.get_window_extent() for t in numbers]
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            assert not a.overlaps(b)


def test_every_line_is_in_the_legend():
    fig = roofline.chart.plot_roofline("H100-SXM", KERNELS, knee_sharpness=4,
                                       measured=Measurements(ceilings={"dram": 3e12}, points={"stream": 0.2e12}))
    ax, lines = _lines(fig)
    legend = {t.get_text() for t in fig.legends[0].get_texts()}
    for gid, line in lines.items():
        if gid.startswith(("ceiling:", "knee:")):
            assert line.get_label() in legend, gid
    assert any(t.startswith("ridge points") for t in legend)
    assert {"roofline bound (filled, solid)", "measured (hollow, dotted)"} <= legend
    assert "time model (half-filled, dashed)" not in legend  # no model times given, no entry


def test_measured_seconds_place_every_kernel_also_those_without_flops():
    from roofline import models

    """A measured kernel is its time: flop/s on the roofline when it has flops, and each level's
    bytes over that time on the bandwidth panel (a copy has no flops but has a measured point)."""
    copy, add = models.copy(1 << 20), models.vector_add(1 << 20)
    chart = roofline.chart.roofline_chart("H100 SXM", [copy, add],
                                          measured=Measurements(seconds={"copy": 1e-5, "vector_add": 2e-5}))
    measured = {(b.kernel, b.level): b.bytes_per_second for b in chart.bandwidth_points if b.origin == "measured"}
    assert measured[("copy", "dram")] == pytest.approx(copy.dram_bytes / 1e-5)
    assert measured[("vector_add", "dram")] == pytest.approx(add.dram_bytes / 2e-5)
    flop_points = [p for p in chart.points if p.origin == "measured"]
    assert {p.kernel for p in flop_points} == {"vector_add"}
    assert all(p.flops_per_second == pytest.approx(add.flops / 2e-5) for p in flop_points)
    with pytest.raises(roofline.RooflineError, match="not among kernels"):
        roofline.chart.roofline_chart("H100 SXM", [copy], measured=Measurements(seconds={"nope": 1.0}))
    with pytest.raises(roofline.RooflineError, match="positive number of seconds"):
        roofline.chart.roofline_chart("H100 SXM", [copy], measured=Measurements(seconds={"copy": float("nan")}))


def test_model_seconds_place_the_time_models_point_beside_the_bound():
    """The time model's time of a kernel is its own kind of point ("model"): flops and each
    level's bytes over that time, drawn half-filled on a dashed line, with its legend entry;
    the roofline bound stays where it was."""
    stream, gemm = KERNELS
    g = roofline.gpu("H100-SXM")
    seconds = 3 * roofline.analyze(g, stream).time_lower_bound_seconds  # a time model 3x slower than the bound
    chart = roofline.chart.roofline_chart(g, KERNELS, model_seconds={"stream": seconds})
    model = [p for p in chart.points if p.origin == "model"]
    assert {(p.kernel, p.level) for p in model} == {("stream", "dram"), ("stream", "l2")}
    assert all(p.flops_per_second == pytest.approx(stream.flops / seconds) for p in model)
    bandwidth = {b.level: b.bytes_per_second for b in chart.bandwidth_points if b.origin == "model"}
    assert bandwidth == pytest.approx({"dram": stream.dram_bytes / seconds, "l2": stream.l2_bytes / seconds})
    bound = [p for p in chart.points if p.kernel == "stream" and p.origin == "roofline"]
    assert all(p.flops_per_second == pytest.approx(roofline.analyze(g, stream).attainable_flops_per_second)
               for p in bound)
    assert not any(p.origin == "model" for p in chart.points if p.kernel == "gemm")

    fig = roofline.chart.plot_roofline(chart)
    ax, lines = _lines(fig)
    assert lines["kernel:stream:model"].get_linestyle() == "--"
    assert lines["kernel:stream:roofline"].get_linestyle() == "-"
    marker = lines["marker:stream:dram:model"]
    assert marker.get_fillstyle() == "left" and marker.get_ydata()[0] == pytest.approx(stream.flops / seconds)
    assert lines["marker:stream:dram:roofline"].get_fillstyle() == "full"
    side = {line.get_gid(): line for line in fig.axes[1].get_lines() if line.get_gid()}
    assert side["bandwidth:stream:dram:model"].get_xdata()[0] == pytest.approx(stream.dram_bytes / seconds)
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert legend[-2:] == ["roofline bound (filled, solid)", "time model (half-filled, dashed)"]


@pytest.mark.parametrize("model_seconds,error,match", [
    ({"nope": 1e-3}, RooflineError, "model_seconds has kernel 'nope', which is not among kernels: stream, gemm"),
    ({"stream": 0.0}, RooflineError, r"model_seconds\['stream'\]=0.0 must be a positive number of seconds"),
    ({"stream": True}, RooflineError, "must be a positive number of seconds"),
    ([("stream", 1e-3)], TypeError, "model_seconds must be a mapping of kernel name to seconds, not list"),
], ids=["unknown-kernel", "zero", "bool", "not-a-mapping"])
def test_model_seconds_refused(model_seconds, error, match):
    with pytest.raises(error, match=match):
        roofline.chart.roofline_chart("H100-SXM", KERNELS, model_seconds=model_seconds)


def test_former_origin_name_is_the_roofline_bound():
    from roofline.chart import BandwidthPoint, ChartPoint

    assert ChartPoint(kernel="k", arithmetic_intensity=1.0, flops_per_second=1.0, origin="predicted").origin == "roofline"
    assert BandwidthPoint(kernel="k", bytes_per_second=1.0, origin="predicted").origin == "roofline"
    with pytest.raises(ValueError, match="origin"):
        ChartPoint(kernel="k", arithmetic_intensity=1.0, flops_per_second=1.0, origin="guessed")


# Extreme finite figures: a chart whose every placed figure lies in 1e-100..1e100 is drawn; any
# other is one RooflineError naming the figure and that range, never an OverflowError from the
# axes' ticks (matplotlib's log locator runs up to one axis width past the limits).
_ANY_FINITE = st.one_of(
    st.floats(min_value=1e-100, max_value=1e100),
    st.floats(min_value=5e-324, max_value=1.7976931348623157e308, allow_nan=False, allow_infinity=False),
)


def _extreme_chart(compute, memory, intensity):
    from roofline._chart import BandwidthPoint, Ceiling, ChartPoint, RooflineChart

    return RooflineChart(
        gpu="extreme",
        ceilings=(Ceiling(name="fp32", kind="compute", value=compute),
                  Ceiling(name="dram", kind="memory", value=memory)),
        points=(ChartPoint(kernel="k", arithmetic_intensity=intensity, flops_per_second=compute),),
        bandwidth_points=(BandwidthPoint(kernel="k", bytes_per_second=memory),),
    )


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@example(compute=1e308, memory=1e-308, intensity=1.0)
@example(compute=1e-308, memory=1e308, intensity=1.0)
@example(compute=1.7976931348623157e308, memory=1.7976931348623157e308, intensity=1.7976931348623157e308)
@example(compute=5e-324, memory=5e-324, intensity=5e-324)
@example(compute=1e12, memory=1e308, intensity=1.0)
@example(compute=1e50, memory=1e-50, intensity=1e-100)
@example(compute=1e100, memory=1e100, intensity=1e100)
@given(compute=_ANY_FINITE, memory=_ANY_FINITE, intensity=_ANY_FINITE)
def test_extreme_finite_ceilings_plot_or_name_the_figure_and_the_range(compute, memory, intensity):
    figures = [compute, memory, intensity, compute / memory]
    drawable = all(1e-100 <= f <= 1e100 for f in figures)
    chart = _extreme_chart(compute, memory, intensity)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow in the knee, no singular axis
        if not drawable:
            with pytest.raises(RooflineError, match=r"is outside the range a roofline plot draws, 1e-100 to 1e\+100"):
                roofline.chart.plot_roofline(chart, knee_sharpness=64.0)
            return
        fig = roofline.chart.plot_roofline(chart, knee_sharpness=64.0)
    ax, lines = _lines(fig)
    y_lo, y_hi = ax.get_ylim()
    x_lo, x_hi = ax.get_xlim()
    assert y_lo <= compute <= y_hi and x_lo <= intensity <= x_hi and x_lo <= compute / memory <= x_hi
    assert lines["ceiling:fp32:theoretical"].get_ydata()[0] == compute


@pytest.mark.parametrize(("compute", "memory", "named"), [
    (1e308, 3e12, "ceiling 'fp32' (theoretical)=1e+308 flop/s"),
    (6e13, 1e-308, "ceiling 'dram' (theoretical)=1e-308 bytes/s"),
    (1e80, 1e-80, "ridge point of 'fp32' on 'dram'=1e+160 flop/byte"),
], ids=["huge-compute", "tiny-memory", "ridge-past-the-range"])
def test_plot_from_a_chart_with_extreme_ceilings_is_one_line(tmp_path, capsys, compute, memory, named):
    from gpuroof import main

    saved = tmp_path / "chart.json"
    roofline.chart.save_chart(_extreme_chart(compute, memory, 1.0), saved)
    code = main(["plot", "--from", str(saved), "-o", str(tmp_path / "chart.png")])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert named in err and "1e-100 to 1e+100" in err
    assert not (tmp_path / "chart.png").exists()


def test_plot_from_a_chart_at_the_ends_of_the_range_is_drawn(tmp_path, capsys):
    from gpuroof import main

    saved = tmp_path / "chart.json"
    roofline.chart.save_chart(_extreme_chart(1e90, 1e-5, 1e-95), saved)
    code = main(["plot", "--from", str(saved), "-o", str(tmp_path / "chart.png")])
    assert code == 0, capsys.readouterr().err
    assert (tmp_path / "chart.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
