"""Launch cost without Python in the loop, and the event timer that keeps the host out.

CUDA events recorded around a launch made from Python measure the host's launch path too:
when the GPU is idle, the start event completes as soon as the host submits it, and the
kernel only arrives after cuda.core's Python launch code has run (about 5 us). So the
timer here first queues a *spin kernel* that holds the GPU for a while; the host submits
start event, work and end event behind it, and by the time the start event completes
the work is already queued: the events then bracket the GPU-side time only. Should the
host take longer to submit than the spin lasts (a loaded host, a garbage-collection
pause), the sample may hold host time: it is taken again behind a spin four times
longer (twice at most), and the late submissions are counted.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from ._driver import cuda_errors, cuda_modules

__all__ = ["LaunchOverhead", "QueuedEventTimer", "measure_launch_overhead"]

_FROZEN = ConfigDict(frozen=True, extra="forbid")

#: Attempts per sample: each late one is retried behind a spin four times longer.
ATTEMPTS = 3


class QueuedEventTimer:
    """Time device work with CUDA events behind a spin kernel, so no host time is counted.

    Parameters
    ----------
    session : validate.Session
        The open device (its stream, its architecture for compiling the spin kernel).
    spin_seconds : float
        Spin length ahead of each sample; a late sample is retried behind 4x, then 16x.
    """

    def __init__(self, session: Any, spin_seconds: float = 50e-6) -> None:
        self._session = session
        self.spin_seconds = float(spin_seconds)
        self.late = 0
        self.calls = 0
        self._options: Any = None
        self._spin: Any = None

    def _spin_launcher(self) -> Callable[[int], None]:
        if self._options is None:
            self._options = cuda_modules().core.EventOptions(timing_enabled=True)
        if self._spin is None:
            from ._compile import compile_kernels, kernel_source

            kernel = compile_kernels(kernel_source("latency.cu"), ["spin_kernel"], arch=self._session.arch,
                                     name="latency.cu")["spin_kernel"]
            core = self._session.cuda.core
            config = core.LaunchConfig(grid=(1, 1, 1), block=(1, 1, 1))
            stream = self._session.stream

            def spin(nanoseconds: int) -> None:
                core.launch(stream, config, kernel, np.uint64(nanoseconds))

            self._spin = spin
        return self._spin

    def __call__(self, function: Callable[[], Any]) -> float:
        spin = self._spin_launcher()
        stream = self._session.stream
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


class LaunchOverhead(BaseModel):
    """What one launch costs, measured three ways on an empty kernel (seconds)."""

    model_config = _FROZEN

    queued_kernel_seconds: float = Field(
        gt=0, description="Events around one empty launch queued behind a spin kernel: GPU-side time only.")
    graph_kernel_seconds: float = Field(
        gt=0, description="A CUDA graph of `graph_kernels` empty kernels, replayed behind a spin kernel, "
                          "time per kernel: back-to-back launches with no host in the loop.")
    graph_kernels: int = Field(gt=0)
    event_pair_seconds: float = Field(
        gt=0, description="Events around one launch made from Python on an idle GPU (host path included).")
    host_launch_seconds: float = Field(
        gt=0, description="Host time of one cuda.core launch call (median over a batch).")
    repetitions: int = Field(gt=0)
    late_samples: int = Field(default=0, ge=0, description="Timer samples retried because the host was late.")


def measure_launch_overhead(session: Any, *, quick: bool = False,
                            progress: Callable[[str], None] = lambda message: None) -> LaunchOverhead:
    """Measure the GPU-side cost of an empty kernel, per launch in a graph, and the host's.

    Parameters
    ----------
    session : validate.Session
        An open device.
    quick : bool
        Fewer repetitions and a smaller graph.
    progress : callable
        Receives one summary line.

    Returns
    -------
    LaunchOverhead
    """
    from ._compile import compile_kernels, kernel_source
    from ._timing import EventTimer, benchmark

    core = session.cuda.core
    kernel = compile_kernels(kernel_source("latency.cu"), ["empty_kernel"], arch=session.arch,
                             name="latency.cu")["empty_kernel"]
    config = core.LaunchConfig(grid=(1, 1, 1), block=(32, 1, 1))
    stream = session.stream
    repetitions = 50 if quick else 200

    def one() -> None:
        core.launch(stream, config, kernel)

    queued = benchmark(one, timer=session.timer, warmup=10, repetitions=repetitions).median_seconds
    idle = benchmark(one, timer=EventTimer(stream), warmup=10, repetitions=repetitions).median_seconds

    count = 200 if quick else 1000
    with cuda_errors("building a CUDA graph of empty kernels"):
        builder = stream.create_graph_builder().begin_building()
        for _ in range(count):
            core.launch(builder, config, kernel)
        graph = builder.end_building().complete()
        graph.upload(stream)
    replay = benchmark(lambda: graph.launch(stream), timer=session.timer, warmup=3,
                       repetitions=max(5, repetitions // 20)).median_seconds
    with cuda_errors("closing the CUDA graph"):
        graph.close()

    batches = []
    for _ in range(5):
        session.synchronize()
        started = time.perf_counter()
        for _ in range(100):
            one()
        batches.append((time.perf_counter() - started) / 100)
    session.synchronize()
    result = LaunchOverhead(
        queued_kernel_seconds=queued, graph_kernel_seconds=replay / count, graph_kernels=count,
        event_pair_seconds=idle, host_launch_seconds=statistics.median(batches), repetitions=repetitions,
        late_samples=session.timer.late,
    )
    progress(f"launch: empty kernel {queued * 1e6:.2f} us GPU-side, {result.graph_kernel_seconds * 1e6:.2f} us "
             f"per kernel in a graph, {idle * 1e6:.2f} us with the Python launch path, host "
             f"{result.host_launch_seconds * 1e6:.2f} us per call")
    return result
