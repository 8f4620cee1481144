"""How long a round of a grid-stride loop's loads takes when every SM runs one, at low occupancy.

    python scripts/loaded_trip_probe.py [--out loaded_trip.json] [> loaded_trip.md]

The compute probe's trip walk (`trip_walk` in validate/kernels/compute.cu: each thread's next
trip's addresses depend on this trip's loads, `ld.global.cg`, lines far past L2) measures one
block alone on the GPU: the idle round trip and one SM's port (`trip_latency_seconds`,
`trip_bytes_per_second`). Here the same walk runs on every SM at once, 1, 2 or 4 blocks of 256
threads and 1 block of 1024 per SM (all resident at once), each thread reading 1, 2, 4 or 8 floats a trip, and the one
block alone beside it in the same session: the time per trip (the difference of two trip counts
over their difference, medians of CUDA-event timings) against the bytes the GPU has in flight.
That is the loaded round trip a hot loop at low occupancy waits (docs/prediction.md, "Not in the
model: `port_once`"). Each shape runs twice: the walk (`trip_walk`) and the walk that stores every
word it loads at the same offset of a second buffer (`trip_walk_copy`: a copy's stores in flight
beside its loads, as the `grid_stride_low_occupancy` family's copies have). Prints a Markdown
table; `--out` writes the points as JSON.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from validate.device import (  # noqa: E402
    StopRules,
    benchmark,
    compile_kernels,
    kernel_source,
    open_session,
    query_device,
)

#: (blocks per SM, threads per block) on every SM; (0, threads): one block alone on the GPU. At
#: 35 registers a thread (sm_90) an SM holds one block of 1024: two of them per SM would run as
#: two waves (the first run, 2026-12-07, had them: twice the one block's time), so they are out.
SHAPES = ((0, 256), (0, 1024), (1, 256), (2, 256), (4, 256), (1, 1024))
FLOATS = (1, 2, 4, 8)
FEW, MANY = 64, 256
KERNELS = {"trip_walk": "walk", "trip_walk_copy": "copy"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, help="write the points as JSON here")
    args = parser.parse_args()
    s = open_session(0)
    info = query_device(s)
    kernels = compile_kernels(kernel_source("compute.cu"), list(KERNELS), arch=s.arch, name="compute.cu")
    # two buffers of `words` (the walk and the copy's), an eighth of the memory at most together
    words = max(1 << 20, min(4 * info.l2_cache_bytes, info.memory_size_bytes // 16) // 4)
    walk, sink = s.allocate(words * 4), s.allocate(words * 4)  # the copy stores at the walk's offsets
    s.poison(walk, words * 4)
    rules = StopRules(warmup=1, repetitions=7)
    points = []
    print(f"{info.name}, {info.sm_count} SMs, L2 {info.l2_cache_bytes} bytes; walk of {words * 4 / 1e6:.0f} MB, "
          f"time per trip = (t({MANY} trips) - t({FEW} trips)) / {MANY - FEW}, medians of 7\n")
    print("| kernel | blocks per SM | threads | floats a thread | load bytes per SM a trip | load bytes in flight "
          "| ns per trip | load GB/s |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for (name, kernel), (per_sm, threads) in itertools.product(kernels.items(), SHAPES):
        grid = 1 if per_sm == 0 else per_sm * info.sm_count
        for floats in FLOATS:
            chunk = threads * floats
            # a trip of the whole grid reads grid x chunk words; the next one starts past them
            stride = max(grid * chunk, words // MANY)

            def run(trips: int) -> float:
                launch = s.launcher(kernel, (grid, 1, 1), (threads, 1, 1),
                                    (walk, sink, np.uint32(words), np.int32(trips), np.int32(floats),
                                     np.uint32(stride)))
                return benchmark(launch, timer=s.timer, rules=rules).median_seconds

            per_trip = max(1e-10, (run(MANY) - run(FEW)) / (MANY - FEW))
            in_flight = grid * chunk * 4
            per_sm_bytes = (per_sm or 1) * chunk * 4
            points.append({"kernel": name, "blocks_per_sm": per_sm, "threads": threads, "floats": floats, "grid": grid,
                           "bytes_per_sm_trip": per_sm_bytes, "bytes_in_flight": in_flight,
                           "seconds_per_trip": per_trip})
            print(f"| {KERNELS[name]} | {per_sm or 'alone'} | {threads} | {floats} | {per_sm_bytes} | {in_flight} | "
                  f"{per_trip * 1e9:.0f} | {in_flight / per_trip / 1e9:.0f} |", flush=True)
    s.synchronize()
    if args.out:
        args.out.write_text(json.dumps({"device": info.name, "sm_count": info.sm_count,
                                        "l2_cache_bytes": info.l2_cache_bytes, "walk_bytes": words * 4,
                                        "points": points}, indent=1))


if __name__ == "__main__":
    main()
