"""roofline.Kernel: one kernel description for analyze, predict, the charts, the suite and the models."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import occupancy
import roofline
from roofline import Kernel, RooflineError, models

H100 = "H100 SXM"
N = 1 << 24
LAUNCH = occupancy.Launch(grid=N // 256, block=256, registers_per_thread=40)


def test_a_kernel_needs_no_boilerplate():
    saxpy = Kernel(name="saxpy", flops=2 * N, dram_bytes=12 * N, launch=LAUNCH)
    assert (saxpy.parameters, saxpy.formula, saxpy.precision, saxpy.l2_bytes) == ({}, "", None, None)
    r = roofline.analyze(H100, saxpy)
    assert (r.bound, r.bound_level, r.precision) == ("memory", "dram", "fp32")
    p = roofline.predict(H100, saxpy)
    assert p.seconds >= p.roofline_seconds and p.active_warps_per_sm == 48


# (id, fields, error, message): counts are finite and non-negative, types are checked
BAD = [
    ("nan flops", dict(flops=math.nan), RooflineError, "flops=nan must be finite"),
    ("inf dram", dict(dram_bytes=math.inf), RooflineError, "dram_bytes=inf must be finite"),
    ("negative l2", dict(l2_bytes=-1), RooflineError, "l2_bytes=-1 must be finite and >= 0"),
    ("numpy nan", dict(l1_bytes=np.float64("nan")), RooflineError, "l1_bytes=nan"),
    ("bool flops", dict(flops=True), TypeError, "flops must be a number, not bool"),
    ("string bytes", dict(dram_bytes="1e9"), TypeError, "dram_bytes must be a number, not str"),
    ("requested disagrees", dict(load_bytes=8, store_bytes=4, requested_bytes=10), RooflineError,
     "requested_bytes=10 disagrees"),
    ("requested below load", dict(load_bytes=8, requested_bytes=4), RooflineError, "requested_bytes=4 disagrees"),
    ("flops disagree", dict(flops=5, flops_by_precision={"fp32": 3}), RooflineError, "flops=5 disagrees"),
    ("unknown precision", dict(precision="fp7"), RooflineError, "precision='fp7' is not known"),
    ("unknown by precision", dict(flops_by_precision={"fp7": 1}), RooflineError, "precision='fp7'"),
    ("empty by precision", dict(flops_by_precision={}), RooflineError, "non-empty mapping"),
    ("negative by precision", dict(flops_by_precision={"fp32": -1}), RooflineError, "must be finite and >= 0"),
    ("zero ways", dict(bank_conflict_ways=0), RooflineError, "bank_conflict_ways=0"),
    # zero addresses made the atomics term vanish: 1024 CAS loops on one word predicted at 5 us, not 546
    ("zero atomic addresses", dict(atomics=1024, atomic_addresses=0), RooflineError,
     r"atomic_addresses=0 must be >= 1 \(1: one counter\) or None"),
    ("zero shared words", dict(shared_atomics=1e6, shared_atomic_words=0), RooflineError, "shared_atomic_words=0 must be >= 1"),
    ("zero shared contenders", dict(shared_cas=1e3, shared_cas_contenders=0), RooflineError,
     "shared_cas_contenders=0 must be >= 1"),
    ("unknown field", dict(bytes=3), RooflineError, "bytes"),
    ("launch of the wrong type", dict(launch=(1, 256)), TypeError, "launch must be an occupancy.Launch, not tuple"),
]


@pytest.mark.parametrize("fields, error, message", [c[1:] for c in BAD], ids=[c[0] for c in BAD])
def test_kernel_refuses_bad_counts(fields, error, message):
    with pytest.raises(error, match=message):
        Kernel(name="k", **fields)


DERIVED = [
    ("requested from parts", dict(load_bytes=8, store_bytes=4), dict(requested_bytes=12)),
    ("requested alone", dict(requested_bytes=12), dict(requested_bytes=12, load_bytes=None)),
    ("load only", dict(load_bytes=8), dict(requested_bytes=None)),
    ("flops from precisions", dict(flops_by_precision={"fp16_tensor": 6, "float": 4}),
     dict(flops=10, flops_by_precision={"fp16_tensor": 6, "fp32": 4})),
    ("precision spelled", dict(precision="half"), dict(precision="fp16")),
    ("ints stay ints", dict(flops=3, dram_bytes=np.int64(7)), dict(flops=3, dram_bytes=7)),
    ("textbook intensity", dict(flops=10, load_bytes=3, store_bytes=2), dict(arithmetic_intensity=2.0)),
    ("no requested, no intensity", dict(flops=10, dram_bytes=5), dict(arithmetic_intensity=None,
                                                                      dram_arithmetic_intensity=2.0)),
]


@pytest.mark.parametrize("fields, expected", [c[1:] for c in DERIVED], ids=[c[0] for c in DERIVED])
def test_kernel_derives_totals(fields, expected):
    kernel = Kernel(**fields)
    for name, value in expected.items():
        got = getattr(kernel, name)
        assert got == value and type(got) is type(value)


# A copy of 1024 floats, counted: 1024 x 4 bytes loaded and stored (one element per thread).
_COPY = roofline.memory.traffic(4, 256, [roofline.memory.Access(array="x", index=lambda c: c.x),
                                        roofline.memory.Access(array="y", index=lambda c: c.x, kind="store")])
# (id, update of the counted kernel, expected counts): the traffic's where the kernel is given none
COUNTED = [
    ("from the traffic", {}, dict(load_bytes=4096, store_bytes=4096, requested_bytes=8192,
                                  l2_partial_store_sectors=0)),
    ("a store given", {"store_bytes": 0}, dict(load_bytes=4096, store_bytes=0, requested_bytes=4096)),
    ("partial sectors given", {"l2_partial_store_sectors": 7}, dict(l2_partial_store_sectors=7)),
    ("no traffic", {"traffic": None}, dict(load_bytes=None, requested_bytes=None, l2_partial_store_sectors=None)),
]


@pytest.mark.parametrize("update, expected", [c[1:] for c in COUNTED], ids=[c[0] for c in COUNTED])
def test_a_counted_kernel_holds_its_requested_bytes_once(update, expected):
    kernel = _COPY.kernel(name="copy").model_copy(update=update)
    assert {name: kernel.count(name) for name in expected} == expected
    for name in ("load_bytes", "store_bytes", "requested_bytes", "l2_partial_store_sectors"):
        assert getattr(kernel, name) == update.get(name)  # only what was given: the rest lives in the traffic


def test_count_names_a_count():
    with pytest.raises(RooflineError, match="name='launch' is not a count of a Kernel"):
        Kernel().count("launch")


def test_kernel_round_trips_through_json_and_copies_check_their_update():
    kernel = models.matmul_tiled(256, tile=16)
    again = Kernel.model_validate(json.loads(kernel.model_dump_json()))
    assert again == kernel and isinstance(again.launch, occupancy.Launch)
    cheaper = kernel.model_copy(update={"store_bytes": 0})
    assert cheaper.count("requested_bytes") == kernel.count("load_bytes")
    with pytest.raises(RooflineError, match="dram_bytes=-1"):
        kernel.model_copy(update={"dram_bytes": -1})


def test_models_return_the_one_kernel_type():
    for model in models.suite():
        assert type(model) is Kernel and isinstance(model.launch, occupancy.Launch)
        assert isinstance(model.traffic, roofline.Traffic)
    assert not hasattr(models, "KernelModel") and not hasattr(models, "Launch") and not hasattr(roofline, "KernelCounts")
    k = Kernel(name="m", flops=1, load_bytes=4, store_bytes=4, dram_bytes=8,
               launch=occupancy.Launch(grid=(1, 1, 1), block=(32, 1, 1)))
    assert k.requested_bytes == 8 and k.arithmetic_intensity == 1 / 8 and k.dram_arithmetic_intensity == 1 / 8


def test_a_kernels_json_round_trips_with_its_traffic():
    k = models.transpose(256, 256, variant="naive_column")
    again = Kernel.model_validate_json(k.model_dump_json())
    assert again.traffic == k.traffic and again.dram_bytes == k.dram_bytes


def test_predict_without_a_launch_says_what_it_needs():
    counts = Kernel(name="bare", flops=2e9, dram_bytes=8e9)
    with pytest.raises(RooflineError, match="predict needs a launch: kernel 'bare' has none"):
        roofline.predict(H100, counts)
    with pytest.raises(RooflineError, match="time_cliffs needs a launch"):
        roofline.cliffs.time_cliffs(H100, counts)
    assert roofline.predict(H100, counts, LAUNCH) == roofline.predict(H100, counts.model_copy(update={"launch": LAUNCH}))
    with pytest.raises(RooflineError, match="predict needs dram_bytes"):
        roofline.predict(H100, Kernel(flops=1, launch=LAUNCH))
    with pytest.raises(TypeError, match="occupancy.Launch"):
        roofline.predict(H100, counts, (4096, 256))


def test_predict_takes_the_launch_fields():
    kernel = models.copy(N)
    assumed = roofline.predict(H100, kernel)
    assert assumed.assumptions and "registers_per_thread=32 assumed" in assumed.assumptions[0]
    # loads in flight on the launch act as the argument does
    launch = kernel.launch.model_copy(update={"grid": N // 1024, "elements_per_thread": 4, "registers_per_thread": 32})
    by_argument = roofline.predict(H100, kernel, launch, loads_in_flight_per_thread=1)
    by_launch = roofline.predict(H100, kernel, launch.model_copy(update={"loads_in_flight_per_thread": 1}))
    assert by_argument.seconds == by_launch.seconds > roofline.predict(H100, kernel, launch).seconds


def test_predict_notes_resources_read_for_another_architecture():
    res = occupancy.KernelResources(kernel="k", architecture="sm_80", registers_per_thread=30)
    kernel = Kernel(name="k", dram_bytes=8 * N, launch=occupancy.Launch(grid=N // 256, block=256, resources=res))
    assert roofline.predict(H100, kernel).assumptions == ("the kernel's resources were read for sm_80, the GPU is sm_90",)
    assert roofline.predict("A100-SXM4-40GB", kernel).assumptions == ()


def test_analyze_needs_dram_bytes_and_weighs_precisions():
    with pytest.raises(RooflineError, match="has no dram_bytes; analyze needs them"):
        roofline.analyze(H100, Kernel(name="k", flops=1e9, l2_bytes=1e9))
    g = roofline.gpu(H100)
    mixed = Kernel(dram_bytes=1, flops_by_precision={"fp16_tensor": 1e12, "fp32": 1e11})
    r = roofline.analyze(g, mixed)
    slowest = max(1e12 / g.peak_flops("fp16_tensor"), 1e11 / g.peak_flops("fp32"))
    assert r.time_lower_bound_seconds == pytest.approx(slowest)
    assert r.precision == "fp32" and r.peak_flops_per_second == pytest.approx(1.1e12 / slowest)
    # an explicit precision puts every flop on that roof, as before
    assert roofline.analyze(g, mixed, "fp16_tensor").time_lower_bound_seconds == pytest.approx(
        1.1e12 / g.peak_flops("fp16_tensor"))


def test_analyze_many_takes_kernels():
    kernels = [models.copy(N), models.matmul_tiled(1024, tile=32), Kernel(flops=1e12, dram_bytes=1e6)]
    many = roofline.analyze_many(H100, kernels)
    for i, kernel in enumerate(kernels):
        one = roofline.analyze(H100, kernel)
        assert many.time_lower_bound_seconds[i] == pytest.approx(one.time_lower_bound_seconds)
        assert many.bound_level[i] == (one.bound_level or "")
    with pytest.raises(TypeError, match="not both"):
        roofline.analyze_many(H100, kernels, flops=[1])


def test_charts_plots_and_the_suite_take_kernels(tmp_path):
    saxpy = Kernel(name="saxpy", flops=2 * N, dram_bytes=12 * N, launch=LAUNCH)
    bare = Kernel(name="bare", flops=1e12, dram_bytes=1e9)
    chart = roofline.chart.roofline_chart(H100, [saxpy, bare, models.matmul_tiled(1024)])
    assert {p.kernel for p in chart.points} == {"saxpy", "bare", "matmul_tiled"}
    roofline.chart.plot_roofline(chart, path=tmp_path / "r.png")
    report = roofline.suite.analyze_suite(H100, [saxpy, bare])
    rows = {r.kernel: r for r in report.rows}
    assert rows["saxpy"].occupancy == 0.75 and rows["saxpy"].predicted_seconds is not None
    assert rows["saxpy"].registers_assumed is False
    assert rows["bare"].occupancy is None and rows["bare"].predicted_seconds is None
    from roofline._suite import suite_to_csv

    assert "saxpy" in suite_to_csv(report)


def test_duck_typed_kernels_are_still_accepted():
    class Model:
        name, flops, dram_bytes, l2_bytes, l1_bytes, precision = "m", 1e9, 1e9, None, None, "fp64"

    assert roofline.analyze(H100, Model()).precision == "fp64"
    with pytest.raises(TypeError, match="roofline.Kernel"):
        roofline.analyze(H100, object())
