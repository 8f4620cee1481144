"""validate without a GPU: timing statistics, kernel sources and references, output
checks, predictions, report writing, the CLI and its no-GPU exit code."""

from __future__ import annotations

import importlib
import inspect
import itertools
import json
import os
import statistics
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import roofline
import validate
from roofline import models
from occupancy import common
from validate.checks import _differential, _occupancy
from validate.device import _compile, _timing
from validate.report import _report
from validate.suite import _kernels, _suite
from gpuroof import main

# ---------------------------------------------------------------- public surface


def test_all_is_the_public_surface():
    assert validate.__all__ == sorted(validate.__all__)
    public = {n for n in dir(validate) if not n.startswith("_")}
    submodules = {n for n in public if type(getattr(validate, n)).__name__ == "module"}
    assert set(validate.__all__) == public - submodules


SUBPACKAGES = ("device", "probes", "checks", "user_kernel", "suite", "report", "run")


@pytest.mark.parametrize("package", ["validate", *(f"validate.{s}" for s in SUBPACKAGES)])
def test_no_public_function_takes_more_than_eight_parameters(package):
    """Options that travel together are one model (StopRules, MeasureOptions, CompileOptions)."""
    module = importlib.import_module(package)
    functions = [getattr(module, n) for n in module.__all__ if inspect.isfunction(getattr(module, n))]
    wide = sorted(f.__name__ for f in functions if len(inspect.signature(f).parameters) > 8)
    assert functions and wide == []


def test_import_and_cli_without_cuda_python(tmp_path):
    # A meta-path finder that refuses every cuda.* import stands in for a machine
    # without cuda-python: import works, and the command says so in one line, exit 3.
    script = textwrap.dedent(
        """
        import sys
        class Block:
            def find_spec(self, name, path=None, target=None):
                if name == "cuda" or name.startswith("cuda."):
                    raise ImportError("No module named " + repr(name))
                return None
        sys.meta_path.insert(0, Block())
        import validate
        from gpuroof import main
        sys.exit(main(["validate", "--quick", "--out", sys.argv[1]]))
        """
    )
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path / "r")], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 3, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "cuda-python" in lines[0] and "Traceback" not in done.stderr
    assert not (tmp_path / "r").exists()


