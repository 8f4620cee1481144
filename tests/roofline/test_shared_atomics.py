"""The shared_atomics term (`roofline._predict.terms.shared_atomics`): shared-memory atomic updates
and compare-and-swap retry loops on the busiest SM, on small cases whose times are worked out by
hand from the derivation in docs/prediction.md ('Shared-memory atomics')."""

from __future__ import annotations

import dataclasses

import pytest

import occupancy
import roofline
from roofline._predict.derive import Grid, SharedAtomics
from roofline._predict.params import SharedAtomicParams
from roofline._predict.rules import disabled
from roofline._predict.terms import cas_attempts_per_success, shared_atomics_term

#: Test rates (not a GPU's): adds 1 G/s on 32 banks and 0.5 G/s on one word, CAS attempts the
#: same, a CAS round trip of 1 ns, per SM; `SLOW_TRIP`: a round trip of 1 us.
PARAMS = SharedAtomicParams(
    sm_shared_atomic_one_word_updates_per_second=0.5e9, sm_shared_atomic_spread_updates_per_second=1e9,
    sm_shared_cas_one_word_attempts_per_second=0.5e9, sm_shared_cas_spread_attempts_per_second=1e9,
    shared_cas_round_trip_seconds=1e-9)
SLOW_TRIP = dataclasses.replace(PARAMS, shared_cas_round_trip_seconds=1e-6)
#: 132 blocks on 132 SMs, one each.
GRID = Grid(blocks=132, sm_count=132, slots=132, sms_in_use=132, first_wave_blocks=1, warps_per_block=8,
            busiest_sm_factor=1.0, slowest_warp_factor=1.0, moves_bytes=True)


def _atomics(updates=0.0, words=None, successes=0.0, contenders=1.0, threads=132 * 256) -> SharedAtomics:
    return SharedAtomics(updates=updates, words=words, cas_successes=successes, cas_contenders=contenders,
                         threads=threads)


def _rounds_attempts(contenders: int) -> tuple[int, int]:
    """An independent count: every round, each contender left tries once and one succeeds and leaves."""
    left, rounds, attempts = contenders, 0, 0
    while left:
        attempts += left
        rounds += 1
        left -= 1
    return rounds, attempts


@pytest.mark.parametrize("k", [1, 2, 3, 32, 256], ids=lambda k: f"k={k}")
def test_k_contenders_take_k_rounds_and_k_k_plus_1_over_2_attempts(k):
    rounds, attempts = _rounds_attempts(k)
    assert rounds == k
    assert cas_attempts_per_success(k) * k == attempts == k * (k + 1) // 2


CASES = [
    # 132e6 lane adds spread: 1e6 a SM at 1 G/s
    ("adds spread", _atomics(updates=132e6, words=1024), 1e-3, "cache_bandwidth"),
    # unknown words: taken as spread
    ("adds, words unknown", _atomics(updates=132e6), 1e-3, "cache_bandwidth"),
    # on one word (fewer words than a warp's lanes): 0.5 G/s
    ("adds on one word", _atomics(updates=132e6, words=1), 2e-3, "cache_bandwidth"),
    ("adds on 16 words", _atomics(updates=132e6, words=16), 2e-3, "cache_bandwidth"),
    # CAS without contention: one attempt a success; 1e6 a SM at 1 G/s (the chain: 977 successes a
    # word at 1 ns)
    ("CAS spread", _atomics(successes=132e6, words=1024, threads=132e6), 1e-3, "cache_bandwidth"),
    # 3 contenders on one word: 2 attempts a success, 2e6 a SM at 0.5 G/s (the chain: 1e6 successes
    # on the block's word at 1 ns, 1 ms)
    ("CAS, 3 contenders", _atomics(successes=132e6, words=1, contenders=3, threads=132e6), 4e-3, "cache_bandwidth"),
    # adds and CAS in one kernel add up
    ("adds and CAS", _atomics(updates=132e6, words=1024, successes=132e6, threads=132e6), 2e-3, "cache_bandwidth"),
]


