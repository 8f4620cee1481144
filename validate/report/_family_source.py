"""`family_report`: the measured kernel families of a report, a file or a list of records,
predicted again with today's models, on the CPU (a changed model is re-checked against
measurements without a GPU)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import roofline
from occupancy.common import Progress, as_path, no_progress, pydantic_error, read_json
from pydantic import ValidationError
from roofline import RooflineError

from ..suite import FamilyRecord, FamilyReport, family_rows
from ._report import ReportSet, ValidationReport

__all__ = ["family_report"]


# ------------------------------------------------------------------ reading the records


def _records(items: Sequence[object], name: str, in_file: bool = False) -> list[FamilyRecord]:
    """`items` as records (each a FamilyRecord or its dict); a bad one named by its index."""
    records = []
    for i, item in enumerate(items):
        if isinstance(item, FamilyRecord):
            records.append(item)
            continue
        if not isinstance(item, dict):
            if in_file:
                raise RooflineError(f"{name}[{i}] is not a family record (an object)")
            raise TypeError(f"{name} must hold FamilyRecord or dicts, not {type(item).__name__}")
        try:
            records.append(FamilyRecord.model_validate(item))
        except ValidationError as exc:
            raise pydantic_error(exc, RooflineError, f"{name}[{i}] is not a family record", show_value=False) from None
    return records


def _from_report(report: ValidationReport) -> tuple[tuple[FamilyRecord, ...], str | None, str, str]:
    if report.families is None:
        raise RooflineError(f"the report of {report.device.name} holds no family measurements"
                            + (f" ({report.families_error})" if report.families_error else ""))
    where = report.families.source or f"gpuroof validate, {report.created_utc}, {report.host or 'a host'}"
    return report.families.records, report.comparison.database_gpu, report.device.name, where


def _from_set(report_set: ReportSet) -> tuple[tuple[FamilyRecord, ...], str | None, str, str]:
    if len(report_set.reports) != 1:
        devices = ", ".join(f"{r.host}:{r.device.index}" for r in report_set.reports)
        raise RooflineError(f"the report set holds {len(report_set.reports)} devices ({devices}); give one: "
                            "family_report(report_set.reports[i])")
    return _from_report(report_set.reports[0])


def _from_file(path: str | os.PathLike[str]) -> tuple[tuple[FamilyRecord, ...], str | None, str, str]:
    target = as_path(path, RooflineError, "source")
    if target.is_dir():
        target = target / "report.json"
    found = _read_file(target)
    if not found[0]:
        # an error, not an empty summary: a run whose families all failed, or a cut file
        raise RooflineError(f"source={str(target)!r} holds no family records; nothing to predict")
    return found


def _read_file(target: Path) -> tuple[tuple[FamilyRecord, ...], str | None, str, str]:
    data = read_json(target, RooflineError, "source")
    try:
        if isinstance(data, dict) and isinstance(data.get("reports"), list):
            return _from_set(ReportSet.model_validate(data))
        if isinstance(data, dict) and isinstance(data.get("rows"), list) and "families" in data:
            report = FamilyReport.model_validate(data)
            return report.records, report.gpu, report.device, report.source or str(target)
        if isinstance(data, dict) and isinstance(data.get("records"), list):
            gpu, device, where = data.get("gpu"), data.get("device", ""), data.get("source", "")
            return (tuple(_records(data["records"], f"source={str(target)!r}: records", in_file=True)),
                    gpu if isinstance(gpu, str) else None, device if isinstance(device, str) else "",
                    f"{target}: {where}" if isinstance(where, str) and where else str(target))
    except ValidationError as exc:
        raise pydantic_error(exc, RooflineError, f"source={str(target)!r}", show_value=False) from None
    raise RooflineError(f"source={str(target)!r} holds neither a report.json (reports), a families.json (rows) "
                        "nor a records file (records)")


def family_report(source: object, gpu: roofline.GPU | str | None = None, *, calibration: roofline.Calibration | None = None,
                  progress: Progress = no_progress) -> FamilyReport:
    """Predict every measured family launch with today's models, on the CPU, and summarise the errors.

    Parameters
    ----------
    source : ValidationReport, ReportSet, FamilyReport, path, or sequence of FamilyRecord
        The measurements: a validation report (of one device), a report.json or its
        folder, a families.json (`write_family_report`), a records file (a JSON object
        with ``records`` and ``gpu``, such as ``tests/data/families_h200.json``), or the
        records themselves (`FamilyRecord` or dicts).
    gpu : roofline.GPU or str, optional
        The GPU to predict for; default the one the source names (the report's database
        entry, the file's ``gpu``).
    calibration : roofline.Calibration, optional
        Parameters of `roofline.predict`; default the packaged calibration of `gpu`
        (`roofline.calibration`): a model or calibration changed since the run is what is
        checked. `gpuroof validate` passes the run's own fitted calibration.
    progress : callable
        Receives one message per launch predicted, an `occupancy.common.ProgressStep`.

    Returns
    -------
    FamilyReport

    Raises
    ------
    roofline.RooflineError
        No GPU named or unknown, a file that holds no family records, a report set of
        several devices, a calibration of another GPU.
    OSError
        If a file cannot be read.

    Examples
    --------
    >>> report = family_report("tests/data/families_h200.json")
    >>> report.gpu, report.overall.launches > 100
    ('H200', True)
    """
    if isinstance(source, FamilyReport):
        records, hint, device, where = source.records, source.gpu, source.device, source.source
    elif isinstance(source, ValidationReport):
        records, hint, device, where = _from_report(source)
    elif isinstance(source, ReportSet):
        records, hint, device, where = _from_set(source)
    elif isinstance(source, (str, os.PathLike)):
        records, hint, device, where = _from_file(source)
    elif isinstance(source, (list, tuple)):
        records, hint, device, where = _records(source, "source"), None, "", "records given"
    else:
        raise TypeError("source must be a ValidationReport, ReportSet, FamilyReport, a path or a sequence of "
                        f"FamilyRecord, not {type(source).__name__}")
    if gpu is None and hint is None:
        raise roofline.RooflineError("gpu= is needed: the source does not name the GPU its launches ran on")
    record = roofline.gpu(hint if gpu is None else gpu)
    if calibration is None:
        cal, used = roofline.calibration(record), f"packaged: roofline.calibration({record.name!r})"
    elif isinstance(calibration, roofline.Calibration):
        if calibration.gpu not in ("generic", record.name) and roofline.gpu(calibration.gpu).name != record.name:
            raise roofline.RooflineError(f"calibration is for gpu={calibration.gpu!r}, not {record.name!r}")
        cal, used = calibration, f"given: a calibration of {calibration.gpu}"
    else:
        raise TypeError(f"calibration must be a roofline.Calibration, not {type(calibration).__name__}")
    return family_rows(records, record, cal, used, device, where, progress)


