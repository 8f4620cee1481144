"""The corpus report as Markdown, and predicted against measured as a figure."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from occupancy.common import as_path, atomic_path
from roofline import RooflineError

# The roofline plots' own pyplot import (headless) and project colours.
from roofline._plot import _colormap, _import_pyplot

from ._project import CorpusProject
from ._report import WITHIN, CorpusReport, CorpusRow, _median_abs
from ._split import SPLIT_FIXED

__all__ = ["format_corpus_report", "plot_corpus"]


def _us(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1e6:.1f}"


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:+.0f} %"


def _abs_pct(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:.1f} %"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _worst(row: CorpusRow | None) -> str:
    return "-" if row is None else f"{_pct(row.error)} ({_cell(row.project)} {_cell(row.kernel)}, {_cell(row.shape)})"


def _split_lines(report: CorpusReport) -> list[str]:
    """The dev and exam splits side by side, and leave one project out within each split."""
    splits = list(report.splits.values())
    lines = ["", f"Dev and exam (docs/corpus.md: the dev projects were fixed on {SPLIT_FIXED}; every project "
             "added later is exam, its error reported, never used):", "",
             "| | " + " | ".join(s.split for s in splits) + " |", "| --- |" + " --- |" * len(splits),
             "| projects | " + " | ".join(", ".join(_cell(n) for n in s.projects) for s in splits) + " |",
             "| kernels, launches | " + " | ".join(f"{s.kernels}, {s.launches}" for s in splits) + " |",
             "| median \\|error\\| | " + " | ".join(_abs_pct(s.median_abs_error) for s in splits) + " |",
             f"| within {WITHIN:.0%} | " + " | ".join("-" if s.within is None else f"{s.within:.0%}" for s in splits)
             + " |",
             "| worst | " + " | ".join(_worst(s.worst) for s in splits) + " |",
             "", "Leave one project out (the model is not fitted to the corpus: the held-out project's "
             "median \\|error\\| against the other projects' of its split):", "",
             "| project | split | kernels | launches | median \\|error\\| | others' |",
             "| --- | --- | --- | --- | --- | --- |"]
    for s in splits:
        for name in s.projects:
            rows = [r for r in report.rows if r.project == name]
            mine, rest = s.held_out.get(name, (None, None))
            lines.append(f"| {_cell(name)} | {s.split} | {len({r.kernel for r in rows})} | {len(rows)} | "
                         f"{_abs_pct(mine)} | {_abs_pct(rest)} |")
    return lines


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
                 "`roofline.memory.traffic` counts from the kernel's access description (its global accesses, and the "
                 "shared-memory wavefronts, barriers and atomics read off the source; `corpus/traffic`), "
                 "else the launch's buffer bytes as its DRAM bytes; the kernel's flops; the SASS of its build"
                 if report.from_source else
                 "`gpuroof ncu`'s prediction from the launch's Nsight Compute profile (`roofline.profile_report`)")
             + ". Error: predicted / measured - 1. Roofline: the plain roofline bound (datasheet ceilings) of the "
             + ("source's counts, as the prediction moves them (the L2 bytes L1 does not keep)" if report.from_source
                else "profile's counts") + ".", "",
             "## Summary", "",
             "| | predicted | plain roofline |", "| --- | --- | --- |",
             f"| median \\|error\\| | {_abs_pct(report.median_abs_error)} | "
             f"{_abs_pct(report.roofline_median_abs_error)} |",
             f"| within {WITHIN:.0%} | {'-' if report.within is None else f'{report.within:.0%}'} | |"]
    if report.worst is not None:
        lines.append(f"| worst | {_worst(report.worst)} | |")
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
    lines += _split_lines(report)
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

