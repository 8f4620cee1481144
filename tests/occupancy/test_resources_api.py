"""kernel_resources' inputs (source, PTX, cubin, fatbin, host object, frameworks), its errors,
and resources= on every occupancy entry point."""

from __future__ import annotations

import glob
import importlib.util
import json
import os
import re
import shutil
import subprocess
import types
from pathlib import Path

import pytest
from pydantic import BaseModel

import occupancy
from occupancy._fatbin import lz4_block_decompress
from occupancy.common import install_extra

# One worker builds the session's compiled corpus and framework kernels (tests/occupancy/conftest.py)
# for all the tests that read them: `make test` runs pytest-xdist with --dist loadgroup.
pytestmark = pytest.mark.xdist_group("compiled_corpus")

nvrtc = pytest.importorskip("cuda.bindings.nvrtc", reason="cuda-python is not installed: pip install -e '.[compile]' in gpuroof's checkout")

SOURCE = """
extern "C" __global__ void __launch_bounds__(256, 2)
saxpy(float a, const float* x, const float* y, float* out, int n) {
    __shared__ float tile[2048];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    tile[threadIdx.x] = i < n ? a * x[i] + y[i] : 0.0f;
    __syncthreads();
    if (i < n) out[i] = tile[(threadIdx.x + 1) % blockDim.x];
}
template <int N> __global__ void scaled(float* x) { x[threadIdx.x] *= N; }
template __global__ void scaled<2>(float*);
template __global__ void scaled<3>(float*);
"""


def _nvcc() -> str | None:
    return shutil.which("nvcc") or next(iter(sorted(glob.glob("/usr/local/cuda*/bin/nvcc"), reverse=True)), None)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """SOURCE built by nvcc as a cubin, PTX, fatbins (plain, LZ4, zstd) and a host object."""
    nvcc = _nvcc()
    if nvcc is None:
        pytest.skip("nvcc is not installed")
    folder = tmp_path_factory.mktemp("built")
    cu = folder / "k.cu"
    cu.write_text(SOURCE)
    gencode = ["-gencode", "arch=compute_75,code=sm_75", "-gencode", "arch=compute_80,code=sm_80",
               "-gencode", "arch=compute_90,code=[sm_90,compute_90]"]
    # One nvcc build: the host object, keeping its cubins and PTX, which are byte for byte what
    # `nvcc -cubin -arch=sm_90` and `nvcc -ptx -arch=compute_90` write; the three fatbins are
    # packed from them by fatbinary as `nvcc -fatbin` does (nvcc -dryrun shows the command),
    # instead of three more builds of the same code.
    keep = folder / "keep"
    keep.mkdir()
    subprocess.run([nvcc, "-c", *gencode, "-keep", "-keep-dir", str(keep), "-o", str(folder / "k.o"), str(cu)],
                   check=True, capture_output=True)
    out = {"o": folder / "k.o", "cubin": keep / "k.compute_90.sm_90.cubin", "ptx": keep / "k.compute_90.ptx"}
    images = [f"--image3=kind=elf,sm={sm},file={keep}/k.{name}.cubin"
              for sm, name in ((75, "compute_75"), (80, "compute_80"), (90, "compute_90.sm_90"))]
    images.append(f"--image3=kind=ptx,sm=90,file={keep}/k.compute_90.ptx")
    # nvcc -fatbin runs the fatbinary beside it, so a toolkit that builds fatbins has one
    fatbinary = shutil.which("fatbinary", path=str(Path(os.path.realpath(nvcc)).parent)) or shutil.which("fatbinary")
    if fatbinary is None:
        pytest.skip(f"no fatbinary beside {nvcc} nor on PATH: nvcc cannot build fatbins here")
    for suffix, compress in (("fatbin", ["--compress-mode=none"]),
                             ("lz4.fatbin", ["-compress-all", "--compress-mode=speed"]),
                             ("zstd.fatbin", ["-compress-all", "--compress-mode=size"])):
        out[suffix] = folder / f"k.{suffix}"
        subprocess.run([fatbinary, f"--create={out[suffix]}", "-64", *compress, *images], check=True,
                       capture_output=True)
    return out


