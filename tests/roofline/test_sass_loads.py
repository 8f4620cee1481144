"""`roofline.memory.sass_loads_per_thread`: the loads a thread makes, as the compiled SASS says, the
one count of the source, profile and measure paths."""

import pytest

from occupancy import SassCounts, SassLoop, SassSummary
from roofline import RooflineError
from roofline.memory import sass_loads_per_thread


def _sass(global_loads: int, *, loop: bool, width: int = 4) -> SassSummary:
    loops = (SassLoop(start_offset=0x100, end_offset=0x180, depth=1,
                      instructions=SassCounts(total=8, global_loads=1, branches=1),
                      global_loads_in_flight=1, fewest_loads_in_flight=1),) if loop else ()
    return SassSummary(architecture="sm_90", disassembler="listing", loops=loops, hot_loop=0 if loop else None,
                       instructions=SassCounts(total=40, global_loads=global_loads, global_stores=1),
                       global_loads_in_flight_per_thread=global_loads if not loop else 1, global_load_bytes=width)


@pytest.mark.parametrize(("sass", "load_bytes", "threads", "expected"), [
    (None, 4 * 2**20, 2**20, None),                          # no SASS: the caller's fallback
    (_sass(5, loop=False), None, None, 5),                   # straight-line: each load runs once
    (_sass(5, loop=False), 4 * 2**20, 2**20, 5),             # ... whatever the bytes say
    (_sass(0, loop=False), 4 * 2**20, 2**20, 1),             # no global load listed: the bytes, at least 1
    (_sass(1, loop=True), None, None, None),                 # a loop and no bytes: trips not known
    (_sass(1, loop=True), 4 * 2**26, 2**16, 1024),           # a loop: bytes over threads and 4-byte loads
    (_sass(1, loop=True, width=16), 4 * 2**26, 2**16, 256),  # ... 16-byte loads
], ids=["no-sass", "straight", "straight-with-bytes", "no-loads-listed", "loop-no-bytes", "loop", "loop-wide"])
def test_the_loads_a_thread_makes(sass, load_bytes, threads, expected):
    assert sass_loads_per_thread(sass, load_bytes=load_bytes, threads=threads) == expected


def test_bytes_without_threads_are_refused():
    with pytest.raises(RooflineError, match="threads"):
        sass_loads_per_thread(_sass(1, loop=True), load_bytes=4096)
