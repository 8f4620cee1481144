"""The corpus against the model: every launch predicted and set beside its measured duration.

`corpus_report` predicts every launch from its profile exactly as ``gpuroof ncu`` does
(`roofline.profile_report`) and sets the prediction and the plain roofline bound beside the
measured duration; the model is never fitted to the corpus, so the leave-one-project-out
split is the held-out project's error against the others'.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

from pydantic import BaseModel, Field

from roofline import Calibration, GPU, Kernel, NcuKernel, NcuProfile, RooflineError, predict, profile_report
from roofline import calibration as packaged_calibration

# The profile path's own readers: a corpus launch is a profile held as a mapping of metrics.
from roofline._ncu_metrics import kernel_from_metrics
from roofline._profile import _device_of, _launch_with_sass
from roofline.memory import loads_per_thread, sass_loads_per_thread

from ._counted import SourceCounts, load_corpus_traffic
from ._project import _FROZEN, CorpusKernel, CorpusLaunch, CorpusProject
from ._split import SPLITS, Split, split_of

__all__ = ["CorpusReport", "CorpusRow", "CorpusSplit", "WITHIN", "corpus_report"]

#: A prediction within this fraction of the measured duration counts as "within".
WITHIN = 0.25


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
    roofline_seconds: float | None = Field(description=(
        "The plain roofline bound of the counts the prediction used (the profile's, or on the source path the "
        "source's, as `Prediction.roofline_seconds`): never above predicted_seconds."))
    roofline_error: float | None
    occupancy_agrees: bool | None
    counted_from: str | None = Field(default=None, description=(
        'On the source path: "traffic" (the access description, `roofline.memory.traffic`) or "buffer bytes" '
        "(each buffer moved once)."))
    split: Split = Field(description="The project's split (`corpus.split_of`): dev or exam.")


class CorpusSplit(BaseModel):
    """The summary of one split's launches (dev or exam, `corpus.split_of`); errors as in `CorpusRow`."""

    model_config = _FROZEN

    split: Split
    projects: tuple[str, ...]
    kernels: int
    launches: int
    median_abs_error: float | None
    within: float | None = Field(description=f"Share of the split's launches predicted within {WITHIN:.0%}.")
    worst: CorpusRow | None
    held_out: dict[str, tuple[float, float]] = Field(
        description="Per project of the split: median |error| on it, and on the split's other projects.")


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
    splits: dict[str, CorpusSplit] = Field(default_factory=dict, description=(
        "Per split with launches in the report (dev, exam, in that order): its own summary."))
    occupancy_compared: int
    occupancy_agreeing: int
    from_source: bool = Field(default=False, description="Predicted from buffer bytes, flops and SASS alone "
                                                         "(`corpus_report(from_source=True)`), not the profile.")


def _ncu_kernel(project: CorpusProject, kernel: CorpusKernel, launch: CorpusLaunch, index: int) -> NcuKernel:
    metrics = launch.ncu
    found = kernel_from_metrics(metrics, project.ncu_units, where=f"{project.project} {kernel.id} [{launch.shape}]",
                                index=index, demangled=str(metrics.get("Kernel Name", kernel.name)))
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


def _summary(rows: Sequence[CorpusRow]) -> dict[str, object]:
    """The median |error|, the share within `WITHIN` and the worst launch of ``rows``."""
    predicted = [r for r in rows if r.error is not None]
    return dict(median_abs_error=_median_abs([r.error for r in predicted]),
                within=sum(1 for r in predicted if abs(r.error) <= WITHIN) / len(predicted) if predicted else None,
                worst=max(predicted, key=lambda r: abs(r.error)) if predicted else None)


def _held_out(rows: Sequence[CorpusRow], names: Sequence[str]) -> dict[str, tuple[float, float]]:
    """Per project of ``names``: its median |error|, and the other projects' of ``rows``."""
    held_out = {}
    for n in names:
        mine = _median_abs([r.error for r in rows if r.project == n])
        rest = _median_abs([r.error for r in rows if r.project != n])
        if mine is not None and rest is not None:
            held_out[n] = (mine, rest)
    return held_out


