"""`gpuroof demo`: compiled registers, a kernel that registers limit, and a plot that reads well."""

from __future__ import annotations

import itertools
import os

import numpy as np
import pytest

import occupancy
import roofline
from roofline import models
from roofline._suite import suite_to_markdown

FULL = os.environ.get("GPUROOF_TEST_FULL") == "1"


@pytest.fixture(scope="module")
def report() -> roofline.suite.SuiteReport:
    return roofline.suite.analyze_suite("H100 SXM", roofline.suite.demo_kernels("H100 SXM"))


@pytest.fixture(scope="module")
def figure(report):
    fig = roofline.chart.plot_roofline(report.chart)
    fig.draw_without_rendering()
    return fig


def test_registers_are_the_compiled_ones(report):
    table = roofline.suite.demo_resources().registers_per_thread
    assert [r.registers_assumed for r in report.rows] == [False] * len(report.rows)
    for row, kernel in zip(report.rows, roofline.suite.demo_kernels("H100 SXM", compiled=False)):
        assert row.registers_per_thread == table[kernel.label]["sm_90"]
    # Not the old assumption: the simple kernels compile to fewer than 32 registers.
    assert min(r.registers_per_thread for r in report.rows) < 32


def test_some_kernel_is_limited_by_registers_or_shared_memory(report):
    limited = [r for r in report.rows if r.occupancy < 1 and {"registers", "shared_memory"} & set(r.occupancy_limiters)]
    assert limited, [(r.label, r.occupancy, r.occupancy_limiters) for r in report.rows]
    sgemm = next(r for r in report.rows if r.kernel == "matmul_register_tiled")
    assert sgemm.occupancy_limiters == ("registers",)
    assert sgemm.occupancy == occupancy.calculate(
        "sm_90", threads_per_block=256, registers_per_thread=sgemm.registers_per_thread,
        static_shared_memory=sgemm.shared_memory_per_block).occupancy < 0.5


def test_an_architecture_without_counts_assumes_and_says_so():
    kernels = roofline.suite.demo_kernels("V100")  # CUDA 13 compiles no sm_70: nothing packaged
    assert all(k.launch is None or k.launch.registers_per_thread is None for k in kernels)


def _discs(ax):
    """Kernel markers as (kernel, centre in pixels, radius in pixels), in drawing order."""
    scale = ax.figure.dpi / 72.0
    marks = [m for m in ax.get_lines() if (m.get_gid() or "").startswith("marker:")]
    return [(m.get_gid().split(":")[1], np.asarray(ax.transData.transform((m.get_xdata()[0], m.get_ydata()[0]))),
             m.get_markersize() * scale / 2) for m in marks]


def _labels(ax, report):
    """Kernel number labels: (the kernels they name, their box with its pad in pixels, has a leader line)."""
    names = list(dict.fromkeys([p.kernel for p in report.chart.points] + [b.kernel for b in report.chart.bandwidth_points]))
    out = []
    for text in ax.texts:
        if (text.get_gid() or "").startswith("number:"):
            kernels = {names[int(n) - 1] for n in text.get_text().split(",")}
            out.append((kernels, text.get_bbox_patch().get_window_extent(), text.arrow_patch is not None))
    return out


def test_labels_cover_no_label_and_no_other_kernels_marker(figure, report):
    ax = figure.axes[0]
    labels, discs = _labels(ax, report), _discs(ax)
    assert len(labels) >= 10 and len(discs) == len(report.chart.points)
    for (_, a, _), (_, b, _) in itertools.combinations(labels, 2):
        assert not a.overlaps(b)
    frame = ax.get_window_extent()
    for kernels, box, leader in labels:
        assert frame.x0 <= box.x0 and box.x1 <= frame.x1 and frame.y0 <= box.y0 and box.y1 <= frame.y1
        for kernel, centre, radius in discs:
            if kernel in kernels:
                continue
            nearest = np.clip(centre, [box.x0, box.y0], [box.x1, box.y1])
            assert np.hypot(*(centre - nearest)) >= radius, (kernels, kernel)
        # Whose label it is: the nearest marker is its kernel's, or a leader line points to it
        # (the old placement put kernel 10's number next to kernel 11's point, and 11's by 10's).
        middle = np.array([(box.x0 + box.x1) / 2, (box.y0 + box.y1) / 2])
        nearest_kernel = min(discs, key=lambda d: np.hypot(*(d[1] - middle)) - d[2])[0]
        assert leader or nearest_kernel in kernels, (kernels, nearest_kernel)


