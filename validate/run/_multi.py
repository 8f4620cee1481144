"""Every GPU of a host at once, and merging reports of many devices or hosts.

`run_validation_devices` starts one process per GPU (``multiprocessing`` with the spawn
method, so no CUDA state is inherited), each running `run_validation` into its own folder
``device-N``; the parent merges their reports into one `ReportSet` with the spread between
devices of the same model. `merge_reports` does the same for report.json files already
written, from one host or many: the schema is the same for one device or many.
"""

from __future__ import annotations

import datetime as _dt
import json
import multiprocessing
import os
import statistics
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from occupancy.common import as_path, check_writable, pydantic_error, read_json, write_atomic
from pydantic import ValidationError
from roofline import RooflineError

from ..device import DeviceError, cuda_modules, driver_call, require_driver
from ..report import REPORT_SCHEMA_VERSION, ReportSet, SpreadRow, ValidationReport, render_markdown
from ..suite import check_families
from ._run import check_run_arguments, run_validation

__all__ = [
    "device_count",
    "device_spread",
    "headline_figures",
    "load_report_set",
    "merge_report_sets",
    "merge_reports",
    "render_report_set",
    "run_validation_devices",
    "write_report_set",
]


def headline_figures(report: ValidationReport) -> dict[str, tuple[float, str]]:
    """The figures compared between devices: name to (value, unit).

    Ceilings (the ceiling used), per-level latencies, launch cost, working-set plateaus,
    host-link fits and the run time.
    """
    out: dict[str, tuple[float, str]] = {}
    for item in report.ceilings.items:
        out[f"ceiling {item.name}"] = (item.ceiling, item.unit)
    if report.latency is not None:
        for name, value in report.latency.levels.model_dump().items():
            if name.endswith("_seconds") and value is not None:
                out[f"latency {name.removesuffix('_seconds')}"] = (value, "seconds")
    if report.launch is not None:
        out["launch queued_kernel"] = (report.launch.queued_kernel_seconds, "seconds")
        out["launch graph_kernel"] = (report.launch.graph_kernel_seconds, "seconds")
    if report.working_set is not None:
        for name, value in report.working_set.plateaus.model_dump().items():
            if name.endswith("_per_second") and value is not None:
                out[f"working set {name}"] = (value, "bytes_per_second")
    if report.host_links is not None:
        for fit in report.host_links.fits:
            out[f"host link {fit.memory} {fit.direction}"] = (fit.bytes_per_second, "bytes_per_second")
    out["runtime"] = (report.runtime_seconds, "seconds")
    return out


def _device_label(report: ValidationReport) -> str:
    return f"{report.host or '?'}:{report.device.index}"


def device_spread(reports: Sequence[ValidationReport]) -> tuple[SpreadRow, ...]:
    """For each device model with two or more devices, the spread of every headline figure.

    Raises
    ------
    TypeError
        When `reports` is not a sequence of `ValidationReport`.

    Examples
    --------
    >>> device_spread([])
    ()
    """
    if isinstance(reports, (str, bytes)) or not isinstance(reports, Sequence):
        raise TypeError(f"reports must be a sequence of ValidationReport, not {type(reports).__name__}")
    for i, report in enumerate(reports):
        if not isinstance(report, ValidationReport):
            raise TypeError(f"reports[{i}] must be a ValidationReport, not {type(report).__name__}")
    groups: dict[str, list[ValidationReport]] = {}
    for report in reports:
        groups.setdefault(report.device.name, []).append(report)
    rows = []
    for model, members in sorted(groups.items()):
        if len(members) < 2:
            continue
        figures = [headline_figures(r) for r in members]
        for name in sorted(set.intersection(*(set(f) for f in figures))):
            values = tuple(f[name][0] for f in figures)
            middle = statistics.median(values)
            rows.append(SpreadRow(model=model, figure=name, unit=figures[0][name][1],
                                  devices=tuple(_device_label(r) for r in members), values=values,
                                  minimum=min(values), maximum=max(values), median=middle,
                                  spread=(max(values) - min(values)) / middle if middle else 0.0))
    return tuple(rows)


def load_report_set(path: str | os.PathLike[str]) -> ReportSet:
    """Read a report.json (or the folder holding one): a `ReportSet`, or a single report of
    schema 1 (before reports of many devices), which becomes a set of one.

    Raises
    ------
    roofline.RooflineError
        When the file holds neither, or is truncated, not UTF-8, not JSON, nested too deep or
        holds a NaN; the message names the file.
    OSError
        When the file cannot be read.
    """
    file = as_path(path, RooflineError)
    if file.is_dir():
        file = file / "report.json"
    data = read_json(file, RooflineError)
    try:
        if isinstance(data, dict) and "reports" in data:
            return ReportSet.model_validate(data)
        if isinstance(data, dict) and "device" in data:
            report = ValidationReport.model_validate(data)
            return ReportSet(created_utc=report.created_utc, reports=(report,))
    except ValidationError as exc:
        raise pydantic_error(exc, RooflineError, f"path={str(file)!r} is not a valid gpuroof validation report") from None
    raise RooflineError(f"path={str(file)!r} holds no gpuroof validation report")


