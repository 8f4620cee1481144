"""Exploration (not a calibration): a thread walks its own row of two arrays (GESUMMV's walk) at few blocks.

    python scripts/pair_walk_probe.py [--out FILE.json] [--gpu "H100 SXM"]   # on a GPU
    python scripts/pair_walk_probe.py --offline [--gpu "H100 SXM"]           # the predictions alone

The rule probe ``rows_pair`` (validate/kernels/rule_probes.cu: thread r sums a[r][j] * b[r][j]
over its rows of two row-major matrices) at the launches where PolyBench's GESUMMV with 64
threads a block leaves most SMs idle: 16 and 64 blocks of 64 threads (1024 and 4096 columns),
16 blocks of 256, and the full grid of 132 blocks of 64 as the control. The one-array walk at the
same launches follows the model (`scripts/row_walk_probe.py`, docs/prediction.md "The row walk
at few blocks"); PolyBench's thread-a-row kernels at 64 threads are +24 to +47 % from profiles.
Does the two-array walk account for them? Timed by `validate.measure` (CUDA events, L2 flushed),
predicted from the access description and the SASS as the rule probes are. Prints the table;
JSON with --out.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from validate.probes._rule_probes import _measure_one, _resident, predictions, probe_resources  # noqa: E402

LAUNCHES = ((16, 64, 1024), (64, 64, 4096), (16, 256, 1024), (132, 64, 1024), (132, 64, 2048))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path)
    parser.add_argument("--gpu", default="H100 SXM", help="database GPU of the predictions (default: H100 SXM)")
    parser.add_argument("--offline", action="store_true", help="print the predictions alone, no GPU")
    args = parser.parse_args()
    probes = [_resident(blocks, threads, cols) for blocks, threads, cols in LAUNCHES]
    if args.offline:
        for (blocks, threads, cols), probe in zip(LAUNCHES, probes):
            on, _ = predictions(probe, args.gpu, probe_resources(probe))
            print(f"rows_pair {blocks:4d} blocks x {threads:3d} threads, {cols:5d} columns: {on * 1e6:8.1f} us")
        return 0
    from validate.device import open_session

    session = open_session()
    rows = []
    for (blocks, threads, cols), probe in zip(LAUNCHES, probes):
        row = _measure_one(probe, args.gpu, session, 0.3)
        row.update(blocks=blocks, threads=threads, columns=cols)
        rows.append(row)
        print(f"rows_pair {blocks:4d} blocks x {threads:3d} threads, {cols:5d} columns: "
              f"{row['measured_seconds'] * 1e6:8.1f} us measured, {row['predicted_on'] * 1e6:8.1f} us predicted "
              f"({row['error_on']:+.0%})", flush=True)
    if args.out is not None:
        args.out.write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
