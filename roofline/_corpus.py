"""The measured corpus: other projects' kernels, timed and profiled on a GPU, against the model.

One file per project and GPU, ``roofline/data/corpus/<gpu>/<project>.json`` (a
`CorpusProject`): the project's name, address, commit and license, and per kernel its
category, the SASS summary of the cubin that ran, and every launch with its shape, grid,
block, the CUDA-event duration (L2 scrubbed, median of repeats, the spread), the SM and
memory clocks read while it ran, and Nsight Compute's metrics of the same launch
(``--clock-control none --print-units base``; the metrics `CORPUS_METRICS` names, with
their units once per file). Figures only: no code, binary or SASS listing of the other
projects.

`corpus_report` predicts every launch from its profile exactly as ``gpuroof ncu`` does
(`profile_report`) and sets the prediction and the plain roofline bound beside the
measured duration; the model is never fitted to the corpus, so the leave-one-project-out
split is the held-out project's error against the others'.
"""

from __future__ import annotations

import math
import os
import re
import statistics
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from occupancy import SassSummary
from occupancy.common import as_path, atomic_path, dumps_json, pydantic_error, read_json, write_atomic

from ._errors import RooflineError
from ._ncu import NcuKernel, NcuProfile, _kernel, _Reader
from ._facts import calibration as packaged_calibration
from ._calibration import Calibration
from ._gpu import GPU
from ._corpus_traffic import DESCRIPTIONS, Describe
from ._kernel import Kernel, Traffic
from ._traffic import traffic as count_traffic
from ._warps import CACHE_LINE_BYTES, WARP_SIZE
from ._profile import _device_of, _launch_with_sass, _straight_line_loads, profile_report
from ._time_model import predict

__all__ = [
    "CORPUS_METRICS",
    "CorpusKernel",
    "CorpusLaunch",
    "CorpusProject",
    "CorpusReport",
    "CorpusRow",
    "CorpusTraffic",
    "SourceCounts",
    "corpus_gpus",
    "corpus_metrics",
    "corpus_report",
    "count_corpus_traffic",
    "format_corpus_report",
    "load_corpus",
    "load_corpus_traffic",
    "plot_corpus",
    "write_corpus_project",
    "write_corpus_traffic",
]

_FROZEN = ConfigDict(frozen=True, extra="forbid")

#: Where the packaged measurements live: one folder per GPU (the facts file's name).
_DIRECTORY = Path(__file__).parent / "data" / "corpus"
#: Where the traffic counted from the access descriptions lives: one file per project (the
#: shapes are the same on every GPU).
_TRAFFIC_DIRECTORY = Path(__file__).parent / "data" / "corpus_traffic"

#: The Nsight Compute metrics a corpus file keeps (regular expressions, whole names): what
#: `load_ncu` reads, and the instruction counts (InstructionStats, the memory tables) the
#: profile path and the time model need. A raw page holds ~1300 metrics per launch.
CORPUS_METRICS: tuple[str, ...] = (
    r"Kernel Name", r"Block Size", r"Grid Size", r"CC",
    r"launch__(grid|block|cluster)_dim_[xyz]",
    r"launch__(registers_per_thread|shared_mem_per_block_(static|dynamic|driver)"
    r"|shared_mem_config_size|barrier_count|sm_count|waves_per_multiprocessor|occupancy_limit_\w+)",
    r"device__attribute_(compute_capability_(major|minor)|display_name|multiprocessor_count)",
    r"gpu__time_duration\.sum", r"(sm|smsp|dram|lts)__cycles_elapsed\.avg\.per_second",
    r"sm__maximum_warps_per_active_cycle_pct", r"sm__warps_active\.avg\.pct_of_peak_sustained_active",
    r"dram__bytes(_read|_write)?\.sum(\.per_second)?", r"lts__lts2xbar_cycles_active\.sum\.per_second",
    r"l1tex__lsu_writeback_active_mem_lgds?\.sum\.per_second", r"lts__t_(sectors|requests)_srcunit_tex(_op_(read|write|atom|red))?\.sum",
    r"smsp__sass_thread_inst_executed_op_[dfh](add|mul|fma)_pred_on\.sum\.per_cycle_elapsed",
    r"sm__ops_path_tensor_src_\w+\.sum\.per_cycle_elapsed",
    r"(sm|smsp)__inst_(executed|issued)\.sum", r"inst_executed", r"smsp__thread_inst_executed(_pred_on)?\.sum",
    r"(sm|smsp)__sass_inst_executed_op_\w+\.sum", r"l1tex__t_(sectors|requests)_pipe_lsu_mem_global_op_\w+\.sum",
    r"l1tex__data_pipe_lsu_wavefronts(_mem_shared(_op_(ld|st))?)?\.sum", r"l1tex__data_bank_conflicts_pipe_lsu_mem_shared\.sum",
    r"l1tex__t_(sectors|requests)_pipe_lsu_mem_(global|local)_op_(ld|st|atom|red)\.sum",
    r"l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit\.sum", r"l1tex__m_xbar2l1tex_read_sectors\.sum",
    r"lts__t_sectors_srcunit_tex_lookup_hit\.sum", r"smsp__inst_executed_pipe_\w+\.sum", r"(sm|smsp)__cycles_active\.avg",
    r"smsp__average_warps_issue_stalled_\w+_per_issue_active\.ratio",
)
_KEEP = re.compile("|".join(f"(?:{m})" for m in CORPUS_METRICS))


