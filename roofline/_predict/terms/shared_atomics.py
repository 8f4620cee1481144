"""Shared-memory atomics: each SM's shared memory applies its blocks' atomic updates and
compare-and-swap attempts at its own rates, and a contended CAS loop retries.

A plain shared atomic (``ATOMS.ADD`` and the like) is applied in the SM's shared memory,
one active lane at a time at one of two measured rates: the lanes of a warp on one word, or
spread over the 32 banks. A compare-and-swap retry loop (``do { assumed = old; old =
atomicCAS(p, assumed, f(assumed)); } while (old != assumed)``) costs its attempts, failed or
not, at the CAS rates: with ``k`` threads contending for one word, each round every
contender tries and one succeeds (the others read back the winner's value and try again), so
``k`` successes take ``k`` rounds and ``k + (k-1) + ... + 1 = k(k+1)/2`` attempts, ``(k+1)/2``
attempts per success. Rounds on one word follow each other by at least one CAS round trip
(the next winner needs the last one's value), and so do one thread's own loops: the longer
chain, times the waves of blocks the busiest SM runs, bounds the loops from below. The
rates and the round trip are measured by the shared-atomics probe of ``gpuroof validate``
(`validate.probes._shared_atomics`); without them the term is 0 and a note names what is
missing.
"""

from __future__ import annotations

from ..._warps import WARP_SIZE
from ..derive import Grid, SharedAtomics
from ..params import SharedAtomicParams
from ..rules import on
from ._term import Term

__all__ = ["cas_attempts_per_success", "shared_atomics_term"]


def cas_attempts_per_success(contenders: float) -> float:
    """Attempts a CAS retry loop makes per success with ``contenders`` threads on one word:
    ``(k+1)/2`` (``k`` successes take ``k(k+1)/2`` attempts; 1 without contention)."""
    k = max(1.0, float(contenders))
    return (k + 1.0) / 2.0 if on("shared_cas_retries") else 1.0


def _rate(params: SharedAtomicParams, what: str, one_word: bool) -> tuple[float | None, str]:
    """The rate of ``what`` (``atomic_..._updates`` or ``cas_..._attempts``) on one word or
    spread, and its calibration field's name."""
    name = f"sm_shared_{what.format('one_word' if one_word else 'spread')}_per_second"
    return getattr(params, name), name


def _cas_chain_seconds(s: SharedAtomics, grid: Grid, round_trip: float) -> float:
    """The longest chain of CAS round trips on the busiest SM: per block, the successes on one
    word (all a block's on ``words`` words) or one thread's own, whichever is longer, times the
    waves of blocks that SM runs."""
    per_thread = s.cas_successes / s.threads if s.threads else 0.0
    per_word = s.cas_successes / grid.blocks / s.words if s.words else 0.0
    blocks_on_busiest = grid.blocks * grid.busiest_sm_factor / grid.sm_count
    waves = max(1.0, blocks_on_busiest / max(1, grid.first_wave_blocks))
    return max(per_thread, per_word) * round_trip * waves


def shared_atomics_term(s: SharedAtomics, grid: Grid, params: SharedAtomicParams) -> Term:
    """``updates / rate + max(attempts / CAS rate, CAS chain)`` on the busiest SM (0 without
    ``kernel.shared_atomics`` or ``kernel.shared_cas``, or without the rates).

    The rates are one SM's: the launch's work on the busiest SM is its share
    ``busiest_sm_factor / sm_count``. A block whose atomics hit fewer words than a warp has
    lanes (``kernel.shared_atomic_words`` < 32) takes the one-word rates, else (or unknown)
    the spread rates. ``attempts = successes x (k+1)/2`` (`cas_attempts_per_success`, ``k``:
    ``kernel.shared_cas_contenders``).
    """
    p = params
    one_word = s.words is not None and s.words < WARP_SIZE
    share = grid.busiest_sm_factor / grid.sm_count
    notes: list[str] = []
    add_rate, add_name = _rate(p, "atomic_{}_updates", one_word)
    plain = s.updates * share / add_rate if s.updates and add_rate else 0.0
    if s.updates and not add_rate:
        notes.append(f"shared atomics cost no time: the calibration has no {add_name}")
    if (s.updates or s.cas_successes) and s.words is None:
        notes.append("the shared atomics' words are not known: taken as spread over the banks (the spread rates)")
    cas_rate, cas_name = _rate(p, "cas_{}_attempts", one_word)
    attempts = s.cas_successes * cas_attempts_per_success(s.cas_contenders)
    throughput = attempts * share / cas_rate if attempts and cas_rate else 0.0
    round_trip = p.shared_cas_round_trip_seconds
    chain = _cas_chain_seconds(s, grid, round_trip) if s.cas_successes and round_trip else 0.0
    for what, name, value in (("attempts", cas_name, cas_rate),
                              ("round trips", "shared_cas_round_trip_seconds", round_trip)):
        if s.cas_successes and not value:
            notes.append(f"shared compare-and-swap loops' {what} cost no time: the calibration has no {name}")
    inputs = {"shared_atomic_updates": s.updates, "shared_atomic_words": float(s.words or 0),
              "shared_cas_successes": s.cas_successes, "shared_cas_contenders": s.cas_contenders,
              "shared_cas_attempts": attempts, "busiest_sm_share": share,
              "shared_atomic_updates_per_second": add_rate or 0.0, "shared_cas_attempts_per_second": cas_rate or 0.0,
              "shared_cas_round_trip_seconds": round_trip or 0.0, "plain_seconds": plain,
              "cas_throughput_seconds": throughput, "cas_chain_seconds": chain}
    limiter = "memory_latency" if chain > throughput and chain > plain else "cache_bandwidth"
    return Term(name="shared_atomics", side="memory", seconds=plain + max(throughput, chain), limiter=limiter,
                inputs=inputs, notes=tuple(notes))
