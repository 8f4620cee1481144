"""Measure the open-lines probe on the GPU (validate.probes._open_lines.main).

    python scripts/open_lines_probe.py [--out FILE]

Prints the open lines of a row walk at which L2 lets them go, by Nsight Compute (progress on stderr); the
exit code is 1 where they were not measured (no ncu, counters blocked).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from validate.probes._open_lines import main  # noqa: E402

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, help="write the result and its calibration figures as JSON here")
    sys.exit(main(out=parser.parse_args().out))
