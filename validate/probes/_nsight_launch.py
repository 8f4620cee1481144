"""The launch cost as Nsight Compute measures a kernel: an empty one-block kernel's
``gpu__time_duration`` under ``ncu`` (``--clock-control none``), stored in calibration.json as
``nsight_empty_kernel_seconds``.

CUDA events around a queued empty kernel (`validate.probes._launch`) see 2.7-3.2 us on an H100 or
H200; Nsight's duration of the same kernel is 1.3-1.5 us, and a profiled kernel's
duration is Nsight's. `roofline.nsight_calibration` predicts profiled launches with it.

The probe runs ``ncu`` on a child Python process (``python -m validate.probes._nsight_launch N
INDEX``) that launches the empty kernel of ``validate/kernels/latency.cu`` N times through the
one compile path and session, and reads the export with `roofline.load_ncu`. It is skipped,
with the reason, where ``ncu`` is not on PATH or cannot read the counters.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
from collections.abc import Callable

from pydantic import BaseModel, ConfigDict, Field

from ..device import compile_kernels, kernel_source, open_session
from ._ncu_child import Runner, profile_child
from ._probe import Figures, Probe, RunContext

__all__ = ["NsightLaunch", "NsightLaunchProbe", "measure_nsight_launch"]

_FROZEN = ConfigDict(frozen=True, extra="forbid")
#: Launches profiled; Nsight replays each, so a few dozen take seconds.
LAUNCHES = 20


class NsightLaunch(BaseModel):
    """An empty one-block kernel's duration as Nsight Compute measures it (or why it was not)."""

    model_config = _FROZEN

    empty_kernel_seconds: float | None = Field(
        default=None, gt=0, description="Median gpu__time_duration.sum of the profiled empty launches, seconds.")
    spread_seconds: float | None = Field(default=None, ge=0, description="Largest less smallest duration, seconds.")
    launches: int = Field(default=0, ge=0, description="Launches profiled.")
    command: str = Field(default="", description="The ncu command run.")
    skipped: str | None = Field(default=None, description="Why it was not measured (no ncu, counters blocked).")


def measure_nsight_launch(*, device_index: int = 0, launches: int = LAUNCHES, ncu: str | None = None,
                          runner: Runner = subprocess.run,
                          progress: Callable[[str], None] = lambda message: None) -> NsightLaunch:
    """Profile ``launches`` empty one-block kernels under ``ncu`` and take their median duration.

    Parameters
    ----------
    device_index : int
        The GPU (the validation's).
    launches : int
        Empty kernels launched and profiled.
    ncu : str, optional
        The ncu to run; default the one on PATH.
    runner : callable
        `subprocess.run`, or a stand-in in tests.
    progress : callable
        Receives one summary line.

    Returns
    -------
    NsightLaunch
        With ``skipped`` set (and no duration) where ncu is absent, cannot read the
        counters, or fails.
    """
    profile, shown, skipped = profile_child("validate.probes._nsight_launch", [str(launches), str(device_index)],
                                            metrics=["gpu__time_duration.sum"], kernel_name="empty_kernel",
                                            ncu=ncu, runner=runner)
    if profile is None:
        return NsightLaunch(command=shown, skipped=skipped)
    durations = [k.measured.duration_seconds for k in profile.kernels if k.measured.duration_seconds]
    if not durations:
        return NsightLaunch(command=shown, skipped="ncu profiled no empty kernel with a duration")
    result = NsightLaunch(empty_kernel_seconds=statistics.median(durations),
                          spread_seconds=max(durations) - min(durations), launches=len(durations), command=shown)
    progress(f"launch under Nsight: empty kernel {result.empty_kernel_seconds * 1e6:.2f} us "
             f"(gpu__time_duration, median of {len(durations)})")
    return result


class NsightLaunchProbe(Probe[NsightLaunch]):
    """The empty kernel's duration under Nsight Compute (`measure_nsight_launch`)."""

    name = "nsight_launch"
    step = "launch under Nsight"

    def run(self, ctx: RunContext) -> NsightLaunch:
        result = measure_nsight_launch(device_index=ctx.info.index, launches=5 if ctx.quick else LAUNCHES,
                                       progress=ctx.progress)
        if result.skipped:
            ctx.progress(f"launch under Nsight skipped: {result.skipped}")
        return result

    def figures(self, result: NsightLaunch) -> Figures:
        return {"nsight_empty_kernel_seconds": (
            result.empty_kernel_seconds,
            f"Nsight Compute gpu__time_duration.sum of an empty one-block kernel, median of {result.launches} "
            "launches, --clock-control none")}

    def render(self, result: NsightLaunch, heading: str, assets: str) -> list[str]:
        if result.empty_kernel_seconds is None:
            return [f"{heading} Launch under Nsight Compute", "", f"Not measured: {result.skipped}", ""]
        return [f"{heading} Launch under Nsight Compute", "",
                f"An empty one-block kernel lasts {result.empty_kernel_seconds * 1e6:.2f} us by Nsight's "
                f"`gpu__time_duration` (median of {result.launches}, spread "
                f"{(result.spread_seconds or 0) * 1e6:.2f} us): the launch cost of a profiled kernel "
                "(`roofline.nsight_calibration`).", "", f"`{result.command}`", ""]


def _launch_empty(launches: int, device_index: int) -> None:
    """Launch the empty kernel ``launches`` times (the program ncu profiles)."""
    session = open_session(device_index)
    core = session.cuda.core
    kernel = compile_kernels(kernel_source("latency.cu"), ["empty_kernel"], arch=session.arch,
                             name="latency.cu")["empty_kernel"]
    config = core.LaunchConfig(grid=(1, 1, 1), block=(32, 1, 1))
    for _ in range(launches):
        core.launch(session.stream, config, kernel)
    session.synchronize()


if __name__ == "__main__":
    _launch_empty(int(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 0)
