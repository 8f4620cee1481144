"""One fuzz entry per public name: ``"package.name" -> Entry``, generated from ``__all__``.

`REGISTRY` holds every name in a package's ``__all__`` (occupancy, roofline, validate, the
repository's corpus, and the public submodules they list: roofline.models, roofline.memory,
roofline.chart, roofline.transfer, ..., any they gain), so a new public name is fuzzed from the day it lands, with nobody remembering.
Constants, error types and submodules are recognised by rule, and so are the functions that
need an open GPU session (their first parameter is ``session``: given anything else, they
must refuse). Every other name takes the strategy written for it below, next to its
neighbours (a strategy for its arguments; `model(...)` for a pydantic class; `plain(...)`
for a dataclass); a name without one is drawn from its signature or fields alone
(`by_rule`), and `test_registry.py` fails until a strategy is written for it.

`INTERNAL` fuzzes a few private functions the same way: helpers that issue 21's fuzzing
reached through the public ones (or that the command line calls directly).
"""

from __future__ import annotations

import copy
import importlib
import inspect
import itertools
import json
import math
import random
import types
from typing import Any

import numpy as np
import pydantic
from hypothesis import strategies as st

import corpus
import occupancy
import roofline
import validate
import values as v
from fuzzlib import Entry, args_kwargs, call, junk, maybe, odd, odd_floats, tiny_floats
from roofline import divergence, memory, models

REPORT = validate.ValidationReport.model_validate(json.loads(v.VALID_FILES["report_json"][1])["reports"][0])


# ------------------------------------------------------------------ entry kinds


def constant() -> Entry:
    return Entry("constant")


def error() -> Entry:
    return Entry("error")


def module() -> Entry:
    return Entry("module")


def session_call(*args: st.SearchStrategy[Any], **kw: st.SearchStrategy[Any]) -> Entry:
    """A function that needs an open GPU session, given anything else (a string, a device's
    description, junk, 0-d arrays) and the rest of its arguments as drawn: it must refuse,
    as the session check's TypeError (issue 21: AttributeError from 15 such functions)."""

    def run(target: Any, drawn: Any) -> Any:
        result = target(*drawn["args"], **drawn["kwargs"])
        raise AssertionError(f"returned a {type(result).__name__} without a GPU session")

    sessions = st.one_of(junk(), odd(), st.just(REPORT.device), st.just(validate.Session))
    return Entry("call", strategy=args_kwargs(sessions, *args, **kw), run=run,
                 reason="takes an open validate.Session (a GPU); tests/validate/test_gpu.py runs it on one")


def _mutate(sample: dict[str, Any], rnd: random.Random, replacement: Any, how: int) -> dict[str, Any]:
    data = copy.deepcopy(sample)
    keys = list(data)
    if how == 0 and keys:  # one field odd
        data[rnd.choice(keys)] = replacement
    elif how == 1 and keys:  # one field missing
        data.pop(rnd.choice(keys))
    elif how == 2:  # an unknown field
        data["no_such_field"] = replacement
    elif how == 3 and keys:  # several fields odd
        for key in rnd.sample(keys, k=min(3, len(keys))):
            data[key] = replacement
    return data


def model(cls: type, sample: Any, *, use: Any = None, finite: bool = True, json_too: bool = True) -> Entry:
    """A pydantic class: built from a valid sample with fields made odd, dropped or added,
    and (with `json_too`) read from corrupted JSON. `use(instance)` exercises a successful
    build (its arguments, e.g. a GPU's methods); `finite`: a built instance holds no NaN."""
    dumped = sample.model_dump(mode="python")
    strategy = st.one_of(
        st.builds(lambda seed, value, how: ("build", _mutate(dumped, random.Random(seed), value, how)),
                  st.integers(0, 2**16), odd(), st.integers(0, 4)),
        *([v.corrupted(sample.model_dump_json().encode()).map(lambda b: ("json", b))] if json_too else []),
    )

    def run(target: Any, drawn: Any) -> Any:
        how, data = drawn
        built = target(**data) if how == "build" else target.model_validate_json(data)
        if use is not None:
            use(built)
        return built if finite else None

    return Entry("call", strategy=strategy, run=run, pydantic=True)


def fields(cls: type) -> Entry:
    """A pydantic class without a sample (`by_rule`'s, `generic`): built from its own field
    names (and an unknown one) holding odd values, so it rarely gets past the first check;
    a clean refusal is pydantic's or the library's error."""
    names = st.sampled_from((*cls.model_fields, "no_such_field"))
    return Entry("call", strategy=st.dictionaries(names, odd(), max_size=5),
                 run=lambda target, drawn: (target(**drawn), None)[1], pydantic=True, generic=True)


def plain(strategy: st.SearchStrategy[Any]) -> Entry:
    """A plain (dataclass or protocol) class: any arguments of the right count are taken as
    given, a wrong count is Python's TypeError at the call: only the right count is drawn."""
    return Entry("call", strategy=strategy, run=lambda target, drawn: (target(*drawn), None)[1])


# ------------------------------------------------------------------ properties

POKE_VALUES = (None, True, "x", "", np.array([1, 2]), np.int64(0), 2**70, math.nan, -1, 0, 1, "fp32", "dram", (0, 0))


def poke(*calls: Any) -> None:
    """Call a result's methods with odd arguments: each returns or refuses cleanly."""
    from fuzzlib import Entry, STATS, clean_refusal, origin

    for method in calls:
        for value in POKE_VALUES:
            STATS["calls"] += 1
            try:
                method(value)
            except BaseException as exc:  # noqa: BLE001 - classifying is the point
                if not clean_refusal(exc, Entry("call")):
                    name = getattr(method, "__qualname__", repr(method))
                    raise AssertionError(
                        f"{name} with {value!r}: {type(exc).__name__} at {origin(exc)}: {exc}") from exc
                STATS["library_errors"] += 1
            else:
                STATS["results"] += 1


def _poke_gpu(g: Any, drawn: Any = None) -> None:
    poke(g.peak_flops, g.peak_derivation, g.bandwidth, g.bandwidth_derivation, g.ridge_point,
         lambda v: g.peak_flops("fp16_tensor", sparse=v), lambda v: g.ridge_point("fp32", level=v))


def _agrees_with_calculate(result: Any, drawn: Any) -> None:
    """Issue 13: cliffs disagreed with calculate (and raised IndexError) on valid launches."""
    args, kw = drawn["args"], drawn["kwargs"]
    reference = occupancy.calculate(*args, **kw)
    for resource in ("registers", "shared_memory", "threads_per_block", "barriers"):
        swept = getattr(result, resource)
        assert swept.active_blocks_per_sm == reference.active_blocks_per_sm, (resource, swept, reference)
        assert swept.minimum <= swept.value <= swept.maximum


def _occupancy_in_range(result: Any, drawn: Any) -> None:
    assert 0 <= result.occupancy <= 1 and result.active_blocks_per_sm >= 0
    assert (result.active_blocks_per_sm == 0) == (result.reason is not None)


def _many_agrees(result: Any, drawn: Any) -> None:
    """Every element of calculate_many equals calculate on the same values (first element)."""
    poke(result.limiters_at, lambda v: result.limiters_at(v, v))
    if result.occupancy.size == 0:
        return
    args, kw = drawn["args"], drawn["kwargs"]
    shape = result.shape
    scalar = {}
    for key, value in kw.items():
        if isinstance(value, np.ndarray):
            value = np.broadcast_to(value, shape).flat[0] if value.size else value
            value = int(value)
        scalar[key] = value
    if scalar.get("carveout") == -1:
        scalar["carveout"] = None
    assert occupancy.calculate(*args, **scalar).active_blocks_per_sm == int(result.active_blocks_per_sm.flat[0])


def _gpu_methods(g: roofline.GPU) -> None:
    for p in g.supported_precisions():
        assert g.peak_flops(p) > 0 and np.isfinite(g.peak_flops(p))
    for lvl in roofline.MEMORY_LEVELS:
        assert g.bandwidth(lvl) > 0 and np.isfinite(g.bandwidth(lvl))
    g.derivations()


def _architecture_computes(arch: occupancy.Architecture) -> None:
    """A custom architecture that validates must give sane occupancy (issue 13: 2**31
    barriers per SM gave -2147483648 active blocks)."""
    r = occupancy.calculate(arch, threads_per_block=arch.warp_size, registers_per_thread=0, block_barriers=1)
    assert 0 <= r.active_blocks_per_sm <= arch.max_blocks_per_sm, r


def _non_negative(result: Any, drawn: Any) -> None:
    assert result >= 0, result


def _refuses_truncation(result: Any, drawn: Any) -> None:
    """A file cut short is never read as a smaller valid one (issue 13: load_chart and CSV)."""
    assert not v.strict_prefix(drawn), "a truncated file was accepted"


# ------------------------------------------------------------------ runners for files


