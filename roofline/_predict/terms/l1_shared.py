"""L1/shared: the kernel's L1 data-path bytes at the L1's datasheet rate."""

from __future__ import annotations

from ..derive import Grid, L1Traffic
from ..params import L1Params
from ._term import Term

__all__ = ["l1_seconds_per_block", "l1_term"]


def l1_seconds_per_block(l1: L1Traffic, grid: Grid, params: L1Params) -> float:
    """Seconds one block's L1 passes take in its SM's L1 pipe (one 128-byte line per clock):
    ``l1_bytes`` per block at the SM's share of the L1 bandwidth (0 without ``l1_bytes``)."""
    if not l1.bytes:
        return 0.0
    return float(l1.bytes) / grid.blocks / (params.l1_bandwidth / grid.sm_count)


def l1_term(l1: L1Traffic, grid: Grid, params: L1Params) -> Term:
    """``l1_bytes`` over the L1 bandwidth on the busiest SM: the datasheet rate (one 128-byte
    pass per clock and SM), which shared-memory wavefronts reach (global loads through L1
    reach less). Each SM's L1 serves its own blocks, so the SM with the most blocks
    (`Grid.busiest_sm_factor`) sets the time."""
    bandwidth = params.l1_bandwidth
    factor = grid.busiest_sm_factor
    seconds = float(l1.bytes) * factor / bandwidth if l1.bytes else 0.0
    # the roof: every SM's L1 busy, the bytes spread evenly (the busiest SM's factor is >= 1)
    roof = float(l1.bytes) / bandwidth if l1.bytes else 0.0
    return Term(name="l1_shared", side="memory", seconds=seconds, limiter="cache_bandwidth", roof_seconds=roof,
                inputs={"l1_bytes": float(l1.bytes or 0), "l1_bytes_per_second": bandwidth, "busiest_sm_factor": factor})
