"""The one timing loop of validate: warm-up, repetitions until a stop rule holds, the median.

The pattern is Triton's ``do_bench`` (events around each launch, the median of many) and
CuPy's ``cupyx.profiler.benchmark``: one loop, its stop rules options (`StopRules`: warm-up
runs, the minimum count, a cap, a device-time budget, a spread to converge to), and the
timer an argument, so the statistics are tested with a fake timer and no GPU. Every caller
times through `benchmark`: the probes and `measure` with CUDA events behind a spin kernel
(`QueuedEventTimer`), host-side costs with the host clock (`HostTimer`), and the library
references with the events of the library they time. The timers live in `_timers`.
"""

from __future__ import annotations

import bisect
import math
import numbers
import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, Protocol

from occupancy.common import CheckedModel, Displayed, percent, sequence, shown, si
from pydantic import ConfigDict, Field
from roofline import RooflineError

from ._checks import as_float, check_callables, check_count, check_positive

__all__ = [
    "MAX_REPETITIONS",
    "MAX_SECONDS",
    "StopRules",
    "Timer",
    "TimingResult",
    "benchmark",
    "summarize",
]

MAX_REPETITIONS = 1_000_000
# One timed repetition of a kernel longer than a day is a broken timer, not a measurement.
MAX_SECONDS = 86400.0
# Nor is one shorter than a picosecond (a tenth of a cycle at any clock): below it the spread,
# iqr over the median, could overflow.
MIN_SECONDS = 1e-12


class Timer(Protocol):
    """Runs a callable once and returns how long its device work took, in seconds."""

    def __call__(self, function: Callable[[], object]) -> float: ...