def merge_report_sets(sets: Iterable[ReportSet], errors: dict[str, str] | None = None) -> ReportSet:
    """One set holding every report of `sets`, with the spread recomputed."""
    reports: list[ValidationReport] = []
    merged_errors = dict(errors or {})
    for one in sets:
        reports.extend(one.reports)
        merged_errors.update(one.errors)
    reports.sort(key=lambda r: (r.host, r.device.index))
    return ReportSet(schema_version=REPORT_SCHEMA_VERSION,
                     created_utc=_dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
                     reports=tuple(reports), spread=device_spread(reports), errors=merged_errors)


def _format(value: float, unit: str) -> str:
    if unit == "seconds":
        if value < 1e-6:
            return f"{value * 1e9:,.0f} ns"
        return f"{value * 1e6:,.2f} us" if value < 1e-3 else f"{value:,.1f} s"
    if unit == "bytes_per_second":
        return f"{value / 1e9:,.1f} GB/s"
    return f"{value / 1e12:,.1f} T{'OP' if unit == 'ops_per_second' else 'FLOP'}/s"


def render_report_set(report_set: ReportSet, assets: Sequence[str] | None = None) -> str:
    """Markdown of a set: a single report as it is; many with a summary, the spread and one
    section per device (``assets[i]`` prefixes device i's image paths)."""
    reports = report_set.reports
    if len(reports) == 1 and not report_set.errors:
        return render_markdown(reports[0], assets=(assets or [""])[0])
    lines = [f"# gpuroof validation: {len(reports)} devices", "",
             f"Schema {report_set.schema_version}, merged {report_set.created_utc}.", "",
             "| device | model | run (s) | DRAM copy | BF16 tensor | FP64 tensor | L2 hit | DRAM latency "
             "| pinned h2d |", "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in reports:
        f = headline_figures(r)

        def cell(name: str) -> str:
            return "-" if name not in f else _format(*f[name])

        lines.append(f"| {_device_label(r)} | {r.device.name} | {r.runtime_seconds:.1f} | {cell('ceiling dram_copy')} "
                     f"| {cell('ceiling bf16_tensor')} | {cell('ceiling fp64_tensor')} | {cell('latency l2_hit')} "
                     f"| {cell('latency dram')} | {cell('host link pinned h2d')} |")
    for name, error in report_set.errors.items():
        lines.append(f"| {name} | failed: {error} | | | | | | | |")
    lines += ["", "## Spread between devices of the same model", ""]
    if report_set.spread:
        lines += ["(max - min) / median of each figure over the devices of one model.", "",
                  "| model | figure | min | median | max | spread |", "| --- | --- | --- | --- | --- | --- |"]
        for row in report_set.spread:
            lines.append(f"| {row.model} | {row.figure} | {_format(row.minimum, row.unit)} | "
                         f"{_format(row.median, row.unit)} | {_format(row.maximum, row.unit)} | {row.spread:.1%} |")
    else:
        lines.append("No model has two devices here.")
    lines.append("")
    for i, report in enumerate(reports):
        prefix = assets[i] if assets and i < len(assets) else ""
        lines += [render_markdown(report, level=2, assets=prefix), ""]
    return "\n".join(lines)


def write_report_set(report_set: ReportSet, out: str | os.PathLike[str],
                     assets: Sequence[str] | None = None) -> dict[str, Path]:
    """Write report.json and report.md of a set into `out` (atomically)."""
    folder = Path(out)
    json_path, md_path = folder / "report.json", folder / "report.md"
    write_atomic(json_path, report_set.model_dump_json(indent=2) + "\n", RooflineError)
    write_atomic(md_path, render_report_set(report_set, assets), RooflineError)
    return {"json": json_path, "markdown": md_path}


def merge_reports(paths: Sequence[str | os.PathLike[str]], out: str | os.PathLike[str]) -> ReportSet:
    """Merge report.json files (or folders holding them) into one set written to `out`.

    Raises
    ------
    roofline.RooflineError
        For an empty list or a file that holds no report (`load_report_set`).
    OSError
        When a file cannot be read or `out` cannot be written (checked before any file is read).
    """
    if isinstance(paths, (str, bytes, os.PathLike)) or not isinstance(paths, Sequence):
        raise TypeError(f"paths must be a sequence of report files or folders, not {type(paths).__name__}")
    if not paths:
        raise RooflineError("paths is empty; give at least one report.json or folder")
    check_writable(out, RooflineError, folder=True, name="out")
    merged = merge_report_sets([load_report_set(p) for p in paths])
    write_report_set(merged, out)
    return merged


def device_count() -> int:
    """GPUs the driver sees (``cuDeviceGetCount``), without creating a context.

    Raises
    ------
    DeviceError
        No cuda-python, or no NVIDIA driver (cuda.bindings cannot load libcuda).
    """
    require_driver()
    return int(driver_call(cuda_modules().driver.cuDeviceGetCount))


def _child(device: int, out: str, quick: bool, kernels: Sequence[str] | None, seed: int | None,
           families: Sequence[str] | None = None) -> None:
    def progress(message: str) -> None:
        print(f"gpuroof validate [gpu {device}]: {message}", file=sys.stderr, flush=True)

    run_validation(out=out, quick=quick, kernels=kernels, device=device, seed=seed, families=families,
                   progress=progress)


def run_validation_devices(
    devices: Sequence[int] | str = "all",
    *,
    out: str | os.PathLike[str],
    quick: bool = False,
    kernels: Sequence[str] | None = None,
    seed: int | None = None,
    families: Sequence[str] | None = None,
    progress: Callable[[str], None] = lambda message: print(f"gpuroof validate: {message}", file=sys.stderr,
                                                             flush=True),
) -> ReportSet:
    """Validate several GPUs of this host at once, one process each, and merge their reports.

    Parameters
    ----------
    devices : "all" or sequence of int
        CUDA device indices.
    out : path
        Folder: ``device-N/`` holds each device's files, ``report.json``/``report.md`` the merge.
    quick, kernels, seed, families
        As `run_validation`.
    progress : callable
        Receives the parent's lines (each child prints its own, tagged with its GPU).

    Returns
    -------
    ReportSet

    Raises
    ------
    DeviceError
        No GPU, a device index this host does not have, or every device's run failed.
    roofline.RooflineError
        Bad arguments (as `run_validation`; also an empty or repeated device list), checked
        before any process starts.
    OSError
        If `out` cannot be written (checked before any process starts).
    """
    if isinstance(devices, str):
        if devices != "all":
            raise RooflineError(f"devices={devices!r} must be 'all' or a sequence of device indices")
    elif not isinstance(devices, Sequence):
        raise TypeError(f"devices must be 'all' or a sequence of ints, not {type(devices).__name__}")
    elif not devices:
        raise RooflineError("devices is empty; give 'all' or at least one device index")
    if out is None:
        raise TypeError("out must be a folder (str or os.PathLike), not None")
    # Every argument is checked here, in the parent, before a process starts for a device.
    for index in ([0] if devices == "all" else devices):
        check_run_arguments(out=out, quick=quick, kernels=kernels, device=index, seed=seed, progress=progress)
    check_families(families)
    if devices != "all" and len(set(devices)) != len(devices):
        raise RooflineError(f"devices={list(devices)} names a device twice")
    count = device_count()
    indices = list(range(count)) if devices == "all" else [int(d) for d in devices]
    if not indices:
        raise DeviceError("no CUDA GPU found")
    missing = [i for i in indices if i >= count]
    if missing:
        raise DeviceError(f"devices={indices}: this host has {count} GPUs (0 to {count - 1}); no device {missing[0]}")
    folder = Path(out)
    context = multiprocessing.get_context("spawn")
    processes = {}
    for index in indices:
        process = context.Process(target=_child, args=(index, str(folder / f"device-{index}"), quick,
                                                       list(kernels) if kernels else None, seed,
                                                       None if families is None else list(families)))
        process.start()
        processes[index] = process
    progress(f"validating {len(indices)} devices at once: {', '.join(map(str, indices))}")
    sets, errors = [], {}
    for index, process in processes.items():
        process.join()
        path = folder / f"device-{index}" / "report.json"
        if process.exitcode != 0 or not path.exists():
            errors[f"device {index}"] = f"the run exited with code {process.exitcode}"
            continue
        sets.append(load_report_set(path))
    if not sets:
        raise DeviceError(f"every device's run failed: {errors}")
    merged = merge_report_sets(sets, errors)
    write_report_set(merged, folder, [f"device-{r.device.index}/" for r in merged.reports])
    progress(f"merged {len(merged.reports)} reports into {folder / 'report.md'}")
    return merged
