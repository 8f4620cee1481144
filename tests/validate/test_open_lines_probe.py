"""The open-lines probe (validate.probes._open_lines) and its rule ``l2_open_lines``: the figures
from the launches, the packaged H100 SXM figures from the committed sweep, the prediction of the
sweep's launches, and the probe on a GPU."""

from __future__ import annotations

import csv
import dataclasses
import functools
import json
from pathlib import Path

import pytest

import occupancy
import roofline
from roofline._predict.rules import disabled
from tests.validate.ncu_stand_in import ncu_runner
from validate.probes import OpenLinesProbe
from validate.probes._open_lines import (
    BLOCKS_PER_SM,
    METRICS,
    THREADS,
    OpenLineLaunch,
    derive_open_lines,
    launch_plan,
    measure_open_lines,
)

PROBE = OpenLinesProbe()
L2 = 50 << 20  # an H100 SXM's
#: The exploration's launches under Nsight (H100 SXM, docs/results/h100-sxm/probes-2026-12-07b).
SWEEP = Path(__file__).parents[2] / "docs/results/h100-sxm/probes-2026-12-07b/l2_window_ncu.csv"
#: The probe's run (H100 SXM, 2026-12-07, the twelfth session): the packaged figures.
PROBE_RUN = Path(__file__).parents[2] / "docs/results/h100-sxm/probes-2026-12-07c/open_lines.json"
H200_PROBE_RUN = Path(__file__).parents[2] / "docs/results/h200/probes-2026-12-07/open_lines.json"


def _sweep() -> list[tuple[dict[str, int], dict[str, float]]]:
    """(blocks, threads, rows, cols of the launch; metric -> value) of each launch of the sweep."""
    found = []
    for block in SWEEP.read_text().split("== ")[1:]:
        head, *rows = block.splitlines()
        values = {row[-3]: float(row[-1].replace(",", "")) for row in csv.reader(rows)
                  if len(row) > 3 and row[0] != "ID"}
        launch = dict(part.split("=") for part in head.split()[1:])
        found.append(({k: int(launch[k]) for k in ("blocks", "threads", "rows", "cols")}, values))
    return found


def _launch(blocks: int, share: float | None, columns: int = 64) -> OpenLineLaunch:
    """A launch whose DRAM reads fetch `share` of its sector requests beyond the arrays again."""
    arrays = blocks * THREADS * columns * 2 * 4
    again = 7 * arrays / 32  # 8 steps of 4 bytes a sector: 7 requests beyond the arrays' own
    return OpenLineLaunch(blocks=blocks, columns=columns, l2_read_sectors=arrays / 32 + again,
                          dram_read_bytes=arrays + (share or 0.0) * again * 64)


@pytest.mark.parametrize("shares, onset, full", [
    # a straight ramp from 1000 to 3000 blocks' open lines (16 KB a block)
    ({500: 0.0, 1500: 0.25, 2000: 0.5, 2500: 0.75, 3500: 1.0}, 1000 * 16384, 3000 * 16384),
    # the ends (shares below 0.1 and over 0.9) are left out of the line
    ({1000: 0.05, 1500: 0.25, 2500: 0.75, 2900: 0.95}, 1000 * 16384, 3000 * 16384),
    # one share on the ramp is no line
    ({1000: 0.0, 2000: 0.5, 3000: 1.0}, None, None),
], ids=["ramp", "ends-left-out", "one-point"])
def test_the_figures_are_the_ends_of_the_line_through_the_ramps_shares(shares, onset, full):
    result = derive_open_lines(L2, tuple(_launch(b, s) for b, s in shares.items()))
    assert result.l2_open_lines_onset_bytes == (pytest.approx(onset) if onset else None)
    assert result.l2_open_lines_full_bytes == (pytest.approx(full) if full else None)
    assert (result.skipped is None) == (full is not None)
    figures = PROBE.figures(result)
    assert figures["l2_open_lines_full_bytes"][0] == result.l2_open_lines_full_bytes
    assert "L2 read sectors" in figures["l2_open_lines_onset_bytes"][1]


def test_the_plan_holds_a_line_of_each_array_for_every_row_and_the_arrays_past_l2():
    plan = launch_plan(132, L2)
    assert [blocks for blocks, _ in plan] == [k * 132 for k in BLOCKS_PER_SM]
    for blocks, columns in plan:
        arrays = blocks * THREADS * columns * 2 * 4
        assert 2.5 * L2 <= arrays < 2.5 * L2 + blocks * THREADS * 8 * 32
        assert columns % 32 == 0  # rows of whole 128-byte lines: a row's lines are its own
    with pytest.raises(ValueError, match="l2_cache_bytes"):
        launch_plan(132, 0)