def test_source_example_fields():
    r = occupancy.kernel_resources(SOURCE, arch="sm_90", kernel="saxpy")
    assert (r.static_shared_memory, r.max_threads_per_block, r.min_blocks_per_sm, r.block_barriers) == (8192, 256, 2, 1)
    assert r.spill_store_bytes == 0 and r.local_memory == 0
    assert r.architecture == "sm_90" and r.kernel == "saxpy"
    assert set(r.sources) >= {"registers_per_thread", "static_shared_memory", "spill_store_bytes", "min_blocks_per_sm"}


def test_options_pass_through_defines_and_register_cap():
    src = """
    extern "C" __global__ void k(float* x, int n) {
      float a[N];
      #pragma unroll
      for (int i = 0; i < N; i++) a[i] = x[i * n + threadIdx.x];
      float s = 0;
      #pragma unroll
      for (int i = 0; i < N; i++) s += a[i] * a[(i + 1) % N];
      x[threadIdx.x] = s; }
    """
    free = occupancy.kernel_resources(src, arch="sm_80", options=["-DN=48"])
    capped = occupancy.kernel_resources(src, arch="sm_80", options=["-DN=48", "--maxrregcount=24"])
    assert free.registers_per_thread > 24 >= capped.registers_per_thread
    with pytest.raises(occupancy.CompileError) as info:
        occupancy.kernel_resources(src, arch="sm_80")  # N undefined
    assert 'identifier "N" is undefined' in info.value.log
    assert isinstance(info.value, occupancy.OccupancyError)


def test_source_file_includes_its_folder(tmp_path):
    (tmp_path / "size.h").write_text("#define WORDS 300\n")
    (tmp_path / "k.cu").write_text('#include "size.h"\nextern "C" __global__ void k(float* x) {'
                                   ' __shared__ float s[WORDS]; s[threadIdx.x % WORDS] = x[0];'
                                   ' __syncthreads(); x[1] = s[threadIdx.x % 7]; }\n')
    assert occupancy.kernel_resources(tmp_path / "k.cu", arch="sm_90").static_shared_memory == 1200
    assert occupancy.kernel_resources(str(tmp_path / "k.cu"), arch="sm_90").static_shared_memory == 1200


