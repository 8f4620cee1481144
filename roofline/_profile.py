"""What gpuroof adds to an Nsight Compute profile: exact occupancy, cliffs, best block size,
the hierarchical roofline with the measured point at each level, and the predicted time.

Nothing here needs a GPU: the profile (`load_ncu`) holds the launch (grid, block,
registers, shared memory, the driver's shared-memory configuration) and the measured
counts; the occupancy calculator and `predict` do the rest.
"""

from __future__ import annotations

import math
import os
import re

from pydantic import BaseModel, ConfigDict, Field

import occupancy
from occupancy import Cliffs

from ._adapters import counted_kernel, counts_from, measured_launch
from ._chart import BandwidthPoint, ChartPoint, RooflineChart, roofline_chart
from ._errors import RooflineError
from ._facts import calibration as packaged_calibration
from ._facts import gpu as lookup_gpu
from ._gpu import GPU, MEMORY_LEVELS
from ._kernel import Kernel
from ._ncu import NcuKernel, NcuProfile, load_ncu
from ._precision import PRECISION_LABELS
from ._predict.rules import on
from ._profile_missing import MissingCount, missing_counts, missing_lines
from ._calibration import Calibration
from ._roofline import analyze
from ._predict.params import parameters
from ._time_model import check_calibration, predict
from ._warps import sass_loads_per_thread

__all__ = [
    "ProfileKernel", "ProfileReport", "format_profile_report", "nsight_calibration", "profile_chart", "profile_report",
]

_FROZEN = ConfigDict(frozen=True, extra="forbid")
_LIMIT_ORDER = ("warps", "registers", "shared_memory", "blocks", "barriers")


class ProfileKernel(BaseModel):
    """One profiled kernel with what gpuroof adds to it (SI units, fractions).

    ``block_limits`` are gpuroof's blocks per SM allowed by each resource, at the
    shared-memory configuration the driver chose for the launch (None: the resource does
    not limit); ``nsight_block_limits`` are Nsight's, which cap every limit at the blocks
    an SM holds. ``limit_notes`` names any limit that differs beyond that cap. ``cliffs`` is `occupancy.cliffs` of the launch.
    ``points`` are the measured roofline points (one per memory level) of the kernel's
    busiest precision; ``gap`` is measured over predicted time.
    """

    model_config = _FROZEN

    kernel: NcuKernel
    label: str = Field(description="Short name [NVTX range], #n added where two kernels would read alike.")
    time_share: float | None = None
    occupancy: float | None = None
    occupancy_agrees: bool | None = None
    active_blocks_per_sm: int | None = None
    limiters: tuple[str, ...] = ()
    block_limits: dict[str, int | None] = Field(default_factory=dict)
    block_limits_largest_config: dict[str, int | None] = Field(
        default_factory=dict, description="gpuroof's limits with no carveout preference (the largest configuration).")
    nsight_block_limits: dict[str, int] = Field(default_factory=dict)
    limit_notes: tuple[str, ...] = ()
    cliffs: Cliffs | None = None
    best_block_size: int | None = None
    best_block_occupancy: float | None = None
    precision: str | None = None
    flops: float | None = None
    achieved_flops_per_second: float | None = None
    achieved_bytes_per_second: dict[str, float] = Field(default_factory=dict)
    points: tuple[ChartPoint, ...] = ()
    bound: str | None = None
    roofline_seconds: float | None = None
    predicted_seconds: float | None = None
    predicted_limiter: str | None = None
    gap: float | None = None
    missing_counts: tuple[MissingCount, ...] = Field(
        default=(), description="The counts the profile lacked, each with the fallback the prediction used.")
    notes: tuple[str, ...] = ()


class ProfileReport(BaseModel):
    """Every kernel of a profile, sorted by time share, and the occupancy agreement count."""

    model_config = _FROZEN

    path: str
    gpu: str
    kernels: tuple[ProfileKernel, ...]
    total_seconds: float | None
    occupancy_compared: int = Field(description="Kernels with both occupancies known.")
    occupancy_agreeing: int = Field(description="Of those, kernels where gpuroof's equals Nsight's theoretical.")
    checks: tuple[str, ...] = Field(
        default=(), description="load_ncu's cross-checks of the profile, and the launch definition predict used.")


# ---------------------------------------------------------------------------------------
# occupancy of a profiled launch


