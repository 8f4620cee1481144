"""Timing kernels: CUDA events, warm-up, a repetition count or time budget, the median.

The pattern is Triton's ``do_bench`` (events around each launch, the median of many)
and CuPy's ``cupyx.profiler.benchmark`` (the timer is an argument, so the statistics
are tested with a fake timer and no GPU). Milliseconds from CUDA events are converted
to seconds once, in `EventTimer`.
"""

from __future__ import annotations

import math
import numbers
import statistics
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field

from ._checks import as_float, check_callables, check_count, check_positive

__all__ = ["EventTimer", "MAX_REPETITIONS", "Timer", "TimingResult", "benchmark", "summarize"]

MAX_REPETITIONS = 1_000_000
# One timed repetition of a kernel longer than a day is a broken timer, not a measurement.
MAX_SECONDS = 86400.0
# Nor is one shorter than a picosecond (a tenth of a cycle at any clock): below it the spread,
# iqr over the median, could overflow.
MIN_SECONDS = 1e-12


class Timer(Protocol):
    """Runs a callable once and returns how long its device work took, in seconds."""

    def __call__(self, function: Callable[[], Any]) -> float: ...


class TimingResult(BaseModel):
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


def _percentile(ordered: Sequence[float], q: float) -> float:
    """Linear-interpolation percentile of already sorted data (numpy's default)."""
    position = (len(ordered) - 1) * q
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def sample_seconds(value: Any) -> float:
    """One timed repetition from a timer, checked: a number from a picosecond to a day."""
    from roofline import RooflineError

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
    from roofline import RooflineError

    if isinstance(samples_seconds, (str, bytes)) or not hasattr(samples_seconds, "__iter__"):
        raise TypeError(f"samples_seconds must be a sequence of numbers, not {type(samples_seconds).__name__}")
    samples = []
    for s in samples_seconds:
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
    function: Callable[[], Any],
    *,
    timer: Timer,
    warmup: int = 3,
    repetitions: int = 20,
    budget_seconds: float | None = None,
    max_repetitions: int = 1000,
    flush: Callable[[], Any] | None = None,
) -> TimingResult:
    """Time ``function`` with ``timer``: warm up, then repeat and summarize.

    The count is ``repetitions``, raised to fill ``budget_seconds`` of device time
    when a budget is given (estimated from the warm-up runs, as ``do_bench`` does),
    never above ``max_repetitions``. ``flush`` runs before every timed repetition,
    outside the timed region (used to empty L2 when the working set would fit in it).

    Parameters
    ----------
    function : callable
        Enqueues the device work to time (one kernel launch).
    timer : Timer
        Runs ``function`` once and returns its duration in seconds (`EventTimer` on a GPU).
    warmup : int
        Untimed runs first (module load, clocks ramping up), >= 0.
    repetitions : int
        Minimum timed runs, >= 1.
    budget_seconds : float, optional
        Device time to spend on timed runs, seconds.
    max_repetitions : int
        Cap on timed runs.
    flush : callable, optional
        Run before each timed repetition.

    Returns
    -------
    TimingResult

    Raises
    ------
    roofline.RooflineError
        For a negative ``warmup``, ``repetitions`` < 1 or ``max_repetitions`` < ``repetitions``
        (each at most a million), a budget outside (0, 86400] s, or a timer that returns a
        duration outside [1e-12, 86400] s.
    TypeError
        For a function, timer or flush that is not callable, a count that is not an int, or
        a timer that returns something other than a number.

    Examples
    --------
    >>> fake = iter([1e-3] * 30)
    >>> benchmark(lambda: None, timer=lambda f: (f(), next(fake))[1], warmup=2).repetitions
    20
    """
    from roofline import RooflineError

    if function is None or timer is None:
        raise TypeError("function and timer are required callables")
    check_callables(function=function, timer=timer, flush=flush)
    warmup = check_count("warmup", warmup, 0, MAX_REPETITIONS)
    repetitions = check_count("repetitions", repetitions, 1, MAX_REPETITIONS)
    max_repetitions = check_count("max_repetitions", max_repetitions, repetitions, MAX_REPETITIONS)
    if budget_seconds is not None:
        budget_seconds = check_positive("budget_seconds", budget_seconds, MAX_SECONDS, " s")
    estimates = []
    for _ in range(warmup):
        if flush is not None:
            flush()
        estimates.append(timer(function))
    count = repetitions
    if budget_seconds is not None:
        usable = [e for e in estimates if isinstance(e, (int, float)) and math.isfinite(e) and e > 0]
        estimate = statistics.median(usable) if usable else None
        if estimate is not None:
            count = max(repetitions, min(max_repetitions, int(min(budget_seconds / estimate, max_repetitions))))
    samples = []
    for _ in range(count):
        if flush is not None:
            flush()
        samples.append(timer(function))
    return summarize(samples, warmup=warmup, l2_flushed=flush is not None)


class EventTimer:
    """Time device work on a cuda.core stream with a pair of timing events.

    Parameters
    ----------
    stream : cuda.core.Stream
        The stream the timed function enqueues its work on.
    """

    def __init__(self, stream: Any) -> None:
        from ._driver import cuda_modules

        self._stream = stream
        self._options = cuda_modules().core.EventOptions(timing_enabled=True)

    def __call__(self, function: Callable[[], Any]) -> float:
        from ._driver import cuda_errors

        with cuda_errors("timing with CUDA events"):
            start = self._stream.record(options=self._options)
            function()
            end = self._stream.record(options=self._options)
            end.sync()
            milliseconds = end - start
        return float(milliseconds) * 1e-3
