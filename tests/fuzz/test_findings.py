"""One test per finding of issue 13 (and of this suite's own runs): each bad input, what it
did, and the one-line refusal or right answer it gets now."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

import occupancy
import roofline
import roofline._export  # a private module: loaded by name (roofline loads its names lazily)
import validate
from validate.checks import _resources
from validate.device import _clocks, _compile, _timing
from validate.probes import _calibration, _hostlink, _latency, _references
from validate.run import _multi
from validate.suite import _kernels
from validate.user_kernel import _kernel_args
from gpuroof import main
from roofline import memory, models


def cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err.strip()


def one_line(err: str) -> str:
    lines = err.splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


# ------------------------------------------------------------------ tracebacks


@pytest.mark.parametrize("max_threads", [128, 64], ids=["128", "64"])
def test_cliffs_with_a_block_above_the_kernels_max_threads(max_threads, capsys):
    """IndexError in occupancy.cliffs when threads_per_block > max_threads_per_block."""
    kw = dict(threads_per_block=256, registers_per_thread=40, max_threads_per_block=max_threads)
    c = occupancy.cliffs("sm_90", **kw)
    assert c.threads_per_block.active_blocks_per_sm == occupancy.calculate("sm_90", **kw).active_blocks_per_sm == 0
    assert c.threads_per_block.gain == 256 - max_threads
    code, _, _ = cli(capsys, "occupancy", "--arch", "sm_90", "--threads", "256", "--registers", "40",
                     "--max-threads", str(max_threads))
    assert code == 0


@pytest.mark.parametrize("option", ["--block", "--grid"])
def test_zero_block_or_grid(option, capsys):
    """ZeroDivisionError from `predict --block 0` / `--grid 0`."""
    code, _, err = cli(capsys, "predict", "--model", "copy", "--param", "n=1024", option, "0")
    assert code == 2 and f"{option[2:]}.x=0 is below the minimum of 1" in one_line(err)


@pytest.mark.parametrize("grid", [(0, 1, 1), (1, 0, 1), (-3, 1, 1)], ids=["x0", "y0", "negative"])
def test_launch_refuses_an_empty_grid_from_python(grid):
    with pytest.raises(ValueError, match="below the minimum of 1"):
        occupancy.Launch(grid=grid, block=(256, 1, 1))


def test_sizes_too_large_are_refused_up_front_naming_the_parameter(capsys):
    """numpy MemoryError from `roofline --model copy --param n=2**40`."""
    code, _, err = cli(capsys, "roofline", "--model", "copy", "--param", "n=1099511627776")
    # n is an int64 in main's models; the grid it needs is what CUDA refuses
    assert code == 2 and "n=1099511627776 needs grid.x=4294967296 blocks" in one_line(err)


def test_replotting_a_chart_holding_infinity(tmp_path, capsys):
    """`plot --from` a chart holding inf: a traceback from the plot's axis limits."""
    path = tmp_path / "chart.json"
    roofline.chart.save_chart(roofline.chart.roofline_chart("H100-SXM", [models.copy(1024)]), path)
    data = json.loads(path.read_text())
    data["ceilings"][0]["value"] = math.inf
    path.write_text(json.dumps(data))  # json writes Infinity
    code, _, err = cli(capsys, "plot", "--from", str(path), "-o", str(tmp_path / "x.png"))
    assert code == 2 and "chart.json" in one_line(err) and "finite" in err


# ------------------------------------------------------------------ accepted when they should not be


@pytest.mark.parametrize("flops", ["inf", "1e400", "nan", "-inf"])
def test_infinite_flops_are_refused(flops, capsys):
    """`--flops inf` gave 'time lower bound inf us'."""
    code, _, err = cli(capsys, "roofline", "--flops", flops, "--bytes", "1")
    assert code == 2 and "flops=" in one_line(err) and "finite" in err


@pytest.mark.parametrize("grid,axis,limit", [("99999999999", "x", 2**31 - 1)], ids=["x"])
def test_grid_past_cudas_limit(grid, axis, limit, capsys):
    """`--grid 99999999999` predicted 67 s for a launch CUDA refuses."""
    code, _, err = cli(capsys, "predict", "--model", "copy", "--param", "n=1024", "--grid", grid)
    assert code == 2 and f"grid.{axis}={grid} exceeds the maximum of {limit}" in one_line(err)


@pytest.mark.parametrize("grid,block,match", [
    ((1, 65536, 1), (32, 1, 1), r"grid\.y=65536 exceeds the maximum of 65535"),
    ((1, 1, 65536), (32, 1, 1), r"grid\.z=65536 exceeds the maximum of 65535"),
    ((1, 1, 1), (1, 1, 65), r"block\.z=65 exceeds the maximum of 64"),
    ((1, 1, 1), (1025, 1, 1), r"block\.x=1025 exceeds the maximum of 1024"),
    ((1, 1, 1), (64, 32, 1), r"2048 threads; the maximum is 1024"),
], ids=["grid-y", "grid-z", "block-z", "block-x", "threads"])
def test_hardware_limits_are_input_checks(grid, block, match):
    # One launch type checks them (occupancy.Launch).
    with pytest.raises(ValueError, match=match):
        occupancy.Launch(grid=grid, block=block)
    with pytest.raises(ValueError, match=match):
        occupancy.Launch(grid=grid, block=block)


