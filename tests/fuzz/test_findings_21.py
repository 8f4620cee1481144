"""One test per finding of issue 21's first three bullets (exceptions that were not the
library's, NaN and a broken promise, two hangs): each input, what it did, and the one-line
refusal or right answer it gets now. The messages and files findings are tested beside
the code that fixes them."""

from __future__ import annotations

import importlib
import inspect
import itertools
import json
import math
import subprocess
import sys
import time
import types
from pathlib import Path

import numpy as np
import pytest

import occupancy
import roofline
import validate
from roofline import memory
from validate.device import _clocks, _driver, _session, _timing
from validate.suite import _suite

ROOT = Path(__file__).resolve().parents[2]
SOURCE = 'extern "C" __global__ void k(float *x) { x[threadIdx.x] = 1.0f; }'


@pytest.fixture(scope="module")
def report():
    data = json.loads((ROOT / "docs/results/h200/report.json").read_text())
    return validate.ValidationReport.model_validate(data["reports"][0])


# ------------------------------------------------------------------ exceptions that were not the library's


@pytest.mark.parametrize("call,name", [
    (lambda: _timing.summarize(np.array(0, dtype=np.int8), warmup=0), "samples_seconds"),
    (lambda: _suite.summarize_predictions(np.array(25, dtype=np.uint8)), "rows"),
    (lambda: memory.warp_transactions(np.array(0), 1, "load", False), "byte_addresses"),
    (lambda: memory.bank_conflicts(np.array(0)), "byte_addresses"),
    (lambda: roofline.chart.roofline_chart("H100-SXM", np.array(3)), "kernels"),
    (lambda: roofline.suite.analyze_suite("H100-SXM", np.array(3)), "kernels"),
], ids=["summarize", "summarize_predictions", "warp_transactions", "bank_conflicts", "chart", "suite"])
def test_a_0d_array_for_a_sequence_is_a_type_error(call, name):
    """numpy's 'iteration over a 0-d array' escaped: a 0-d array has __iter__ but cannot iterate."""
    with pytest.raises(TypeError, match=rf"^{name} must be .*, not a 0-d numpy array"):
        call()


@pytest.mark.parametrize("function", [occupancy.kernel_resources, occupancy.all_kernel_resources,
                                      occupancy.source_lines],
                         ids=lambda f: f.__name__)
@pytest.mark.parametrize("options", [None, 5, [None]], ids=["None", "int", "list-of-None"])
def test_compiler_options_of_the_wrong_type_are_refused_before_compiling(function, options, monkeypatch):
    """options=None: "'NoneType' object is not iterable" from inside the option merge."""
    import occupancy._kernel_resources as kr
    import occupancy._source_lines as lines_module

    monkeypatch.setattr(kr, "_collect", lambda *a, **k: pytest.fail("compiled before checking options"))
    monkeypatch.setattr(lines_module, "_line_cubin", lambda *a, **k: pytest.fail("compiled before checking options"))
    with pytest.raises(TypeError, match="^options must be"):
        function(SOURCE, arch="sm_90", options=options)


def test_kernel_resources_by_architecture_checks_its_options():
    with pytest.raises(TypeError, match="^options must be a sequence of strings"):
        occupancy.kernel_resources_by_architecture(SOURCE, ["sm_90"], options=None)


def test_traffic_without_accesses():
    """roofline.memory.traffic(1024, 256, None): "'NoneType' object is not iterable"."""
    with pytest.raises(TypeError, match="^accesses must be a sequence of roofline.memory.Access, not NoneType$"):
        roofline.memory.traffic(1024, 256, None)


@pytest.mark.parametrize("level,error,match", [
    ((1, 2), TypeError, "^level must be an integer, not tuple$"),
    (2**70, roofline.RooflineError, r"^level=1180591620717411303424 exceeds the maximum of 4"),
    (0, roofline.RooflineError, "^level=0 is below the minimum of 1$"),
    (1.0, TypeError, "^level must be an integer, not float$"),
], ids=["tuple", "2^70", "zero", "float"])
def test_render_markdown_checks_the_heading_level(report, level, error, match):
    """level=(1, 2): "can't multiply sequence by non-int"; level=2**70: OverflowError."""
    with pytest.raises(error, match=match):
        validate.render_markdown(report, level=level)