def file_entry(kinds: tuple[str, ...], check: Any = None, cost: float = 1.0) -> Entry:
    strategy = st.one_of(v.file_case(kinds), st.sampled_from(("missing", "folder", "odd")).map(lambda k: {"special": k}))

    def run(target: Any, drawn: Any) -> Any:
        special = drawn.get("special")
        if special == "missing":
            return target(v.fresh(".json"))
        if special == "folder":
            return target(v.TMP)
        if special == "odd":
            return target(None)
        return target(v.write_case(drawn))

    def checked(result: Any, drawn: Any) -> None:
        if "special" in drawn:
            return
        if check is not None:
            check(result, drawn)

    return Entry("call", strategy=strategy, run=run, io=True, check=checked, cost=cost)


def _chart_checks(result: Any, drawn: Any) -> None:
    _refuses_truncation(result, drawn)
    assert isinstance(result, roofline.chart.RooflineChart)


# ------------------------------------------------------------------ samples of result types

_CALC = occupancy.calculate("sm_90", threads_per_block=256, registers_per_thread=40)
_CLIFFS = occupancy.cliffs("sm_90", threads_per_block=256, registers_per_thread=40)
_CHART = roofline.chart.roofline_chart("H100-SXM", v.SMALL_MODELS[:3])
_SUITE = roofline.suite.analyze_suite("H100-SXM", v.SMALL_MODELS[:3])
_PRED = roofline.predict("H100-SXM", models.copy(1 << 20))
_TCLIFFS = roofline.cliffs.time_cliffs("H100-SXM", models.copy(1 << 20))

# ------------------------------------------------------------------ strategies of whole calls

launch_kw = dict(threads_per_block=v.threads, registers_per_thread=v.registers)


def launch_call() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries({"args": st.tuples(v.arch_spec),
                                  "kwargs": st.fixed_dictionaries(launch_kw, optional=v.LAUNCH_KW)})


valid_launch_call = st.fixed_dictionaries({
    "args": st.tuples(st.sampled_from(v.ARCH_SPECS)),
    "kwargs": st.fixed_dictionaries(
        {"threads_per_block": st.integers(1, 1024), "registers_per_thread": st.integers(0, 255)},
        optional={"static_shared_memory": st.integers(0, 4096), "dynamic_shared_memory": st.integers(0, 120_000),
                  "max_dynamic_shared_memory": st.integers(0, 100_000), "max_threads_per_block": st.integers(1, 1024),
                  "carveout": st.integers(0, 100), "block_barriers": st.integers(0, 16)}),
})

many_call = st.fixed_dictionaries({
    "args": st.tuples(v.arch_spec),
    "kwargs": st.fixed_dictionaries(
        {"threads_per_block": maybe(v.small_int_arrays(1, 1024)), "registers_per_thread": maybe(v.small_int_arrays(0, 255))},
        optional={"static_shared_memory": maybe(v.small_int_arrays(0, 4096)),
                  "dynamic_shared_memory": maybe(v.small_int_arrays(0, 100_000)),
                  "carveout": maybe(v.small_int_arrays(-1, 100)), "block_barriers": maybe(v.small_int_arrays(0, 16)),
                  "max_threads_per_block": maybe(v.small_int_arrays(1, 1024))}),
})

dyn_callables = st.sampled_from((lambda n: 0, lambda n: 4 * n, lambda n: -1, lambda n: 2**70, lambda n: 1.5,
                                 lambda n: None, lambda n: np.int64(n), lambda n: 300_000))

n_size = maybe(st.one_of(st.integers(1, 1 << 20), st.sampled_from((1, 31, 33, 2**31 - 1, 2**31, 2**40, 2**70))), 3)
block_1d = maybe(st.sampled_from((1, 32, 128, 256, 1000, 1024, 1025, 0)), 3)
block_2d = maybe(st.sampled_from(((16, 16), (32, 32), (32, 8), (1, 1), (1024, 1), (33, 32), [16, 16], (0, 4))), 3)
matrix = maybe(st.one_of(st.integers(1, 300), st.sampled_from((4096, 46341, 2**31, 2**40))), 3)


def chart_kw() -> dict[str, st.SearchStrategy[Any]]:
    return dict(
        precision=st.one_of(st.none(), v.precision),
        precisions=st.one_of(st.none(), st.lists(v.precision, max_size=3), odd()),
        levels=maybe(st.lists(v.level, max_size=3)),
        measured=st.one_of(st.none(), odd(), st.builds(
            roofline.chart.Measurements,
            ceilings=st.one_of(st.none(), st.dictionaries(v.name_key, v.any_number, max_size=3), odd()),
            points=st.one_of(st.none(), st.dictionaries(st.sampled_from(("copy", "nope", "vector_add")),
                                                        v.any_number, max_size=2), odd()),
            seconds=st.one_of(st.none(), st.dictionaries(st.sampled_from(("copy", "nope", "vector_add")),
                                                         v.any_number, max_size=2), odd()))),
        title=maybe(st.text(max_size=20)),
    )


def stop_rules() -> st.SearchStrategy[Any]:
    """Valid `validate.StopRules` of small counts (their odd values are the StopRules entry's)."""
    return st.builds(lambda warmup, repetitions, extra, budget, spread: validate.StopRules(
        warmup=warmup, repetitions=repetitions, max_repetitions=repetitions + extra, budget_seconds=budget,
        target_spread=spread), st.integers(0, 5), st.integers(1, 30), st.integers(0, 70),
        st.one_of(st.none(), st.floats(1e-4, 0.1)), st.one_of(st.none(), st.floats(1e-3, 1)))


def fake_timer() -> st.SearchStrategy[Any]:
    # Cycled: a timer that ran dry would raise StopIteration, the fake's failure, not the library's.
    # Mostly valid durations, so the loop runs with the odd counts and budgets drawn beside.
    durations = st.one_of(st.lists(st.floats(1e-6, 1e-2), min_size=1, max_size=8),
                          st.lists(st.one_of(st.floats(1e-6, 1e-2), odd_floats(), junk()), min_size=1, max_size=8))
    return durations.map(lambda seq: (lambda f, it=itertools.cycle(seq): (f(), next(it))[1]))


def make_reports() -> st.SearchStrategy[Any]:
    return st.one_of(junk(), st.just(REPORT.model_copy(update={"prediction": None})), st.just(REPORT))


def device_infos() -> st.SearchStrategy[Any]:
    base = REPORT.device.model_dump()
    return st.one_of(
        st.just(REPORT.device),
        st.builds(lambda name, cc, sms: validate.DeviceInfo(**{**base, "name": name, "compute_capability": cc,
                                                               "sm_count": sms}),
                  st.sampled_from(("NVIDIA H100 80GB HBM3", "NVIDIA A100", "Some GPU", "NVIDIA H200", "")),
                  st.sampled_from(("9.0", "8.0", "12.0", "3.5", "99.9")), st.integers(1, 200)),
        junk(),
    )


# ------------------------------------------------------------------ the registry

OCCUPANCY = {
    "Architecture": model(occupancy.Architecture, occupancy.architecture("sm_90"), use=_architecture_computes),
    "BlockSizeResult": model(occupancy.BlockSizeResult, occupancy.max_potential_block_size("sm_90", registers_per_thread=32),
                             finite=False),
    "Cliffs": model(occupancy.Cliffs, _CLIFFS, finite=False),
    "OccupancyArrays": plain(st.tuples(*[odd()] * 14)),
    "OccupancyResult": model(occupancy.OccupancyResult, _CALC, finite=False),
    "ResourceCliffs": model(occupancy.ResourceCliffs, _CLIFFS.registers, finite=False),
    "Threshold": model(occupancy.Threshold, _CLIFFS.registers.thresholds[0], finite=False),
    "architecture": call(args_kwargs(v.arch_spec)),
    "architectures": call(args_kwargs()),
    "available_dynamic_shared_memory": call(st.fixed_dictionaries({
        "args": st.tuples(v.arch_spec),
        "kwargs": st.fixed_dictionaries(
            {"registers_per_thread": v.registers, "num_blocks": maybe(st.integers(1, 32)), "threads_per_block": v.threads},
            optional={"static_shared_memory": v.static_smem, "max_dynamic_shared_memory": v.max_dynamic,
                      "carveout": v.carveout, "block_barriers": v.barriers, "match_driver": maybe(st.booleans())}),
    }), check=_non_negative),
    "calculate": call(st.one_of(launch_call(), valid_launch_call), check=_occupancy_in_range),
    "calculate_many": call(many_call, check=_many_agrees),
    "cliffs": call(st.one_of(launch_call(), valid_launch_call), check=_agrees_with_calculate, cost=2),
    "load_architecture": file_entry(("arch_json", "arch_toml", "gpu_json")),
    "max_potential_block_size": call(st.fixed_dictionaries({
        "args": st.tuples(v.arch_spec),
        "kwargs": st.fixed_dictionaries(
            {"registers_per_thread": v.registers},
            optional={"static_shared_memory": v.static_smem,
                      "dynamic_shared_memory": st.one_of(v.dynamic_smem, dyn_callables),
                      "max_dynamic_shared_memory": v.max_dynamic, "max_threads_per_block": v.max_threads,
                      "sm_count": maybe(st.integers(1, 200)), "carveout": v.carveout, "block_barriers": v.barriers}),
    })),
    "plot_occupancy": call(st.fixed_dictionaries({
        "args": st.tuples(v.arch_spec),
        "kwargs": st.fixed_dictionaries(launch_kw, optional={**v.LAUNCH_KW,
                                                              "path": v.out_paths((".png", ".svg", ".pdf", ".jpg"))}),
    }), io=True, cost=25),
}