def _splits(rows: Sequence[CorpusRow], projects: Sequence[CorpusProject]) -> dict[str, CorpusSplit]:
    """Each split's summary, leaving one project out within its split."""
    splits = {}
    for split in SPLITS:
        mine = [r for r in rows if r.split == split]
        if not mine:
            continue
        members = [p for p in projects if split_of(p.project) == split]
        names = tuple(p.project for p in members)
        splits[split] = CorpusSplit(split=split, projects=names, kernels=sum(len(p.kernels) for p in members),
                                    launches=len(mine), held_out=_held_out(mine, names), **_summary(mine))
    return splits


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
        straight-line count (else one), at the database GPU's clocks; each row's roofline is
        the bound of those counts (`Prediction.roofline_seconds`), not of the profile's.
        Launches without ``buffer_bytes`` get no prediction.

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
        predicted, limiter, source, bound = r.predicted_seconds, r.predicted_limiter, None, r.roofline_seconds
        if from_source:
            table = counted.get(p.project)
            counts = table.launches.get(k.id, {}).get(launch.shape) if table is not None else None
            predicted, limiter, source, bound = _from_source(ncu_kernels[i], launch, counts, device,
                                                             calibrations[p.launch_overhead_seconds])
        rows.append(CorpusRow(
            project=p.project, kernel=k.short_id, category=k.category, shape=launch.shape,
            blocks=launch.blocks, measured_seconds=measured,
            nsight_seconds=r.kernel.measured.duration_seconds, predicted_seconds=predicted,
            error=_error(predicted, measured), limiter=limiter,
            roofline_seconds=bound, roofline_error=_error(bound, measured),
            occupancy_agrees=r.occupancy_agrees, counted_from=source, split=split_of(p.project)))
    names = tuple(p.project for p in projects)
    per_project = {n: m for n in names if (m := _median_abs([r.error for r in rows if r.project == n])) is not None}
    categories = sorted({r.category for r in rows})
    per_category = {c: m for c in categories
                    if (m := _median_abs([r.error for r in rows if r.category == c])) is not None}
    compared = [r for r in rows if r.occupancy_agrees is not None]
    return CorpusReport(
        gpu=report.gpu, projects=names, rows=tuple(rows), kernels=sum(len(p.kernels) for p in projects),
        **_summary(rows), roofline_median_abs_error=_median_abs([r.roofline_error for r in rows]),
        project_median_abs_error=per_project, category_median_abs_error=per_category,
        held_out=_held_out(rows, names), splits=_splits(rows, projects),
        occupancy_compared=len(compared), occupancy_agreeing=sum(1 for r in compared if r.occupancy_agrees),
        from_source=from_source)


def _from_source(k: NcuKernel, launch: CorpusLaunch, counts: SourceCounts | None, device: GPU,
                 calibration: Calibration) -> tuple[float | None, str | None, str | None, float | None]:
    """`predict` of one launch from what its source and build give; returns seconds, limiter,
    what the bytes came from (the access description's counted traffic where there is one,
    else the buffer bytes, each moved once) and the plain roofline bound of those counts."""
    threads = launch.blocks * launch.threads_per_block
    loads = sass_loads_per_thread(k.sass, load_bytes=counts.traffic.load_bytes if counts is not None else None,
                                  threads=threads)
    if loads is None and counts is not None:  # no SASS: the loads at 4 bytes each
        loads = loads_per_thread(counts.traffic.load_bytes, threads)
    run = _launch_with_sass(k, loads or 1, "the build's cubin")
    precision = k.precision
    work = {"name": k.name, "flops": k.flops.get(precision, 0.0) if precision else 0.0, "precision": precision,
            "launch": run}
    if counts is not None:
        kernel = counts.traffic.kernel(**work, **counts.counts)
        source = "traffic"
    elif launch.buffer_bytes is not None:
        kernel, source = Kernel(**work, dram_bytes=float(launch.buffer_bytes)), "buffer bytes"
    else:
        return None, None, None, None
    result = predict(device, kernel, calibration=calibration, after_l2_flush=True)
    return result.seconds, result.limiter, source, result.roofline_seconds