def test_the_packaged_figures_are_the_probes_line_and_the_exploration_agrees():
    # roofline/data/gpus/h100-sxm.toml's figures derive from the probe's committed run, not retyped
    run = json.loads(PROBE_RUN.read_text())
    launches = tuple(OpenLineLaunch.model_validate(launch) for launch in run["result"]["launches"])
    result = derive_open_lines(L2, launches)
    calibration = roofline.calibration("H100 SXM")
    assert calibration.l2_open_lines_onset_bytes == pytest.approx(result.l2_open_lines_onset_bytes, rel=1e-4)
    assert calibration.l2_open_lines_full_bytes == pytest.approx(result.l2_open_lines_full_bytes, rel=1e-4)
    # the H200's from its own run of the probe (2026-12-07), its 60 MiB L2
    h200_run = json.loads(H200_PROBE_RUN.read_text())
    h200_result = derive_open_lines(60 * 1024 * 1024, tuple(OpenLineLaunch.model_validate(launch)
                                                            for launch in h200_run["result"]["launches"]))
    h200 = roofline.calibration("H200")
    assert h200.l2_open_lines_onset_bytes == pytest.approx(h200_result.l2_open_lines_onset_bytes, rel=1e-4)
    assert h200.l2_open_lines_full_bytes == pytest.approx(h200_result.l2_open_lines_full_bytes, rel=1e-4)
    # the exploration before it (rows not all whole lines, 138 MB of arrays) draws nearly the same line
    sweep = tuple(OpenLineLaunch(blocks=launch["blocks"], columns=launch["cols"],
                                 dram_read_bytes=v["dram__bytes_read.sum"],
                                 l2_read_sectors=v["lts__t_sectors_srcunit_tex_op_read.sum"])
                  for launch, v in _sweep() if launch["threads"] == THREADS)
    explored = derive_open_lines(L2, sweep)
    assert explored.l2_open_lines_onset_bytes == pytest.approx(result.l2_open_lines_onset_bytes, rel=0.06)
    assert explored.l2_open_lines_full_bytes == pytest.approx(result.l2_open_lines_full_bytes, rel=0.06)


@functools.lru_cache(maxsize=None)
def _resources():
    from validate.probes._rule_probes import _resident, probe_resources
    try:
        return probe_resources(_resident(132, 64, 64))
    except (occupancy.OccupancyError, ImportError) as exc:
        pytest.skip(f"the probe kernels do not compile here (NVRTC and nvdisasm): {exc}")


@pytest.mark.parametrize("blocks_per_sm, threads, rule", [
    (32, 64, "l2_open_lines"), (8, 256, "l2_open_lines"), (2, 1024, "l2_open_lines"), (24, 64, "l2_open_lines"),
    (16, 64, "l1_open_lines"), (24, 64, "l1_open_lines")])
def test_a_row_walk_is_predicted_with_the_lines_l1_and_l2_let_go(blocks_per_sm, threads, rule):
    # docs/prediction.md 'Rows in flight past L2': past L1's lines every step is an L2 request;
    # past L2's onset a share of them is fetched again. Without the rule, 0.5 x the time or less
    from validate.probes._rule_probes import _resident, predictions
    launch, values = next((launch, v) for launch, v in _sweep()
                          if launch["blocks"] == 132 * blocks_per_sm and launch["threads"] == threads)
    probe = dataclasses.replace(_resident(launch["blocks"], threads, launch["cols"]), rule=rule)
    on, off = predictions(probe, "H100 SXM", _resources())
    measured = values["gpu__time_duration.sum"] * 1e-9
    assert abs(on / measured - 1) < 0.15 and off / measured < 0.5


def test_a_streaming_loop_holds_no_line_open():
    n = 1 << 22
    walk = [roofline.memory.Access(array="a", index=lambda c: c.x * 64 + c.loop, loop=64)]
    stream = [roofline.memory.Access(array="a", index=lambda c: c.loop * n + c.x, loop=8)]
    assert roofline.memory.traffic(4096, 64, walk).l2_open_bytes_per_block == 64 * 128
    assert roofline.memory.traffic(4096, 64, stream).l2_open_bytes_per_block == 0


