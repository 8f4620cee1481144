"""The shared-atomics probe: one SM's rates of shared-memory atomics and a shared CAS's round trip.

`validate/kernels/shared_atomics.cu` holds the kernels; one block per SM (1024 threads, each
block on its own shared words) runs ``iters`` operations a thread:

* **Adds on one word**: every lane ``atomicAdd`` s to one word (a warp's lanes on one word).
* **Adds spread**: every thread adds to its own word (a warp's lanes on 32 banks).
* **CAS on one word** and **CAS spread**: independent ``atomicCAS`` attempts, on one word
  (most fail) and each thread on its own word (all succeed): attempts per second, success or not.
* **CAS chain**: one thread's chain of dependent ``atomicCAS``: the round trip of one.

Each kernel is timed at ``iters`` and ``2 x iters`` operations; the rate is the operations the
second adds over the time it adds (the launch's cost cancels), per SM. The figures are the
``shared_atomics`` term's parameters (`roofline._predict.terms.shared_atomics`). A few
launches of tens of microseconds: well under a second of device time. Alone, from the
repository's root: ``python scripts/shared_atomics_probe.py [--out FILE.json]``.
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

__all__ = ["SharedAtomicTimes", "SharedAtomics", "SharedAtomicsProbe", "derive_shared_atomics", "main",
           "measure_shared_atomics"]

_FROZEN = ConfigDict(frozen=True, extra="forbid")
#: Threads of a block of the rate probes (one block per SM, each thread on a word of its own).
THREADS = 1024
#: The kernels, in the order `SharedAtomicTimes` holds them: (kernel, what its rate is, threads a block).
KERNELS: tuple[tuple[str, str, int], ...] = (
    ("shared_add_one_word", "sm_shared_atomic_one_word_updates_per_second", THREADS),
    ("shared_add_spread", "sm_shared_atomic_spread_updates_per_second", THREADS),
    ("shared_cas_one_word", "sm_shared_cas_one_word_attempts_per_second", THREADS),
    ("shared_cas_spread", "sm_shared_cas_spread_attempts_per_second", THREADS),
    ("shared_cas_chain", "shared_cas_round_trip_seconds", 32),
)


class SharedAtomicTimes(BaseModel):
    """Each kernel's time at ``iters`` and at ``2 x iters`` operations a thread, seconds."""

    model_config = _FROZEN

    iters: int = Field(gt=0, description="Operations a thread of the shorter launch.")
    sm_count: int = Field(gt=0, description="Blocks of each launch (one per SM).")
    seconds: dict[str, tuple[float, float]] = Field(
        description="Kernel -> (seconds at iters, seconds at 2 x iters), median of the timed launches.")


class SharedAtomics(SharedAtomicTimes):
    """What the probe timed and the figures from it (None: the longer launch was not the slower)."""

    sm_shared_atomic_one_word_updates_per_second: float | None = Field(default=None, gt=0)
    sm_shared_atomic_spread_updates_per_second: float | None = Field(default=None, gt=0)
    sm_shared_cas_one_word_attempts_per_second: float | None = Field(default=None, gt=0)
    sm_shared_cas_spread_attempts_per_second: float | None = Field(default=None, gt=0)
    shared_cas_round_trip_seconds: float | None = Field(default=None, gt=0)


def derive_shared_atomics(times: SharedAtomicTimes) -> SharedAtomics:
    """The figures from the times (a plain function, tested on the CPU).

    A rate: one block's lanes x ``iters`` operations over the time the longer launch adds (one
    block per SM: a rate per SM). The round trip: that added time over ``iters`` (one thread).
    """
    if not isinstance(times, SharedAtomicTimes):
        raise TypeError(f"times must be a SharedAtomicTimes, not {type(times).__name__}")
    figures = added_figures(KERNELS, times.iters, times.seconds)
    return SharedAtomics(**times.model_dump(), **figures)


@takes_session
def measure_shared_atomics(session: Session, info: DeviceInfo, *, quick: bool = False,
                           progress: Callable[[str], None] = lambda message: None) -> SharedAtomics:
    """Run the kernels on the device (one block per SM) and derive the figures.

    Parameters
    ----------
    session : validate.Session
    info : DeviceInfo
    quick : bool
        Fewer timed launches.
    """
    kernels = compile_kernels(kernel_source("shared_atomics.cu"), [k for k, _, _ in KERNELS], arch=session.arch,
                              name="shared_atomics.cu")
    out = session.allocate(info.sm_count * THREADS * 4)
    iters = 256
    shapes = {kernel: (info.sm_count, threads) for kernel, _, threads in KERNELS}
    seconds = doubled_times(session, kernels, shapes, (out,), iters, quick=quick)
    result = derive_shared_atomics(SharedAtomicTimes(iters=iters, sm_count=info.sm_count, seconds=seconds))
    progress("shared atomics per SM: " + ", ".join(
        f"{name} {shown(getattr(result, name))}" for _, name, _ in KERNELS))
    return result


class SharedAtomicsProbe(Probe[SharedAtomics]):
    """One SM's shared-atomic rates and a shared CAS's round trip (`measure_shared_atomics`)."""

    name = "shared_atomics"
    step = "shared atomics"

    def run(self, ctx: RunContext) -> SharedAtomics:
        return measure_shared_atomics(ctx.session, ctx.info, quick=ctx.quick, progress=ctx.progress)

    def figures(self, result: SharedAtomics) -> Figures:
        how = {"shared_add_one_word": "every lane atomicAdds to one shared word",
               "shared_add_spread": "every thread atomicAdds to its own shared word",
               "shared_cas_one_word": "independent atomicCAS attempts of every lane on one shared word",
               "shared_cas_spread": "independent atomicCAS attempts, every thread on its own shared word",
               "shared_cas_chain": "one thread's chain of dependent shared atomicCAS"}
        return {name: (getattr(result, name),
                       f"{how[kernel]}, one block of {threads} threads per SM, {result.iters} against "
                       f"{2 * result.iters} a thread: the operations the longer adds over the time it adds")
                for kernel, name, threads in KERNELS}

    def render(self, result: SharedAtomics, heading: str, assets: str) -> list[str]:
        rows = [f"| {kernel} | {shown(getattr(result, name))} | {short * 1e6:.1f} us, {long * 1e6:.1f} us |"
                for kernel, name, _ in KERNELS for short, long in [result.seconds[kernel]]]
        return [f"{heading} Shared-memory atomics (per SM)", "",
                f"One block per SM, {result.iters} and {2 * result.iters} operations a thread.", "",
                "| kernel | figure | times |", "| --- | ---: | --- |", *rows, ""]


def main(*, out: Path | None = None) -> int:
    """Measure on the first GPU, print the section (progress on stderr), write ``out`` (JSON).

    Returns
    -------
    int
        The number of figures not measured (a longer launch not slower than the shorter).
    """
    return run_alone(SharedAtomicsProbe(), measure_shared_atomics, out)
