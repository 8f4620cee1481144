"""Global atomics: updates at L2's atomic units, contention on few addresses, and the rounds of
a contended compare-and-swap loop.

A global atomic (``ATOMG``/``RED``) is carried out at the L2 slice that owns its line:
updates spread over many lines proceed in parallel at L2's atomic throughput
(``atomic_spread_updates_per_second``), while updates to one address are applied one after
the other at that slice (``atomic_one_address_updates_per_second``). With ``A`` addresses
hit evenly, the busiest takes ``updates / A`` of them in series. A warp-aggregated atomic
(the warp's leader adds the warp's sum) is one update. Float and double adds to one word
(``REDG.E.ADD.F32``/``.F64``, where the SASS finds every one-address atomic such an add) are
applied at their own rates, measured by the global-CAS probe
(``atomic_one_address_f32_updates_per_second``, ``..._f64_...``; rule ``float_atomics``).
Stores to one address (a flag every warp sets) queue at that slice the same way, at their own
rate. The rates are measured by the memory-terms probe of ``gpuroof validate``
(`validate.probes._memory_terms`).

A compare-and-swap retry loop (read, ``atomicCAS``, retry while another thread changed the
word) that ``k`` threads run on one address at once (`cas_rounds`): every round each remaining
contender issues one CAS and one succeeds, so ``k`` updates take ``k`` rounds and
``k (k + 1) / 2`` attempts, each applied in series at the address's slice. A round cannot end
sooner than one returning CAS's round trip (the winner's CAS was sent when the previous round's
value came back; the global-CAS probe's ``cas_round_trip_seconds``, else a load's L2 hit) plus
the attempts it queues behind; and all the loop's attempts pass L2's atomic units no faster than
32-lane CAS requests on one line a warp (``cas_line_attempts_per_second``, where measured)
(docs/prediction.md, 'Contended compare-and-swap loops').
"""

from __future__ import annotations

from ..derive import Atomics
from ..params import AtomicParams
from ..rules import on
from ._term import Term

__all__ = ["atomics_term", "cas_rounds", "one_address_rate"]

_NO_CAS_TRIP = ("compare-and-swap rounds wait a load's L2 hit (l2_hit_latency_seconds): no returning CAS's round "
                "trip measured (cas_round_trip_seconds, global_cas probe)")
_NO_LINE_RATE = ("compare-and-swap loop's attempts over L2 not bounded: no rate of 32-lane CAS on one line measured "
                 "(cas_line_attempts_per_second, global_cas probe); its updates at the spread rate")


def one_address_rate(atomics: Atomics, params: AtomicParams) -> tuple[float | None, tuple[str, ...]]:
    """The rate at which the word's L2 slice applies the one-address updates: the float (double)
    adds' where `Atomics.one_address_type` says so and the probe measured it, else the integer
    adds' (``atomic_one_address_updates_per_second``, with a note where a float rate is missing)."""
    kind = atomics.one_address_type
    if kind is None:
        return params.atomic_one_address_updates_per_second, ()
    name = f"atomic_one_address_{kind}_updates_per_second"
    rate = getattr(params, name)
    if rate:
        return rate, ()
    return params.atomic_one_address_updates_per_second, (
        f"{kind} adds to one address taken at the integer adds' rate: no {name} measured (global_cas probe)",)


def cas_rounds(updates: float, contenders: float) -> tuple[float, float]:
    """The rounds and CAS attempts of `updates` (at one address) of a retry loop that
    `contenders` threads run on it at once: ``(updates, updates x (contenders + 1) / 2)``.

    ``updates / contenders`` contests of ``k = contenders`` threads each take ``k`` rounds and
    ``k + (k - 1) + ... + 1 = k (k + 1) / 2`` attempts.
    """
    return updates, updates * (contenders + 1.0) / 2.0


def _round_trip_seconds(params: AtomicParams) -> float | None:
    """A CAS loop's round: a returning CAS's round trip where measured, else a load's L2 hit."""
    return params.cas_round_trip_seconds or params.l2_hit_latency_seconds


