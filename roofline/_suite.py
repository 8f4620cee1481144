"""The main job: analyze a suite of kernels on one GPU, with each launch's occupancy."""

from __future__ import annotations

import csv
import io
import json
import textwrap
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import ConfigDict, model_validator

from occupancy import Launch
from occupancy import calculate as occupancy_calculate
from occupancy.common import (Displayed, Progress, Shown, check_writable, dumps_json, joined, no_progress, percent,
                               progress_step, save_figure, sequence, shown, si, write_atomic)

from . import models
from ._chart import RooflineChart, kernel_labels, roofline_chart
from ._errors import RooflineError
from ._export import save_chart
from ._facts import calibration
from ._facts import gpu as lookup_gpu
from ._gpu import DEFAULT_GPU, GPU
from ._kernel import Kernel, KernelLike, kernel_of
from ._plot import plot_roofline
from ._predict import bound_counts
from ._roofline import analyze
from ._time_model import DEFAULT_REGISTERS_PER_THREAD, Prediction, predict

__all__ = [
    "ASSUMED_REGISTERS_PER_THREAD",
    "SuiteReport",
    "SuiteRow",
    "analyze_suite",
    "format_suite_table",
    "suite_to_csv",
    "suite_to_markdown",
    "write_suite_report",
]

#: Registers per thread assumed for occupancy when a kernel's launch has no estimate: 32 is
#: what nvcc typically allocates to the simple streaming kernels of the suite.
ASSUMED_REGISTERS_PER_THREAD = DEFAULT_REGISTERS_PER_THREAD

_FROZEN = ConfigDict(frozen=True, extra="forbid")

#: Relative slack between a bound and the prediction that rounding alone makes (the bound
#: recomputed by `analyze` over the same bytes and ceilings).
_ROUNDING = 1e-9


class SuiteRow(Displayed):
    """One kernel's line in the suite table (SI units)."""

    model_config = _FROZEN

    kernel: str
    label: str
    parameters: dict[str, Any]
    precision: str
    flops: float
    dram_bytes: float
    arithmetic_intensity: float
    requested_arithmetic_intensity: float | None
    attainable_flops_per_second: float
    dram_bytes_per_second: float
    #: The plain roofline (`roofline.analyze`) of the kernel's counts, with the L2 bytes the
    #: prediction serves (less what L1 keeps) where the kernel has a prediction: then
    #: ``time_lower_bound_seconds`` is ``roofline_seconds``.
    bound: str
    bound_level: str | None
    time_lower_bound_seconds: float
    fraction_of_peak: float
    threads_per_block: int | None
    blocks: int | None
    registers_per_thread: int | None
    registers_assumed: bool
    shared_memory_per_block: int | None
    occupancy: float | None
    occupancy_limiters: tuple[str, ...]
    predicted_seconds: float | None = None
    predicted_limiter: str | None = None
    #: The plain roofline of the work the prediction does (`Prediction.roofline_seconds`: the
    #: datasheet's ceilings, the bytes the prediction moves), never above ``predicted_seconds``;
    #: the table's "roofline" shows it where there is one.
    roofline_seconds: float | None = None

    headline = (
        shown("label", label="kernel"),
        Shown("bound", lambda r: r.bound if r.bound_level is None else f"{r.bound} ({r.bound_level})"),
        shown("attainable_flops_per_second", si("FLOP/s"), label="attainable"),
        shown("predicted_seconds", si("s"), label="predicted"), shown("predicted_limiter", label="limiter"),
        shown("registers_per_thread", label="registers"), shown("occupancy", percent),
        shown("occupancy_limiters", joined, label="occupancy_limiter"),
    )

    @model_validator(mode="after")
    def _bound_below_the_prediction(self) -> SuiteRow:
        # the suite's check of the time model's invariant (`roofline._predict.roofline_bound`)
        if self.predicted_seconds is not None:
            for name in ("time_lower_bound_seconds", "roofline_seconds"):
                bound = getattr(self, name)
                if bound is not None and bound > self.predicted_seconds * (1 + _ROUNDING):
                    raise RooflineError(f"kernel {self.label!r}: {name}={bound!r} is above predicted_seconds="
                                        f"{self.predicted_seconds!r}; the roofline bound never exceeds the prediction")
        return self


class SuiteReport(Displayed):
    """The suite analyzed on one GPU: the table rows and the roofline chart."""

    model_config = _FROZEN

    gpu: str
    rows: tuple[SuiteRow, ...]
    chart: RooflineChart

    headline = (shown("gpu"), Shown("kernels", lambda r: str(len(r.rows))))
    table_rows = staticmethod(lambda r: r.rows)