@pytest.mark.parametrize("counts", [["--flops", "5"], ["--l2-bytes", "5"], ["--bytes", "1", "--name", "k"]],
                         ids=["flops", "l2-bytes", "bytes-name"])
def test_counts_next_to_a_model_are_an_error(counts, capsys):
    """`--flops/--l2-bytes` were silently ignored next to `--model`."""
    code, _, err = cli(capsys, "roofline", "--model", "copy", "--param", "n=1024", *counts)
    # --bytes is the short spelling of --dram-bytes
    named = {"--bytes": "--dram-bytes"}.get(counts[0], counts[0])
    assert code == 2 and named in one_line(err) and "--model copy" in err


def test_param_without_a_model_is_an_error(capsys):
    code, _, err = cli(capsys, "roofline", "--flops", "1", "--bytes", "1", "--param", "n=5")
    assert code == 2 and "--param" in one_line(err)


def test_predict_and_occupancy_agree_on_the_opt_in(capsys):
    """`predict --dynamic-smem 100000` silently assumed the kernel opts in; `occupancy` says 0 blocks.
    Now both refuse it without the kernel's attribute, and both take it with --max-dynamic-smem."""
    code, _, err = cli(capsys, "predict", "--model", "copy", "--param", "n=1048576", "--dynamic-smem", "100000")
    assert code == 2 and "max_dynamic_shared_memory=49152" in one_line(err) and "cudaFuncSetAttribute" in err
    code, _, _ = cli(capsys, "occupancy", "--arch", "sm_90", "--threads", "256", "--registers", "32",
                     "--dynamic-smem", "100000")
    assert code == 0
    code, out, _ = cli(capsys, "predict", "--model", "copy", "--param", "n=1048576", "--dynamic-smem", "100000",
                       "--max-dynamic-smem", "100000")
    assert code == 0 and "predicted time" in out
    launch = models.copy(1 << 20).launch.model_copy(update={"dynamic_shared_memory": 100000})
    with pytest.raises(roofline.RooflineError, match="max_dynamic_shared_memory=49152"):
        roofline.predict("H100-SXM", models.copy(1 << 20), launch)


def test_a_calibration_for_another_gpu_is_refused_naming_both(capsys):
    """A calibration measured on an H200 was applied to the default H100 without a word."""
    h200 = roofline.calibration("H200")
    with pytest.raises(roofline.RooflineError, match=r"calibration is for gpu='H200', not 'H100-SXM'"):
        roofline.predict("H100-SXM", models.copy(1 << 20), calibration=h200)
    code, _, err = cli(capsys, "predict", "--model", "copy", "--param", "n=1024",
                       "--calibration", "docs/results/h200/calibration.json")
    assert code == 2 and "'H200'" in one_line(err) and "'H100-SXM'" in err
    assert roofline.predict("H200", models.copy(1 << 20), calibration=h200).seconds > 0
    generic = h200.model_copy(update={"gpu": "generic"})
    assert roofline.predict("H100-SXM", models.copy(1 << 20), calibration=generic).seconds > 0


def test_a_gpu_family_lists_its_members(capsys):
    """`gpuroof gpu A100` silently picked one of four A100s."""
    # A prefix several entries share is refused with the candidates; the database's own alias
    # ("A100" for the A100-SXM4-40GB) resolves, and the output names the entry it is.
    code, _, err = cli(capsys, "gpu", "A100-SXM4")
    line = one_line(err)
    assert code == 2 and all(n in line for n in ("A100-SXM4-40GB", "A100-SXM4-80GB"))
    code, out, _ = cli(capsys, "gpu", "A100")
    assert code == 0 and "A100-SXM4-40GB" in out


# ------------------------------------------------------------------ unclear messages


def test_elements_per_thread_zero_is_one_line(capsys):
    """`--elements-per-thread 0` printed a 4-line pydantic dump with a URL."""
    code, _, err = cli(capsys, "predict", "--model", "copy", "--param", "n=1024", "--elements-per-thread", "0")
    line = one_line(err)
    assert code == 2 and "elements_per_thread=0" in line and "http" not in line


def test_a_broken_calibration_names_the_file(tmp_path, capsys):
    """A broken calibration JSON said 'Expecting property name' without naming the file."""
    path = tmp_path / "cal.json"
    path.write_text("{broken")
    code, _, err = cli(capsys, "predict", "--model", "copy", "--param", "n=1024", "--gpu", "H200",
                       "--calibration", str(path))
    assert code == 2 and str(path) in one_line(err) and "not valid JSON" in err


@pytest.mark.parametrize("spec,arch", [("H100", "sm_90"), ("H200", "sm_90"), ("A100", "sm_80"), ("RTX 4090", "sm_89"),
                                       ("L4", "sm_89"), ("B200", "sm_100")], ids=str)