def test_render_markdown_at_its_deepest_level_stays_within_markdown(report):
    text = validate.render_markdown(report, level=4)
    headings = [line.split(" ")[0] for line in text.splitlines() if line.startswith("#")]
    assert headings[0] == "####" and max(map(len, headings)) <= 6


@pytest.mark.parametrize("bus", [np.array([1, 2]), 5, b"0000:1b:00.0"], ids=["array", "int", "bytes"])
def test_open_clock_monitor_checks_the_bus_id(bus):
    """np.array([1, 2]): 'The truth value of an array with more than one element is ambiguous'."""
    with pytest.raises(TypeError, match="^pci_bus_id must be a str"):
        _clocks.open_clock_monitor(bus)


def test_measure_checks_its_argument_list_before_a_gpu(monkeypatch):
    """args=5: "'int' object is not iterable" from enumerate."""
    import validate.user_kernel._measure as measure_module

    monkeypatch.setattr(measure_module, "open_session", lambda device: pytest.fail("opened a GPU first"))
    with pytest.raises(TypeError, match="^args must be a sequence with one entry per kernel parameter, not int$"):
        validate.measure(SOURCE, "k", launch=occupancy.Launch(grid=1, block=32), args=5)


def _private(module: str, name: str):
    return getattr(importlib.import_module(f"validate.{module}"), name)


#: Every function that needs an open GPU session, with a call that gives it something else.
SESSION_FUNCTIONS = {
    "query_device": lambda s, info: validate.query_device(s),
    "check_clusters": lambda s, info: validate.check_clusters(s, info),
    "driver_cluster_answers": lambda s, info: validate.driver_cluster_answers(s, info),
    "check_resources": lambda s, info: validate.check_resources(s, info),
    "measure_gpc_layout": lambda s, info: validate.measure_gpc_layout(s, info),
    "measure_families": lambda s, info: validate.measure_families(s, info),
    "run_prediction_check": lambda s, info: validate.run_prediction_check(s, "H100"),
    "measure": lambda s, info: validate.measure(SOURCE, "k", launch=occupancy.Launch(grid=1, block=32),
                                                args=["f32[32]"], session=s),
    "measure_ceilings": lambda s, info: _private("probes._ceilings", "measure_ceilings")(s, info),
    "check_occupancy": lambda s, info: _private("checks._occupancy", "check_occupancy")(s, info),
    "run_suite": lambda s, info: _private("suite._suite", "run_suite")(s, info),
    "measure_effects": lambda s, info: _private("probes._memory_effects", "measure_effects")(
        s, info, dram_bytes_per_second=1e12),
    "measure_host_links": lambda s, info: _private("probes._hostlink", "measure_host_links")(s, info),
    "measure_latency_ladder": lambda s, info: _private("probes._latency", "measure_latency_ladder")(s, info),
    "measure_launch_overhead": lambda s, info: _private("probes._launch", "measure_launch_overhead")(s),
    "run_launch_plan": lambda s, info: _private("checks._ncu_launches", "run_launch_plan")(s, info, []),
    "measure_persistence": lambda s, info: _private("probes._persistence", "measure_persistence")(
        s, info, dram_bytes_per_second=1e12, l2_bytes_per_second=1e13),
    "measure_tensor": lambda s, info: _private("probes._tensor", "measure_tensor")(s, info, "fp16_tensor"),
    "measure_working_set": lambda s, info: _private("probes._workingset", "measure_working_set")(s, info),
}


def _untouchable(monkeypatch):
    """Make every way to the driver or a compiler fail the test."""
    def touched(*args, **kwargs):
        pytest.fail("the driver or a compiler was reached before the session was checked")

    monkeypatch.setattr(_driver, "cuda_modules", touched)
    import validate.device._compile as compile_module

    for name in ("compile_cubin", "compile_kernels", "require_driver", "cuda_modules"):
        monkeypatch.setattr(compile_module, name, touched)


