"""Check `validate.measure` on a GPU: five kernels outside the validate suite (docs/measure.md).

For each kernel of benchmarks/measure_kernels.cu: `validate.measure` twice (outputs checked
against numpy first, L2 flushed before each launch), and an independent timing of the same
launch with CuPy (its own NVRTC build, a CUDA-events loop with the same L2 flush). The
kernels come in through all three routes: CUDA source, PTX and a cubin (both built here
with nvcc). Then the bad inputs: a wrong argument count, a wrong scalar size, a block too
large to launch, too much shared memory. Prints one JSON line per result and a table.

    python benchmarks/measure_check.py [--out DIR] [--profile-once]
    python benchmarks/measure_check.py --repredict docs/results/h200/measure --gpu H200   # no GPU

``--profile-once`` launches each kernel once through CuPy between cudaProfilerStart and
Stop (for ``ncu --profile-from-start off``) and exits. ``--repredict DIR`` needs no GPU: it
predicts the five launches again beside the times a device run wrote to DIR
(``measure_<kernel>.json``), as `validate.measure` predicts now (the SASS of the kernels
NVRTC builds here, disassembled here, and the counts above) and as it did without the SASS
and with the DRAM bytes alone.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import occupancy

HERE = Path(__file__).resolve().parent
SOURCE = (HERE / "measure_kernels.cu").read_text()
DEG = 256
N = 1 << 26


def cases(rng: np.random.Generator) -> list[dict]:
    """Launches, arguments, references and counts of the five kernels."""
    import roofline

    n4 = N // 4
    x, y = rng.random(N, dtype=np.float32) * 2 - 1, rng.random(N, dtype=np.float32) * 2 - 1
    xd, yd = rng.random(N // 2) * 2 - 1, rng.random(N // 2) * 2 - 1
    nx = ny = 8192
    grid_in = rng.random(nx * ny, dtype=np.float32)
    stencil_ref = np.full((ny, nx), np.nan)
    g = grid_in.astype(np.float64).reshape(ny, nx)
    stencil_ref[1:-1, 1:-1] = 0.2 * (g[1:-1, 1:-1] + g[1:-1, :-2] + g[1:-1, 2:] + g[:-2, 1:-1] + g[2:, 1:-1])
    blocks, threads = 1024, 256
    sum_ref = x.astype(np.float64).reshape(-1, blocks, threads).sum(axis=(0, 2))
    xp = rng.random(N // 4, dtype=np.float32) * 2 - 1
    sample = rng.choice(xp.size, 1 << 15, replace=False)
    v = xp[sample].astype(np.float64)
    p = [np.full_like(v, c) for c in (0.5, 0.25, -0.5, 0.125)]
    for _ in range(DEG):
        p = [p[0] * v + 0.5, p[1] * v - 0.25, p[2] * v + 0.125, p[3] * v - 0.0625]
    poly_ref = np.full(xp.size, np.nan)
    poly_ref[sample] = (p[0] + p[1]) + (p[2] + p[3])
    return [
        dict(name="saxpy4", route="source", grid=(n4 + 255) // 256, block=256,
             args=[np.int32(n4), np.float32(2.0), x, y.copy()],
             expected={3: 2.0 * x.astype(np.float64) + y}, tolerance=1e-6,
             counts=roofline.Kernel(name="saxpy4", flops=2 * N, dram_bytes=12 * N, load_bytes=8 * N, store_bytes=4 * N,
                                    precision="fp32")),
        dict(name="daxpy", route="ptx", grid=(N // 2 + 255) // 256, block=256,
             args=[np.int32(N // 2), np.float64(3.0), xd, yd.copy()],
             expected={3: 3.0 * xd + yd}, tolerance=1e-12,
             counts=roofline.Kernel(name="daxpy", flops=2 * (N // 2), dram_bytes=24 * (N // 2),
                                    load_bytes=16 * (N // 2), store_bytes=8 * (N // 2), precision="fp64")),
        dict(name="stencil5", route="cubin", grid=(nx // 32, ny // 8), block=(32, 8),
             args=[np.int32(nx), np.int32(ny), grid_in, f"f32[{nx * ny}]"],
             expected={3: stencil_ref.reshape(-1)}, tolerance=1e-6,
             counts=roofline.Kernel(name="stencil5", flops=5 * (nx - 2) * (ny - 2),
                                    dram_bytes=4 * nx * ny + 4 * (nx - 2) * (ny - 2),
                                    load_bytes=5 * 4 * (nx - 2) * (ny - 2), store_bytes=4 * (nx - 2) * (ny - 2),
                                    precision="fp32")),
        dict(name="block_sum", route="source", grid=blocks, block=threads,
             args=[np.int32(N), x, f"f32[{blocks}]"], expected={2: sum_ref}, tolerance=1e-5,
             counts=roofline.Kernel(name="block_sum", flops=N, dram_bytes=4 * N, load_bytes=4 * N,
                                    store_bytes=4 * blocks, precision="fp32")),
        dict(name="poly", route="source", grid=(xp.size + 255) // 256, block=256,
             args=[np.int32(xp.size), xp, f"f32[{xp.size}]"], expected={2: poly_ref}, tolerance=1e-5,
             counts=roofline.Kernel(name="poly", flops=xp.size * (8 * DEG + 3), dram_bytes=8 * xp.size,
                                    load_bytes=4 * xp.size, store_bytes=4 * xp.size, precision="fp32")),
    ]


def build(tmp: Path) -> dict[str, Path]:
    """PTX and a cubin of the kernels, built with nvcc for sm_90."""
    ptx, cubin = tmp / "measure_kernels.ptx", tmp / "measure_kernels.cubin"
    src = HERE / "measure_kernels.cu"
    subprocess.run(["nvcc", "-arch=sm_90", "-ptx", str(src), "-o", str(ptx)], check=True)
    subprocess.run(["nvcc", "-arch=sm_90", "-cubin", str(src), "-o", str(cubin)], check=True)
    return {"ptx": ptx, "cubin": cubin}


def cupy_timing(case: dict, repetitions: int = 50) -> dict:
    """The same launch timed with CuPy: its own NVRTC build, L2 flushed before each launch."""
    import cupy as cp

    kernel = cp.RawModule(code=SOURCE, options=("-std=c++17",)).get_function(case["name"])
    args = []
    for a in case["args"]:
        if isinstance(a, np.ndarray):
            args.append(cp.asarray(a))
        elif isinstance(a, str):
            args.append(cp.empty(int(a[a.index("[") + 1: a.index("]")]), dtype=cp.float32))
        else:
            args.append(a)
    grid = case["grid"] if isinstance(case["grid"], tuple) else (case["grid"],)
    block = case["block"] if isinstance(case["block"], tuple) else (case["block"],)
    flush = cp.empty(4 * cp.cuda.Device().attributes["L2CacheSize"] // 4, dtype=cp.float32)
    start, end = cp.cuda.Event(), cp.cuda.Event()
    for _ in range(3):
        kernel(grid, block, tuple(args))
    times = []
    for _ in range(repetitions):
        flush.fill(0)
        start.record()
        kernel(grid, block, tuple(args))
        end.record()
        end.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, end) * 1e-3)
    ordered = sorted(times)
    q1, q3 = np.percentile(ordered, [25, 75])
    return {"median_seconds": statistics.median(ordered), "spread": float((q3 - q1) / statistics.median(ordered)),
            "repetitions": repetitions}


def profile_once() -> None:
    import cupy as cp

    rng = np.random.default_rng(1)
    work = cases(rng)
    module = cp.RawModule(code=SOURCE, options=("-std=c++17",))
    launches = []
    for case in work:
        args = []
        for a in case["args"]:
            if isinstance(a, np.ndarray):
                args.append(cp.asarray(a))
            elif isinstance(a, str):
                args.append(cp.empty(int(a[a.index("[") + 1: a.index("]")]), dtype=cp.float32))
            else:
                args.append(a)
        grid = case["grid"] if isinstance(case["grid"], tuple) else (case["grid"],)
        block = case["block"] if isinstance(case["block"], tuple) else (case["block"],)
        launches.append((module.get_function(case["name"]), grid, block, tuple(args)))
    cp.cuda.Device().synchronize()
    cp.cuda.profiler.start()
    for kernel, grid, block, args in launches:
        kernel(grid, block, args)
    cp.cuda.Device().synchronize()
    cp.cuda.profiler.stop()


def bad_inputs(session) -> list[dict]:
    import validate

    x = np.zeros(1024, np.float32)
    trials = {
        "wrong argument count": dict(grid=4, block=256, args=[np.int32(256), np.float32(1.0), x]),
        "wrong scalar size": dict(grid=4, block=256, args=[np.int64(256), np.float32(1.0), x, x]),
        "block too large": dict(grid=4, block=2048, args=[np.int32(256), np.float32(1.0), x, x]),
        "too much shared memory": dict(grid=4, block=256, dynamic_shared_memory=300 * 1024,
                                       args=[np.int32(256), np.float32(1.0), x, x]),
        "unknown kernel": dict(kernel="saxpy5", grid=4, block=256, args=[np.int32(256), np.float32(1.0), x, x]),
    }
    out = []
    for what, kwargs in trials.items():
        kernel = kwargs.pop("kernel", "saxpy4")
        try:
            launch = occupancy.Launch(grid=kwargs.pop("grid"), block=kwargs.pop("block"),
                                      dynamic_shared_memory=kwargs.pop("dynamic_shared_memory", 0))
            validate.measure(SOURCE, kernel, launch=launch, session=session,
                             options=validate.MeasureOptions(budget_seconds=0.01), **kwargs)
            out.append({"bad_input": what, "error": None})
        except Exception as exc:  # noqa: BLE001 - recording what each bad input raises
            out.append({"bad_input": what, "error": f"{type(exc).__name__}: {exc}"})
    return out


def repredict(directory: Path, gpu_name: str) -> int:
    """The committed measurements of `directory` predicted again offline: without the SASS and with
    the DRAM bytes alone (`validate.measure` before 2026-12-08), and with the SASS and the counts
    of `cases` (now)."""
    import roofline
    from validate.device import compile_cubin
    from validate.user_kernel._measure import _prediction
    from validate.user_kernel._sass import with_sass

    gpu = roofline.gpu(gpu_name)
    arch = f"sm_{gpu.architecture.major}{gpu.architecture.minor}"
    cubin = bytes(compile_cubin(SOURCE, arch=arch, name="measure_kernels.cu").code)
    print(f"{'kernel':10} {'measured us':>11} {'before us':>10} {'error':>7} {'now us':>9} {'error':>7}  limiter")
    for case in cases(np.random.default_rng(0)):
        m = json.loads((directory / f"measure_{case['name']}.json").read_text())
        driver = occupancy.KernelResources.model_validate({**m["resources"], "sass": None})
        launch = occupancy.Launch(grid=case["grid"], block=case["block"])
        counts = case["counts"]
        dram_only = roofline.Kernel(name=counts.name, flops=counts.flops, dram_bytes=counts.dram_bytes,
                                    precision=counts.precision)
        before, _ = _prediction(gpu, dram_only, launch, driver, m["seconds"], after_l2_flush=True)
        now, _ = _prediction(gpu, counts, launch, with_sass(driver, cubin, case["name"], driver.architecture),
                                 m["seconds"], after_l2_flush=True)
        print(f"{case['name']:10} {m['seconds'] * 1e6:11.2f} {before['predicted_seconds'] * 1e6:10.2f} "
              f"{before['prediction_error']:+7.1%} {now['predicted_seconds'] * 1e6:9.2f} "
              f"{now['prediction_error']:+7.1%}  {now['predicted_limiter']}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=None)
    parser.add_argument("--profile-once", action="store_true")
    parser.add_argument("--repredict", type=Path, default=None, metavar="DIR")
    parser.add_argument("--gpu", default="H200", help="the GPU of --repredict's measurements")
    args = parser.parse_args()
    if args.profile_once:
        profile_once()
        return 0
    if args.repredict is not None:
        return repredict(args.repredict, args.gpu)
    import validate

    out = Path(args.out) if args.out else None
    rng = np.random.default_rng(0)
    session = validate.open_session(0)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        built = build(Path(tmp))
        for case in cases(rng):
            code = {"source": SOURCE, "ptx": built["ptx"], "cubin": built["cubin"]}[case["route"]]
            launch = occupancy.Launch(grid=case["grid"], block=case["block"])
            options = validate.MeasureOptions(tolerance=case["tolerance"], seed=0)
            runs = [validate.measure(code, case["name"], launch=launch, args=case["args"], options=options,
                                     expected=case["expected"], counts=case["counts"], session=session)
                    for _ in range(2)]
            independent = cupy_timing(case)
            m1, m2 = runs[0], runs[1]
            if not (m1.ok and m2.ok):
                rows.append({"kernel": case["name"], "error": m1.check.message if m1.check else "not timed"})
                print(json.dumps(rows[-1]), flush=True)
                continue
            t1, t2, tc = m1.seconds, m2.seconds, independent["median_seconds"]
            run_to_run = max(abs(t1 - t2) / t1, m1.timing.spread, m2.timing.spread, independent["spread"])
            row = {
                "kernel": case["name"], "route": case["route"], "grid": m1.grid, "block": m1.block,
                "registers": m1.resources.registers_per_thread, "occupancy": m1.occupancy,
                "occupancy_driver": m1.occupancy_driver, "check": m1.check.message,
                "relative_error": m1.check.relative_error,
                "measure_seconds": [t1, t2], "measure_spread": [m1.timing.spread, m2.timing.spread],
                "repetitions": [m1.timing.repetitions, m2.timing.repetitions],
                "cupy_seconds": tc, "cupy_spread": independent["spread"],
                "difference_vs_cupy": t1 / tc - 1, "run_to_run_spread": run_to_run,
                "within_spread": abs(t1 / tc - 1) <= run_to_run,
                "sm_clock_hz": m1.clocks.sm_clock_hz if m1.clocks else None,
                "memory_clock_hz": m1.clocks.memory_clock_hz if m1.clocks else None,
                "achieved_flops_per_second": m1.achieved_flops_per_second,
                "achieved_dram_bytes_per_second": m1.achieved_bytes_per_second.get("dram"),
                "predicted_seconds": m1.predicted_seconds, "predicted_limiter": m1.predicted_limiter,
                "prediction_error": m1.prediction_error, "method": m1.method, "notes": list(m1.notes),
            }
            rows.append(row)
            print(json.dumps(row), flush=True)
            if out:
                (out / f"measure_{case['name']}.json").write_text(m1.model_dump_json(indent=2))
        warm = validate.measure(SOURCE, "saxpy4", launch=occupancy.Launch(grid=1024, block=256),
                                options=validate.MeasureOptions(l2="warm"), session=session,
                                args=[np.int32(1024 * 256), np.float32(2.0), f"f32[{1 << 20}]=random",
                                      f"f32[{1 << 20}]=random"])
        print(json.dumps({"warm_l2": warm.method, "seconds": warm.seconds, "spread": warm.timing.spread}), flush=True)
    for row in bad_inputs(session):
        print(json.dumps(row), flush=True)
    ok = [r for r in rows if "within_spread" in r]
    print(f"\n{'kernel':10} {'route':6} {'measure us':>11} {'again us':>9} {'cupy us':>9} {'diff':>7} "
          f"{'spread':>7} {'ok':>3} {'pred us':>9} {'pred err':>8} {'SM MHz':>7}")
    for r in ok:
        print(f"{r['kernel']:10} {r['route']:6} {r['measure_seconds'][0] * 1e6:11.2f} {r['measure_seconds'][1] * 1e6:9.2f} "
              f"{r['cupy_seconds'] * 1e6:9.2f} {r['difference_vs_cupy']:+7.2%} {r['run_to_run_spread']:7.2%} "
              f"{'yes' if r['within_spread'] else 'NO':>3} "
              f"{(r['predicted_seconds'] or math.nan) * 1e6:9.2f} {(r['prediction_error'] or math.nan):+8.1%} "
              f"{(r['sm_clock_hz'] or math.nan) / 1e6:7.0f}")
    print(f"{sum(r['within_spread'] for r in ok)} of {len(ok)} within the run-to-run spread of CuPy's timing")
    return 0


if __name__ == "__main__":
    sys.exit(main())
