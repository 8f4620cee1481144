"""Exploration (not a calibration): a grid-stride loop with one load in flight, described two ways.

    python scripts/grid_stride_probe.py [--out FILE.json]

docs/prediction.md, "A loop described two ways": `roofline.predict` gives a grid-stride loop
1.6x apart when the launch says ``elements_per_thread`` (the DRAM term's rounds at the copy
sweep's fitted latency) and when the kernel says ``load_bytes`` (the SASS's hot loop, its trips
at the pointer chase's DRAM latency). Our own two loops (``#pragma unroll 1``: one load a trip,
one in flight): a sum (one store a thread at the end) and a scale (``y = 2x``), 1024
elements a thread (past L2 at one 256-thread block an SM), at 1, 2, 4 and 8 blocks an SM,
timed with CUDA events (median of 10, no flush: each launch streams past L2), beside both
predictions from the SASS the device's NVRTC built. Prints a Markdown table; JSON with --out.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import occupancy  # noqa: E402
import roofline  # noqa: E402
from roofline.terms import disabled  # noqa: E402
from validate.device import StopRules, benchmark, compile_kernels, open_session, query_device  # noqa: E402
from validate.user_kernel import database_gpu  # noqa: E402

SOURCE = r'''
extern "C" __global__ void gs_sum(const float* x, float* out, long n) {
  float s = 0.f;
#pragma unroll 1
  for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) s += x[i];
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
extern "C" __global__ void gs_scale(const float* x, float* y, long n) {
#pragma unroll 1
  for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) y[i] = 2.f * x[i];
}
'''
KERNELS = ("gs_sum", "gs_scale")
THREADS, ELEMENTS = 256, 1024


def describe(name: str, resources: occupancy.KernelResources, blocks: int, how: str) -> roofline.Kernel:
    """The launch as `roofline.Kernel`: ``how`` "elements" (elements_per_thread) or "load_bytes"."""
    n = blocks * THREADS * ELEMENTS
    stores = 4 * n if name == "gs_scale" else 4 * blocks * THREADS
    counts = dict(flops=float(n), dram_bytes=4.0 * n + stores)
    if how == "load_bytes":
        counts.update(load_bytes=4.0 * n, store_bytes=float(stores))
        launch = occupancy.Launch(grid=blocks, block=THREADS, resources=resources)
    else:
        launch = occupancy.Launch(grid=blocks, block=THREADS, resources=resources, elements_per_thread=ELEMENTS)
    return roofline.Kernel(name=name, launch=launch, **counts)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    session = open_session()
    info = query_device(session)
    kernels = compile_kernels(SOURCE, list(KERNELS), arch=session.arch, name="grid_stride_probe.cu")
    every = occupancy.all_kernel_resources(SOURCE, arch=session.arch, sass=True)
    record = database_gpu(info.name, None)
    biggest = 8 * info.sm_count * THREADS * ELEMENTS
    x, y = session.allocate(4 * biggest), session.allocate(4 * biggest)
    rows = []
    for name in KERNELS:
        for per_sm in (1, 2, 4, 8):
            blocks = per_sm * info.sm_count
            n = blocks * THREADS * ELEMENTS
            run = session.launcher(kernels[name], (blocks, 1, 1), (THREADS, 1, 1), (x, y, np.int64(n)))
            seconds = benchmark(run, timer=session.timer, rules=StopRules(warmup=2, repetitions=10)).median_seconds
            row = {"kernel": name, "blocks_per_sm": per_sm, "blocks": blocks, "elements_per_thread": ELEMENTS,
                   "measured_seconds": seconds}
            if record is not None:
                for how in ("elements", "load_bytes"):
                    p = roofline.predict(record, describe(name, every[name], blocks, how))
                    row[f"{how}_seconds"], row[f"{how}_limiter"] = p.seconds, p.limiter
                with disabled({"elements_as_loads"}):  # the model before the rule
                    p = roofline.predict(record, describe(name, every[name], blocks, "elements"))
                row["elements_rule_off_seconds"] = p.seconds
            rows.append(row)
            print(json.dumps(row), file=sys.stderr)
    session.synchronize()
    sass = {k: every[k].sass.model_dump(mode="json") if every[k].sass else None for k in KERNELS}
    print("| kernel | blocks/SM | measured us | elements_per_thread us (rule off) | elements_per_thread us | "
          "load_bytes us |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for r in rows:
        def us(key):
            return f"{r[key] * 1e6:.1f}" if key in r else "-"
        print(f"| {r['kernel']} | {r['blocks_per_sm']} | {us('measured_seconds')} | {us('elements_rule_off_seconds')} "
              f"| {us('elements_seconds')} | {us('load_bytes_seconds')} |")
    if args.out:
        args.out.write_text(json.dumps({"device": info.name, "gpu": record.name if record else None, "rows": rows,
                                        "sass": sass}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
