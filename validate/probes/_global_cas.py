"""The global-CAS probe: a returning global compare-and-swap's round trip at L2, the rate of
32-lane compare-and-swaps on one line a warp, and the rate of adds to one word by its type.

`validate/kernels/global_cas.cu` holds the kernels:

* **CAS chain**: one thread's chain of dependent ``atomicCAS`` on one word (each compare value
  the word as the last CAS found it): the round trip of one returning atomic at L2.
* **CAS lines**: every warp of a full GPU (two blocks of 1024 threads per SM) sends
  independent 32-lane ``atomicCAS`` to a 128-byte line of its own, each lane on its own word:
  lane attempts per second, the whole GPU.
* **Adds to one word**: lane 0 of every warp of a block of 1024 threads per SM adds to one
  word, ``u32``, ``f32`` and ``f64`` (``REDG.E.ADD``, ``.F32``, ``.F64``): the updates the
  word's L2 slice applies per second, by type. The ``u32`` rate is the memory-terms probe's
  ``atomic_one_address_updates_per_second`` measured again in the same session (a check, not a
  figure of this probe); the float rates are the ``float_atomics`` rule's.

Each kernel is timed at ``iters`` and ``2 x iters`` operations a thread; a figure is the
operations the second adds over the time it adds (the launch's cost cancels). The CAS figures
are the ``cas_contention`` rule's, the float adds' the ``float_atomics`` rule's
(`roofline._predict.terms.atomics`). A few launches of at most a few milliseconds: well under a
second of device time. Alone, from the repository's root:
``python scripts/global_cas_probe.py [--out FILE.json]``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from ..device import (
    DeviceInfo,
    Session,
    compile_kernels,
    kernel_source,
    takes_session,
)
from ._doubled import added_figures, doubled_times, run_alone, shown
from ._probe import Figures, Probe, RunContext

__all__ = ["GlobalCas", "GlobalCasProbe", "GlobalCasTimes", "derive_global_cas", "main", "measure_global_cas"]

_FROZEN = ConfigDict(frozen=True, extra="forbid")
#: Threads of a block of the lines launch, and its blocks per SM (a full H100 or H200 SM).
THREADS, BLOCKS_PER_SM = 1024, 2
#: The kernels: (kernel, its figure, what it times).
KERNELS: tuple[tuple[str, str, str], ...] = (
    ("global_cas_chain", "cas_round_trip_seconds", "one thread's chain of dependent global atomicCAS on one word"),
    ("global_cas_lines", "cas_line_attempts_per_second",
     "independent 32-lane global atomicCAS, every warp of the GPU on a 128-byte line of its own"),
    ("global_add_one_u32", "atomic_one_address_u32_updates_per_second",
     "unsigned atomicAdd (REDG.E.ADD) of lane 0 of every warp, 1024 threads per SM, to one word"),
    ("global_add_one_f32", "atomic_one_address_f32_updates_per_second",
     "float atomicAdd (REDG.E.ADD.F32) of lane 0 of every warp, 1024 threads per SM, to one word"),
    ("global_add_one_f64", "atomic_one_address_f64_updates_per_second",
     "double atomicAdd (REDG.E.ADD.F64) of lane 0 of every warp, 1024 threads per SM, to one word"),
)
#: Kernels timed as a check of another probe's figure (shown, not stored as this probe's figure).
CHECKS = frozenset({"global_add_one_u32"})
#: The kernels whose operations are one lane a warp.
_ONE_LANE_A_WARP = frozenset({"global_add_one_u32", "global_add_one_f32", "global_add_one_f64"})


class GlobalCasTimes(BaseModel):
    """Each kernel's threads and its time at ``iters`` and at ``2 x iters`` operations a thread."""

    model_config = _FROZEN

    iters: int = Field(gt=0, description="Operations a thread of the shorter launch.")
    threads: dict[str, int] = Field(description="Kernel -> threads that run its operations.")
    seconds: dict[str, tuple[float, float]] = Field(
        description="Kernel -> (seconds at iters, seconds at 2 x iters), median of the timed launches.")


