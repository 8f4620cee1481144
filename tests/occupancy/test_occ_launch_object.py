"""occupancy.Launch: normalisation, CUDA's launch limits, resources, and launch= everywhere."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import occupancy
import roofline
from occupancy import Launch, OccupancyError
from occupancy._rules import evaluate

H200 = roofline.gpc_layout("H200")


def _resources(**over):
    fields = dict(kernel="k", architecture="sm_90", registers_per_thread=40, static_shared_memory=8192)
    fields.update(over)
    return occupancy.KernelResources(**fields)


# (id, inputs, expected fields): dims normalised once, as cuda.core's LaunchConfig does
NORMALISED = [
    ("int grid and block", dict(grid=8, block=256), dict(grid=(8, 1, 1), block=(256, 1, 1), threads=2048)),
    ("pairs", dict(grid=(4, 2), block=(16, 16)), dict(grid=(4, 2, 1), block=(16, 16, 1), threads_per_block=256)),
    ("lists", dict(grid=[2, 3, 4], block=[8, 8, 2]), dict(grid=(2, 3, 4), block=(8, 8, 2), blocks=24)),
    ("numpy ints", dict(grid=np.int64(5), block=(np.int32(32),)), dict(grid=(5, 1, 1), block=(32, 1, 1))),
    ("maxima", dict(grid=(2**31 - 1, 65535, 65535), block=(1024, 1, 1)),
     dict(grid=(2**31 - 1, 65535, 65535), block=(1024, 1, 1))),
    ("block z 64", dict(grid=1, block=(4, 4, 64)), dict(block=(4, 4, 64), threads_per_block=1024)),
    ("cluster", dict(grid=(8, 4), block=128, cluster=(2, 2)), dict(cluster=(2, 2, 1), cluster_size=4)),
    ("no cluster", dict(grid=1, block=32), dict(cluster=None, cluster_size=1)),
    ("defaults", dict(grid=1, block=32), dict(registers_per_thread=None, static_shared_memory=0, block_barriers=1,
                                              max_threads_per_block=None, dynamic_shared_memory=0,
                                              max_dynamic_shared_memory=None, carveout=None, elements_per_thread=1,
                                              loads_in_flight_per_thread=None)),
]


@pytest.mark.parametrize("inputs, expected", [c[1:] for c in NORMALISED], ids=[c[0] for c in NORMALISED])
def test_launch_normalises_its_dimensions(inputs, expected):
    launch = Launch(**inputs)
    for name, value in expected.items():
        assert getattr(launch, name) == value


# (id, inputs, error type, message): CUDA C++ Programming Guide, technical specifications
BAD = [
    ("zero grid", dict(grid=0, block=1), OccupancyError, r"grid\.x=0 is below the minimum of 1"),
    ("grid x over", dict(grid=2**31, block=1), OccupancyError, r"grid\.x=2147483648 exceeds the maximum of 2147483647"),
    ("grid y over", dict(grid=(1, 65536), block=1), OccupancyError, r"grid\.y=65536 exceeds the maximum of 65535"),
    ("grid z over", dict(grid=(1, 1, 65536), block=1), OccupancyError, r"grid\.z=65536"),
    ("block x over", dict(grid=1, block=1025), OccupancyError, r"block\.x=1025 exceeds the maximum of 1024"),
    ("block z over", dict(grid=1, block=(1, 1, 65)), OccupancyError, r"block\.z=65 exceeds the maximum of 64"),
    ("block threads", dict(grid=1, block=(32, 33)), OccupancyError, r"1056 threads; the maximum is 1024"),
    ("zero block y", dict(grid=1, block=(32, 0)), OccupancyError, r"block\.y=0"),
    ("four dims", dict(grid=(1, 1, 1, 1), block=1), OccupancyError, r"1 to 3 dimensions"),
    ("empty dims", dict(grid=(), block=1), OccupancyError, r"1 to 3 dimensions"),
    ("bool grid", dict(grid=True, block=1), TypeError, r"grid must be an int .* not bool"),
    ("bool inside", dict(grid=(2, True), block=1), TypeError, r"grid\.y must be an int"),
    ("float block", dict(grid=1, block=32.0), TypeError, r"block must be an int"),
    ("string grid", dict(grid="8", block=1), TypeError, r"grid must be an int"),
    ("cluster too big", dict(grid=32, block=32, cluster=(4, 4, 2)), OccupancyError, r"32 blocks; the maximum is 16"),
    ("cluster divides", dict(grid=6, block=32, cluster=4), OccupancyError, r"grid\.x=6 is not a multiple of cluster\.x=4"),
    ("registers", dict(grid=1, block=1, registers_per_thread=256), OccupancyError, r"registers_per_thread=256 exceeds"),
    ("negative smem", dict(grid=1, block=1, static_shared_memory=-1), OccupancyError, r"static_shared_memory=-1"),
    ("barriers", dict(grid=1, block=1, block_barriers=17), OccupancyError, r"block_barriers=17 exceeds the maximum of 16"),
    ("max threads", dict(grid=1, block=1, max_threads_per_block=0), OccupancyError, r"max_threads_per_block=0"),
    ("carveout", dict(grid=1, block=1, carveout=101), OccupancyError, r"carveout=101 exceeds the maximum of 100"),
    ("elements", dict(grid=1, block=1, elements_per_thread=0), OccupancyError, r"elements_per_thread=0"),
    ("in flight", dict(grid=1, block=1, loads_in_flight_per_thread=0), OccupancyError, r"loads_in_flight_per_thread=0"),
    ("bool registers", dict(grid=1, block=1, registers_per_thread=True), TypeError, r"registers_per_thread must be an integer"),
    ("unknown field", dict(grid=1, block=1, threads=3), TypeError, r"unexpected field 'threads'"),
    ("no grid", dict(block=1), TypeError, r"needs grid="),
    ("resources and loose disagree", dict(grid=1, block=1, resources=_resources(), registers_per_thread=32),
     OccupancyError, r"registers_per_thread=32 disagrees with resources\.registers_per_thread=40"),
    ("cluster disagrees", dict(grid=4, block=1, resources=_resources(cluster_dims=(2, 1, 1)), cluster=4),
     OccupancyError, r"cluster=\(4, 1, 1\) disagrees with resources\.cluster_dims"),
    ("resources not an object", dict(grid=1, block=1, resources={"registers_per_thread": 3}), TypeError,
     r"resources must be an occupancy\.KernelResources"),
    ("block fixed by resources", dict(grid=1, block=128, resources=_resources(threads_per_block=256)), OccupancyError,
     r"128 threads, but kernel 'k' is launched with resources\.threads_per_block=256"),
]


@pytest.mark.parametrize("inputs, error, message", [c[1:] for c in BAD], ids=[c[0] for c in BAD])
def test_launch_refuses_bad_input(inputs, error, message):
    with pytest.raises(error, match=message):
        Launch(**inputs)


def test_resources_fill_the_kernel_fields():
    res = _resources(block_barriers=3, max_threads_per_block=512, cluster_dims=(2, 1, 1))
    launch = Launch(grid=8, block=256, resources=res, registers_per_thread=40)  # agreeing loose value is fine
    assert (launch.registers_per_thread, launch.static_shared_memory, launch.block_barriers,
            launch.max_threads_per_block, launch.cluster) == (40, 8192, 3, 512, (2, 1, 1))
    assert launch.resources is res
    # the dump carries the numbers, not the resources object, and loads back
    again = Launch.model_validate(json.loads(launch.model_dump_json()))
    assert again.model_dump() == launch.model_dump() and again.resources is None
    # changing a number the resources fixed detaches the copy from them
    moved = launch.model_copy(update={"registers_per_thread": 64})
    assert moved.resources is None and moved.registers_per_thread == 64 and moved.static_shared_memory == 8192
    assert launch.model_copy(update={"grid": 16}).resources is res


def test_a_launch_carries_its_resources_to_occupancy():
    res = _resources(max_threads_per_block=256, block_barriers=2)
    launch = Launch(grid=8, block=256, resources=res)
    assert occupancy.calculate("sm_90", launch=launch) == occupancy.calculate(
        "sm_90", grid=8, threads_per_block=256, resources=res)
    assert occupancy.max_potential_block_size("sm_90", launch=launch).block_size == 256  # the launch bounds
    old = Launch(grid=8, block=256, resources=_resources(architecture="sm_80"))
    with pytest.raises(OccupancyError, match="compiled for sm_80, which cannot run on arch=sm_90"):
        occupancy.calculate("sm_90", launch=old)
    assert occupancy.cliffs("sm_90", launch=Launch(grid=8, block=128, registers_per_thread=32, cluster=4),
                            gpu=roofline.gpc_layout("H200")).cluster_size.value == 4


def test_model_copy_checks_like_a_new_launch():
    launch = Launch(grid=8, block=256)
    assert launch.model_copy(update={"block": (16, 16)}).block == (16, 16, 1)
    with pytest.raises(OccupancyError, match="block.x=2048"):
        launch.model_copy(update={"block": 2048})
    assert launch.model_copy() == launch


def test_launch_is_frozen():
    with pytest.raises(ValueError):
        Launch(grid=1, block=1).grid = (2, 1, 1)


LOOSE = [
    ("plain", dict(threads_per_block=256, registers_per_thread=40)),
    ("shared", dict(threads_per_block=128, registers_per_thread=32, static_shared_memory=4096,
                    dynamic_shared_memory=60_000, max_dynamic_shared_memory=100_000, carveout=50)),
    ("bounds", dict(threads_per_block=512, registers_per_thread=64, block_barriers=4, max_threads_per_block=512)),
    ("at bounds", dict(threads_per_block=512, registers_per_thread=16, max_threads_per_block=512)),
]


def _launch_of(loose: dict) -> Launch:
    names = {"threads_per_block": "block"}
    return Launch(grid=1, **{names.get(k, k): v for k, v in loose.items()})


@pytest.mark.parametrize("loose", [c[1] for c in LOOSE], ids=[c[0] for c in LOOSE])
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_launch_equals_the_loose_keywords_everywhere(arch, loose):
    launch = _launch_of(loose)
    defaults = dict(static_shared_memory=0, dynamic_shared_memory=0, max_dynamic_shared_memory=None, carveout=None,
                    block_barriers=1, max_threads_per_block=None)
    assert {name: getattr(launch, name) for name in defaults} == {
        **defaults, **{k: v for k, v in loose.items() if k in defaults}}
    assert occupancy.calculate(arch, launch=launch) == occupancy.calculate(arch, **loose)
    assert occupancy.cliffs(arch, launch=launch) == occupancy.cliffs(arch, **loose)
    search = {k: v for k, v in loose.items() if k != "threads_per_block"}
    assert occupancy.max_potential_block_size(arch, launch=launch, sm_count=100) == occupancy.max_potential_block_size(
        arch, **search, sm_count=100)
    assert occupancy.calculate(arch, launch) == occupancy.calculate(arch, launch=launch)  # positional too
    unshared = {k: v for k, v in loose.items() if k != "dynamic_shared_memory"}
    assert occupancy.available_dynamic_shared_memory(arch, _launch_of(unshared), num_blocks=1) == (
        occupancy.available_dynamic_shared_memory(arch, **unshared, num_blocks=1))
    if arch == "sm_90":
        assert occupancy.max_active_clusters(H200, launch, cluster_size=2) == occupancy.max_active_clusters(
            H200, cluster_size=2, **loose)
        assert occupancy.max_potential_cluster_size(H200, launch) == occupancy.max_potential_cluster_size(
            H200, **loose)


def test_the_rules_evaluate_a_launch():
    """`_rules.evaluate` takes the Launch whole; calculate reports the same numbers."""
    launch = Launch(grid=1, block=(16, 16), registers_per_thread=33)
    arch = occupancy.architecture("sm_80")
    out = evaluate(arch, launch)
    assert int(out.active_blocks_per_sm) == occupancy.calculate(arch, launch).active_blocks_per_sm == 6


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: occupancy.calculate("sm_90", threads_per_block=256, registers_per_thread=32, threads=3),
         "calculate\\(\\) got an unexpected keyword argument 'threads'"),
        (lambda: occupancy.calculate("sm_90", block=256, threads_per_block=256, registers_per_thread=32),
         "takes block= or threads_per_block="),
        (lambda: occupancy.max_potential_block_size("sm_90", threads_per_block=256, registers_per_thread=32),
         "searches the block size"),
        (lambda: occupancy.max_active_clusters(H200, threads_per_block=256, registers_per_thread=32),
         "needs cluster_size="),
    ],
    ids=["unknown", "block and threads", "searched", "no cluster"],
)
def test_loose_keywords_are_checked_once(call, message):
    with pytest.raises(TypeError, match=message):
        call()


def test_plot_occupancy_takes_a_launch(tmp_path):
    launch = Launch(grid=1, block=128, registers_per_thread=64)
    fig = occupancy.plot_occupancy("sm_86", launch=launch, path=tmp_path / "occ.png")
    assert (tmp_path / "occ.png").stat().st_size > 1000
    assert "128 threads, 64 registers" in fig._suptitle.get_text()


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda L: occupancy.calculate("sm_90", launch=L, threads_per_block=128), "takes launch= or threads_per_block="),
        (lambda L: occupancy.cliffs("sm_90", launch=L, static_shared_memory=1), "takes launch= or static_shared_memory="),
        (lambda L: occupancy.max_potential_block_size("sm_90", launch=L, dynamic_shared_memory=lambda n: n),
         "takes launch= or dynamic_shared_memory="),
        (lambda L: occupancy.calculate("sm_90", launch=(256, 40)), "launch must be an occupancy.Launch"),
        (lambda L: occupancy.calculate("sm_90", launch=L, resources=_resources()), "takes launch= or resources="),
        (lambda L: occupancy.calculate("sm_90", threads_per_block=256), "registers_per_thread is required"),
        (lambda L: occupancy.cliffs("sm_90", registers_per_thread=32), "threads_per_block is required"),
    ],
    ids=["both calculate", "both cliffs", "both block size", "not a launch", "launch and resources", "no registers",
         "no threads"],
)
def test_launch_or_loose_not_both(call, message):
    with pytest.raises(TypeError, match=message):
        call(Launch(grid=1, block=256, registers_per_thread=40))


def test_unknown_registers_must_be_given_or_assumed():
    launch = Launch(grid=1, block=256)
    with pytest.raises(OccupancyError, match="registers_per_thread is not known"):
        occupancy.calculate("sm_90", launch=launch)
    assert launch.assuming_registers(32).registers_per_thread == 32
    assert occupancy.calculate("sm_90", launch.assuming_registers(32)) == occupancy.calculate(
        "sm_90", threads_per_block=256, registers_per_thread=32)


@settings(max_examples=150, deadline=None)
@given(
    arch=st.sampled_from([a.name for a in occupancy.architectures()]),
    block=st.tuples(st.integers(1, 64), st.integers(1, 16)),
    registers=st.integers(0, 255),
    static=st.integers(0, 48 * 1024),
    dynamic=st.integers(0, 64 * 1024),
    barriers=st.integers(0, 16),
)
def test_launch_and_loose_agree_on_random_launches(arch, block, registers, static, dynamic, barriers):
    """Every launch gives calculate() the same answer as its loose keywords (which the
    header tests check against NVIDIA's cuda_occupancy.h)."""
    if block[0] * block[1] > 1024:
        block = (block[0], 1024 // block[0])
    launch = Launch(grid=(3, 2), block=block, registers_per_thread=registers, static_shared_memory=static,
                    dynamic_shared_memory=dynamic, block_barriers=barriers)
    try:
        want = occupancy.calculate(arch, grid=(3, 2), threads_per_block=launch.threads_per_block,
                                   registers_per_thread=registers,
                                   static_shared_memory=static, dynamic_shared_memory=dynamic,
                                   block_barriers=barriers)
    except OccupancyError as exc:
        with pytest.raises(OccupancyError) as again:
            occupancy.calculate(arch, launch=launch)
        assert str(again.value) == str(exc)
        return
    # the same figures; the result's launch is each call's own (a 2-D block, or threads_per_block's 1-D one)
    got = occupancy.calculate(arch, launch=launch)
    assert got.model_dump(exclude={"launch": {"block"}}) == want.model_dump(exclude={"launch": {"block"}})
    assert got.launch.block == launch.block and want.launch.threads_per_block == block[0] * block[1]
