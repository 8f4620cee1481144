"""Exploration (not a calibration): which blocks of a plain launch share an SM.

    python scripts/block_placement_probe.py [--out FILE.json]     # on a GPU

A kernel's blocks that run on one SM at once share its L1: where they read the same lines at
about the same time (neighbouring tiles of a matrix product), L2 sees one request for several
blocks' misses, and a description that counts each block's bytes alone over-counts L2's. Which
blocks those are is the block scheduler's choice. validate's `sm_map` kernel (each block
writes its SM and the global timer when it starts and ends a spin) is launched without
clusters, 128 threads a block, with the dynamic shared memory that fits 1, 2, 4 or 8 blocks an
SM, at one and at two waves. Printed per launch: for the first wave's blocks, the index
distances to the other blocks on the same SM at the same time (the most common ones, with their
share), and whether block b's SM is block b + sm_count's. JSON with --out (every block's SM,
start and end).
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import occupancy  # noqa: E402
from validate.checks._clusters import set_attribute  # noqa: E402
from validate.checks._gpc_layout import dynamic_for_blocks, sm_map_blocks  # noqa: E402
from validate.device import compile_kernels, driver_call, kernel_source, open_session, query_device  # noqa: E402

THREADS, SPIN_NS = 128, 50_000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    session = open_session()
    info = query_device(session)
    arch = occupancy.architecture(info.compute_capability)
    kernel = compile_kernels(kernel_source("sm_map.cu"), ["sm_map"], arch=info.arch, name="sm_map")["sm_map"]
    function = driver_call(session.cuda.driver.cuKernelGetFunction, kernel.handle)
    set_attribute(session, kernel, function, "MAX_DYNAMIC_SHARED_SIZE_BYTES", arch.max_shared_memory_per_block_optin)
    sms = info.sm_count
    out = session.allocate(8 * 4 * 2 * 8 * sms)
    runs = []
    for per_sm in (1, 2, 4, 8):
        dyn = dynamic_for_blocks(arch, per_sm)
        for waves in (1, 2):
            blocks = waves * per_sm * sms
            session.fill(out, 0, 8 * 4 * blocks)
            session.launcher(kernel, (blocks, 1, 1), (THREADS, 1, 1), (out, np.uint64(SPIN_NS)), dyn)()
            session.synchronize()
            sm, _, start, end = sm_map_blocks(session.download(out, (blocks, 8), np.uint32))
            t0 = start.min()
            start, end = start - t0, end - t0
            distances: collections.Counter[int] = collections.Counter()
            first = min(blocks, per_sm * sms)
            for b in range(first):
                together = np.nonzero((sm == sm[b]) & (start < end[b]) & (end > start[b]))[0]
                distances.update(int(o - b) for o in together if o != b)
            pairs = sum(distances.values())
            common = [(d, round(n / pairs, 3)) for d, n in distances.most_common(6)] if pairs else []
            same_as_next_wave = (float(np.mean(sm[:sms] == sm[sms:2 * sms])) if blocks >= 2 * sms else None)
            runs.append({"blocks_per_sm": per_sm, "waves": waves, "blocks": blocks, "dynamic_shared_memory": dyn,
                         "common_distances": common, "same_sm_as_block_plus_sm_count": same_as_next_wave,
                         "sm": sm.tolist(), "start_ns": start.tolist(), "end_ns": end.tolist()})
            print(f"{per_sm} a SM, {waves} wave(s), {blocks} blocks: co-resident distances {common}; "
                  f"block b and b+{sms} on one SM: {same_as_next_wave}; first 16 blocks' SMs {sm[:16].tolist()}")
    if args.out:
        args.out.write_text(json.dumps({"device": info.name, "sm_count": sms, "threads": THREADS,
                                        "spin_ns": SPIN_NS, "runs": runs}) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
