"""The branch-paths probe (validate.probes._branch_paths) on the CPU: its ratios from times made
up by hand, its kernels' SASS as NVRTC and nvdisasm give it for sm_90 (a branch, both sides kept
and not predicated, the divergent and the uniform kernel alike but for the bit tested), the
model's predictions of them, the standalone run; and on a GPU, what holds on any GPU."""

from __future__ import annotations

import functools
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import occupancy
import pytest
import roofline

from roofline.divergence import branch_divergence
from roofline.terms import disabled
from validate.device import Session, kernel_source
from validate.probes import _branch_paths
from validate.probes._branch_paths import (
    CHAINS,
    KERNELS,
    PREDICTIONS,
    STEPS,
    BranchPathTimes,
    derive_branch_paths,
    predicted_seconds,
    render_branch_paths,
)

ROOT = Path(__file__).resolve().parents[2]
SHAPE = {"sm_count": 132, "blocks_per_sm": 8, "threads_per_block": 256, "waves": 16}
#: Static counts as nvdisasm 13 lists the kernels for sm_90 (the offline test below reads them).
STATIC = {"branch_lanes": 572, "branch_warps": 572, "branch_none": 298}
#: The model's times (seconds at 16 and 32 waves) of the same shape, rounded from `predicted_seconds` on
#: the H100 SXM: the instructions term binds, the lanes kernel at factor 2 twice its time at factor 1.
PREDICTED = {"branch_lanes": (78e-6, 152e-6), "branch_lanes_one_path": (42.9e-6, 81.8e-6),
             "branch_warps": (42.9e-6, 81.8e-6), "branch_none": (42.5e-6, 81e-6)}


def _times(**seconds: tuple[float, float]) -> BranchPathTimes:
    return BranchPathTimes(**SHAPE, seconds=seconds, gpu="H100 SXM", predicted_seconds=PREDICTED,
                           static_instructions=STATIC)


