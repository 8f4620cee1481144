"""Roofline math: worked examples with sources, and properties."""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import roofline
from roofline import Kernel, RooflineError

WORKED = [
    # PMPP 4th ed. (Hwu, Kirk, El Hajj), ch. 5.1: the naive matmul does 0.25 FLOP/B; on an
    # A100 with 1555 GB/s it can reach at most 0.25 x 1555 = 389 GFLOP/s.
    ("pmpp-naive-matmul-a100", "A100-SXM4-40GB", 0.25, 388.8e9),
    # PMPP ch. 5.4: 32x32 tiles raise it to 8 FLOP/B: 8 x 1555 = 12 440 GFLOP/s, still
    # below the 19.5 TFLOPS FP32 peak, so still memory-bound.
    ("pmpp-tiled32-matmul-a100", "A100-SXM4-40GB", 8.0, 12.44e12),
    # Far past the ridge (H100 datasheet: 67 TFLOPS FP32) only the compute roof matters.
    ("h100-compute-bound", "H100-SXM", 1000.0, 132 * 1980e6 * 256),
]


@pytest.mark.parametrize("gpu,intensity,expected", [w[1:] for w in WORKED], ids=[w[0] for w in WORKED])
def test_worked_examples(gpu, intensity, expected):
    g = roofline.gpu(gpu)
    got = roofline.attainable(intensity, peak_flops_per_second=g.peak_flops("fp32"),
                              memory_bandwidth=g.memory_bandwidth)
    assert got == pytest.approx(expected, rel=1e-3)


def test_vector_add_time_lower_bound():
    # c = a + b over 2**26 floats: 1 flop and 12 bytes per element. On an H100 SXM the
    # time bound is the DRAM time, 12 * 2**26 B / 3.352e12 B/s = 240 us.
    n = 2**26
    r = roofline.analyze("H100-SXM", Kernel(name="vector_add", flops=n, dram_bytes=12 * n))
    assert (r.bound, r.bound_level) == ("memory", "dram")
    assert r.arithmetic_intensity == pytest.approx(1 / 12)
    assert r.time_lower_bound_seconds == pytest.approx(12 * n / (5120 / 8 * 5.238e9))
    assert r.attainable_flops_per_second == pytest.approx(n / r.time_lower_bound_seconds)
    assert r.fraction_of_peak == pytest.approx(r.attainable_flops_per_second / r.peak_flops_per_second)


def test_hierarchical_bound_picks_the_slowest_level():
    g = roofline.gpu("A100-SXM4-40GB")
    # Little DRAM traffic but heavy L2 traffic: L2 binds.
    counts = Kernel(flops=1e9, dram_bytes=1e8, l2_bytes=1e11, l1_bytes=1e11)
    r = roofline.analyze(g, counts)
    assert (r.bound, r.bound_level) == ("memory", "l2")
    assert r.time_lower_bound_seconds == pytest.approx(1e11 / g.l2_bandwidth)
    assert r.arithmetic_intensities == pytest.approx({"dram": 10.0, "l2": 0.01, "l1": 0.01})
    # Heavy arithmetic: compute binds and bound_level is None.
    r = roofline.analyze(g, Kernel(flops=1e15, dram_bytes=1e8, l2_bytes=1e9))
    assert (r.bound, r.bound_level) == ("compute", None)
    assert r.fraction_of_peak == 1.0


def test_precision_selects_the_roof():
    counts = Kernel(flops=1e15, dram_bytes=1e9)
    fp32 = roofline.analyze("H100-SXM", counts)
    fp16 = roofline.analyze("H100-SXM", counts, precision="fp16_tensor")
    assert fp16.time_lower_bound_seconds == pytest.approx(fp32.time_lower_bound_seconds * 66.91 / 989.43, rel=1e-3)


def test_kernel_model_like_objects_are_accepted():
    class Model:  # duck-typed like roofline.Kernel
        name, flops, dram_bytes, l2_bytes, l1_bytes, precision = "m", 1e9, 1e9, None, None, "fp64"

    r = roofline.analyze("A100-SXM4-40GB", Model())
    assert r.precision == "fp64" and r.name == "m"
    with pytest.raises(TypeError, match="roofline.Kernel"):
        roofline.analyze("A100-SXM4-40GB", object())


def test_real_kernel_model_if_available():
    models = pytest.importorskip("roofline.models")
    if not hasattr(models, "vector_add"):
        pytest.skip("roofline.models.vector_add not available yet")
    k = models.vector_add(2**20)
    r = roofline.analyze("H100-SXM", k)
    assert r.flops == k.flops and r.bytes["dram"] == k.dram_bytes


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"arithmetic_intensity": -1.0}, "arithmetic_intensity=-1 is out of range"),
        ({"peak_flops_per_second": 0.0}, "peak_flops_per_second=0 is out of range"),
        ({"memory_bandwidth": float("nan")}, "memory_bandwidth=nan is out of range"),
        ({"arithmetic_intensity": [1.0, -2.0]}, "arithmetic_intensity=-2"),
    ],
    ids=["negative-ai", "zero-peak", "nan-bandwidth", "array"],
)
def test_attainable_rejects_bad_input(kwargs, match):
    args = {"arithmetic_intensity": 1.0, "peak_flops_per_second": 1e12, "memory_bandwidth": 1e11}
    args.update(kwargs)
    intensity = args.pop("arithmetic_intensity")
    with pytest.raises(RooflineError, match=match):
        roofline.attainable(intensity, **args)