def test_the_rule_off_leaves_the_dram_bytes_alone():
    from validate.probes._rule_probes import _resident, probe_counts
    kernel, measured = probe_counts(_resident(4224, 64, 64), _resources())

    def dram_read(**switch):
        with disabled(switch.get("off", set())):
            p = roofline.predict("H100 SXM", kernel, after_l2_flush=True, measured=measured)
        return next(t for t in p.terms if t.name == "dram").inputs["dram_read_bytes"]

    assert dram_read(off={"l2_open_lines"}) == pytest.approx(kernel.dram_bytes - 4224 * 64 * 4, rel=0.05)
    assert dram_read() > 10 * dram_read(off={"l2_open_lines"})


def test_without_ncu_the_probe_says_why(monkeypatch):
    monkeypatch.setattr("validate.probes._ncu_child.shutil.which", lambda name: None)
    result = measure_open_lines(device_index=0, sm_count=132, l2_cache_bytes=L2)
    assert result.skipped == "ncu (Nsight Compute) is not on PATH" and result.l2_open_lines_full_bytes is None
    assert "Not measured" in "\n".join(PROBE.render(result, "##", ""))


@pytest.mark.gpu
def test_the_probe_measures_its_figures_on_the_gpu(gpu_session):
    from validate.device import query_device
    info = query_device(gpu_session)
    result = measure_open_lines(device_index=info.index, sm_count=info.sm_count, l2_cache_bytes=info.l2_cache_bytes)
    if result.skipped and "ncu" in result.skipped:
        pytest.skip(result.skipped)
    assert result.l2_open_lines_full_bytes is not None, result.skipped
    assert 0.3 * info.l2_cache_bytes < result.l2_open_lines_onset_bytes < result.l2_open_lines_full_bytes \
        < 2 * info.l2_cache_bytes


def _raw_page(rows: list[dict[str, float]]) -> str:
    """ncu's printed raw page (--csv --page raw --print-units base) of rows_pair launches."""
    header = ["ID", "Kernel Name", "Block Size", "Grid Size", *METRICS]
    units = ["", "", "", "", "ns", "byte", "byte", "sector"]
    lines = [header, units] + [[str(i), "rows_pair", f"({THREADS}, 1, 1)", f"({int(r['blocks'])}, 1, 1)",
                                *(f"{r[m]:.0f}" for m in METRICS)] for i, r in enumerate(rows)]
    return "==PROF== Connected to process 7\n" + "\n".join(",".join(f'"{v}"' for v in line) for line in lines) + "\n"


def test_the_sectors_are_read_as_counted_where_dram_fetches_more_than_32_bytes_each():
    # the exploration's 32 blocks an SM (H100 SXM): 2.05 GB read for 33.9 M sector requests, 60.6 bytes each. The L2
    # hit rate (1 - read / 32 x sectors) stops at 0 there, so the sectors cannot come back from it.
    plan = launch_plan(132, L2)
    rows = []
    for blocks, columns in plan:
        arrays = blocks * THREADS * columns * 8
        rows.append({"blocks": blocks, "gpu__time_duration.sum": 1e5, "dram__bytes_write.sum": 0.0,
                     "lts__t_sectors_srcunit_tex_op_read.sum": arrays / 32 + 30e6,
                     "dram__bytes_read.sum": arrays + 30e6 * 64 * min(1.0, max(0.0, (blocks / 132 - 16) / 12))})
    seen: list = []
    result = measure_open_lines(device_index=0, sm_count=132, l2_cache_bytes=L2, ncu="/opt/ncu",
                                runner=ncu_runner(_raw_page(rows), seen=seen))
    assert result.skipped is None
    assert [launch.l2_read_sectors for launch in result.launches] == \
        [pytest.approx(r["lts__t_sectors_srcunit_tex_op_read.sum"]) for r in rows]
    assert result.launches[-1].refetched_share == pytest.approx(1.0)
    # the share's ramp from 16 to 28 blocks of 64 an SM: 34.6 and 60.6 MB of open lines
    assert result.l2_open_lines_onset_bytes == pytest.approx(16 * 132 * THREADS * 256, rel=1e-6)
    assert result.l2_open_lines_full_bytes == pytest.approx(28 * 132 * THREADS * 256, rel=1e-6)
    # the child's warm-up launch is made and not profiled
    command = seen[0]
    assert command[command.index("--launch-skip") + 1] == "1"
