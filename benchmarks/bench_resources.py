"""Resources of every kernel in a 100-kernel fatbin (sm_80 + sm_90 SASS, compute_90 PTX), and
of a 20-kernel .cu file for 4 architectures, compiled by nvcc and by NVRTC.

The fatbin is built once with nvcc (skipped, with the reason, when nvcc is missing); the
figure is the best of 5 runs of occupancy.all_kernel_resources(fatbin, arch="sm_90"). The
source figures are the best of 3 runs of occupancy.kernel_resources_by_architecture(path,
["sm_80", "sm_90", "sm_100", "sm_120"]): one nvcc (or NVRTC) compile per architecture, in
parallel, the cubins read and their SASS summarised (targets: 2 s with nvcc, 4 s with NVRTC,
on an idle machine with 4 cores or more).
    python benchmarks/bench_resources.py
"""

from __future__ import annotations

import glob
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


def source_file(folder: str) -> tuple[float, float | None]:
    """Best seconds of the 20-kernel file for 4 architectures, through nvcc and through NVRTC."""
    cu = Path(folder, "twenty.cu")
    cu.write_text("".join(TEMPLATE.format(i=i, bound=(64, 128, 256, 512, 1024)[i % 5], words=32 * (1 + i % 64),
                                          steps=4 + i % 16) for i in range(SOURCE_KERNELS)))
    out = []
    for compiler in ("nvcc", "nvrtc"):
        times = []
        for _ in range(3):
            start = time.perf_counter()
            found = occupancy.kernel_resources_by_architecture(cu, SOURCE_ARCHS, compiler=compiler)
            times.append(time.perf_counter() - start)
        assert all(len(k) == SOURCE_KERNELS for k in found.values()), {a: len(k) for a, k in found.items()}
        out.append(min(times))
    return out[0], out[1]


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
        with_nvcc, with_nvrtc = source_file(folder)
    print(f"a {SOURCE_KERNELS}-kernel .cu for {len(SOURCE_ARCHS)} architectures: nvcc {with_nvcc:.2f} s "
          f"(target 2 s), NVRTC {with_nvrtc:.2f} s (target 4 s)")
    return 0 if min(times) < 1.0 else 1


if __name__ == "__main__":
    sys.exit(main())
