"""The time model's building blocks, for use on their own: a `Term` and the quantities it reads.

A `roofline.Prediction` is made of `Term` s (seconds, what limits them, the quantities they
used) joined by `overlap`. The functions here are the pieces those terms are built from:
a kernel's achieved bandwidth (`achieved_bandwidth`), its DRAM bytes in full-rate
equivalents (`dram_equivalent_bytes`) and the bandwidth of a mix of reads and writes
(`mixed_dram_bandwidth`), the DRAM roof of a GPU (`dram_roof`), the L2 bytes left after L1
reuse (`l2_bytes_with_l1_reuse`), the instruction counts of a kernel's SASS
(`instructions_from_sass`) and a kernel's counts as a prediction moves them, whose plain
roofline is the prediction's bound (`bound_counts`). `RULES` lists the model's rules (each
`Rule` with where it lives, its evidence and what the model does without it), and
`disabled` turns some off inside a ``with`` block, to measure what each one does.

Examples
--------
>>> from roofline.terms import overlap
>>> overlap(1.0, 0.0)
1.0
"""

from ._predict import (
    Term,
    achieved_bandwidth,
    bound_counts,
    dram_equivalent_bytes,
    dram_roof,
    instructions_from_sass,
    l2_bytes_with_l1_reuse,
    mixed_dram_bandwidth,
    overlap,
)
from ._predict.rules import RULES, Rule, disabled

__all__ = [
    "RULES",
    "Rule",
    "Term",
    "achieved_bandwidth",
    "bound_counts",
    "disabled",
    "dram_equivalent_bytes",
    "dram_roof",
    "instructions_from_sass",
    "l2_bytes_with_l1_reuse",
    "mixed_dram_bandwidth",
    "overlap",
]