# (measured seconds at 16 and 32 waves, measured ratios by hand, issued share of the static count by hand)
CASES = {
    # a divergent warp issues both sides (its static count), a uniform one one side: the added 80, 40, 40 us
    "divergent-issues-both-sides": (
        {"branch_lanes": (90e-6, 170e-6), "branch_warps": (50e-6, 90e-6), "branch_none": (48e-6, 88e-6)},
        {"branch_lanes/branch_warps": 2.0, "branch_lanes/branch_none": 2.0, "branch_warps/branch_none": 1.0},
        {"branch_lanes": 2.0 / (572 / 298), "branch_warps": 1.0 / (572 / 298)}),
    # what the model says with the factor on top of the static count: 160, 80, 40 us added
    "factor-on-top-of-the-static-count": (
        {"branch_lanes": (170e-6, 330e-6), "branch_warps": (90e-6, 170e-6), "branch_none": (48e-6, 88e-6)},
        {"branch_lanes/branch_warps": 2.0, "branch_lanes/branch_none": 4.0, "branch_warps/branch_none": 2.0},
        {"branch_lanes": 4.0 / (572 / 298), "branch_warps": 2.0 / (572 / 298)}),
    # the longer uniform launch took no longer: its added time and every ratio with it are None
    "a-longer-launch-that-added-nothing": (
        {"branch_lanes": (90e-6, 170e-6), "branch_warps": (50e-6, 50e-6), "branch_none": (48e-6, 88e-6)},
        {"branch_lanes/branch_warps": None, "branch_lanes/branch_none": 2.0, "branch_warps/branch_none": None},
        {"branch_lanes": 2.0 / (572 / 298), "branch_warps": None}),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_ratios_of_the_added_times(case):
    seconds, ratios, issued = CASES[case]
    result = derive_branch_paths(_times(**seconds))
    assert result.measured_ratios == {k: v if v is None else pytest.approx(v, rel=1e-9) for k, v in ratios.items()}
    assert result.issued_over_static == {k: v if v is None else pytest.approx(v, rel=1e-9) for k, v in issued.items()}
    short, long = seconds["branch_lanes"]
    assert result.measured_added_seconds["branch_lanes"] == pytest.approx(long - short)


def test_the_model_and_static_ratios_of_the_made_up_predictions():
    result = derive_branch_paths(_times(**CASES["divergent-issues-both-sides"][0]))
    # by hand: added 74, 38.9, 38.9 and 38.5 us
    assert result.predicted_ratios == pytest.approx({
        "branch_lanes/branch_warps": 74 / 38.9, "branch_lanes/branch_none": 74 / 38.5,
        "branch_warps/branch_none": 38.9 / 38.5, "branch_lanes_one_path/branch_warps": 1.0,
        "branch_lanes_one_path/branch_none": 38.9 / 38.5})
    assert result.static_ratios == pytest.approx({"branch_lanes/branch_warps": 1.0,
                                                  "branch_lanes/branch_none": 572 / 298,
                                                  "branch_warps/branch_none": 572 / 298})


def test_without_sass_or_predictions_only_the_measured_ratios_come():
    seconds = CASES["divergent-issues-both-sides"][0]
    result = derive_branch_paths(BranchPathTimes(**SHAPE, seconds=seconds))
    assert result.measured_ratios["branch_lanes/branch_warps"] == pytest.approx(2.0)
    assert result.predicted_ratios == result.static_ratios == result.issued_over_static == {}
    assert result.gpu is None and "no database GPU" in "\n".join(render_branch_paths(result))


def test_times_of_another_kind_are_refused():
    with pytest.raises(TypeError, match="BranchPathTimes"):
        derive_branch_paths({"seconds": {}})


@pytest.mark.parametrize(("label", "kernel", "paths", "sides"), [
    ("branch_lanes", "branch_lanes", 2.0, lambda t: (t >> 1) & 1),
    ("branch_warps", "branch_warps", 1.0, lambda t: (t >> 5) & 1),
    ("branch_none", "branch_none", 1.0, lambda t: 0 * t),
    ("branch_lanes_one_path", "branch_lanes", 1.0, None)], ids=["lanes", "warps", "none", "lanes-one-path"])
def test_each_prediction_takes_the_factor_branch_divergence_counts(label, kernel, paths, sides):
    assert PREDICTIONS[label] == (kernel, paths)
    if sides is not None:
        assert branch_divergence(sides(np.arange(256))).issue_factor == paths


def test_the_module_constants_are_the_sources():
    source = kernel_source("branch_paths.cu")
    assert set(KERNELS) == set(re.findall(r'extern "C" __global__ void (\w+)\(', source))
    assert re.search(rf"(?m)^#define CHAINS {CHAINS}$", source) and re.search(rf"(?m)^#define STEPS {STEPS}$", source)
    assert "two_sides<1>" in source and "two_sides<5>" in source


# ------------------------------------------------------------------ the SASS, offline (NVRTC + nvdisasm)

@functools.cache
def _all_resources() -> tuple[dict[str, occupancy.KernelResources], tuple[str, ...]]:
    said: list[str] = []
    return _branch_paths._compiled("sm_90", said.append), tuple(said)


def _resources(kernel: str) -> occupancy.KernelResources:
    """The probe's own read of the kernels (`_compiled`: one NVRTC compile, nvdisasm)."""
    found, said = _all_resources()
    if not found:
        pytest.skip(f"branch_paths.cu's SASS is not at hand here: {' '.join(said)}")
    return found[kernel]


@functools.cache
def _listing() -> dict[str, tuple]:
    """Each kernel's SASS as (guard, opcode, operands), branch labels left out."""
    from occupancy._compile import compile_source
    from occupancy._nvdisasm import disassemble

    _resources("branch_lanes")  # skips where there is no NVRTC or nvdisasm
    functions = disassemble(compile_source(kernel_source("branch_paths.cu"), "sm_90").cubin).functions
    return {name: tuple((i.guard, i.opcode, () if i.target else i.operands) for i in instructions)
            for name, instructions in functions.items() if name in KERNELS}


@pytest.mark.parametrize("kernel", KERNELS)
def test_the_kernels_are_straight_line_and_keep_every_fma(kernel):
    sass = _resources(kernel).sass
    sides = 2 if kernel != "branch_none" else 1
    assert sass.loops == () and sass.hot_loop is None
    assert sass.instructions.fp32_fma == sides * CHAINS * STEPS  # neither side merged nor folded away
    assert sass.instructions.branches == sides - 1
    assert sass.instructions.global_stores == sides  # each side stores its sum
    # 8 blocks of 256 threads an SM on sm_90 (65,536 registers): the waves are full ones
    assert _resources(kernel).registers_per_thread <= 32


def test_the_sides_are_branched_over_not_predicated():
    for kernel in ("branch_lanes", "branch_warps"):
        listing = _listing()[kernel]
        assert not [row for row in listing if row[1] == "FFMA" and row[0] is not None]
        assert [row[0] for row in listing if row[1] == "BRA"][0] in ("@P0", "@!P0")


def test_the_divergent_and_uniform_kernels_differ_only_in_the_bit_they_test():
    lanes, warps = _listing()["branch_lanes"], _listing()["branch_warps"]
    assert _resources("branch_lanes").sass.instructions == _resources("branch_warps").sass.instructions
    assert len(lanes) == len(warps)
    differ = [(a, b) for a, b in zip(lanes, warps) if a != b]
    assert len(differ) == 1
    (a, b), = differ
    assert a[1] == b[1] == "LOP3.LUT" and "0x2" in a[2] and "0x20" in b[2]


def test_the_static_counts_are_those_the_made_up_times_use():
    assert {k: _resources(k).sass.instructions.total for k in KERNELS} == STATIC


def test_the_model_issues_the_listing_split_and_one_path_uniform():
    """Rule branch_sides_in_sass, offline: on the H100 SXM the instructions term binds; the lanes
    kernel at factor 2 issues its listing (572 against the unbranched 298), at factor 1 its longest
    path (301), as the uniform kernel does; with the rule off, the listing twice and once."""
    resources = {k: _resources(k) for k in KERNELS}

    def added() -> dict[str, float]:
        seconds = predicted_seconds("H100 SXM", resources, 132, 8)
        return {label: long - short for label, (short, long) in seconds.items()}

    on = added()
    assert on["branch_lanes"] / on["branch_none"] == pytest.approx(572 / 298, rel=0.03)
    assert on["branch_lanes_one_path"] == pytest.approx(on["branch_warps"], rel=1e-9)
    assert on["branch_warps"] / on["branch_none"] == pytest.approx(301 / 298, rel=0.01)
    with disabled({"branch_sides_in_sass"}):
        off = added()
    assert off["branch_lanes"] / off["branch_warps"] == pytest.approx(2.0, rel=0.02)
    assert off["branch_warps"] / off["branch_none"] == pytest.approx(572 / 298, rel=0.05)
    seconds = predicted_seconds("H100 SXM", resources, 132, 8)
    for label, rounded in PREDICTED.items():
        assert seconds[label] == pytest.approx(rounded, rel=0.03), label


# ------------------------------------------------------------------ the measurement, on a stand-in device

class _Device(Session):
    """A `Session` that launches nothing: it records each launch's shape and arguments."""

    def __init__(self) -> None:  # no driver: none of Session's own start-up
        self.arch, self.timer, self.launches = "sm_90", None, []

    def allocate(self, nbytes):
        return ("buffer", nbytes)

    def launcher(self, kernel, grid, block, args, shared=0):
        self.launches.append((kernel, grid, block, args))
        return kernel, grid[0]

    def synchronize(self):
        pass


def test_the_measurement_times_two_grids_a_kernel_and_predicts_them(monkeypatch):
    """16 and 32 full waves of 8 blocks of 256 threads on 132 SMs, each kernel's median into the
    times, and the predictions made from the SASS compiled here for the device's database GPU."""
    _resources("branch_lanes")  # skips where there is no NVRTC or nvdisasm
    wave = 132 * 8
    # made-up medians: the lanes kernel 80 us for 16 waves, the others 40 us, and 10 us of launch
    per_16_waves = {"branch_lanes": 80e-6, "branch_warps": 40e-6, "branch_none": 40e-6}
    monkeypatch.setattr(_branch_paths, "compile_kernels", lambda source, names, **k: {n: n for n in names})
    monkeypatch.setattr(_branch_paths, "benchmark", lambda run, **k: type("T", (), {
        "median_seconds": 10e-6 + per_16_waves[run[0]] * run[1] / (16 * wave)})())
    info = type("Info", (), {"name": "NVIDIA H100 80GB HBM3", "sm_count": 132, "max_threads_per_sm": 2048})()
    device = _Device()
    result = _branch_paths.measure_branch_paths(device, info, quick=True)
    assert {(k, grid[0]) for k, grid, _, _ in device.launches} == {(k, n * wave) for k in KERNELS for n in (16, 32)}
    assert all(block == (256, 1, 1) and args[0] == ("buffer", 32 * wave * 256 * 4) and args[1] == np.float32(1e-4)
               for _, _, block, args in device.launches)
    assert result.measured_ratios == pytest.approx(
        {"branch_lanes/branch_warps": 2.0, "branch_lanes/branch_none": 2.0, "branch_warps/branch_none": 1.0})
    assert result.gpu == roofline.gpu("H100 SXM").name and result.static_instructions == STATIC
    assert result.predicted_seconds == predicted_seconds("H100 SXM", {k: _resources(k) for k in KERNELS}, 132, 8)


def test_a_device_the_database_does_not_know_is_measured_without_predictions(monkeypatch):
    monkeypatch.setattr(_branch_paths, "compile_kernels", lambda source, names, **k: {n: n for n in names})
    monkeypatch.setattr(_branch_paths, "benchmark", lambda run, **k: type("T", (), {"median_seconds": run[1] * 1e-9})())
    monkeypatch.setattr(_branch_paths, "_compiled", lambda arch, progress: {})
    info = type("Info", (), {"name": "NVIDIA Made Up", "sm_count": 10, "max_threads_per_sm": 1536})()
    result = _branch_paths.measure_branch_paths(_Device(), info)
    assert result.blocks_per_sm == 6 and result.gpu is None and result.predicted_seconds == {}
    assert result.measured_ratios == pytest.approx(
        {"branch_lanes/branch_warps": 1.0, "branch_lanes/branch_none": 1.0, "branch_warps/branch_none": 1.0})


# ------------------------------------------------------------------ the standalone run

def test_main_prints_the_table_and_writes_the_result(tmp_path, monkeypatch, capsys):
    info = type("Info", (), {"name": "NVIDIA H100 80GB HBM3"})()
    made = derive_branch_paths(_times(**CASES["divergent-issues-both-sides"][0]))
    monkeypatch.setattr(_branch_paths, "open_session", lambda: object())
    monkeypatch.setattr(_branch_paths, "query_device", lambda session: info)
    monkeypatch.setattr(_branch_paths, "measure_branch_paths", lambda *a, **k: made)
    out = tmp_path / "branch_paths.json"
    assert _branch_paths.main(out=out) == 0
    shown = capsys.readouterr().out
    assert "## Branch paths: a divergent branch in straight-line code" in shown
    assert "| branch_lanes/branch_warps | 2.00 | 1.90 | 1.00 |" in shown
    assert "| branch_lanes_one_path/branch_none | 2.00 | 1.01 | 1.92 |" in shown
    written = json.loads(out.read_text())
    assert written["device"] == info.name
    assert written["result"]["measured_ratios"]["branch_warps/branch_none"] == pytest.approx(1.0)


def test_the_script_parses_its_arguments():
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "branch_paths_probe.py"), "--help"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "--out" in done.stdout and "--gpu" in done.stdout


# ------------------------------------------------------------------ on a GPU

@pytest.mark.gpu
def test_the_probe_on_the_gpu(gpu_session, gpu_info):
    """What holds on any GPU: every longer launch adds time, every ratio is positive, and the
    divergent kernel is not faster than the uniform one by more than 5 %."""
    result = _branch_paths.measure_branch_paths(gpu_session, gpu_info, quick=True)
    assert all(value is not None and value > 0 for value in result.measured_added_seconds.values()), result
    assert all(value is not None and value > 0 for value in result.measured_ratios.values()), result
    assert result.measured_ratios["branch_lanes/branch_warps"] > 0.95
