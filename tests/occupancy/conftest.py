"""Fixtures of the occupancy tests: NVIDIA's header as an oracle, and a GPU session."""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
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
            pytest.skip("cuda-python (cuda.core) is not installed: pip install -e '.[gpu]' in gpuroof's checkout")
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


# -- The resource corpus: kernels compiled by NVIDIA's own tools, for the differential tests --

# Source file -> oldest SM it compiles for (ceilings.cu uses mma.sync m16n8k16, sm_80+).
# The occupancy probes (_differential.probe_source) join on the GPU only: they take ptxas ~10 s
# per architecture, and these files already hold more than 50 kernels.
CORPUS_SOURCES = {"suite.cu": 50, "prediction.cu": 50, "resources.cu": 50, "ceilings.cu": 80}
# CUDA 13's nvcc targets sm_75 and later (nvcc --list-gpu-arch); the older architectures are
# compiled with NVIDIA's CUDA 12.9 NVRTC and ptxas wheels (nvidia-cuda-nvrtc-cu12, -nvcc-cu12).
NVCC_ARCHS = ("sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_120")
LEGACY_ARCHS = ("sm_50", "sm_61", "sm_70")
# The default suite compiles the corpus for a fixed sample of the architectures: both
# toolchains, the oldest and the newest, and those whose rules differ (sm_70 independent thread
# scheduling, sm_80 async copies, sm_90 clusters and reserved shared memory). `make test-full`
# (GPUROOF_TEST_FULL=1) compiles it for every architecture.
FULL = os.environ.get("GPUROOF_TEST_FULL") == "1"
SAMPLED_ARCHS = ("sm_50", "sm_70", "sm_75", "sm_80", "sm_90", "sm_120")


@dataclass(frozen=True)
class CorpusBinary:
    """One source compiled for one architecture: the cubin and what ptxas -v said."""

    arch: str
    source: str
    cubin: bytes
    ptxas_log: str
    tool: str


@dataclass
class ResourceCorpus:
    binaries: list[CorpusBinary]
    skipped: dict[str, str]  # arch -> why it was not compiled
    cuobjdump: str | None
    nvcc_version: str | None
    archs: tuple[str, ...] = LEGACY_ARCHS + NVCC_ARCHS

    @staticmethod
    def source(name: str) -> str:
        return corpus_source(name)

    def by_arch(self, arch: str) -> list[CorpusBinary]:
        return [b for b in self.binaries if b.arch == arch]


def _wheel_file(package: str, *parts: str) -> Path | None:
    """A file inside an installed NVIDIA wheel (nvidia/<package>/...), or None."""
    import importlib.util

    spec = importlib.util.find_spec("nvidia")
    for root in (spec.submodule_search_locations or []) if spec else []:
        path = Path(root, package, *parts)
        if path.exists():
            return path
    return None


def _nvcc() -> str | None:
    return shutil.which("nvcc") or next(iter(sorted(glob.glob("/usr/local/cuda*/bin/nvcc"), reverse=True)), None)


def cuobjdump_path() -> str | None:
    """cuobjdump from PATH, the CUDA toolkit, or NVIDIA's nvidia-cuda-cuobjdump wheel."""
    found = shutil.which("cuobjdump") or next(iter(glob.glob("/usr/local/cuda*/bin/cuobjdump")), None)
    if found:
        return found
    wheel = _wheel_file("cu13", "bin", "cuobjdump")
    return str(wheel) if wheel else None


def corpus_source(name: str) -> str:
    from validate.checks import _differential, _occupancy
    from validate.device import _compile

    if name == "probe.cu":
        return _differential.probe_source([v for v in _occupancy.probe_variants() if v.max_register_count is None])
    return _compile.kernel_source(name)


# NVRTC 12.9 through ctypes, in a child process: cuda.bindings 13 binds NVRTC 13 (which no
# longer targets sm_50-sm_72), and a libnvrtc.so.12 loaded in the test process would be picked
# up by cuda.bindings in its place.
_NVRTC12_SCRIPT = """
import ctypes, sys
lib = ctypes.CDLL(sys.argv[1])
source, arch, out = open(sys.argv[2], "rb").read(), sys.argv[3], sys.argv[4]
program = ctypes.c_void_p()
assert lib.nvrtcCreateProgram(ctypes.byref(program), source, b"corpus.cu", 0, None, None) == 0
options = [b"-arch=compute_" + arch.encode(), b"-std=c++17"]
result = lib.nvrtcCompileProgram(program, len(options), (ctypes.c_char_p * len(options))(*options))
size = ctypes.c_size_t()
lib.nvrtcGetProgramLogSize(program, ctypes.byref(size))
log = ctypes.create_string_buffer(size.value)
lib.nvrtcGetProgramLog(program, log)
if result != 0:
    sys.exit("NVRTC 12 failed: " + log.value.decode())
lib.nvrtcGetPTXSize(program, ctypes.byref(size))
ptx = ctypes.create_string_buffer(size.value)
lib.nvrtcGetPTX(program, ptx)
open(out, "wb").write(ptx.value)
"""


