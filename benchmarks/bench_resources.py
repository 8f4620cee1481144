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
    python benchmarks/bench_resources.py
"""

from __future__ import annotations

import glob
import os
import resource
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


def main() -> int:
    nvcc = shutil.which("nvcc") or next(iter(sorted(glob.glob("/usr/local/cuda*/bin/nvcc"), reverse=True)), None)
    if nvcc is None:
        print("skipped: nvcc is not installed")
        return 0
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
    return 0 if min(times) < 1.0 else 1


if __name__ == "__main__":
    sys.exit(main())
