"""Exploration (not a calibration): load, then compute, then store, at 1 to 8 elements a thread.

    python scripts/phases_probe.py [--out FILE.json]        # on a GPU
    python scripts/phases_probe.py --repredict FILE.json     # a run's kernels predicted again, no GPU

docs/prediction.md, "Load, then compute: the phases take turns": a thread that loads once,
computes on what came back and stores holds no load in flight while it computes; the model
joins a block's life with its SM's issue for one round at the overlap sweep's exponent (one
element a thread). Does that hold when each thread keeps more bytes in flight, where Little's
law has room to spare? Our own kernels: ``E`` independent loads a thread (1, 2, 4, 8;
fully unrolled, all issued before the first use), ``F`` FMAs on each element in four chains
(0 to 256), one store an element; 2^25 elements in and out (past L2), 256-thread blocks,
timed with CUDA events (median of 10), beside `roofline.predict` with the rule
``phases_take_turns`` and without it (a block's life its memory life alone), from the SASS the
device's NVRTC built. Also the validate overlap sweep and the phase exponent fitted to it with
the packaged calibration (`validate.probes._compute.model_phase_exponent`). Prints a Markdown
table; JSON with --out.
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
from validate.device import StopRules, benchmark, compile_kernels, kernel_source, open_session, query_device  # noqa: E402
from validate.probes._compute import measure_compute, model_phase_exponent  # noqa: E402
from validate.user_kernel import database_gpu  # noqa: E402

ELEMENTS_PER_THREAD = (1, 2, 4, 8)
FMAS = (0, 16, 32, 64, 128, 256)
THREADS, TOTAL = 256, 1 << 25

TEMPLATE = r'''
extern "C" __global__ void phases_e{e}_f{f}(const float* __restrict__ in, float* __restrict__ out) {{
  const long base = (long)blockIdx.x * blockDim.x * {e} + threadIdx.x;
  float v[{e}];
#pragma unroll
  for (int j = 0; j < {e}; ++j) v[j] = in[base + (long)j * blockDim.x];
#pragma unroll
  for (int j = 0; j < {e}; ++j) {{
    float a = v[j], b = v[j] + 1.0f, c = v[j] + 2.0f, d = v[j] + 3.0f;
#pragma unroll
    for (int k = 0; k < {f}; k += 4) {{
      a = fmaf(a, 0.999f, 0.5f); b = fmaf(b, 0.999f, 0.5f); c = fmaf(c, 0.999f, 0.5f); d = fmaf(d, 0.999f, 0.5f);
    }}
    out[base + (long)j * blockDim.x] = a + b + c + d;
  }}
}}
'''


def name(e: int, f: int) -> str:
    return f"phases_e{e}_f{f}"


SOURCE = "".join(TEMPLATE.format(e=e, f=f) for e in ELEMENTS_PER_THREAD for f in FMAS)


def describe(e: int, f: int, resources: occupancy.KernelResources) -> roofline.Kernel:
    """The launch as `roofline.Kernel`: 4 bytes in and out an element, 2 flops an FMA."""
    launch = occupancy.Launch(grid=TOTAL // (THREADS * e), block=THREADS, resources=resources)
    return roofline.Kernel(name=name(e, f), flops=2.0 * f * TOTAL, dram_bytes=8.0 * TOTAL,
                           branch_issue_factor=1.0, launch=launch)


def repredict(path: Path) -> None:
    """Print a run's measured times beside today's model, with the rule and without it, from the
    SASS the run recorded (the GPU is the one the run names)."""
    run = json.loads(path.read_text())
    sass = {k: occupancy.SassSummary.model_validate(v) for k, v in run["sass"].items()}
    print("| loads a thread | FMAs | measured us | rule off (plain maximum) | with the rule |")
    print("| ---: | ---: | ---: | ---: | ---: |")
    errors: dict[str, list[float]] = {"rule off": [], "with the rule": []}
    for r in run["rows"]:
        e, f = r["elements_per_thread"], r["fmas"]
        resources = occupancy.KernelResources(kernel=name(e, f), architecture=sass[name(e, f)].architecture,
                                              registers_per_thread=r["registers"], sass=sass[name(e, f)])
        kernel = describe(e, f, resources)
        on = roofline.predict(run["gpu"], kernel).seconds
        with disabled({"phases_take_turns"}):
            off = roofline.predict(run["gpu"], kernel).seconds
        t = r["measured_seconds"]
        errors["rule off"].append(abs(off / t - 1))
        errors["with the rule"].append(abs(on / t - 1))
        print(f"| {e} | {f} | {t * 1e6:.1f} | {off * 1e6:.1f} ({100 * (off / t - 1):+.0f} %) | "
              f"{on * 1e6:.1f} ({100 * (on / t - 1):+.0f} %) |")
    for label, e in errors.items():
        print(f"\n{label}: |error| median {100 * np.median(e):.1f} %, mean {100 * np.mean(e):.1f} %, "
              f"worst {100 * max(e):.0f} %")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path)
    parser.add_argument("--repredict", type=Path, help="a run's JSON: predict its kernels again (no GPU)")
    args = parser.parse_args()
    if args.repredict:
        repredict(args.repredict)
        return 0
    session = open_session()
    info = query_device(session)
    names = [name(e, f) for e in ELEMENTS_PER_THREAD for f in FMAS]
    kernels = compile_kernels(SOURCE, names, arch=session.arch, name="phases_probe.cu")
    every = occupancy.all_kernel_resources(SOURCE, arch=session.arch, sass=True)
    record = database_gpu(info.name, None)
    x, y = session.allocate(4 * TOTAL), session.allocate(4 * TOTAL)
    session.fill(x, 0x3c23d70a, 4 * TOTAL)  # 0.01f
    rows = []
    for e in ELEMENTS_PER_THREAD:
        for f in FMAS:
            run = session.launcher(kernels[name(e, f)], (TOTAL // (THREADS * e), 1, 1), (THREADS, 1, 1), (x, y))
            seconds = benchmark(run, timer=session.timer, rules=StopRules(warmup=2, repetitions=10)).median_seconds
            row = {"elements_per_thread": e, "fmas": f, "measured_seconds": seconds,
                   "registers": every[name(e, f)].registers_per_thread}
            if record is not None:
                kernel = describe(e, f, every[name(e, f)])
                p = roofline.predict(record, kernel)
                dram = p.terms[0].inputs
                row.update(predicted_seconds=p.seconds, memory_seconds=p.memory_seconds,
                           compute_seconds=p.compute_seconds, launch_seconds=p.launch_seconds, limiter=p.limiter,
                           bytes_in_flight=p.bytes_in_flight, exposed_issue_seconds=dram.get("exposed_issue_seconds"),
                           memory_life_seconds=dram.get("memory_life_seconds"))
                with disabled({"phases_take_turns"}):
                    row["rule_off_seconds"] = roofline.predict(record, kernel).seconds
            rows.append(row)
            print(json.dumps(row), file=sys.stderr)
    session.synchronize()
    del x, y
    sweep = None
    if record is not None:
        effects = measure_compute(session, info)
        resources = occupancy.all_kernel_resources(kernel_source("compute.cu"), arch=session.arch,
                                                   sass=True)["overlap_sweep"]
        exponent, fmas = model_phase_exponent(record, roofline.calibration(record.name), resources,
                                              effects.overlap_points, effects.overlap_elements)
        sweep = {"overlap_points": effects.overlap_points, "elements": effects.overlap_elements,
                 "model_phase_exponent": exponent, "fmas": fmas, "own_exponent": effects.overlap_exponent,
                 "fma_latency_cycles": effects.fma_latency_cycles}
        print(json.dumps(sweep), file=sys.stderr)
    print("| elements/thread | FMAs | measured us | predicted us (rule) | plain maximum us | memory us | compute us |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in rows:
        def us(key):
            return f"{r[key] * 1e6:.1f}" if key in r else "-"
        print(f"| {r['elements_per_thread']} | {r['fmas']} | {us('measured_seconds')} | {us('predicted_seconds')} | "
              f"{us('rule_off_seconds')} | {us('memory_seconds')} | {us('compute_seconds')} |")
    if args.out:
        sass = {k: every[k].sass.model_dump(mode="json") if every[k].sass else None for k in names}
        args.out.write_text(json.dumps({"device": info.name, "gpu": record.name if record else None, "rows": rows,
                                        "sweep": sweep, "sass": sass}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