def _occupancy(device: GPU, launch: Launch | None) -> tuple[int | None, bool, float | None, tuple[str, ...]]:
    if launch is None:
        return None, False, None, ()
    assumed = launch.assuming_registers(ASSUMED_REGISTERS_PER_THREAD)
    result = occupancy_calculate(device.architecture, assumed)
    return assumed.registers_per_thread, launch.registers_per_thread is None, float(result.occupancy), tuple(
        result.limiters
    )


def _default_suite() -> tuple[Kernel, ...]:
    if not hasattr(models, "suite"):
        raise RooflineError("roofline.models.suite() is not available in this installation")
    return tuple(models.suite())


def _prediction(device: GPU, kernel: Kernel) -> Prediction | None:
    """`predict` for a kernel with a launch; None for bare counts or a launch that cannot run."""
    if kernel.launch is None:
        return None
    try:
        return predict(device, kernel)
    except ValueError:
        return None


def analyze_suite(
    gpu: GPU | str = DEFAULT_GPU, kernels: Iterable[Kernel | KernelLike] | None = None, *,
    progress: Progress = no_progress,
) -> SuiteReport:
    """Analyze kernels (default: `roofline.models.suite()`) on a GPU: roofline bound, time
    lower bound, the occupancy of each kernel's launch (``occupancy.calculate``) and the
    occupancy-aware predicted time (`roofline.predict`).

    Each kernel is a `roofline.Kernel` with ``dram_bytes``; one with a ``launch`` also
    gets its occupancy and predicted time. Launches without a register estimate are given
    `ASSUMED_REGISTERS_PER_THREAD` (``registers_assumed`` is then True).

    Parameters
    ----------
    gpu : GPU or str
        The GPU (a `roofline.GPU` or a database name).
    kernels : iterable of Kernel, optional
        The kernels; default the classic suite (built here: seconds of traffic analysis).
    progress : callable
        Receives one message per kernel, an `occupancy.common.ProgressStep` (done of total).

    Examples
    --------
    >>> from roofline import Kernel
    >>> report = analyze_suite("H100-SXM", [Kernel(name="k", flops=1e9, dram_bytes=1e9)])
    >>> report.rows[0].bound
    'memory'
    """
    device = lookup_gpu(gpu)
    if kernels is None:
        progress_step(progress, "building the kernel suite", 0, 1)
        kernels = _default_suite()
    else:
        kernels = tuple(kernel_of(k) for k in sequence("kernels", kernels, "a sequence of kernel models or counts"))
    rows = []
    for done, (kernel, label) in enumerate(zip(kernels, kernel_labels(kernels))):
        progress_step(progress, f"kernel {label}", done, len(kernels))
        launch = kernel.launch
        registers, assumed, occ, limiters = _occupancy(device, launch)
        predicted = _prediction(device, kernel)
        result = analyze(device, kernel if predicted is None else bound_counts(kernel, predicted.terms))
        requested = kernel.count("requested_bytes")
        rows.append(SuiteRow(
            kernel=result.name,
            label=label,
            parameters=dict(kernel.parameters),
            precision=result.precision,
            flops=result.flops,
            dram_bytes=result.bytes["dram"],
            arithmetic_intensity=result.arithmetic_intensity,
            requested_arithmetic_intensity=(
                result.flops / requested if requested else None
            ),
            attainable_flops_per_second=result.attainable_flops_per_second,
            dram_bytes_per_second=result.bytes["dram"] / result.time_lower_bound_seconds,
            bound=result.bound,
            bound_level=result.bound_level,
            time_lower_bound_seconds=result.time_lower_bound_seconds,
            fraction_of_peak=result.fraction_of_peak,
            threads_per_block=launch.threads_per_block if launch is not None else None,
            blocks=launch.blocks if launch is not None else None,
            registers_per_thread=registers,
            registers_assumed=assumed,
            shared_memory_per_block=(
                launch.static_shared_memory + launch.dynamic_shared_memory
                if launch is not None else None
            ),
            occupancy=occ,
            occupancy_limiters=limiters,
            predicted_seconds=None if predicted is None else predicted.seconds,
            predicted_limiter=None if predicted is None else predicted.limiter,
            roofline_seconds=None if predicted is None else predicted.roofline_seconds,
        ))
    chart = roofline_chart(device, kernels, title=f"Roofline: classic kernels on {device.name}")
    progress_step(progress, "suite analysed", len(kernels), len(kernels))
    return SuiteReport(gpu=device.name, rows=tuple(rows), chart=chart)


