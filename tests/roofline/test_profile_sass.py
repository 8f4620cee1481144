"""The profile path's SASS and launch cost: a profiled kernel reaches `predict` with the SASS the
source path gives it (loads in flight, loops), and with the launch cost as Nsight measures one."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

import occupancy
import roofline
from roofline import RooflineError
from roofline._ncu_sass import source_page_sass

ROOT = Path(__file__).parents[2]
LISTING = ROOT / "tests" / "data" / "sass" / "grid_stride_copy_ept8_sm90.sass"
USER = ROOT / "tests" / "data" / "ncu" / "user_kernels.raw.csv"


@pytest.fixture(scope="module")
def nvdisasm_summary():
    return occupancy.read_sass(LISTING.read_text(), "sm_90", tool="nvdisasm")["grid_stride_copy"]


def _instructions(text: str) -> list[tuple[int, str]]:
    """(offset, instruction) of every line of an nvdisasm listing, labels resolved to offsets."""
    labels, pending, rows = {}, [], []
    for line in text.splitlines():
        label = re.match(r"^\s*(\.L_x_\d+):\s*$", line)
        if label:
            pending.append(label[1])
            continue
        m = re.match(r"^\s*/\*([0-9a-f]+)\*/\s*(.*?)\s*;", line)
        if m:
            offset = int(m[1], 16)
            labels.update({name: offset for name in pending})
            pending = []
            rows.append((offset, m[2]))
    return [(o, re.sub(r"`\((\.L_x_\d+)\)", lambda t: f"0x{labels[t[1]]:x}", body)) for o, body in rows]


def test_a_cuobjdump_listing_reads_as_nvdisasm_s(nvdisasm_summary):
    """cuobjdump prints branch targets as addresses, nvdisasm as labels: one summary."""
    rows = _instructions(LISTING.read_text())
    listing = "\n\tcode for sm_90\n\t\tFunction : grid_stride_copy\n" + "\n".join(
        f"        /*{o:04x}*/ {body} ;   /* 0x0000 */" for o, body in rows)
    summary = occupancy.read_sass(listing)["grid_stride_copy"]  # the architecture from 'code for'
    assert summary.loops and summary.global_loads_in_flight_per_thread > 1
    assert summary.model_dump(exclude={"disassembler"}) == nvdisasm_summary.model_dump(exclude={"disassembler"})


def _source_page(kernels: int, base: int = 0x7F3C_0000_1000) -> str:
    """A source-page export: a table of absolute addresses and instructions per kernel."""
    rows = _instructions(LISTING.read_text())
    out = ['==PROF== Connected']
    for _ in range(kernels):
        out.append('"Address","Source","Warp Stall Sampling (All Samples)","Instructions Executed"')
        for o, body in rows:
            text = re.sub(r"0x([0-9a-f]+)$", lambda t: f"0x{int(t[1], 16) + base:x}", body) \
                if re.search(r"\b(BRA|BSSY)\b", body) else body
            out.append(f'"0x{base + o:x}","{text}","0","32"')
    return "\n".join(out) + "\n"


def test_a_source_page_reads_as_the_binary_s_sass(nvdisasm_summary):
    found = source_page_sass(_source_page(3), {0: "sm_90", 2: "sm_90"}, "x.ncu-rep")
    assert sorted(found) == [0, 2]
    for summary in found.values():
        assert summary.model_dump(exclude={"disassembler"}) == nvdisasm_summary.model_dump(exclude={"disassembler"})
    with pytest.raises(RooflineError, match=r"x\.ncu-rep: the source page holds SASS for 3 kernels, not for kernel IDs 0-4"):
        source_page_sass(_source_page(3), {0: "sm_90", 4: "sm_90"}, "x.ncu-rep")


def test_a_profile_beside_its_report_takes_the_source_page(tmp_path, monkeypatch, nvdisasm_summary):
    csv_file = tmp_path / "user.csv"
    csv_file.write_text(USER.read_text())
    (tmp_path / "user.ncu-rep").write_bytes(b"\0")
    monkeypatch.setattr("roofline._ncu_report.report_count", lambda report: None)
    page = _source_page(5)
    monkeypatch.setattr("roofline._ncu.report_sass",
                        lambda report, archs: (source_page_sass(page, archs, str(report)), "user.ncu-rep (page)"))
    profile = roofline.load_ncu(csv_file)
    assert all(k.sass == nvdisasm_summary.model_copy(update={"disassembler": k.sass.disassembler})
               for k in profile.kernels)
    assert "SASS for 5 of 5 kernels: user.ncu-rep (page)" in profile.checks


def test_without_sass_the_prediction_states_its_assumption():
    report = roofline.profile_report(USER)
    for row in report.kernels:
        assert sum("no SASS" in n for n in row.notes) == 1
        assert any("one global load round trip per thread assumed" in n for n in row.notes)
    assert any(c.startswith("SASS for 0 of 5 kernels: no SASS: no user_kernels.raw.ncu-rep") for c in report.checks)


@pytest.mark.skipif(shutil.which("nvcc") is None and not occupancy.COMPILERS, reason="no CUDA compiler here")
def test_a_named_binary_gives_each_kernel_its_sass_and_predict_uses_it():
    source = ROOT / "benchmarks" / "measure_kernels.cu"  # the profiled program's kernels (docs/measure.md)
    profile = roofline.load_ncu(USER, binary=source)
    expected = occupancy.all_kernel_resources(source, arch="sm_90")
    for k in profile.kernels:
        assert k.sass == expected[k.name].sass
    report = roofline.profile_report(profile)
    block_sum = next(r for r in report.kernels if r.kernel.name == "block_sum")
    assert any(n.startswith("SASS from measure_kernels.cu") and "1 LDG.E in flight per thread" in n
               for n in block_sum.notes)
    # the loads per thread Nsight counts, one in flight at a time (the SASS's loop): more round trips,
    # longer. The count is the one the profile's instructions imply (about 253 trips of the grid-stride
    # loop, 258 floats a thread of the DRAM bytes): a count far below it would be other loops' instructions
    # (`counted_load_trips`)
    counted = block_sum.kernel.model_copy(update={"measured": block_sum.kernel.measured.model_copy(
        update={"global_load_instructions": 256 * block_sum.kernel.blocks * 8})})
    slower = roofline.profile_report(profile.model_copy(update={"kernels": (counted,)})).kernels[0]
    assert any("256 global loads per thread (Nsight's count): 256 round trips" in n for n in slower.notes)
    # the trips term reads the same waits from the instruction count: never faster with the load count
    assert slower.predicted_seconds >= block_sum.predicted_seconds
    unknown = counted.model_copy(update={"sass": None})
    all_in_flight = roofline.profile_report(profile.model_copy(update={"kernels": (unknown,)})).kernels[0]
    assert any("all 256 global loads per thread (Nsight's count) assumed in flight at once" in n
               for n in all_in_flight.notes)
    assert all_in_flight.predicted_seconds < slower.predicted_seconds


@pytest.mark.parametrize("gpu", ["H200", "H100 SXM"])
def test_the_nsight_launch_counts_the_round_trip_once(gpu):
    """With Nsight's empty-kernel duration, the smallest kernel predicts as that duration (before:
    2.7-3.2 us of CUDA-event launch cost on top of the round trip, 3.3 us against Nsight's 1.4)."""
    cal = roofline.calibration(gpu).model_copy(update={"nsight_empty_kernel_seconds": 1.4e-6})
    nsight, line = roofline.nsight_calibration(gpu, cal)
    assert "Nsight's empty-kernel duration 1.40 us less the memory round trip" in line
    smallest = roofline.Kernel(name="smallest", flops=0, dram_bytes=128,
                               launch=roofline.measured_launch(1, 32, registers_per_thread=16))
    assert roofline.predict(gpu, smallest, calibration=nsight).seconds == pytest.approx(1.4e-6, rel=1e-9)
    assert roofline.predict(gpu, smallest, calibration=cal).seconds > 3.0e-6
    without = roofline.calibration(gpu).model_copy(update={"nsight_empty_kernel_seconds": None})
    unchanged, line = roofline.nsight_calibration(gpu, without)
    assert unchanged == without and "no Nsight empty-kernel duration" in line