ROOFLINE = {
    "ArchRates": model(roofline.ArchRates, roofline.arch_rates("9.0")),
    "Calibration": model(roofline.Calibration, roofline.calibration("H200"),
                         use=lambda c: roofline.predict("H200", models.copy(1 << 16), calibration=c)),
    "Derivation": model(roofline.Derivation, roofline.gpu("H200").peak_derivation("fp32"), finite=False),
    "GPU": model(roofline.GPU, roofline.gpu("H100-SXM"), use=lambda g: (_gpu_methods(g), _poke_gpu(g))),
    "HostLink": model(roofline.HostLink, roofline.gpu("H100-SXM").host_link),
    "Prediction": model(roofline.Prediction, _PRED, finite=False),
    "RooflineArrays": plain(st.tuples(*[odd()] * 6)),
    "RooflineResult": model(roofline.RooflineResult, roofline.analyze("H100-SXM", models.copy(1024)), finite=False),
    "analyze": call(args_kwargs(v.gpu_any, v.kernel_like, st.one_of(st.none(), v.precision)),
                    allow_inf=frozenset({"arithmetic_intensity", "dram", "l2", "l1"})),
    "analyze_many": call(args_kwargs(
        v.gpu_any, flops=maybe(st.one_of(st.floats(0, 1e15), st.lists(st.floats(0, 1e15), max_size=4))),
        dram_bytes=maybe(st.one_of(st.floats(1, 1e12), st.lists(st.floats(1, 1e12), max_size=4))),
        l2_bytes=st.one_of(st.none(), maybe(st.floats(0, 1e12))), l1_bytes=st.one_of(st.none(), maybe(st.floats(0, 1e12))),
        precision=v.precision,
    ).map(lambda d: {"args": d["args"], "kwargs": {"flops": 1e9, "dram_bytes": 1e9, **d["kwargs"]}}),
        allow_inf=frozenset({"arithmetic_intensity"})),
    "arch_rates": call(args_kwargs(maybe(st.sampled_from(("9.0", "90", "sm_90", (8, 0), "8.6", "1.0", "sm_9x", (9, 0, 1)))))),
    "attainable": call(args_kwargs(
        maybe(st.one_of(st.floats(0, 1e6), st.just(np.inf), st.lists(st.floats(0, 1e6), max_size=4))),
        peak_flops_per_second=maybe(st.floats(1, 1e16)), memory_bandwidth=maybe(st.floats(1, 1e13)),
    ).map(lambda d: {"args": d["args"], "kwargs": {"peak_flops_per_second": 1e12, "memory_bandwidth": 1e9,
                                                     **d["kwargs"]}})),
    "calibration": call(args_kwargs(v.gpu_any)),
    "custom_gpu": call(st.builds(
        lambda seed, value, how: {"kwargs": _mutate({"name": "toy", "compute_capability": "8.0", "sm_count": 10,
                                                     "boost_clock_hz": 1e9, "dram_bytes_per_second": 100e9,
                                                     "peak_overrides": {"fp32": 1e12}}, random.Random(seed), value, how)},
        st.integers(0, 2**16), odd(), st.integers(0, 4)), check=lambda g, d: _gpu_methods(g)),
    "gpu": call(args_kwargs(v.gpu_any), check=_poke_gpu),
    "gpus": call(args_kwargs(st.one_of(st.none(), v.gpu_name))),
    "load_calibration": file_entry(("calibration_json", "report_json", "chart_json")),
    "load_gpu": file_entry(("gpu_toml", "gpu_json", "arch_toml")),
    "measured_launch": call(args_kwargs(
        st.one_of(v.grid3, maybe(st.integers(1, 4096))), st.one_of(v.block3, maybe(st.integers(1, 1024))),
        registers_per_thread=st.one_of(st.none(), maybe(st.integers(0, 255))),
        static_shared_memory=st.one_of(st.none(), maybe(st.integers(0, 48 * 1024))),
        dynamic_shared_memory=st.one_of(st.none(), maybe(st.integers(0, 300_000))),
        block_barriers=maybe(st.integers(1, 16)),
    )),
    "counted_kernel": call(args_kwargs(
        st.one_of(v.kernel_model, v.kernel_like, st.deferred(lambda: st.just(_NCU.kernels[0]))), st.one_of(st.none(), v.launch_like),
    )),
    "predict": call(args_kwargs(
        v.gpu_any, st.one_of(v.kernel_model, v.kernel_like), st.one_of(st.none(), v.launch_like),
        calibration=st.one_of(st.none(), v.calibrations()), loads_in_flight_per_thread=st.one_of(st.none(), maybe(st.integers(1, 16))),
        fma_chains_per_thread=maybe(st.integers(1, 8)), after_l2_flush=maybe(st.booleans()),
        measured=st.one_of(st.none(), st.deferred(lambda: st.just(_NCU.kernels[0].measured)), junk()),
    )),
}

MODELS = {
    "aos": call(args_kwargs(n_size, block=block_1d)),
    "blur": call(args_kwargs(maybe(st.integers(1, 300)), maybe(st.integers(1, 300)),
                             radius=maybe(st.integers(0, 4)), block=block_2d), cost=2),
    "copy": call(args_kwargs(n_size, block=block_1d)),
    "get": call(st.builds(lambda name, params: {"args": (name,), "kwargs": params},
                          maybe(st.sampled_from(models.names() + ("nope", "Copy"))),
                          st.dictionaries(st.sampled_from(("n", "m", "block", "tile", "stride", "offset", "radius",
                                                           "width", "height", "variant", "rows", "bogus")),
                                          maybe(st.integers(1, 4096)), max_size=3))),
    "matmul_naive": call(args_kwargs(matrix, st.one_of(st.none(), matrix), st.one_of(st.none(), matrix), block=block_2d)),
    "matmul_register_tiled": call(args_kwargs(*[maybe(st.one_of(st.sampled_from((8, 128, 256, 384, 4096, 2**31 - 1)),
                                                                 st.integers(1, 300)), 3)] * 3), cost=2),
    "matmul_tiled": call(args_kwargs(matrix, st.one_of(st.none(), matrix), st.one_of(st.none(), matrix),
                                     tile=maybe(st.integers(1, 32)))),
    "names": call(args_kwargs()),
    "offset_read": call(args_kwargs(n_size, maybe(st.integers(0, 64)), block=block_1d)),
    "offset_write": call(args_kwargs(n_size, maybe(st.integers(0, 64)), block=block_1d)),
    "reduction": call(args_kwargs(n_size, block=block_1d)),
    "soa": call(args_kwargs(n_size, block=block_1d)),
    "strided_read": call(args_kwargs(n_size, maybe(st.integers(1, 64)), block=block_1d)),
    "strided_write": call(args_kwargs(n_size, maybe(st.integers(1, 64)), block=block_1d)),
    "suite": call(args_kwargs()),
    "transpose": call(args_kwargs(matrix, st.one_of(st.none(), matrix),
                                  variant=maybe(st.sampled_from(models.TRANSPOSE_VARIANTS)), block=block_2d,
                                  pad=st.one_of(st.none(), maybe(st.integers(0, 40))))),
    "triad": call(args_kwargs(n_size, scalar=maybe(st.floats(-10, 10)), block=block_1d)),
    "vector_add": call(args_kwargs(n_size, block=block_1d)),
}

MEMORY = {
    "BankConflicts": model(memory.BankConflicts, memory.bank_conflicts(memory.warp_addresses(stride=2)), finite=False),
    "WarpTransactions": model(memory.WarpTransactions, memory.warp_transactions(memory.warp_addresses(offset=3)),
                              finite=False),
    "bank_conflicts": call(args_kwargs(
        st.one_of(st.lists(maybe(st.integers(0, 1 << 20)), min_size=0, max_size=34), numpy_like := st.builds(
            lambda s, o: memory.warp_addresses(stride=s, offset=o), st.integers(0, 40), st.integers(0, 64)), junk()),
        maybe(st.sampled_from((1, 2, 4, 8, 16))), active=st.one_of(st.none(), st.lists(st.booleans(), max_size=32), junk()))),
    "warp_addresses": call(args_kwargs(
        offset=maybe(st.integers(0, 1 << 20)), stride=maybe(st.integers(0, 64)), element_bytes=maybe(st.sampled_from((1, 4, 8, 16))),
        field_offset_bytes=maybe(st.integers(0, 16)), base_bytes=maybe(st.integers(0, 1 << 30)), lanes=maybe(st.integers(1, 32)))),
    "warp_transactions": call(args_kwargs(
        st.one_of(st.lists(st.one_of(maybe(st.integers(0, 1 << 20)), st.none(), st.just(np.nan)), max_size=34),
                  numpy_like, junk()),
        maybe(st.sampled_from((1, 2, 4, 8, 16))), maybe(st.sampled_from(("load", "store"))), maybe(st.booleans()),
        active=st.one_of(st.none(), st.lists(st.booleans(), max_size=32), junk()))),
}

