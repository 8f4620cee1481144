"""Does a kernel timed right after validate's L2 flush share DRAM with the flush's own write-back?

    python scripts/flush_gap_probe.py [> flush_gap.md]

A read sweep of 1/16 to 2 x L2 (the L2-writes probe's `l2_read_only`) timed with CUDA events
(validate's `benchmark`, median of 15) right after validate's L2 flush (`Session.flush_l2`, a
memset of 4 x L2), after the flush and an idle 200 us (the timers' one-thread `spin_kernel`
between), after a clean scrub (a read of 4 x L2), and after the scrub and the same idle. Prints
a Markdown table. Written for the next lent GPU (docs/prediction.md, "The L2 flush's write-back,
at small sizes"); not yet run.
"""

from __future__ import annotations

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

#: The idle between the flush and the sweep, and the sweeps' sizes in L2s.
IDLE_MICROSECONDS = 200
READS_OF_L2 = (1 / 16, 1 / 8, 1 / 4, 1 / 2, 1, 2)


def main() -> None:
    """Time the read sweeps and print the table (progress-free: a few seconds of device time)."""
    s = open_session(0)
    info = query_device(s)
    read = compile_kernels(kernel_source("l2_writes.cu"), ["l2_read_only"], arch=s.arch,
                           name="l2_writes.cu")["l2_read_only"]
    idle = compile_kernels(kernel_source("latency.cu"), ["spin_kernel"], arch=s.arch, name="latency.cu")["spin_kernel"]
    l2 = info.l2_cache_bytes
    a, scrub, out = s.allocate(2 * l2), s.allocate(4 * l2), s.allocate(4096)
    s.poison(a, 2 * l2)  # NaNs: the sum never matches, so the sweep stores nothing
    s.poison(scrub, 4 * l2)
    grid, block = (info.sm_count * 4, 1, 1), (512, 1, 1)
    clean = s.launcher(read, grid, block, (scrub, out, np.int64(l2)))
    spin = s.launcher(idle, (1, 1, 1), (1, 1, 1), (np.uint64(IDLE_MICROSECONDS * 1000),))
    before = {"after flush": s.flush_l2, f"flush + {IDLE_MICROSECONDS} us idle": lambda: (s.flush_l2(), spin()),
              "after clean scrub": clean, "clean + idle": lambda: (clean(), spin())}
    print(f"{info.name}, L2 {l2} bytes\n")
    print("| read, L2s | MB | " + " | ".join(f"{name}, us" for name in before) + " |")
    print("| ---: | ---: |" + " ---: |" * len(before))
    for x in READS_OF_L2:
        n = int(l2 * x) // 256 * 256
        run = s.launcher(read, grid, block, (a, out, np.int64(n // 4)))
        times = [benchmark(run, timer=s.timer, rules=StopRules(warmup=2, repetitions=15), flush=flush).median_seconds
                 for flush in before.values()]
        print(f"| {x:.4f} | {n / 1e6:.1f} | " + " | ".join(f"{t * 1e6:.2f}" for t in times) + " |", flush=True)


if __name__ == "__main__":
    main()
