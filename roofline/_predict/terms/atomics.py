"""Global atomics: updates at L2's atomic units, and contention on few addresses.

A global atomic (``ATOMG``/``RED``) is carried out at the L2 slice that owns its line:
updates spread over many lines proceed in parallel at L2's atomic throughput
(``atomic_spread_updates_per_second``), while updates to one address are applied one after
the other at that slice (``atomic_one_address_updates_per_second``). With ``A`` addresses
hit evenly, the busiest takes ``updates / A`` of them in series. A warp-aggregated atomic
(the warp's leader adds the warp's sum) is one update. Stores to one address (a flag every
warp sets) queue at that slice the same way, at their own rate. The rates are measured by the
memory-terms probe of ``gpuroof validate`` (`validate.probes._memory_terms`).
"""

from __future__ import annotations

from ..derive import Atomics
from ..params import AtomicParams
from ..rules import on
from ._term import Term

__all__ = ["atomics_term"]


def atomics_term(atomics: Atomics, params: AtomicParams) -> Term:
    """``max(updates / spread rate, updates / addresses / one-address rate + one-address
    stores / their rate)`` (0 without ``kernel.atomics``, ``kernel.one_address_stores`` or
    the rates).

    ``kernel.atomics`` counts the updates (active lanes of the atomic instructions; one per
    warp when aggregated), `Atomics.addresses` the addresses they update (the kernel's, or
    one where its SASS finds every global atomic's address the same for all threads, blocks
    and trips: a counter). Where the addresses are not known the updates are taken as spread
    (the contention part is then left out, a note says so).
    """
    addresses, updates = atomics.addresses, atomics.updates
    spread_rate = params.atomic_spread_updates_per_second
    one_rate = params.atomic_one_address_updates_per_second
    notes: tuple[str, ...] = ()
    spread = updates / spread_rate if updates and spread_rate else 0.0
    serial = 0.0
    if updates and one_rate and on("atomic_contention"):
        if addresses:
            serial = updates / max(1.0, float(addresses)) / one_rate
        else:
            notes = ("global atomics' addresses not known: taken as spread over L2 (no contention)",)
    stores = atomics.one_address_stores
    store_rate = params.one_address_stores_per_second
    flagged = stores / store_rate if stores and store_rate else 0.0
    serial += flagged
    inputs = {"atomic_updates": updates, "atomic_addresses": float(addresses or 0),
              "one_address_stores": stores, "one_address_stores_per_second": store_rate or 0.0,
              "one_address_store_seconds": flagged,
              "atomic_spread_updates_per_second": spread_rate or 0.0,
              "atomic_one_address_updates_per_second": one_rate or 0.0,
              "spread_seconds": spread, "contention_seconds": serial}
    seconds = max(spread, serial)
    return Term(name="atomics", side="memory", seconds=seconds, limiter="cache_bandwidth",
                inputs=inputs, notes=notes)
