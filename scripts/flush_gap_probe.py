"""Does a kernel timed right after validate's L2 flush share DRAM with the flush's own write-back?

    python scripts/flush_gap_probe.py [> flush_gap.md]
    python scripts/flush_gap_probe.py --predict "H100 SXM"   # offline: the model's times of the same sweeps

A read sweep of 1/16 to 2 x L2 (the L2-writes probe's `l2_read_only`) timed with CUDA events
(validate's `benchmark`, median of 15) right after validate's L2 flush (`Session.flush_l2`, a
memset of 4 x L2), after the flush and an idle 200 us (the timers' one-thread `spin_kernel`
between), after a clean scrub (a read of 4 x L2), and after the scrub and the same idle; the
same for an in-place update sweep (`l2_update_in_place`); then the idle swept from 0 to 1000 us
for a read of 1/16 and 1/4 x L2. Prints Markdown tables (docs/prediction.md, "The L2 flush's
write-back, at small sizes"). With ``--predict GPU`` (no device): `roofline.predict`'s times of
the two sweeps after validate's flush and back to back (``after_l2_flush=False``), from the
sweeps' own descriptions and SASS, the grid a device of that GPU's SMs would get.
"""

from __future__ import annotations

import argparse
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
#: The idles swept (us) and the reads they are swept for (L2s).
IDLES_MICROSECONDS = (0, 5, 10, 20, 50, 100, 200, 500, 1000)
IDLE_SWEEP_READS_OF_L2 = (1 / 16, 1 / 4)


def sweep_bytes(l2_cache_bytes: int, x: float) -> int:
    """Bytes a sweep of `x` L2s covers: whole 256-byte pieces, as the device's launches and the
    predictions take them."""
    return int(l2_cache_bytes * x) // 256 * 256


def predict(gpu_name: str) -> None:
    """Print the model's times of the read and update sweeps, after the flush and back to back."""
    import occupancy
    import roofline
    from roofline.memory import Access

    gpu = roofline.gpu(gpu_name)
    l2, sms = int(gpu.l2_cache_bytes), int(gpu.sm_count)
    grid, block = (sms * 4, 1, 1), (512, 1, 1)
    threads = grid[0] * block[0]
    source = kernel_source("l2_writes.cu")
    print(f"{gpu.name}: roofline.predict of the sweeps (grid {grid[0]} x {block[0]}), us\n")
    print("| kernel | sweep, L2s | MB | after flush | back to back |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for name in ("l2_read_only", "l2_update_in_place"):
        resources = occupancy.kernel_resources(source, arch="sm_90", kernel=name)
        launch = occupancy.Launch(grid=grid, block=block, registers_per_thread=resources.registers_per_thread,
                                  resources=resources)
        for x in READS_OF_L2:
            floats = sweep_bytes(l2, x) // 4
            kinds = ("load",) if name == "l2_read_only" else ("load", "store")
            accesses = [Access(array="a", index=lambda c: c.x + c.loop * threads, kind=kind,
                               guard=lambda c, n=floats: c.x + c.loop * threads < n, loop=-(-floats // threads))
                        for kind in kinds]
            kernel = roofline.memory.traffic(grid, block, accesses).kernel(name=name, flops=0.0, launch=launch)
            times = [roofline.predict(gpu, kernel, after_l2_flush=flush).seconds * 1e6 for flush in (True, False)]
            print(f"| {name} | {x:.4f} | {floats * 4 / 1e6:.1f} | {times[0]:.2f} | {times[1]:.2f} |")


def main() -> None:
    """Time the sweeps and print the tables (a row at a time; well under a minute of device time)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--predict", metavar="GPU", help="no device: print the model's times of the sweeps on GPU")
    args = parser.parse_args()
    if args.predict:
        predict(args.predict)
        return
    s = open_session(0)
    info = query_device(s)
    sweeps = compile_kernels(kernel_source("l2_writes.cu"), ["l2_read_only", "l2_update_in_place"], arch=s.arch,
                             name="l2_writes.cu")
    read, update = sweeps["l2_read_only"], sweeps["l2_update_in_place"]
    idle = compile_kernels(kernel_source("latency.cu"), ["spin_kernel"], arch=s.arch, name="latency.cu")["spin_kernel"]
    l2 = info.l2_cache_bytes
    a, scrub, out = s.allocate(2 * l2), s.allocate(4 * l2), s.allocate(4096)
    s.poison(a, 2 * l2)  # NaNs: the sum never matches, so the sweep stores nothing
    s.poison(scrub, 4 * l2)
    grid, block = (info.sm_count * 4, 1, 1), (512, 1, 1)
    rules = StopRules(warmup=2, repetitions=15)

    def sweep(kernel, x: float) -> tuple[int, object]:
        # `x` L2s of floats (whole 256-byte pieces), and the launch that sweeps them
        n = sweep_bytes(l2, x)
        args = (a, out, np.int64(n // 4)) if kernel is read else (a, np.int64(n // 4))
        return n, s.launcher(kernel, grid, block, args)

    def idle_for(us: int):
        return s.launcher(idle, (1, 1, 1), (1, 1, 1), (np.uint64(us * 1000),))

    def timed_us(run, flush) -> float:
        return benchmark(run, timer=s.timer, rules=rules, flush=flush).median_seconds * 1e6

    def row(x: float, n: int, times: list[float]) -> None:
        print(f"| {x:.4f} | {n / 1e6:.1f} | " + " | ".join(f"{t:.2f}" for t in times) + " |", flush=True)

    clean = s.launcher(read, grid, block, (scrub, out, np.int64(l2)))
    spin = idle_for(IDLE_MICROSECONDS)
    before = {"after flush": s.flush_l2, f"flush + {IDLE_MICROSECONDS} us idle": lambda: (s.flush_l2(), spin()),
              "after clean scrub": clean, "clean + idle": lambda: (clean(), spin())}
    print(f"{info.name}, L2 {l2} bytes, {info.sm_count} SMs; medians of 15 event-timed runs, us\n")
    for title, kernel in (("read sweep (l2_read_only)", read), ("in-place update sweep (l2_update_in_place)", update)):
        print(f"### {title}\n")
        print("| sweep, L2s | MB | " + " | ".join(before) + " |")
        print("| ---: | ---: |" + " ---: |" * len(before))
        for x in READS_OF_L2:
            n, run = sweep(kernel, x)
            row(x, n, [timed_us(run, flush) for flush in before.values()])
        print()  # the update writes NaN x 0.5 + 1 = NaN: the buffer stays poisoned for the reads
    print("### read sweep after the flush and an idle (us)\n")
    print("| sweep, L2s | MB | " + " | ".join(f"idle {t} us" for t in IDLES_MICROSECONDS) + " | clean |")
    print("| ---: | ---: |" + " ---: |" * (len(IDLES_MICROSECONDS) + 1))
    for x in IDLE_SWEEP_READS_OF_L2:
        n, run = sweep(read, x)
        waits = [(lambda w=idle_for(us): (s.flush_l2(), w())) if us else s.flush_l2 for us in IDLES_MICROSECONDS]
        row(x, n, [timed_us(run, flush) for flush in [*waits, clean]])

if __name__ == "__main__":
    main()
