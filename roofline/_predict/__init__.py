"""The time model's machinery: derive -> terms -> compose.

Reading order:

1. `compose` (``compose.py``): how a time is made: `evaluate` computes every term on the
   launch's derived quantities and hands on what one term's time is made of to the terms
   that take it; `compose` is the one rule that joins them and names the term that binds.
2. One term (``terms/``, e.g. ``terms/dram.py``): a pure function of derived quantities and
   its own parameters, returning a `Term` (seconds, limiter, the named quantities it used).
3. Its parameters (``params.py``): one typed group per term, each field naming the
   ``gpuroof validate`` probe that measures it; the values are the GPU's packaged
   calibration (``roofline/data/gpus/<gpu>.toml``).
4. What it reads (``derive/``): `derive` turns (kernel, launch, GPU) into typed quantities
   (`Derived`: the grid and its tail, loads in flight, bytes and requests per level, atomics,
   issue slots, barrier phases, the hot loop's rounds), each computed once.

`roofline.predict` (``roofline/_time_model.py``) checks its arguments, runs these steps and
returns a `roofline.Prediction`.
"""

from .compose import Composition, bound_counts, compose, evaluate, overlap, roofline_bound
from .derive import (
    Derived,
    Setting,
    barriers_from_instructions,
    derive,
    duplicate_warps,
    instructions_from_sass,
    kernel_misses,
    l2_bytes_with_l1_reuse,
    loads_from_instructions,
    shared_lines,
)
from .params import Parameters, parameters, probes
from .terms import (
    TAIL_SHARE,
    DramTime,
    Limiter,
    Side,
    Term,
    achieved_bandwidth,
    dram_equivalent_bytes,
    dram_roof,
    finite_nonnegative,
    finite_positive,
    flush_writeback_bytes,
    mixed_dram_bandwidth,
    queued_life,
    trip_latency,
)

__all__ = [
    "Composition",
    "Derived",
    "DramTime",
    "Limiter",
    "Parameters",
    "Setting",
    "Side",
    "TAIL_SHARE",
    "Term",
    "achieved_bandwidth",
    "barriers_from_instructions",
    "bound_counts",
    "compose",
    "derive",
    "dram_equivalent_bytes",
    "dram_roof",
    "duplicate_warps",
    "evaluate",
    "finite_nonnegative",
    "finite_positive",
    "flush_writeback_bytes",
    "instructions_from_sass",
    "kernel_misses",
    "l2_bytes_with_l1_reuse",
    "loads_from_instructions",
    "mixed_dram_bandwidth",
    "overlap",
    "parameters",
    "probes",
    "queued_life",
    "roofline_bound",
    "shared_lines",
    "trip_latency",
]
