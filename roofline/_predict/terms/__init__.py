"""The terms of the time model, one module per physical effect.

Each term is a pure function of `derive`'s quantities and its own parameters
(`roofline._predict.params`), returning a `Term`: its seconds, the limiter it names when it
binds, and the named quantities it used. What one term's time is made of and another takes
(the hot loop's waits, the barriers' and the L1 passes' time per block) is a typed value
(`LoopWaits`, `BarrierWait`, a float) that `evaluate` hands on, never a term's output read
by name.
"""

from ._term import Limiter, Side, Term, finite_nonnegative, finite_positive
from .atomics import atomics_term
from .barriers import BarrierWait, barrier_wait
from .dram import TAIL_SHARE, DramTime, dram_term, wave_seconds
from .dram_bytes import dram_equivalent_bytes, dram_roof, dram_sides, flush_writeback_bytes, mixed_dram_bandwidth
from .instructions import arithmetic_term, exposed_issue_seconds, instructions_term, issue_efficiency
from .l1_shared import l1_seconds_per_block, l1_term
from .l2 import l2_partial_stores_term, l2_requests_term, l2_term
from .latency import achieved_bandwidth, overlap, queued_life
from .launch import launch_term, ramp_term, spread_term
from .shared_atomics import cas_attempts_per_success, shared_atomics_term
from .trips import trips_term
from .waits import LoopWaits, loop_waits, trip_latency

__all__ = [
    "BarrierWait",
    "DramTime",
    "Limiter",
    "LoopWaits",
    "Side",
    "TAIL_SHARE",
    "Term",
    "achieved_bandwidth",
    "arithmetic_term",
    "atomics_term",
    "barrier_wait",
    "cas_attempts_per_success",
    "dram_equivalent_bytes",
    "dram_roof",
    "dram_sides",
    "dram_term",
    "exposed_issue_seconds",
    "finite_nonnegative",
    "finite_positive",
    "flush_writeback_bytes",
    "instructions_term",
    "issue_efficiency",
    "l1_seconds_per_block",
    "l1_term",
    "l2_partial_stores_term",
    "l2_requests_term",
    "l2_term",
    "launch_term",
    "loop_waits",
    "mixed_dram_bandwidth",
    "overlap",
    "queued_life",
    "ramp_term",
    "shared_atomics_term",
    "spread_term",
    "trip_latency",
    "trips_term",
    "wave_seconds",
]
