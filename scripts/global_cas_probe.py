"""Measure the global-CAS probe on the GPU (validate.probes._global_cas.main).

    python scripts/global_cas_probe.py [--out FILE]

Prints a returning global CAS's round trip and the rate of 32-lane CAS on one line a warp
(progress on stderr); the exit code is the number of figures not measured.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from validate.probes._global_cas import main  # noqa: E402

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, help="write the result and its calibration figures as JSON here")
    sys.exit(main(out=parser.parse_args().out))