def test_import_validate_imports_no_cuda_or_matplotlib():
    code = ("import sys, validate; bad = [m for m in sys.modules if m.split('.')[0] in ('cuda', 'matplotlib')];"
            "print(bad); sys.exit(1 if bad else 0)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


# ---------------------------------------------------------------- timing


SAMPLES = [
    ("odd", [3e-3, 1e-3, 2e-3]),
    ("even", [4e-3, 1e-3, 3e-3, 2e-3]),
    ("single", [5e-4]),
    ("outlier", [1e-3] * 19 + [1.0]),
]


@pytest.mark.parametrize("samples", [s for _, s in SAMPLES], ids=[i for i, _ in SAMPLES])
def test_summarize_matches_numpy(samples):
    # oracle: numpy's percentile (linear interpolation) and the statistics module
    r = _timing.summarize(samples)
    assert r.median_seconds == pytest.approx(float(np.median(samples)))
    assert r.mean_seconds == pytest.approx(float(np.mean(samples)))
    assert r.min_seconds == min(samples) and r.max_seconds == max(samples)
    iqr = float(np.percentile(samples, 75) - np.percentile(samples, 25))
    assert r.iqr_seconds == pytest.approx(iqr)
    assert r.spread == pytest.approx(iqr / float(np.median(samples)))
    assert r.stdev_seconds == pytest.approx(statistics.stdev(samples) if len(samples) > 1 else 0.0)
    assert r.repetitions == len(samples)


@pytest.mark.parametrize("bad", [[], [0.0], [-1e-3], [float("nan")], [float("inf")]],
                         ids=["empty", "zero", "negative", "nan", "inf"])
def test_summarize_rejects_bad_samples(bad):
    with pytest.raises(ValueError):
        _timing.summarize(bad)


class FakeTimer:
    """Returns scripted durations and records how often it ran the function."""

    def __init__(self, durations):
        self.durations = iter(durations)
        self.calls = 0

    def __call__(self, function):
        function()
        self.calls += 1
        return next(self.durations)


def test_benchmark_discards_warmup_and_takes_the_median():
    # warm-up runs are slow (module load, clocks), then steady 1 ms with one spike
    timer = FakeTimer([50e-3, 20e-3, 10e-3] + [1e-3] * 19 + [9e-3])
    launched = []
    r = validate.benchmark(lambda: launched.append(1), timer=timer, rules=validate.StopRules(warmup=3, repetitions=20))
    assert len(launched) == timer.calls == 23
    assert r.repetitions == 20 and r.warmup == 3
    assert r.median_seconds == pytest.approx(1e-3) and r.max_seconds == pytest.approx(9e-3)


def test_benchmark_fills_the_time_budget_up_to_the_cap():
    timer = FakeTimer(itertools.repeat(2e-3))
    r = validate.benchmark(lambda: None, timer=timer,
                           rules=validate.StopRules(warmup=2, repetitions=20, budget_seconds=0.1))
    assert r.repetitions == 50  # 0.1 s / 2 ms
    capped = validate.benchmark(lambda: None, timer=FakeTimer(itertools.repeat(1e-6)),
                                rules=validate.StopRules(warmup=1, repetitions=20, budget_seconds=1.0,
                                                          max_repetitions=300))
    assert capped.repetitions == 300
    floor = validate.benchmark(lambda: None, timer=FakeTimer(itertools.repeat(1.0)),
                               rules=validate.StopRules(warmup=1, repetitions=20, budget_seconds=0.5))
    assert floor.repetitions == 20


def test_benchmark_flushes_before_every_repetition():
    events = []
    timer = FakeTimer(itertools.repeat(1e-3))
    r = validate.benchmark(lambda: events.append("run"), timer=timer,
                           rules=validate.StopRules(warmup=2, repetitions=5), flush=lambda: events.append("flush"))
    assert events == ["flush", "run"] * 7
    assert r.l2_flushed


@pytest.mark.parametrize("kwargs", [dict(warmup=-1), dict(repetitions=0), dict(repetitions=5, max_repetitions=4),
                                    dict(budget_seconds=0.0)], ids=["warmup", "repetitions", "cap", "budget"])
def test_benchmark_rejects_bad_arguments(kwargs):
    with pytest.raises(ValueError):
        validate.benchmark(lambda: None, timer=FakeTimer(itertools.repeat(1e-3)),
                           rules=validate.StopRules(**kwargs))


# ---------------------------------------------------------------- kernel sources


def test_with_defines_prefixes_sorted_macros():
    assert _compile.with_defines("body", {"TILE": 32, "BLOCK": 128}) == "#define BLOCK 128\n#define TILE 32\nbody"
    assert _compile.with_defines("body") == "body"
    with pytest.raises(ValueError):
        _compile.with_defines("body", {"NOT AN IDENTIFIER": 1})


def test_every_case_function_is_defined_in_the_suite_source():
    source = _compile.kernel_source("suite.cu")
    rng = np.random.default_rng(0)
    for model in SMALL_MODELS:
        case = _kernels.build_case(model, rng)
        assert f'extern "C" __global__ void {case.function}(' in source, case.function


def test_probe_source_generates_one_kernel_per_variant():
    variants = [_differential.ProbeVariant(8, 0, 1), _differential.ProbeVariant(40, 4096, 16, 64),
                _differential.ProbeVariant(8, 2052, 4)]
    src = _differential.probe_source(variants)
    for v in variants:
        assert src.count(f"void {v.name}(") == 1
    assert "__shared__ float s_static[1024];" in src and "__shared__ float s_static[513];" in src
    assert 'bar.sync 15;' in src and 'bar.sync 3;' in src
    assert src.count("s_static[") == 2 * 3  # declaration, store, load for the two with static memory
    with pytest.raises(ValueError):
        _differential.probe_source([_differential.ProbeVariant(8, 6, 1)])
    with pytest.raises(ValueError):
        _differential.probe_source([_differential.ProbeVariant(8, 0, 17)])


def test_probe_variants_sweep_each_resource():
    variants = validate.checks._occupancy.probe_variants()
    assert len({v.static_shared_memory for v in variants}) >= 4
    assert len({v.barriers for v in variants}) >= 4
    assert len({(v.live, v.max_register_count) for v in variants}) >= 8


# ---------------------------------------------------------------- references


def _transpose_loops(variant, m):
    """The C indexing of roofline.models.transpose, element by element (independent oracle)."""
    ny, nx = m.shape
    flat_in = m.ravel()
    out = np.full(nx * ny, np.nan)
    for iy in range(ny):
        for ix in range(nx):
            if variant.startswith("copy_row"):
                out[iy * nx + ix] = flat_in[iy * nx + ix]
            elif variant.startswith("copy_column"):
                out[ix * ny + iy] = flat_in[ix * ny + iy]
            elif variant.endswith("column"):
                out[iy * nx + ix] = flat_in[ix * ny + iy]
            else:
                out[ix * ny + iy] = flat_in[iy * nx + ix]
    return out


@pytest.mark.parametrize("variant", models.TRANSPOSE_VARIANTS)
def test_transpose_reference_matches_the_c_indexing(variant):
    m = np.arange(5 * 7, dtype=float).reshape(5, 7)
    assert np.array_equal(_kernels.transpose_reference(variant, m).ravel(), _transpose_loops(variant, m))


@pytest.mark.parametrize("radius", [0, 1, 3])
def test_box_mean_matches_brute_force(radius):
    rng = np.random.default_rng(radius)
    image = rng.random((9, 13))
    want = np.empty_like(image)
    for r in range(9):
        for c in range(13):
            window = image[max(0, r - radius): r + radius + 1, max(0, c - radius): c + radius + 1]
            want[r, c] = window.mean()
    assert np.allclose(_kernels.box_mean(image, radius), want)


SMALL_MODELS = [
    models.copy(1000), models.vector_add(1000), models.triad(1000, scalar=2.5), models.offset_read(1000, 11),
    models.offset_write(1000, 7), models.strided_read(1000, 3), models.strided_write(1000, 3), models.aos(500),
    models.soa(500), models.reduction(1000, block=64), models.blur(17, 11, radius=2), models.matmul_naive(9, 5, 7),
    models.matmul_tiled(9, 5, 7, tile=4), *[models.transpose(6, 10, variant=v, block=(4, 2))
                                             for v in models.TRANSPOSE_VARIANTS],
]


def _reference_outputs(case):
    ref = case.reference(case.inputs)
    out = {}
    for key, (shape, dtype) in case.outputs.items():
        if key in case.rows:
            full = np.zeros(shape, dtype)
            full[case.rows[key]] = ref[key]
            out[key] = full
        else:
            out[key] = np.asarray(ref[key], dtype)
    return out


@pytest.mark.parametrize("model", SMALL_MODELS, ids=[m.label for m in SMALL_MODELS])
def test_case_is_consistent_and_its_reference_verifies(model):
    case = _kernels.build_case(model, np.random.default_rng(7))
    names = set(case.inputs) | set(case.outputs)
    assert {a for a in case.args if isinstance(a, str)} == names
    assert case.grid == model.launch.grid and case.block == model.launch.block
    outputs = _reference_outputs(case)
    assert _kernels.check_outputs(case, outputs).ok


def test_check_outputs_catches_unwritten_wrong_and_stray_elements():
    case = _kernels.build_case(models.vector_add(64), np.random.default_rng(0))
    good = _reference_outputs(case)
    unwritten = {"c": good["c"].copy()}
    unwritten["c"][5] = np.nan
    r = _kernels.check_outputs(case, unwritten)
    assert not r.ok and r.unwritten == 1 and "unwritten" in r.message
    wrong = {"c": good["c"].copy()}
    wrong["c"][3] += 1.0
    assert not _kernels.check_outputs(case, wrong).ok
    # offset_read leaves the last `offset` elements poisoned; writing one is an error
    case = _kernels.build_case(models.offset_read(64, 5), np.random.default_rng(0))
    stray = _reference_outputs(case)
    stray["c"][-1] = 0.0
    r = _kernels.check_outputs(case, stray)
    assert not r.ok and "must not" in r.message


def test_check_outputs_uses_the_relative_tolerance_for_sums():
    case = _kernels.build_case(models.matmul_naive(32), np.random.default_rng(0))
    out = _reference_outputs(case)
    assert _kernels.check_outputs(case, {"C": out["C"] * (1 + 1e-6)}).ok
    assert not _kernels.check_outputs(case, {"C": out["C"] * (1 + 1e-2)}).ok


def test_unsupported_model_names_the_supported_ones():
    class Fake:
        name = "fft"
        parameters = {}

    with pytest.raises(roofline.RooflineError, match="copy"):
        _kernels.build_case(Fake(), np.random.default_rng(0))


# ---------------------------------------------------------------- predictions


@pytest.mark.parametrize(
    "flops, level_bytes, peak, bandwidths, want",
    [
        (0, {"dram": 8e9}, 1e12, {"dram": 4e12}, (2e-3, "dram")),
        (2e12, {"dram": 1e9}, 1e12, {"dram": 1e12}, (2.0, "compute")),
        (1e9, {"dram": 1e9, "l1": 1e12}, 1e12, {"dram": 1e12, "l1": 1e13}, (0.1, "l1")),
        (1e9, {"dram": 1e9, "l2": 5e9}, 1e12, {"dram": 1e12, "l2": None}, (1e-3, "compute")),
        (0, {}, None, {}, (None, None)),
    ],
    ids=["dram", "compute", "l1", "unmeasured-level-skipped", "nothing"],
)
def test_measured_prediction_takes_the_slowest_roof(flops, level_bytes, peak, bandwidths, want):
    seconds, binding = _suite.measured_prediction(flops, level_bytes, peak, bandwidths)
    assert binding == want[1]
    assert seconds == (pytest.approx(want[0]) if want[0] is not None else None)


def test_summary_per_regime(make_row):
    rows = [make_row("a", "dram", 0.9, 1.0), make_row("b", "dram", 0.5, 1.0), make_row("c", "dram", 0.8, 1.0),
            make_row("d", "compute", 1.0, 2.0), make_row("e", "cache", None, 1.0),
            make_row("f", "dram", 1.0, 1.0, status="verify_error")]
    s = _suite.summarize_predictions(rows)
    dram = s.regimes[0]
    assert dram.regime == "dram" and dram.kernels == 3
    assert dram.median_ape_percent == pytest.approx(20.0) and dram.worst_ape_percent == pytest.approx(50.0)
    assert dram.worst_kernel == "b"
    assert s.regimes[2].median_ape_percent == pytest.approx(50.0)
    assert s.regimes[1].median_ape_percent is None  # no prediction for "e"
    assert s.overall.kernels == 5 and s.failed == ("f",)


# ---------------------------------------------------------------- report


def test_report_files_and_json_schema(tmp_path, make_report):
    report = make_report()
    files = _report.write_report(report, tmp_path / "out")
    assert {"json", "markdown"} <= set(files)
    data = json.loads((tmp_path / "out" / "report.json").read_text())
    assert data["schema_version"] == validate.REPORT_SCHEMA_VERSION
    # one schema for one device or many: a set holding this one report
    assert len(data["reports"]) == 1 and data["spread"] == []
    one = data["reports"][0]
    assert {"device", "ceilings", "occupancy_check", "kernels"} <= set(one)
    for kernel in one["kernels"]:
        assert {"name", "predicted_seconds", "measured_seconds"} <= set(kernel)
    assert validate.ReportSet.model_validate(data).reports == (report,)
    md = (tmp_path / "out" / "report.md").read_text()
    assert "NVIDIA H200" in md and "0 mismatches" in md and "compile_error" in md
    assert not [p for p in (tmp_path / "out").iterdir() if p.name.startswith(".")]


def test_report_lists_every_mismatch(make_report):
    m = [_occupancy.OccupancyMismatch(query="active_blocks", kernel=f"k{i}", registers_per_thread=32,
                                    static_shared_memory=0, block_barriers=1, threads_per_block=128,
                                    dynamic_shared_memory=i, max_dynamic_shared_memory=None, carveout=None,
                                    runtime="4", calculated="3") for i in range(7)]
    md = validate.render_markdown(make_report(m))
    assert "7 mismatches" in md
    assert all(f"| k{i} |" in md for i in range(7))


def test_write_is_atomic(tmp_path, monkeypatch):
    path = tmp_path / "report.json"
    path.write_text("old")

    def broken_replace(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError):
        common.write_atomic(path, b"new", ValueError)
    assert path.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]