def _occupancy_launch(k: NcuKernel) -> occupancy.Launch:
    return measured_launch(k.grid, k.block, registers_per_thread=k.registers_per_thread or 0,
                           static_shared_memory=k.static_shared_memory, dynamic_shared_memory=k.dynamic_shared_memory,
                           block_barriers=k.block_barriers if k.block_barriers is not None else 1)


def _limit_notes(ours: occupancy.OccupancyResult, nsight: dict[str, int], max_blocks: int, carveout: int | None,
                 config: int | None) -> list[str]:
    """Why a per-resource block limit differs from Nsight's, resource by resource.

    Two differences are expected and explained once in the table's footnotes rather than
    here: Nsight caps every limit at the blocks an SM holds (gpuroof says "does not
    limit" or gives the uncapped value), and the driver's shared-memory configuration
    (gpuroof's limits are taken at it, see `occupancy.OccupancyResult.carveout_for`).
    """
    notes = []
    if config is not None and carveout is None:
        notes.append(f"shared memory: no carveout reproduces the driver's {config // 1024} KiB configuration; "
                     "gpuroof's limits are at the largest configuration")
    for resource, theirs in nsight.items():
        mine = ours.block_limits.get(resource)
        capped = max_blocks if mine is None else min(max_blocks, mine)
        if capped != theirs:
            notes.append(f"{resource}: Nsight's limit is {theirs} blocks per SM, gpuroof's {mine}")
    return notes


def _occupancy_fields(k: NcuKernel) -> tuple[dict[str, object], list[str]]:
    missing = [f for f in ("registers_per_thread", "static_shared_memory", "dynamic_shared_memory")
               if getattr(k, f) is None]
    if k.arch is None or missing:
        return {}, [f"occupancy not computed: the profile has no {', '.join(missing) or 'architecture'} "
                    "(collect --section LaunchStats)"]
    launch = _occupancy_launch(k)
    try:
        default = occupancy.calculate(k.arch, launch)
    except ValueError as exc:
        return {}, [f"occupancy not computed: {exc}"]
    # the carveout for which the calculator picks the driver's configuration (Nsight's launch__shared_mem_config_size)
    carveout = None if k.shared_memory_config is None else default.carveout_for(k.shared_memory_config)
    if carveout is not None:
        launch = launch.model_copy(update={"carveout": carveout})
    ours = occupancy.calculate(k.arch, launch)
    arch = occupancy.architecture(k.arch)
    fields: dict[str, object] = {
        "occupancy": ours.occupancy,
        "active_blocks_per_sm": ours.active_blocks_per_sm,
        "limiters": tuple(ours.limiters),
        "block_limits": {r: ours.block_limits.get(r) for r in _LIMIT_ORDER},
        "nsight_block_limits": dict(k.measured.block_limits),
        "block_limits_largest_config": {r: default.block_limits.get(r) for r in _LIMIT_ORDER},
        "limit_notes": tuple(_limit_notes(ours, k.measured.block_limits, arch.max_blocks_per_sm, carveout,
                                          k.shared_memory_config)),
    }
    if k.measured.theoretical_occupancy is not None:
        fields["occupancy_agrees"] = math.isclose(ours.occupancy, k.measured.theoretical_occupancy, abs_tol=1e-4)
    fields["cliffs"] = occupancy.cliffs(k.arch, launch)
    try:
        best = occupancy.max_potential_block_size(k.arch, launch.model_copy(update={"carveout": None}))
        fields.update(best_block_size=best.block_size, best_block_occupancy=best.occupancy)
    except ValueError:
        pass
    return fields, []


# ---------------------------------------------------------------------------------------
# roofline and prediction of a profiled launch


def _unique_labels(kernels: tuple[NcuKernel, ...]) -> list[str]:
    labels = [k.label for k in kernels]
    counts: dict[str, int] = {}
    out = []
    for label in labels:
        counts[label] = counts.get(label, 0) + 1
        out.append(label if labels.count(label) == 1 else f"{label} #{counts[label]}")
    return out


