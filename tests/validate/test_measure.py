"""validate.measure: argument syntax, the checks made before any launch, timing statistics
with a fake timer (no GPU), and, marked ``gpu``, the whole path on a real device."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

import occupancy
import roofline
import validate
from validate.user_kernel._kernel_args import parse_kernel_arg, parse_kernel_args
from validate.user_kernel._load import resolve_code
from validate.user_kernel._measure import _check_against_kernel, _compare, _normalise_args

LAUNCH_FIELDS = ("grid", "block", "cluster", "dynamic_shared_memory")


def _measure(code, kernel, **kwargs):
    """`validate.measure` with its launch and options given as the loose keywords they hold."""
    launch = occupancy.Launch(**{k: kwargs.pop(k) for k in LAUNCH_FIELDS if k in kwargs})
    options = validate.MeasureOptions(**{k: kwargs.pop(k) for k in list(kwargs)
                                         if k in validate.MeasureOptions.model_fields})
    return validate.measure(code, kernel, launch=launch, options=options, **kwargs)


SAXPY = r"""
extern "C" __global__ void saxpy(int n, float a, const float* __restrict__ x, float* __restrict__ y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
"""

# --------------------------------------------------------------------------- syntax


@pytest.mark.parametrize(
    "text, kind, dtype, elements, value",
    [
        ("i32=1024", "scalar", "int32", None, 1024),
        ("u64=0x10", "scalar", "uint64", None, 16),
        ("f32=2.5", "scalar", "float32", None, 2.5),
        ("f64=-1e-3", "scalar", "float64", None, -1e-3),
        ("f32[n]=random", "input", "float32", 1000, None),
        ("f16[2*n+1]=zeros", "input", "float16", 2001, None),
        ("i32[n**2]=7", "input", "int32", 1_000_000, None),
        ("f32[(n+24)//32]", "output", "float32", 32, None),
        (" u8 [ 16 ] ", "output", "uint8", 16, None),
    ],
    ids=["i32", "u64-hex", "f32", "f64", "f32-array", "f16-expr", "i32-fill", "output-expr", "spaces"],
)
def test_parse_kernel_arg(text, kind, dtype, elements, value):
    a = parse_kernel_arg(text, {"n": 1000})
    assert (a.kind, a.dtype, a.elements) == (kind, dtype, elements)
    if value is not None:
        assert a.scalar() == pytest.approx(value)
        assert a.scalar().dtype == np.dtype(dtype)


@pytest.mark.parametrize(
    "text, message",
    [
        ("float=1", "type 'float' is not one of"),
        ("i32", "a scalar needs a value"),
        ("i32=1.5", "is not a i32 value"),
        ("i8=300", "outside i8"),
        ("f32[m]=random", "size name 'm' is not defined"),
        ("f32[n/2]=random", "must use integers"),
        ("f32[0]", "must be >= 1"),
        ("f32[n]=banana", "fill 'banana' is not"),
        ("f32[n]=missing.npy", "does not exist"),
        ("[n]=1", "is not TYPE=VALUE"),
    ],
    ids=["type", "no-value", "float-for-int", "range", "name", "division", "zero", "fill", "npy", "syntax"],
)
def test_parse_kernel_arg_errors(text, message):
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("(", r"\(")):
        parse_kernel_arg(text, {"n": 1000})


def test_input_fills(tmp_path):
    rng = np.random.default_rng(0)
    r = parse_kernel_arg("f32[1000]=random").host_array(rng)
    assert r.dtype == np.float32 and -1 <= r.min() < -0.9 and 0.9 < r.max() < 1
    assert parse_kernel_arg("i32[4]=random").host_array(rng).dtype == np.int32
    assert (parse_kernel_arg("f64[3]=ones").host_array(rng) == 1).all()
    assert (parse_kernel_arg("i16[3]=-2").host_array(rng) == -2).all()
    path = tmp_path / "x.npy"
    np.save(path, np.arange(6, dtype=np.float64))
    loaded = parse_kernel_arg(f"f32[6]={path}").host_array(rng)
    assert loaded.dtype == np.float32 and loaded.tolist() == [0, 1, 2, 3, 4, 5]
    with pytest.raises(ValueError, match="holds 6 elements, not 5"):
        parse_kernel_arg(f"f32[5]={path}").host_array(rng)


def test_parse_kernel_args_keeps_order():
    assert [a.text for a in parse_kernel_args(["i32=1", "f32[2]", "f32[2]=ones"])] == ["i32=1", "f32[2]", "f32[2]=ones"]


# --------------------------------------------------------------------------- before launch


def test_python_scalars_are_refused_with_the_fix():
    with pytest.raises(TypeError, match=r"np\.int32\(5\)"):
        _normalise_args([5], None)
    with pytest.raises(TypeError, match="use a numpy array"):
        _normalise_args([[1, 2]], None)
    with pytest.raises(ValueError, match="empty array"):
        _normalise_args([np.zeros(0)], None)


@pytest.mark.parametrize(
    "value, error, message",
    [(0, ValueError, "grid.x=0 is below the minimum of 1"), ((1, 2, 3, 4), ValueError, "1 to 3 dimensions"),
     (2.0, TypeError, "grid must be an int"), (True, TypeError, "grid must be an int")],
    ids=["zero", "four", "float", "bool"],
)
def test_bad_dims(value, error, message):
    """validate.measure takes its dims as an occupancy.Launch (the one normaliser)."""
    with pytest.raises(error, match=message):
        _measure("__global__ void k() {}", "k", grid=value, block=1, args=())


def _fake_kernel(*sizes):
    return SimpleNamespace(arguments_info=[SimpleNamespace(offset=8 * i, size=s) for i, s in enumerate(sizes)])


def test_argument_list_against_the_kernel_parameters():
    x = np.zeros(4, np.float32)
    good = [np.int32(4), np.float32(2), x, parse_kernel_arg("f32[4]")]
    assert _check_against_kernel(_fake_kernel(4, 4, 8, 8), "saxpy", good) is None
    with pytest.raises(ValueError, match="takes 4 arguments, 3 given"):
        _check_against_kernel(_fake_kernel(4, 4, 8, 8), "saxpy", good[:3])
    with pytest.raises(ValueError, match=r"argument 0 \(int64=4\) is 8 bytes, but parameter 0 of 'saxpy' is 4"):
        _check_against_kernel(_fake_kernel(4, 4, 8, 8), "saxpy", [np.int64(4), *good[1:]])
    with pytest.raises(ValueError, match="argument 1 .* is a pointer"):
        _check_against_kernel(_fake_kernel(4, 4, 8, 8), "saxpy", [good[0], x, x, x])
    note = _check_against_kernel(SimpleNamespace(), "saxpy", good)
    assert note.startswith("argument list not checked")


@pytest.mark.parametrize(
    "code, code_type, kind",
    [
        (SAXPY, None, "cuda"),
        ("//\n.version 8.0\n.target sm_90\n.visible .entry k()\n{\n ret;\n}\n", None, "ptx"),
        (b"\x7fELF\x02\x01", None, "cubin"),
        (b"\x50\xed\x55\xba", None, "fatbin"),
        ("anything", "ptx", "ptx"),
    ],
    ids=["source", "ptx", "cubin", "fatbin", "forced"],
)
def test_code_type(code, code_type, kind):
    assert resolve_code(code, code_type)[0] == kind


def test_code_type_from_files(tmp_path):
    (tmp_path / "k.cu").write_text(SAXPY)
    (tmp_path / "k.cubin").write_bytes(b"\x7fELF")
    assert resolve_code(tmp_path / "k.cu", None)[:2] == ("cuda", SAXPY)
    assert resolve_code(str(tmp_path / "k.cubin"), None)[:2] == ("cubin", b"\x7fELF")
    with pytest.raises(ValueError, match="no such file"):
        resolve_code(tmp_path / "missing.ptx", None)
    with pytest.raises(ValueError, match="code_type='sass' is not one of"):
        validate.MeasureOptions(code_type="sass")
    with pytest.raises(TypeError, match="code must be"):
        resolve_code(42, None)


def test_compare_outputs():
    ref = np.array([1.0, 2.0, np.nan, 4.0])
    ok = _compare({1: np.array([1.0, 2.0, 99.0, 4.0], np.float32)}, {1: ref}, 1e-6)
    assert ok.ok and ok.relative_error == 0 and ok.arguments == (1,)
    unwritten = _compare({1: np.array([1.0, np.nan, 0.0, 4.0])}, {1: ref}, 1e-6)
    assert not unwritten.ok and unwritten.unwritten == 1 and "unwritten" in unwritten.message
    wrong = _compare({1: np.array([1.0, 2.0, 0.0, 4.4])}, {1: ref}, 1e-6)
    assert not wrong.ok and wrong.relative_error == pytest.approx(0.4 / math.sqrt(21))
    with pytest.raises(ValueError, match="has 4 elements; argument 1 has 3"):
        _compare({1: np.zeros(3)}, {1: ref}, 1e-6)


# --------------------------------------------------------------------------- timing


def _timer(values):
    it = iter(values)
    return lambda function: (function(), next(it))[1]


def test_stops_when_the_spread_is_small():
    r = validate.benchmark(lambda: None, timer=_timer([1e-3] * 100),
                           rules=validate.StopRules(warmup=2, repetitions=10, target_spread=0.02))
    assert r.repetitions == 10 and r.spread == 0 and r.warmup == 2


def test_keeps_going_while_noisy_then_stops_at_the_budget():
    noisy = [1e-3, 2e-3] * 500
    r = validate.benchmark(lambda: None, timer=_timer(noisy),
                           rules=validate.StopRules(warmup=0, repetitions=10, target_spread=0.02, budget_seconds=0.05))
    # 10 samples per round, 15 ms per round: the fourth round passes 50 ms of device time
    assert r.repetitions == 40 and r.spread > 0.02


def test_caps_at_max_repetitions_and_divides_by_launches():
    noisy = [4e-3, 8e-3] * 500
    r = validate.benchmark(lambda: None, timer=_timer(noisy),
                           rules=validate.StopRules(warmup=0, repetitions=7, target_spread=0.02, max_repetitions=12,
                                                    budget_seconds=100),
                           launches_per_sample=4)
    assert r.repetitions == 12 and r.min_seconds == 1e-3 and r.max_seconds == 2e-3


def test_flush_runs_before_each_sample_untimed():
    calls = []
    r = validate.benchmark(lambda: calls.append("launch"), timer=lambda f: (f(), 1e-3)[1],
                           rules=validate.StopRules(warmup=1, repetitions=3, target_spread=0.02),
                           flush=lambda: calls.append("flush"))
    assert calls[:4] == ["flush", "launch", "flush", "launch"] and r.l2_flushed


def test_wall_clock_guard():
    ticks = iter(range(0, 1000, 10))
    r = validate.benchmark(lambda: None, timer=_timer([1e-6, 3e-6] * 500),
                           rules=validate.StopRules(warmup=0, target_spread=0.02, repetitions=5, budget_seconds=1.0),
                           clock=lambda: next(ticks))
    assert r.repetitions == 5


@pytest.mark.parametrize(
    "kwargs, message",
    [({"warmup": -1}, "warmup"), ({"repetitions": 0}, "repetitions"),
     ({"max_repetitions": 2, "repetitions": 3}, "max_repetitions"), ({"target_spread": 0}, "target_spread"),
     ({"budget_seconds": 0}, "budget_seconds"), ({"launches_per_sample": 0}, "launches_per_sample")],
    ids=["warmup", "min", "max", "spread", "budget", "launches"],
)
def test_timing_arguments(kwargs, message):
    rules = {"target_spread": 0.02, **{k: v for k, v in kwargs.items() if k in validate.StopRules.model_fields}}
    others = {k: v for k, v in kwargs.items() if k not in rules}
    with pytest.raises(ValueError, match=message):
        validate.benchmark(lambda: None, timer=_timer([1.0]), rules=validate.StopRules(**rules), **others)


def test_bad_input_is_refused_before_the_gpu_is_touched(monkeypatch):
    def no_gpu(*args, **kwargs):
        raise AssertionError("the GPU must not be opened for bad input")

    monkeypatch.setattr("validate.user_kernel._measure.open_session", no_gpu)
    x = np.zeros(4, np.float32)
    cases = [
        (dict(grid=0, block=1, args=[]), ValueError, "grid"),
        (dict(grid=4, block=1, args=[3]), TypeError, "Python int"),
        (dict(grid=4, block=1, args=["f32[4]"], l2="hot"), ValueError, "l2="),
        (dict(grid=(4, 3), block=1, cluster=(2, 2), args=[]), ValueError, "is not a multiple of cluster"),
        (dict(grid=4, block=1, args=[x], expected={1: x}), ValueError, "not arrays of the argument list"),
        (dict(grid=4, block=1, args=[x], dynamic_shared_memory=-1), ValueError, "dynamic_shared_memory"),
    ]
    for kwargs, error, message in cases:
        with pytest.raises(error, match=message):
            _measure(SAXPY, "saxpy", **kwargs)


@pytest.mark.parametrize("kwargs, error, message", [
    (dict(warmup=-1), ValueError, "warmup=-1 must be from 0"),
    (dict(repetitions=5, max_repetitions=4), ValueError, "max_repetitions=4 must be from 5"),
    (dict(budget_seconds=0), ValueError, "budget_seconds=0 must be > 0"),
    (dict(tolerance=-1e-3), ValueError, "tolerance=-0.001 must be >= 0"),
    (dict(tolerance=math.nan), ValueError, "tolerance=nan must be >= 0"),
    (dict(max_register_count=300), ValueError, "max_register_count=300 must be from 1 to 255"),
    (dict(include_paths="inc"), TypeError, "include_paths must be a sequence"),
    (dict(defines=["A=1"]), TypeError, "defines must be a mapping"),
    (dict(defines="A=1"), TypeError, "defines must be a mapping"),
    (dict(sizes={"n": 1.5}), TypeError, "sizes\\['n'\\] must be an integer"),
    (dict(seed=-1), ValueError, "seed=-1 must be >= 0"),
    (dict(gpu="no such gpu"), ValueError, "no such gpu"),
    (dict(budget=1.0), ValueError, "budget=1.0: Extra inputs are not permitted"),
], ids=["warmup", "cap", "budget", "tolerance", "tolerance-nan", "registers", "include-str", "defines-list",
        "defines-str", "sizes-float", "seed", "gpu", "unknown"])
def test_measure_options_name_the_bad_field(kwargs, error, message):
    with pytest.raises(error, match=message):
        validate.MeasureOptions(**kwargs)


def test_measure_options_hand_on_the_compile_options_and_stop_rules():
    options = validate.MeasureOptions(defines={"TILE": 32, "NAME": "x"}, include_paths=["a", "b"], std="c++20",
                                      warmup=1, repetitions=4, budget_seconds=0.25, gpu="H100")
    assert options.compile_options == validate.device.CompileOptions(
        defines=(("TILE", "32"), ("NAME", "x")), include_paths=("a", "b"), std="c++20")
    assert options.stop_rules == validate.StopRules(warmup=1, repetitions=4, max_repetitions=1000,
                                                    target_spread=0.02, budget_seconds=0.25)
    assert options.gpu == roofline.gpu("H100")
    with pytest.raises(ValueError, match="l2='hot' must be 'flush' or 'warm'"):
        options.model_copy(update={"l2": "hot"})


@pytest.mark.parametrize("kwargs, message", [
    (dict(launch=(4, 256)), "launch must be an occupancy.Launch"),
    (dict(options={"l2": "warm"}), "options must be a validate.MeasureOptions"),
], ids=["launch-tuple", "options-dict"])
def test_measure_takes_a_launch_and_options(kwargs, message, monkeypatch):
    monkeypatch.setattr("validate.user_kernel._measure.open_session", lambda *a: pytest.fail("GPU opened"))
    arguments = {"launch": occupancy.Launch(grid=4, block=256), "args": ["f32[4]"], **kwargs}
    with pytest.raises(TypeError, match=message):
        validate.measure(SAXPY, "saxpy", **arguments)


# --------------------------------------------------------------------------- on a GPU


@pytest.mark.gpu
def test_measure_saxpy_on_the_gpu(gpu_session):
    n = 1 << 22
    rng = np.random.default_rng(3)
    x, y = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    counts = roofline.Kernel(name="saxpy", flops=2 * n, dram_bytes=12 * n, precision="fp32")
    m = _measure(SAXPY, "saxpy", grid=n // 256, block=256, args=[np.int32(n), np.float32(2), x, y.copy()],
                         expected={3: 2 * x.astype(np.float64) + y}, tolerance=1e-6, counts=counts,
                         session=gpu_session, budget_seconds=0.2)
    assert m.ok and m.check.ok and m.check.relative_error < 1e-6
    assert m.resources.registers_per_thread > 0
    assert m.occupancy == pytest.approx(m.occupancy_driver)
    assert m.seconds > 0 and m.timing.repetitions >= 10
    assert m.achieved_bytes_per_second["dram"] == pytest.approx(12 * n / m.seconds)
    assert m.predicted_seconds is not None and m.prediction_error is not None


@pytest.mark.gpu
def test_measure_refuses_a_wrong_argument_list_and_a_block_too_large(gpu_session):
    x = np.zeros(256, np.float32)
    with pytest.raises(ValueError, match="takes 4 arguments, 3 given"):
        _measure(SAXPY, "saxpy", grid=1, block=256, args=[np.int32(256), np.float32(1), x],
                         session=gpu_session)
    with pytest.raises(ValueError, match="block.x=2048 exceeds the maximum of 1024"):
        _measure(SAXPY, "saxpy", grid=1, block=2048, args=[np.int32(256), np.float32(1), x, x],
                         session=gpu_session)
    with pytest.raises(ValueError, match="kernels in the source: saxpy"):
        _measure(SAXPY, "saxpy2", grid=1, block=256, args=[np.int32(256), np.float32(1), x, x],
                         session=gpu_session)


@pytest.mark.gpu
def test_measure_reports_a_wrong_result_without_timing(gpu_session):
    n = 1024
    x = np.ones(n, np.float32)
    m = _measure(SAXPY, "saxpy", grid=n // 256, block=256, session=gpu_session,
                         args=[np.int32(n), np.float32(2), x, f"f32[{n}]=zeros"], expected={3: np.full(n, 3.0)})
    assert not m.ok and not m.check.ok and m.timing is None and "tolerance" in m.check.message