@pytest.mark.parametrize(
    ("kernel", "expected"),
    [("saxpy", "saxpy"), ("_Z6scaledILi2EEvPf", "_Z6scaledILi2EEvPf")],
    ids=["extern-c", "mangled"],
)
def test_kernel_lookup(kernel, expected):
    assert occupancy.kernel_resources(SOURCE, arch="sm_90", kernel=kernel).kernel == expected


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({}, r"holds 3 kernels; choose one with kernel= \(--kernel on the command line\): .*saxpy"),
        ({"kernel": "scaled"}, "is ambiguous"),
        ({"kernel": "nope"}, "not found; the input holds .*saxpy"),
    ],
    ids=["several", "ambiguous", "unknown"],
)
def test_kernel_choice_errors(kwargs, message):
    with pytest.raises(occupancy.OccupancyError, match=message):
        occupancy.kernel_resources(SOURCE, arch="sm_90", **kwargs)


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: occupancy.kernel_resources(SOURCE), occupancy.OccupancyError, "arch= is required"),
        (lambda: occupancy.kernel_resources(SOURCE, arch="sm_90", options=["-arch=sm_80"]),
         occupancy.OccupancyError, "give the architecture as arch="),
        (lambda: occupancy.kernel_resources(SOURCE, arch="sm_90", options="-DN=1"), TypeError, "sequence"),
        (lambda: occupancy.kernel_resources(3.5, arch="sm_90"), TypeError, "not float"),
        (lambda: occupancy.kernel_resources("missing.cu", arch="sm_90"), FileNotFoundError, "missing.cu"),
        (lambda: occupancy.kernel_resources(SOURCE, arch="sm_99"), occupancy.OccupancyError, "known"),
        (lambda: occupancy.kernel_resources(b"\xff\xfe\x00binary", arch="sm_90"), occupancy.OccupancyError, "neither"),
    ],
    ids=["no-arch", "arch-option", "options-string", "float", "missing-file", "unknown-arch", "junk-bytes"],
)
def test_input_errors(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_nvrtc_refuses_an_old_target_with_the_list():
    _, major, _ = nvrtc.nvrtcVersion()
    if major < 13:
        pytest.skip("NVRTC 12 still targets sm_50")
    with pytest.raises(occupancy.OccupancyError, match=r"sm_50 is not a target .* sm_75"):
        occupancy.kernel_resources(SOURCE, arch="sm_50", kernel="saxpy")


def test_missing_cuda_python_says_what_to_install(monkeypatch):
    import builtins

    real = builtins.__import__

    def refuse(name, *args, **kwargs):
        if name.startswith("cuda.bindings") or (name == "cuda.bindings" or (args and args[2] and name == "cuda.bindings")):
            raise ImportError("No module named 'cuda.bindings'")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", refuse)
    with pytest.raises(ImportError, match=re.escape(install_extra("compile"))):
        occupancy.kernel_resources(SOURCE, arch="sm_90", kernel="saxpy")


def test_binaries_agree_with_each_other(built):
    cubin = occupancy.kernel_resources(built["cubin"], kernel="saxpy")
    assert cubin.architecture == "sm_90" and cubin.sources["registers_per_thread"].startswith("cubin ")
    assert occupancy.kernel_resources(built["cubin"].read_bytes(), kernel="saxpy") == cubin
    no_zstd = importlib.util.find_spec("zstandard") is None
    for name in ("fatbin", "lz4.fatbin", "zstd.fatbin", "o"):
        if no_zstd and name in ("zstd.fatbin", "o"):
            # without zstandard (the GPU image) a zstd entry is refused with what to install; the
            # host object's too where nvcc compressed it (CUDA 13's default)
            try:
                r = occupancy.kernel_resources(built[name], arch="sm_90", kernel="saxpy")
            except ImportError as exc:
                assert "needs zstandard: pip install zstandard" in str(exc)
                continue
            assert name == "o", "a zstd fatbin read without zstandard"
        else:
            r = occupancy.kernel_resources(built[name], arch="sm_90", kernel="saxpy")
        if r.sass is None:  # the whole reason, which an assertion's message would cut short
            print(name, r.sources.get("sass"))
        assert r.model_dump(exclude={"sources"}) == cubin.model_dump(exclude={"sources"}), (name, r.sources.get("sass"))
    ptx = occupancy.kernel_resources(built["ptx"], arch="sm_90", kernel="saxpy")
    same = ("registers_per_thread", "static_shared_memory", "block_barriers", "max_threads_per_block")
    assert [getattr(ptx, f) for f in same] == [getattr(cubin, f) for f in same]
    assert ptx.min_blocks_per_sm == 2 and ptx.spill_store_bytes == 0  # from the PTX and the ptxas log


@pytest.mark.parametrize(
    ("arch", "picked"),
    [("sm_80", "sm_80 cubin"), ("sm_86", "sm_80 cubin"), ("sm_75", "sm_75 cubin"), ("sm_100", "compute_90 PTX")],
    ids=["exact", "same-major", "oldest", "ptx-jit"],
)
def test_fatbin_picks_what_the_driver_would_load(built, arch, picked):
    r = occupancy.kernel_resources(built["fatbin"], arch=arch, kernel="saxpy")
    assert picked in r.sources["registers_per_thread"]


def test_fatbin_errors(built):
    with pytest.raises(occupancy.OccupancyError, match="cubin sm_75, cubin sm_80, cubin sm_90, ptx sm_90: give arch="):
        occupancy.kernel_resources(built["fatbin"], kernel="saxpy")
    with pytest.raises(occupancy.OccupancyError, match="nothing that runs on sm_70"):
        occupancy.kernel_resources(built["fatbin"], arch="sm_70", kernel="saxpy")
    with pytest.raises(occupancy.OccupancyError, match="does not run on arch=sm_80"):
        occupancy.kernel_resources(built["cubin"], arch="sm_80", kernel="saxpy")


@pytest.mark.parametrize(
    ("block", "size", "expected"),
    [
        (bytes([0x50]) + b"hello", 5, b"hello"),
        (bytes([0x12]) + b"a" + b"\x01\x00", 7, b"aaaaaaa"),  # overlapping match of offset 1
        (bytes([0x23]) + b"ab" + b"\x02\x00" + bytes([0x10]) + b"c", 10, b"abababababc"[:9] + b"c"),
    ],
    ids=["literals", "run", "repeat-then-literal"],
)
def test_lz4_block(block, size, expected):
    assert lz4_block_decompress(block, size) == expected[:size]


# -- resources= on every entry point ------------------------------------------------------

R = occupancy.KernelResources(
    kernel="k", architecture="sm_90", registers_per_thread=40, static_shared_memory=8192,
    block_barriers=1, max_threads_per_block=512,
)
LOOSE = dict(registers_per_thread=40, static_shared_memory=8192, block_barriers=1, max_threads_per_block=512)


@pytest.mark.parametrize(
    "call",
    [
        lambda **kw: occupancy.calculate("sm_90", threads_per_block=256, **kw),
        lambda **kw: occupancy.cliffs("sm_90", threads_per_block=256, **kw),
        lambda **kw: occupancy.max_potential_block_size("sm_90", sm_count=132, **kw),
        lambda **kw: occupancy.available_dynamic_shared_memory(
            "sm_90", threads_per_block=256, num_blocks=2,
            **{k: v for k, v in kw.items() if k != "max_threads_per_block"}),
    ],
    ids=["calculate", "cliffs", "max_potential_block_size", "available_dynamic_shared_memory"],
)
def test_resources_equal_loose_numbers(call):
    assert _figures(call(resources=R)) == _figures(call(**LOOSE))
    assert _figures(call(resources=R, registers_per_thread=40)) == _figures(call(**LOOSE))  # agreeing is fine


def _figures(result: object) -> object:
    """A result's figures: its dump (a result that holds its launch holds the resources only when given them)."""
    return result.model_dump() if isinstance(result, BaseModel) else result


@pytest.mark.parametrize(
    ("loose", "named"),
    [({"registers_per_thread": 32}, "registers_per_thread=32 disagrees with resources.registers_per_thread=40"),
     ({"static_shared_memory": 0}, "static_shared_memory=0 disagrees with resources.static_shared_memory=8192"),
     ({"block_barriers": 2}, "block_barriers=2 disagrees"),
     ({"max_threads_per_block": 1024}, "max_threads_per_block=1024 disagrees")],
    ids=["registers", "static", "barriers", "bounds"],
)
def test_disagreeing_numbers_are_an_error(loose, named):
    with pytest.raises(occupancy.OccupancyError, match=named):
        occupancy.calculate("sm_90", threads_per_block=256, resources=R, **loose)


def test_resources_on_another_architecture():
    assert occupancy.calculate("sm_86", threads_per_block=128, resources=R.model_copy(update={"architecture": "sm_80"}))
    with pytest.raises(occupancy.OccupancyError, match="compiled for sm_90, which cannot run on arch=sm_80"):
        occupancy.calculate("sm_80", threads_per_block=256, resources=R)
    with pytest.raises(TypeError, match="registers_per_thread is required"):
        occupancy.calculate("sm_90", threads_per_block=256)
    with pytest.raises(TypeError, match="KernelResources"):
        occupancy.calculate("sm_90", threads_per_block=256, resources={"registers_per_thread": 4})


def test_plot_takes_resources():
    pytest.importorskip("matplotlib")
    fig = occupancy.plot_occupancy("sm_90", threads_per_block=256, resources=R)
    assert "40 registers" in fig.texts[0].get_text() if fig.texts else fig._suptitle.get_text()


def test_fixed_block_size_and_optin_of_a_framework_kernel():
    r = occupancy.KernelResources(kernel="t", architecture="sm_90", registers_per_thread=128,
                                  threads_per_block=256, dynamic_shared_memory=98304,
                                  max_dynamic_shared_memory=232448)
    c = occupancy.calculate("sm_90", resources=r)
    assert (c.launch.threads_per_block, c.launch.dynamic_shared_memory, c.active_blocks_per_sm) == (256, 98304, 2)
    best = occupancy.max_potential_block_size("sm_90", resources=r)
    assert best.block_size == 256


# -- frameworks ---------------------------------------------------------------------------

def test_triton_compiled_offline(triton_add):
    compiled = triton_add
    r = occupancy.kernel_resources(compiled)
    assert (r.kernel, r.architecture, r.threads_per_block) == ("add", "sm_90", 128)
    assert r.dynamic_shared_memory == compiled.metadata.shared
    assert r.registers_per_thread > 0
    assert occupancy.calculate("sm_90", resources=r).launch.threads_per_block == 128


def _triton_cache(tmp_path, cubin: bytes, shared: int, name: str = "saxpy") -> Path:
    entry = tmp_path / "cache" / "HASH"
    entry.mkdir(parents=True)
    (entry / f"{name}.cubin").write_bytes(cubin)
    meta = {"name": name, "num_warps": 8, "num_ctas": 1, "shared": shared, "warp_size": 32,
            "target": {"backend": "cuda", "arch": 90, "warp_size": 32}}
    (entry / f"{name}.json").write_text(json.dumps(meta))
    (entry / f"__grp__{name}.json").write_text("{}")
    return tmp_path / "cache"


def test_triton_cache_folder(built, tmp_path):
    cache = _triton_cache(tmp_path, built["cubin"].read_bytes(), shared=65536)
    found = occupancy.all_kernel_resources(cache)
    r = found["saxpy"]
    assert (r.threads_per_block, r.dynamic_shared_memory) == (256, 65536)
    # Triton's launcher opts in above 48 KiB: the opt-in limit less the static shared memory
    assert r.max_dynamic_shared_memory == 232448 - 8192
    assert "Triton cache HASH" in r.sources["threads_per_block"]


def test_triton_recorded_loaded_kernel_without_binary():
    # What a Triton CompiledKernel loaded on a GPU carries, without asm (recorded attributes).
    metadata = types.SimpleNamespace(name="softmax", num_warps=4, shared=2048, num_ctas=1, warp_size=32,
                                     target=types.SimpleNamespace(backend="cuda", arch=90, warp_size=32))
    kernel = types.SimpleNamespace(metadata=metadata, asm={}, n_regs=38, n_spills=6)
    r = occupancy.kernel_resources(kernel)
    assert (r.registers_per_thread, r.local_memory, r.threads_per_block, r.architecture) == (38, 24, 128, "sm_90")


class _CupyLike:
    """The attributes of a CuPy RawKernel (cupy/_core/raw.pyx) that the adapter reads."""

    __module__ = "cupy._core.raw"

    def __init__(self, code=None, name=None, options=(), file_path=None, name_expressions=None):
        self.code, self.name, self.options, self.file_path = code, name, options, file_path
        self.name_expressions = name_expressions  # a RawModule's (None on a RawKernel)


def test_cupy_raw_kernel_and_module(built):
    kernel = _CupyLike(code=SOURCE.replace("N)", "N)"), name="saxpy", options=("-DUNUSED=1",))
    r = occupancy.kernel_resources(kernel, arch="sm_90", kernel="saxpy")
    assert r.static_shared_memory == 8192
    module = _CupyLike(file_path=str(built["cubin"]))
    assert occupancy.kernel_resources(module, kernel="saxpy").static_shared_memory == 8192


TEMPLATE_SUM = r'''
template<int N> __global__ void __launch_bounds__(N * 32) tsum(const float* x, float* y) {
    float s = 0;
    for (int k = 0; k < N; ++k) s += x[threadIdx.x * N + k];
    y[threadIdx.x] = s;
}
'''


@pytest.mark.parametrize(("expressions", "kernel", "max_threads"), [
    (("tsum<4>", "tsum<16>"), "tsum<16>", 512),
    (("tsum<4>", "tsum<16>"), "tsum<4>", 128),
    (("tsum<8>",), None, 256),
], ids=["second of two", "first of two", "the only one"])
def test_cupy_raw_module_compiles_its_name_expressions(expressions, kernel, max_threads):
    # A template is compiled only for the instances CuPy's RawModule names; they were
    # dropped, and NVRTC compiled no kernel ("the input holds no kernel").
    module = _CupyLike(code=TEMPLATE_SUM, options=("--std=c++17",), name_expressions=expressions)
    assert len(occupancy.all_kernel_resources(module, arch="sm_90")) == len(expressions)
    r = occupancy.kernel_resources(module, arch="sm_90", kernel=kernel)
    assert r.max_threads_per_block == max_threads  # __launch_bounds__(N * 32): this instance's


def test_numba_dispatcher(built):
    ptx = built["ptx"].read_text()

    class DispatcherLike:  # numba-cuda's Dispatcher: compiled signatures and their PTX
        overloads = {("float32",): object()}

        def inspect_asm(self, signature=None):
            return {("float32",): ptx}

    r = occupancy.kernel_resources(DispatcherLike(), arch="sm_90", kernel="saxpy")
    assert r.static_shared_memory == 8192 and r.min_blocks_per_sm == 2


def test_numba_real_ptx_offline(numba_scale_ptx):
    ptx = numba_scale_ptx
    from numba import float32

    class DispatcherLike:
        overloads = {(float32[:],): object()}

        def inspect_asm(self, signature=None):
            return {(float32[:],): ptx}

    r = occupancy.kernel_resources(DispatcherLike(), arch="sm_90")
    assert r.registers_per_thread > 0 and r.architecture == "sm_90"


class _NoSignatures:  # a cuda.jit dispatcher never called: numba-cuda's inspect_asm needs a GPU
    overloads: dict = {}

    def inspect_asm(self, signature=None):
        raise RuntimeError("CudaSupportError: Error at driver init: CUDA driver library cannot be found.")


class _NoDriver:  # compiled signatures, but inspect_asm reads the current device first
    overloads = {("float32",): object()}

    def inspect_asm(self, signature=None):
        raise RuntimeError("Error at driver init:\n\nCUDA driver library cannot be found.\n")


def _lazy_numba_kernel():
    cuda = pytest.importorskip("numba.cuda", reason="numba-cuda is not installed")

    @cuda.jit
    def bump(x):
        x[cuda.grid(1)] += 1

    return bump


@pytest.mark.parametrize(("make", "message"), [
    (_NoSignatures, "has compiled no signature yet.*compile_ptx"),
    (_NoDriver, r"could not give its PTX \(RuntimeError: Error at driver init: CUDA driver.*compile_ptx"),
    (_lazy_numba_kernel, "has compiled no signature yet.*compile_ptx"),
], ids=["no signatures", "no driver", "real lazy dispatcher"])
def test_numba_dispatcher_without_a_gpu_is_one_occupancy_error(make, message):
    # Without a GPU, numba's own CudaSupportError escaped from inspect_asm as a traceback.
    with pytest.raises(occupancy.OccupancyError, match=message):
        occupancy.kernel_resources(make(), arch="sm_90")
