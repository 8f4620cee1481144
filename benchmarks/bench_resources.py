"""Resources of every kernel in a 100-kernel fatbin (sm_80 + sm_90 SASS, compute_90 PTX), and
of a 20-kernel .cu file for 4 architectures, compiled by nvcc and by NVRTC.

The fatbin is built once with nvcc (skipped, with the reason, when nvcc is missing); the
figure is the best of 5 runs of occupancy.all_kernel_resources(fatbin, arch="sm_90"). The
source figures are the best of 3 runs of occupancy.kernel_resources_by_architecture(path,
["sm_80", "sm_90", "sm_100", "sm_120"]): one nvcc (or NVRTC) compile per architecture, in
parallel, the cubins read and their SASS summarised (targets: 2 s with nvcc, 4 s with NVRTC,
on an idle machine with 4 cores or more). The CPU-seconds are printed beside the wall time:
a wall time measured on a busy machine says little, the CPU it took does not change with load.

Where the time goes (CUDA 13.0, per architecture): nvcc ~0.45 CPU-s, most of it cicc parsing
the 1.3 MB that the implicit cuda_runtime.h preprocesses to (gcc -E 0.06 s, ptxas 0.06 s); nvdisasm ~0.3
CPU-s, nearly all start-up (its tables for the architecture: a 1-kernel cubin costs as much).
One `nvcc -fatbin -t 4` for the 4 architectures costs the same CPU as 4 `nvcc -cubin` (it
preprocesses and runs cicc once per architecture too), so each architecture is one process
chain (nvcc, then nvdisasm) on its own thread: on 4 idle cores the wall time is one chain.

gpuroof's own processing beside the compiler's: a file is compiled once by nvcc (its CPU-seconds,
the compiler's time), then what gpuroof does with the result is timed alone (reading the cubin,
demangling, the PTX and the ptxas log; with --json also nvdisasm and the SASS summary), as a
share of the compiler's time (target: 20 % or less). The default file is our own CUB-heavy one
(CUB's segmented and radix sorts and a reduction, for float and int keys: the kernels a
sort-heavy project file builds); --file measures any file, with its options:
    python benchmarks/bench_resources.py
    python benchmarks/bench_resources.py --file ggml/src/ggml-cuda/argsort.cu --arch sm_90 \
        --nvcc-options='-std=c++17 -O3 -Iggml/include -Iggml/src'

On the 2-core machine shared by the project's engineers, 2026-12-06, the CUB-heavy file for
sm_90 (32 kernels, 128,728 SASS instructions; the file written out and passed with --file,
--nvcc-options=-O3, PYTHONPATH=. so that the checkout's packages are measured), load average 1.8:
nvcc 21.7 CPU-s (25 s wall), --json 4.05 CPU-s (19 %; 4.05 s wall, 16 %). nvdisasm ~2.2 CPU-s of
it (which prints nothing until it has read the whole cubin, so nothing of ours can overlap it),
reading its listing ~0.5, the summaries ~1.55 (the 4 partition kernels, the same instructions
for 4 sort instances, summarised once), of which the register dataflow walks ~0.85. A small file's
--json is nvdisasm's start-up (about 0.3 CPU-s whatever the cubin), as long as its compile.
nvcc's CPU-seconds move with the load (22-48 in a day's runs): compare shares of runs made
under the same load only.
"""

from __future__ import annotations

import argparse
import glob
import os
import resource
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import occupancy

KERNELS = 100
TEMPLATE = """
extern "C" __global__ void __launch_bounds__({bound}) k{i}(const float* __restrict__ x, float* __restrict__ y, int n) {{
  __shared__ float s[{words}];
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  float v = t < n ? x[t] : 0.0f;
#pragma unroll
  for (int j = 0; j < {steps}; j++) v = v * v + (float)j;
  s[threadIdx.x % {words}] = v;
  __syncthreads();
  if (t < n) y[t] = s[(threadIdx.x + 1) % {words}];
}}
"""


SOURCE_KERNELS = 20
SOURCE_ARCHS = ["sm_80", "sm_90", "sm_100", "sm_120"]