def _bound(row: SuiteRow) -> str:
    return row.bound if row.bound == "compute" else f"memory ({row.bound_level})"


def _registers(row: SuiteRow) -> str:
    if row.registers_per_thread is None:
        return "-"
    return f"{row.registers_per_thread}{'*' if row.registers_assumed else ''}"


def _occupancy_cell(row: SuiteRow) -> str:
    return "-" if row.occupancy is None else f"{row.occupancy:.0%}"


def _occupancy_limiters(row: SuiteRow) -> str:
    return joined(row.occupancy_limiters) if row.occupancy is not None else "-"


def _microseconds(seconds: float | None) -> str:
    """Four significant digits, never an exponent (24680, not 2.468e+04)."""
    if seconds is None:
        return "-"
    value = seconds * 1e6
    return f"{value:.0f}" if value >= 1000 else f"{value:.4g}"


def _roofline_time(row: SuiteRow) -> float:
    return row.roofline_seconds if row.roofline_seconds is not None else row.time_lower_bound_seconds


class _Column(NamedTuple):
    """One column of the suite table: its header, its cell for a row, and whether its cells are
    numbers (aligned right; names align left)."""

    header: str
    cell: Callable[[SuiteRow], str]
    number: bool = False


_time = si("s", 4)
#: Every column: the wide table and suite.md.
_WIDE = (
    _Column("kernel", lambda r: r.label),
    _Column("AI requested", lambda r: "-" if r.requested_arithmetic_intensity is None
            else f"{r.requested_arithmetic_intensity:.3g}", True),
    _Column("AI DRAM", lambda r: f"{r.arithmetic_intensity:.3g}", True),
    _Column("TFLOP/s", lambda r: f"{r.attainable_flops_per_second / 1e12:.3g}", True),
    _Column("DRAM GB/s", lambda r: f"{r.dram_bytes_per_second / 1e9:.0f}", True),
    _Column("bound", _bound),
    _Column("roofline (us)", lambda r: _microseconds(_roofline_time(r)), True),
    _Column("predicted (us)", lambda r: _microseconds(r.predicted_seconds), True),
    _Column("limiter", lambda r: r.predicted_limiter or "-"),
    _Column("threads/block", lambda r: "-" if r.threads_per_block is None else str(r.threads_per_block), True),
    _Column("regs", _registers, True),
    _Column("occupancy", _occupancy_cell, True),
    _Column("occupancy limiter", _occupancy_limiters),
)
#: The default table: what the demo is about (the bound, the times and their limiter, the
#: occupancy and its limiter), abbreviated to fit 100 characters a line.
_DEFAULT = (
    _Column("kernel", lambda r: r.label),
    _Column("bound", lambda r: r.bound if r.bound == "compute" else str(r.bound_level)),
    _Column("roofline", lambda r: _time(_roofline_time(r)), True),
    _Column("predicted", lambda r: "-" if r.predicted_seconds is None else _time(r.predicted_seconds), True),
    _Column("limiter", lambda r: r.predicted_limiter or "-"),
    _Column("regs", _registers, True),
    _Column("occ", _occupancy_cell, True),
    _Column("occ limiter", _occupancy_limiters),
)
_ROOFLINE = ("the plain roofline (the datasheet's ceilings) of the bytes and flops the prediction moves "
             "(at L2 the bytes L1 does not keep), never above the prediction")
_PREDICTED = "roofline.predict (occupancy, Little's law, block scheduling, waves; docs/prediction.md)"
_WIDE_LEGEND = textwrap.fill(
    "AI requested = flops / bytes the code requests (the textbook ratio); AI DRAM = flops / estimated DRAM "
    f"bytes; roofline = {_ROOFLINE}; predicted = {_PREDICTED}", 100)
_DEFAULT_LEGEND = textwrap.fill(
    f"bound: the roofline ceiling that binds; roofline: {_ROOFLINE}; predicted: {_PREDICTED}; occ: occupancy; "
    "--wide adds the arithmetic intensities, TFLOP/s, DRAM GB/s and threads per block", 100)