@pytest.mark.parametrize("name", sorted(SESSION_FUNCTIONS))
@pytest.mark.parametrize("session", ["H100", 0, None], ids=["str", "int", "None"])
def test_gpu_session_functions_check_their_session_first(name, session, report, monkeypatch):
    """run_prediction_check(session="H100"): AttributeError "'str' object has no attribute
    'architecture'"; about 360 such calls over 15 functions."""
    _untouchable(monkeypatch)
    if name == "measure" and session is None:
        pytest.skip("measure(session=None) opens device 0: that is its default")
    with pytest.raises(TypeError, match=r"^session must be an open validate.Session \(validate.open_session"):
        SESSION_FUNCTIONS[name](session, report.device)


def test_every_public_session_function_is_checked():
    """The table above covers every public function whose first parameter is a session."""
    public = {name for name in validate.__all__ if inspect.isfunction(getattr(validate, name))
              and next(iter(inspect.signature(getattr(validate, name)).parameters), None) == "session"}
    assert public and public <= set(SESSION_FUNCTIONS), public - set(SESSION_FUNCTIONS)


# ------------------------------------------------------------------ NaN and a broken promise

TINY = (5e-324, 1e-320, 2.2250738585072014e-308, 1e-300, 1.0, 1e12, 1e300, 1.7e308)


def test_mixed_dram_bandwidth_is_finite_for_tiny_and_huge_figures():
    """NaN for tiny finite rates (25 of 300 calls), and ZeroDivisionError for tiny bytes."""
    for read_bytes, write_bytes, copy, read in itertools.product((0.0, *TINY), (0.0, *TINY), TINY, TINY):
        rate = roofline.terms.mixed_dram_bandwidth(read_bytes, write_bytes, copy_bytes_per_second=copy,
                                             read_bytes_per_second=read)
        assert math.isfinite(rate) and rate > 0, (read_bytes, write_bytes, copy, read, rate)
        assert rate <= max(copy, read) * (1 + 1e-12), (read_bytes, write_bytes, copy, read, rate)


def test_dram_roof_with_subnormal_bytes():
    cal = roofline.calibration("H100")
    rate = roofline.terms.dram_roof("H100", cal, 5e-324, 5e-324)
    assert rate == roofline.terms.dram_roof("H100", cal, 1.0, 1.0)


@pytest.mark.parametrize("read_bytes,write_bytes", [(0, 1), (1, 0), (3, 1), (1, 3)])
def test_reads_no_faster_than_a_copy_give_the_copys_rate(read_bytes, write_bytes):
    """Its docstring promises the copy's rate when reads are not faster; (0, 1) gave 3.107e12."""
    rate = roofline.terms.mixed_dram_bandwidth(read_bytes, write_bytes, copy_bytes_per_second=3e12,
                                         read_bytes_per_second=2.9e12)
    assert rate == 3e12


def test_writes_are_never_faster_than_a_copy_on_any_packaged_gpu():
    """With the packaged H100 calibration (reads 2.966 TB/s, copy 2.995) writes came out at 3.024 TB/s."""
    for g in roofline.gpus():
        cal = roofline.calibration(g.name)
        copy = roofline.terms.dram_roof(g, cal, 1.0, 1.0)
        assert roofline.terms.dram_roof(g, cal, 0.0, 1.0) <= copy, g.name
        assert roofline.terms.dram_roof(g, cal, 1.0, 0.0) >= copy, g.name


# ------------------------------------------------------------------ two hangs


class _SystemErrorDriver:
    """cuda-python without the NVIDIA driver: start-up raises SystemError once, and any later
    call would block forever (here: fails the test)."""

    def __init__(self):
        self.calls = 0
        self.driver = types.SimpleNamespace(cuInit=self.cu_init, cuDeviceGetCount=self.blocked)
        self.core = types.SimpleNamespace(Device=types.SimpleNamespace(get_all_devices=self.blocked))

    def cu_init(self, flags):
        self.calls += 1
        if self.calls > 1:
            self.blocked()
        raise SystemError("<built-in method __enter__ of _thread.lock object> returned a result with an exception set")

    def blocked(self, *args):
        pytest.fail("a driver call after a failed start-up: it would block forever")


