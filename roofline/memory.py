"""Memory-access analysis: global-memory transactions of a warp and shared-memory bank conflicts.

Global memory (Cheng, Grossman and McKercher, *Professional CUDA C Programming*, ch.4):
cached loads move 128-byte L1 lines, uncached loads 32-byte segments (the L2 sector),
stores 32-byte segments grouped into 1-, 2- or 4-segment transactions. Shared memory
(ch.5): 32 banks of 4 bytes with broadcast of identical words; 8-byte accesses are served
per half-warp and 16-byte accesses per quarter-warp.

Examples
--------
>>> from roofline.memory import warp_addresses, warp_transactions
>>> warp_transactions(warp_addresses(offset=11), cached=False).efficiency
0.8
"""

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
)

__all__ = [
    "BANK_BYTES",
    "BankConflicts",
    "CACHE_LINE_BYTES",
    "SECTOR_BYTES",
    "SHARED_MEMORY_BANKS",
    "WARP_SIZE",
    "WarpTransactions",
    "bank_conflicts",
    "warp_addresses",
    "warp_transactions",
]