DIVERGENCE = {
    "BoundaryDivergence": model(divergence.BoundaryDivergence, divergence.boundary_divergence((76, 62), (16, 16)),
                                finite=False),
    "boundary_divergence": call(args_kwargs(
        maybe(st.one_of(st.integers(1, 10_000), st.tuples(st.integers(1, 5000), st.integers(1, 5000)),
                        st.sampled_from((2**31 * 1024, 2**70, (1, 65536 * 64), (5, 5, 5, 5))))),
        maybe(st.sampled_from((256, (16, 16), (32, 32), (8, 8, 8), (1, 1, 65), 1025, (1024, 1, 1), (0,)))))),
    "BranchDivergence": model(divergence.BranchDivergence, divergence.branch_divergence(list(range(64))),
                              finite=False),
    "branch_divergence": call(args_kwargs(st.one_of(
        st.lists(st.integers(-3, 3), max_size=1100), st.lists(st.booleans(), max_size=40),
        st.sampled_from(([[1, 2]], [0.5], "ab", [2**70], [None])), junk()))),
}

VALIDATE = {
    "DeviceComparison": model(validate.DeviceComparison, REPORT.comparison, finite=False),
    "DeviceInfo": model(validate.DeviceInfo, REPORT.device, finite=False),
    "PredictionCheck": model(validate.PredictionCheck, REPORT.prediction, finite=False),
    "Session": call(args_kwargs(maybe(st.integers(0, 3)))),
    "TimingResult": model(validate.TimingResult, REPORT.ceilings.items[0].timing, finite=False),
    "ValidationReport": model(validate.ValidationReport, REPORT, finite=False),
    "ValidationRun": plain(st.tuples(odd(), odd())),
    "benchmark": call(st.builds(
        lambda timer, kw: {"args": (lambda: None,), "kwargs": {"timer": timer, **kw}},
        # A callable that raises is the caller's exception to see: only non-callables as junk.
        st.one_of(fake_timer(), junk().filter(lambda x: not callable(x))),
        st.fixed_dictionaries({}, optional={"rules": st.one_of(st.none(), stop_rules(), junk()),
                                            "launches_per_sample": maybe(st.integers(1, 4)),
                                            "flush": st.one_of(st.none(), st.just(lambda: None),
                                                               junk().filter(lambda x: not callable(x)))}))),
    "StopRules": model(validate.StopRules, validate.StopRules(repetitions=10, target_spread=0.02, budget_seconds=0.5)),
    "compare_device": call(args_kwargs(device_infos())),
    "open_session": call(args_kwargs(maybe(st.integers(0, 3)))),
    "render_markdown": call(args_kwargs(make_reports(), level=maybe(st.sampled_from((1, 2, 4, 5, 0, -1, (1, 2), 2**70))),
                                        assets=maybe(st.sampled_from(("", "h100/", "a b/"))))),
    "run_prediction_check": session_call(v.gpu_any),
    "run_validation": call(args_kwargs(
        out=st.one_of(st.none(), v.out_folders()), quick=maybe(st.booleans()),
        kernels=st.one_of(st.none(), st.lists(maybe(st.sampled_from(("copy", "transpose", "nope"))), max_size=2), junk()),
        device=maybe(st.integers(0, 3)), seed=st.one_of(st.none(), maybe(st.integers(0, 2**32))),
        progress=st.one_of(st.just(lambda m: None), junk())), io=True),
    "write_prediction_report": call(args_kwargs(st.one_of(junk(), st.just(REPORT.prediction)), v.out_folders()),
                                    io=True, cost=30),
}

# ------------------------------------------------------------------ names main gained beside issue 13

_GPC = roofline.gpc_layouts()
_CLUSTERS = occupancy.max_active_clusters(roofline.gpc_layout("H100-SXM"), cluster_size=2, threads_per_block=128,
                                          registers_per_thread=32)
_CLUSTER_SIZE = occupancy.max_potential_cluster_size(roofline.gpc_layout("H100-SXM"), threads_per_block=128,
                                                     registers_per_thread=32)
_NCU = roofline.load_ncu(v.ROOT / "tests/data/ncu/user_kernels.raw.csv")
_PROFILE = roofline.profile_report(_NCU, gpu="H200")
_MEASURED = roofline.measured_ceilings("H200")
_INFO = models.describe("transpose")
_INSTRUCTIONS = roofline.instructions.instruction_roofline(_PROFILE)
_CLUSTER_CLIFFS = occupancy.cliffs("sm_90", threads_per_block=128, registers_per_thread=32,
                                   gpu=roofline.gpc_layout("H100-SXM"), cluster_size=2).cluster_size
_OCC_LAUNCH = occupancy.Launch(grid=4096, block=256, registers_per_thread=32)
_ACCESS = roofline.memory.Access(array="x", index=lambda c: c.block_x * 256 + c.thread_x, kind="load")
_SET = validate.ReportSet(created_utc=REPORT.created_utc, reports=(REPORT,))
_SASS_COUNTS = occupancy.SassCounts(total=40, global_loads=4, global_stores=4, branches=1)
_SASS = occupancy.SassSummary(
    architecture="sm_90", disassembler="nvdisasm 13.5.37", instructions=_SASS_COUNTS,
    loops=(occupancy.SassLoop(start_offset=0xD0, end_offset=0x220, depth=1, instructions=_SASS_COUNTS,
                              global_loads_in_flight=4),),
    hot_loop=0, global_loads_in_flight_per_thread=4, global_load_bytes=16,
    global_load_bytes_in_flight_per_thread=64, global_load_instruction="LDG.E.128")


def _corpus_sample() -> corpus.CorpusProject:
    """A corpus project made of the suite profile's first launches (tests/data/ncu, this project's kernels)."""
    import csv

    with open(v.ROOT / "tests/data/ncu/suite.raw_base.csv", newline="") as handle:
        rows = list(csv.reader(handle))
    header, units = rows[0], rows[1]
    launches = []
    for row in rows[2:4]:
        kept = corpus.corpus_metrics(dict(zip(header, row)))
        launches.append(dict(shape=row[header.index("Kernel Name")], grid=(1, 1, 1), block=(256, 1, 1),
                             duration_median_seconds=2e-4, duration_spread=0.01, repetitions=20, ncu=kept))
    kept_units = {h: u for h, u in zip(header, units) if corpus.corpus_metrics({h: 0})}
    return corpus.CorpusProject(project="suite", url="tests/data/ncu", commit="-", license="-", gpu="NVIDIA H200",
                                  ncu_units=kept_units, kernels=[dict(id="suite/k", name="k", category="streaming",
                                                                      sass=_SASS, launches=launches)])


_CORPUS = _corpus_sample()
_CORPUS_REPORT = corpus.corpus_report((_CORPUS,), gpu="h200")

cluster_sizes = maybe(st.one_of(st.integers(1, 16), st.sampled_from(((2, 1, 1), (4, 2, 1), (1, 1, 17), (0,), 32))), 3)
cluster_kw = dict(registers_per_thread=v.registers, static_shared_memory=v.static_smem,
                  dynamic_shared_memory=v.dynamic_smem, carveout=v.carveout,
                  non_portable_cluster_size_allowed=maybe(st.booleans()),
                  scheduling_policy=maybe(st.sampled_from(occupancy.SCHEDULING_POLICIES)))
gpc_names = maybe(st.sampled_from((*(g.name for g in _GPC), "H100", "A100-SXM4-40GB", "nope")))
# the cluster functions take a layout: the packaged ones, one that is no GpcLayout, or a name
gpc_layouts = maybe(st.sampled_from((*_GPC, "H200")))
kernel_files = st.one_of(
    junk(), st.just("no-such-file.cu"),
    st.builds(lambda suffix, data: (lambda p: (p.write_bytes(data), p)[1])(v.fresh(suffix)),
              st.sampled_from((".cu", ".cubin", ".ptx", ".fatbin", ".o", ".so", ".txt")),
              st.one_of(st.binary(max_size=64), st.just(b"\x7fELF" + bytes(60)),
                        st.just(b"__global__ void k(float *x) { x[0] = 1; }"), st.just(b"__global__ void k( {"))))

# Two records of `gpuroof resources --json`: a kernel whose registers rose from 32 to 40.
_GATE_ROW = {"arch": "sm_90", "resources": {"kernel": "k", "registers_per_thread": 32, "spill_store_bytes": 0,
                                            "spill_load_bytes": 0},
             "occupancy": {"occupancy": 1.0, "threads_per_block": 256, "limiters": ["warps"]}}
_GATE_ROWS = [_GATE_ROW, {**_GATE_ROW, "arch": "sm_80"}]
_GATE_WORSE = [{**_GATE_ROW, "resources": {**_GATE_ROW["resources"], "registers_per_thread": 40}}]
_GATE = occupancy.compare_resources(_GATE_ROWS, _GATE_WORSE)
_LINES = occupancy.KernelLines(kernel="k", architecture="sm_90", registers_per_thread=32, peak_live_registers=30,
                               tool="nvdisasm", lines=(occupancy.SourceLine(
                                   file="k.cu", line=3, instructions=10, peak_live_registers=30, local_stores=2,
                                   local_loads=2, local_store_bytes=8, local_load_bytes=8),))