def test_a_gpu_name_for_arch_suggests_its_architecture(spec, arch, capsys):
    """`--arch H100` suggested sm_100; an H100 is sm_90."""
    code, _, err = cli(capsys, "occupancy", "--arch", spec, "--threads", "256", "--registers", "32")
    line = one_line(err)
    assert code == 2 and f"--arch {arch}" in line
    with pytest.raises(occupancy.OccupancyError) as refused:
        occupancy.architecture(spec)
    assert "did you mean sm_1" not in str(refused.value)


@pytest.mark.parametrize("value", ["-1e9", "-1", "-inf", "-1.5e-3"])
def test_negative_numbers_are_values_not_flags(value, capsys):
    """`--flops -1e9` was read as a flag ('expected one argument')."""
    code, _, err = cli(capsys, "roofline", "--flops", value, "--bytes", "1")
    line = one_line(err)
    assert code == 2 and "flops=" in line and "expected one argument" not in line


# ------------------------------------------------------------------ the independent fuzz run's findings


@pytest.mark.parametrize("dynamic", [50_000, 60_000, 120_000], ids=str)
def test_cliffs_agree_with_calculate_above_the_max_dynamic_attribute(dynamic):
    """cliffs said 1 block where calculate said 0 (dynamic shared memory above the kernel's
    max attribute) on 140 of 692 valid launches."""
    kw = dict(threads_per_block=256, registers_per_thread=32, dynamic_shared_memory=dynamic)
    expected = occupancy.calculate("sm_90", **kw).active_blocks_per_sm
    c = occupancy.cliffs("sm_90", **kw)
    assert expected == 0
    for resource in ("registers", "shared_memory", "threads_per_block", "barriers"):
        assert getattr(c, resource).active_blocks_per_sm == expected
    assert c.shared_memory.gain == dynamic - (48 * 1024)


@pytest.mark.parametrize("cut", ["line", "mid-line", "header-only"])
def test_load_chart_refuses_a_truncated_csv(cut, tmp_path):
    """load_chart read a CSV cut at a line boundary as a smaller valid chart (15 of 15)."""
    path = tmp_path / "chart.csv"
    roofline.chart.save_chart(roofline.chart.roofline_chart("H100-SXM", [models.copy(1024), models.matmul_tiled(64)]), path)
    text = path.read_text()
    lines = text.splitlines(keepends=True)
    cuts = {"line": "".join(lines[:-3]), "mid-line": text[: len(text) - 40], "header-only": lines[0]}
    path.write_text(cuts[cut])
    with pytest.raises(roofline.RooflineError, match="chart.csv"):
        roofline.chart.load_chart(path)


def test_saved_charts_still_load(tmp_path):
    chart = roofline.chart.roofline_chart("H100-SXM", [models.copy(1024)])
    for suffix in (".csv", ".json"):
        assert roofline.chart.load_chart(roofline.chart.save_chart(chart, tmp_path / f"c{suffix}")) == chart


@pytest.mark.parametrize("call,match", [
    (lambda: models.aos(2**70), r"n=1180591620717411303424 needs grid.x=\d+ blocks; CUDA allows at most 2147483647"),
    (lambda: memory.warp_addresses(offset=2**62, element_bytes=8), r"past the 64-bit address range"),
    (lambda: memory.warp_transactions([2**70]), r"past the 64-bit address range"),
    (lambda: models.matmul_naive(2**20, 2**20), r"m=1048576 x k=1048576"),
    (lambda: models.blur(100, 100, radius=1000), r"radius=1000 must be <= 16"),
    (lambda: roofline.divergence.boundary_divergence(2**70, 256), r"extent\[0\]=.* needs grid.x"),
    (lambda: roofline.transfer.transfer_time(roofline.gpu("H200"), 10**400), r"bytes="),
    (lambda: roofline.transfer.AccessPolicyWindow(num_bytes=math.inf, hit_ratio=1), r"num_bytes=inf"),
], ids=["aos-2^70", "warp-addresses-2^62", "warp-transactions-2^70", "matmul-too-big", "blur-radius",
        "divergence-extent", "transfer-10^400", "l2-window-inf"])
def test_silent_overflows_are_refused(call, match):
    """aos(2**70).load_bytes was 1024 and warp_addresses(offset=2**62) wrapped to [0, 8, ...]."""
    with pytest.raises(roofline.RooflineError, match=match):
        call()


def test_a_custom_architecture_cannot_overflow_its_tables(tmp_path):
    """max_barriers_per_sm=2**31 gave -2147483648 active blocks."""
    data = occupancy.architecture("sm_90").model_dump()
    path = tmp_path / "arch.json"
    path.write_text(json.dumps({**data, "max_barriers_per_sm": 2**31}))
    with pytest.raises(occupancy.OccupancyError, match=r"arch.json.*max_barriers_per_sm"):
        occupancy.load_architecture(path)
    for field, value in (("shared_memory_per_sm", 2**40), ("max_registers_per_thread", 2**31),
                         ("max_threads_per_block", 2**20)):
        with pytest.raises(ValueError, match=field):
            occupancy.Architecture(**{**data, field: value})


