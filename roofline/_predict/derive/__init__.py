"""The derive step of the time model: (kernel, launch, GPU) -> typed derived quantities.

`Setting` is the checked launch; `derive` turns it into `Derived` (`quantities`): the grid and
its waves, the loads in flight, the bytes and requests at DRAM, L2 and L1, the global and shared atomics, the
issue slots, the barrier phases and the hot loop's rounds. The SASS-reading rules (`sass`),
the work shares of a triangle (`balance`), the hot loop (`hot_loop`) and L1's reuse (`reuse`)
are its parts; `step` is the derive step itself.
"""

from .step import barrier_phases, derive, dram_traffic, grid_of, issue_slots
from .hot_loop import IMPLIED_LOADS_LIMIT, enclosing_passes, hot_loop, hot_loop_trips, staying_warps
from .quantities import (
    Atomics,
    Barriers,
    Derived,
    DramTraffic,
    Grid,
    HotLoop,
    IssueSlots,
    L1Traffic,
    L2Traffic,
    LeftoverBursts,
    Loads,
    LoopAround,
    SharedAtomics,
)
from .reuse import (
    kernel_misses,
    l2_bytes_with_l1_reuse,
    l2_capacity_rereads,
    l2_requests,
    load_misses,
    served_l2_requests,
)
from .sass import (
    barriers_from_instructions,
    duplicate_warps,
    instructions_from_sass,
    loads_from_instructions,
    shared_lines,
)
from .setting import Setting, sass_of

__all__ = [
    "Atomics",
    "Barriers",
    "Derived",
    "DramTraffic",
    "Grid",
    "HotLoop",
    "IMPLIED_LOADS_LIMIT",
    "IssueSlots",
    "L1Traffic",
    "L2Traffic",
    "LeftoverBursts",
    "Loads",
    "LoopAround",
    "Setting",
    "SharedAtomics",
    "barrier_phases",
    "barriers_from_instructions",
    "derive",
    "dram_traffic",
    "duplicate_warps",
    "enclosing_passes",
    "grid_of",
    "hot_loop",
    "hot_loop_trips",
    "instructions_from_sass",
    "issue_slots",
    "kernel_misses",
    "l2_bytes_with_l1_reuse",
    "l2_capacity_rereads",
    "l2_requests",
    "load_misses",
    "loads_from_instructions",
    "sass_of",
    "served_l2_requests",
    "shared_lines",
    "staying_warps",
]