# Compiler options: none, valid ones, or of the wrong type (issue 21: options=None escaped).
compile_options = st.one_of(st.just(()), st.just(["-DN=4"]), st.none(), junk())
gate_rows = st.one_of(st.just(_GATE_ROWS), st.just(_GATE_WORSE), junk(), st.lists(st.one_of(st.just(_GATE_ROW), junk()),
                                                                                   max_size=3))

OCCUPANCY.update({
    "KernelLines": model(occupancy.KernelLines, _LINES),
    "SourceLine": model(occupancy.SourceLine, _LINES.lines[0]),
    "source_lines": call(args_kwargs(kernel_files, arch=maybe(st.sampled_from(("sm_90", "sm_80"))),
                                     kernel=maybe(st.sampled_from(("k", "nope"))), options=compile_options),
                         io=True, cost=5),
    "ResourceChange": model(occupancy.ResourceChange, _GATE.changes[-1]),
    "ResourceComparison": model(occupancy.ResourceComparison, _GATE, use=str),
    "compare_resources": call(args_kwargs(gate_rows, gate_rows, tolerance=maybe(st.sampled_from(
        ({"registers": 8}, {"occupancy": 0.25}, {"nope": 1}, {"spills": -1}))))),
    "kernel_resources_by_architecture": call(args_kwargs(kernel_files, maybe(st.sampled_from((["sm_90"], "sm_80"))),
                                                         kernel=maybe(st.sampled_from(("k", "nope"))),
                                                         options=compile_options),
                                             io=True, cost=5),
    "ClusterCliffs": model(occupancy.ClusterCliffs, _CLUSTER_CLIFFS, finite=False),
    "ClusterOccupancy": model(occupancy.ClusterOccupancy, _CLUSTERS, finite=False),
    "ClusterPoint": model(occupancy.ClusterPoint, _CLUSTER_CLIFFS.points[0]),
    "ClusterSizeResult": model(occupancy.ClusterSizeResult, _CLUSTER_SIZE, finite=False),
    "DriverConfiguration": model(occupancy.DriverConfiguration, _CALC.driver),
    "GpcLayout": model(occupancy.GpcLayout, _GPC[0], finite=False),
    "KernelResources": model(occupancy.KernelResources, REPORT.kernels[0].resources, finite=False),
    "Launch": model(occupancy.Launch, _OCC_LAUNCH, json_too=False,
                    use=lambda launch: (occupancy.calculate("sm_90", launch=launch),
                                        roofline.predict("H100-SXM", models.copy(1 << 20), launch))),
    "SassCounts": model(occupancy.SassCounts, _SASS_COUNTS),
    "SassLoop": model(occupancy.SassLoop, _SASS.loops[0]),
    "SassSummary": model(occupancy.SassSummary, _SASS, use=str),
    "read_sass": call(args_kwargs(st.one_of(st.sampled_from((
        "\tcode for sm_90\n\t\tFunction : k\n /*0000*/ LDG.E R2, desc[UR4][R2.64] ;\n /*0010*/ @!P0 BRA 0x0 ;\n",
        ".section .text.k\n /*0000*/ EXIT ;\n", "Function : k\n", "")), st.text(max_size=40), junk()),
        maybe(st.sampled_from(("sm_90", "sm_80", None, "nope"))))),
    "all_kernel_resources": call(args_kwargs(kernel_files, arch=maybe(st.sampled_from(("sm_90", "sm_80"))),
                                             options=compile_options),
                                 io=True, cost=5),
    "kernel_resources": call(args_kwargs(kernel_files, arch=maybe(st.sampled_from(("sm_90", "sm_80"))),
                                         kernel=maybe(st.sampled_from(("k", "nope"))), options=compile_options),
                             io=True, cost=5),
    "file_cubin": call(args_kwargs(kernel_files, st.one_of(st.sampled_from(("sm_90", "sm_80", "sm_1")), junk()),
                                   options=compile_options,
                                   compiler=st.one_of(st.sampled_from(("auto", "nvcc", "nvrtc", "gcc")), junk())),
                       io=True, cost=5),
    "max_active_clusters": call(st.fixed_dictionaries({"args": st.tuples(gpc_layouts), "kwargs": st.fixed_dictionaries(
        {"cluster_size": cluster_sizes, "threads_per_block": v.threads}, optional=cluster_kw)})),
    "max_potential_cluster_size": call(st.fixed_dictionaries({"args": st.tuples(gpc_layouts), "kwargs": st.fixed_dictionaries(
        {"threads_per_block": v.threads}, optional=cluster_kw)})),
})

ROOFLINE.update({
    "Kernel": model(roofline.Kernel, models.copy(1024), json_too=False,
                    use=lambda k: (roofline.analyze("H100-SXM", k), poke(k.bytes_at))),
    "MeasuredCeiling": model(roofline.MeasuredCeiling, next(iter(_MEASURED.values())), finite=False),
    "gpc_layout": call(args_kwargs(st.one_of(gpc_names, st.sampled_from(_GPC)))),
    "gpc_layouts": call(args_kwargs()),
    "NcuKernel": model(roofline.NcuKernel, _NCU.kernels[0], finite=False),
    "NcuProfile": model(roofline.NcuProfile, _NCU, finite=False, json_too=False),
    "ProfileCounts": model(roofline.ProfileCounts, _NCU.kernels[0].measured, finite=False),
    "ProfileKernel": model(roofline.ProfileKernel, _PROFILE.kernels[0], finite=False),
    "ProfileReport": model(roofline.ProfileReport, _PROFILE, finite=False, json_too=False),
    "nsight_calibration": call(args_kwargs(v.gpu_any, st.one_of(st.none(), v.calibrations(), junk()))),
    "Traffic": model(roofline.Traffic, roofline.memory.traffic(4, 256, [_ACCESS]), finite=False),
    "format_profile_report": call(args_kwargs(st.one_of(st.just(_PROFILE), junk()), markdown=maybe(st.booleans()))),
    "load_ncu": file_entry(("ncu_raw_csv", "ncu_csv", "chart_csv"), cost=3),
    "measured_ceilings": call(args_kwargs(v.gpu_any)),
    "profile_report": call(args_kwargs(st.one_of(st.just(_NCU), junk()), gpu=st.one_of(st.none(), v.gpu_any),
                                       kernel=st.one_of(st.none(), maybe(st.sampled_from(
                                           tuple(k.name for k in _NCU.kernels[:2]) + ("nope",)))),
                                       calibration=st.one_of(st.none(), v.calibrations()),
                                       after_l2_flush=maybe(st.booleans())),
                           allow_inf=frozenset({"arithmetic_intensity"})),
})

CHART = {
    "profile_chart": call(args_kwargs(st.one_of(st.just(_PROFILE), junk()), title=maybe(st.text(max_size=10))),
                          allow_inf=frozenset({"arithmetic_intensity"})),
    "BandwidthPoint": model(roofline.chart.BandwidthPoint, _CHART.bandwidth_points[0]),
    "Ceiling": model(roofline.chart.Ceiling, _CHART.ceilings[0]),
    "ChartPoint": model(roofline.chart.ChartPoint, _CHART.points[0]),
    "Measurements": plain(st.tuples(odd(), odd(), odd())),
    "RooflineChart": model(roofline.chart.RooflineChart, _CHART),
    "load_chart": file_entry(("chart_json", "chart_csv", "calibration_json"), check=_chart_checks),
    "plot_roofline": call(st.one_of(
        args_kwargs(st.one_of(v.charts(), v.gpu_any), st.one_of(st.just(()), st.lists(v.kernel_like, max_size=2)),
                    path=st.one_of(st.none(), v.out_paths((".png", ".svg", ".pdf", ".jpg"))),
                    dpi=maybe(st.sampled_from((50, 72, 100))), knee_sharpness=st.one_of(st.none(), maybe(st.floats(0.5, 8))),
                    ax=st.one_of(st.none(), junk())),
    ), io=True, cost=12),
    "roofline_chart": call(st.fixed_dictionaries({
        "args": st.tuples(v.gpu_any, st.one_of(st.lists(v.kernel_like, max_size=3), junk())),
        "kwargs": st.fixed_dictionaries({}, optional=chart_kw())}),
        check=lambda chart, d: poke(chart.ceiling, lambda v: chart.ceiling("fp32", v))),
    "save_chart": call(args_kwargs(st.one_of(v.charts(), junk()), v.out_paths((".json", ".csv", ".txt"))), io=True),
}

CLIFFS = {
    "TimeCliff": model(roofline.cliffs.TimeCliff, _TCLIFFS.cliffs[0], finite=False),
    "TimeCliffs": model(roofline.cliffs.TimeCliffs, _TCLIFFS, finite=False),
    "time_cliffs": call(args_kwargs(v.gpu_any, v.kernel_model, st.one_of(st.none(), v.launch_like),
                                    calibration=st.one_of(st.none(), v.calibrations())), cost=8,
                        check=lambda tc, d: poke(tc.worst)),
}