def _cpu() -> float:
    """CPU seconds of this process and of the children it has waited for (nvcc, nvdisasm)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def source_file(folder: str) -> dict[str, tuple[float, float]]:
    """Best wall seconds, and the CPU seconds of that run, of the 20-kernel file for 4
    architectures through nvcc and through NVRTC; and, for one architecture, where the CPU
    goes (nvcc's compile, nvdisasm's listing of the cubin)."""
    from occupancy._nvcc import nvcc_compile
    from occupancy._nvdisasm import disassemble
    from occupancy._sass import sass_summaries

    cu = Path(folder, "twenty.cu")
    cu.write_text("".join(TEMPLATE.format(i=i, bound=(64, 128, 256, 512, 1024)[i % 5], words=32 * (1 + i % 64),
                                          steps=4 + i % 16) for i in range(SOURCE_KERNELS)))
    out = {}
    for compiler in ("nvcc", "nvrtc"):
        runs = []
        for _ in range(3):
            sass_summaries.cache_clear()  # the same cubins again: nvdisasm would not run
            cpu, start = _cpu(), time.perf_counter()
            found = occupancy.kernel_resources_by_architecture(cu, SOURCE_ARCHS, compiler=compiler)
            runs.append((time.perf_counter() - start, _cpu() - cpu))
        assert all(len(k) == SOURCE_KERNELS for k in found.values()), {a: len(k) for a, k in found.items()}
        out[compiler] = min(runs)
    cpu = _cpu()
    compiled = nvcc_compile(cu, "sm_90")
    out["nvcc, one architecture"] = (0.0, _cpu() - cpu)
    cpu = _cpu()
    disassemble(compiled.cubin)
    out["nvdisasm, one cubin"] = (0.0, _cpu() - cpu)
    return out


# Our own sort-heavy translation unit: CUB's device-wide sorts and a reduction, instantiated for two
# key types (the toolkit's CUB; the kernels are CUB's templates, the file is ours).
HEAVY = r"""
#include <cub/cub.cuh>
template <typename K>
void sorts(void* tmp, size_t& bytes, const K* keys, K* out, const int* vals, int* vout, int n, int segments,
           const int* begin, const int* end, cudaStream_t s) {
    cub::DeviceSegmentedSort::SortPairs(tmp, bytes, keys, out, vals, vout, n, segments, begin, end, s);
    cub::DeviceSegmentedSort::SortPairsDescending(tmp, bytes, keys, out, vals, vout, n, segments, begin, end, s);
    cub::DeviceRadixSort::SortPairs(tmp, bytes, keys, out, vals, vout, n, 0, sizeof(K) * 8, s);
    cub::DeviceReduce::Sum(tmp, bytes, keys, out, n, s);
}
template void sorts<float>(void*, size_t&, const float*, float*, const int*, int*, int, int, const int*, const int*,
                           cudaStream_t);
template void sorts<int>(void*, size_t&, const int*, int*, const int*, int*, int, int, const int*, const int*,
                         cudaStream_t);
"""


def own_share(path: Path, arch: str, options: list[str]) -> dict[str, float]:
    """nvcc's CPU-seconds and wall seconds for ``path`` and gpuroof's own processing of its
    output, without the SASS summary (the table, the gate) and with it (--json); the CPU-seconds
    of the run with the least, and that run's wall seconds (``"... wall"``), best of 3 each."""
    from occupancy import _kernel_resources
    from occupancy._nvcc import nvcc_compile
    from occupancy._sass import sass_summaries

    cpu, start = _cpu(), time.perf_counter()
    compiled = nvcc_compile(path, arch, options)
    out = {"nvcc": _cpu() - cpu, "nvcc wall": time.perf_counter() - start}
    for label, sass in (("table", False), ("json", True)):
        runs = []
        for _ in range(3):
            sass_summaries.cache_clear()
            token = _kernel_resources._WITH_SASS.set(sass)
            cpu, start = _cpu(), time.perf_counter()
            found = _kernel_resources._resources(compiled.cubin, path.name, ptx=compiled.ptx, log=compiled.log,
                                                 compiler=compiled.tool)
            runs.append((_cpu() - cpu, time.perf_counter() - start))
            _kernel_resources._WITH_SASS.reset(token)
        out[label], out[f"{label} wall"] = min(runs)
    out["kernels"] = len(found)
    return out


