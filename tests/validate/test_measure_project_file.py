"""`validate.measure` builds a ``.cu`` file as its project does (validate/user_kernel/_load.py): nvcc
where one is found, so host code and the standard headers compile, as `occupancy.kernel_resources`
builds it; NVRTC for text, PTX, and a template instance the file never instantiates."""

from __future__ import annotations

import numpy as np
import pytest

import occupancy
import validate
from validate.device import CompileOptions
from validate.user_kernel import _load
from validate.user_kernel._load import load_kernel, resolve_code

PROJECT = r"""
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>

__global__ void scale(float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= 2.0f;
}

template <typename T> __global__ void fill(T* x, T v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = v;
}

int main() {
    std::vector<float> h(1024, 1.0f);
    float* d;
    cudaMalloc(&d, h.size() * sizeof(float));
    scale<<<4, 256>>>(d, 1024);
    std::printf("done\n");
    return 0;
}
"""


@pytest.fixture
def project(tmp_path):
    path = tmp_path / "app.cu"
    path.write_text(PROJECT)
    return path


@pytest.fixture
def nvcc():
    from occupancy import _nvcc

    if _nvcc.find_nvcc() is None:
        pytest.skip("nvcc is not installed")


class _Module:
    """What cuda.core's ObjectCode.from_cubin gives, without a driver: the symbol asked for."""

    def __init__(self, cubin: bytes) -> None:
        self.cubin = cubin

    def get_kernel(self, symbol: str) -> tuple[str, bytes]:
        return symbol, self.cubin


def test_a_project_file_with_host_code_is_built_by_nvcc(project, nvcc, monkeypatch):
    monkeypatch.setattr(_load, "load_object_code", lambda payload, kind: _Module(payload))
    (symbol, loaded), binary = load_kernel(resolve_code(project, None), "scale", arch="sm_90",
                                           options=CompileOptions(defines={"N": 4}))
    assert symbol == "_Z5scalePfi" and binary == loaded and binary[:4] == b"\x7fELF"


@pytest.mark.parametrize(("compiler", "outcome"), [("auto", None), ("nvcc", ValueError)])
def test_a_template_instance_the_file_never_makes(project, nvcc, monkeypatch, compiler, outcome):
    """Under "auto" NVRTC compiles it from its name expression (nvcc's turn ends: None); under
    "nvcc" the message names it."""
    monkeypatch.setattr(_load, "load_object_code", lambda payload, kind: _Module(payload))
    call = lambda: _load._nvcc_kernel(project, "fill<float>", arch="sm_90", options=CompileOptions(),  # noqa: E731
                                      compiler=compiler)
    if outcome is None:
        assert call() is None
    else:
        with pytest.raises(ValueError, match=r"fill<float>.*app\.cu"):
            call()


def test_nvrtc_is_asked_for_by_name(project, monkeypatch):
    """compiler="nvrtc" never calls nvcc: the file goes through validate's one NVRTC compile."""
    monkeypatch.setattr(_load.occupancy, "file_cubin", lambda *a, **k: pytest.fail("nvcc was asked"))
    monkeypatch.setattr(_load, "compile_cubin", lambda *a, **k: (_ for _ in ()).throw(RuntimeError("NVRTC's turn")))
    with pytest.raises(RuntimeError, match="NVRTC's turn"):
        load_kernel(resolve_code(project, None), "scale", arch="sm_90", options=CompileOptions(), compiler="nvrtc")


@pytest.mark.gpu
def test_measure_times_a_kernel_of_a_project_file(gpu_session, project, nvcc):
    n = 1 << 20
    x = np.random.default_rng(1).random(n, dtype=np.float32)
    m = validate.measure(project, "scale", launch=occupancy.Launch(grid=n // 256, block=256),
                         args=[x.copy(), np.int32(n)], expected={0: 2.0 * x.astype(np.float64)}, tolerance=1e-6,
                         session=gpu_session, options=validate.MeasureOptions(budget_seconds=0.05))
    assert m.ok and m.check.ok and m.seconds > 0