@pytest.mark.parametrize("atomics, seconds, limiter", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_the_term_on_cases_worked_by_hand(atomics, seconds, limiter):
    term = shared_atomics_term(atomics, GRID, PARAMS)
    assert term.seconds == pytest.approx(seconds, rel=1e-12)
    assert term.limiter == limiter and term.side == "memory"
    # words not known: taken as spread, and the note says so
    assert [("spread" in n) for n in term.notes] == ([True] if atomics.words is None else [])


def test_rounds_on_one_word_wait_a_round_trip_each():
    # 1000 successes a block on its one word, each a round trip of 1 us: 1 ms; 128.5 attempts a
    # success: 128,500 a SM at 0.5 G/s, 0.257 ms
    term = shared_atomics_term(_atomics(successes=132e3, words=1, contenders=256), GRID, SLOW_TRIP)
    assert term.seconds == pytest.approx(1e-3, rel=1e-12) and term.limiter == "memory_latency"
    assert term.inputs["cas_throughput_seconds"] == pytest.approx(128_500 / 0.5e9)
    # a thread's own loops wait for each other too: 1000 a thread on words of their own
    own = shared_atomics_term(_atomics(successes=132e3, words=1024, threads=132), GRID, SLOW_TRIP)
    assert own.inputs["cas_chain_seconds"] == pytest.approx(1e-3)


def test_the_busiest_sm_and_its_waves_set_the_time():
    # 264 blocks, two on the busiest SM, one at a time: twice the work, and two waves of the chain
    grid = Grid(blocks=264, sm_count=132, slots=132, sms_in_use=132, first_wave_blocks=1, warps_per_block=8,
                busiest_sm_factor=1.0, slowest_warp_factor=1.0, moves_bytes=True)
    assert shared_atomics_term(_atomics(updates=132e6, words=1024), grid, PARAMS).seconds == pytest.approx(1e-3)
    chain = shared_atomics_term(_atomics(successes=264e3, words=1, contenders=256, threads=264 * 256), grid,
                                SLOW_TRIP)
    assert chain.inputs["cas_chain_seconds"] == pytest.approx(2 * 1e-3)


def test_without_the_retries_rule_a_loop_makes_one_attempt_a_success():
    atomics = _atomics(successes=132e6, words=1, contenders=3, threads=132e6)
    with disabled({"shared_cas_retries"}):
        assert shared_atomics_term(atomics, GRID, PARAMS).seconds == pytest.approx(2e-3)


@pytest.mark.parametrize("missing, seconds", [
    # 1 ms of adds and 1 ms of CAS attempts (the chain: 977 successes a word at 1 ns); one part left out
    ("sm_shared_atomic_spread_updates_per_second", 1e-3),
    ("sm_shared_cas_spread_attempts_per_second", 1e-3 + 132e6 / 132 / 1024 * 1e-9),
    ("shared_cas_round_trip_seconds", 2e-3),
], ids=["adds", "cas", "round trip"])
def test_a_missing_rate_leaves_its_part_out_with_a_note(missing, seconds):
    params = dataclasses.replace(PARAMS, **{missing: None})
    term = shared_atomics_term(_atomics(updates=132e6, words=1024, successes=132e6, threads=132e6), GRID, params)
    assert [n for n in term.notes if f"the calibration has no {missing}" in n]
    assert term.seconds == pytest.approx(seconds, rel=1e-12)


def _kernel(**shared) -> roofline.Kernel:
    return roofline.Kernel(name="k", flops=0.0, dram_bytes=1e6, l1_bytes=1e7,
                           launch=occupancy.Launch(grid=1056, block=256, registers_per_thread=32), **shared)


SHARED = dict(shared_cas=1e8, shared_atomic_words=1, shared_cas_contenders=256, shared_atomics=1e9)


@pytest.mark.parametrize("gpu", ["H100 SXM", "H200"])
def test_without_the_rates_or_with_the_term_off_the_prediction_is_as_before(gpu):
    bare = roofline.calibration(gpu).model_copy(update={name: None for name in SharedAtomicParams.__dataclass_fields__})
    before = roofline.predict(gpu, _kernel(), calibration=bare)
    # a calibration without the shared-atomic rates: the term is 0 with its notes
    p = roofline.predict(gpu, _kernel(**SHARED), calibration=bare)
    assert p.seconds == before.seconds and p.limiter == before.limiter
    term = next(t for t in p.terms if t.name == "shared_atomics")
    assert term.seconds == 0 and term.notes
    rated = roofline.calibration(gpu).model_copy(update={
        f"sm_shared_{n}_per_second": 1e9 for n in ("atomic_one_word_updates", "atomic_spread_updates",
                                                   "cas_one_word_attempts", "cas_spread_attempts")})
    assert roofline.predict(gpu, _kernel(**SHARED), calibration=rated).seconds > before.seconds
    with disabled({"term_shared_atomics"}):
        off = roofline.predict(gpu, _kernel(**SHARED), calibration=rated)
    assert off.seconds == roofline.predict(gpu, _kernel(), calibration=rated).seconds