def _roofline_fields(device: GPU, k: NcuKernel, label: str, calibration: Calibration | None,
                     after_l2_flush: bool = False, *,
                     why_in_checks: bool = False) -> tuple[dict[str, object], list[str]]:
    notes: list[str] = []
    fields: dict[str, object] = {}
    seconds = k.measured.duration_seconds
    if seconds is None:
        return fields, ["no duration: collect --section SpeedOfLight"]
    bytes_at = {"dram": k.dram_bytes, "l2": k.l2_bytes, "l1": k.l1_bytes}
    fields["achieved_bytes_per_second"] = {lvl: n / seconds for lvl, n in bytes_at.items() if n is not None}
    precision = k.precision
    if precision is not None and precision not in device.supported_precisions():
        notes.append(f"{precision} has no peak on {device.name}; its flops are left out")
        precision = None
    flops = k.flops.get(precision, 0.0) if precision else 0.0
    fields.update(precision=precision, flops=flops if k.flops else None)
    if not k.flops:
        notes.append("no flops: collect the SpeedOfLight_Hierarchical*RooflineChart sections")
    if flops:
        fields["achieved_flops_per_second"] = flops / seconds
        fields["points"] = tuple(
            ChartPoint(kernel=label, level=lvl, arithmetic_intensity=flops / n, flops_per_second=flops / seconds,
                       origin="measured")
            for lvl, n in bytes_at.items() if n)
    if k.dram_bytes is None:
        notes.append("no DRAM bytes: no roofline bound or prediction")
        return fields, notes
    counts = counts_from(k).model_copy(update={"precision": precision, "flops": flops})
    if counts.flops or any(counts.bytes_at(lvl) for lvl in MEMORY_LEVELS):
        verdict = analyze(device, counts, precision or "fp32")
        fields.update(bound=verdict.bound_level or verdict.bound, roofline_seconds=verdict.time_lower_bound_seconds)
    if k.registers_per_thread is None:
        notes.append("no prediction: the profile has no registers per thread (collect --section LaunchStats)")
        return fields, notes
    try:
        launch, sass_note = _profiled_launch(k, why_in_checks=why_in_checks)
        clocked, clock_note = _at_profile_clock(device, k)
        p = predict(clocked, counted_kernel(counts, launch), calibration=calibration, after_l2_flush=after_l2_flush,
                    measured=k.measured)
    except (RooflineError, ValueError) as exc:
        notes.append(f"no prediction: {exc}")
        return fields, notes
    # where the hot loop's trips came from, when not from the instructions alone (a row's reader
    # checks the count a prediction rests on)
    notes += [sass_note, *clock_note, *(n for t in p.terms if t.name == "trips" for n in t.notes)]
    fields.update(predicted_seconds=p.seconds, predicted_limiter=p.limiter, gap=seconds / p.seconds)
    if k.cluster:
        notes.append(f"launched in clusters of {k.cluster}: the prediction does not model clusters")
    return fields, notes


def _loads_per_thread(k: NcuKernel) -> float | None:
    """Global loads each thread issued: Nsight's warp-level count over the grid's warps' lanes."""
    loads = k.measured.global_load_instructions
    if loads is None:
        return None
    return loads * 32 / (k.blocks * k.threads_per_block)


def _launch_with_sass(k: NcuKernel, elements_per_thread: int, sass_source: str) -> occupancy.Launch:
    """The launch `k` ran, its SASS (where it has one) in the launch's resources."""
    sass = k.sass
    resources = None
    if sass is not None:
        resources = occupancy.KernelResources(
            kernel=k.name, architecture=sass.architecture, registers_per_thread=k.registers_per_thread or 0,
            static_shared_memory=k.static_shared_memory or 0, sass=sass, sources={"sass": sass_source})
    return measured_launch(k.grid, k.block, registers_per_thread=k.registers_per_thread,
                           static_shared_memory=k.static_shared_memory or 0,
                           dynamic_shared_memory=k.dynamic_shared_memory or 0, resources=resources,
                           elements_per_thread=elements_per_thread)


