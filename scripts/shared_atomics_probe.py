"""Measure the shared-atomics probe on the GPU (validate.probes._shared_atomics.main).

    python scripts/shared_atomics_probe.py [--out FILE]

Prints one SM's shared-atomic rates and a shared CAS's round trip (progress on stderr); the exit
code is the number of figures not measured.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from validate.probes._shared_atomics import main  # noqa: E402

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, help="write the result and its calibration figures as JSON here")
    sys.exit(main(out=parser.parse_args().out))
