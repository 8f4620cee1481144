"""Compare two ``gpuroof validate`` reports of the same GPU model, figure by figure.

Usage: python scripts/compare_validate_reports.py BEFORE AFTER [--tolerance 0.05]

BEFORE and AFTER are report.json files (or the folders holding them), e.g. a run of the
previous commit and one of this commit on the same machine, or the committed
docs/results/<gpu>/report.json and a fresh run on that GPU. Printed, one line each: every
headline figure (ceilings, latencies, launch cost, working-set plateaus, host-link fits),
every numeric field of the run's calibration, the kernel suite's and the families' median
errors, with the relative difference; a line is marked ``<<`` where the difference passes
``--tolerance``. A run-to-run spread of a few percent is usual for the launch and latency
figures; the reports' own timing spreads say how much. Exit code 0 always (a reading aid,
not a verdict).
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import validate  # noqa: E402
from validate.run._multi import headline_figures  # noqa: E402


def _figures(report: validate.ValidationReport) -> dict[str, float]:
    out = {name: value for name, (value, _unit) in headline_figures(report).items() if name != "runtime"}
    for name, value in (report.calibration or {}).items():
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            out[f"calibration {name}"] = float(value)
    for regime in (*report.summary.regimes, report.summary.overall):
        for field in ("median_ape_percent", "median_ape_percent_measured_ceilings", "median_ape_percent_model"):
            value = getattr(regime, field)
            if value is not None:
                out[f"suite {regime.regime} {field}"] = value
    if report.families is not None and report.families.overall.predict_median_abs_percent is not None:
        out["families predict median |error| %"] = report.families.overall.predict_median_abs_percent
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before")
    parser.add_argument("after")
    parser.add_argument("--tolerance", type=float, default=0.05, help="relative difference to mark (default 0.05)")
    args = parser.parse_args()
    before = validate.load_report_set(args.before).reports[0]
    after = validate.load_report_set(args.after).reports[0]
    if before.device.name != after.device.name:
        print(f"note: {before.device.name} against {after.device.name}")
    old, new = _figures(before), _figures(after)
    marked = 0
    for name in sorted(old.keys() | new.keys()):
        a, b = old.get(name), new.get(name)
        if a is None or b is None:
            print(f"{name:60} {a!s:>14} {b!s:>14}   only in one report")
            continue
        change = (b / a - 1.0) if a else (0.0 if b == 0 else math.inf)
        mark = " <<" if abs(change) > args.tolerance else ""
        marked += bool(mark)
        print(f"{name:60} {a:14.6g} {b:14.6g} {change:+8.2%}{mark}")
    print(f"{len(old.keys() & new.keys())} figures in both, {marked} differ by more than {args.tolerance:.0%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