def _profiled_launch(k: NcuKernel, *, why_in_checks: bool = False) -> tuple[occupancy.Launch, str]:
    """The launch to predict, with the kernel's SASS where the profile or a binary gave it.

    The SASS reaches `predict` as on the source path: in the launch's
    `occupancy.KernelResources`, whose summary sets the loads a thread keeps in flight and
    the instruction mix. The loads each thread makes are Nsight's count where collected
    (``smsp__inst_executed_op_global_ld.sum``), else the SASS's own for straight-line code;
    their round trips are those loads over the loads in flight. Returns the launch and the
    one line that says where these came from, or what was assumed without them: why there is
    no SASS, unless `why_in_checks` (one reason for every kernel, which the profile's checks
    say once).
    """
    sass = k.sass
    loads = _loads_per_thread(k)
    elements, how = None, ""
    if loads is not None and loads >= 1:
        elements, how = int(round(loads)), "Nsight's count"
    elif (straight := sass_loads_per_thread(sass)) is not None:
        elements, how = straight, "the SASS, straight-line code"
    launch = _launch_with_sass(k, elements or 1, k.sass_source or "the profile")
    if sass is None:
        assumed = (f"all {elements} global loads per thread ({how}) assumed in flight at once: one round trip"
                   if elements and elements > 1 else "one global load round trip per thread assumed")
        if why_in_checks or not k.sass_source:
            return launch, f"no SASS (the profile's checks say why): {assumed}"
        return launch, f"{k.sass_source}: {assumed}"
    in_flight = launch.loads_in_flight_per_thread or launch.elements_per_thread
    rounds = -(-launch.elements_per_thread // min(in_flight, launch.elements_per_thread))
    count = (f"{elements} global loads per thread ({how})" if elements
             else "global loads per thread not counted (1 assumed)")
    trips = f"{rounds} round trip" + ("s" if rounds != 1 else "")
    return launch, (f"SASS from {k.sass_source}: {sass.global_loads_in_flight_per_thread} "
                    f"{sass.global_load_instruction or 'global loads'} in flight per thread, {count}: {trips}")


def _at_profile_clock(device: GPU, k: NcuKernel) -> tuple[GPU, list[str]]:
    """The GPU at the SM clock the profile ran at (the issue and compute rates follow it)."""
    clock = k.measured.sm_clock_hz
    if clock is None or not on("profile_clock") or abs(clock / device.boost_clock_hz - 1) < 0.01:
        return device, []
    ratio = clock / device.boost_clock_hz
    update: dict[str, object] = {"boost_clock_hz": clock}
    if device.tensor_clock_hz:
        update["tensor_clock_hz"] = device.tensor_clock_hz * ratio
    return device.model_copy(update=update), [
        f"predicted at the profile's SM clock, {clock / 1e6:.0f} MHz (the datasheet's boost: "
        f"{device.boost_clock_hz / 1e6:.0f} MHz)"]


def nsight_calibration(gpu: GPU | str, calibration: Calibration | None = None) -> tuple[Calibration, str]:
    """The calibration with the launch cost as Nsight Compute measures a kernel.

    Nsight's ``gpu__time_duration`` of an empty one-block kernel
    (``nsight_empty_kernel_seconds``, measured by ``gpuroof validate`` where ``ncu`` runs)
    already holds a block's memory round trip, which the memory term counts for every
    kernel: the launch term is the empty kernel's duration less what the model gives the
    smallest kernel without its launch (one warp, one 128-byte line), so that `predict`
    of that kernel is Nsight's figure and the round trip is counted once. Without the
    figure the calibration is returned unchanged (CUDA events' launch cost) and the line
    returned says so.

    Returns
    -------
    tuple of Calibration and str
        The calibration and one line naming the launch definition used.
    """
    device = lookup_gpu(gpu)
    cal = calibration if calibration is not None else packaged_calibration(device)
    check_calibration(cal, device)
    empty = parameters(cal, device).launch.nsight_empty_kernel_seconds  # the launch floor, per GPU
    if empty is None:
        return cal, (f"launch cost {cal.launch_overhead_seconds * 1e6:.2f} us as CUDA events see it: the calibration "
                     "has no Nsight empty-kernel duration (gpuroof validate measures it where ncu runs)")
    smallest = Kernel(name="smallest", flops=0, dram_bytes=128,
                      launch=measured_launch(1, 32, registers_per_thread=16))
    p = predict(device, smallest, calibration=cal)
    launch = max(0.0, empty - (p.seconds - p.launch_seconds))
    sources = {**cal.sources, "launch_overhead_seconds": (
        f"Nsight's empty-kernel duration {empty * 1e6:.2f} us less the model's smallest kernel "
        f"{(p.seconds - p.launch_seconds) * 1e6:.2f} us (its memory round trip)")}
    return cal.model_copy(update={"launch_overhead_seconds": launch, "sources": sources}), (
        f"launch cost {launch * 1e6:.2f} us: Nsight's empty-kernel duration {empty * 1e6:.2f} us less the "
        "memory round trip the model counts in every kernel")


def _device_of(profile: NcuProfile, gpu: GPU | str | None) -> GPU:
    if gpu is not None:
        return lookup_gpu(gpu)
    names = {k.device_name for k in profile.kernels if k.device_name}
    for name in names:
        for candidate in (name, re.sub(r"^NVIDIA\s+", "", name)):
            try:
                return lookup_gpu(candidate)
            except RooflineError:
                continue
    raise RooflineError(f"{profile.path}: the profiled GPU ({', '.join(sorted(names)) or 'not recorded'}) is not in "
                        "gpuroof's database; pass gpu= (a name or a custom GPU file)")


def profile_report(
    profile: NcuProfile | str | os.PathLike[str],
    *,
    gpu: GPU | str | None = None,
    kernel: str | None = None,
    calibration: Calibration | None = None,
    binary: str | os.PathLike[str] | None = None,
    after_l2_flush: bool = False,
) -> ProfileReport:
    """Add gpuroof's analysis to every kernel of an Nsight Compute profile.

    For each kernel: occupancy from its launch (`occupancy.calculate` at the driver's
    shared-memory configuration) and whether it equals Nsight's theoretical occupancy, the
    limiter, the cliffs and the best block size; the measured hierarchical roofline point
    at each memory level; the roofline bound and `predict`'s time for the same launch, and
    the gap to the measured duration. Kernels are sorted by time share.

    Parameters
    ----------
    profile : NcuProfile or path
        A profile from `load_ncu`, or a file for it.
    gpu : GPU or str, optional
        Database entry for the ceilings and the prediction; default: the profiled device.
    kernel : str, optional
        Regular expression: only kernels whose name or NVTX range matches.
    calibration : Calibration, optional
        Parameters of `predict`; default the packaged one of the GPU. Profiled launches
        are predicted with the launch cost as Nsight measures a kernel where the
        calibration has Nsight's empty-kernel duration (`nsight_calibration`), and at the
        profile's SM clock.
    binary : str or path, optional
        The profiled program (or its kernels' source), for each kernel's SASS when
        `profile` is a file (`load_ncu`'s ``binary``).
    after_l2_flush : bool
        Predict each launch as timed right after validate's L2 flush (`roofline.predict`'s
        ``after_l2_flush``): for durations measured that way (the corpus), not for Nsight's
        own, which it takes after flushing its caches.

    Returns
    -------
    ProfileReport

    Raises
    ------
    RooflineError
        An unreadable profile, a GPU outside the database, a pattern matching nothing.

    Examples
    --------
    >>> import roofline
    >>> report = roofline.profile_report("tests/data/ncu/torch_roofline.raw.csv")
    >>> report.gpu, report.occupancy_agreeing, report.occupancy_compared
    ('H200', 12, 12)
    """
    if not isinstance(after_l2_flush, bool):
        raise TypeError(f"after_l2_flush must be a bool, not {type(after_l2_flush).__name__}")
    if not isinstance(profile, NcuProfile):
        profile = load_ncu(profile, binary=binary)
    elif binary is not None:
        raise RooflineError("binary= reads the SASS while a profile file is loaded: pass the file, or "
                            "load_ncu(path, binary=...) yourself")
    if kernel is not None:
        profile = profile.matching(kernel)
    device = _device_of(profile, gpu)
    calibration, launch_note = nsight_calibration(device, calibration)
    durations = [k.measured.duration_seconds for k in profile.kernels if k.measured.duration_seconds is not None]
    total = sum(durations) if durations else None
    rows = []
    # One reason for every kernel's missing SASS (no report, no ncu) is said once, in the checks;
    # a binary that lacks some kernels says in each one's note what it holds instead.
    why_in_checks = all(k.sass is None for k in profile.kernels) and len({k.sass_source for k in profile.kernels}) == 1
    for k, label in zip(profile.kernels, _unique_labels(profile.kernels)):
        occ, notes = _occupancy_fields(k)
        roof, more = _roofline_fields(device, k, label, calibration, after_l2_flush, why_in_checks=why_in_checks)
        seconds = k.measured.duration_seconds
        share = seconds / total if total and seconds is not None else None
        missing = sorted({section for section in k.missing.values()})
        if missing:
            more.append(f"sections missing from the profile: {', '.join(missing)}")
        rows.append(ProfileKernel(kernel=k, label=label, time_share=share, notes=tuple(notes + more),
                                  missing_counts=missing_counts(k), **occ, **roof))
    rows.sort(key=lambda r: -(r.time_share or 0.0))
    compared = [r for r in rows if r.occupancy_agrees is not None]
    return ProfileReport(path=profile.path, gpu=device.name, kernels=tuple(rows), total_seconds=total,
                         checks=profile.checks + (launch_note,),
                         occupancy_compared=len(compared),
                         occupancy_agreeing=sum(1 for r in compared if r.occupancy_agrees))


# ---------------------------------------------------------------------------------------
# output


def _cliff_text(row: ProfileKernel) -> str:
    c = row.cliffs
    if c is None:
        return "-"
    r = c.registers
    up = "+inf" if r.headroom is None else f"+{r.headroom}"
    down = "" if r.gain is None else f"/-{r.gain}"
    return f"{up}{down}"


def _fmt(value: float | None, scale: float, spec: str) -> str:
    return "-" if value is None else format(value / scale, spec)


def _smem(k: NcuKernel) -> str:
    """Shared memory per block / the SM's configuration chosen by the driver, KiB."""
    block = (k.static_shared_memory or 0) + (k.dynamic_shared_memory or 0)
    config = "-" if k.shared_memory_config is None else f"{k.shared_memory_config / 1024:.0f}"
    size = f"{block}B" if block < 1024 else f"{block / 1024:.3g}"
    return f"{size}/{config}"


def _footnotes(report: ProfileReport) -> list[str]:
    rows = report.kernels
    out = ["occ: gpuroof's occupancy from the launch; '=' when it equals Nsight's theoretical occupancy. "
           "smem KiB: shared memory per block / per SM in the configuration the driver chose. reg cliff: "
           "registers a thread may add before a block per SM is lost / must shed to gain one."]
    smaller = [r for r in rows if r.kernel.shared_memory_config is not None and r.block_limits_largest_config
               and r.block_limits_largest_config.get("shared_memory") != r.block_limits.get("shared_memory")]
    if smaller:
        out.append(f"shared memory: for {len(smaller)} of {len(rows)} kernels the driver chose a smaller shared-memory "
                   "configuration than the SM's largest (the smallest that keeps the occupancy); the per-resource "
                   "limits here are at the driver's configuration, where they equal Nsight's. At the largest the "
                   "shared-memory limit is higher, e.g. "
                   + ", ".join(f"{r.label.split(' [')[0]} {r.block_limits['shared_memory']} -> "
                               f"{r.block_limits_largest_config['shared_memory']}" for r in smaller[:3])
                   + " blocks per SM; the occupancy is the same.")
    capped = sum(1 for r in rows for res, theirs in r.nsight_block_limits.items()
                 if r.block_limits.get(res) != theirs)
    if capped:
        out.append("Nsight caps every per-resource limit at the 32 blocks an SM holds; gpuroof reports the "
                   f"uncapped limit or 'does not limit' ({capped} such limits here, the same after the cap).")
    return out


def _bound_cell(row: ProfileKernel) -> str:
    """The table's roofline bound: with no flops in the profile the bound can only be a memory
    level, which says nothing of a kernel that computes, so the cell says the flops are missing."""
    if row.bound is None:
        return "-"
    return row.bound if row.flops is not None else f"{row.bound}, no flops"


def format_profile_report(report: ProfileReport, *, markdown: bool = False) -> str:
    """The report as a table a person reads at a glance, one line per kernel by time share.

    Columns: share of the profile's time, measured time, launch, registers, occupancy
    (gpuroof's; ``=`` when it equals Nsight's theoretical occupancy, else Nsight's value),
    limiter, register cliffs (registers a thread may add before a block per SM is lost /
    must drop to gain one), best block size, the busiest precision and its TFLOP/s, DRAM
    GB/s, the roofline bound, the predicted time and measured/predicted. Notes follow.
    """
    if not isinstance(report, ProfileReport):
        raise TypeError(f"report must be a ProfileReport (from profile_report), not {type(report).__name__}")
    if not isinstance(markdown, bool):
        raise TypeError(f"markdown must be a bool, not {type(markdown).__name__}")
    header = ["#", "kernel", "share", "time us", "grid x block", "regs", "smem KiB", "occ", "limiter", "reg cliff",
              "best blk", "precision", "TFLOP/s", "DRAM GB/s", "bound", "pred us", "meas/pred"]
    lines = []
    for i, row in enumerate(report.kernels, start=1):
        k = row.kernel
        occ = "-" if row.occupancy is None else f"{row.occupancy:.0%}"
        if row.occupancy_agrees is True:
            occ += " ="
        elif row.occupancy_agrees is False:
            occ += f" (Nsight {k.measured.theoretical_occupancy:.0%})"
        launch = f"{k.blocks}x{k.threads_per_block}" + (f" c{math.prod(k.cluster)}" if k.cluster else "")
        lines.append([
            str(i), row.label[:52], _fmt(row.time_share, 0.01, ".1f") + ("%" if row.time_share is not None else ""),
            _fmt(k.measured.duration_seconds, 1e-6, ".1f"), launch, "-" if k.registers_per_thread is None else
            str(k.registers_per_thread), _smem(k), occ, "+".join(row.limiters) or "-", _cliff_text(row),
            "-" if row.best_block_size is None else str(row.best_block_size),
            PRECISION_LABELS.get(row.precision, "-") if row.precision else "-",
            _fmt(row.achieved_flops_per_second, 1e12, ".3g"),
            _fmt(row.achieved_bytes_per_second.get("dram"), 1e9, ".0f"),
            _bound_cell(row), _fmt(row.predicted_seconds, 1e-6, ".1f"), _fmt(row.gap, 1, ".2f"),
        ])
    summary = (f"{report.path} on {report.gpu}: {len(report.kernels)} kernels, "
               f"{_fmt(report.total_seconds, 1e-6, '.1f')} us; occupancy equal to Nsight's theoretical for "
               f"{report.occupancy_agreeing} of {report.occupancy_compared}")
    notes = [f"{i}. {row.label}: {note}" for i, row in enumerate(report.kernels, start=1)
             for note in (*row.limit_notes, *row.notes)]
    notes += missing_lines([row.missing_counts for row in report.kernels])
    notes += _footnotes(report)
    notes += [f"profile: {check}" for check in report.checks]
    if markdown:
        out = [summary, "", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        out += ["| " + " | ".join(c.replace("|", "\\|") for c in line) + " |" for line in lines]
        if notes:
            out += ["", "Notes:", ""] + [f"- {n}" for n in notes]
        return "\n".join(out) + "\n"
    table = [header] + lines
    widths = [max(len(r[i]) for r in table) for i in range(len(header))]
    text = ["  ".join(c.ljust(w) if j in (1, 4, 8, 11, 14) else c.rjust(w) for j, (c, w) in
                      enumerate(zip(r, widths))).rstrip() for r in table]
    text.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join([summary, "", *text, *([""] + notes if notes else [])])


def profile_chart(report: ProfileReport, *, title: str = "") -> RooflineChart:
    """The roofline chart of a report: ceilings of the precisions in play, each kernel's
    measured point at every level (hollow), its time model's point (origin "model",
    half-filled) at the same intensities, and every kernel's achieved and modelled bandwidth
    for the bandwidth panel."""
    if not isinstance(report, ProfileReport):
        raise TypeError(f"report must be a ProfileReport (from profile_report), not {type(report).__name__}")
    if not isinstance(title, str):
        raise TypeError(f"title must be a str, not {type(title).__name__}")
    rows = list(report.kernels)
    precisions = [r.precision for r in rows if r.precision and r.flops]
    shares: dict[str, float] = {}
    for r in rows:
        if r.precision and r.flops:
            shares[r.precision] = shares.get(r.precision, 0.0) + (r.time_share or 0.0)
    primary = max(shares, key=lambda p: shares[p]) if shares else "fp32"
    points: list[ChartPoint] = []
    bandwidth: list[BandwidthPoint] = []
    for r in rows:
        label = r.label
        points += list(r.points)
        if r.predicted_seconds and r.flops:
            points += [p.model_copy(update={"origin": "model", "flops_per_second": r.flops / r.predicted_seconds})
                       for p in r.points]
        for level, rate in r.achieved_bytes_per_second.items():
            bandwidth.append(BandwidthPoint(kernel=label, level=level, bytes_per_second=rate, origin="measured"))
        if r.predicted_seconds and r.kernel.dram_bytes:
            bandwidth.append(BandwidthPoint(kernel=label, level="dram", origin="model",
                                            bytes_per_second=r.kernel.dram_bytes / r.predicted_seconds))
    chart = roofline_chart(report.gpu, (), precision=primary, precisions=sorted(set(precisions)) or [primary],
                           title=title or f"Nsight Compute profile on {report.gpu}")
    return chart.model_copy(update={"points": tuple(points), "bandwidth_points": tuple(bandwidth)})