def test_attainable_wrong_types():
    with pytest.raises(TypeError):
        roofline.attainable("1", peak_flops_per_second=1.0, memory_bandwidth=1.0)
    with pytest.raises(TypeError):
        roofline.attainable(True, peak_flops_per_second=1.0, memory_bandwidth=1.0)


def test_nothing_to_bound():
    with pytest.raises(RooflineError, match="nothing to bound"):
        roofline.analyze("L4", Kernel(flops=0, dram_bytes=0))


def test_attainable_works_on_arrays_and_infinity():
    ai = np.array([0.0, 1.0, 10.0, math.inf])
    got = roofline.attainable(ai, peak_flops_per_second=50.0, memory_bandwidth=10.0)
    assert got.tolist() == [0.0, 10.0, 50.0, 50.0]


def test_analyze_many_agrees_with_analyze():
    rng = np.random.default_rng(0)
    flops = rng.uniform(1e6, 1e13, 50)
    dram = rng.uniform(1e6, 1e11, 50)
    l2 = rng.uniform(1e6, 1e12, 50)
    many = roofline.analyze_many("H100-SXM", flops=flops, dram_bytes=dram, l2_bytes=l2)
    for i in range(50):
        one = roofline.analyze("H100-SXM", Kernel(flops=flops[i], dram_bytes=dram[i], l2_bytes=l2[i]))
        assert many.time_lower_bound_seconds[i] == pytest.approx(one.time_lower_bound_seconds)
        assert many.bound[i] == one.bound
        assert (many.bound_level[i] or None) == one.bound_level


positive = st.floats(min_value=1e-3, max_value=1e6, allow_nan=False, allow_infinity=False)


@settings(max_examples=200, deadline=None)
@given(peak=positive, bandwidth=positive, eps=st.floats(min_value=1e-9, max_value=1e-3))
def test_continuous_at_the_ridge(peak, bandwidth, eps):
    ridge = peak / bandwidth
    below = roofline.attainable(ridge * (1 - eps), peak_flops_per_second=peak, memory_bandwidth=bandwidth)
    at = roofline.attainable(ridge, peak_flops_per_second=peak, memory_bandwidth=bandwidth)
    above = roofline.attainable(ridge * (1 + eps), peak_flops_per_second=peak, memory_bandwidth=bandwidth)
    assert at == pytest.approx(peak, rel=1e-12)
    assert abs(at - below) <= 2 * eps * peak and abs(above - at) <= 2 * eps * peak


@settings(max_examples=200, deadline=None)
@given(a=positive, b=positive, peak=positive, bandwidth=positive)
def test_monotone_and_efficiency_in_unit_interval(a, b, peak, bandwidth):
    lo, hi = sorted((a, b))
    f_lo = roofline.attainable(lo, peak_flops_per_second=peak, memory_bandwidth=bandwidth)
    f_hi = roofline.attainable(hi, peak_flops_per_second=peak, memory_bandwidth=bandwidth)
    assert f_lo <= f_hi
    assert 0 < f_lo / peak <= 1


@settings(max_examples=100, deadline=None)
@given(flops=st.floats(min_value=1, max_value=1e16), nbytes=st.floats(min_value=1, max_value=1e13))
def test_analyze_fraction_in_unit_interval_and_time_is_max(flops, nbytes):
    g = roofline.gpu("H100-SXM")
    r = roofline.analyze(g, Kernel(flops=flops, dram_bytes=nbytes))
    assert 0 < r.fraction_of_peak <= 1
    assert r.time_lower_bound_seconds == pytest.approx(
        max(flops / g.peak_flops("fp32"), nbytes / g.memory_bandwidth))


def test_import_roofline_stays_free_of_matplotlib_and_cuda():
    code = (
        "import sys, roofline; roofline.gpu('H100-SXM').peak_flops('fp32');"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('matplotlib', 'cuda'));"
        "print(bad); sys.exit(1 if bad else 0)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_public_api_is_exactly_all():
    public = {n for n in dir(roofline) if not n.startswith("_")}
    assert len(roofline.__all__) == len(set(roofline.__all__))
    assert roofline.__all__ == sorted(roofline.__all__)
    assert public == set(roofline.__all__)


def test_every_public_name_resolves_and_the_lazy_table_matches_the_imports():
    """`roofline` loads its names on first use (PEP 562): every name of ``__all__`` resolves,
    and the table it loads them from is the TYPE_CHECKING imports, name for name."""
    import ast
    import importlib
    import subprocess
    import sys

    fresh = subprocess.run([sys.executable, "-c", "import roofline, sys; print(sorted(m for m in sys.modules "
                            "if m.startswith('roofline.')))"], capture_output=True, text=True, check=True)
    assert fresh.stdout.strip() == "[]"  # nothing beyond the package itself on import
    for name in roofline.__all__:
        assert getattr(roofline, name) is not None, name
    tree = ast.parse(importlib.util.find_spec("roofline").loader.get_source("roofline"))
    guarded = next(node for node in tree.body if isinstance(node, ast.If))
    imported = {(node.module or "", alias.name) for node in guarded.body for alias in node.names}
    table = {(module, name) for module, names in roofline._LOCATIONS.items() for name in names}
    table |= {("", name) for name in roofline._SUBMODULES}
    assert imported == table
    assert sorted(name for _, name in table) == roofline.__all__