def corpus_metrics(row: Mapping[str, Any]) -> dict[str, Any]:
    """The entries of one profiled launch (metric name -> anything) that a corpus file keeps."""
    if not isinstance(row, Mapping):
        raise TypeError(f"row must be a mapping of metric names, not {type(row).__name__}")
    return {name: value for name, value in row.items() if isinstance(name, str) and _KEEP.fullmatch(name)}


#: A prediction within this fraction of the measured duration counts as "within".
WITHIN = 0.25


class CorpusLaunch(BaseModel):
    """One launch of a corpus kernel: its shape, the measured duration and Nsight's metrics (SI units)."""

    model_config = _FROZEN

    shape: str = Field(min_length=1, description='Problem shape and block, e.g. "n=4096 block=32x8".')
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    dynamic_shared_memory: int = Field(default=0, ge=0, description="Bytes per block.")
    build_defines: tuple[str, ...] = Field(default=(), description="The project's tunables this build set.")
    duration_median_seconds: float = Field(gt=0, description="CUDA events, L2 scrubbed, median of repeats.")
    duration_spread: float = Field(ge=0, description="Interquartile range over the median.")
    repetitions: int = Field(ge=1)
    sm_clock_hz: float | None = Field(default=None, gt=0, description="Median SM clock while timed (NVML).")
    memory_clock_hz: float | None = Field(default=None, gt=0)
    throttled: bool | None = None
    buffer_bytes: int | None = Field(
        default=None, ge=0, description="Bytes of the device buffers the launch was given (each moved once: the "
                                        "compulsory traffic a user reads off the source).")
    ncu: dict[str, float | str] = Field(
        description="Nsight Compute raw-page metrics of this launch (the `CORPUS_METRICS`), in the project's "
                    "ncu_units.")

    @property
    def blocks(self) -> int:
        """Blocks of the grid."""
        return math.prod(self.grid)

    @property
    def threads_per_block(self) -> int:
        return math.prod(self.block)

    @property
    def warps(self) -> int:
        """Warps of the whole launch (a partial warp counts)."""
        return self.blocks * -(-self.threads_per_block // WARP_SIZE)


class CorpusKernel(BaseModel):
    """One kernel of a project and its launches."""

    model_config = _FROZEN

    id: str = Field(min_length=1, description='"project/kernel", unique in the corpus.')
    name: str = Field(min_length=1, description="Function name (template arguments included).")
    category: str = Field(min_length=1)
    source: str = Field(default="", description="The file in the project that defines it.")
    note: str = ""
    symbol: str = Field(default="", description="The symbol that ran (mangled for C++).")
    registers_per_thread: int | None = Field(default=None, ge=0, le=255)
    sass: SassSummary | None = Field(default=None, description="Summary of the SASS that ran (figures only).")
    launches: tuple[CorpusLaunch, ...] = Field(min_length=1)

    @property
    def short_id(self) -> str:
        """The id without its project: the key of the kernel's access description."""
        return self.id.split("/", 1)[-1]


class CorpusProject(BaseModel):
    """Every measured kernel of one project on one GPU."""

    model_config = _FROZEN

    project: str = Field(min_length=1)
    url: str = Field(min_length=1)
    commit: str = Field(min_length=1)
    license: str = Field(min_length=1)
    gpu: str = Field(min_length=1, description="The device name the driver reported.")
    nsight_compute: str = Field(default="", description="``ncu --version`` of the profiles.")
    ncu_units: dict[str, str] = Field(
        default_factory=dict, description="Each metric's unit as ``ncu --print-units base`` printed it.")
    launch_overhead_seconds: float | None = Field(default=None, gt=0, description=(
        "The empty kernel's time (validate's launch probe: CUDA events behind a spin kernel) measured in the "
        "session that timed these launches, before and after them (mean): the launch cost their durations "
        "hold. None: the GPU's packaged calibration stands in for it."))
    timing_session: str = Field(default="", description="When and how the durations were timed.")
    kernels: tuple[CorpusKernel, ...] = Field(min_length=1)


class SourceCounts(BaseModel):
    """One launch's traffic as `roofline.traffic` counts it from the kernel's access description."""

    model_config = _FROZEN

    traffic: Traffic
    counts: dict[str, float] = Field(default_factory=dict, description=(
        "Counts read off the source beside the accesses (`roofline._corpus_traffic.COUNT_FIELDS`: atomics, "
        "the addresses they update, barriers per block, shared-memory wavefronts)."))


class CorpusTraffic(BaseModel):
    """The counted traffic of every described launch of one project (the same on every GPU)."""

    model_config = _FROZEN

    project: str = Field(min_length=1)
    described_in: str = Field(description="The module holding the access descriptions.")
    launches: dict[str, dict[str, SourceCounts]] = Field(
        description="Kernel id -> launch shape -> its counts.")


class CorpusRow(BaseModel):
    """One launch against the model (seconds; errors are predicted / measured - 1)."""

    model_config = _FROZEN

    project: str
    kernel: str
    category: str
    shape: str
    blocks: int
    measured_seconds: float
    nsight_seconds: float | None
    predicted_seconds: float | None
    error: float | None
    limiter: str | None
    roofline_seconds: float | None
    roofline_error: float | None
    occupancy_agrees: bool | None
    counted_from: str | None = Field(default=None, description=(
        'On the source path: "traffic" (the access description, `roofline.traffic`) or "buffer bytes" '
        "(each buffer moved once)."))


class CorpusReport(BaseModel):
    """The corpus of one GPU against the model, and its summary."""

    model_config = _FROZEN

    gpu: str
    projects: tuple[str, ...]
    rows: tuple[CorpusRow, ...]
    kernels: int
    median_abs_error: float | None
    within: float | None = Field(description=f"Share of launches predicted within {WITHIN:.0%}.")
    worst: CorpusRow | None
    roofline_median_abs_error: float | None
    project_median_abs_error: dict[str, float]
    category_median_abs_error: dict[str, float] = Field(description="Per kernel category (streaming, gemm, ...).")
    held_out: dict[str, tuple[float, float]] = Field(
        description="Per project: median |error| on it, and on every other project (leave one project out).")
    occupancy_compared: int
    occupancy_agreeing: int
    from_source: bool = Field(default=False, description="Predicted from buffer bytes, flops and SASS alone "
                                                         "(`corpus_report(from_source=True)`), not the profile.")


# ---------------------------------------------------------------------------------------
# files


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def write_corpus_project(project: CorpusProject, directory: str | os.PathLike[str]) -> Path:
    """Write ``directory/<project>.json`` atomically; returns the path."""
    if not isinstance(project, CorpusProject):
        raise TypeError(f"project must be a CorpusProject, not {type(project).__name__}")
    return write_atomic(as_path(directory, RooflineError, "directory") / f"{_slug(project.project)}.json",
                        dumps_json(project.model_dump(mode="json")), RooflineError, "directory")


def corpus_gpus(directory: str | os.PathLike[str] | None = None) -> tuple[str, ...]:
    """The GPUs with measurements: the folders of ``directory`` (default the packaged corpus)."""
    root = as_path(directory, RooflineError, "directory") if directory is not None else _DIRECTORY
    if not root.is_dir():
        return ()
    return tuple(sorted(p.name for p in root.iterdir() if p.is_dir() and any(p.glob("*.json"))))


def load_corpus(gpu: str, *, project: str | None = None,
                directory: str | os.PathLike[str] | None = None) -> tuple[CorpusProject, ...]:
    """Read the corpus of one GPU.

    Parameters
    ----------
    gpu : str
        Folder name under ``directory`` (the facts file's name: ``"h200"``, ``"h100-sxm"``).
    project : str, optional
        Only this project (its name, case-insensitive).
    directory : path, optional
        The corpus root (default: the packaged corpus, ``roofline/data/corpus``); ``directory/<gpu>/*.json``.

    Raises
    ------
    RooflineError
        No measurements for ``gpu``, no such project, or a file that is not a `CorpusProject`.
    """
    if not isinstance(gpu, str):
        raise TypeError(f"gpu must be a str (a folder of the corpus), not {type(gpu).__name__}")
    if project is not None and not isinstance(project, str):
        raise TypeError(f"project must be a str, not {type(project).__name__}")
    root = as_path(directory, RooflineError, "directory") if directory is not None else _DIRECTORY
    if not gpu or gpu != Path(gpu).name:
        raise RooflineError(f"gpu={gpu!r} is not a corpus folder name; measured GPUs: "
                            f"{', '.join(corpus_gpus(root)) or 'none'}")
    folder = root / gpu
    files = sorted(folder.glob("*.json")) if folder.is_dir() else []
    if not files:
        known = ", ".join(corpus_gpus(root)) or "none"
        raise RooflineError(f"gpu={gpu!r} has no corpus measurements under {root}; measured GPUs: {known}")
    projects = []
    for path in files:
        data = read_json(path, RooflineError)
        try:
            projects.append(CorpusProject.model_validate(data))
        except ValidationError as exc:
            raise pydantic_error(exc, RooflineError, f"{path}") from None
    if project is not None:
        chosen = tuple(p for p in projects if p.project.lower() == project.lower())
        if not chosen:
            names = ", ".join(p.project for p in projects)
            raise RooflineError(f"project={project!r} is not in the {gpu} corpus; projects: {names}")
        return chosen
    return tuple(projects)


def count_corpus_traffic(project: CorpusProject, *,
                         progress: Callable[[int, int], None] | None = None) -> CorpusTraffic | None:
    """Count every launch of ``project`` whose kernel has an access description.

    Each description (``roofline._corpus_traffic``) gives the launch's global accesses and
    the counts read off the source beside them; `roofline.traffic` counts the launch from
    them. Returns None when no kernel of the project is described.

    ``progress``, if given, is called with ``(done, total)`` after each launch.
    """
    if not isinstance(project, CorpusProject):
        raise TypeError(f"project must be a CorpusProject, not {type(project).__name__}")
    described = DESCRIPTIONS.get(project.project)
    if not described:
        return None
    todo = [(k, launch) for k in project.kernels for launch in k.launches if k.short_id in described]
    launches: dict[str, dict[str, SourceCounts]] = {}
    for i, (k, launch) in enumerate(todo):
        launches.setdefault(k.id, {})[launch.shape] = _count_launch(described[k.short_id], k, launch)
        if progress is not None:
            progress(i + 1, len(todo))
    module = described[next(iter(described))].__module__
    return CorpusTraffic(project=project.project, described_in=module, launches=launches)


def _count_launch(describe: Describe, kernel: CorpusKernel, launch: CorpusLaunch) -> SourceCounts:
    d = describe(launch)
    try:
        counted = count_traffic(launch.grid, launch.block, d.accesses, exhaustive=d.exhaustive)
    except RooflineError as exc:
        raise RooflineError(f"{kernel.id} [{launch.shape}]: {exc}") from None
    return SourceCounts(traffic=counted, counts={n: float(v) for n, v in d.counts.items()})


def write_corpus_traffic(counted: CorpusTraffic, directory: str | os.PathLike[str] | None = None) -> Path:
    """Write ``directory/<project>.json`` (default the packaged folder) atomically; returns the path."""
    if not isinstance(counted, CorpusTraffic):
        raise TypeError(f"counted must be a CorpusTraffic, not {type(counted).__name__}")
    root = as_path(directory, RooflineError, "directory") if directory is not None else _TRAFFIC_DIRECTORY
    return write_atomic(root / f"{_slug(counted.project)}.json", dumps_json(counted.model_dump(mode="json")),
                        RooflineError, "directory")


def load_corpus_traffic(project: str, directory: str | os.PathLike[str] | None = None) -> CorpusTraffic | None:
    """The packaged traffic counts of ``project`` (its name), or None where none was counted."""
    if not isinstance(project, str):
        raise TypeError(f"project must be a str, not {type(project).__name__}")
    root = as_path(directory, RooflineError, "directory") if directory is not None else _TRAFFIC_DIRECTORY
    path = root / f"{_slug(project)}.json"
    if not path.is_file():
        return None
    try:
        return CorpusTraffic.model_validate(read_json(path, RooflineError))
    except ValidationError as exc:
        raise pydantic_error(exc, RooflineError, f"{path}") from None


# ---------------------------------------------------------------------------------------
# the model on every launch


def _ncu_kernel(project: CorpusProject, kernel: CorpusKernel, launch: CorpusLaunch, index: int) -> NcuKernel:
    metrics, units = launch.ncu, project.ncu_units

    def get(name: str) -> tuple[str | float, str] | None:
        found = metrics.get(name)
        return None if found is None else (found, units.get(name, ""))

    demangled = str(metrics.get("Kernel Name", kernel.name))
    found = _kernel(_Reader(get, f"{project.project} {kernel.id} [{launch.shape}]"), index=index, demangled=demangled,
                    nvtx=None, missing_cc=None)
    # The SASS summary stored beside the profile is the one the launch ran (its project's own
    # build), so predict reads loops, loads and the instruction mix as on the source path.
    why = ("the corpus: the cubin its project's build makes" if kernel.sass is not None
           else "no SASS in the corpus entry")
    return found.model_copy(update={"sass": kernel.sass, "sass_source": why})


def _error(predicted: float | None, measured: float) -> float | None:
    return None if predicted is None else predicted / measured - 1.0


def _median_abs(errors: Sequence[float | None]) -> float | None:
    values = [abs(e) for e in errors if e is not None]
    return statistics.median(values) if values else None


def corpus_report(projects: Sequence[CorpusProject], *, gpu: str | None = None,
                  from_source: bool = False) -> CorpusReport:
    """Predict every launch of ``projects`` from its profile and compare with the measured duration.

    Parameters
    ----------
    projects : sequence of CorpusProject
        From `load_corpus` (one GPU).
    gpu : str, optional
        Database GPU for the prediction; default the profiled device's entry.
    from_source : bool
        Predict as from the source alone, without the profile's counts: the DRAM bytes are the
        launch's ``buffer_bytes`` (each buffer moved once, the compulsory bytes), the flops the
        kernel's exact count (a user counts them from the source; taken from Nsight's
        instruction counts), the SASS the compiler's, the loads per thread the SASS's
        straight-line count (else one), at the database GPU's clocks. Launches without
        ``buffer_bytes`` get no prediction.

    Notes
    -----
    The measured durations are CUDA-event times, so the launch cost is the one CUDA events
    see (``launch_overhead_seconds``), not Nsight's empty-kernel duration that `profile_report`
    uses for a profile on its own (`nsight_calibration`): the empty kernel's time measured in
    the session that timed the project (`CorpusProject.launch_overhead_seconds`), else the
    packaged calibration's. They were timed right after validate's L2 flush, so each launch is
    predicted with ``after_l2_flush``.

    Returns
    -------
    CorpusReport
        Rows in project, kernel and launch order; the summary over every launch with a
        prediction.

    Raises
    ------
    TypeError
        ``projects`` is not a sequence of `CorpusProject`, or ``from_source`` not a bool.
    RooflineError
        No projects, or a profile the database cannot place (`profile_report`'s errors).
    """
    if isinstance(projects, (str, bytes)) or not isinstance(projects, Sequence):
        raise TypeError(f"projects must be a sequence of CorpusProject, not {type(projects).__name__}")
    for p in projects:
        if not isinstance(p, CorpusProject):
            raise TypeError(f"projects must hold CorpusProject (from load_corpus), not {type(p).__name__}")
    if not projects:
        raise RooflineError("projects is empty; load some with load_corpus")
    if not isinstance(from_source, bool):
        raise TypeError(f"from_source must be True or False, not {type(from_source).__name__}")
    where: list[tuple[CorpusProject, CorpusKernel, CorpusLaunch]] = []
    ncu_kernels = []
    for p in projects:
        for k in p.kernels:
            for launch in k.launches:
                ncu_kernels.append(_ncu_kernel(p, k, launch, len(where)))
                where.append((p, k, launch))
    profile = NcuProfile(path=f"corpus:{projects[0].gpu}", format="csv", kernels=tuple(ncu_kernels))
    device = _device_of(profile, gpu)
    packaged = packaged_calibration(device).model_copy(update={"nsight_empty_kernel_seconds": None})
    # each project's durations hold the launch cost of the session that timed them
    overheads = [p.launch_overhead_seconds for p, _, _ in where]
    by_index = {}
    calibrations = {}
    for overhead in dict.fromkeys(overheads):
        events = packaged if overhead is None else packaged.model_copy(update={"launch_overhead_seconds": overhead})
        calibrations[overhead] = events
        part = NcuProfile(path=profile.path, format="csv",
                          kernels=tuple(k for k, o in zip(ncu_kernels, overheads) if o == overhead))
        # the durations were timed after validate's L2 flush (a memset of 4x L2)
        report = profile_report(part, gpu=device, calibration=events, after_l2_flush=True)
        by_index.update({row.kernel.id: row for row in report.kernels})
    counted = {p.project: load_corpus_traffic(p.project) for p in projects} if from_source else {}
    rows = []
    for i, (p, k, launch) in enumerate(where):
        r = by_index[i]
        measured = launch.duration_median_seconds
        predicted, limiter, source = r.predicted_seconds, r.predicted_limiter, None
        if from_source:
            table = counted.get(p.project)
            counts = table.launches.get(k.id, {}).get(launch.shape) if table is not None else None
            predicted, limiter, source = _from_source(ncu_kernels[i], launch, counts, device,
                                                      calibrations[p.launch_overhead_seconds])
        rows.append(CorpusRow(
            project=p.project, kernel=k.short_id, category=k.category, shape=launch.shape,
            blocks=launch.blocks, measured_seconds=measured,
            nsight_seconds=r.kernel.duration_seconds, predicted_seconds=predicted,
            error=_error(predicted, measured), limiter=limiter,
            roofline_seconds=r.roofline_seconds, roofline_error=_error(r.roofline_seconds, measured),
            occupancy_agrees=r.occupancy_agrees, counted_from=source))
    predicted = [r for r in rows if r.error is not None]
    names = tuple(p.project for p in projects)
    per_project = {n: m for n in names if (m := _median_abs([r.error for r in rows if r.project == n])) is not None}
    categories = sorted({r.category for r in rows})
    per_category = {c: m for c in categories
                    if (m := _median_abs([r.error for r in rows if r.category == c])) is not None}
    held_out = {}
    for n, mine in per_project.items():
        rest = _median_abs([r.error for r in rows if r.project != n])
        if rest is not None:
            held_out[n] = (mine, rest)
    compared = [r for r in rows if r.occupancy_agrees is not None]
    return CorpusReport(
        gpu=report.gpu, projects=names, rows=tuple(rows), kernels=sum(len(p.kernels) for p in projects),
        median_abs_error=_median_abs([r.error for r in predicted]),
        within=sum(1 for r in predicted if abs(r.error) <= WITHIN) / len(predicted) if predicted else None,
        worst=max(predicted, key=lambda r: abs(r.error)) if predicted else None,
        roofline_median_abs_error=_median_abs([r.roofline_error for r in rows]),
        project_median_abs_error=per_project, category_median_abs_error=per_category, held_out=held_out,
        occupancy_compared=len(compared), occupancy_agreeing=sum(1 for r in compared if r.occupancy_agrees),
        from_source=from_source)


def _from_source(k: NcuKernel, launch: CorpusLaunch, counts: SourceCounts | None, device: GPU,
                 calibration: Calibration) -> tuple[float | None, str | None, str | None]:
    """`predict` of one launch from what its source and build give; returns seconds, limiter and
    what the bytes came from: the access description's counted traffic where there is one,
    else the buffer bytes (each moved once)."""
    loads = _straight_line_loads(k.sass)
    if loads is None and counts is not None:
        # the loads each thread makes, as the hot loop's trips count them (`hot_loop_trips`):
        # the counted load bytes per thread over the SASS's load width
        width = float(k.sass.global_load_bytes or 4) if k.sass is not None else 4.0
        loads = max(1, round(counts.traffic.load_bytes / (launch.blocks * launch.threads_per_block) / width))
    run = _launch_with_sass(k, loads or 1, "the build's cubin")
    precision = k.precision
    work = {"name": k.name, "flops": k.flops.get(precision, 0.0) if precision else 0.0, "precision": precision,
            "launch": run}
    if counts is not None:
        fields = dict(counts.counts)
        shared = fields.pop("shared_wavefronts", 0.0)
        kernel = counts.traffic.kernel(**work, **fields,
                                       l1_bytes=counts.traffic.l1_global_bytes + CACHE_LINE_BYTES * shared)
        source = "traffic"
    elif launch.buffer_bytes is not None:
        kernel, source = Kernel(**work, dram_bytes=float(launch.buffer_bytes)), "buffer bytes"
    else:
        return None, None, None
    result = predict(device, kernel, calibration=calibration, after_l2_flush=True)
    return result.seconds, result.limiter, source


# ---------------------------------------------------------------------------------------
# output


def _us(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1e6:.1f}"


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:+.0f} %"