INSTRUCTIONS = {
    "InstructionCeiling": model(roofline.instructions.InstructionCeiling, _INSTRUCTIONS.ceilings[0]),
    "InstructionPoint": model(roofline.instructions.InstructionPoint, _INSTRUCTIONS.points[0]),
    "InstructionRoofline": model(roofline.instructions.InstructionRoofline, roofline.instructions.instruction_roofline(_PROFILE), finite=False),
    "instruction_roofline": call(args_kwargs(st.one_of(st.just(_PROFILE), junk()),
                                             sm_clock_hz=st.one_of(st.none(), maybe(st.floats())))),
}

MEMORY.update({
    # Its index is a function: no JSON, and a built one is checked by counting its traffic.
    "Access": model(roofline.memory.Access, _ACCESS, json_too=False, finite=False,
                    use=lambda a: roofline.memory.traffic(4, 256, [a])),
    "Coords": plain(st.tuples(*[odd()] * 9)),
    "Locality": model(roofline.memory.Locality, roofline.memory.locality("H200")),
    "MemorySpace": model(roofline.memory.MemorySpace, roofline.memory.memory_space("shared")),
    "locality": call(args_kwargs(v.gpu_any)),
    "memory_space": call(args_kwargs(maybe(st.sampled_from(("register", "local", "shared", "constant", "texture",
                                                            "global", "L2"))))),
    "memory_spaces": call(args_kwargs()),
    "loads_per_thread": call(args_kwargs(
        st.one_of(st.floats(0, 1e15), st.integers(0, 1 << 70), st.sampled_from((-1, np.nan, np.inf, 10**400)), junk()),
        st.one_of(st.integers(1, 1 << 40), st.sampled_from((0, -3, True, 2**64, 10**400)), junk()),
        maybe(st.one_of(st.sampled_from((1, 2, 4, 8, 16)), st.floats(-1, 32), junk())))),
    "sass_loads_per_thread": call(args_kwargs(
        st.one_of(st.none(), st.just(_SASS), junk()),
        load_bytes=maybe(st.one_of(st.floats(0, 1e15), st.sampled_from((-1, np.nan, np.inf)), junk())),
        threads=maybe(st.one_of(st.integers(1, 1 << 40), st.sampled_from((0, -3, True)), junk())))),
    "traffic": call(args_kwargs(maybe(st.sampled_from((4, (4, 2), (2**31, 1, 1), (65536 * 64, 1), 0))),
                                maybe(st.sampled_from((256, (16, 16), (1025,), 0))),
                                st.one_of(st.just([_ACCESS]), st.just([]), st.lists(junk(), max_size=2), junk()),
                                exhaustive=maybe(st.booleans())), cost=2),
})

SUITE = {
    "DemoResources": model(roofline.suite.DemoResources, roofline.suite.demo_resources()),
    "SuiteReport": model(roofline.suite.SuiteReport, _SUITE, finite=False),
    "SuiteRow": model(roofline.suite.SuiteRow, _SUITE.rows[0], finite=False),
    "analyze_suite": call(args_kwargs(v.gpu_any, st.one_of(st.lists(v.kernel_like, max_size=4), st.none(), junk())),
                          allow_inf=frozenset({"arithmetic_intensity", "dram", "l2", "l1"}), cost=3),
    "demo_kernels": call(args_kwargs(v.gpu_any, compiled=maybe(st.booleans())), cost=8),
    "demo_resources": call(args_kwargs()),
    "format_suite_table": call(args_kwargs(st.one_of(st.just(_SUITE), junk()))),
    # Junk first: the whole write (tests/fuzz/test_files.py covers it) costs seconds.
    "write_suite_report": call(args_kwargs(st.one_of(junk(), st.just(_SUITE)), v.out_folders()), io=True, cost=40),
}

def _with_rules_off(target: Any, drawn: Any) -> None:
    """Enter and leave the ``with`` block: a rule left off would change every later call."""
    with target(drawn):
        pass


TERMS = {
    "RULES": constant(),
    "Rule": plain(st.tuples(st.text(max_size=8), st.text(max_size=8), st.sampled_from(("probe", "corpus")),
                            st.text(max_size=8), st.text(max_size=8))),
    "Term": model(roofline.terms.Term, _PRED.terms[0], finite=False),
    "disabled": Entry("call", strategy=st.one_of(st.just(("term_dram",)), st.lists(st.text(max_size=6), max_size=2),
                                                 st.sampled_from(("term_dram", b"x")), junk()), run=_with_rules_off),
    "achieved_bandwidth": call(args_kwargs(
        maybe(st.one_of(st.floats(0, 1e12), st.lists(st.floats(0, 1e12), max_size=4))),
        peak_bytes_per_second=maybe(st.floats(1e9, 1e13)), latency_seconds=maybe(st.floats(1e-9, 1e-5)),
        knee_sharpness=maybe(st.floats(0.5, 8)), dispatch_bytes_per_second=maybe(st.floats(1e9, 1e14)),
    ).map(lambda d: {"args": d["args"], "kwargs": {"peak_bytes_per_second": 3e12, "latency_seconds": 6e-7,
                                                     "knee_sharpness": 4, **d["kwargs"]}})),
    "bound_counts": call(args_kwargs(st.one_of(st.just(models.copy(1 << 20)), v.kernel_like, junk()),
                                     st.one_of(st.just(_PRED.terms), st.just(()), st.lists(junk(), max_size=2), junk()))),
    "dram_equivalent_bytes": call(args_kwargs(st.one_of(v.kernel_like, junk()),
                                              st.one_of(v.calibrations(), st.none(), junk()))),
    "dram_roof": call(args_kwargs(v.gpu_any, st.one_of(v.calibrations(), st.none(), junk()),
                                  maybe(st.one_of(st.floats(0, 1e12), tiny_floats())),
                                  st.one_of(st.none(), maybe(st.floats(0, 1e12)), tiny_floats()))),
    "instructions_from_sass": call(args_kwargs(st.one_of(st.just(_SASS), junk()), st.one_of(v.kernel_like, junk()),
                                               st.one_of(st.none(), st.just(_OCC_LAUNCH), junk()))),
    "l2_bytes_with_l1_reuse": call(args_kwargs(st.one_of(v.kernel_like, junk()), st.one_of(st.none(), junk()),
                                               st.one_of(st.none(), junk()))),
    "mixed_dram_bandwidth": call(args_kwargs(
        maybe(st.one_of(st.floats(0, 1e12), tiny_floats())), st.one_of(st.none(), maybe(st.floats(0, 1e12)), tiny_floats()),
        copy_bytes_per_second=maybe(st.one_of(st.floats(1, 1e13), tiny_floats())),
        read_bytes_per_second=st.one_of(st.none(), maybe(st.floats(1, 1e13)), tiny_floats()),
    ).map(lambda d: {"args": d["args"], "kwargs": {"copy_bytes_per_second": 4e12, "read_bytes_per_second": None,
                                                     **d["kwargs"]}})),
    "overlap": call(args_kwargs(maybe(st.floats(0, 1e3)), maybe(st.floats(0, 1e3)),
                                st.one_of(st.none(), maybe(st.floats(1, 64))))),
}

_WINDOWS = st.builds(lambda size, ratio: roofline.transfer.AccessPolicyWindow(num_bytes=size, hit_ratio=ratio),
                     st.integers(1, 1 << 30), st.floats(0, 1))
_WINDOW_TRAFFIC = st.builds(
    lambda reads, other, dram, l2: roofline.transfer.WindowTraffic(
        window_reads_bytes=reads, other_bytes=other, dram_bytes_per_second=dram, l2_bytes_per_second=l2),
    st.integers(1, 1 << 34), st.integers(0, 1 << 36), st.floats(1e9, 1e13), st.one_of(st.none(), st.floats(1e9, 1e14)))

