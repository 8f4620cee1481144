"""The L2-writes probe (validate.probes._kept_writes) with a stand-in for ncu, and on a GPU."""

from __future__ import annotations

import csv
import io
import shutil
import subprocess
from pathlib import Path

import pytest

import roofline
from tests.validate.ncu_stand_in import ncu_runner
from validate.device import kernel_source
from validate.probes import L2WritesProbe
from validate.probes._kept_writes import (
    FILL_KERNELS,
    KERNELS,
    L2WriteLaunch,
    derive_l2_writes,
    launch_plan,
    measure_l2_writes,
    partial_fill,
)

PROBE = L2WritesProbe()
USER = Path(__file__).parents[1] / "data" / "ncu" / "user_kernels.raw.csv"
L2 = 60 << 20  # an H200's 62,914,560 bytes


def _launch(kernel, footprint, dram_written):
    return L2WriteLaunch(kernel=kernel, footprint_bytes=footprint, written_bytes=int(footprint * KERNELS[kernel][0]),
                         dram_written_bytes=dram_written, dram_read_bytes=0.0)


@pytest.mark.parametrize("launches, figure", [
    # store-only sweeps of 1, 2 and 4 L2s keep 29, 30 and 28 MB: the median 29 MB
    ([("l2_store_only", L2, L2 - 29e6), ("l2_store_only", 2 * L2, 2 * L2 - 30e6),
      ("l2_store_only", 4 * L2, 4 * L2 - 28e6)], 29e6),
    # a sweep of half L2 keeps all it wrote and is not one of the figure's launches
    ([("l2_store_only", L2 // 2, 0.0), ("l2_store_only", L2, L2 - 29e6), ("l2_store_only", 2 * L2, 2 * L2 - 29e6)],
     29e6),
    # the in-place and copy launches are checks, not the figure's
    ([("l2_update_in_place", 2 * L2, 2 * L2 - 60e6), ("l2_copy", 2 * L2, L2 - 25e6), ("l2_store_only", 2 * L2,
                                                                                     2 * L2 - 29e6)], 29e6),
    # no overflowing store-only sweep: no figure
    ([("l2_store_only", L2 // 2, 0.0), ("l2_copy", 2 * L2, L2 - 25e6)], None),
], ids=["median", "below-L2-left-out", "checks-left-out", "none"])
def test_the_figure_is_the_median_kept_by_the_store_only_sweeps_of_L2_or_more(launches, figure):
    result = derive_l2_writes(L2, tuple(_launch(*row) for row in launches))
    assert result.l2_kept_written_bytes == (pytest.approx(figure) if figure else None)
    assert (result.skipped is None) == (figure is not None)
    value, how = PROBE.figures(result)["l2_kept_written_bytes"]
    assert value == result.l2_kept_written_bytes and "dram__bytes_write.sum" in how


def test_the_plan_sweeps_each_kernel_over_whole_lines_of_half_to_four_L2s():
    plan = launch_plan(L2)
    assert [k for k, _ in plan] == [k for k in KERNELS for _ in range(4)]
    assert [f for k, f in plan if k == "l2_copy"] == [L2 // 2, L2, 2 * L2, 4 * L2]
    assert [f for _, f in launch_plan(L2, "flush")] == [L2 // 16, L2 // 8, L2 // 4, 3 * L2 // 8, L2 // 2,
                                                         3 * L2 // 4, L2, 3 * L2 // 2, 2 * L2, 4 * L2]
    assert launch_plan(L2, "fill") == [(k, 2 * L2) for k in FILL_KERNELS]
    with pytest.raises(ValueError, match="mode must be 'clean', 'fill' or 'flush', not 'dirty'"):
        launch_plan(L2, "dirty")
    assert all(f % 256 == 0 for _, f in launch_plan(50_000_000))  # both halves of a copy whole lines
    with pytest.raises(ValueError, match="l2_cache_bytes must be positive, not 0"):
        launch_plan(0)
    source = kernel_source("l2_writes.cu")
    assert all(f"__global__ void {k}(" in source for k in [*KERNELS, *FILL_KERNELS])


def _export(plan, dram_written, names=None, dram_read=None) -> str:
    """ncu's printed raw page: one row per launch of ``plan`` with its DRAM bytes (read: the
    footprint it does not write, unless ``dram_read`` gives them)."""
    rows = list(csv.reader(USER.open()))
    header, units, row = rows[0] + ["dram__bytes_read.sum", "dram__bytes_write.sum"], rows[1] + ["byte", "byte"], rows[2]
    name = header.index("Kernel Name")
    out = io.StringIO()
    writer = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n")
    writer.writerows([header, units])
    reads = dram_read or [footprint * (1 - KERNELS.get(kernel, (0.0,))[0]) for kernel, footprint in plan]
    for i, ((kernel, footprint), written, read) in enumerate(zip(plan, dram_written, reads, strict=True)):
        r = [*row, str(read), str(written)]
        r[0], r[name] = str(i), (names or {}).get(kernel, kernel)
        writer.writerow(r)
    return "==PROF== Connected to process 7\n" + out.getvalue() + "==PROF== Disconnected from process 7\n"


def test_under_a_stand_in_ncu_the_launches_give_the_figure():
    """Every launch keeps min(written, 29 MB); the figure is 29 MB, and ncu empties L2 before each.
    The read sweeps after the flush run without ncu's emptying and keep what DRAM wrote."""
    plan, flush, seen = launch_plan(L2), launch_plan(L2, "flush"), []
    written = [max(0.0, f * KERNELS[k][0] - 29e6) for k, f in plan]
    displaced = [min(29e6, max(0.0, f - 33e6)) for _, f in flush]
    fill = launch_plan(L2, "fill")  # the store reads a fill per sector; the update its loads only
    exports = {"clean": _export(plan, written), "flush": _export(flush, displaced),
               "fill": _export(fill, [0.0, 0.0], dram_read=[2 * L2, 2 * L2])}

    def run(command, **kwargs):
        seen.append(command)
        return subprocess.CompletedProcess(command, 0, exports[command[-3]], "")

    result = measure_l2_writes(device_index=0, l2_cache_bytes=L2, ncu="/opt/ncu", runner=run)
    assert result.skipped is None and result.l2_kept_written_bytes == pytest.approx(29e6, rel=1e-3)
    assert len(result.launches) == 12 and result.launches[0].kept_bytes == pytest.approx(29e6)  # half L2 > 29 MB
    clean, flushed, filled = seen
    assert filled[filled.index("--cache-control") + 1] == "all" and filled[-3] == "fill"
    assert result.partial_fill.sectors == 2 * L2 // 32 and result.fill_skipped is None
    assert (result.partial_fill.store_fill_bytes_per_sector, result.partial_fill.update_fill_bytes_per_sector) == (
        pytest.approx(32.0), pytest.approx(0.0))
    assert clean[clean.index("--cache-control") + 1] == "all" and "dram__bytes_write.sum" in ",".join(clean)
    assert clean[-3:] == ["clean", "0", str(L2)] and "validate.probes._kept_writes" in clean
    assert flushed[flushed.index("--cache-control") + 1] == "none" and flushed[-3] == "flush"
    assert [s.read_bytes for s in result.after_flush] == [f for _, f in flush] and result.flush_skipped is None
    assert [s.dram_written_bytes for s in result.after_flush] == pytest.approx(displaced)
    assert [s.dram_read_bytes for s in result.after_flush] == pytest.approx([f for _, f in flush])
    text = "\n".join(PROBE.render(result, "##", ""))
    assert "29.0 MB" in text and "| l2_copy | 4.00 |" in text and "| 4.000 | 251.7 | 251.7 | 29.0 |" in text
    assert "| l2_strided_update (loads first) | 125.8 | 32.0 | 0.0 |" in text


@pytest.mark.parametrize("kernels, sectors", [
    (["l2_strided_store", "l2_strided_update"], 2 * L2 // 32),
    (["l2_strided_store"], None),  # the update missing: no finding
    ([], None),
], ids=["both", "one", "none"])
def test_the_fill_finding_needs_both_strided_launches(kernels, sectors):
    launches = [L2WriteLaunch(kernel=k, footprint_bytes=2 * L2, written_bytes=L2, dram_written_bytes=0.0,
                              dram_read_bytes=2.0 * L2) for k in kernels]
    fill = partial_fill(launches)
    assert (fill.sectors if fill else None) == sectors


@pytest.mark.parametrize("stdout, code, stderr, reason", [
    ("", 1, "==ERROR== ERR_NVGPUCTRPERM - no permission", "cannot read the GPU's performance counters"),
    (None, 0, "", "ncu profiled 12 launches (l2_copy, l2_store_only, other), the probe made 12"),
], ids=["counters-blocked", "other-launches"])
def test_the_probe_is_skipped_with_a_stated_reason(stdout, code, stderr, reason):
    plan = launch_plan(L2)
    stdout = stdout if stdout is not None else _export(plan, [0.0] * 12, names={"l2_update_in_place": "other"})
    result = measure_l2_writes(device_index=0, l2_cache_bytes=L2, ncu="/opt/ncu",
                               runner=ncu_runner(stdout, code=code, stderr=stderr))
    assert result.l2_kept_written_bytes is None and reason in result.skipped
    assert reason.split(" (")[0] in "\n".join(PROBE.render(result, "##", ""))


def test_the_figure_is_a_calibration_field_the_dram_term_reads():
    from roofline._predict.params import probes

    assert "l2_kept_written_bytes" in roofline.Calibration.model_fields
    assert probes()["l2_kept_written_bytes"] == "l2_writes"


@pytest.mark.gpu
def test_on_the_device_a_kernel_keeps_part_of_L2_in_written_lines(gpu_info):
    """Between a tenth of L2 and all of it; the in-place sweeps keep within a fifth of the
    store-only ones (the same lines, each read first). Skips without ncu or counters."""
    if shutil.which("ncu") is None:
        pytest.skip("ncu is not on PATH")
    result = measure_l2_writes(device_index=gpu_info.index, l2_cache_bytes=gpu_info.l2_cache_bytes)
    if result.skipped and "counters" in result.skipped:
        pytest.skip(result.skipped)
    kept = result.l2_kept_written_bytes
    assert kept is not None and 0.1 * gpu_info.l2_cache_bytes < kept <= 1.02 * gpu_info.l2_cache_bytes, result
    in_place = [launch.kept_bytes for launch in result.launches
                if launch.kernel == "l2_update_in_place" and launch.footprint_bytes >= gpu_info.l2_cache_bytes]
    assert all(abs(k / kept - 1) < 0.2 for k in in_place), result
    # a sector written in part is filled (31 bytes measured on both GPUs, 2026-11-27) unless the
    # kernel loaded it first (rule loaded_sector_fill)
    fill = result.partial_fill
    assert fill is not None and 24 < fill.store_fill_bytes_per_sector < 40, result
    assert fill.update_fill_bytes_per_sector < 8, result


@pytest.mark.parametrize(("gpu", "run"), [
    ("H100 SXM", "h100-sxm/probes-2026-12-06c/l2_writes.json"),
    ("H200", "h200/probes-2026-12-07/l2_writes.json"),
])
def test_the_packaged_figure_is_the_probes_committed_run(gpu, run):
    """roofline/data/gpus/*.toml's ``l2_kept_written_bytes`` derives from the probe's committed
    launches (to the four figures the file keeps), not retyped."""
    import json

    data = json.loads((Path(__file__).parents[2] / "docs" / "results" / run).read_text())["result"]
    launches = tuple(L2WriteLaunch.model_validate(launch) for launch in data["launches"])
    result = derive_l2_writes(data["l2_cache_bytes"], launches)
    assert roofline.calibration(gpu).l2_kept_written_bytes == pytest.approx(result.l2_kept_written_bytes, rel=1e-4)