def test_a_failed_driver_start_is_one_device_error_and_no_second_call(monkeypatch):
    fake = _SystemErrorDriver()
    monkeypatch.setattr(_driver, "cuda_modules", lambda: fake)
    monkeypatch.setattr(_session, "cuda_modules", lambda: fake)
    monkeypatch.setattr(_driver, "_FAILED", None)
    message = "^no usable CUDA GPU: <built-in method __enter__ of _thread.lock object> returned a result"
    for attempt in (lambda: validate.open_session(0), lambda: validate.open_session(0),
                    lambda: validate.run._multi.device_count(),
                    lambda: _driver.driver_call(fake.driver.cuDeviceGetCount)):
        with pytest.raises(validate.DeviceError, match=message):
            attempt()
    assert fake.calls == 1


def test_a_system_error_inside_a_cuda_call_stops_the_driver(monkeypatch):
    """cuda.core's get_kernel raised SystemError inside check_resources (no driver); the next call hung."""
    monkeypatch.setattr(_driver, "_FAILED", None)
    message = r"^no usable CUDA GPU: .* returned a result .* \(the driver failed to start while loading k\)$"
    with pytest.raises(validate.DeviceError, match=message):
        with _driver.cuda_errors("loading k"):
            raise SystemError("<built-in method __enter__ of _thread.lock object> returned a result with an "
                              "exception set")
    monkeypatch.setattr(_driver, "cuda_modules", lambda: pytest.fail("the driver was called again"))
    with pytest.raises(validate.DeviceError, match=message):
        validate.open_session(0)


def test_no_driver_never_hangs_in_a_real_process():
    """On this machine without the NVIDIA driver: cuda.core's kernel load raised SystemError and
    the next driver call of the process (open_session) waited forever."""
    try:
        _driver.require_driver()
    except validate.DeviceError:
        pass
    else:
        pytest.skip("a CUDA driver is present: tests/validate/test_gpu.py runs there")
    # check_resources' own steps: compile (NVRTC needs no driver), then load the kernel.
    script = ("import validate\nfrom validate.device import _compile, _driver\nfrom validate.run import _multi\n"
              "module = _compile.compile_cubin('extern \"C\" __global__ void k() {}', arch='sm_90', name='k')\n"
              "for attempt in (lambda: module.get_kernel('k'), lambda: validate.open_session(0),\n"
              "                _multi.device_count, lambda: validate.open_session(0)):\n"
              "    try:\n"
              "        with _driver.cuda_errors('loading k'):\n"
              "            attempt()\n"
              "    except validate.DeviceError as exc:\n"
              "        print(exc)\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == ("no usable CUDA GPU: the NVIDIA driver (libcuda) is not installed "
                        "(the driver failed to start while loading k)"), lines
    assert lines[1:] == [lines[0]] * 3, lines


def test_exhaustive_traffic_beyond_its_budget_is_refused_up_front():
    """traffic(..., exhaustive=True) over 2**31 blocks walked for about 100 hours."""
    from roofline._traffic import EXHAUSTIVE_THREAD_BUDGET

    access = roofline.memory.Access(array="x", index=lambda c: c.block_x * 256 + c.thread_x, kind="load")
    start = time.perf_counter()
    with pytest.raises(roofline.RooflineError,
                       match=rf"^exhaustive=True would evaluate 549755813632 threads .*its budget is "
                             rf"{EXHAUSTIVE_THREAD_BUDGET}: use the fast count"):
        roofline.memory.traffic((2**31 - 1, 1, 1), 256, [access], exhaustive=True)
    blocks = EXHAUSTIVE_THREAD_BUDGET // 256 + 1
    with pytest.raises(roofline.RooflineError, match=f"{blocks} blocks x 256 threads"):
        roofline.memory.traffic(blocks, 256, [access], exhaustive=True)
    assert time.perf_counter() - start < 5
    fast = roofline.memory.traffic((2**31 - 1, 1, 1), 256, [access])  # the fast count is what to use there
    assert fast.requested_bytes == 4 * (2**31 - 1) * 256