@pytest.mark.parametrize("build", [
    lambda: roofline.Kernel(flops=math.inf, dram_bytes=1),
    lambda: roofline.Kernel(flops=1, dram_bytes=1, l2_bytes=math.nan),
    lambda: roofline.custom_gpu(name="g", compute_capability="9.0", sm_count=1, boost_clock_hz=1e9,
                                dram_bytes_per_second=1e9, peak_overrides={"fp32": math.inf}),
    lambda: roofline.Calibration(**{**roofline.calibration("H200").model_dump(), "idle_latency_seconds": math.inf}),
    lambda: roofline.chart.Ceiling(name="fp32", kind="compute", value=math.inf),
], ids=["counts-flops", "counts-l2-nan", "gpu-peak", "calibration", "ceiling"])
def test_infinities_are_refused_where_they_enter(build):
    """inf was accepted in Kernel counts, custom GPU peaks and Calibration: predict returned NaN seconds."""
    with pytest.raises(ValueError, match="finite"):
        build()


def test_predict_never_returns_nan():
    for kernel in (models.copy(1 << 20), roofline.Kernel(flops=0, dram_bytes=1e-300)):
        launch = models.copy(1 << 20).launch
        p = roofline.predict("H100-SXM", kernel, launch)
        assert all(math.isfinite(v) for v in (p.seconds, p.dram_seconds, p.compute_seconds, p.roofline_seconds))


def test_predict_needs_a_launch_for_bare_counts():
    """predict(gpu, Kernel(...)) without a launch was an AttributeError."""
    with pytest.raises(roofline.RooflineError, match="needs a launch"):
        roofline.predict("H100-SXM", roofline.Kernel(flops=1, dram_bytes=1))


