"""Write roofline charts and kernel tables to JSON, CSV and Markdown, and read charts back."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from pydantic import ValidationError

from occupancy.common import as_path, pydantic_error, read_json, read_text, write_atomic

from ._chart import CHART_SCHEMA_VERSION, BandwidthPoint, Ceiling, ChartPoint, RooflineChart
from ._errors import RooflineError

__all__ = ["CHART_CSV_COLUMNS", "chart_to_csv", "chart_to_json", "load_chart", "save_chart"]

#: Columns of the CSV form: one row per ceiling ("record" = "ceiling"), roofline point
#: ("point") or bandwidth point ("bandwidth").
CHART_CSV_COLUMNS: tuple[str, ...] = (
    "schema_version", "record", "gpu", "precision", "title", "name", "kind", "level",
    "origin", "value", "arithmetic_intensity", "flops_per_second", "bytes_per_second", "bound", "label",
    "formula", "source",
)
#: Schema versions `load_chart` reads from JSON, and from CSV (from version 3 on, whose end
#: record tells a truncated file from a smaller chart). Version 3's "predicted" points are
#: read as "roofline" (`ChartPoint`'s former origin name).
_READABLE_VERSIONS = (1, 2, 3, CHART_SCHEMA_VERSION)
_READABLE_CSV_VERSIONS = (3, CHART_SCHEMA_VERSION)


def chart_to_json(chart: RooflineChart) -> str:
    """The chart as JSON text (``{"schema": "gpuroof.roofline", "schema_version": 4, ...}``)."""
    payload = {"schema": "gpuroof.roofline", **chart.model_dump(mode="json")}
    return json.dumps(payload, indent=2, allow_nan=False)


def chart_to_csv(chart: RooflineChart) -> str:
    """The chart as CSV text with the columns in `CHART_CSV_COLUMNS`.

    One row per ceiling and per point, then an ``end`` row whose ``value`` is the number
    of rows before it: a file cut short at a line boundary is told from a smaller chart.
    """
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=CHART_CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    common = {"schema_version": chart.schema_version, "gpu": chart.gpu,
              "precision": chart.precision, "title": chart.title}
    for c in chart.ceilings:
        writer.writerow({**common, "record": "ceiling", "name": c.name, "kind": c.kind,
                         "origin": c.origin, "value": repr(c.value), "label": c.label,
                         "formula": c.formula, "source": c.source})
    for p in chart.points:
        writer.writerow({**common, "record": "point", "name": p.kernel, "level": p.level,
                         "origin": p.origin, "bound": p.bound,
                         "arithmetic_intensity": repr(p.arithmetic_intensity),
                         "flops_per_second": repr(p.flops_per_second)})
    for b in chart.bandwidth_points:
        writer.writerow({**common, "record": "bandwidth", "name": b.kernel, "level": b.level,
                         "origin": b.origin, "bytes_per_second": repr(b.bytes_per_second)})
    writer.writerow({**common, "record": "end",
                     "value": len(chart.ceilings) + len(chart.points) + len(chart.bandwidth_points)})
    return out.getvalue()


def save_chart(chart: RooflineChart, path: str | Path) -> Path:
    """Write `chart` to ``.json`` or ``.csv`` (chosen by the suffix), atomically; return the path.

    Raises
    ------
    RooflineError
        If the suffix is neither.
    TypeError
        If `chart` is not a `RooflineChart`.
    """

    if not isinstance(chart, RooflineChart):
        raise TypeError(f"chart must be a RooflineChart, not {type(chart).__name__}")
    path = as_path(path, RooflineError)
    suffix = path.suffix.lower()
    if suffix == ".json":
        text = chart_to_json(chart) + "\n"
    elif suffix == ".csv":
        text = chart_to_csv(chart)
    else:
        raise RooflineError(f"path={str(path)!r} must end in .json or .csv")
    return write_atomic(path, text, RooflineError)


def _check_version(version: object, path: Path, readable: tuple[int, ...]) -> None:
    try:
        number = int(version)
    except (TypeError, ValueError):
        number = None
    if number not in readable:
        raise RooflineError(
            f"schema_version={version!r} in {str(path)!r} is not supported; this gpuroof reads "
            f"version {' or '.join(map(str, readable))}"
        )


def _number(row: dict[str, str], key: str) -> float:
    try:
        return float(row[key])
    except (TypeError, ValueError):
        raise RooflineError(f"{key}={row[key]!r} is not a number") from None


def _csv_chart(text: str, path: Path) -> RooflineChart:
    rows = list(csv.DictReader(io.StringIO(text)))
    if not rows:
        raise RooflineError(f"path={str(path)!r} has no rows")
    if any(None in row or None in row.values() for row in rows):
        raise RooflineError(f"path={str(path)!r} has rows whose cells do not match the header")
    missing = [c for c in CHART_CSV_COLUMNS if c not in rows[0]]
    if missing:
        raise RooflineError(f"path={str(path)!r} lacks the columns {', '.join(missing)}")
    _check_version(rows[0]["schema_version"], path, _READABLE_CSV_VERSIONS)
    *body, last = rows
    if last["record"] != "end":
        raise RooflineError(
            f"path={str(path)!r} has no end record: the file is truncated (or not written by save_chart)"
        )
    if _number(last, "value") != len(body):
        raise RooflineError(
            f"path={str(path)!r} says it holds {last['value']} rows but has {len(body)}: the file is damaged"
        )
    ceilings, points, bandwidth = [], [], []
    for row in body:
        if row["schema_version"] != rows[0]["schema_version"]:
            raise RooflineError(f"path={str(path)!r} mixes schema versions")
        if row["record"] == "ceiling":
            ceilings.append(Ceiling(
                name=row["name"], kind=row["kind"], value=_number(row, "value"),
                origin=row["origin"], label=row["label"], formula=row["formula"],
                source=row["source"]))
        elif row["record"] == "point":
            points.append(ChartPoint(
                kernel=row["name"], level=row["level"], origin=row["origin"],
                bound=row["bound"],
                arithmetic_intensity=_number(row, "arithmetic_intensity"),
                flops_per_second=_number(row, "flops_per_second")))
        elif row["record"] == "bandwidth":
            bandwidth.append(BandwidthPoint(
                kernel=row["name"], level=row["level"], origin=row["origin"],
                bytes_per_second=_number(row, "bytes_per_second")))
        else:
            raise RooflineError(f"record={row['record']!r} must be 'ceiling', 'point' or 'bandwidth'")
    first = rows[0]
    return RooflineChart(gpu=first["gpu"], precision=first["precision"], title=first["title"],
                         ceilings=tuple(ceilings), points=tuple(points), bandwidth_points=tuple(bandwidth))


def load_chart(path: str | Path) -> RooflineChart:
    """Read a chart written by `save_chart` (JSON or CSV) so `plot_roofline` can redraw it.

    JSON of schema version 1 to 4 is read; CSV must be version 3 or 4, whose end record lets
    a truncated file be refused. Points of origin "predicted" (versions before 4) are read as
    "roofline", the roofline bound that `roofline_chart` wrote under that name.

    Raises
    ------
    RooflineError
        Wrong suffix, unsupported schema version, or malformed, truncated, non-UTF-8 or
        non-finite content; the message names the file.
    OSError
        If the file cannot be read.
    """

    path = as_path(path, RooflineError)
    suffix = path.suffix.lower()
    if suffix not in (".json", ".csv"):
        raise RooflineError(f"path={str(path)!r} must end in .json or .csv")
    try:
        if suffix == ".json":
            data = read_json(path, RooflineError)
            if not isinstance(data, dict) or data.pop("schema", "gpuroof.roofline") != "gpuroof.roofline":
                raise RooflineError(f"path={str(path)!r} is not a gpuroof roofline chart")
            _check_version(data.get("schema_version"), path, _READABLE_VERSIONS)
            data["schema_version"] = CHART_SCHEMA_VERSION
            return RooflineChart(**data)
        text = read_text(path, RooflineError)
        if "\x00" in text:
            raise RooflineError(f"path={str(path)!r} holds NUL bytes: not a CSV chart")
        return _csv_chart(text, path)
    except ValidationError as exc:
        raise pydantic_error(exc, RooflineError, f"path={str(path)!r} is not a valid roofline chart",
                             show_value=False) from None
    except csv.Error as exc:
        raise RooflineError(f"path={str(path)!r} is not valid CSV: {exc}") from None