def test_report_plot_uses_roofline_plot(tmp_path, make_report, make_row):
    pytest.importorskip("matplotlib")
    report = make_report()
    model = models.vector_add(1 << 20)
    row = make_row(model.label, "dram", 1e-4, 2e-4).model_copy(update={"measured_flops_per_second": 5e9})
    report = report.model_copy(update={"kernels": (row,)})
    files = _report.write_report(report, tmp_path, [model])
    assert files["plot"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# ---------------------------------------------------------------- CLI


def test_cli_no_gpu_exits_3(monkeypatch, capsys):
    def no_gpu(**kwargs):
        raise validate.DeviceError("no usable CUDA GPU: the NVIDIA driver (libcuda) is not installed")

    monkeypatch.setattr("validate.run_validation", no_gpu)
    assert main(["validate", "--quick"]) == 3
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["gpuroof: no usable CUDA GPU: the NVIDIA driver (libcuda) is not installed"]


def test_cli_prints_summary_and_json(monkeypatch, capsys, tmp_path, make_report):
    report = make_report()
    seen = {}

    def fake_run(**kwargs):
        seen.update(kwargs)
        return validate.ValidationRun(report, {"json": tmp_path / "report.json"})

    monkeypatch.setattr("validate.run_validation", fake_run)
    assert main(["validate", "--quick", "--kernels", "copy", "triad", "--device", "1", "--out", str(tmp_path)]) == 0
    progress = seen.pop("progress")  # the command line's progress bar (gpuroof/_progress.py)
    assert callable(progress) and type(progress).__name__ == "ProgressBar"
    assert seen == {"out": str(tmp_path), "quick": True, "kernels": ["copy", "triad"], "device": 1, "seed": None,
                    "families": None}
    out = capsys.readouterr().out
    assert "dram_copy" in out and "0 mismatches" in out and "failed: bad" in out
    assert main(["validate", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["device"]["name"] == "NVIDIA H200"


def test_unknown_kernel_is_bad_input(capsys):
    assert main(["validate", "--kernels", "no_such_kernel"]) == 2
    err = capsys.readouterr().err
    assert "no_such_kernel" in err and "copy" in err
