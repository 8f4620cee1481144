"""The open-lines probe: how many lines the resident blocks may hold open across a loop iteration
before L2 lets them go, measured by Nsight Compute (rule ``l2_open_lines``).

Kernel ``rows_pair`` (validate/kernels/rule_probes.cu) gives each thread a row of two float
arrays and walks it 4 bytes a step: a thread holds one 128-byte line of each array open while
it steps through it. Blocks of ``THREADS`` threads, ``BLOCKS_PER_SM`` of them an SM (every block
resident at once), the two arrays at least ``ARRAYS_OF_L2`` x L2 in all (the columns, whole lines,
shrink as the rows grow), so the open lines are ``rows x 2 x 128`` bytes, from a sixth of L2 to
past it. From 16 blocks an SM L1 keeps few of the last iteration's sectors: each 4-byte step is
a sector request at L2, which hits while L2 holds the line. Each launch runs once under ``ncu
--cache-control all --clock-control none``; its DRAM reads beyond the arrays' own, over the
sector requests beyond the arrays' sectors (``lts__t_sectors_srcunit_tex_op_read.sum``) x the
64-byte burst the DRAM fetches for each, are the share fetched again.

The figures: the straight line through the shares between ``FIT_LOW`` and ``FIT_HIGH``,
where it is 0 (``l2_open_lines_onset_bytes``) and where it is 1 (``l2_open_lines_full_bytes``).
On an H100 SXM (50 MiB L2) the probe gives 34.4 and 62.9 MB (2026-12-07, the packaged figures;
docs/results/h100-sxm/probes-2026-12-07c/open_lines.json), the exploration before it
(scripts/l2_window_explore.sh) 35.9 and 60.0 MB.

The child program (``python -m validate.probes._open_lines DEVICE SMS L2_BYTES``) makes the launches.
Alone, from the repository's root: ``python scripts/open_lines_probe.py [--out FILE.json]``.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import roofline
from pydantic import BaseModel, ConfigDict, Field

from ..device import compile_kernels, kernel_source, open_session
from ._doubled import run_alone
from ._ncu_child import Runner, profile_child
from ._probe import Figures, Probe, RunContext

__all__ = ["OpenLineLaunch", "OpenLines", "OpenLinesProbe", "derive_open_lines", "launch_plan", "main",
           "measure_open_lines"]

_FROZEN = ConfigDict(frozen=True, extra="forbid")
KERNEL = "rows_pair"
THREADS = 64
#: Blocks of `THREADS` an SM, launch by launch (sm_90 holds 32 of them: 2048 threads).
BLOCKS_PER_SM = (4, 8, 12, 16, 18, 20, 22, 24, 26, 28, 32)
#: The two arrays together, in L2 sizes: past L2, so that their compulsory reads come from DRAM.
ARRAYS_OF_L2 = 2.5
#: The shares fitted: the ramp between L2 keeping nearly every open line and nearly none.
FIT_LOW, FIT_HIGH = 0.1, 0.9
#: Launches of the plan's first made before it and left unprofiled: the profiled launches find
#: the kernel loaded and the arrays written, as the exploration's did.
WARM_UP = 1
#: 1.0f as a 32-bit word: the arrays' fill.
_ONE = 0x3F800000
#: Bytes the DRAM fetches for a lone sector (the effects probe's ``dram_burst_bytes`` on Hopper).
BURST_BYTES = 64
_LINE, _SECTOR, _FLOAT, _ARRAYS = 128, 32, 4, 2
METRICS = ("gpu__time_duration.sum", "dram__bytes_read.sum", "dram__bytes_write.sum",
           "lts__t_sectors_srcunit_tex_op_read.sum")


def launch_plan(sm_count: int, l2_cache_bytes: int) -> list[tuple[int, int]]:
    """The launches in the order the child makes them: ``(blocks, columns)``, the columns whole
    lines, so that every row starts a line of its own."""
    if sm_count <= 0 or l2_cache_bytes <= 0:
        raise ValueError(f"sm_count and l2_cache_bytes must be positive, not {sm_count} and {l2_cache_bytes}")
    floats = int(ARRAYS_OF_L2 * l2_cache_bytes) // (_ARRAYS * _FLOAT)  # of each array
    per_line = _LINE // _FLOAT
    return [(k * sm_count, -(-floats // (k * sm_count * THREADS * per_line)) * per_line) for k in BLOCKS_PER_SM]


class OpenLineLaunch(BaseModel):
    """One profiled launch: its open lines, and what L2 and DRAM did."""

    model_config = _FROZEN

    blocks: int = Field(gt=0)
    columns: int = Field(gt=0, description="Floats of a row.")
    dram_read_bytes: float = Field(ge=0, description="dram__bytes_read.sum.")
    l2_read_sectors: float = Field(ge=0, description="lts__t_sectors_srcunit_tex_op_read.sum: L1's read requests.")
    seconds: float | None = Field(default=None, description="gpu__time_duration.sum.")

    @property
    def open_line_bytes(self) -> int:
        """A line of each array for every row in flight."""
        return self.blocks * THREADS * _ARRAYS * _LINE

    @property
    def array_bytes(self) -> int:
        """The two arrays' bytes: the compulsory reads."""
        return self.blocks * THREADS * self.columns * _ARRAYS * _FLOAT

    @property
    def refetched_share(self) -> float | None:
        """DRAM reads beyond the arrays over the sector requests beyond theirs x a burst (None
        where L2 was asked for nothing again)."""
        again = self.l2_read_sectors - self.array_bytes / _SECTOR
        if again <= 0:
            return None
        return max(0.0, self.dram_read_bytes - self.array_bytes) / (again * BURST_BYTES)


