"""CUDA 12.x through NVIDIA's wheels: NVRTC 12.9 (nvidia-cuda-nvrtc-cu12) makes the PTX of the
project's own device-only kernels, ``kernel_resources(ptx, compiler=<ptxas 12.9>)`` assembles it,
and every kernel's registers, static shared memory, stack, spills and barriers equal what
``ptxas 12.9 -v`` prints for the same PTX (the back end that nvcc 12.9 runs for
``--resource-usage``). CUDA 12's cubins differ from CUDA 13's where gpuroof reads them (no
reserved shared memory section on sm_90 and later). The cu12 wheels hold no nvcc: the nvcc route
of CUDA 12.x is checked in test_resources_nvcc.py where a CUDA 12 toolkit is installed."""

from __future__ import annotations

import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import occupancy
from tests.occupancy.conftest import _NVRTC12_SCRIPT, _wheel_file
from tests.occupancy.test_resources_nvcc import FIELDS, printout

HERE = Path(__file__).resolve().parent
SOURCES = (HERE / "sass_kernels.cu", HERE.parents[1] / "docs" / "examples" / "warp_specialised.cu")
# The default run samples sm_90 (reserved shared memory differs from CUDA 13) and sm_120;
# GPUROOF_TEST_FULL=1 adds sm_80 and sm_100 (CUDA 12.8 and later target sm_100 and sm_120).
ARCHS = ("sm_80", "sm_90", "sm_100", "sm_120") if os.environ.get("GPUROOF_TEST_FULL") == "1" else ("sm_90", "sm_120")
NVRTC12 = _wheel_file("cuda_nvrtc", "lib", "libnvrtc.so.12")
PTXAS12 = _wheel_file("cuda_nvcc", "bin", "ptxas")

pytestmark = pytest.mark.skipif(NVRTC12 is None or PTXAS12 is None,
                                reason="the CUDA 12.9 wheels (nvidia-cuda-nvrtc-cu12, nvidia-cuda-nvcc-cu12) "
                                       "are not installed")


@pytest.fixture(scope="module")
def ptx(tmp_path_factory) -> dict[str, Path]:
    """sm_XY -> NVRTC 12.9's PTX of the kernels, one child process per architecture, in parallel."""
    folder = tmp_path_factory.mktemp("cuda12")
    source = folder / "kernels.cu"
    source.write_text("\n".join(p.read_text() for p in SOURCES))
    (folder / "nvrtc12.py").write_text(_NVRTC12_SCRIPT)

    def one(arch: str) -> Path:
        out = folder / f"kernels.{arch}.ptx"
        subprocess.run([sys.executable, str(folder / "nvrtc12.py"), str(NVRTC12), str(source), arch[3:], str(out)],
                       check=True, capture_output=True)
        return out

    with ThreadPoolExecutor(max_workers=len(ARCHS)) as pool:
        return dict(zip(ARCHS, pool.map(one, ARCHS)))


@pytest.mark.parametrize("arch", ARCHS)
def test_every_kernel_equals_ptxas_12_resource_usage(ptx, arch):
    done = subprocess.run([str(PTXAS12), "-v", f"-arch={arch}", str(ptx[arch]), "-o", os.devnull],
                          capture_output=True, text=True, check=True)
    want = printout(done.stdout + done.stderr)
    found = occupancy.all_kernel_resources(ptx[arch], arch=arch, compiler=str(PTXAS12))
    assert {(name, arch): {f: getattr(r, f) for f in FIELDS} for name, r in found.items()} == want
    assert {r.compiler for r in found.values()} == {"ptxas 12.9"}
    assert len(found) == 23 and any(r.block_barriers for r in found.values())  # the kernels of SOURCES