CORRUPTIONS = {
    "truncated": lambda b: b[: len(b) // 2],
    "not-utf8": lambda b: b[:10] + b"\xff\xfe" + b[10:],
    "deeply-nested": lambda b: b"[" * 100_000 + b"]" * 100_000,
    "nan": lambda b: re.sub(rb"(:\s*|=\s*)\d[\d.e+-]*", rb"\1NaN" if b.lstrip().startswith(b"{") else rb"\1nan", b,
                            count=1),
    "empty": lambda b: b"",
}


@pytest.mark.parametrize("corruption", sorted(CORRUPTIONS))
@pytest.mark.parametrize("loader,suffix,valid,error", [
    (occupancy.load_architecture, ".json",
     json.dumps(occupancy.architecture("sm_90").model_dump()).encode(), occupancy.OccupancyError),
    (roofline.load_gpu, ".json", json.dumps(roofline.gpu("H200").model_dump(mode="json")).encode(), roofline.RooflineError),
    (roofline.load_gpu, ".toml", b'name = "x"\ncompute_capability = "9.0"\nsm_count = 1\nboost_clock_hz = 1e9\n'
                                 b"dram_bytes_per_second = 1e9\n", roofline.RooflineError),
    (roofline.load_calibration, ".json", open("docs/results/h200/calibration.json", "rb").read(), roofline.RooflineError),
    (roofline.chart.load_chart, ".json", roofline._export.chart_to_json(
        roofline.chart.roofline_chart("L4", [models.copy(64)])).encode(), roofline.RooflineError),
], ids=["architecture", "gpu-json", "gpu-toml", "calibration", "chart"])
def test_loaders_refuse_damaged_files_naming_them(loader, suffix, valid, error, corruption, tmp_path):
    """UnicodeDecodeError, JSONDecodeError, RecursionError and NaN escaped the loaders."""
    path = tmp_path / f"damaged{suffix}"
    path.write_bytes(CORRUPTIONS[corruption](valid))
    with pytest.raises(error) as refused:
        loader(path)
    assert str(path) in str(refused.value) and "\n" not in str(refused.value)


def test_load_calibration_reads_a_validation_report():
    """Its docstring promised a validation report works; its calibration sits in `prediction`."""
    assert roofline.load_calibration("docs/results/h200/report.json") == roofline.load_calibration(
        "docs/results/h200/calibration.json")


def test_validate_kernel_source_refuses_paths_outside_the_package():
    with pytest.raises(roofline.RooflineError, match=r"known: .*ceilings\.cu"):
        _compile.kernel_source("../__init__.py")


def test_build_case_refuses_what_would_not_fit_in_memory():
    with pytest.raises(roofline.RooflineError, match="host memory"):
        _kernels.build_case(models.copy(2**31 - 1), np.random.default_rng(0))


@pytest.mark.parametrize("call", [
    lambda: roofline.memory.memory_space(np.array(["shared", "global"])),
    lambda: roofline.transfer.transfer_time(roofline.gpu("H200"), 1, memory=np.zeros(2)),
    lambda: memory.warp_transactions([0], operation=np.zeros(2)),
    lambda: occupancy.calculate("sm_90", threads_per_block=32, registers_per_thread=8,
                                partitioned_global_caching=np.zeros(2)),
], ids=["memory-space", "transfer-memory", "operation", "caching"])
def test_an_array_for_a_name_is_a_type_error(call):
    """'The truth value of an array is ambiguous' escaped from string comparisons."""
    with pytest.raises(TypeError):
        call()


def test_shapes_that_do_not_broadcast_are_named():
    with pytest.raises(roofline.RooflineError, match="do not broadcast"):
        roofline.attainable([1.0, 2.0], peak_flops_per_second=np.ones(3), memory_bandwidth=1.0)
    with pytest.raises(roofline.RooflineError, match="flops .*dram_bytes"):
        roofline.analyze_many("H100-SXM", flops=[1.0, 2.0], dram_bytes=[1.0, 2.0, 3.0])


# ------------------------------------------------------------------ the names main gained (after the merge)
# Each was an open (xfail), never-run (skipped) or hanging entry of the fuzz test until these fixes.

H200_REPORT = "docs/results/h200/report.json"
NCU_FILE = "tests/data/ncu/user_kernels.raw.csv"


@pytest.mark.parametrize("call,match", [
    (lambda: models.describe(np.array([1, "a"], dtype=object)), "name must be a str"),
    (lambda: roofline.format_profile_report(None), "must be a ProfileReport"),
    (lambda: roofline.format_profile_report(roofline.profile_report(NCU_FILE, gpu="H200"), markdown=np.zeros(0)),
     "markdown must be a bool"),
    (lambda: roofline.chart.profile_chart(None), "must be a ProfileReport"),
    (lambda: roofline.load_ncu(None), "path must be a str"),
    (lambda: roofline.load_ncu(NCU_FILE).matching(b"poly"), "pattern must be a str"),
    (lambda: _references.apply_references(None, _references.References()), "must be a Ceilings"),
    (lambda: _multi.device_spread(None), "sequence of ValidationReport"),
    (lambda: _multi.device_spread(["report"]), r"reports\[0\] must be a ValidationReport"),
    (lambda: _clocks.clock_record([True], before=None, after=None, max_sm_clock_hz=None), "ClockSample"),
    (lambda: _calibration.measured_calibration(None, origin="x"), "fitted must be a mapping"),
    (lambda: _calibration.measured_calibration({}, origin="x", figures=True), "figures must be a mapping"),
    (lambda: _calibration.measured_calibration({}, origin="x", figures={"a": 1.0}), "must be a .value, description. pair"),
    (lambda: validate.write_calibration(roofline.calibration("H200").model_dump(), 5), "folder must be a str"),
    (lambda: _kernel_args.parse_kernel_arg("f32[n]", {"n": None}), r"sizes\['n'\] must be an int"),
    (lambda: validate.parse_kernel_args(None), "texts must be a sequence"),
    (lambda: _resources.resource_corpus(np.array([1, 2])), "quick must be a bool"),
    (lambda: _hostlink.fit_link({"a": 1}, [1.0]), "sizes must be a sequence of numbers"),
    (lambda: _latency.split_modes([1e-7, "x", 1e-7, 1e-7]), r"seconds\[1\] must be a number"),
], ids=["describe-array", "format-profile-none", "format-profile-markdown", "profile-chart-none", "load-ncu-none",
        "ncu-pattern-bytes", "references-none", "spread-none", "spread-str", "clock-record-bool", "calibration-none",
        "calibration-figures", "calibration-figure-pair", "write-calibration-folder", "kernel-arg-sizes", "kernel-args-none", "corpus-array",
        "fit-link-dict", "split-modes-str"])
def test_a_wrong_type_is_a_deliberate_type_error(call, match):
    """AttributeError, 'unhashable type', 'truth value of an array is ambiguous' and friends
    escaped from these names; now each says which argument has the wrong type."""
    with pytest.raises(TypeError, match=match):
        call()


def test_load_ncu_names_a_missing_file_on_one_line():
    with pytest.raises(roofline.RooflineError) as refused:
        roofline.load_ncu("0\n")
    assert str(refused.value) == "path='0\\n': no such file"


def test_a_profile_report_survives_its_own_json():
    """ProfileKernel.cliffs was typed Any: its JSON came back as a dict, not Cliffs."""
    report = roofline.profile_report(NCU_FILE, gpu="H200")
    assert any(k.cliffs is not None for k in report.kernels)
    assert roofline.ProfileReport.model_validate_json(report.model_dump_json()) == report


def _fake_timer(values):
    it = iter(values)
    return lambda function: (function(), next(it))[1]


@pytest.mark.parametrize("kwargs,error,match", [
    (dict(warmup=-1), roofline.RooflineError, "warmup=-1 must be from 0"),
    (dict(repetitions=np.array([1, 2])), TypeError, "repetitions must be an int"),
    (dict(max_repetitions=10**7), roofline.RooflineError, "max_repetitions=10000000 must be from 20 to 1000000"),
    (dict(target_spread=math.nan), roofline.RooflineError, "target_spread=nan must be > 0 and finite"),
    (dict(budget_seconds=math.inf), roofline.RooflineError, "budget_seconds=inf must be > 0"),
    (dict(launches_per_sample="2"), TypeError, "launches_per_sample must be an int"),
    (dict(flush=5), TypeError, "flush must be a callable"),
    (dict(timer=_fake_timer(["1e-3"] * 20)), TypeError, "a timer must return a number"),
    (dict(timer=_fake_timer([math.nan] * 20)), roofline.RooflineError, "every duration must be from 1e-12"),
], ids=["warmup", "min-array", "max-huge", "spread-nan", "budget-inf", "launches-str", "flush", "timer-str",
        "timer-nan"])
def test_benchmark_until_stable_refuses_bad_arguments(kwargs, error, match):
    """benchmark_until_stable (now `benchmark` with a target spread) raised plain ValueError, or
    TypeError/ValueError from deep inside."""
    kwargs = {"timer": _fake_timer([1e-3] * 100), "target_spread": 0.02, **kwargs}
    rules = {k: kwargs.pop(k) for k in list(kwargs) if k in validate.StopRules.model_fields}
    with pytest.raises(error, match=match):
        validate.benchmark(lambda: None, rules=validate.StopRules(**rules), **kwargs)


def test_benchmark_until_stable_summarizes_once(monkeypatch):
    """Each round summarized every sample so far: rounds of one sample up to max_repetitions
    took quadratic time (minutes for a fast fake timer); the spread is now kept incrementally."""
    calls = []
    real = _timing.summarize
    monkeypatch.setattr(_timing, "summarize", lambda *a, **k: (calls.append(1), real(*a, **k))[1])
    values = [1e-6, 3e-6, 2e-6] * 1000
    r = validate.benchmark(lambda: None, timer=_fake_timer(values),
                           rules=validate.StopRules(warmup=0, repetitions=2, max_repetitions=3000, target_spread=1e-9,
                                                    budget_seconds=10),
                           clock=lambda: 0.0)
    assert r.repetitions == 3000 and calls == [1]


def test_clock_record_refuses_non_finite_device_figures():
    """NaN or infinite max_sm_clock_hz went into the record (non-finite, and not valid JSON)."""
    with pytest.raises(roofline.RooflineError, match="max_sm_clock_hz=nan must be > 0 and finite"):
        _clocks.clock_record([], before=None, after=None, max_sm_clock_hz=math.nan)
    with pytest.raises(roofline.RooflineError, match="power_limit_watts=-1"):
        _clocks.ClockMonitor(None, power_limit_watts=-1)


def _damaged_reports():
    valid = open(H200_REPORT, "rb").read()
    data = json.loads(valid)
    data["reports"][0]["device"]["sm_count"] = "many"
    nan = valid.replace(b'"sm_count": 132', b'"sm_count": NaN', 1)
    assert nan != valid
    return {"truncated": valid[: len(valid) // 2], "not-utf8": b"\xff\xfe" + valid, "nan": nan,
            "nested": b"[" * 100_000 + b"]" * 100_000, "bad-field": json.dumps(data).encode(), "chart": b'{"gpu": "x"}'}


@pytest.mark.parametrize("damage", ["truncated", "not-utf8", "nan", "nested", "bad-field", "chart"])
def test_load_report_set_refuses_damaged_files_naming_them(damage, tmp_path):
    """JSONDecodeError, UnicodeDecodeError and pydantic's multi-line errors escaped load_report_set."""
    path = tmp_path / "report.json"
    path.write_bytes(_damaged_reports()[damage])
    with pytest.raises(roofline.RooflineError) as refused:
        validate.load_report_set(tmp_path)  # the folder holding it
    assert str(path) in str(refused.value) and "\n" not in str(refused.value)


def test_loaders_refuse_oversized_files_before_reading(tmp_path):
    """A data file is read whole: one far past any gpuroof file (or /dev/zero) is refused up front."""
    from occupancy.common import MAX_FILE_BYTES

    path = tmp_path / "report.json"
    with open(path, "wb") as handle:
        handle.truncate(MAX_FILE_BYTES + 1)  # sparse: no disk used
    with pytest.raises(roofline.RooflineError, match=f"is {MAX_FILE_BYTES + 1} bytes"):
        validate.load_report_set(path)
    if Path("/dev/zero").exists():
        with pytest.raises(roofline.RooflineError, match="holds more than"):
            roofline.load_calibration("/dev/zero")


def test_merge_reports_checks_everything_before_reading(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    broken = tmp_path / "broken.json"
    broken.write_text("{")
    with pytest.raises(roofline.RooflineError, match="paths is empty"):
        validate.merge_reports([], tmp_path / "out")
    with pytest.raises(NotADirectoryError, match="is a file; give a folder"):  # before the broken file is read
        validate.merge_reports([broken], blocker)
    with pytest.raises(NotADirectoryError, match="cannot be written"):
        validate.merge_reports([broken], blocker / "sub")
    merged = validate.merge_reports([H200_REPORT, "docs/results/h100-sxm"], tmp_path / "out")
    assert len(merged.reports) == 2 and validate.load_report_set(tmp_path / "out") == merged


@pytest.mark.parametrize("devices,kwargs,error,match", [
    ([0, 0], {}, roofline.RooflineError, "names a device twice"),
    ("some", {}, roofline.RooflineError, "must be 'all'"),
    ([], {}, roofline.RooflineError, "devices is empty"),
    ([0, -1], {}, roofline.RooflineError, "device=-1"),
    ([0], {"kernels": ["nope"]}, roofline.RooflineError, "not in the suite"),
    ([0], {"seed": 1.5}, TypeError, "seed must be an int"),
    ([0], {"out": "{blocker}/sub"}, NotADirectoryError, "cannot be written"),
], ids=["twice", "word", "empty", "negative", "kernel", "seed", "out"])
def test_run_validation_devices_checks_before_any_process(devices, kwargs, error, match, tmp_path, monkeypatch):
    """It started one process per device before looking at its arguments."""
    import validate.run._multi as multi

    def no_work(*args, **kw):
        raise AssertionError("a GPU or a process was touched before the arguments were checked")

    monkeypatch.setattr(multi, "device_count", no_work)
    monkeypatch.setattr(multi.multiprocessing, "get_context", no_work)
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    kwargs = {"out": str(tmp_path / "out"), **kwargs}
    kwargs["out"] = kwargs["out"].format(blocker=blocker)
    with pytest.raises(error, match=match):
        validate.run_validation_devices(devices, **kwargs)


def test_no_driver_is_a_device_error(monkeypatch):
    """device_count let cuda.pathfinder's DynamicLibNotFoundError escape (no NVIDIA driver)."""
    import types

    import validate.device._driver as driver

    class DynamicLibNotFoundError(RuntimeError):
        pass

    def cu_init(flags):
        raise DynamicLibNotFoundError('"cuda" is an NVIDIA driver library and can only be found via system search.')

    fake = types.SimpleNamespace(driver=types.SimpleNamespace(cuInit=cu_init))
    monkeypatch.setattr(driver, "cuda_modules", lambda: fake)
    monkeypatch.setattr(driver, "_FAILED", None)  # a real failure earlier in this process is kept
    message = r"^no usable CUDA GPU: the NVIDIA driver \(libcuda\) is not installed$"
    with pytest.raises(validate.DeviceError, match=message):
        validate.run._multi.device_count()


def test_measured_calibration_is_a_valid_calibration():
    """It returned whatever it was given; the run found out only when it built the Calibration."""
    fitted = {**roofline.calibration("H200").model_dump(), "knee_sharpness": -1.0}
    with pytest.raises(roofline.RooflineError, match="knee_sharpness=-1.0"):
        _calibration.measured_calibration(fitted, origin="x")


def test_write_calibration_writes_only_what_loads_back(tmp_path):
    """An array in the calibration escaped as 'Object of type ndarray is not JSON serializable'."""
    good = roofline.calibration("H200").model_dump()
    with pytest.raises(roofline.RooflineError, match="idle_latency_seconds"):
        validate.write_calibration({**good, "idle_latency_seconds": np.zeros(2)}, tmp_path)
    assert list(tmp_path.iterdir()) == []
    path = validate.write_calibration(good, tmp_path)
    assert roofline.load_calibration(path) == roofline.Calibration.model_validate(good)


@pytest.mark.parametrize("spec,match", [
    ("f32[2**64]", r"passes 9223372036854775807"),
    ("f32[10**10**10]", r"passes 9223372036854775807"),  # was computed: a hang
    ("f32[n//0]", "divides by zero"),
    ("f32[2**(1-2)]", "negative exponent"),
    ("f16=70000", r"70000.0 is outside f16"),
    ("f32=nan", "nan is outside f32"),
    ("i8[n]=300", "fill 300 is outside i8"),
    ("f32[n]=a\x00.npy", "does not exist"),
], ids=["2^64", "tower", "div0", "neg-exp", "f16-range", "nan", "fill-range", "nul"])
def test_kernel_arg_sizes_and_values_are_bounded(spec, match):
    """Sizes were Python integers of any size (or ZeroDivisionError); values overflowed their type silently."""
    with pytest.raises(roofline.RooflineError, match=match):
        _kernel_args.parse_kernel_arg(spec, {"n": 16})


@pytest.mark.parametrize("sizes,seconds,match", [
    ([1, 2, 3], [1e-6, 2e-6], "sizes has 3 values and seconds 2"),
    ([], [], "two distinct sizes"),
    ([1, 2], [1e-6, math.nan], r"seconds\[1\]=nan is out of range"),
    ([0, 2], [1e-6, 1e-6], r"sizes\[0\]=0 is out of range"),
], ids=["lengths", "empty", "nan", "zero-size"])
def test_fit_link_refuses_what_it_cannot_fit(sizes, seconds, match):
    with pytest.raises(roofline.RooflineError, match=match):
        _hostlink.fit_link(sizes, seconds)


def test_split_modes_of_identical_hops():
    """Hops without spread gave separation=inf (invalid JSON in the report), and every hop
    alike counted as two separated modes."""
    alike = _latency.split_modes([2e-7] * 10)
    assert not alike.separated and alike.separation == 0
    quantised = _latency.split_modes([2e-7] * 6 + [3e-7] * 4)
    assert quantised.separated and math.isfinite(quantised.separation)
    assert (quantised.low_seconds, quantised.high_seconds) == pytest.approx((2e-7, 3e-7))
    with pytest.raises(roofline.RooflineError, match="at least 4 latencies"):
        _latency.split_modes([])


@pytest.mark.parametrize("kwargs,match", [
    (dict(arch="sm_9000"), "arch='sm_9000' is not a CUDA architecture"),
    (dict(arch="compute_90"), "is not a CUDA architecture"),
    (dict(names=[]), "names is empty"),
    (dict(names=["k k"]), "is not a C identifier"),
    (dict(source="a\x00b"), "NUL"),
    (dict(max_register_count=0), "max_register_count=0 must be from 1 to 255"),
], ids=["arch", "compute", "no-names", "names", "nul", "registers"])
def test_compile_kernels_refuses_bad_input_before_nvrtc(kwargs, match, monkeypatch):
    import validate.device._compile as compile_module

    monkeypatch.setattr(compile_module, "require_driver", lambda: pytest.fail("reached the driver check"))
    kwargs = {"source": 'extern "C" __global__ void k() {}', "names": ["k"], "arch": "sm_90", **kwargs}
    with pytest.raises(roofline.RooflineError, match=match):
        _compile.compile_kernels(kwargs.pop("source"), kwargs.pop("names"), **kwargs)


def test_compile_kernels_without_a_driver_never_hangs():
    """On a machine without the NVIDIA driver, compile_kernels raised SystemError from a lock's
    __enter__ inside cuda.core, and the next CUDA call of the process waited on that lock forever."""
    import subprocess
    import sys

    from validate.device._driver import require_driver

    try:
        require_driver()
    except validate.DeviceError:
        pass
    else:
        pytest.skip("a CUDA driver is present: tests/validate/test_gpu.py compiles there")
    script = ("import validate\nfrom validate.device import _compile\n"
              "for _ in range(2):\n"
              "    try:\n"
              "        _compile.compile_kernels('extern \"C\" __global__ void k() {}', ['k'], arch='sm_90')\n"
              "    except validate.DeviceError as exc:\n"
              "        print(exc)\n"
              "try:\n"
              "    validate.open_session(0)\n"
              "except validate.DeviceError as exc:\n"
              "    print(exc)\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["no usable CUDA GPU: the NVIDIA driver (libcuda) is not installed"] * 3


# ------------------------------------------------------------------ found by the deeper run (FUZZ_EXAMPLES=200)


def test_summarize_keeps_the_spread_finite():
    """summarize([1.0, 5e-324, 5e-324]) gave spread=inf (iqr over a subnormal median)."""
    with pytest.raises(roofline.RooflineError, match="from 1e-12 to 86400 s"):
        _timing.summarize([1.0, 5e-324, 5e-324])
    assert _timing.summarize([1e-12, 1e-12, 1.0]).spread < 1e13


def test_analyze_many_with_an_array_for_the_precision():
    """'The truth value of an empty array is ambiguous' from ``precision or "fp32"``."""
    with pytest.raises(TypeError):
        roofline.analyze_many("H100-SXM", flops=1e9, dram_bytes=1e9, precision=np.zeros(0, dtype=np.int64))


def test_kernel_parameters_are_finite():
    """A kernel read from JSON with parameters {"n": NaN} was accepted (and its JSON no longer round-trips)."""
    text = models.copy(1024).model_dump_json().replace('"n":1024', '"n":NaN')
    with pytest.raises(ValueError, match=r"parameters\['n'\]=nan must be finite"):
        roofline.Kernel.model_validate_json(text)
    with pytest.raises(roofline.RooflineError, match="must be finite"):
        models.copy(1024).model_copy(update={"parameters": {"scale": [1.0, math.inf]}})


def test_bank_conflict_ways_message_is_one_line():
    with pytest.raises(roofline.RooflineError) as refused:
        models.copy(1024).model_copy(update={"bank_conflict_ways": np.arange(6).reshape(2, 3)})
    assert "\n" not in str(refused.value) and "bank_conflict_ways=array(" in str(refused.value)


@pytest.mark.parametrize("data", [b"\x7fELF" + bytes(60), b"\x7fELF\x02\x01\x01" + bytes(57)], ids=["class-0", "empty-64"])
def test_a_damaged_host_elf_is_an_occupancy_error(data, tmp_path):
    """pyelftools' ELFError escaped kernel_resources for a damaged host object."""
    path = tmp_path / "k.o"
    path.write_bytes(data)
    with pytest.raises(occupancy.OccupancyError, match="k.o"):
        occupancy.kernel_resources(path)


def test_a_triton_cache_scan_skips_json_too_deep_to_read(tmp_path, capsys):
    """`gpuroof resources FOLDER` raised RecursionError on a deeply nested .json in the folder."""
    (tmp_path / "deep.json").write_bytes(b"[" * 100_000 + b"]" * 100_000)
    with pytest.raises(occupancy.OccupancyError, match="holds no Triton kernel"):
        occupancy.kernel_resources(tmp_path)
    code, _, err = cli(capsys, "resources", str(tmp_path))
    assert code == 2 and "holds no Triton kernel" in one_line(err)


def test_calibration_fit_errors_are_finite():
    """CalibrationFit (validate.probes._fit, from main) took NaN errors: report.json would hold null there."""
    good = dict(method="m", parameters=("knee_sharpness",), evaluations=3, seconds=0.1, train_points=4,
                train_median_abs_error=0.05, train_max_abs_error=0.1)
    assert validate.CalibrationFit(**good).train_max_abs_error == 0.1
    with pytest.raises(ValueError, match="finite"):
        validate.CalibrationFit(**{**good, "train_max_abs_error": math.nan})
