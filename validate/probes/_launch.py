"""Launch cost without Python in the loop: an empty kernel timed behind a spin kernel
(`validate.device.QueuedEventTimer`), on an idle GPU, in a CUDA graph, and on the host."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from ..device import (
    EventTimer,
    Session,
    StopRules,
    benchmark,
    compile_kernels,
    cuda_errors,
    kernel_source,
    takes_session,
)
from ._probe import Figures, Probe, RunContext

__all__ = ["LaunchOverhead", "LaunchProbe", "block_ramp_figure", "measure_launch_overhead", "render_launch"]

_FROZEN = ConfigDict(frozen=True, extra="forbid")
#: Threads per block of the ramp's empty kernels (8 blocks fill an SM of 2048 threads).
_RAMP_THREADS = 256
#: Launch calls per sample of the host's launch cost (the median of 5 such batches, per call).
HOST_BATCH = 100

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
    ramp_blocks_per_sm: tuple[int, ...] = Field(
        default=(), description="Blocks per SM of the empty kernels of the ramp (256 threads, grid = that x SMs).")
    ramp_kernel_seconds: tuple[float, ...] = Field(
        default=(), description="Their times, queued behind a spin kernel, medians.")
    block_ramp_seconds: float | None = Field(
        default=None, ge=0, description="The least-squares slope of those times over the blocks per SM: how much "
                                        "later each further block of a first wave starts on an SM.")
    spread_sms: tuple[int, ...] = Field(
        default=(), description="SMs of the spread sweep: grids of that many 256-thread blocks, one per SM.")
    spread_touch_seconds: tuple[float, ...] = Field(
        default=(), description="A kernel that loads and stores one float per thread on those grids, after "
                                "validate's L2 flush, queued behind a spin kernel, medians.")
    spread_empty_seconds: tuple[float, ...] = Field(
        default=(), description="The empty kernel on the same grids, after the same flush, medians.")
    first_round_seconds_per_sm: float | None = Field(
        default=None, ge=0, description="The least-squares slope of the touch kernel's time beyond the empty one's "
                                        "over the SMs in use: how much later a launch's first memory round ends per "
                                        "further SM that takes part.")


def _slope(x, y) -> float:
    """The least-squares slope of ``y`` over ``x``, at least 0."""
    return max(0.0, float(np.polyfit(np.asarray(x, float), np.asarray(y, float), 1)[0]))


@takes_session
def measure_launch_overhead(session: Session, *, quick: bool = False,
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
    core = session.cuda.core
    kernels = compile_kernels(kernel_source("latency.cu"), ["empty_kernel", "touch_kernel"], arch=session.arch,
                              name="latency.cu")
    kernel = kernels["empty_kernel"]
    config = core.LaunchConfig(grid=(1, 1, 1), block=(32, 1, 1))
    stream = session.stream
    repetitions = 50 if quick else 200

    def one() -> None:
        core.launch(stream, config, kernel)

    single = StopRules(warmup=10, repetitions=repetitions)
    queued = benchmark(one, timer=session.timer, rules=single).median_seconds
    idle = benchmark(one, timer=EventTimer(stream), rules=single).median_seconds

    count = 200 if quick else 1000
    with cuda_errors("building a CUDA graph of empty kernels"):
        builder = stream.create_graph_builder().begin_building()
        for _ in range(count):
            core.launch(builder, config, kernel)
        graph = builder.end_building().complete()
        graph.upload(stream)
    replay = benchmark(lambda: graph.launch(stream), timer=session.timer,
                       rules=StopRules(warmup=3, repetitions=max(5, repetitions // 20))).median_seconds
    with cuda_errors("closing the CUDA graph"):
        graph.close()

    # the ramp: an SM takes the blocks of a first wave one after another
    props = session.device.properties
    most = max(2, min(16, int(props.max_threads_per_multiprocessor) // _RAMP_THREADS))
    per_sm = tuple(range(1, most + 1))
    ramp = []
    grids = StopRules(warmup=5, repetitions=repetitions)
    for k in per_sm:
        wave = core.LaunchConfig(grid=(k * int(props.multiprocessor_count), 1, 1), block=(_RAMP_THREADS, 1, 1))
        ramp.append(benchmark(lambda wave=wave: core.launch(stream, wave, kernel), timer=session.timer,
                              rules=grids).median_seconds)
    slope = _slope(per_sm, ramp)

    # the spread: a first memory round on more SMs ends later, before any bandwidth matters
    sms = int(props.multiprocessor_count)
    spread_sms = tuple(sorted({k for k in (1, 2, 4, 8, 16, 32, 48, 64, 96, sms) if k <= sms}
                              if not quick else {1, max(1, sms // 4), max(1, sms // 2), sms}))
    buffers = (session.allocate(4 * sms * _RAMP_THREADS), session.allocate(4 * sms * _RAMP_THREADS))
    touch, untouched = [], []
    for k in spread_sms:
        grid = core.LaunchConfig(grid=(k, 1, 1), block=(_RAMP_THREADS, 1, 1))
        touch.append(benchmark(lambda grid=grid: core.launch(stream, grid, kernels["touch_kernel"], *buffers),
                               timer=session.timer, rules=grids, flush=session.flush_l2).median_seconds)
        untouched.append(benchmark(lambda grid=grid: core.launch(stream, grid, kernel), timer=session.timer,
                                   rules=grids, flush=session.flush_l2).median_seconds)
    bodies = np.asarray(touch) - np.asarray(untouched)
    first_round = _slope(spread_sms, bodies) if len(spread_sms) > 1 else None

    def batch() -> None:
        for _ in range(HOST_BATCH):
            one()

    # the host's side: a batch of launch calls on the host clock, after the stream drained
    host = benchmark(batch, timer=session.host_timer, rules=StopRules(warmup=0, repetitions=5),
                     launches_per_sample=HOST_BATCH).median_seconds
    session.synchronize()
    result = LaunchOverhead(
        queued_kernel_seconds=queued, graph_kernel_seconds=replay / count, graph_kernels=count,
        event_pair_seconds=idle, host_launch_seconds=host, repetitions=repetitions,
        late_samples=session.timer.late, ramp_blocks_per_sm=per_sm, ramp_kernel_seconds=tuple(ramp),
        block_ramp_seconds=slope, spread_sms=spread_sms, spread_touch_seconds=tuple(touch),
        spread_empty_seconds=tuple(untouched), first_round_seconds_per_sm=first_round,
    )
    progress(f"launch: empty kernel {queued * 1e6:.2f} us GPU-side, {result.graph_kernel_seconds * 1e6:.2f} us "
             f"per kernel in a graph, {idle * 1e6:.2f} us with the Python launch path, host "
             f"{result.host_launch_seconds * 1e6:.2f} us per call; each further block per SM "
             f"{slope * 1e9:.0f} ns ({ramp[0] * 1e6:.2f} to {ramp[-1] * 1e6:.2f} us at 1 to {most} blocks per SM); "
             f"a first memory round {bodies[0] * 1e6:.2f} us on 1 SM, {bodies[-1] * 1e6:.2f} us on {spread_sms[-1]}"
             + (f", {first_round * 1e9:.2f} ns per further SM" if first_round is not None else ""))
    return result


def render_launch(launch: LaunchOverhead, h: str = "##") -> list[str]:
    """Launch cost with and without the host."""
    return [f"{h} Launch overhead", "",
            "| what | time | how |", "| --- | --- | --- |",
            f"| empty kernel, GPU side | {launch.queued_kernel_seconds * 1e6:.2f} us | CUDA events around one launch "
            f"queued behind a spin kernel (no host time), median of {launch.repetitions} |",
            f"| per kernel, back to back | {launch.graph_kernel_seconds * 1e6:.2f} us | a CUDA graph of "
            f"{launch.graph_kernels} empty kernels replayed behind a spin kernel, time / {launch.graph_kernels} |",
            f"| one launch from Python, idle GPU | {launch.event_pair_seconds * 1e6:.2f} us | CUDA events around one "
            f"cuda.core launch with nothing queued: includes the host's Python launch path |",
            f"| host time of one launch call | {launch.host_launch_seconds * 1e6:.2f} us | perf_counter over 100 "
            f"cuda.core launches, median of 5 batches |",
            *([f"| each further block per SM | {launch.block_ramp_seconds * 1e9:.0f} ns | slope of an empty "
               f"{_RAMP_THREADS}-thread kernel's time over its blocks per SM ("
               + ", ".join(f"{k}: {t * 1e6:.2f} us" for k, t in zip(launch.ramp_blocks_per_sm,
                                                                   launch.ramp_kernel_seconds))
               + "), queued behind a spin kernel |"] if launch.block_ramp_seconds is not None else []),
            *([f"| each further SM of a first memory round | {launch.first_round_seconds_per_sm * 1e9:.2f} ns | slope "
               f"over the SMs in use of a {_RAMP_THREADS}-thread kernel that loads and stores one float per thread, "
               "beyond the empty kernel on the same grid, both after the L2 flush and queued behind a spin kernel ("
               + ", ".join(f"{k} SMs: {(t - e) * 1e6:.2f} us" for k, t, e in zip(
                   launch.spread_sms, launch.spread_touch_seconds, launch.spread_empty_seconds))
               + ") |"] if launch.first_round_seconds_per_sm is not None else []), ""]


def block_ramp_figure(result: LaunchOverhead) -> tuple[float, str] | None:
    """The block ramp of `result` and how it was measured; None where it was not.

    The interval between block launches on an SM: the calibration's ``block_ramp_seconds``
    and, in the copy sweep's fit, the start of its ``block_dispatch_seconds``
    (`run_prediction_check`, `validate.probes._prediction.scheduler_interval`).
    """
    if not isinstance(result, LaunchOverhead):
        raise TypeError(f"result must be a validate.LaunchOverhead, not {type(result).__name__}")
    if result.block_ramp_seconds is None:
        return None
    return (result.block_ramp_seconds,
            f"slope of an empty {_RAMP_THREADS}-thread kernel's time over 1 to {max(result.ramp_blocks_per_sm)} blocks "
            "per SM, each queued behind a spin kernel, medians")


class LaunchProbe(Probe[LaunchOverhead]):
    """Launch overhead (`measure_launch_overhead`); gives the calibration the per-kernel graph time."""

    name = "launch"
    step = "launch overhead"

    def run(self, ctx: RunContext) -> LaunchOverhead:
        return measure_launch_overhead(ctx.session, quick=ctx.quick, progress=ctx.progress)

    def figures(self, result: LaunchOverhead) -> Figures:
        ramp = block_ramp_figure(result)
        figures: Figures = {} if ramp is None else {"block_ramp_seconds": ramp}
        if result.first_round_seconds_per_sm is not None:
            figures["first_round_seconds_per_sm"] = (
                result.first_round_seconds_per_sm,
                f"slope over 1 to {max(result.spread_sms)} SMs (one {_RAMP_THREADS}-thread block each) of a kernel that "
                "loads and stores one float per thread, beyond the empty kernel on the same grid, both after "
                "validate's L2 flush and queued behind a spin kernel, medians")
        return {**figures, "graph_kernel_seconds": (
            result.graph_kernel_seconds,
            f"CUDA graph of {result.graph_kernels} empty kernels replayed behind a spin kernel, time per kernel")}

    def render(self, result: LaunchOverhead, heading: str, assets: str) -> list[str]:
        return render_launch(result, heading)