def _abs_pct(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:.1f} %"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def format_corpus_report(report: CorpusReport, *, sources: Sequence[CorpusProject] = ()) -> str:
    """The report as Markdown: the summary, per project a table of every launch.

    ``sources`` (the projects the report was made from) adds each project's address,
    commit and license to its heading.
    """
    if not isinstance(report, CorpusReport):
        raise TypeError(f"report must be a CorpusReport (from corpus_report), not {type(report).__name__}")
    if isinstance(sources, (str, bytes)) or not isinstance(sources, Sequence) or \
            not all(isinstance(p, CorpusProject) for p in sources):
        raise TypeError("sources must be a sequence of CorpusProject")
    meta = {p.project: p for p in sources}
    n = len(report.rows)
    lines = [f"# The corpus on the {report.gpu}", "",
             f"{report.kernels} kernels of {len(report.projects)} projects, {n} launches. Measured: CUDA events, "
             "L2 scrubbed, median of repeats. Predicted: " + (
                 "from the source alone (`corpus_report(from_source=True)`), no profile counts: the traffic "
                 "`roofline.traffic` counts from the kernel's access description (its global accesses, and the "
                 "shared-memory wavefronts, barriers and atomics read off the source; `roofline/_corpus_traffic`), "
                 "else the launch's buffer bytes as its DRAM bytes; the kernel's flops; the SASS of its build"
                 if report.from_source else
                 "`gpuroof ncu`'s prediction from the launch's Nsight Compute profile (`roofline.profile_report`)")
             + ". Error: predicted / measured - 1. Roofline: the plain roofline bound of the profile's counts.", "",
             "## Summary", "",
             "| | predicted | plain roofline |", "| --- | --- | --- |",
             f"| median \\|error\\| | {_abs_pct(report.median_abs_error)} | "
             f"{_abs_pct(report.roofline_median_abs_error)} |",
             f"| within {WITHIN:.0%} | {'-' if report.within is None else f'{report.within:.0%}'} | |"]
    if report.worst is not None:
        w = report.worst
        lines.append(f"| worst | {_pct(w.error)} ({_cell(w.project)} {_cell(w.kernel)}, {_cell(w.shape)}) | |")
    lines.append(f"| occupancy equal to Nsight's | {report.occupancy_agreeing} of {report.occupancy_compared} "
                 "launches | |")
    if report.from_source:
        for origin in ("traffic", "buffer bytes"):
            rows = [r for r in report.rows if r.counted_from == origin]
            if rows:
                inside = sum(1 for r in rows if r.error is not None and abs(r.error) <= WITHIN)
                lines.append(f"| counted from {origin}: {len(rows)} launches | "
                             f"{_abs_pct(_median_abs([r.error for r in rows]))}, {inside / len(rows):.0%} within "
                             f"{WITHIN:.0%} | |")
    lines += ["", "Leave one project out (the model is not fitted to the corpus: the held-out project's "
              "median \\|error\\| against the other projects'):", "",
              "| project | kernels | launches | median \\|error\\| | others' |", "| --- | --- | --- | --- | --- |"]
    for name in report.projects:
        rows = [r for r in report.rows if r.project == name]
        mine, rest = report.held_out.get(name, (None, None))
        lines.append(f"| {_cell(name)} | {len({r.kernel for r in rows})} | {len(rows)} | {_abs_pct(mine)} | "
                     f"{_abs_pct(rest)} |")
    lines += ["", "By category:", "", "| category | launches | median \\|error\\| | plain roofline |",
              "| --- | ---: | --- | --- |"]
    for category, value in report.category_median_abs_error.items():
        rows = [r for r in report.rows if r.category == category]
        lines.append(f"| {category} | {len(rows)} | {_abs_pct(value)} | "
                     f"{_abs_pct(_median_abs([r.roofline_error for r in rows]))} |")
    for name in report.projects:
        p = meta.get(name)
        lines += ["", f"## {name}", ""]
        if p is not None:
            lines += [f"{p.url} at `{p.commit}`, {p.license}.", ""]
            if p.launch_overhead_seconds is not None:
                lines += [f"Timing: {p.timing_session or 'one session'}. Predicted with that session's launch "
                          f"cost, {p.launch_overhead_seconds * 1e6:.3f} us.", ""]
        lines += ["| kernel | category | shape | blocks | measured us | predicted us | error | limiter | "
                  "roofline us | roofline error |",
                  "| --- | --- | --- | ---: | ---: | ---: | ---: | --- | ---: | ---: |"]
        for r in (r for r in report.rows if r.project == name):
            lines.append(f"| {_cell(r.kernel)} | {r.category} | {_cell(r.shape)} | {r.blocks} | "
                         f"{_us(r.measured_seconds)} | {_us(r.predicted_seconds)} | {_pct(r.error)} | "
                         f"{r.limiter or '-'} | {_us(r.roofline_seconds)} | {_pct(r.roofline_error)} |")
    return "\n".join(lines) + "\n"


