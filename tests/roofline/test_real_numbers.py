"""A complex number in any numeric field of a model the caller builds is a TypeError naming
the field; never cut to its real part (pydantic takes numpy's complex scalars through their
``__float__`` and ``__int__``, with a ComplexWarning at most)."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import occupancy
import roofline
from roofline import models

_CHART = roofline.chart.roofline_chart("H100-SXM", [models.copy(1 << 20), models.matmul_tiled(512)])

# Each model the caller builds, how a caller builds it from fields, and a valid instance's fields.
_BUILDERS = {
    "custom_gpu": (roofline.custom_gpu, roofline.gpu("H100-SXM").model_dump()),
    "HostLink": (roofline.HostLink, roofline.gpu("H100-SXM").host_link.model_dump()),
    "ArchRates": (roofline.ArchRates, roofline.arch_rates("9.0").model_dump()),
    "Ceiling": (roofline.chart.Ceiling, _CHART.ceilings[0].model_dump()),
    "ChartPoint": (roofline.chart.ChartPoint, _CHART.points[0].model_dump()),
    "BandwidthPoint": (roofline.chart.BandwidthPoint, _CHART.bandwidth_points[0].model_dump()),
    "RooflineChart": (roofline.chart.RooflineChart, _CHART.model_dump()),
    "Calibration": (roofline.Calibration, roofline.calibration("H200").model_dump()),
    "Kernel": (roofline.Kernel, models.copy(1 << 20).model_dump()),
    "AccessPolicyWindow": (roofline.transfer.AccessPolicyWindow, {"num_bytes": 1 << 20, "hit_ratio": 0.5}),
    "WindowTraffic": (roofline.transfer.WindowTraffic, {"window_reads_bytes": 1 << 24, "other_bytes": 1 << 26,
                                                        "dram_bytes_per_second": 4e12, "l2_bytes_per_second": 8e12}),
    "Architecture": (occupancy.Architecture, occupancy.architecture("sm_90").model_dump()),
    "Launch": (occupancy.Launch, occupancy.Launch(grid=4096, block=256, registers_per_thread=32).model_dump()),
    "KernelResources": (occupancy.KernelResources, occupancy.KernelResources(
        kernel="k", architecture="sm_90", registers_per_thread=40, static_shared_memory=8192,
        max_threads_per_block=256, min_blocks_per_sm=2, block_barriers=1).model_dump()),
}


def _numbers(value, path=()):
    """The path of every real number (not a bool) inside a model's dumped fields."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _numbers(item, (*path, key))
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            yield from _numbers(item, (*path, i))
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        yield path


def _replaced(data, path, make):
    if not path:
        return make(data)
    head, rest = path[0], path[1:]
    if isinstance(data, dict):
        return {**data, head: _replaced(data[head], rest, make)}
    items = list(data)
    items[head] = _replaced(items[head], rest, make)
    return type(data)(items)


def _shown(path):
    return "".join(f"[{p}]" if isinstance(p, int) else ("." if i else "") + str(p) for i, p in enumerate(path))


CASES = [(name, path) for name, (_, fields) in _BUILDERS.items() for path in _numbers(fields)]


def test_every_builder_has_numeric_fields():
    assert {name for name, _ in CASES} == set(_BUILDERS)


@pytest.mark.parametrize(("name", "path"), CASES, ids=[f"{name}.{_shown(path)}" for name, path in CASES])
def test_a_complex_number_is_refused_by_name(name, path):
    build, fields = _BUILDERS[name]
    value = _replaced(fields, path, lambda x: x)
    assert value == fields
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a ComplexWarning would mean the real part was taken
        # The shared check names the place (``host_link.bytes_per_second``); the value objects
        # (Kernel, Launch) refuse in their own normaliser first, naming the field.
        named = rf"^{re.escape(str(path[0]))}\b|\b{re.escape(_shown(path))}="
        with pytest.raises(TypeError, match=named) as complex128:
            build(**_replaced(fields, path, lambda x: np.complex128(x, 1.0)))
        with pytest.raises(TypeError, match=named) as complex64:
            build(**_replaced(fields, path, lambda x: np.complex64(x)))
    assert "not complex128" in str(complex128.value) and "not complex64" in str(complex64.value)


@pytest.mark.parametrize("name", sorted(_BUILDERS))
def test_the_same_fields_as_real_numbers_are_taken(name):
    """The control: numpy's real scalars in every numeric field still build the model."""
    build, fields = _BUILDERS[name]
    data = fields
    for path in _numbers(fields):
        data = _replaced(data, path, lambda x: np.float64(x) if isinstance(x, float) else np.int64(x))
    built = build(**data)
    assert built.model_dump() == build(**fields).model_dump()