def test_profile_report_uses_the_nsight_launch():
    packaged = roofline.calibration("H200")
    assert packaged.nsight_empty_kernel_seconds is not None  # measured by gpuroof validate, in the facts
    before = roofline.profile_report(USER, calibration=packaged.model_copy(update={"nsight_empty_kernel_seconds": None}))
    cal = packaged.model_copy(update={"nsight_empty_kernel_seconds": 1.4e-6})
    after = roofline.profile_report(USER, calibration=cal)
    assert [k.predicted_seconds for k in roofline.profile_report(USER).kernels] != [
        k.predicted_seconds for k in before.kernels]  # the default is Nsight's launch
    # the model's smallest kernel without its launch: one warp's memory round trip
    smallest = roofline.predict("H200", roofline.Kernel(name="s", flops=0, dram_bytes=128,
                                                         launch=roofline.measured_launch(1, 32, registers_per_thread=16)),
                                calibration=packaged)
    body = smallest.seconds - smallest.launch_seconds
    assert 0.5e-6 < body < 0.7e-6
    for a, b in zip(before.kernels, after.kernels):
        assert b.predicted_seconds == pytest.approx(a.predicted_seconds - (2.72e-6 - (1.4e-6 - body)), abs=2e-8)
    assert any(f"launch cost {(1.4e-6 - body) * 1e6:.2f} us" in c for c in after.checks)


@pytest.mark.parametrize("stdout, code, said", [
    ("==PROF== nothing here\n", 0, "no SASS: x.ncu-rep: the source page holds SASS for 0 kernels"),
    ("", 1, "no SASS: ncu could not print x.ncu-rep's source page"),
], ids=["another-layout", "ncu-fails"])
def test_a_source_page_that_cannot_be_read_leaves_the_profile_without_sass_and_says_why(monkeypatch, tmp_path,
                                                                                        stdout, code, said):
    import subprocess

    from roofline import _ncu_sass

    monkeypatch.setattr(_ncu_sass.shutil, "which", lambda name: "/opt/ncu/ncu")
    monkeypatch.setattr(_ncu_sass.subprocess, "run",
                        lambda command, **kw: subprocess.CompletedProcess(command, code, stdout, "==ERROR== x"))
    sass, why = _ncu_sass.report_sass(tmp_path / "x.ncu-rep", {0: "sm_90"})
    assert sass is None and why.startswith("no SASS: ") and said.removeprefix("no SASS: ") in why