TRANSFER = {
    "AccessPolicyWindow": model(roofline.transfer.AccessPolicyWindow,
                                roofline.transfer.AccessPolicyWindow(num_bytes=1 << 20, hit_ratio=0.5)),
    "L2Persistence": model(roofline.transfer.L2Persistence, roofline.transfer.l2_persistence(
        roofline.transfer.AccessPolicyWindow(num_bytes=1 << 20, hit_ratio=0.5), set_aside_bytes=1 << 19,
        l2_cache_bytes=1 << 24), finite=False),
    "LinkSegment": model(roofline.transfer.LinkSegment, roofline.transfer.LinkSegment(from_bytes=0, latency_seconds=1e-6,
                                                                    bytes_per_second=1e10)),
    "TransferTime": model(roofline.transfer.TransferTime, roofline.transfer.transfer_time(roofline.gpu("H200"), 1 << 20), finite=False),
    "WindowTraffic": model(roofline.transfer.WindowTraffic, roofline.transfer.WindowTraffic(
        window_reads_bytes=1 << 24, other_bytes=1 << 26, dram_bytes_per_second=4e12, l2_bytes_per_second=8e12)),
    "l2_persistence": call(args_kwargs(
        maybe(_WINDOWS), set_aside_bytes=maybe(st.integers(0, 1 << 26)),
        l2_cache_bytes=maybe(st.integers(1, 1 << 27)), max_persisting_bytes=st.one_of(st.none(), maybe(st.integers(0, 1 << 26))),
        traffic=st.one_of(st.none(), maybe(_WINDOW_TRAFFIC)), l2_partitions=maybe(st.integers(1, 4)),
    ).map(lambda d: {"args": d["args"], "kwargs": {"set_aside_bytes": 1 << 20, "l2_cache_bytes": 1 << 25,
                                                     **d["kwargs"]}})),
    "transfer_time": call(args_kwargs(
        st.one_of(v.gpu_object, junk(), st.builds(lambda r: types.SimpleNamespace(
            host_link=types.SimpleNamespace(kind="pcie", bytes_per_second=r)), odd())),
        maybe(st.integers(0, 1 << 40)), memory=maybe(st.sampled_from(("pinned", "pageable", "mapped"))),
        accesses=maybe(st.integers(1, 8)), latency_seconds=st.one_of(st.none(), maybe(st.floats(0, 1e-3))),
        pageable_factor=maybe(st.floats(0.1, 1)), efficiency=maybe(st.floats(0.1, 1)),
    )),
}

MODELS.update({
    "ModelInfo": model(models.ModelInfo, _INFO, finite=False),
    "ModelParameter": model(models.ModelParameter, _INFO.parameters[0], finite=False),
    "catalog": call(args_kwargs(), cost=10),  # describes every model: a second and a half a call
    "describe": call(args_kwargs(maybe(st.sampled_from((*models.names(), "nope", "Copy"))))),
    "ReductionSteps": model(models.ReductionSteps, models.reduction_steps(256, "sequential"), finite=False),
    "reduction_steps": call(args_kwargs(block_1d, maybe(st.sampled_from((*models.REDUCTION_VARIANTS, "nope"))))),
})

_report_paths = st.lists(st.one_of(st.builds(lambda case: v.write_case(case), v.file_case(("report_json", "chart_json"))),
                                   junk()), max_size=3)

VALIDATE.update({
    "ClusterCheck": model(validate.ClusterCheck, validate.ClusterCheck(
        gpu="H100-SXM", device_name="NVIDIA H100 80GB HBM3", sm_count=132, kernels=3, cluster_queries=12,
        potential_size_queries=4, mismatches=(), seconds=1.5)),
    "GpcLayoutMeasurement": model(validate.GpcLayoutMeasurement, validate.GpcLayoutMeasurement.model_validate_json(
        (v.ROOT / "tests/data/gpc_layout_h100.json").read_bytes()), finite=False),
    "KernelArg": model(validate.KernelArg, validate.parse_kernel_args(["f32[n]=random"], {"n": 16})[0]),
    "Measurement": model(validate.Measurement, validate.Measurement.model_validate_json(
        (v.ROOT / "docs/results/h200/measure/measure_saxpy4.json").read_bytes()), finite=False),
    "ReportSet": model(validate.ReportSet, _SET, finite=False),
    "ResourcesCheck": model(validate.ResourcesCheck, validate.ResourcesCheck.model_validate_json(
        (v.ROOT / "docs/results/h200/resources_check.json").read_bytes()), finite=False),
    "check_clusters": session_call(device_infos()),
    "check_resources": session_call(device_infos(), quick=st.booleans(), triton=st.booleans()),
    "driver_cluster_answers": session_call(device_infos()),
    "load_report_set": file_entry(("report_json", "chart_json", "calibration_json")),
    # The session as a keyword, never None (None opens device 0); args of every kind, 5 included.
    "measure": Entry("call", strategy=st.fixed_dictionaries({"args": st.tuples(
        st.just('extern "C" __global__ void k(float *x) { x[0] = 1; }'), maybe(st.just("k"))),
        "kwargs": st.fixed_dictionaries({"launch": st.one_of(st.builds(lambda g: occupancy.Launch(grid=g, block=32),
                                                                       st.integers(1, 64)), junk()),
                                         "args": st.one_of(st.just(["f32[32]"]), junk()),
                                         "options": st.one_of(st.none(), st.just(validate.MeasureOptions()), junk()),
                                         "session": st.one_of(junk(), st.just(REPORT.device)).filter(
                                             lambda s: s is not None)})}),
                     reason="compiles and runs a kernel on a GPU; tests/validate/test_gpu.py runs it on one"),
    "MeasureOptions": model(validate.MeasureOptions, validate.MeasureOptions(defines={"N": 4}, sizes={"n": 16},
                                                                           budget_seconds=0.5, seed=1)),
    "measure_gpc_layout": session_call(device_infos()),
    "LaunchOverhead": model(validate.LaunchOverhead, REPORT.launch, finite=False),
    "block_ramp_figure": call(args_kwargs(junk())),
    "ProfileRun": model(validate.ProfileRun, validate.ProfileRun(report_path="r.ncu-rep", csv_path="r.csv",
                                                                 command=("ncu",), report=_PROFILE),
                        finite=False, json_too=False),
    # Only commands it must refuse before starting ncu (it runs programs: never drawn ones);
    # tests/test_cli_profile.py runs it with a stand-in ncu.
    "profile_program": call(args_kwargs(st.one_of(st.just(()), st.just([]), st.none(), st.integers(), odd()))),
    "merge_reports": call(args_kwargs(st.one_of(_report_paths, junk()), v.out_folders()), io=True, cost=10),
    "parse_kernel_args": call(args_kwargs(st.one_of(st.lists(maybe(st.sampled_from(("f32[n]", "i32:5", "bad"))),
                                                             max_size=3), junk()),
                                          st.one_of(st.none(), st.just({"n": 16}), junk()))),
    # out is a required keyword: always drawn.
    "run_validation_devices": call(st.fixed_dictionaries({
        "args": st.tuples(maybe(st.one_of(st.just("all"), st.lists(st.integers(0, 3), max_size=2)))),
        "kwargs": st.fixed_dictionaries({"out": v.out_folders()}, optional=dict(
            quick=maybe(st.booleans()),
            kernels=st.one_of(st.none(), st.lists(maybe(st.just("copy")), max_size=2), junk()),
            seed=st.one_of(st.none(), maybe(st.integers(0, 2**32))),
            progress=st.one_of(st.just(lambda m: None), junk())))}), io=True),
    "write_calibration": call(args_kwargs(st.one_of(st.just(dict(REPORT.calibration or {})),
                                                    st.dictionaries(v.name_key, odd(), max_size=3), junk()),
                                          v.out_folders()), io=True),
})

# ------------------------------------------------------------------ issue 11: the fit calls the model

_SWEEP = REPORT.prediction.sweep
_FIT_SAMPLE = validate.CalibrationFit(method="m", parameters=("knee_sharpness",), evaluations=3, seconds=0.1,
                                      train_points=2, train_median_abs_error=0.01, train_max_abs_error=0.02)
_fit_budget = st.fixed_dictionaries({"max_evaluations": st.integers(1, 4)},
                                    optional={"parameters": st.one_of(
                                        st.just(validate.CALIBRATION_FIT_PARAMETERS[-1:]),
                                        st.just(validate.CALIBRATION_FIT_PARAMETERS[:1] * 2), st.just(()), junk())})
_measured_launches = st.lists(st.one_of(
    st.builds(lambda m, s: (m, m.launch, s), v.kernel_model, st.one_of(st.floats(1e-6, 1e-2), odd_floats(), junk())),
    junk()), max_size=3)

VALIDATE.update({
    "CalibrationFit": model(validate.CalibrationFit, _FIT_SAMPLE),
    "FitParameter": model(validate.FitParameter, validate.CALIBRATION_FIT_PARAMETERS[0],
                          use=lambda p: poke(p.to_unit, p.from_unit)),
    "fit_to_measurements": call(st.fixed_dictionaries({
        "args": st.tuples(v.gpu_any, v.calibrations(), st.one_of(_measured_launches, junk())),
        "kwargs": _fit_budget}), cost=3),
})

# ------------------------------------------------------------------ issue 11: error by kernel family

_FAMILIES_FILE = v.ROOT / "tests/data/families_h200.json"
_FAMILY_RECORDS = [validate.FamilyRecord.model_validate(r)
                   for r in json.loads(_FAMILIES_FILE.read_text())["records"][::20]]
_FAMILY_REPORT = validate.family_report(_FAMILY_RECORDS, "H200")
_family_sources = st.one_of(
    st.just(_FAMILY_RECORDS), st.just(_FAMILY_REPORT), st.just(REPORT), st.just(_SET),
    st.lists(st.one_of(st.sampled_from(_FAMILY_RECORDS), st.sampled_from([r.model_dump() for r in _FAMILY_RECORDS]),
                       st.builds(lambda r, k, x: {**r.model_dump(), k: x}, st.sampled_from(_FAMILY_RECORDS),
                                 st.sampled_from(("grid", "block", "arguments", "model", "measured_seconds",
                                                  "registers_per_thread", "family")), odd()),
                       junk()), max_size=3),
    junk())

