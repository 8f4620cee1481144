"""The time model's structure: derive -> terms -> compose. Each term reads its own parameters
(a change to one group moves only the terms that take it), each parameter is the calibration's
figure of its name, and the composition's rule over the terms gives `roofline.predict`'s time."""

from __future__ import annotations

import dataclasses
import doctest
import importlib

import pytest

import occupancy
import roofline
from occupancy import SassCounts, SassLoop, SassSummary
from roofline import _time_model
from roofline._predict import compose, derive, evaluate, parameters
from roofline._predict.params import DATASHEET

H200 = roofline.gpu("H200")

#: The Parameters group -> the terms that may read it (the DRAM term's block life takes the
#: L1 passes, the barriers' wait and the hot loop's waits: their groups move it too).
READERS = {
    "dram": {"dram"}, "l2": {"l2"}, "partial_stores": {"l2_partial_stores"}, "l2_requests": {"l2_requests"},
    "atomics": {"atomics"}, "l1": {"l1_shared", "dram"}, "waits": {"trips", "dram"}, "barriers": {"dram"},
    "issue": {"arithmetic", "instructions"}, "launch": {"launch"}, "ramp": {"ramp"}, "spread": {"spread"},
}


def _walk() -> roofline.Kernel:
    """A kernel every term sees: a hot loop of one load a trip, barriers, L1, L2 and DRAM bytes, L2
    requests and partial stores, atomics to few addresses, a flag, flops; two blocks on the
    busiest SM, four warps per scheduler (too few to hide the FMA latency)."""
    sass = SassSummary(architecture="sm_90", disassembler="test", instructions=SassCounts(total=30, global_loads=1),
                       loops=(SassLoop(start_offset=0, end_offset=80, depth=1, global_loads_in_flight=1,
                                       instructions=SassCounts(total=10, global_loads=1)),),
                       hot_loop=0, global_loads_in_flight_per_thread=1)
    resources = occupancy.KernelResources(kernel="walk", architecture="sm_90", registers_per_thread=32, sass=sass)
    launch = occupancy.Launch(grid=264, block=256, registers_per_thread=32, resources=resources,
                              elements_per_thread=100)
    return roofline.Kernel(name="walk", flops=1e9, dram_bytes=1 << 26, l2_bytes=1 << 27, l1_bytes=1 << 28,
                           l2_requests=1e6, l2_partial_store_sectors=1e5, atomics=1e5, atomic_addresses=4,
                           one_address_stores=1e3, barriers_per_block=8, instructions=264 * 8 * 1200, launch=launch)


# the walk's profile: half its load sectors hit L1, half of the rest L2
WALK_MEASURED = roofline.ProfileCounts(l1_hit_rate=0.5, l2_hit_rate=0.5)


def _scaled(group: object) -> object:
    """`group` with every figure it holds half as large again (groups inside it too)."""
    changes = {}
    for field in dataclasses.fields(group):
        value = getattr(group, field.name)
        if dataclasses.is_dataclass(value):
            changes[field.name] = _scaled(value)
        elif isinstance(value, float):
            changes[field.name] = 1.5 * value
    return dataclasses.replace(group, **changes)


@pytest.mark.parametrize("group", sorted(READERS))
def test_a_terms_parameters_move_that_term_alone(group):
    setting, _ = _time_model._setting(H200, _walk(), None, None, 1, True, WALK_MEASURED)
    derived = derive(setting)
    params = parameters(roofline.calibration("H200"), H200)
    _, before = evaluate(derived, params)
    _, after = evaluate(derived, dataclasses.replace(params, **{group: _scaled(getattr(params, group))}))
    moved = {new.name for new, old in zip(after, before, strict=True) if new != old}
    assert moved, f"no term reads the {group} parameters of this kernel"
    assert moved <= READERS[group]


@pytest.mark.parametrize("gpu", ["H200", "H100-SXM", "T4"])
def test_each_parameter_is_the_calibrations_figure_of_its_name(gpu):
    record, cal = roofline.gpu(gpu), roofline.calibration(gpu)
    params = parameters(cal, record)
    datasheet = {"memory_bandwidth": record.memory_bandwidth, "l2_bandwidth": record.bandwidth("l2"),
                 "l1_bandwidth": record.bandwidth("l1"), "l2_cache_bytes": record.l2_cache_bytes}
    groups = [getattr(params, f.name) for f in dataclasses.fields(params) if dataclasses.is_dataclass(getattr(params, f.name))]
    groups.append(params.dram.granularity)
    for group in groups:
        for field in dataclasses.fields(group):
            value = getattr(group, field.name)
            if dataclasses.is_dataclass(value):
                continue
            if field.metadata["probe"] == DATASHEET:
                assert value == datasheet[field.name], field.name
            elif (type(group).__name__, field.name) == ("DramParams", "sm_bandwidth_bytes_per_second"):
                # the SM's share of L2's bandwidth where the calibration has no figure
                assert value == (cal.sm_bandwidth_bytes_per_second or record.l2_bandwidth / record.sm_count)
            else:
                assert value == getattr(cal, field.name), field.name
    assert params.overlap_exponent == cal.overlap_exponent


@pytest.mark.parametrize("kernel", [roofline.models.copy(1 << 24), _walk(), roofline.models.matmul_tiled(512, tile=16)],
                         ids=["copy", "walk", "matmul"])
def test_the_composition_of_the_evaluated_terms_is_the_prediction(kernel):
    p = roofline.predict("H200", kernel)
    composed = compose(p.terms, p.calibration.overlap_exponent)
    assert (composed.seconds, composed.binding.name, composed.roofline_seconds) == (p.seconds, p.binding,
                                                                                   p.roofline_seconds)
    assert composed.overhead_seconds == p.launch_seconds == sum(t.seconds for t in p.terms if t.side == "overhead")


def test_a_term_without_a_roof_takes_no_part_in_the_bound():
    p = roofline.predict("H200", _walk())
    slow = roofline.terms.Term(name="slow", side="memory", seconds=10 * p.seconds, limiter="memory_latency")
    roofed = slow.model_copy(update={"roof_seconds": 5 * p.seconds})
    assert compose((*p.terms, slow), None).roofline_seconds == p.roofline_seconds
    assert compose((*p.terms, roofed), None).roofline_seconds == 5 * p.seconds
    # a prediction read back from its JSON keeps the bound its terms make
    again = type(p).model_validate_json(p.model_dump_json())
    assert compose(again.terms, None).roofline_seconds == p.roofline_seconds > 0


@pytest.mark.parametrize("module", ["compose", "derive.sass", "terms.dram_bytes", "terms.latency"])
def test_doctests(module):
    assert doctest.testmod(importlib.import_module(f"roofline._predict.{module}")).failed == 0
