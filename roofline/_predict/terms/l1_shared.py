"""L1/shared: the kernel's L1 data-path bytes at the L1's datasheet rate."""

from __future__ import annotations

from ._term import Setting, Term

__all__ = ["l1_seconds_per_block", "l1_term"]


def l1_seconds_per_block(setting: Setting) -> float:
    """Seconds one block's L1 passes take in its SM's L1 pipe (one 128-byte line per clock):
    ``l1_bytes`` per block at the SM's share of the L1 bandwidth (0 without ``l1_bytes``)."""
    kernel, gpu = setting.kernel, setting.gpu
    if not kernel.l1_bytes:
        return 0.0
    return float(kernel.l1_bytes) / setting.launch.blocks / (gpu.bandwidth("l1") / gpu.sm_count)


def l1_term(setting: Setting) -> Term:
    """``l1_bytes`` over the L1 bandwidth on the busiest SM: the datasheet rate (one 128-byte
    pass per clock and SM), which shared-memory wavefronts reach (global loads through L1
    reach less). Each SM's L1 serves its own blocks, so the SM with the most blocks
    (`Setting.busiest_sm_factor`) sets the time."""
    l1_bytes = setting.kernel.l1_bytes
    bandwidth = setting.gpu.bandwidth("l1")
    factor = setting.busiest_sm_factor
    seconds = float(l1_bytes) * factor / bandwidth if l1_bytes else 0.0
    return Term(name="l1_shared", side="memory", seconds=seconds, limiter="cache_bandwidth",
                inputs={"l1_bytes": float(l1_bytes or 0), "l1_bytes_per_second": bandwidth, "busiest_sm_factor": factor})
