"""The terms of the time model, one module each (composed by `roofline._time_model`).

Each term is a function ``term(setting: Setting) -> Term``: its seconds, the limiter it
names when it binds, and the named quantities it used. To add one: a module here, and one
line in `roofline._time_model.TERMS`.
"""

from .terms.atomics import atomics_term
from .terms.bound import roofline_bound
from .terms._term import Limiter, Setting, Side, Term, finite_nonnegative, finite_positive
from .terms.dram import (
    TAIL_SHARE,
    dram_equivalent_bytes,
    dram_roof,
    dram_sides,
    dram_term,
    flush_writeback_bytes,
    mixed_dram_bandwidth,
)
from .terms.issue import arithmetic_term, busiest_sm, instructions_term
from .terms.l1_shared import l1_term
from .terms.l2 import l2_bytes_with_l1_reuse, l2_partial_stores_term, l2_requests, l2_requests_term, l2_term
from .terms.latency import achieved_bandwidth, queued_life
from .terms.launch import launch_term, ramp_term, spread_term
from .derive.sass import barriers_from_instructions, duplicate_warps, instructions_from_sass, loads_from_instructions
from .terms.trips import hot_loop_trips, loop_waits, trip_latency, trips_term

__all__ = [
    "Limiter",
    "Setting",
    "Side",
    "TAIL_SHARE",
    "Term",
    "achieved_bandwidth",
    "arithmetic_term",
    "atomics_term",
    "barriers_from_instructions",
    "busiest_sm",
    "dram_equivalent_bytes",
    "dram_roof",
    "dram_sides",
    "dram_term",
    "duplicate_warps",
    "finite_nonnegative",
    "finite_positive",
    "flush_writeback_bytes",
    "hot_loop_trips",
    "instructions_from_sass",
    "instructions_term",
    "l1_term",
    "l2_bytes_with_l1_reuse",
    "l2_partial_stores_term",
    "l2_requests",
    "l2_requests_term",
    "l2_term",
    "launch_term",
    "loads_from_instructions",
    "loop_waits",
    "mixed_dram_bandwidth",
    "queued_life",
    "ramp_term",
    "roofline_bound",
    "spread_term",
    "trip_latency",
    "trips_term",
]
