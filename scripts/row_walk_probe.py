"""Exploration (not a calibration): a thread walks its own row, at few blocks and several block sizes.

    python scripts/row_walk_probe.py [--out FILE.json]     # on a GPU
    python scripts/row_walk_probe.py --offline             # the predictions alone, no GPU
    python scripts/row_walk_probe.py --edge [--offline]    # the launches at L1's edge, below

The cause probe ``thread_per_row`` (validate/kernels/cause_probes.cu, ``row_per_thread``: thread
r sums row r of a row-major matrix) at the launches where a matrix-vector product with a thread
a row leaves most SMs idle: rows x cols = 1024 x 1024 and 4096 x 4096, 32 to 512 threads a block
(2 to 128 blocks, one an SM at most). Does the model follow the time as the block grows, when
each SM holds one block and its warps walk 32 lines each? Measured through `validate.measure`
(CUDA events, L2 flushed), predicted from the access description with and without the SASS,
as `scripts/cause_probes.py` does. Prints the table; JSON with --out.

``--edge``: the walk at L1's edge (docs/prediction.md, "Open lines at L1's edge"). Every SM full
(132 x k blocks of 256), rows of 64 floats, k = 4 to 8: a thread holds one line open, 128 to
256 KB of lines an SM; the model's L1 keeps them up to 7 blocks and not at 8 (65.7 against
173.7 us on the H100 SXM offline), where the cause probe's own 8-block launch measured 148.9 us
(docs/results/h100-sxm/probes-2026-12-06b). Also 32 blocks of 64 (the open-lines sweep's
two-array launch, one array here) and rows of 1024 floats at 4 and 8 blocks of 256.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from validate.device import open_session  # noqa: E402
from validate.probes._cause_probes import (  # noqa: E402
    BUDGET_SECONDS, compiled_sass, offline_prediction, render_causes, run_cause_probes)
from validate.probes._cause_variants import _thread_per_row  # noqa: E402

LAUNCHES = [(1024, 1024, b) for b in (32, 64, 128, 256, 512)] + [(4096, 4096, b) for b in (64, 256, 512)]
VARIANTS = tuple(_thread_per_row(cols, rows=rows, block=block) for rows, cols, block in LAUNCHES)
EDGE = [(132 * k * 256, 64, 256) for k in (4, 5, 6, 7, 8)] + [(132 * 32 * 64, 64, 64)] + [
    (132 * k * 256, 1024, 256) for k in (4, 8)]
EDGE_VARIANTS = tuple(_thread_per_row(cols, rows=rows, block=block) for rows, cols, block in EDGE)
# row_per_thread's registers as the device built it (31: docs/results/h100-sxm/probes-2026-12-06b/
# cause_probes.json), so that 8 blocks of 256 fit an SM offline as they did there
EDGE_REGISTERS = 31


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path)
    parser.add_argument("--offline", action="store_true", help="print the predictions on the H100 SXM, no GPU")
    parser.add_argument("--edge", action="store_true", help="the launches at L1's edge instead")
    args = parser.parse_args()
    variants = EDGE_VARIANTS if args.edge else VARIANTS
    if args.offline:
        sass = (compiled_sass() or {}).get("row_per_thread")
        for v in variants:
            p = offline_prediction(v, "H100 SXM", EDGE_REGISTERS if args.edge else 40, sass)
            print(f"{v.variant:36s} grid {v.grid:4d}  {p.seconds * 1e6:8.1f} us  {p.limiter} ({p.binding})")
        return 0
    start = time.perf_counter()
    session = open_session()
    results = run_cause_probes(session, variants, budget_seconds=BUDGET_SECONDS)
    print(render_causes(results))
    if args.out is not None:
        device = next((r.device for r in results if r.device is not None), None)
        args.out.write_text(json.dumps({"device": device, "seconds": time.perf_counter() - start,
                                        "results": [r.model_dump(mode="json") for r in results]}, indent=1) + "\n")
    return sum(1 for r in results if r.failure is not None)


if __name__ == "__main__":
    sys.exit(main())