class GlobalCas(GlobalCasTimes):
    """What the probe timed and the figures from it (None: the longer launch added no time)."""

    cas_round_trip_seconds: float | None = Field(default=None, gt=0)
    cas_line_attempts_per_second: float | None = Field(default=None, gt=0)
    atomic_one_address_u32_updates_per_second: float | None = Field(
        default=None, gt=0, description="A check of the memory-terms probe's atomic_one_address_updates_per_second.")
    atomic_one_address_f32_updates_per_second: float | None = Field(default=None, gt=0)
    atomic_one_address_f64_updates_per_second: float | None = Field(default=None, gt=0)


def derive_global_cas(times: GlobalCasTimes) -> GlobalCas:
    """The figures from the times (a plain function, tested on the CPU).

    The round trip: the time the longer chain adds over ``iters`` (one thread). The rate: the
    launch's threads x ``iters`` lane attempts over the time the longer launch adds.
    """
    if not isinstance(times, GlobalCasTimes):
        raise TypeError(f"times must be a GlobalCasTimes, not {type(times).__name__}")
    figures = added_figures([(k, name, times.threads[k]) for k, name, _ in KERNELS if k in times.seconds],
                            times.iters, times.seconds)
    return GlobalCas(**times.model_dump(), **figures)


@takes_session
def measure_global_cas(session: Session, info: DeviceInfo, *, quick: bool = False,
                       progress: Callable[[str], None] = lambda message: None) -> GlobalCas:
    """Run the kernels on the device and derive the figures.

    Parameters
    ----------
    session : validate.Session
    info : DeviceInfo
    quick : bool
        Fewer timed launches.
    """
    kernels = compile_kernels(kernel_source("global_cas.cu"), [k for k, _, _ in KERNELS], arch=session.arch,
                              name="global_cas.cu")
    blocks = info.sm_count * BLOCKS_PER_SM
    shapes = {"global_cas_chain": (1, 32), "global_cas_lines": (blocks, THREADS),
              **{k: (info.sm_count, THREADS) for k in sorted(_ONE_LANE_A_WARP)}}
    words, out = session.allocate(blocks * THREADS * 4), session.allocate(blocks * THREADS * 4)
    iters = 512
    seconds = doubled_times(session, kernels, shapes, (words, out), iters, quick=quick)
    threads = {"global_cas_chain": 1, "global_cas_lines": blocks * THREADS,
               **{k: info.sm_count * THREADS // 32 for k in _ONE_LANE_A_WARP}}
    result = derive_global_cas(GlobalCasTimes(iters=iters, threads=threads, seconds=seconds))
    progress("global atomics: " + ", ".join(f"{name} {shown(getattr(result, name))}" for _, name, _ in KERNELS))
    return result


class GlobalCasProbe(Probe[GlobalCas]):
    """A returning global CAS's round trip, the rate of 32-lane CAS on one line a warp, and the
    rates of float adds to one word (`measure_global_cas`)."""

    name = "global_cas"
    step = "global cas"

    def run(self, ctx: RunContext) -> GlobalCas:
        return measure_global_cas(ctx.session, ctx.info, quick=ctx.quick, progress=ctx.progress)

    def figures(self, result: GlobalCas) -> Figures:
        return {name: (getattr(result, name),
                       f"{how}, {result.threads[kernel]} threads, {result.iters} against {2 * result.iters} "
                       "operations a thread: the operations the longer adds over the time it adds")
                for kernel, name, how in KERNELS if kernel not in CHECKS and kernel in result.seconds}

    def render(self, result: GlobalCas, heading: str, assets: str) -> list[str]:
        rows = [f"| {kernel} | {result.threads[kernel]} | {shown(getattr(result, name))} | "
                f"{short * 1e6:.1f} us, {long * 1e6:.1f} us |"
                for kernel, name, _ in KERNELS if kernel in result.seconds for short, long in [result.seconds[kernel]]]
        return [f"{heading} Global compare-and-swap and adds to one word", "",
                f"{result.iters} and {2 * result.iters} operations a thread.", "",
                "| kernel | threads | figure | times |", "| --- | ---: | ---: | --- |", *rows, ""]


def main(*, out: Path | None = None) -> int:
    """Measure on the first GPU, print the section (progress on stderr), write ``out`` (JSON).

    Returns
    -------
    int
        The number of figures not measured (a longer launch that added no time).
    """
    return run_alone(GlobalCasProbe(), measure_global_cas, out)
