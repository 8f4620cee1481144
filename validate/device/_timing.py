"""Timing kernels: CUDA events, warm-up, a repetition count or time budget, the median.

The pattern is Triton's ``do_bench`` (events around each launch, the median of many)
and CuPy's ``cupyx.profiler.benchmark`` (the timer is an argument, so the statistics
are tested with a fake timer and no GPU). Milliseconds from CUDA events are converted
to seconds once, in the timers (`EventTimer`, `QueuedEventTimer`).

CUDA events recorded around a launch made from Python measure the host's launch path too:
when the GPU is idle, the start event completes as soon as the host submits it, and the
kernel only arrives after cuda.core's Python launch code has run (about 5 us). So the
session's timer (`QueuedEventTimer`) first queues a *spin kernel* that holds the GPU for a
while; the host submits start event, work and end event behind it, and by the time the
start event completes the work is already queued: the events then bracket the GPU-side
time only. Should the host take longer to submit than the spin lasts (a loaded host, a
garbage-collection pause), the sample may hold host time: it is taken again behind a spin
four times longer (twice at most), and the late submissions are counted.
"""

from __future__ import annotations

import bisect
import math
import numbers
import statistics
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol

import numpy as np
from pydantic import ConfigDict, Field

from occupancy.common import Displayed, percent, sequence, shown, si
from roofline import RooflineError

from ._checks import as_float, check_callables, check_count, check_positive
from ._compile import compile_kernels, kernel_source
from ._driver import cuda_errors, cuda_modules

if TYPE_CHECKING:
    from cuda.core import EventOptions, Stream