def format_suite_table(report: SuiteReport, *, wide: bool = False) -> str:
    """The suite as an aligned text table (what `gpuroof demo` prints).

    Parameters
    ----------
    report : SuiteReport
        The analyzed suite.
    wide : bool
        Every column (arithmetic intensities, throughputs, threads per block), times in
        microseconds; the default table keeps the bound, the times, the limiter and the
        occupancy, and fits 100 characters a line for the demo's kernels.

    Raises
    ------
    TypeError
        A `report` that is not a `SuiteReport`, or a `wide` that is not a bool.
    """
    if not isinstance(report, SuiteReport):
        raise TypeError(f"report must be a SuiteReport, not {type(report).__name__}")
    if not isinstance(wide, bool):
        raise TypeError(f"wide must be a bool, not {type(wide).__name__}")
    columns = _WIDE if wide else _DEFAULT
    rows = [[c.header for c in columns]] + [[c.cell(r) for c in columns] for r in report.rows]
    widths = [max(len(r[i]) for r in rows) for i in range(len(columns))]
    lines = ["  ".join(c.rjust(w) if column.number else c.ljust(w) for column, c, w in zip(columns, r, widths)).rstrip()
             for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    lines.append(_WIDE_LEGEND if wide else _DEFAULT_LEGEND)
    if any(r.registers_assumed for r in report.rows):
        lines.append(f"* registers per thread assumed ({ASSUMED_REGISTERS_PER_THREAD}): "
                     "the model has no estimate")
    return "\n".join(lines)


def suite_to_markdown(report: SuiteReport) -> str:
    """The suite as a Markdown table."""
    lines = [f"# Classic kernels on {report.gpu}", "",
             "| " + " | ".join(c.header for c in _WIDE) + " |", "|" + "---|" * len(_WIDE)]
    lines += ["| " + " | ".join(c.cell(r).replace("|", "\\|") for c in _WIDE) + " |"
              for r in report.rows]
    if any(r.registers_assumed for r in report.rows):
        lines += ["", f"\\* registers per thread assumed ({ASSUMED_REGISTERS_PER_THREAD})."]
    return "\n".join(lines) + "\n"


def suite_to_csv(report: SuiteReport) -> str:
    """The suite as CSV, SI units, one row per kernel."""
    out = io.StringIO()
    fields = list(SuiteRow.model_fields)
    writer = csv.DictWriter(out, fieldnames=["gpu", *fields], lineterminator="\n")
    writer.writeheader()
    for row in report.rows:
        data = row.model_dump(mode="json")
        data["parameters"] = json.dumps(data["parameters"], sort_keys=True)
        data["occupancy_limiters"] = "+".join(data["occupancy_limiters"])
        writer.writerow({"gpu": report.gpu, **data})
    return out.getvalue()


def write_suite_report(report: SuiteReport, out_dir: str | Path) -> dict[str, Path]:
    """Write the suite table (JSON, CSV, Markdown), the chart (JSON, CSV) and the roofline
    plot (PNG, SVG) into `out_dir` (created if needed); return the paths by kind.

    Each file is written atomically (a temporary file, then a rename), so an interrupted
    run leaves the previous files intact; the folder is checked before anything is drawn.

    Raises
    ------
    OSError
        If `out_dir` cannot be written.
    TypeError
        If `report` is not a `SuiteReport`.
    """

    if not isinstance(report, SuiteReport):
        raise TypeError(f"report must be a SuiteReport, not {type(report).__name__}")
    out = check_writable(out_dir, RooflineError, folder=True, name="out_dir")
    paths = {
        "table_json": out / "suite.json",
        "table_csv": out / "suite.csv",
        "table_markdown": out / "suite.md",
        "chart_json": out / "roofline.json",
        "chart_csv": out / "roofline.csv",
        "plot_png": out / "roofline.png",
        "plot_svg": out / "roofline.svg",
    }
    # Through pydantic's JSON, which writes an infinite intensity (no DRAM bytes) as null:
    # the file stays standard JSON.
    payload = {"schema": "gpuroof.suite", "schema_version": 2,
               **json.loads(report.model_dump_json(exclude={"chart"}))}
    write_atomic(paths["table_json"], dumps_json(payload), RooflineError)
    write_atomic(paths["table_csv"], suite_to_csv(report), RooflineError)
    write_atomic(paths["table_markdown"], suite_to_markdown(report), RooflineError)
    save_chart(report.chart, paths["chart_json"])
    save_chart(report.chart, paths["chart_csv"])
    try:
        knee = calibration(report.gpu).knee_sharpness
    except RooflineError:  # a custom GPU outside the database has no calibration
        knee = None
    fig = plot_roofline(report.chart, path=paths["plot_png"], knee_sharpness=knee)
    save_figure(fig, paths["plot_svg"], RooflineError)
    return paths