def print_share(name: str, figures: dict[str, float]) -> bool:
    nvcc, wall = figures["nvcc"], figures["nvcc wall"]
    print(f"{name}: {figures['kernels']:.0f} kernels, nvcc {nvcc:.2f} CPU-s ({wall:.2f} s wall, load average "
          f"{os.getloadavg()[0]:.1f}); gpuroof's own processing: "
          f"table and gate {figures['table']:.2f} CPU-s ({figures['table'] / nvcc:.0%}), --json "
          f"{figures['json']:.2f} CPU-s ({figures['json'] / nvcc:.0%}) (target: 20 % or less); wall: table "
          f"{figures['table wall']:.2f} s ({figures['table wall'] / wall:.0%}), --json {figures['json wall']:.2f} s "
          f"({figures['json wall'] / wall:.0%})")
    return figures["table"] <= 0.2 * nvcc


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--file", type=Path, help="measure gpuroof's own processing of this file only")
    parser.add_argument("--arch", default="sm_90")
    parser.add_argument("--nvcc-options", default="", help="the file's nvcc options, quoted")
    args = parser.parse_args()
    nvcc = shutil.which("nvcc") or next(iter(sorted(glob.glob("/usr/local/cuda*/bin/nvcc"), reverse=True)), None)
    if nvcc is None:
        print("skipped: nvcc is not installed")
        return 0
    if args.file is not None:
        return 0 if print_share(str(args.file), own_share(args.file, args.arch, shlex.split(args.nvcc_options))) \
            else 1
    source = "".join(TEMPLATE.format(i=i, bound=(64, 128, 256, 512, 1024)[i % 5], words=32 * (1 + i % 64),
                                     steps=4 + i % 16) for i in range(KERNELS))
    with tempfile.TemporaryDirectory() as folder:
        cu, fatbin = Path(folder, "many.cu"), Path(folder, "many.fatbin")
        cu.write_text(source)
        subprocess.run([nvcc, "-fatbin", "-gencode", "arch=compute_80,code=sm_80",
                        "-gencode", "arch=compute_90,code=[sm_90,compute_90]", "-o", str(fatbin), str(cu)],
                       check=True)
        data = fatbin.read_bytes()
    times = []
    for _ in range(5):
        start = time.perf_counter()
        found = occupancy.all_kernel_resources(data, arch="sm_90")
        times.append(time.perf_counter() - start)
    assert len(found) == KERNELS, len(found)
    print(f"{len(found)} kernels from a {len(data) / 1024:.0f} KiB fatbin: best {min(times) * 1e3:.1f} ms, "
          f"median {sorted(times)[2] * 1e3:.1f} ms (target: under 1 s)")
    with tempfile.TemporaryDirectory() as folder:
        figures = source_file(folder)
    print(f"a {SOURCE_KERNELS}-kernel .cu for {len(SOURCE_ARCHS)} architectures ({os.cpu_count()} cores, "
          f"load average {os.getloadavg()[0]:.1f}):")
    for route, target in (("nvcc", 2.0), ("nvrtc", 4.0)):
        wall, cpu = figures[route]
        print(f"  {route:<6} {wall:.2f} s (target {target:.0f} s), {cpu:.2f} CPU-seconds")
    print(f"  where the CPU goes, per architecture: nvcc {figures['nvcc, one architecture'][1]:.2f} s "
          f"(gcc -E, cicc, ptxas), nvdisasm {figures['nvdisasm, one cubin'][1]:.2f} s (the SASS summary)")
    with tempfile.TemporaryDirectory() as folder:
        heavy = Path(folder, "cub_sorts.cu")
        heavy.write_text(HEAVY)
        share = print_share(f"our CUB-heavy file for {args.arch}", own_share(heavy, args.arch, ["-O3"]))
    return 0 if min(times) < 1.0 and share else 1


if __name__ == "__main__":
    sys.exit(main())
