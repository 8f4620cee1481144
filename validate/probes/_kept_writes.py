"""The L2-writes probe: how many bytes of a kernel's written lines L2 still holds at its end
(they are written back after it, outside its time), measured by Nsight Compute.

`validate/kernels/l2_writes.cu` holds the kernels; each sweeps its floats front to back with
the whole grid, so lines enter L2 in address order:

* **store only**: every line written, none read;
* **update in place**: every line read, then written;
* **copy**: half the footprint read, half written (written lines sharing L2 with read ones).

Each runs once at footprints of 0.5, 1, 2 and 4 times L2 (the device's size) under ``ncu``
with ``--cache-control all`` (L2 written back and emptied before each launch) at real clocks.
A launch keeps its written bytes less the bytes DRAM wrote while it ran
(``dram__bytes_write.sum``). The figure, ``l2_kept_written_bytes``, is the median kept by the
store-only launches whose footprint is at least L2 (L2 overflowed): the most written bytes L2
holds at a kernel's end (rule ``l2_written_cap``). The in-place and copy launches are checks
shown beside it. On an H200 (60 MiB L2) a kernel that writes a footprint of L2 or more keeps
about 29 MB of it: half L2, not all of it.

**A partial sector's fill** (rule ``loaded_sector_fill``): every other float of a span of
``FILL_SPAN_OF_L2`` x L2 written (each 32-byte sector half written) by a store-only kernel and by
one that loads the same floats first, from an emptied L2 (``--cache-control all``). The store's
DRAM reads are the fills (a sector written in part is read whole before L2 writes it back); the
update's reads beyond its loads say whether a sector the kernel loaded is filled again.

**After the flush** (data for the ``flush_writeback`` rule, no figure yet): a read-only sweep of
1/16 to 4 x L2 right after validate's L2 flush (``Session.flush_l2``, a memset of 4 x L2), under
``--cache-control none`` so that the flush's lines are what L2 holds: what DRAM writes while it
runs is the flush's written lines its lines displace.

The child program (``python -m validate.probes._kept_writes MODE DEVICE L2_BYTES``, MODE ``clean``,
``fill`` or ``flush``) makes the launches; about 2 GB moved in all, seconds under ncu. Alone, from the repository's root:
``python scripts/l2_writes_probe.py [--out FILE.json]``.
"""

from __future__ import annotations

import statistics
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

__all__ = ["L2WriteLaunch", "L2Writes", "L2WritesProbe", "PartialFill", "derive_l2_writes", "launch_plan", "main",
           "measure_l2_writes", "partial_fill"]

_FROZEN = ConfigDict(frozen=True, extra="forbid")
#: Kernel -> (share of its footprint it writes, what it does).
KERNELS: dict[str, tuple[float, str]] = {
    "l2_store_only": (1.0, "every line written, none read"),
    "l2_update_in_place": (1.0, "every line read, then written"),
    "l2_copy": (0.5, "half the footprint read, half written"),
}
#: Footprints, in L2 sizes.
FOOTPRINTS_OF_L2 = (0.5, 1.0, 2.0, 4.0)
#: The partial-fill launches: kernel -> what it does; every FILL_STRIDE-th float of a span of
#: FILL_SPAN_OF_L2 x L2 (past L2, so that most written sectors are written back while it runs).
FILL_KERNELS: dict[str, str] = {
    "l2_strided_store": "every other float written, none read",
    "l2_strided_update": "every other float read, then written",
}
FILL_STRIDE = 2
FILL_SPAN_OF_L2 = 2.0
_SECTOR = 32
#: The read-only sweeps after the flush, in L2 sizes.
FLUSH_FOOTPRINTS_OF_L2 = (0.0625, 0.125, 0.25, 0.375, 0.5, 0.75, 1.0, 1.5, 2.0, 4.0)
#: The figure's launches: store-only ones whose footprint is at least this many L2 sizes.
FIGURE_FROM_L2 = 1.0
METRICS = ("gpu__time_duration.sum", "dram__bytes_read.sum", "dram__bytes_write.sum")
#: Threads of a block, and blocks per SM (a grid that fills the GPU and sweeps its floats).
THREADS, BLOCKS_PER_SM = 512, 4
_FLOAT = 4


