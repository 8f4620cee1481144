"""Memory-access analysis: a launch's exact global traffic, a warp's transactions, bank conflicts.

- `traffic` counts the bytes and 32-byte sectors a launch's global accesses (`Access`, with
  index functions of the block and thread coordinates, `Coords`) request at each level,
  exactly, and returns the `roofline.Traffic` a `roofline.Kernel` takes; `locality` gives the
  per-GPU figures of how the hardware combines them (`Locality`).
- Global memory of one warp (Cheng, Grossman and McKercher, *Professional CUDA C
  Programming*, ch.4): cached loads move 128-byte L1 lines, uncached loads 32-byte segments
  (the L2 sector), stores 32-byte segments grouped into 1-, 2- or 4-segment transactions
  (`warp_transactions`).
- Shared memory (ch.5): 32 banks of 4 bytes with broadcast of identical words; 8-byte
  accesses are served per half-warp and 16-byte accesses per quarter-warp (`bank_conflicts`).
- The CUDA memory spaces as data (`memory_space`, `memory_spaces`: a `MemorySpace` each).

Examples
--------
>>> from roofline.memory import warp_addresses, warp_transactions
>>> warp_transactions(warp_addresses(offset=11), cached=False).efficiency
0.8
"""

from ._locality import Locality, locality
from ._spaces import MemorySpace, memory_space, memory_spaces
from ._traffic import Access, Coords, traffic
from ._warp_access import (
    BankConflicts,
    WarpTransactions,
    bank_conflicts,
    warp_addresses,
    warp_transactions,
)
from ._warps import (
    BANK_BYTES,
    CACHE_LINE_BYTES,
    SECTOR_BYTES,
    SHARED_MEMORY_BANKS,
    WARP_SIZE,
    loads_per_thread,
    sass_loads_per_thread,
)

__all__ = [
    "Access",
    "BANK_BYTES",
    "BankConflicts",
    "CACHE_LINE_BYTES",
    "Coords",
    "Locality",
    "MemorySpace",
    "SECTOR_BYTES",
    "SHARED_MEMORY_BANKS",
    "WARP_SIZE",
    "WarpTransactions",
    "bank_conflicts",
    "loads_per_thread",
    "locality",
    "memory_space",
    "memory_spaces",
    "sass_loads_per_thread",
    "traffic",
    "warp_addresses",
    "warp_transactions",
]
