"""Exact global-memory traffic of an access pattern, in time independent of the grid size.

A kernel's global accesses are given as numpy functions of the block and thread
coordinates (and of a loop iteration), each with a guard. For every warp-wide execution
of every access this module counts the bytes requested (active lanes x access size) and
the 32-byte sectors touched (the L2 traffic), and for every array the distinct sectors
read and written over the whole launch (the compulsory DRAM traffic), exactly.

How, without visiting every block: a warp's sector count only depends on where its block
sits through (a) the guards, which differ only in the first and last blocks of each grid
dimension, and (b) the alignment of its addresses to 32 bytes. When addresses are affine in
the block index (moving a block by one moves each of its threads' addresses by the same
``slope`` bytes), moving it by ``P = 32 / gcd(32, slope)`` blocks moves them by whole
sectors and leaves every count unchanged. So each grid dimension (and each loop) splits
into its boundary blocks, taken one by one, and an interior run whose blocks fall into
``P`` classes; one representative per class is evaluated and weighted by the class size.
The boundary widths are found by probing: blocks are compared with the middle one with the
other dimensions at a few values. Those values must include one between every two places
where a guard switches, or a guard that switches on between them goes unseen. So the index
and guard functions are first called on traced block indices (`_Affine`), which keep every
comparison of an affine expression, and each comparison's switch points along each dimension
are probed too (`_Cuts`): between two of them no guard changes, and the classes are exact
(`_proven`). A pattern the tracer cannot follow (a numpy function of a block index, a product
of two) or with too many switch points is counted block by block where that is within
`EXHAUSTIVE_THREAD_BUDGET`, and so is one found outside the assumptions; beyond the budget the
latter is refused, and the former rests on the probes and on checks at the corners and the
centre of every class.

The distinct sectors of an array are the union, over the classes, of a representative's
sectors translated by a lattice of whole-sector steps. Its size is counted without
listing it: along the dimension with the largest step, translates more than ``D`` steps
apart cannot meet, so the count grows by the same amount per step after ``D`` of them
(counted once, then extrapolated), and the last dimension is an exact union of intervals
per residue of its step.
"""

from .count import traffic
from .passes import EXHAUSTIVE_THREAD_BUDGET, FAST_THREAD_BUDGET
from .space import Access, Coords

__all__ = ["Access", "Coords", "EXHAUSTIVE_THREAD_BUDGET", "FAST_THREAD_BUDGET", "traffic"]