class OpenLines(BaseModel):
    """The profiled launches and the figures (or why they were not measured)."""

    model_config = _FROZEN

    l2_cache_bytes: int = Field(gt=0, description="The device's L2 size, bytes.")
    launches: tuple[OpenLineLaunch, ...] = ()
    l2_open_lines_onset_bytes: float | None = Field(default=None, gt=0)
    l2_open_lines_full_bytes: float | None = Field(default=None, gt=0)
    command: str = Field(default="", description="The ncu command run.")
    skipped: str | None = Field(default=None, description="Why it was not measured (no ncu, counters blocked).")


def _fitted(launches: tuple[OpenLineLaunch, ...]) -> list[OpenLineLaunch]:
    return [launch for launch in launches
            if launch.refetched_share is not None and FIT_LOW <= launch.refetched_share <= FIT_HIGH]


def derive_open_lines(l2_cache_bytes: int, launches: tuple[OpenLineLaunch, ...], command: str = "") -> OpenLines:
    """The figures from the launches (a plain function, tested on the CPU): the least-squares line
    of the share against the open lines over the launches between `FIT_LOW` and `FIT_HIGH`."""
    fitted = _fitted(launches)
    if len(fitted) < 2:
        return OpenLines(l2_cache_bytes=l2_cache_bytes, launches=launches, command=command,
                         skipped=f"{len(fitted)} launches with a share between {FIT_LOW} and {FIT_HIGH}, not 2")
    slope, intercept = np.polyfit([f.open_line_bytes for f in fitted], [f.refetched_share for f in fitted], 1)
    if slope <= 0:
        return OpenLines(l2_cache_bytes=l2_cache_bytes, launches=launches, command=command,
                         skipped="the share fetched again does not grow with the open lines")
    onset, full = -intercept / slope, (1.0 - intercept) / slope
    return OpenLines(l2_cache_bytes=l2_cache_bytes, launches=launches, command=command,
                     l2_open_lines_onset_bytes=float(onset) if onset > 0 else None, l2_open_lines_full_bytes=float(full))


def measure_open_lines(*, device_index: int, sm_count: int, l2_cache_bytes: int, ncu: str | None = None,
                       runner: Runner = subprocess.run,
                       progress: Callable[[str], None] = lambda message: None) -> OpenLines:
    """Profile the launches of `launch_plan` under ``ncu`` and derive the figures.

    Returns
    -------
    OpenLines
        With ``skipped`` set (and no figures) where ncu is absent, cannot read the counters,
        fails, or profiled other launches than the plan's.
    """
    plan = launch_plan(sm_count, l2_cache_bytes)
    profile, shown, skipped = profile_child("validate.probes._open_lines",
                                            [str(device_index), str(sm_count), str(l2_cache_bytes)],
                                            metrics=METRICS, kernel_name=KERNEL, cache_control="all", ncu=ncu,
                                            launch_skip=WARM_UP, runner=runner)
    if profile is None:
        return OpenLines(l2_cache_bytes=l2_cache_bytes, command=shown, skipped=skipped)
    if len(profile.kernels) != len(plan):
        return OpenLines(l2_cache_bytes=l2_cache_bytes, command=shown,
                         skipped=f"ncu profiled {len(profile.kernels)} launches, the probe made {len(plan)}")
    launches = tuple(_launch(k, blocks, columns) for (blocks, columns), k in zip(plan, profile.kernels, strict=True))
    if any(launch is None for launch in launches):
        return OpenLines(l2_cache_bytes=l2_cache_bytes, command=shown,
                         skipped="ncu's profile lacks dram__bytes_read.sum or the L2 read sectors")
    result = derive_open_lines(l2_cache_bytes, launches, shown)
    if result.l2_open_lines_full_bytes is not None:
        progress(f"open lines: L2 lets them go from {(result.l2_open_lines_onset_bytes or 0) / 1e6:.1f} MB, "
                 f"all from {result.l2_open_lines_full_bytes / 1e6:.1f} MB ({l2_cache_bytes / 2**20:.0f} MiB L2)")
    return result