class TimingResult(Displayed):
    """Statistics of repeated timings of one piece of device work (seconds).

    ``spread`` is the interquartile range over the median: 0.02 means the middle half
    of the repetitions lie within 2 % of the median.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    median_seconds: float = Field(gt=0)
    mean_seconds: float = Field(gt=0)
    min_seconds: float = Field(gt=0)
    max_seconds: float = Field(gt=0)
    stdev_seconds: float = Field(ge=0)
    iqr_seconds: float = Field(ge=0, description="75th minus 25th percentile.")
    spread: float = Field(ge=0, description="iqr_seconds / median_seconds.")
    repetitions: int = Field(gt=0)
    warmup: int = Field(ge=0)
    l2_flushed: bool = False

    headline = (
        shown("median_seconds", si("s"), label="median"), shown("min_seconds", si("s"), label="min"),
        shown("spread", percent), shown("repetitions"), shown("l2_flushed"),
    )


class StopRules(CheckedModel):
    """When `benchmark` stops: the timing loop's stop rules, checked once at construction.

    Without ``target_spread`` the count is ``repetitions``, raised to fill ``budget_seconds``
    of device time when a budget is given (estimated from the warm-up runs, as ``do_bench``
    does), never above ``max_repetitions``. With ``target_spread`` the samples come in rounds
    of ``repetitions`` until the interquartile range over the median is at most
    ``target_spread``, the timed device time reaches ``budget_seconds`` (1 s when not given),
    ``max_repetitions`` are taken, or ``4 x budget_seconds + 1`` seconds of wall time have
    passed (a slow host).

    Attributes
    ----------
    warmup : int
        Untimed runs first (module load, clocks ramping up), 0 to 1,000,000.
    repetitions : int
        Minimum timed runs (the round size with ``target_spread``), 1 to 1,000,000.
    max_repetitions : int
        Cap on timed runs, from ``repetitions`` to 1,000,000.
    budget_seconds : float or None
        Device time to spend on timed runs, in (0, 86400] s; None: none.
    target_spread : float or None
        Spread at which to stop, > 0 and finite; None for a fixed count.

    Raises
    ------
    roofline.RooflineError
        A value out of its range (the message names the field, the value and the range).
    TypeError
        A count that is not an int, a budget or spread that is not a number.

    Examples
    --------
    >>> StopRules(warmup=2, repetitions=5).max_repetitions
    1000
    >>> StopRules(repetitions=10, target_spread=0.02, budget_seconds=0.5).target_spread
    0.02
    """

    model_config = ConfigDict(frozen=True, extra="forbid")
    error: ClassVar[type[Exception]] = RooflineError

    warmup: int = Field(default=3, description="Untimed runs first.")
    repetitions: int = Field(default=20, description="Minimum timed runs; the round size with target_spread.")
    max_repetitions: int = Field(default=1000, description="Cap on timed runs.")
    budget_seconds: float | None = Field(default=None, description="Device time to spend on timed runs, seconds.")
    target_spread: float | None = Field(default=None, description="Spread (iqr / median) at which to stop.")

    @classmethod
    def normalise(cls, data: dict[str, Any]) -> dict[str, Any]:
        """Each rule checked against its range; ``max_repetitions`` against ``repetitions``."""
        out = dict(data)
        defaults = {name: field.default for name, field in cls.model_fields.items()}
        out["warmup"] = check_count("warmup", out.get("warmup", defaults["warmup"]), 0, MAX_REPETITIONS)
        out["repetitions"] = check_count("repetitions", out.get("repetitions", defaults["repetitions"]), 1,
                                         MAX_REPETITIONS)
        out["max_repetitions"] = check_count("max_repetitions", out.get("max_repetitions", defaults["max_repetitions"]),
                                             out["repetitions"], MAX_REPETITIONS)
        if out.get("budget_seconds") is not None:
            out["budget_seconds"] = check_positive("budget_seconds", out["budget_seconds"], MAX_SECONDS, " s")
        if out.get("target_spread") is not None:
            out["target_spread"] = check_positive("target_spread", out["target_spread"])
        return out


def _percentile(ordered: Sequence[float], q: float) -> float:
    """Linear-interpolation percentile of already sorted data (numpy's default)."""
    position = (len(ordered) - 1) * q
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def sample_seconds(value: object) -> float:
    """One timed repetition from a timer, checked: a number from a picosecond to a day."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"a timer must return a number of seconds, not {type(value).__name__}")
    if not (math.isfinite(seconds := as_float(value)) and MIN_SECONDS <= seconds <= MAX_SECONDS):
        raise RooflineError(f"samples_seconds contains {value!r}; every duration must be from {MIN_SECONDS:g} "
                            f"to {MAX_SECONDS:g} s")
    return seconds


def summarize(samples_seconds: Sequence[float], *, warmup: int = 0, l2_flushed: bool = False) -> TimingResult:
    """Summarize timed repetitions.

    Parameters
    ----------
    samples_seconds : sequence of float
        One duration per repetition, seconds, each from 1e-12 to 86400.
    warmup : int
        Untimed runs that preceded them (recorded only).
    l2_flushed : bool
        Whether L2 was flushed before each repetition (recorded only).

    Returns
    -------
    TimingResult

    Raises
    ------
    roofline.RooflineError
        When there are no samples or one is outside [1e-12, 86400] s (NaN included).
    TypeError
        When a sample is not a number.

    Examples
    --------
    >>> summarize([1e-3, 2e-3, 3e-3]).median_seconds
    0.002
    """
    samples = []
    for s in sequence("samples_seconds", samples_seconds, "a sequence of numbers"):
        if isinstance(s, bool) or not isinstance(s, numbers.Real):
            raise TypeError(f"samples_seconds must hold numbers, not {type(s).__name__}")
        samples.append(sample_seconds(s))
    if not samples:
        raise RooflineError("samples_seconds is empty; need at least one timed repetition")
    warmup = check_count("warmup", warmup, 0, MAX_REPETITIONS)
    if not isinstance(l2_flushed, bool):
        raise TypeError(f"l2_flushed must be a bool, not {type(l2_flushed).__name__}")
    ordered = sorted(samples)
    median = statistics.median(ordered)
    iqr = _percentile(ordered, 0.75) - _percentile(ordered, 0.25)
    return TimingResult(
        median_seconds=median,
        mean_seconds=statistics.fmean(ordered),
        min_seconds=ordered[0],
        max_seconds=ordered[-1],
        stdev_seconds=statistics.stdev(ordered) if len(ordered) > 1 else 0.0,
        iqr_seconds=iqr,
        spread=iqr / median,
        repetitions=len(ordered),
        warmup=warmup,
        l2_flushed=l2_flushed,
    )


def benchmark(
    function: Callable[[], object],
    *,
    timer: Timer,
    rules: StopRules | None = None,
    launches_per_sample: int = 1,
    flush: Callable[[], object] | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> TimingResult:
    """Time ``function`` with ``timer``: warm up, repeat until a stop rule holds, summarize.

    The one timing loop of validate (CuPy's ``cupyx.profiler.benchmark``): `StopRules` says
    when it stops. ``flush`` runs before every run, outside the timed region (used to empty
    L2 when the working set would fit in it).

    Parameters
    ----------
    function : callable
        Enqueues the work of one sample (one kernel launch, a graph of several, a copy).
    timer : Timer
        Runs ``function`` once and returns its duration in seconds (`QueuedEventTimer`,
        `EventTimer` or `HostTimer` on a GPU; a fake one in tests).
    rules : StopRules, optional
        Warm-up, counts, budget and spread; default ``StopRules()`` (3 warm-up runs, then 20).
    launches_per_sample : int
        Launches in one sample (each sample is divided by it), 1 to 1,000,000.
    flush : callable, optional
        Run before each run.
    clock : callable
        Wall clock of the slow-host guard (injected in tests).

    Returns
    -------
    TimingResult
        Per launch.

    Raises
    ------
    roofline.RooflineError
        For ``launches_per_sample`` outside [1, 1,000,000], or a timer that returns a duration
        (or a duration per launch) outside [1e-12, 86400] s.
    TypeError
        For a function, timer, flush or clock that is not callable, ``rules`` that are not a
        `StopRules`, a count that is not an int, or a timer that returns something other than
        a number.

    Examples
    --------
    >>> fake = iter([1e-3] * 30)
    >>> benchmark(lambda: None, timer=lambda f: (f(), next(fake))[1], rules=StopRules(warmup=2)).repetitions
    20
    >>> times = iter([1e-3] * 50)
    >>> r = benchmark(lambda: None, timer=lambda f: (f(), next(times))[1],
    ...               rules=StopRules(warmup=1, repetitions=10, target_spread=0.02))
    >>> r.repetitions, r.median_seconds
    (10, 0.001)
    """
    if function is None or timer is None or clock is None:
        raise TypeError("function, timer and clock are required callables")
    check_callables(function=function, timer=timer, flush=flush, clock=clock)
    rules = StopRules() if rules is None else rules
    if not isinstance(rules, StopRules):
        raise TypeError(f"rules must be a validate.StopRules, not {type(rules).__name__}")
    launches_per_sample = check_count("launches_per_sample", launches_per_sample, 1, MAX_REPETITIONS)
    budget_seconds = rules.budget_seconds
    if rules.target_spread is not None and budget_seconds is None:
        budget_seconds = 1.0

    def sample() -> float:
        """One sample's device time, seconds (checked, and checked again per launch)."""
        if flush is not None:
            flush()
        seconds = sample_seconds(timer(function))
        sample_seconds(seconds / launches_per_sample)
        return seconds

    estimates = [sample() for _ in range(rules.warmup)]
    if rules.target_spread is not None:
        planned, rounds = rules.max_repetitions, rules.repetitions
    else:
        planned = rules.repetitions
        if budget_seconds is not None and estimates:
            planned = max(rules.repetitions, min(rules.max_repetitions, int(min(
                budget_seconds / statistics.median(estimates), rules.max_repetitions))))
        rounds = planned
    start = clock()
    samples: list[float] = []
    # Kept sorted as they come, so each round's spread costs a few comparisons, not a sort
    # of every sample so far (a round of one sample, a million times, must not be quadratic).
    ordered: list[float] = []
    timed_seconds = 0.0
    while len(samples) < planned:
        for _ in range(min(rounds, planned - len(samples))):
            seconds = sample()
            timed_seconds += seconds
            samples.append(seconds / launches_per_sample)
            bisect.insort(ordered, samples[-1])
        if rules.target_spread is None or len(samples) >= planned:
            break
        if _spread(ordered) <= rules.target_spread:
            break
        if timed_seconds >= budget_seconds or clock() - start > 4 * budget_seconds + 1:
            break
    return summarize(samples, warmup=rules.warmup, l2_flushed=flush is not None)


def _spread(ordered: list[float]) -> float:
    """Interquartile range over the median of sorted samples (as `summarize` computes it)."""
    n = len(ordered)
    median = ordered[n // 2] if n % 2 else (ordered[n // 2 - 1] + ordered[n // 2]) / 2
    return (_percentile(ordered, 0.75) - _percentile(ordered, 0.25)) / median
