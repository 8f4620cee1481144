"""The loaded round trip's two walks (validate/kernels/compute.cu, scripts/loaded_trip_probe.py):
eight loads a trip in both, and the copy walk stores every word it loads in the same trip, as
their SASS shows (sm_90)."""

from __future__ import annotations

import functools

import occupancy
import pytest

from validate.device import kernel_source


@functools.lru_cache(maxsize=None)
def _sass(kernel: str) -> occupancy.SassSummary:
    try:
        resources = occupancy.kernel_resources(kernel_source("compute.cu"), arch="sm_90", kernel=kernel)
    except (occupancy.OccupancyError, ImportError) as exc:
        pytest.skip(f"compute.cu does not compile here (NVRTC and nvdisasm): {exc}")
    assert resources.sass is not None
    return resources.sass


def test_the_walk_loads_eight_words_a_trip_and_stores_once():
    # nvcc 13 unrolls the trip loop twice (16 loads) and runs an odd trip after it
    sass = _sass("trip_walk")
    loop = sass.loops[0].instructions
    assert len(sass.loops) == 1 and loop.global_loads % 8 == 0 and loop.global_stores == 0
    assert sass.instructions.global_loads % 8 == 0 and sass.instructions.global_stores == 1


def test_the_copy_walk_stores_each_word_it_loads_in_the_same_trip():
    sass = _sass("trip_walk_copy")
    assert (sass.instructions.global_loads, sass.instructions.global_stores) == (8, 9)  # and the sum's store
    assert len(sass.loops) == 1 and (sass.loops[0].instructions.global_loads, sass.loops[0].instructions.global_stores) == (8, 8)
