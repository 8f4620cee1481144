"""The one timing loop's callers, with injected fake timers and clocks (no GPU): each keeps its own
statistic (the median of N after W warm-ups), computed here independently with `statistics`."""

from __future__ import annotations

import statistics

import pytest

import roofline
import validate
from tests.validate.test_validate_cpu import FakeTimer
from validate.device import HostTimer, StopRules
from validate.probes import _launch, _references


@pytest.mark.parametrize("warmups, timed", [
    ([9.0, 8.0, 7.0], [1e-3, 3e-3, 2e-3, 5e-3, 4e-3]),
    ([1.0, 1.0, 1.0], [2e-3, 1e-3, 4e-3, 3e-3]),
], ids=["odd", "even"])
def test_the_library_references_take_the_median_after_three_warm_ups(warmups, timed):
    timer = FakeTimer(warmups + timed)
    seconds = _references._median_seconds(lambda: None, timer, len(timed))
    assert timer.calls == len(warmups) + len(timed)
    assert seconds == statistics.median(timed)  # the warm-ups, far slower, are left out


def test_the_host_timer_runs_its_before_untimed_then_reads_the_clock_around_the_call():
    events = []
    ticks = iter([10.0, 10.5])

    def clock():
        events.append("clock")
        return next(ticks)

    timer = HostTimer(before=lambda: events.append("synchronize"), clock=clock)
    assert timer(lambda: events.append("call")) == 0.5
    assert events == ["synchronize", "clock", "call", "clock"]


def test_the_host_launch_cost_is_the_median_batch_per_launch():
    """The launch probe's host side: 5 batches of HOST_BATCH launch calls on the host clock, no
    warm-up, the median batch divided by the batch size."""
    batches = [3e-4, 2e-4, 9e-4, 2.5e-4, 2.2e-4]
    ticks = iter(t for b in batches for t in (0.0, b))
    launches = []
    timer = HostTimer(clock=lambda: next(ticks))

    def batch():
        launches.extend([1] * _launch.HOST_BATCH)

    r = validate.benchmark(batch, timer=timer, rules=StopRules(warmup=0, repetitions=5),
                           launches_per_sample=_launch.HOST_BATCH)
    assert len(launches) == 5 * _launch.HOST_BATCH and r.repetitions == 5 and r.warmup == 0
    assert r.median_seconds == pytest.approx(statistics.median(batches) / _launch.HOST_BATCH, rel=1e-12)


@pytest.mark.parametrize("rules, expected", [
    (StopRules(warmup=2, repetitions=3), 3),
    (StopRules(warmup=0, repetitions=3, budget_seconds=10e-3), 3),  # no warm-up: no estimate to fill a budget
    (StopRules(warmup=1, repetitions=2, budget_seconds=4e-3), 4),  # 4 ms of budget / 1 ms a run
    (StopRules(warmup=1, repetitions=2, max_repetitions=3, budget_seconds=4e-3), 3),
], ids=["fixed", "budget-without-warm-up", "budget", "budget-capped"])
def test_the_stop_rules_set_the_count(rules, expected):
    timer = FakeTimer([1e-3] * 100)
    r = validate.benchmark(lambda: None, timer=timer, rules=rules)
    assert r.repetitions == expected
    assert timer.calls == rules.warmup + expected


@pytest.mark.parametrize("value, error, match", [
    ("x", TypeError, "rules must be a validate.StopRules"),
    ({"warmup": 1}, TypeError, "rules must be a validate.StopRules"),
], ids=["str", "dict"])
def test_benchmark_takes_only_stop_rules(value, error, match):
    with pytest.raises(error, match=match):
        validate.benchmark(lambda: None, timer=FakeTimer([1e-3] * 30), rules=value)


@pytest.mark.parametrize("update, match", [
    ({"repetitions": 0}, "repetitions=0 must be from 1"),
    ({"max_repetitions": 5}, "max_repetitions=5 must be from 20"),
    ({"target_spread": -0.1}, "target_spread=-0.1 must be > 0"),
], ids=["repetitions", "cap-below-count", "spread"])
def test_a_copy_of_the_rules_is_checked_like_new_rules(update, match):
    with pytest.raises(roofline.RooflineError, match=match):
        StopRules().model_copy(update=update)
