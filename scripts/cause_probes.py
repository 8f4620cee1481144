"""Measure the probes of the causes seen on unseen code on the GPU (validate.probes._cause_probes.main).

    python scripts/cause_probes.py [--out FILE] [--only CAUSE ...] [--budget SECONDS]

Prints the table (progress on stderr); the exit code is the number of variants that failed.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from validate.probes._cause_probes import BUDGET_SECONDS, main  # noqa: E402
from validate.probes._cause_variants import CAUSES  # noqa: E402

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, help="write the results as JSON here")
    parser.add_argument("--only", nargs="+", default=(), choices=sorted(CAUSES), help="run only these causes")
    parser.add_argument("--budget", type=float, default=BUDGET_SECONDS,
                        help="device seconds of each variant's timed launches")
    args = parser.parse_args()
    sys.exit(main(out=args.out, only=args.only, budget_seconds=args.budget))