def _launch(kernel: roofline.NcuKernel, blocks: int, columns: int) -> OpenLineLaunch | None:
    """One launch's figures from its profile: the DRAM reads and the L2 read sectors as counted
    (not from the L2 hit rate, which stops at 0 once DRAM fetches a 64-byte burst a sector)."""
    measured = kernel.measured
    if kernel.dram_bytes is None or measured.l2_read_sectors is None:
        return None
    read = max(0.0, kernel.dram_bytes - (measured.dram_written_bytes or 0.0))
    return OpenLineLaunch(blocks=blocks, columns=columns, dram_read_bytes=read,
                          l2_read_sectors=measured.l2_read_sectors, seconds=measured.duration_seconds)


class OpenLinesProbe(Probe[OpenLines]):
    """The open lines at which L2 lets a row walk's lines go, by Nsight Compute (`measure_open_lines`)."""

    name = "open_lines"
    step = "open lines under Nsight"

    def run(self, ctx: RunContext) -> OpenLines:
        result = measure_open_lines(device_index=ctx.info.index, sm_count=ctx.info.sm_count,
                                    l2_cache_bytes=ctx.info.l2_cache_bytes, progress=ctx.progress)
        if result.skipped:
            ctx.progress(f"open lines skipped: {result.skipped}")
        return result

    def figures(self, result: OpenLines) -> Figures:
        n = len(_fitted(result.launches))
        how = (f"Nsight Compute: rows_pair, a thread per row of two float arrays, {THREADS}-thread blocks at "
               f"{BLOCKS_PER_SM[0]}-{BLOCKS_PER_SM[-1]} blocks an SM, DRAM reads beyond the arrays over the L2 read "
               f"sectors beyond theirs x {BURST_BYTES} bytes; the line through the {n} shares between {FIT_LOW} and "
               f"{FIT_HIGH}, where it is {{}}; --cache-control all, --clock-control none")
        return {"l2_open_lines_onset_bytes": (result.l2_open_lines_onset_bytes, how.format(0)),
                "l2_open_lines_full_bytes": (result.l2_open_lines_full_bytes, how.format(1))}

    def render(self, result: OpenLines, heading: str, assets: str) -> list[str]:
        title = f"{heading} Open lines L2 lets go"
        if result.l2_open_lines_full_bytes is None:
            return [title, "", f"Not measured: {result.skipped}", ""]
        rows = [f"| {launch.blocks} | {launch.columns} | {launch.open_line_bytes / 1e6:.1f} | "
                f"{launch.dram_read_bytes / 1e6:.1f} | {launch.l2_read_sectors / 1e6:.2f} | "
                f"{'' if launch.refetched_share is None else f'{launch.refetched_share:.2f}'} | "
                f"{'' if launch.seconds is None else f'{launch.seconds * 1e6:.1f}'} |" for launch in result.launches]
        onset = result.l2_open_lines_onset_bytes or 0.0
        return [title, "",
                f"A row walk's open lines start to be fetched again from {onset / 1e6:.1f} MB and all of them are "
                f"from {result.l2_open_lines_full_bytes / 1e6:.1f} MB "
                f"({onset / result.l2_cache_bytes:.2f} and {result.l2_open_lines_full_bytes / result.l2_cache_bytes:.2f}"
                f" of the {result.l2_cache_bytes / 2**20:.0f} MiB L2).", "",
                "| blocks | columns | open lines, MB | DRAM read, MB | L2 read sectors, M | fetched again | us |",
                "| ---: | ---: | ---: | ---: | ---: | ---: | ---: |", *rows, "", f"`{result.command}`", ""]


def main(*, out: Path | None = None) -> int:
    """Measure on the first GPU, print the section (progress on stderr), write ``out`` (JSON).

    Returns
    -------
    int
        The number of figures not measured.
    """
    return run_alone(OpenLinesProbe(), lambda session, info, progress: measure_open_lines(
        device_index=info.index, sm_count=info.sm_count, l2_cache_bytes=info.l2_cache_bytes, progress=progress), out)


def _launch_plan(device_index: int, sm_count: int, l2_cache_bytes: int) -> None:
    """Make the launches of `launch_plan` (the program ncu profiles)."""
    session = open_session(device_index)
    kernel = compile_kernels(kernel_source("rule_probes.cu"), [KERNEL], arch=session.arch,
                             name="rule_probes.cu")[KERNEL]
    plan = launch_plan(sm_count, l2_cache_bytes)
    array_bytes = max(blocks * THREADS * columns for blocks, columns in plan) * _FLOAT
    a, b = session.allocate(array_bytes), session.allocate(array_bytes)
    y = session.allocate(max(blocks for blocks, _ in plan) * THREADS * _FLOAT)
    for buffer in (a, b):  # written before they are read, as a program's arrays are
        session.fill(buffer, _ONE, array_bytes)
    for blocks, columns in plan[:WARM_UP] + plan:
        session.launcher(kernel, (blocks, 1, 1), (THREADS, 1, 1), (a, b, y, np.int32(columns)))()
    session.synchronize()


if __name__ == "__main__":
    _launch_plan(int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]))
