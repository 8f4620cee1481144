"""Measure the branch-paths probe on the GPU (validate.probes._branch_paths.main).

    python scripts/branch_paths_probe.py [--out FILE.json] [--gpu NAME]

Times a divergent branch (lane bit 1), a warp-uniform one (warp parity) and no branch in
straight-line FMA code, beside roofline.predict of each from its SASS with branch_issue_factor
2 and 1; prints a Markdown table (progress on stderr). The exit code is the number of kernels
whose longer launch added no time.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from validate.probes._branch_paths import main  # noqa: E402

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, help="write the result as JSON here")
    parser.add_argument("--gpu", help="database GPU of the predictions (default: the device's own)")
    args = parser.parse_args()
    sys.exit(main(out=args.out, gpu=args.gpu))
