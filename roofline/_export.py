"""Write roofline charts and kernel tables to JSON, CSV and Markdown, and read charts back."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

from pydantic import ValidationError

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
#: Schema versions `load_chart` reads.
_READABLE_VERSIONS = (1, CHART_SCHEMA_VERSION)


def chart_to_json(chart: RooflineChart) -> str:
    """The chart as JSON text (``{"schema": "gpuroof.roofline", "schema_version": 1, ...}``)."""
    payload = {"schema": "gpuroof.roofline", **chart.model_dump(mode="json")}
    return json.dumps(payload, indent=2)


def chart_to_csv(chart: RooflineChart) -> str:
    """The chart as CSV text with the columns in `CHART_CSV_COLUMNS`."""
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
    return out.getvalue()


def save_chart(chart: RooflineChart, path: str | Path) -> Path:
    """Write `chart` to ``.json`` or ``.csv`` (chosen by the suffix); return the path.

    Raises
    ------
    RooflineError
        If the suffix is neither.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".json":
        path.write_text(chart_to_json(chart) + "\n", "utf-8")
    elif suffix == ".csv":
        path.write_text(chart_to_csv(chart), "utf-8")
    else:
        raise RooflineError(f"path={str(path)!r} must end in .json or .csv")
    return path


def _check_version(version: Any, path: Path) -> None:
    if int(version) not in _READABLE_VERSIONS:
        raise RooflineError(
            f"schema_version={version} in {str(path)!r} is not supported; this gpuroof reads "
            f"versions {', '.join(map(str, _READABLE_VERSIONS))}"
        )


def load_chart(path: str | Path) -> RooflineChart:
    """Read a chart written by `save_chart` (JSON or CSV) so `plot_roofline` can redraw it.

    Raises
    ------
    RooflineError
        Wrong suffix, unsupported schema version, or malformed content.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    text = path.read_text("utf-8")
    try:
        if suffix == ".json":
            data = json.loads(text)
            if data.pop("schema", "gpuroof.roofline") != "gpuroof.roofline":
                raise RooflineError(f"path={str(path)!r} is not a gpuroof roofline chart")
            _check_version(data.get("schema_version", CHART_SCHEMA_VERSION), path)
            data["schema_version"] = CHART_SCHEMA_VERSION
            return RooflineChart(**data)
        if suffix == ".csv":
            rows = list(csv.DictReader(io.StringIO(text)))
            if not rows:
                raise RooflineError(f"path={str(path)!r} has no rows")
            _check_version(rows[0]["schema_version"], path)
            ceilings, points, bandwidth = [], [], []
            for row in rows:
                if row["record"] == "ceiling":
                    ceilings.append(Ceiling(
                        name=row["name"], kind=row["kind"], value=float(row["value"]),
                        origin=row["origin"], label=row["label"], formula=row["formula"],
                        source=row["source"]))
                elif row["record"] == "point":
                    points.append(ChartPoint(
                        kernel=row["name"], level=row["level"], origin=row["origin"],
                        bound=row["bound"],
                        arithmetic_intensity=float(row["arithmetic_intensity"]),
                        flops_per_second=float(row["flops_per_second"])))
                elif row["record"] == "bandwidth":
                    bandwidth.append(BandwidthPoint(
                        kernel=row["name"], level=row["level"], origin=row["origin"],
                        bytes_per_second=float(row["bytes_per_second"])))
                else:
                    raise RooflineError(f"record={row['record']!r} must be 'ceiling', 'point' or 'bandwidth'")
            first = rows[0]
            return RooflineChart(gpu=first["gpu"], precision=first["precision"],
                                 title=first["title"], ceilings=tuple(ceilings),
                                 points=tuple(points), bandwidth_points=tuple(bandwidth))
    except (ValidationError, KeyError, ValueError) as exc:
        if isinstance(exc, RooflineError):
            raise
        raise RooflineError(f"path={str(path)!r} is not a valid roofline chart: {exc}") from None
    raise RooflineError(f"path={str(path)!r} must end in .json or .csv")