def launch_plan(l2_cache_bytes: int, mode: str = "clean") -> list[tuple[str, int]]:
    """The launches in the order the child makes them: ``(kernel, footprint bytes)``, each
    footprint a whole number of 128-byte lines (of both buffers, for the copy). ``mode``:
    ``clean`` (the sweeps from an emptied L2), ``fill`` (the strided launches, footprint their
    span) or ``flush`` (the read sweeps after the flush)."""
    if l2_cache_bytes <= 0:
        raise ValueError(f"l2_cache_bytes must be positive, not {l2_cache_bytes}")
    if mode == "flush":
        return [("l2_read_only", int(l2_cache_bytes * x) // 256 * 256) for x in FLUSH_FOOTPRINTS_OF_L2]
    if mode == "fill":
        return [(kernel, int(l2_cache_bytes * FILL_SPAN_OF_L2) // 256 * 256) for kernel in FILL_KERNELS]
    if mode != "clean":
        raise ValueError(f"mode must be 'clean', 'fill' or 'flush', not {mode!r}")
    return [(kernel, int(l2_cache_bytes * x) // 256 * 256) for kernel in KERNELS for x in FOOTPRINTS_OF_L2]


class L2WriteLaunch(BaseModel):
    """One profiled launch: what it wrote and what DRAM wrote while it ran."""

    model_config = _FROZEN

    kernel: str
    footprint_bytes: int = Field(gt=0, description="Bytes the launch touches, read and written.")
    written_bytes: int = Field(ge=0, description="Bytes it writes.")
    dram_written_bytes: float = Field(ge=0, description="dram__bytes_write.sum while it ran.")
    dram_read_bytes: float = Field(ge=0, description="dram__bytes_read.sum while it ran.")
    seconds: float | None = Field(default=None, description="gpu__time_duration.sum.")

    @property
    def kept_bytes(self) -> float:
        """Written bytes DRAM did not write while it ran: L2 held them at its end."""
        return self.written_bytes - self.dram_written_bytes


class FlushSweep(BaseModel):
    """One read-only sweep after validate's flush: what DRAM wrote (the flush's lines) while it ran."""

    model_config = _FROZEN

    read_bytes: int = Field(gt=0, description="Bytes the sweep reads.")
    dram_written_bytes: float = Field(ge=0, description="dram__bytes_write.sum while it ran.")
    dram_read_bytes: float = Field(ge=0, description="dram__bytes_read.sum while it ran.")
    seconds: float | None = Field(default=None, description="gpu__time_duration.sum.")


class PartialFill(BaseModel):
    """The strided launches: DRAM's reads per sector written in part, with and without a load first."""

    model_config = _FROZEN

    sectors: int = Field(gt=0, description="Sectors each launch writes in part.")
    store_read_bytes: float = Field(ge=0, description="dram__bytes_read.sum of the store-only launch (its fills).")
    update_read_bytes: float = Field(ge=0, description="dram__bytes_read.sum of the launch that loads first.")

    @property
    def store_fill_bytes_per_sector(self) -> float:
        """DRAM bytes read per sector written in part and never loaded: its fill."""
        return self.store_read_bytes / self.sectors

    @property
    def update_fill_bytes_per_sector(self) -> float:
        """DRAM bytes read per sector loaded, then written in part, beyond the load's 32."""
        return self.update_read_bytes / self.sectors - _SECTOR


class L2Writes(BaseModel):
    """The profiled launches and the figure (or why it was not measured)."""

    model_config = _FROZEN

    l2_cache_bytes: int = Field(gt=0, description="The device's L2 size, bytes.")
    launches: tuple[L2WriteLaunch, ...] = ()
    after_flush: tuple[FlushSweep, ...] = Field(default=(), description="The read sweeps after validate's flush.")
    flush_skipped: str | None = Field(default=None, description="Why the sweeps after the flush were not profiled.")
    partial_fill: PartialFill | None = Field(default=None, description="The strided launches' reads.")
    fill_skipped: str | None = Field(default=None, description="Why the strided launches were not profiled.")
    l2_kept_written_bytes: float | None = Field(
        default=None, gt=0, description="Median kept bytes of the store-only launches of a footprint of L2 or more.")
    command: str = Field(default="", description="The ncu command run.")
    skipped: str | None = Field(default=None, description="Why it was not measured (no ncu, counters blocked).")


def _figure_launches(launches: tuple[L2WriteLaunch, ...], l2_cache_bytes: int) -> list[L2WriteLaunch]:
    """The figure's launches: the store-only ones whose footprint overflowed L2."""
    return [launch for launch in launches if launch.kernel == "l2_store_only"
            and launch.footprint_bytes >= FIGURE_FROM_L2 * l2_cache_bytes]


def derive_l2_writes(l2_cache_bytes: int, launches: tuple[L2WriteLaunch, ...], command: str = "") -> L2Writes:
    """The figure from the launches (a plain function, tested on the CPU)."""
    kept = [launch.kept_bytes for launch in _figure_launches(launches, l2_cache_bytes)]
    figure = statistics.median(kept) if kept else None
    return L2Writes(l2_cache_bytes=l2_cache_bytes, launches=launches, command=command,
                    l2_kept_written_bytes=figure if figure and figure > 0 else None,
                    skipped=None if kept else "no store-only launch of a footprint of L2 or more was profiled")


def measure_l2_writes(*, device_index: int, l2_cache_bytes: int, ncu: str | None = None,
                      runner: Runner = subprocess.run,
                      progress: Callable[[str], None] = lambda message: None) -> L2Writes:
    """Profile the launches of `launch_plan` under ``ncu`` and derive the figure.

    Parameters
    ----------
    device_index : int
        The GPU.
    l2_cache_bytes : int
        Its L2 size, bytes (`validate.DeviceInfo.l2_cache_bytes`).
    ncu, runner
        As `profile_child` takes them (the ncu on PATH, `subprocess.run`; stand-ins in tests).
    progress : callable
        Receives one summary line.

    Returns
    -------
    L2Writes
        With ``skipped`` set (and no figure) where ncu is absent, cannot read the counters,
        fails, or profiled other launches than the plan's.
    """

    def profiled(mode: str, cache_control: str) -> tuple[list[L2WriteLaunch], str | None, str]:
        # one ncu run of the child in `mode`: its launches (or why none), and the command shown
        profile, shown, skipped = profile_child("validate.probes._kept_writes",
                                                [mode, str(device_index), str(l2_cache_bytes)], metrics=METRICS,
                                                kernel_name="regex:^l2_", cache_control=cache_control, ncu=ncu,
                                                runner=runner)
        return *_launches(profile, launch_plan(l2_cache_bytes, mode), skipped), shown

    launches, skipped, shown = profiled("clean", "all")
    if skipped:
        return L2Writes(l2_cache_bytes=l2_cache_bytes, command=shown, skipped=skipped)
    sweeps, flush_skipped, _ = profiled("flush", "none")
    strided, fill_skipped, _ = profiled("fill", "all")
    result = derive_l2_writes(l2_cache_bytes, tuple(launches), shown).model_copy(update={
        "partial_fill": partial_fill(strided), "fill_skipped": fill_skipped,
        "after_flush": tuple(FlushSweep(read_bytes=sweep.footprint_bytes, dram_written_bytes=sweep.dram_written_bytes,
                                        dram_read_bytes=sweep.dram_read_bytes, seconds=sweep.seconds)
                             for sweep in sweeps),
        "flush_skipped": flush_skipped})
    if result.l2_kept_written_bytes is not None:
        progress(f"L2 writes: a kernel keeps {result.l2_kept_written_bytes / 1e6:.1f} MB of its written lines in L2 "
                 f"({result.l2_kept_written_bytes / l2_cache_bytes:.2f} of L2) at its end")
    return result


def partial_fill(launches: list[L2WriteLaunch]) -> PartialFill | None:
    """The strided launches' reads per sector written in part (None without both launches)."""
    reads = {launch.kernel: launch for launch in launches if launch.kernel in FILL_KERNELS}
    if set(reads) != set(FILL_KERNELS):
        return None
    span = reads["l2_strided_store"].footprint_bytes
    return PartialFill(sectors=span // _SECTOR, store_read_bytes=reads["l2_strided_store"].dram_read_bytes,
                       update_read_bytes=reads["l2_strided_update"].dram_read_bytes)


def _written_share(kernel: str) -> float:
    """The share of a launch's footprint it writes."""
    if kernel in KERNELS:
        return KERNELS[kernel][0]
    return 1.0 / FILL_STRIDE if kernel in FILL_KERNELS else 0.0


def _launches(profile: roofline.NcuProfile | None, plan: list[tuple[str, int]],
              skipped: str | None) -> tuple[list[L2WriteLaunch], str | None]:
    """The profiled launches of ``plan``, or why there are none."""
    if profile is None:
        return [], skipped
    names = [k.name for k in profile.kernels]
    if names != [kernel for kernel, _ in plan]:
        return [], (f"ncu profiled {len(names)} launches ({', '.join(sorted(set(names)))}), "
                    f"the probe made {len(plan)}")
    if any(k.measured.dram_written_bytes is None or k.dram_bytes is None for k in profile.kernels):
        return [], "ncu's profile lacks dram__bytes_write.sum or dram__bytes_read.sum"
    return [L2WriteLaunch(kernel=kernel, footprint_bytes=footprint,
                          written_bytes=int(footprint * _written_share(kernel)),
                          dram_written_bytes=k.measured.dram_written_bytes,
                          dram_read_bytes=max(0.0, k.dram_bytes - k.measured.dram_written_bytes),
                          seconds=k.measured.duration_seconds)
            for (kernel, footprint), k in zip(plan, profile.kernels, strict=True)], None


class L2WritesProbe(Probe[L2Writes]):
    """The written bytes L2 keeps at a kernel's end, by Nsight Compute (`measure_l2_writes`)."""

    name = "l2_writes"
    step = "L2 writes under Nsight"

    def run(self, ctx: RunContext) -> L2Writes:
        result = measure_l2_writes(device_index=ctx.info.index, l2_cache_bytes=ctx.info.l2_cache_bytes,
                                   progress=ctx.progress)
        if result.skipped:
            ctx.progress(f"L2 writes skipped: {result.skipped}")
        return result

    def figures(self, result: L2Writes) -> Figures:
        runs = len(_figure_launches(result.launches, result.l2_cache_bytes))
        return {"l2_kept_written_bytes": (
            result.l2_kept_written_bytes,
            f"Nsight Compute: written bytes less dram__bytes_write.sum of a store-only sweep, median of {runs} "
            f"footprints of 1 to 4 x L2 ({result.l2_cache_bytes} bytes), --cache-control all, --clock-control none")}

    def render(self, result: L2Writes, heading: str, assets: str) -> list[str]:
        title = f"{heading} Written lines L2 keeps at a kernel's end"
        if result.l2_kept_written_bytes is None:
            return [title, "", f"Not measured: {result.skipped}", ""]
        rows = [f"| {launch.kernel} | {launch.footprint_bytes / result.l2_cache_bytes:.2f} | "
                f"{launch.written_bytes / 1e6:.1f} | {launch.dram_written_bytes / 1e6:.1f} | "
                f"{launch.kept_bytes / 1e6:.1f} |" for launch in result.launches]
        return [title, "",
                f"A kernel keeps {result.l2_kept_written_bytes / 1e6:.1f} MB of its written lines in L2 at its end "
                f"({result.l2_kept_written_bytes / result.l2_cache_bytes:.2f} of the "
                f"{result.l2_cache_bytes / 2**20:.0f} MiB L2): the median of the store-only launches of a footprint "
                "of L2 or more.", "",
                "| kernel | footprint, L2s | written, MB | DRAM wrote, MB | kept, MB |",
                "| --- | ---: | ---: | ---: | ---: |", *rows, "", f"`{result.command}`", "", *_render_fill(result),
                *_render_flush(result)]


def _render_fill(result: L2Writes) -> list[str]:
    """The strided launches: a fill per sector written in part, and none where the kernel loaded it."""
    fill = result.partial_fill
    if fill is None:
        return [f"The strided launches were not profiled: {result.fill_skipped}", ""]
    return [f"One float in {FILL_STRIDE} of {FILL_SPAN_OF_L2:g} x L2 written ({fill.sectors} sectors written in "
            "part, `--cache-control all`): DRAM reads per sector.", "",
            "| kernel | DRAM read, MB | read per sector, bytes | fill per sector, bytes |",
            "| --- | ---: | ---: | ---: |",
            f"| l2_strided_store (no load) | {fill.store_read_bytes / 1e6:.1f} | "
            f"{fill.store_fill_bytes_per_sector:.1f} | {fill.store_fill_bytes_per_sector:.1f} |",
            f"| l2_strided_update (loads first) | {fill.update_read_bytes / 1e6:.1f} | "
            f"{fill.update_read_bytes / fill.sectors:.1f} | {fill.update_fill_bytes_per_sector:.1f} |", ""]


def _render_flush(result: L2Writes) -> list[str]:
    """The read sweeps after the flush: the flush's written lines each one displaced."""
    if not result.after_flush:
        return [f"The read sweeps after validate's flush were not profiled: {result.flush_skipped}", ""]
    rows = [f"| {sweep.read_bytes / result.l2_cache_bytes:.3f} | {sweep.read_bytes / 1e6:.1f} | "
            f"{sweep.dram_read_bytes / 1e6:.1f} | {sweep.dram_written_bytes / 1e6:.1f} |"
            for sweep in result.after_flush]
    return ["Read-only sweeps right after validate's L2 flush (`--cache-control none`): DRAM's writes while "
            "each runs are the flush's written lines its lines displace.", "",
            "| read, L2s | read, MB | DRAM read, MB | DRAM wrote, MB |", "| ---: | ---: | ---: | ---: |", *rows, ""]


def main(*, out: Path | None = None) -> int:
    """Measure on the first GPU, print the section (progress on stderr), write ``out`` (JSON).

    Returns
    -------
    int
        1 where the figure was not measured, else 0.
    """
    return run_alone(L2WritesProbe(), lambda session, info, progress: measure_l2_writes(
        device_index=info.index, l2_cache_bytes=info.l2_cache_bytes, progress=progress), out)


def _launch_plan(mode: str, device_index: int, l2_cache_bytes: int) -> None:
    """Make the launches of `launch_plan` (the program ncu profiles); in ``flush`` mode each
    sweep follows validate's L2 flush."""
    session = open_session(device_index)
    core = session.cuda.core
    kernels = compile_kernels(kernel_source("l2_writes.cu"), [*KERNELS, *FILL_KERNELS, "l2_read_only"],
                              arch=session.arch, name="l2_writes.cu")
    plan = launch_plan(l2_cache_bytes, mode)
    largest = max(footprint for _, footprint in plan)
    first, second = session.allocate(largest), session.allocate(max(largest // 2, 4))
    session.poison(first, largest)  # NaNs: the read sweep's sum never matches, so it stores nothing
    sms = session.device.properties.multiprocessor_count
    config = core.LaunchConfig(grid=(sms * BLOCKS_PER_SM, 1, 1), block=(THREADS, 1, 1))
    for kernel, footprint in plan:
        if kernel == "l2_read_only":
            session.flush_l2()
            core.launch(session.stream, config, kernels[kernel], first, second, np.int64(footprint // _FLOAT))
        elif kernel in FILL_KERNELS:
            core.launch(session.stream, config, kernels[kernel], first, np.int64(footprint // FILL_STRIDE // _FLOAT),
                        np.int32(FILL_STRIDE))
        elif kernel == "l2_copy":
            core.launch(session.stream, config, kernels[kernel], first, second, np.int64(footprint // 2 // _FLOAT))
        else:
            core.launch(session.stream, config, kernels[kernel], first, np.int64(footprint // _FLOAT))
    session.synchronize()


if __name__ == "__main__":
    _launch_plan(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
