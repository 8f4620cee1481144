"""The PTX route against the driver's JIT, on a real GPU: PTX of the project's own test kernels
(docs/examples/project_kernels.cu, warp_specialised.cu), assembled by `kernel_resources` as a
whole program (ptxas -v), gives the registers, local and static shared memory that the driver
gives the same PTX (cuModuleLoadData, then cuFuncGetAttribute NUM_REGS, LOCAL_SIZE_BYTES,
SHARED_SIZE_BYTES). nvJitLink assembles PTX as relocatable code, which can give more registers:
the route must not be that one. Skipped, with the reason, without a GPU, nvcc (to make the PTX)
or ptxas (without it the route falls back to nvJitLink)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

import occupancy
from occupancy._nvcc import find_nvcc, find_ptxas, nvcc_version

pytestmark = pytest.mark.gpu

EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "examples"
# The architecture-specific targets setmaxnreg needs (compute capability -> suffix 'a').
SPECIFIC = {(9, 0), (10, 0), (10, 3), (12, 0), (12, 1)}

ATTRIBUTES = {"registers_per_thread": "CU_FUNC_ATTRIBUTE_NUM_REGS",
              "local_memory": "CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES",
              "static_shared_memory": "CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES"}


def _check(result):
    from cuda.bindings import driver

    err, *rest = result
    assert err == driver.CUresult.CUDA_SUCCESS, err
    return rest[0] if len(rest) == 1 else rest


def driver_jit(ptx: str, kernels: list[str]) -> dict[str, dict[str, int]]:
    """kernel -> what the driver's JIT gives it, for each of ATTRIBUTES."""
    from cuda.bindings import driver

    module = _check(driver.cuModuleLoadData(ptx.encode() + b"\0"))
    try:
        out = {}
        for name in kernels:
            function = _check(driver.cuModuleGetFunction(module, name.encode()))
            out[name] = {field: _check(driver.cuFuncGetAttribute(getattr(driver.CUfunction_attribute, attribute),
                                                                 function))
                         for field, attribute in ATTRIBUTES.items()}
        return out
    finally:
        _check(driver.cuModuleUnload(module))


@pytest.fixture(scope="module")
def ptx_files(cuda_device, tmp_path_factory) -> dict[str, tuple[Path, str]]:
    """file -> (its PTX for this GPU, the arch= to assemble it for)."""
    nvcc = find_nvcc()
    if nvcc is None:
        pytest.skip("no nvcc to make the test kernels' PTX")
    if find_ptxas() is None:
        pytest.skip("no ptxas: the PTX route would fall back to nvJitLink's relocatable assembly")
    major, minor = cuda_device.compute_capability
    folder = tmp_path_factory.mktemp("ptx_jit")
    out = {}
    for name in ("project_kernels.cu", "warp_specialised.cu"):
        suffix = "a" if name == "warp_specialised.cu" and (major, minor) in SPECIFIC else ""
        target = f"{major}{minor}{suffix}"
        ptx = folder / f"{Path(name).stem}.ptx"
        subprocess.run([nvcc, "-ptx", f"-arch=compute_{target}", str(EXAMPLES / name), "-o", str(ptx)], check=True)
        out[name] = (ptx, f"sm_{target}")
    return out


@pytest.mark.parametrize("name", ["project_kernels.cu", "warp_specialised.cu"])
def test_ptx_route_equals_the_drivers_jit(ptx_files, name):
    from cuda.bindings import driver

    ptx, arch = ptx_files[name]
    ours = occupancy.all_kernel_resources(ptx, arch=arch)
    assert ours and {r.compiler.split()[0] for r in ours.values()} == {"ptxas"}
    jit = driver_jit(ptx.read_text(), list(ours))
    version = _check(driver.cuDriverGetVersion())
    for kernel, r in ours.items():
        got = {field: getattr(r, field) for field in ATTRIBUTES}
        assert got == jit[kernel], (f"{kernel} on {arch}: ptxas {nvcc_version(find_ptxas())} {got}, "
                                    f"the driver's JIT (driver {version // 1000}.{version % 1000 // 10}) {jit[kernel]}")
