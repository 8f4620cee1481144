"""The timers of the one timing loop: CUDA events, CUDA events behind a spin kernel, the host clock.

Each runs a callable once and returns its duration in seconds (the `Timer` protocol of
`benchmark`); milliseconds from CUDA events are converted to seconds once, here.

CUDA events recorded around a launch made from Python measure the host's launch path too:
when the GPU is idle, the start event completes as soon as the host submits it, and the
kernel only arrives after cuda.core's Python launch code has run (about 5 us). So the
session's timer (`QueuedEventTimer`) first queues a *spin kernel* that holds the GPU for a
while; the host submits start event, work and end event behind it, and by the time the
start event completes the work is already queued: the events then bracket the GPU-side
time only. Should the host take longer to submit than the spin lasts (a loaded host, a
garbage-collection pause), the sample may hold host time: it is taken again behind a spin
four times longer (twice at most), and the late submissions are counted.

Work the host does itself (a pageable copy the driver stages through a pinned buffer, a
batch of launch calls) is timed on the host clock (`HostTimer`), after the stream has
drained.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from ._checks import check_callables
from ._compile import compile_kernels, kernel_source
from ._driver import cuda_errors, cuda_modules

if TYPE_CHECKING:
    from cuda.core import EventOptions, Stream

__all__ = ["EventTimer", "HostTimer", "QueuedEventTimer"]


class HostTimer:
    """Time a call on the host's clock, after ``before`` (the stream synchronised) and outside it.

    Parameters
    ----------
    before : callable, optional
        Run first, untimed (`Session.synchronize`: the GPU's queued work is not the call's).
    clock : callable
        Seconds, monotonic (`time.perf_counter`; a fake one in tests).

    Examples
    --------
    >>> ticks = iter([1.0, 1.25])
    >>> HostTimer(clock=lambda: next(ticks))(lambda: None)
    0.25
    """

    def __init__(self, before: Callable[[], object] | None = None,
                 clock: Callable[[], float] = time.perf_counter) -> None:
        check_callables(before=before, clock=clock)
        self._before = before
        self._clock = clock

    def __call__(self, function: Callable[[], object]) -> float:
        if self._before is not None:
            self._before()
        started = self._clock()
        function()
        return self._clock() - started


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
