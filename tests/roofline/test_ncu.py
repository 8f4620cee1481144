"""roofline.load_ncu on real Nsight Compute exports (tests/data/ncu, taken on an H200), and
its errors on files that are not such exports."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import roofline
from roofline import RooflineError
from roofline._ncu import short_kernel_name
from roofline._ncu_metrics import unit_factor

DATA = Path(__file__).resolve().parents[1] / "data" / "ncu"
TORCH = DATA / "torch_roofline.raw.csv"
TORCH_BASE = DATA / "torch_roofline.raw_base.csv"
SOL = DATA / "torch_sol.raw.csv"
SUITE = DATA / "suite.raw_base.csv"
USER = DATA / "user_kernels.raw.csv"


@pytest.fixture(scope="module")
def torch_profile():
    return roofline.load_ncu(TORCH)


@pytest.mark.parametrize(
    "unit, factor",
    [("", 1), ("%", 0.01), ("byte", 1), ("Kbyte", 1e3), ("Mbyte", 1e6), ("Gbyte/s", 1e9), ("Tbyte/s", 1e12),
     ("Gbyte/second", 1e9), ("ns", 1e-9), ("usecond", 1e-6), ("msecond", 1e-3), ("Ghz", 1e9), ("hz", 1),
     ("cycle/nsecond", 1e9), ("Kbyte/block", 1e3), ("register/thread", 1), ("inst/cycle", 1), ("SM", 1)],
    ids=lambda v: str(v),
)
def test_units(unit, factor):
    # Nsight scales by powers of 1000 (its "Kbyte" is 1000 bytes: 233.472 Kbyte is the
    # H200's 228 KiB shared-memory configuration in torch_roofline.raw.csv).
    assert unit_factor(unit) == pytest.approx(factor, rel=1e-15)


@pytest.mark.parametrize("unit", ["furlong", "Kbyte/fortnight", "Xbyte"])
def test_unknown_units(unit):
    # The message lists what is known (the house rule: the allowed values beside the value).
    with pytest.raises(ValueError, match=r"not known; known: a count \(byte, hz, .*\) with an optional prefix "
                                         r"\(K, M, G, T, P\), a time \(ns, .*usecond.*\)"):
        unit_factor(unit)


@pytest.mark.parametrize(("metric", "unit", "said"), [
    ("gpu__time_duration.sum", "fortnight", "unit 'fortnight'"),
    ("dram__bytes.sum.per_second", "Gbyte/fortnight", "unit denominator 'fortnight'"),
], ids=["duration", "a rate's denominator"])
def test_unknown_unit_in_an_export_names_the_metric(tmp_path, metric, unit, said):
    # It read "gpu__time_duration.sum has unit 'fortnight' is not known": two sentences joined.
    lines = USER.read_text(encoding="utf-8").splitlines(keepends=True)
    header = lines[0].rstrip("\n").split('","')
    units = lines[1].rstrip("\n").split('","')
    units[header.index(metric)] = unit
    path = _write(tmp_path, "edited.csv", lines[0] + '","'.join(units) + "\n" + "".join(lines[2:]))
    with pytest.raises(RooflineError, match=rf"^{re.escape(str(path))}: {re.escape(metric)}: {said} is not known; known: "):
        roofline.load_ncu(path)


@pytest.mark.parametrize("metric", ["gpu__time_duration.sum", "dram__bytes.sum.per_second"])
def test_a_negative_figure_in_an_export_names_the_metric(tmp_path, metric):
    # It read "l1_bytes=-16638194.56 must be finite and >= 0": neither the file nor the cell.
    lines = USER.read_text(encoding="utf-8").splitlines(keepends=True)
    header = lines[0].rstrip("\n").split('","')
    row = lines[2].rstrip("\n").split('","')
    row[header.index(metric)] = "-" + row[header.index(metric)].lstrip("-")
    path = _write(tmp_path, "edited.csv", lines[0] + lines[1] + '","'.join(row) + "\n" + "".join(lines[3:]))
    with pytest.raises(RooflineError, match=rf"^{re.escape(str(path))}: {re.escape(metric)}='-[\d.,]+' is negative"):
        roofline.load_ncu(path)


@pytest.mark.parametrize(
    "name, short",
    [
        ("void at::native::vectorized_elementwise_kernel<4, at::native::AUnaryFunctor<float, float, float, "
         "at::native::binary_internal::MulFunctor<float>>, std::array<char *, 2>>(int, T2, T3)",
         "vectorized_elementwise_kernel"),
        ("void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128, 128, 4, false, false, "
         "cutlass::bfloat16_t, Flash_kernel_traits<64, 128, 128, 4, cutlass::bfloat16_t>>, false, true>(Flash_fwd_params)",
         "flash_fwd_kernel"),
        ("void at::<unnamed>::cunn_SoftMaxForwardReg<float, float, float, at::<unnamed>::SoftMaxForwardEpilogue, "
         "long, 16>(T2 *, const T1 *, T5)", "cunn_SoftMaxForwardReg"),
        ("scaled_add", "scaled_add"),
        ("void (anonymous namespace)::k<(int)3>(float *)", "k"),
        ("_Z6saxpy4ifPK6float4PS_", "saxpy4"),
        ("_ZN2at6native13reduce_kernelILi512ELi1EEEvT1_", "reduce_kernel"),
    ],
    ids=["aten", "flash", "unnamed", "extern-c", "anonymous", "mangled", "mangled-nested"],
)
def test_short_kernel_names(name, short):
    assert short_kernel_name(name) == short


def test_torch_profile_names_ranges_and_launches(torch_profile):
    ks = torch_profile.kernels
    assert torch_profile.format == "csv" and len(ks) == 12
    # the NVTX ranges torch_workload.py pushes, in its order (the convolution adds a bias kernel,
    # x * 2.0 + y is two kernels)
    assert [k.nvtx_range for k in ks] == [
        "matmul_bf16", "matmul_fp32", "matmul_fp64", "conv2d_fp16", "conv2d_fp16", "flash_attention",
        "elementwise_mul_add", "elementwise_mul_add", "reduction_sum", "layer_norm", "softmax", "triton_scaled_add"]
    flash = ks[5]
    assert flash.name == "flash_fwd_kernel" and flash.label == "flash_fwd_kernel [flash_attention]"
    # 4 x 16 heads x 2048 / 128 rows per block = 1024 blocks of 4 warps
    assert flash.grid == (16, 4, 16) and flash.block == (128, 1, 1) and flash.blocks == 1024
    nvjet = ks[0]
    assert nvjet.cluster == (2, 1, 1) and ks[1].cluster is None
    assert nvjet.registers_per_thread == 168 and nvjet.dynamic_shared_memory == 213188
    assert nvjet.shared_memory_config == 233472 and nvjet.driver_shared_memory == 1024
    assert all(k.arch == "sm_90" and k.device_name == "NVIDIA H200" and k.sm_count == 132 for k in ks)
    assert all(k.missing == {} for k in ks)


@pytest.mark.parametrize(
    "index, precision, flops",
    [
        (0, "bf16_tensor", 2 * 4096**3),  # a16 @ b16, 4096^3
        (1, "fp32", 2 * 2048**3),  # a32 @ b32 without TF32
        (2, "fp64_tensor", 2 * 1024**3),  # a64 @ b64 on DMMA
        (3, "fp16_tensor", 2 * 32 * 56 * 56 * 128 * 64 * 9),  # 3x3 convolution, 64 -> 128 channels
        (6, "fp32", 2**26),  # x * 2.0: one FMUL per element
        (7, "fp32", 2 * 2**26),  # (x * 2) + y as one FFMA (add with alpha)
        (11, "fp32", 2 * 2**26),  # Triton's alpha * x + y
    ],
    ids=["bf16-gemm", "fp32-gemm", "fp64-gemm", "conv", "mul", "add", "triton"],
)
def test_flops_as_nsight_counts_them(torch_profile, index, precision, flops):
    k = torch_profile.kernels[index]
    assert k.precision == precision
    # the CSV prints rates and clocks rounded: agreement to 5e-4, not exactly (the .ncu-rep
    # route read 67108864 exactly for vector_add on the device)
    assert k.flops[precision] == pytest.approx(flops, rel=5e-4)


def test_default_and_base_units_read_the_same(torch_profile):
    base = roofline.load_ncu(TORCH_BASE)
    for a, b in zip(torch_profile.kernels, base.kernels):
        assert (a.grid, a.block, a.registers_per_thread, a.shared_memory_config) == (
            b.grid, b.block, b.registers_per_thread, b.shared_memory_config)
        for field in ("dram_bytes", "l2_bytes", "l1_bytes"):
            # scaled exports print 6 significant digits, base exports integers or 2 decimals
            assert getattr(a, field) == pytest.approx(getattr(b, field), rel=2e-3), field
        for field in ("duration_seconds", "sm_clock_hz", "memory_clock_hz", "theoretical_occupancy",
                      "achieved_occupancy"):
            assert getattr(a.measured, field) == pytest.approx(getattr(b.measured, field), rel=2e-3), field


def test_bytes_from_rates_match_the_direct_counters():
    suite = roofline.load_ncu(SUITE)
    import csv

    rows = list(csv.reader(SUITE.open()))
    header = rows[0]
    for k, row in zip(suite.kernels, rows[2:]):
        value = {h: row[i].replace(",", "") for i, h in enumerate(header)}
        seconds = float(value["gpu__time_duration.sum"]) * 1e-9
        from_rate = float(value["dram__bytes.sum.per_second"]) * seconds
        # load_ncu takes the direct counters when present; the rate times the duration agrees
        assert k.dram_bytes == float(value["dram__bytes_read.sum"]) + float(value["dram__bytes_write.sum"])
        assert from_rate == pytest.approx(k.dram_bytes, rel=1e-3, abs=1e4)
        assert k.measured.l2_sector_bytes == 32 * float(value["lts__t_sectors_srcunit_tex.sum"])


def test_suite_copy_moves_its_bytes():
    copy = roofline.load_ncu(SUITE).kernels[0]
    n = 2**26
    assert copy.name == "copy" and copy.grid == (n // 256, 1, 1)
    # 4 bytes read and 4 written per element; DRAM writes still in L2 when the kernel ends
    # are not counted, so DRAM is a little under 8n
    assert 0.9 * 8 * n < copy.dram_bytes <= 8 * n
    assert copy.measured.l2_sector_bytes == pytest.approx(8 * n, rel=0.01)


def test_missing_sections_leave_fields_empty_and_say_so():
    sol = roofline.load_ncu(SOL)
    k = sol.kernels[0]
    assert k.flops == {} and k.l2_bytes is None and k.measured.achieved_occupancy is None
    assert k.measured.duration_seconds is not None and k.measured.theoretical_occupancy == pytest.approx(0.1875)
    assert k.missing["flops.fp32"] == "SpeedOfLight_HierarchicalSingleRooflineChart"
    assert k.missing["flops.bf16_tensor"] == "SpeedOfLight_HierarchicalTensorRooflineChart"
    assert k.missing["achieved_occupancy"] == "Occupancy"
    # SpeedOfLight's DRAM breakdown holds the bytes: the same launch of the same program,
    # profiled again with the roofline sections, moved the same bytes by dram__bytes
    assert "dram_bytes" not in k.missing
    assert k.dram_bytes == pytest.approx(roofline.load_ncu(TORCH).kernels[0].dram_bytes, rel=0.01)


def test_prof_lines_and_program_output_before_the_table_are_skipped(tmp_path):
    text = TORCH.read_text()
    path = tmp_path / "printed.csv"
    path.write_text("==PROF== Connected to process 1\nsome program output\n" + text + "==PROF== Disconnected\n")
    assert len(roofline.load_ncu(path).kernels) == 12


def test_matching(torch_profile):
    assert [k.name for k in torch_profile.matching("elementwise").kernels] == [
        "elementwise_kernel", "vectorized_elementwise_kernel", "vectorized_elementwise_kernel"]
    assert len(torch_profile.matching("^matmul").kernels) == 3  # by NVTX range
    with pytest.raises(RooflineError, match="matches no kernel"):
        torch_profile.matching("nope")
    with pytest.raises(RooflineError, match="not a regular expression"):
        torch_profile.matching("(")


def _write(tmp_path, name, content):
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return path


@pytest.mark.parametrize(("call", "message"), [
    (lambda folder: roofline.load_ncu(folder), r"path='.*' is a folder, not a file: give the raw-page CSV export"),
    (lambda folder: roofline.load_ncu(USER, binary=folder), r"binary='.*' is a folder, not a file: give the program"),
], ids=["profile", "binary"])
def test_a_folder_is_named_a_folder(tmp_path, call, message):
    # A folder that exists was reported as "no such file".
    with pytest.raises(RooflineError, match=message):
        call(tmp_path)


def test_errors_name_the_file(tmp_path, monkeypatch):
    lines = TORCH.read_text().splitlines(keepends=True)
    truncated = "".join(lines[:-1]) + lines[-1][: len(lines[-1]) // 2]
    cases = {
        "missing.csv": (None, "no such file"),
        "empty.csv": ("", "is empty"),
        "nsys.csv": ('"Time (%)","Total Time (ns)","Instances","Name"\n"50.0","100","2","kernel"\n',
                     "not an Nsight Compute CSV export"),
        "details.csv": ((DATA / "details_page_head.csv").read_text(), "--page details"),
        "truncated.csv": (truncated, "line 14 has"),
        "header_only.csv": ("".join(lines[:2]), "holds no profiled kernel"),
        "binary.csv": (b"\x89PNG\r\n\x1a\n\x00\x00\xff\xfe", "not a text file"),
    }
    for name, (content, message) in cases.items():
        path = tmp_path / name if content is None else _write(tmp_path, name, content)
        with pytest.raises(RooflineError, match=message) as info:
            roofline.load_ncu(path)
        assert name in str(info.value)
    bad_unit = lines[0] + lines[1].replace('"Ghz"', '"Gfurlong"', 1) + "".join(lines[2:])
    with pytest.raises(RooflineError, match=r"bad_unit\.csv: .* unit 'Gfurlong' is not known"):
        roofline.load_ncu(_write(tmp_path, "bad_unit.csv", bad_unit))
    monkeypatch.setattr("roofline._ncu_report.ncu_report_module", lambda: None)
    with pytest.raises(RooflineError, match=r"x\.ncu-rep needs NVIDIA's ncu_report"):
        roofline.load_ncu(_write(tmp_path, "x.ncu-rep", b"\x00\x01"))


def test_ncu_report_route_with_a_recorded_report(monkeypatch, tmp_path):
    """The .ncu-rep route through a stand-in for ncu_report built from the CSV's values
    (on the device, the real module gave the same fields: tests/data/ncu/README.md)."""
    import csv

    rows = list(csv.reader(SUITE.open()))
    header, units, body = rows[0], rows[1], rows[2:]

    class Action:
        def __init__(self, row):
            self.values = {h: (row[i], units[i]) for i, h in enumerate(header)}

        def metric_names(self):
            # the raw page's metrics: Nsight's names, and inst_executed (smsp__inst_executed.sum)
            return [h for h in header if "__" in h or h == "inst_executed"]

        def metric_by_name(self, name):
            raw, unit = self.values[name]
            try:
                value = float(raw.replace(",", ""))
            except ValueError:
                value = raw
            return type("Metric", (), {"value": lambda self: value})()

        def name(self, base):
            return self.values["Kernel Name"][0]

        def nvtx_state(self):
            raise RuntimeError("no NVTX")

    class Module:
        IAction = type("IAction", (), {"NameBase_DEMANGLED": 1})

        @staticmethod
        def load_report(path):
            actions = [Action(r) for r in body]
            profiled = type("Range", (), {"num_actions": lambda self: len(actions),
                                          "action_by_idx": lambda self, i: actions[i]})()
            return type("Context", (), {"num_ranges": lambda self: 1, "range_by_idx": lambda self, i: profiled})()

    monkeypatch.setattr("roofline._ncu_report.ncu_report_module", lambda: Module)
    rep = roofline.load_ncu(_write(tmp_path, "suite.ncu-rep", b"\x00"))  # the stand-in reads the CSV
    csv_profile = roofline.load_ncu(SUITE)
    assert rep.format == "ncu-rep" and len(rep.kernels) == 19
    for a, b in zip(rep.kernels, csv_profile.kernels):
        assert a.model_dump(exclude={"id", "sass_source"}) == b.model_dump(exclude={"id", "sass_source"})
