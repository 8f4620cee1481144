"""Loads in flight from the SASS: KernelResources.sass -> occupancy.Launch -> roofline.predict."""

from __future__ import annotations

import pytest

import occupancy
import roofline
from roofline import models

H200 = "H200"
N = 1 << 26
GRID = 132  # one block of 256 threads per SM: the H200's low-occupancy grid-stride copy
PER_THREAD = -(-N // (GRID * 256))


def sass(in_flight: int, instruction: str = "LDG.E.128", width: int = 16) -> occupancy.SassSummary:
    loads = occupancy.SassCounts(total=40, global_loads=in_flight, global_stores=in_flight)
    return occupancy.SassSummary(
        architecture="sm_90", disassembler="nvdisasm 13.5.37", instructions=loads,
        global_loads_in_flight_per_thread=in_flight, global_load_bytes=width if in_flight else None,
        global_load_bytes_in_flight_per_thread=in_flight * width,
        global_load_instruction=instruction if in_flight else None)


def resources(summary: occupancy.SassSummary | None, name: str = "copy") -> occupancy.KernelResources:
    return occupancy.KernelResources(kernel=name, architecture="sm_90", registers_per_thread=32, sass=summary)


def launch(r: occupancy.KernelResources | None, **extra) -> occupancy.Launch:
    fields = {"grid": GRID, "block": 256, "resources": r, "elements_per_thread": PER_THREAD,
              **({} if r is not None else {"registers_per_thread": 32}), **extra}
    return occupancy.Launch(**fields)


@pytest.mark.parametrize(
    ("summary", "given", "expected"),
    [(sass(7), None, 7), (sass(7), 2, 2), (sass(0), None, None), (None, None, None), (None, 3, 3)],
    ids=["from-the-sass", "given-wins", "sass-without-loads", "no-sass", "given-without-sass"],
)
def test_launch_takes_loads_in_flight_from_the_sass(summary, given, expected):
    r = resources(summary)
    kwargs = {} if given is None else {"loads_in_flight_per_thread": given}
    assert launch(r, **kwargs).loads_in_flight_per_thread == expected


def test_new_resources_bring_their_own_count():
    first = launch(resources(sass(7)))
    moved = first.model_copy(update={"resources": resources(sass(3))})
    assert moved.loads_in_flight_per_thread == 3
    # a change that detaches the resources keeps the count as a plain number
    assert first.model_copy(update={"registers_per_thread": 40}).loads_in_flight_per_thread == 7
    given = launch(resources(sass(7)), loads_in_flight_per_thread=2)
    assert given.model_copy(update={"resources": resources(sass(3))}).loads_in_flight_per_thread == 2


@pytest.mark.parametrize(
    ("summary", "extra", "note"),
    [
        (sass(7, "LDG.E", 4), {}, "loads in flight per thread from the SASS (7 LDG.E in flight)"),
        (sass(2), {}, "loads in flight per thread from the SASS (2 LDG.E.128 in flight)"),
        (None, {}, "loads in flight per thread assumed = elements_per_thread (no SASS)"),
        (sass(0), {}, "loads in flight per thread assumed = elements_per_thread (the SASS issues no global loads)"),
        (sass(7), {"loads_in_flight_per_thread": 2}, None),
        (sass(7), {"elements_per_thread": 1}, None),
    ],
    ids=["sass", "sass-vector", "no-sass", "sass-without-loads", "given", "one-element"],
)
def test_predict_says_where_loads_in_flight_came_from(summary, extra, note):
    p = roofline.predict(H200, models.copy(N), launch(resources(summary), **extra))
    in_flight = [a for a in p.assumptions if "loads in flight" in a]
    assert in_flight == ([note] if note else [])


def test_the_sass_count_is_the_count_predict_uses():
    kernel = models.copy(N)
    from_sass = roofline.predict(H200, kernel, launch(resources(sass(7, "LDG.E", 4))))
    plain = launch(None, loads_in_flight_per_thread=7)
    assert from_sass.seconds == pytest.approx(roofline.predict(H200, kernel, plain).seconds, rel=1e-6)
    # the argument of predict wins over the launch, and says nothing
    by_argument = roofline.predict(H200, kernel, launch(resources(sass(7))), loads_in_flight_per_thread=1)
    assert by_argument.seconds > from_sass.seconds
    assert not [a for a in by_argument.assumptions if "loads in flight" in a]


def test_from_a_compiled_kernel_to_predict():
    """NVRTC -> cubin -> nvdisasm -> Launch -> predict, with four independent float4 loads."""
    src = '''
    extern "C" __global__ void copy4(const float4* __restrict__ x, float4* __restrict__ y, int n) {
        int t = gridDim.x * blockDim.x;
        for (int i = blockIdx.x * blockDim.x + threadIdx.x; i + 3 * t < n; i += 4 * t) {
            float4 a = x[i], b = x[i + t], c = x[i + 2 * t], d = x[i + 3 * t];
            y[i] = a; y[i + t] = b; y[i + 2 * t] = c; y[i + 3 * t] = d;
        }
    }
    '''
    try:
        r = occupancy.kernel_resources(src, arch="sm_90")
    except ImportError as exc:
        pytest.skip(f"NVRTC is not installed: {exc}")
    if r.sass is None:
        pytest.skip(f"the SASS was not read: {r.sources['sass']}")
    assert r.sources["sass"].startswith("CUDA source (<source>) via NVRTC, cubin .text.copy4, disassembled by nvdisasm")
    n = r.sass.global_loads_in_flight_per_thread
    assert n >= 4 and n % 4 == 0 and r.sass.global_load_instruction == "LDG.E.128"  # 4 per iteration, unrolled
    kernel = models.copy(N)
    p = roofline.predict(H200, kernel, occupancy.Launch(grid=GRID, block=256, resources=r,
                                                        elements_per_thread=PER_THREAD // 4))
    assert f"loads in flight per thread from the SASS ({n} LDG.E.128 in flight)" in p.assumptions


def _grid_stride_sass() -> occupancy.SassSummary:
    # a grid-stride sum: one LDG.E in a loop of 6 instructions, one load in flight
    body = occupancy.SassCounts(total=6, global_loads=1)
    return occupancy.SassSummary(
        architecture="sm_90", disassembler="listing", instructions=occupancy.SassCounts(total=20, global_loads=1),
        loops=(occupancy.SassLoop(start_offset=0, end_offset=96, depth=1, instructions=body, global_loads_in_flight=1),),
        hot_loop=0, global_loads_in_flight_per_thread=1, global_load_bytes=4, global_load_instruction="LDG.E")


TRIPS_UNKNOWN = "the SASS's hot loop loads global memory, but the kernel gives no load_bytes"
# (id, kernel fields beyond dram_bytes, launch fields, whether the note is there): the note is
# there exactly where the loop's trips rest on nothing (one element a thread, no load bytes)
LOOP_NOTES = [
    ("dram bytes alone", {}, {}, True),
    ("load bytes", {"load_bytes": 4 * N}, {}, False),
    ("elements per thread", {}, {"elements_per_thread": PER_THREAD}, False),
    ("instructions", {"instructions": 1e6}, {}, False),
]


@pytest.mark.parametrize(("fields", "extra", "noted"), [c[1:] for c in LOOP_NOTES], ids=[c[0] for c in LOOP_NOTES])
def test_predict_says_when_the_hot_loops_trips_rest_on_nothing(fields, extra, noted):
    r = resources(_grid_stride_sass(), "grid_stride_sum")
    k = roofline.Kernel(name="grid_stride_sum", flops=N, dram_bytes=4 * N, **fields)
    p = roofline.predict(H200, k, occupancy.Launch(grid=GRID, block=256, resources=r, **extra))
    assert any(TRIPS_UNKNOWN in a for a in p.assumptions) is noted
    if fields.get("load_bytes"):  # the trips known, the loop's round trips count: far slower than one round
        bare = roofline.predict(H200, k.model_copy(update={"load_bytes": None}),
                                occupancy.Launch(grid=GRID, block=256, resources=r))
        assert p.seconds > 3 * bare.seconds
