"""L2: the kernel's L2 bytes (less what L1 keeps) at L2's bandwidth, its requests at L2's
request rate, and the partial-sector writes L2 merges one by one."""

from __future__ import annotations

from ..derive import Grid, L2Traffic
from ..params import L2Params, L2RequestParams, PartialStoreParams
from ._term import Term

__all__ = ["l2_partial_stores_term", "l2_requests_term", "l2_term"]


def l2_term(l2: L2Traffic, params: L2Params) -> Term:
    """`l2_bytes_with_l1_reuse` over L2's bandwidth: its measured plateau where the calibration
    has it (``l2_read_bytes_per_second``), else the datasheet's. The roof: the same bytes at
    the datasheet's rate, or at the plateau where that is higher (the datasheet's L2 rate is
    derived from the SM clock, and a profile's lower clock lowers it below what L2 sustains)."""
    l2_bytes = l2.served_bytes
    bandwidth = params.l2_read_bytes_per_second or params.l2_bandwidth
    seconds = l2_bytes / bandwidth if l2_bytes else 0.0
    roof = l2_bytes / max(bandwidth, params.l2_bandwidth) if l2_bytes else 0.0
    return Term(name="l2", side="memory", seconds=seconds, limiter="cache_bandwidth", roof_seconds=roof,
                inputs={"l2_bytes": l2_bytes or 0.0, "l2_bytes_per_second": bandwidth})


def l2_partial_stores_term(l2: L2Traffic, grid: Grid, params: PartialStoreParams) -> Term:
    """The sectors warps write only in part (``l2_partial_store_sectors``), which L2 merges one
    by one, at the rate the calibration's probe measured (0 when either is missing).

    The busiest SM's sectors (``sectors x busiest_sm_factor / SMs``) go at its share of the
    probe's whole-GPU rate among the SMs the grid occupies, at most what one SM's stores get
    alone (``sm_partial_store_sectors_per_second``; without it, the share of all SMs).
    """
    sectors = l2.partial_store_sectors
    rate, sms = params.l2_partial_store_sectors_per_second, grid.sm_count
    factor = grid.busiest_sm_factor
    alone = params.sm_partial_store_sectors_per_second
    # the SMs in use together, each at most at its port: the busiest SM's sectors at their share
    in_use = grid.sms_in_use if alone else sms
    together = min(alone * in_use, rate) if alone and rate else rate
    seconds = float(sectors) * factor * (in_use / sms) / together if sectors and together else 0.0
    per_sm = together / in_use if together else None
    return Term(name="l2_partial_stores", side="memory", seconds=seconds, limiter="cache_bandwidth",
                inputs={"l2_partial_store_sectors": float(sectors or 0),
                        "l2_partial_store_sectors_per_second": rate or 0.0, "busiest_sm_factor": factor,
                        "sm_partial_store_sectors_per_second": per_sm or 0.0})


def l2_requests_term(l2: L2Traffic, params: L2RequestParams) -> Term:
    """L2's request limit: the requests that reach L2 (`served_l2_requests`) at the rate the
    L2-request probe measured (``l2_requests_per_second``: one-sector requests, where bytes do
    not bind). With the ``l2`` term (sectors at L2's bandwidth) the time at L2 is ``max(sectors
    / sector rate, requests / request rate)``: full lines are bound by bytes, scattered sectors
    by requests."""
    requests = l2.requests
    rate = params.l2_requests_per_second
    seconds = requests / rate if requests and rate else 0.0
    return Term(name="l2_requests", side="memory", seconds=seconds, limiter="cache_bandwidth",
                inputs={"l2_requests": requests or 0.0, "l2_requests_per_second": rate or 0.0})