def _serial_seconds(updates: float, contenders: float | None, params: AtomicParams,
                    one_rate: float) -> tuple[float, dict[str, float]]:
    """The busiest address's updates in series: at the one-address rate, and for a contended
    CAS loop (rule ``cas_contention``) each round one round trip plus its attempts."""
    round_trip = _round_trip_seconds(params)
    if contenders is None or not round_trip or not on("cas_contention"):
        return updates / one_rate, {}
    rounds, attempts = cas_rounds(updates, contenders)
    waits = rounds * round_trip
    return attempts / one_rate + waits, {"cas_contenders": contenders, "cas_rounds": rounds,
                                         "cas_attempts": attempts, "cas_round_seconds": round_trip,
                                         "cas_round_trip_seconds": waits}


def atomics_term(atomics: Atomics, params: AtomicParams) -> Term:
    """``max(updates / spread rate, contention + one-address stores / their rate)`` (0 without
    ``kernel.atomics``, ``kernel.one_address_stores`` or the rates).

    The contention is ``updates / addresses / one-address rate``; for a compare-and-swap loop of
    ``k = kernel.cas_contenders`` threads an address, the busiest address's ``n`` updates take
    ``n`` rounds of one round trip (``cas_round_trip_seconds``, else ``l2_hit_latency_seconds``)
    and ``n (k + 1) / 2`` attempts at the one-address rate (`cas_rounds`); the spread part is
    then at least all the loop's attempts at ``cas_line_attempts_per_second`` where measured.

    ``kernel.atomics`` counts the updates (active lanes of the atomic instructions; one per
    warp when aggregated), `Atomics.addresses` the addresses they update (the kernel's, or
    one where its SASS finds every global atomic's address the same for all threads, blocks
    and trips: a counter). Where the addresses are not known the updates are taken as spread
    (the contention part is then left out, a note says so).
    """
    addresses, updates = atomics.addresses, atomics.updates
    spread_rate = params.atomic_spread_updates_per_second
    one_rate, notes = one_address_rate(atomics, params)
    spread = updates / spread_rate if updates and spread_rate else 0.0
    loop = atomics.cas_contenders is not None and on("cas_contention")
    line_rate = params.cas_line_attempts_per_second
    if loop and updates and line_rate:
        spread = max(spread, cas_rounds(updates, atomics.cas_contenders)[1] / line_rate)
    serial = 0.0
    cas: dict[str, float] = {}
    if updates and one_rate and on("atomic_contention"):
        if addresses:
            serial, cas = _serial_seconds(updates / max(1.0, float(addresses)), atomics.cas_contenders, params,
                                          one_rate)
        else:
            notes += ("global atomics' addresses not known: taken as spread over L2 (no contention)",)
    if loop and not _round_trip_seconds(params):
        notes += ("compare-and-swap loop's rounds left out: no L2 round trip measured (l2_hit_latency_seconds)",)
    elif loop and not params.cas_round_trip_seconds:
        notes += (_NO_CAS_TRIP,)
    if loop and not line_rate:
        notes += (_NO_LINE_RATE,)
    stores = atomics.one_address_stores
    store_rate = params.one_address_stores_per_second
    flagged = stores / store_rate if stores and store_rate else 0.0
    serial += flagged
    inputs = {"atomic_updates": updates, "atomic_addresses": float(addresses or 0),
              "one_address_stores": stores, "one_address_stores_per_second": store_rate or 0.0,
              "one_address_store_seconds": flagged,
              "atomic_spread_updates_per_second": spread_rate or 0.0,
              "atomic_one_address_updates_per_second": one_rate or 0.0,
              "one_address_float_bits": {"f32": 32.0, "f64": 64.0}.get(atomics.one_address_type or "", 0.0),
              "spread_seconds": spread, "contention_seconds": serial, **cas}
    seconds = max(spread, serial)
    return Term(name="atomics", side="memory", seconds=seconds, limiter="cache_bandwidth",
                inputs=inputs, notes=notes)
