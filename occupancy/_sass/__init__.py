"""What a kernel's SASS says: instruction counts, loops, and global loads in flight per thread.

Loads in flight are counted by register dataflow on nvdisasm's listing: walking the
steady-state loop (or the kernel, without one) in program order, a global load is in
flight from its issue until an instruction names one of the registers it writes (a read,
or a write that must wait for it), and loads are taken to complete in issue order. The
largest number in flight at once is what the thread keeps outstanding. A loop body is
walked twice and counted on the second pass, so that loads hoisted across the loop's
back edge (issued at the bottom for the next iteration) are counted with the others.

Why dataflow rather than the scoreboard bits of the encoding: the register names are
printed the same way on every architecture nvdisasm reads, while the control bits sit in
a different place on Maxwell/Pascal (a control word per three instructions) than from
Volta on (bits 105-125 of each instruction) and are documented by no one but
reverse-engineering projects. Where those bits are known (sm_75 to sm_120), the loads
the compiler's scoreboards let a thread keep outstanding equal this count on every kernel
with fewer than 12 in flight and on 95% of all the kernels tests/occupancy/test_sass.py
compiles; beyond that the compiler may wait an instruction early on a shared scoreboard,
or consume loads out of issue order.

The same listing gives four facts about addresses (`SassSummary.thread_index_components`,
``global_atomics_one_address``, ``global_stores_one_address``, ``hot_loop_load_sources``):
which ``threadIdx`` components the kernel reads at all, which global atomics and stores write
one address for every thread, block and loop trip (forward register dataflow: an address
built from constants and kernel parameters alone), and what reaches the address of each load
of the hot loop, with whether the loop moves it a line or more per trip. The time model takes
copies of a warp, lines shared in one trip, counters and flags from them.
"""

from __future__ import annotations

from ._reader import Summaries, read_sass, sass_summaries, summarize
from ._summary import SassCounts, SassLoop, SassSummary

__all__ = ["SassCounts", "SassLoop", "SassSummary", "Summaries", "read_sass", "sass_summaries", "summarize"]