__all__ = [
    "EventTimer",
    "MAX_REPETITIONS",
    "MAX_SECONDS",
    "QueuedEventTimer",
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
    warmup: int = 3,
    repetitions: int = 20,
    max_repetitions: int = 1000,
    budget_seconds: float | None = None,
    target_spread: float | None = None,
    launches_per_sample: int = 1,
    flush: Callable[[], object] | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> TimingResult:
    """Time ``function`` with ``timer``: warm up, repeat until a stop rule holds, summarize.

    The one timing loop of validate (CuPy's ``cupyx.profiler.benchmark``: the stop rules
    are options). Without ``target_spread`` the count is ``repetitions``, raised to fill
    ``budget_seconds`` of device time when a budget is given (estimated from the warm-up
    runs, as ``do_bench`` does), never above ``max_repetitions``. With ``target_spread``
    the samples come in rounds of ``repetitions`` until the interquartile range over the
    median is at most ``target_spread``, the timed device time reaches ``budget_seconds``
    (default 1 s), ``max_repetitions`` are taken, or ``4 x budget_seconds + 1`` seconds
    of wall time have passed (a slow host). ``flush`` runs before every run, outside the
    timed region (used to empty L2 when the working set would fit in it).

    Parameters
    ----------
    function : callable
        Enqueues the device work of one sample (one kernel launch, or a graph of several).
    timer : Timer
        Runs ``function`` once and returns its duration in seconds (`EventTimer` on a GPU).
    warmup : int
        Untimed runs first (module load, clocks ramping up), >= 0.
    repetitions : int
        Minimum timed runs (the round size with ``target_spread``), >= 1.
    max_repetitions : int
        Cap on timed runs, >= ``repetitions``.
    budget_seconds : float, optional
        Device time to spend on timed runs, seconds.
    target_spread : float, optional
        Spread at which to stop, > 0; None for a fixed count.
    launches_per_sample : int
        Launches in one sample (each sample is divided by it), >= 1.
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
        For a negative ``warmup``, ``repetitions`` < 1, ``max_repetitions`` < ``repetitions``
        or ``launches_per_sample`` < 1 (each at most a million), a budget outside (0, 86400] s,
        a ``target_spread`` not > 0 and finite, or a timer that returns a duration (or a
        duration per launch) outside [1e-12, 86400] s.
    TypeError
        For a function, timer, flush or clock that is not callable, a count that is not an
        int, or a timer that returns something other than a number.

    Examples
    --------
    >>> fake = iter([1e-3] * 30)
    >>> benchmark(lambda: None, timer=lambda f: (f(), next(fake))[1], warmup=2).repetitions
    20
    >>> times = iter([1e-3] * 50)
    >>> r = benchmark(lambda: None, timer=lambda f: (f(), next(times))[1], warmup=1, repetitions=10,
    ...               target_spread=0.02)
    >>> r.repetitions, r.median_seconds
    (10, 0.001)
    """
    if function is None or timer is None or clock is None:
        raise TypeError("function, timer and clock are required callables")
    check_callables(function=function, timer=timer, flush=flush, clock=clock)
    warmup = check_count("warmup", warmup, 0, MAX_REPETITIONS)
    repetitions = check_count("repetitions", repetitions, 1, MAX_REPETITIONS)
    max_repetitions = check_count("max_repetitions", max_repetitions, repetitions, MAX_REPETITIONS)
    launches_per_sample = check_count("launches_per_sample", launches_per_sample, 1, MAX_REPETITIONS)
    if budget_seconds is not None:
        budget_seconds = check_positive("budget_seconds", budget_seconds, MAX_SECONDS, " s")
    if target_spread is not None:
        target_spread = check_positive("target_spread", target_spread)
        budget_seconds = 1.0 if budget_seconds is None else budget_seconds

    def sample() -> float:
        """One sample's device time, seconds (checked, and checked again per launch)."""
        if flush is not None:
            flush()
        seconds = sample_seconds(timer(function))
        sample_seconds(seconds / launches_per_sample)
        return seconds

    estimates = [sample() for _ in range(warmup)]
    if target_spread is not None:
        planned, rounds = max_repetitions, repetitions
    else:
        planned = repetitions
        if budget_seconds is not None and estimates:
            planned = max(repetitions, min(max_repetitions,
                                           int(min(budget_seconds / statistics.median(estimates), max_repetitions))))
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
        if target_spread is None or len(samples) >= planned:
            break
        if _spread(ordered) <= target_spread:
            break
        if timed_seconds >= budget_seconds or clock() - start > 4 * budget_seconds + 1:
            break
    return summarize(samples, warmup=warmup, l2_flushed=flush is not None)


def _spread(ordered: list[float]) -> float:
    """Interquartile range over the median of sorted samples (as `summarize` computes it)."""
    n = len(ordered)
    median = ordered[n // 2] if n % 2 else (ordered[n // 2 - 1] + ordered[n // 2]) / 2
    return (_percentile(ordered, 0.75) - _percentile(ordered, 0.25)) / median


class EventTimer:
    """Time device work on a cuda.core stream with a pair of timing events.

    Parameters
    ----------
    stream : cuda.core.Stream
        The stream the timed function enqueues its work on.
    """

    def __init__(self, stream: Stream) -> None:
        self._stream = stream
        self._options = cuda_modules().core.EventOptions(timing_enabled=True)

    def __call__(self, function: Callable[[], object]) -> float:
        with cuda_errors("timing with CUDA events"):
            start = self._stream.record(options=self._options)
            function()
            end = self._stream.record(options=self._options)
            end.sync()
            milliseconds = end - start
        return float(milliseconds) * 1e-3


#: Attempts per sample: each late one is retried behind a spin four times longer.
ATTEMPTS = 3


class QueuedEventTimer:
    """Time device work with CUDA events behind a spin kernel, so no host time is counted.

    Parameters
    ----------
    stream : cuda.core.Stream
        The open device's stream (`Session.stream`).
    arch : str
        Its architecture, ``"sm_90"``, for compiling the spin kernel.
    spin_seconds : float
        Spin length ahead of each sample; a late sample is retried behind 4x, then 16x.
    """

    def __init__(self, stream: Stream, arch: str, spin_seconds: float = 50e-6) -> None:
        self._stream = stream
        self._arch = arch
        self.spin_seconds = float(spin_seconds)
        self.late = 0
        self.calls = 0
        self._options: EventOptions | None = None
        self._spin: Callable[[int], None] | None = None

    def _spin_launcher(self) -> Callable[[int], None]:
        if self._options is None:
            self._options = cuda_modules().core.EventOptions(timing_enabled=True)
        if self._spin is None:
            kernel = compile_kernels(kernel_source("latency.cu"), ["spin_kernel"], arch=self._arch,
                                     name="latency.cu")["spin_kernel"]
            core = cuda_modules().core
            config = core.LaunchConfig(grid=(1, 1, 1), block=(1, 1, 1))
            stream = self._stream

            def spin(nanoseconds: int) -> None:
                core.launch(stream, config, kernel, np.uint64(nanoseconds))

            self._spin = spin
        return self._spin

    def __call__(self, function: Callable[[], object]) -> float:
        spin = self._spin_launcher()
        stream = self._stream
        self.calls += 1
        for attempt in range(ATTEMPTS):
            spin_seconds = self.spin_seconds * 4**attempt
            with cuda_errors("timing with CUDA events"):
                submitted = time.perf_counter()
                spin(int(spin_seconds * 1e9))
                start = stream.record(options=self._options)
                function()
                end = stream.record(options=self._options)
                host_seconds = time.perf_counter() - submitted
                end.sync()
                milliseconds = end - start
            if host_seconds <= spin_seconds:
                break
            # The start event may have completed before the work was queued, so this
            # sample can hold host time: count it and take it again behind a longer spin.
            self.late += 1
        return float(milliseconds) * 1e-3