@pytest.fixture(scope="session")
def resource_corpus(tmp_path_factory) -> ResourceCorpus:
    """Every corpus source compiled for every architecture once per session, in parallel."""
    from concurrent.futures import ThreadPoolExecutor

    folder = tmp_path_factory.mktemp("resource_corpus")
    sources = {name: corpus_source(name) for name in CORPUS_SOURCES}
    for name, text in sources.items():
        (folder / name).write_text(text, encoding="utf-8")
    skipped: dict[str, str] = {} if FULL else {
        a: "sampled out of the default run (GPUROOF_TEST_FULL=1, make test-full, compiles it)"
        for a in LEGACY_ARCHS + NVCC_ARCHS if a not in SAMPLED_ARCHS}
    jobs = []
    nvcc = _nvcc()
    nvcc_version = None
    if nvcc is None:
        skipped.update({a: "nvcc is not installed" for a in NVCC_ARCHS})
    else:
        listed = subprocess.run([nvcc, "--list-gpu-arch"], capture_output=True, text=True).stdout.split()
        nvcc_version = subprocess.run([nvcc, "--version"], capture_output=True, text=True).stdout
        for arch in NVCC_ARCHS:
            if arch in skipped:
                continue
            if f"compute_{arch[3:]}" not in listed:
                skipped[arch] = f"{nvcc} does not target {arch}"
                continue
            jobs += [("nvcc", arch, name) for name, low in CORPUS_SOURCES.items() if int(arch[3:]) >= low]
    nvrtc12 = _wheel_file("cuda_nvrtc", "lib", "libnvrtc.so.12")
    ptxas12 = _wheel_file("cuda_nvcc", "bin", "ptxas")
    if nvrtc12 is None or ptxas12 is None:
        skipped.update({a: "the CUDA 12.9 NVRTC/ptxas wheels (nvidia-cuda-nvrtc-cu12, nvidia-cuda-nvcc-cu12) "
                           "are not installed" for a in LEGACY_ARCHS})
    else:
        (folder / "nvrtc12.py").write_text(_NVRTC12_SCRIPT, encoding="utf-8")
        jobs += [("legacy", arch, name) for arch in LEGACY_ARCHS if arch not in skipped
                 for name, low in CORPUS_SOURCES.items() if int(arch[3:]) >= low]

    def run(job) -> CorpusBinary:
        tool, arch, name = job
        out = folder / f"{Path(name).stem}.{arch}.cubin"
        if tool == "nvcc":
            done = subprocess.run([nvcc, "-cubin", f"-arch={arch}", "-std=c++17", "--resource-usage",
                                   "-o", str(out), str(folder / name)], capture_output=True, text=True)
            label = "nvcc --resource-usage"
        else:
            ptx = folder / f"{Path(name).stem}.{arch}.ptx"
            subprocess.run([sys.executable, str(folder / "nvrtc12.py"), str(nvrtc12), str(folder / name),
                            arch[3:], str(ptx)], check=True, capture_output=True)
            done = subprocess.run([str(ptxas12), "-v", f"-arch={arch}", "-o", str(out), str(ptx)],
                                  capture_output=True, text=True)
            label = "NVRTC 12.9 + ptxas 12.9 -v"
        if done.returncode != 0:
            raise RuntimeError(f"{label} failed on {name} for {arch}:\n{done.stdout}\n{done.stderr}")
        return CorpusBinary(arch, name, out.read_bytes(), done.stdout + done.stderr, label)

    with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as pool:
        binaries = list(pool.map(run, jobs))
    return ResourceCorpus(binaries, skipped, cuobjdump_path(), nvcc_version)


@pytest.fixture(scope="session")
def triton_add():
    """A Triton vector add compiled offline for sm_90 (1024 elements per program, 4 warps)."""
    triton = pytest.importorskip("triton", reason="Triton is not installed")
    import triton.language as tl
    from triton.backends.compiler import GPUTarget

    @triton.jit
    def add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)

    sig = {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"}
    try:
        return triton.compile(triton.compiler.ASTSource(fn=add, signature=sig, constexprs={"BLOCK": 1024}),
                              target=GPUTarget("cuda", 90, 32), options={"num_warps": 4})
    except Exception as exc:  # noqa: BLE001 - a Triton that cannot compile here is not our bug
        pytest.skip(f"Triton cannot compile offline here: {exc}")


@pytest.fixture(scope="session")
def numba_scale_ptx():
    """PTX of a numba-cuda kernel (x[i] *= 2) compiled offline for sm_90."""
    cuda = pytest.importorskip("numba.cuda", reason="numba-cuda is not installed")
    from numba import float32

    def scale(x):
        i = cuda.grid(1)
        if i < x.size:
            x[i] *= 2.0

    try:
        ptx, _ = cuda.compile_ptx(scale, (float32[:],), cc=(9, 0))
    except Exception as exc:  # noqa: BLE001 - a numba that cannot compile here is not our bug
        pytest.skip(f"numba-cuda cannot compile offline here: {exc}")
    return ptx