def test_no_kernel_hides_under_another(figure):
    """Every marker shows at least 2 pixels beyond any other kernel's marker drawn over it."""
    discs = _discs(figure.axes[0])
    for (k1, c1, r1), (k2, c2, r2) in itertools.combinations(discs, 2):  # the second drawn on top
        if k1 != k2:
            assert np.hypot(*(c1 - c2)) + r1 >= r2 + 2, (k1, k2)


def test_axes_say_their_units(figure):
    ax = figure.axes[0]
    assert ax.get_xlabel() == "arithmetic intensity (FLOP/byte)"
    assert ax.get_ylabel() == "performance (FLOP/s)"


# The packaged counts are what the compiler makes: the register-tiled SGEMM (the kernel the
# demo shows limited by registers) and a kernel with macros by default, every one in full runs.
SAMPLE = ("matmul_register_tiled", "matmul_tiled(tile=32)")


@pytest.mark.parametrize("label", list(roofline.suite.demo_resources().functions) if FULL else SAMPLE)
def test_packaged_counts_are_the_compilers(label):
    validate_compile = pytest.importorskip("validate.device._compile")
    table = roofline.suite.demo_resources()
    source = validate_compile.with_defines(validate_compile.kernel_source("suite.cu"), table.defines[label])
    archs = list(table.registers_per_thread[label]) if FULL else ["sm_90"]
    for arch in archs:
        try:
            found = occupancy.kernel_resources(source, kernel=table.functions[label], arch=arch, compiler="nvrtc")
        except (ImportError, occupancy.CompileError, occupancy.OccupancyError) as exc:
            pytest.skip(f"NVRTC cannot compile for {arch} here: {exc}")
        if found.compiler != table.compiler:
            pytest.skip(f"the packaged counts are {table.compiler}'s; this is {found.compiler}")
        assert found.registers_per_thread == table.registers_per_thread[label][arch], arch
        assert found.static_shared_memory == table.static_shared_memory[label]


def test_the_demo_kernels_are_the_suite_and_the_sgemm():
    labels = [k.label for k in roofline.suite.demo_kernels(compiled=False)]
    assert labels == [k.label for k in models.suite()] + ["matmul_register_tiled"]
    assert set(roofline.suite.demo_resources().functions) == set(labels)


# The default table fits 100 columns: the default GPU's in the default run (the one `make demo`
# prints) and a GPU whose limiters include the longest name (block_scheduling); every GPU of the
# database under GPUROOF_TEST_FULL=1 (0.3 s of CPU each).
WIDTH_GPUS = [g.name for g in roofline.gpus()] if FULL else ["H100-SXM", "H200"]


@pytest.mark.parametrize("gpu", WIDTH_GPUS)
def test_the_default_table_fits_100_columns(gpu, report):
    suite = report if gpu == "H100-SXM" else roofline.suite.analyze_suite(gpu, roofline.suite.demo_kernels(gpu))
    lines = roofline.suite.format_suite_table(suite).splitlines()
    assert max(len(line) for line in lines) <= 100, max(lines, key=len)
    assert len(roofline.suite.format_suite_table(suite, wide=True).splitlines()[0]) > 100  # what --wide is for


def test_the_wide_table_has_every_column_and_the_same_rows(report):
    default, wide = (roofline.suite.format_suite_table(report, wide=w).splitlines() for w in (False, True))
    header = wide[0]
    for column in ("AI requested", "AI DRAM", "TFLOP/s", "DRAM GB/s", "threads/block"):
        assert column in header and column not in default[0]
    for column in ("bound", "roofline", "predicted", "limiter", "regs", "occ"):
        assert column in header and column in default[0]
    # one line per kernel, in the same order, in both
    kernels = [r.label for r in report.rows]
    for table in (default, wide):
        assert [line[:len(k)] for line, k in zip(table[2:], kernels)] == kernels


def test_the_roofline_column_is_the_predictions_roofline_not_a_bound(report):
    """The column shows `Prediction.roofline_seconds` (what roofline.predict says), and no header
    reads as a bound ("time >=")."""
    copy = next(r for r in report.rows if r.kernel == "copy")
    prediction = roofline.predict(roofline.DEFAULT_GPU, roofline.suite.demo_kernels()[0])
    assert copy.roofline_seconds == prediction.roofline_seconds <= prediction.seconds
    wide = roofline.suite.format_suite_table(report, wide=True)
    row = next(line for line in wide.splitlines() if line.startswith("copy "))
    assert f"{prediction.roofline_seconds * 1e6:.4g}" in row.split()
    assert ">=" not in wide.splitlines()[0] and ">=" not in suite_to_markdown(report).splitlines()[2]
