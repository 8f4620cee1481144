"""Measure the corpus rules' probes on the GPU (validate.probes._rule_probes.main).

    python scripts/rule_probes.py --out FILE [--gpu "H100 SXM"] [--rules R ...] [--budget-seconds S]

The exit code is the number of launches that failed.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from validate.probes._rule_probes import main  # noqa: E402

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", required=True, help="JSON lines file, one line per launch")
    parser.add_argument("--gpu", default="H100 SXM", help="database GPU of the predictions (default: H100 SXM)")
    parser.add_argument("--rules", nargs="*", default=(), help="only these rules' probes")
    parser.add_argument("--budget-seconds", type=float, default=0.3, help="timing budget per launch")
    args = parser.parse_args()
    sys.exit(main(out=args.out, gpu=args.gpu, rules=args.rules, budget_seconds=args.budget_seconds))
