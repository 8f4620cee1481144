"""Print the measured sections of a GPU's facts file from a `gpuroof validate` report.

    python scripts/facts_sections.py docs/results/h200/report.json [gpc_layout.json] >> sections.toml

Reads one device's report (``report.json``; a report of several devices needs ``--device N``)
and prints, as TOML for ``roofline/data/gpus/<gpu>.toml``: ``[calibration.*]`` (the measured
parameters and figures, with the sources the report gives), ``[ceilings.*]`` (each ceiling,
ours against the best library figure, throttling), ``[host_links.*]`` (the transfer fits), and,
given the ``gpc_layout.json`` of `scripts/cluster_device.py` (`validate.measure_gpc_layout`),
``[gpc_layout]``. Every entry names the device, the driver and the date it was measured on.
Review the output before pasting it into the facts file: `tests/roofline/test_facts.py` then
checks it against the models and the datasheet.
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["gpc_layout_section", "main", "sections"]


def _value(value: object) -> str:
    """One TOML value: JSON's strings and numbers are TOML's, 5 significant digits for floats."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{value!r} has no TOML form a facts file accepts")
        return f"{value:.5g}" if value != int(value) or abs(value) >= 1e6 else str(int(value))
    if isinstance(value, Mapping):
        return "{ " + ", ".join(f"{k} = {_value(v)}" for k, v in value.items()) + " }"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    return json.dumps(value)


def _table(header: str, entries: Mapping[str, object]) -> str:
    lines = [f"[{header}]"] + [f"{k} = {_value(v)}" for k, v in entries.items() if v is not None]
    return "\n".join(lines) + "\n"


def sections(report: Mapping[str, Any]) -> str:
    """The ``[calibration]``, ``[ceilings]`` and ``[host_links]`` tables of one device's report."""
    device = report["device"]
    where = (f"an {device['name']}, CUDA driver {device['driver_version']}, {report['created_utc'][:10]}, "
             "gpuroof validate")
    out = [f"# measured by `gpuroof validate` on an {device['name']}, CUDA driver {device['driver_version']}, "
           f"{report['created_utc'][:10]}"]
    calibration = report.get("calibration") or {}
    sources = calibration.get("sources", {})
    for name, source in sources.items():
        if source.startswith("measured") and calibration.get(name) is not None:
            out.append(_table(f"calibration.{name}", {"value": float(calibration[name]), "source": source}))
    for item in (report.get("ceilings") or {}).get("items", ()):
        reference = item.get("reference_name")
        library = item.get("reference_library")
        clocks = item.get("clocks") or {}
        out.append(_table(f"ceilings.{item['name']}", {
            "value": float(max(item["measured"], item.get("reference_value") or 0.0)),
            "unit": item["unit"],
            "ours": float(item["measured"]),
            "reference": f"{reference} ({library})" if reference and library else reference,
            "reference_value": None if item.get("reference_value") is None else float(item["reference_value"]),
            "throttled": clocks.get("throttled"),
            "source": f"measured: {item['note']}; {where}",
        }))
    for fit in (report.get("host_links") or {}).get("fits", ()):
        sizes = fit.get("sizes") or ()
        span = f"sizes {min(sizes) >> 20} MiB to {max(sizes) >> 20} MiB; " if sizes else ""
        out.append(_table(f"host_links.{fit['memory']}.{fit['direction']}", {
            "source": f"measured: {fit['memory']} memory, {fit['direction']}; {span}{where}",
            "max_relative_error": float(fit["max_relative_error"]),
            "segments": [{k: (float(v) if k != "from_bytes" else int(v)) for k, v in seg.items()}
                         for seg in fit["segments"]],
        }))
    return "\n".join(out)


def gpc_layout_section(measurement: Mapping[str, Any], *, measured_on: str) -> str:
    """The ``[gpc_layout]`` table of a `validate.GpcLayoutMeasurement` (its JSON).

    The cluster limits are Hopper's (8 blocks per SM in a cluster launch, clusters of 8,
    16 non-portable), as `validate.checks._clusters.measured_layout` assumes; check them against
    the driver with `validate.check_clusters` before packaging the layout.
    """
    groups: Sequence[Sequence[int]] = measurement["gpc_sms"]
    launches = measurement.get("launches", ())
    return _table("gpc_layout", {
        "sms_per_gpc": [len(g) for g in groups],
        "max_blocks_per_sm_in_cluster": 8,
        "max_cluster_size": 8,
        "max_nonportable_cluster_size": 16,
        "measured": True,
        "source": (f"Measured on {measured_on}: validate.measure_gpc_layout joined SMs that held blocks of one "
                   f"cluster over {len(launches)} cluster launches, giving these {len(groups)} groups"),
    })


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report", type=Path, help="report.json of gpuroof validate")
    parser.add_argument("gpc_layout", type=Path, nargs="?", help="gpc_layout.json of scripts/cluster_device.py")
    parser.add_argument("--device", type=int, default=0, help="the device's index in a report of several")
    args = parser.parse_args(argv)
    data = json.loads(args.report.read_text(encoding="utf-8"))
    report = data["reports"][args.device] if "reports" in data else data
    print(sections(report))
    if args.gpc_layout is not None:
        device = report["device"]
        on = f"an {device['name']} (driver {device['driver_version']}, {report['created_utc'][:10]})"
        print(gpc_layout_section(json.loads(args.gpc_layout.read_text(encoding="utf-8")), measured_on=on))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
