"""Global atomics: updates at L2's atomic units, and contention on few addresses.

A global atomic (``ATOMG``/``RED``) is carried out at the L2 slice that owns its line:
updates spread over many lines proceed in parallel at L2's atomic throughput
(``atomic_spread_updates_per_second``), while updates to one address are applied one after
the other at that slice (``atomic_one_address_updates_per_second``). With ``A`` addresses
hit evenly, the busiest takes ``updates / A`` of them in series. A warp-aggregated atomic
(the warp's leader adds the warp's sum) is one update. Stores to one address (a flag every
warp sets) queue at that slice the same way, at their own rate. The rates are measured by the
memory-terms probe of ``gpuroof validate`` (`validate._memory_terms`).
"""

from __future__ import annotations

from ._term import Setting, Term

__all__ = ["atomics_term"]


def atomics_term(setting: Setting) -> Term:
    """``max(updates / spread rate, updates / addresses / one-address rate + one-address
    stores / their rate)`` (0 without ``kernel.atomics``, ``kernel.one_address_stores`` or
    the rates).

    ``kernel.atomics`` counts the updates (active lanes of the atomic instructions; one per
    warp when aggregated), ``kernel.atomic_addresses`` the addresses they update. Where the
    kernel does not say and its SASS finds every global atomic's address the same for all
    threads, blocks and trips (``SassSummary.global_atomics_one_address``: a counter), they
    update one address; otherwise the updates are taken as spread (the contention part is
    then left out, a note says so).
    """
    kernel, cal = setting.kernel, setting.calibration
    addresses = kernel.atomic_addresses
    sass = setting.sass
    if addresses is None and sass is not None and sass.global_atomics and \
            sass.global_atomics_one_address == sass.global_atomics:
        addresses = 1
    updates = float(kernel.atomics or 0)
    spread_rate = cal.atomic_spread_updates_per_second
    one_rate = cal.atomic_one_address_updates_per_second
    notes: tuple[str, ...] = ()
    spread = updates / spread_rate if updates and spread_rate else 0.0
    serial = 0.0
    if updates and one_rate:
        if addresses:
            serial = updates / max(1.0, float(addresses)) / one_rate
        else:
            notes = ("global atomics' addresses not known: taken as spread over L2 (no contention)",)
    stores = float(kernel.one_address_stores or 0)
    store_rate = cal.one_address_stores_per_second
    flagged = stores / store_rate if stores and store_rate else 0.0
    serial += flagged
    inputs = {"atomic_updates": updates, "atomic_addresses": float(addresses or 0),
              "one_address_stores": stores, "one_address_stores_per_second": store_rate or 0.0,
              "one_address_store_seconds": flagged,
              "atomic_spread_updates_per_second": spread_rate or 0.0,
              "atomic_one_address_updates_per_second": one_rate or 0.0,
              "spread_seconds": spread, "contention_seconds": serial}
    return Term(name="atomics", side="memory", seconds=max(spread, serial), limiter="cache_bandwidth",
                inputs=inputs, notes=notes)