VALIDATE.update({
    "FamilyRecord": model(validate.FamilyRecord, _FAMILY_RECORDS[0]),
    "FamilyReport": model(validate.FamilyReport, _FAMILY_REPORT, json_too=False),
    "FamilyRow": model(validate.FamilyRow, _FAMILY_REPORT.rows[0]),
    "FamilySummary": model(validate.FamilySummary, _FAMILY_REPORT.overall),
    "family_model": call(args_kwargs(
        maybe(st.sampled_from(("copy", "transpose", "shared_stride", "branches", "grid_stride_copy", "nope"))),
        st.one_of(st.sampled_from([r.arguments for r in _FAMILY_RECORDS]),
                  st.dictionaries(st.sampled_from(("n", "rows", "grid", "block", "stride", "uniform", "variant", "x")),
                                  maybe(st.integers(1, 1 << 12)), max_size=4), junk())), cost=2),
    "family_report": Entry("call", strategy=st.one_of(
        args_kwargs(_family_sources, st.one_of(st.none(), v.gpu_any), calibration=st.one_of(st.none(), v.calibrations())),
        v.file_case(("families_json", "report_json", "calibration_json")).map(lambda case: {"file": case})),
        run=lambda target, drawn: (target(v.write_case(drawn["file"])) if "file" in drawn
                                   else target(*drawn["args"], **drawn["kwargs"])), io=True, cost=4),
    "measure_families": session_call(device_infos(), quick=st.booleans()),
    "write_family_report": call(args_kwargs(st.one_of(st.just(_FAMILY_REPORT), junk()), v.out_folders()), io=True,
                                cost=20),
})

# The corpus (corpus/, in the repository only): fuzzed like the packages it uses.
CORPUS = {
    "CORPUS_METRICS": constant(),
    "CorpusKernel": model(corpus.CorpusKernel, _CORPUS.kernels[0], finite=False),
    "CorpusLaunch": model(corpus.CorpusLaunch, _CORPUS.kernels[0].launches[0], finite=False),
    "CorpusProject": model(corpus.CorpusProject, _CORPUS, finite=False),
    "CorpusReport": model(corpus.CorpusReport, _CORPUS_REPORT, finite=False, json_too=False),
    "CorpusRow": model(corpus.CorpusRow, _CORPUS_REPORT.rows[0], finite=False),
    "CorpusSplit": model(corpus.CorpusSplit, next(iter(_CORPUS_REPORT.splits.values())), finite=False),
    "corpus_gpus": call(args_kwargs(st.one_of(st.none(), v.out_folders(), junk())), io=True),
    "corpus_metrics": call(args_kwargs(st.one_of(st.just(_CORPUS.kernels[0].launches[0].ncu), st.dictionaries(
        st.one_of(st.sampled_from(corpus.CORPUS_METRICS[:4]), st.text(max_size=8), st.integers()), junk(),
        max_size=3), junk()))),
    "corpus_report": call(args_kwargs(st.one_of(st.just((_CORPUS,)), st.just(()), st.lists(junk(), max_size=2), junk()),
                                      gpu=st.one_of(st.none(), v.gpu_any),
                                      from_source=st.one_of(st.booleans(), junk())), cost=3,
                          allow_inf=frozenset({"arithmetic_intensity"})),
    "format_corpus_report": call(args_kwargs(st.one_of(st.just(_CORPUS_REPORT), junk()),
                                             sources=st.one_of(st.just((_CORPUS,)), st.just(()), junk()))),
    "load_corpus": call(args_kwargs(st.one_of(st.sampled_from(("h200", "h100-sxm", "..", "")), junk()),
                                    project=st.one_of(st.none(), st.sampled_from(("suite", "nope")), junk()),
                                    directory=st.one_of(st.none(), v.out_folders(), junk())), io=True),
    "plot_corpus": call(args_kwargs(st.one_of(st.just(_CORPUS_REPORT), junk()), v.out_paths((".png", ".txt"))),
                        io=True, cost=10),
    "projects_of_split": call(args_kwargs(st.one_of(st.just((_CORPUS,)), st.just(()), st.lists(junk(), max_size=2), junk()),
                                          st.one_of(st.sampled_from(("dev", "exam", "all", "")), junk()),
                                          gpu=st.one_of(st.sampled_from(("h200", "")), junk()))),
    "split_of": call(args_kwargs(st.one_of(st.sampled_from(("SGEMM_CUDA", "sgemm_cuda", "a new one")), st.text(max_size=8),
                                           junk()))),
    "write_corpus_project": call(args_kwargs(st.one_of(st.just(_CORPUS), junk()), v.out_folders()), io=True),
}

# ------------------------------------------------------------------ issue 21: private helpers reached from outside

_KERNEL_ROWS = list(REPORT.kernels[:3])
INTERNAL: dict[str, Entry] = {
    "validate.device._timing.summarize": call(args_kwargs(
        st.one_of(st.lists(st.one_of(st.floats(1e-9, 1.0), odd_floats()), max_size=5), junk(), odd()),
        warmup=maybe(st.integers(0, 5)), l2_flushed=maybe(st.booleans()))),
    "validate.suite._suite.summarize_predictions": call(args_kwargs(
        st.one_of(st.just(_KERNEL_ROWS), st.lists(st.one_of(st.sampled_from(_KERNEL_ROWS), junk()), max_size=3),
                  junk(), odd()))),
    "validate.device._clocks.open_clock_monitor": call(args_kwargs(
        st.one_of(st.none(), st.sampled_from(("", "0000:1b:00.0", "nope")), junk(), odd()))),
}

#: The strategies written for public names, by qualified name.
WRITTEN: dict[str, Entry] = {
    **{f"occupancy.{k}": e for k, e in OCCUPANCY.items()},
    **{f"roofline.{k}": e for k, e in ROOFLINE.items()},
    **{f"roofline.models.{k}": e for k, e in MODELS.items()},
    **{f"roofline.chart.{k}": e for k, e in CHART.items()},
    **{f"roofline.cliffs.{k}": e for k, e in CLIFFS.items()},
    **{f"roofline.divergence.{k}": e for k, e in DIVERGENCE.items()},
    **{f"roofline.instructions.{k}": e for k, e in INSTRUCTIONS.items()},
    **{f"roofline.memory.{k}": e for k, e in MEMORY.items()},
    **{f"roofline.suite.{k}": e for k, e in SUITE.items()},
    **{f"roofline.terms.{k}": e for k, e in TERMS.items()},
    **{f"roofline.transfer.{k}": e for k, e in TRANSFER.items()},
    **{f"validate.{k}": e for k, e in VALIDATE.items()},
    **{f"corpus.{k}": e for k, e in CORPUS.items()},
}

# ------------------------------------------------------------------ the registry, from __all__

PACKAGES = ("occupancy", "roofline", "validate", "corpus")


def resolve(qualified: str) -> Any:
    """The object a qualified public name stands for."""
    module, _, name = qualified.rpartition(".")
    return getattr(importlib.import_module(module), name)


def public_names() -> list[str]:
    """Every name in the packages' ``__all__``, following the public submodules they list."""
    found: set[str] = set()
    pending = list(PACKAGES)
    while pending:
        module_name = pending.pop()
        module = importlib.import_module(module_name)
        for name in module.__all__:
            qualified = f"{module_name}.{name}"
            found.add(qualified)
            if isinstance(getattr(module, name), types.ModuleType):
                pending.append(qualified)
    return sorted(found)


def needs_gpu(target: Any) -> bool:
    """Whether `target` works on an open GPU session: its first parameter is ``session``."""
    try:
        parameters = list(inspect.signature(target).parameters)
    except (TypeError, ValueError):
        return False
    return bool(parameters) and parameters[0] == "session"


def from_signature(target: Any) -> Entry:
    """A callable without a written strategy: odd values for each parameter of its signature
    (the required ones always, the others sometimes)."""
    args, required, optional = [], {}, {}
    for p in inspect.signature(target).parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        if p.default is p.empty and p.kind is not p.KEYWORD_ONLY:
            args.append(odd())
        elif p.default is p.empty:
            required[p.name] = odd()
        elif p.kind is not p.POSITIONAL_ONLY:
            optional[p.name] = odd()
    strategy = st.fixed_dictionaries({"args": st.tuples(*args),
                                      "kwargs": st.fixed_dictionaries(required, optional=optional)})
    return Entry("call", strategy=strategy, io=True, pydantic=True, generic=True)


def by_rule(target: Any) -> Entry:
    """The entry of a public name without a written one: a module, an error type, a constant
    or a function that needs a GPU session by what it is; anything else callable from its
    fields (a pydantic class) or signature, marked `generic`."""
    if isinstance(target, types.ModuleType):
        return module()
    if isinstance(target, type) and issubclass(target, BaseException):
        return error()
    if not callable(target):
        return constant()
    if needs_gpu(target):
        return session_call()
    if isinstance(target, type) and issubclass(target, pydantic.BaseModel):
        return fields(target)
    return from_signature(target)


REGISTRY: dict[str, Entry] = {name: WRITTEN.get(name) or by_rule(resolve(name)) for name in public_names()}
