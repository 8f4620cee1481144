"""Fixtures of the occupancy tests: NVIDIA's header as an oracle, and a GPU session."""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).parent
HEADER = "cuda_occupancy.h"


def find_header() -> Path | None:
    """cuda_occupancy.h from CUDA_HOME/CUDA_PATH, nvcc's location, or /usr/local/cuda*."""
    roots = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH")]
    nvcc = shutil.which("nvcc")
    if nvcc:
        roots.append(str(Path(os.path.realpath(nvcc)).parent.parent))
    roots += sorted(glob.glob("/usr/local/cuda*"), reverse=True)
    for root in roots:
        if root and (Path(root) / "include" / HEADER).is_file():
            return Path(root) / "include" / HEADER
    return None


class Oracle:
    """Runs the compiled driver (tests/occupancy/oracle.cpp) on many lines at once."""

    def __init__(self, exe: Path, header: Path):
        self.exe = exe
        self.header = header

    @staticmethod
    def props(arch) -> list[int]:
        return [
            arch.major, arch.minor, arch.max_threads_per_block, arch.max_threads_per_sm,
            arch.max_registers_per_block, arch.registers_per_sm, arch.warp_size,
            arch.max_shared_memory_per_block, arch.shared_memory_per_sm, 132,
            arch.max_shared_memory_per_block_optin, arch.reserved_shared_memory_per_block,
        ]

    def run(self, lines: list[str]) -> list[list[int]]:
        out = subprocess.run(
            [str(self.exe)], input="\n".join(lines) + "\n", capture_output=True, text=True, check=True
        ).stdout.splitlines()
        assert len(out) == len(lines)
        return [[int(x) for x in row.split()] for row in out]


@pytest.fixture(scope="session")
def oracle(tmp_path_factory) -> Oracle:
    """The header compiled once per session; skips where g++ or the header is missing."""
    gxx = shutil.which("g++")
    if gxx is None:
        pytest.skip("g++ is not installed: cannot build the cuda_occupancy.h oracle")
    header = find_header()
    if header is None:
        pytest.skip("cuda_occupancy.h not found (set CUDA_HOME or install the CUDA toolkit)")
    exe = tmp_path_factory.mktemp("oracle") / "oracle"
    subprocess.run(
        [gxx, "-O1", "-I", str(header.parent), str(HERE / "oracle.cpp"), "-o", str(exe)],
        check=True, capture_output=True,
    )
    return Oracle(exe, header)


@pytest.fixture(scope="session")
def cuda_device():
    """A cuda.core Device for the gpu-marked tests; skips with a reason when none exists."""
    try:
        from cuda.core import Device  # cuda-core >= 0.4
    except ImportError:
        try:
            from cuda.core.experimental import Device
        except ImportError:
            pytest.skip("cuda-python (cuda.core) is not installed: pip install 'gpuroof[gpu]'")
    try:
        from cuda.bindings import runtime

        err, count = runtime.cudaGetDeviceCount()
        if int(err) != 0 or count < 1:
            pytest.skip(f"no CUDA device ({err!r})")
        device = Device(0)
        device.set_current()
    except Exception as exc:  # driver missing, no device, ...
        pytest.skip(f"no usable CUDA device: {exc}")
    return device