def plot_corpus(report: CorpusReport, path: str | os.PathLike[str]) -> Path:
    """Predicted against measured duration, one point per launch, coloured by project (log axes)."""
    from ._plot import _colormap, _import_pyplot

    if not isinstance(report, CorpusReport):
        raise TypeError(f"report must be a CorpusReport (from corpus_report), not {type(report).__name__}")
    target = as_path(path, RooflineError)
    if target.suffix.lower() not in (".png", ".svg", ".pdf"):
        raise RooflineError(f"path={str(target)!r}: give a .png, .svg or .pdf file")
    figure_class = _import_pyplot()
    fig = figure_class(figsize=(7, 6))
    ax = fig.add_subplot(1, 1, 1)
    points = [r for r in report.rows if r.predicted_seconds is not None]
    if not points:
        raise RooflineError("the report has no predicted launch to plot")
    low = min(min(r.measured_seconds, r.predicted_seconds) for r in points) / 1.5
    high = max(max(r.measured_seconds, r.predicted_seconds) for r in points) * 1.5
    ax.plot([low, high], [low, high], color="0.3", lw=1, label="predicted = measured")
    for factor in (1 - WITHIN, 1 + WITHIN):
        ax.plot([low, high], [low * factor, high * factor], color="0.6", lw=0.8, ls="--")
    colors = _colormap(len(report.projects))
    for color, name in zip(colors, report.projects):
        mine = [r for r in points if r.project == name]
        ax.scatter([r.measured_seconds for r in mine], [r.predicted_seconds for r in mine], s=12, color=color,
                   label=f"{name} ({len(mine)})", alpha=0.8)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(low, high)
    ax.set_ylim(low, high)
    ax.set_xlabel("measured duration (s)")
    ax.set_ylabel("predicted duration (s)")
    summary = "-" if report.median_abs_error is None else f"{report.median_abs_error:.0%}"
    ax.set_title(f"Corpus on the {report.gpu}: median |error| {summary}; dashed: ±{WITHIN:.0%}")
    ax.legend(fontsize=8, loc="upper left")
    ax.grid(True, which="both", lw=0.3, alpha=0.5)
    fig.tight_layout()
    with atomic_path(target, RooflineError) as tmp:
        fig.savefig(tmp, format=target.suffix.lower().lstrip("."), dpi=120)
    return target

