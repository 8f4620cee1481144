"""calculate against the CUDA runtime's own occupancy answer, on a real GPU.

Real kernels are compiled with NVRTC through cuda.core: different register counts
(``--maxrregcount`` and ``__launch_bounds__``), static and dynamic shared memory with
and without the opt-in, several carveouts and named-barrier counts. The registers,
static shared memory and ``maxThreadsPerBlock`` fed to :func:`occupancy.calculate` are
read back from the compiled kernel's attributes; the barrier count is the number of
named barriers the kernel source uses (ids 0..k-1, which is what ptxas counts).
Skipped, with the reason, where cuda-python or a GPU is missing.
"""

from __future__ import annotations

import itertools

import pytest

import occupancy

pytestmark = pytest.mark.gpu

# (values kept live -> register pressure, --maxrregcount, __launch_bounds__, static floats, barriers)
KERNELS = [
    (4, None, None, 0, 1),
    (32, None, None, 1024, 1),
    (32, 32, None, 0, 0),
    (64, 64, None, 5000, 4),
    (96, None, 256, 0, 1),
    (96, 128, None, 10000, 16),
    (16, None, 1024, 2048, 2),
    (128, None, None, 0, 8),
    (8, None, 128, 0, 3),
    (48, 40, None, 0, 1),
]


def kernel_source(live: int, bounds: int | None, static_floats: int, barriers: int) -> str:
    lb = f"__launch_bounds__({bounds})" if bounds else ""
    static = f"__shared__ float tile[{static_floats}];" if static_floats else ""
    use_static = (
        f"tile[threadIdx.x % {static_floats}] = sum; __syncwarp(); "
        f"sum += tile[(threadIdx.x + 1) % {static_floats}];"
        if static_floats else ""
    )
    bars = "".join(f'asm volatile("bar.sync {i};");' for i in range(barriers))
    return f"""
extern "C" __global__ void {lb} probe(float* out, int n) {{
    {static}
    extern __shared__ float dyn[];
    float v[{live}];
#pragma unroll
    for (int i = 0; i < {live}; ++i) v[i] = out[threadIdx.x + i * n];
#pragma unroll
    for (int j = 0; j < 4; ++j) {{
#pragma unroll
        for (int i = 0; i < {live}; ++i) v[i] = v[i] * v[(i + 1) % {live}] + 1.0f;
    }}
    float sum = 0.0f;
#pragma unroll
    for (int i = 0; i < {live}; ++i) sum += v[i];
    {use_static}
    {bars}
    if (n < 0) dyn[threadIdx.x] = sum;
    out[blockIdx.x * blockDim.x + threadIdx.x] = sum;
}}
"""


def _check(result):
    from cuda.bindings import driver

    err, *rest = result
    assert err == driver.CUresult.CUDA_SUCCESS, err
    return rest[0] if len(rest) == 1 else rest


def _device_attribute(device, name):
    from cuda.bindings import driver

    return _check(driver.cuDeviceGetAttribute(getattr(driver.CUdevice_attribute, name), device.device_id))


def _function(kernel):
    """The CUfunction behind a cuda.core Kernel (loaded through the library API or not)."""
    from cuda.bindings import driver

    handle = kernel.handle
    if isinstance(handle, driver.CUkernel):
        return _check(driver.cuKernelGetFunction(handle))
    return handle


def _set(function, name, value):
    from cuda.bindings import driver

    _check(driver.cuFuncSetAttribute(function, getattr(driver.CUfunction_attribute, name), value))


@pytest.fixture(scope="module")
def arch(cuda_device):
    major, minor = cuda_device.compute_capability
    try:
        return occupancy.architecture((major, minor))
    except occupancy.OccupancyError as exc:
        pytest.skip(str(exc))


def test_device_properties_match_the_data(cuda_device, arch):
    got = {
        "shared_memory_per_sm": "CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR",
        "max_shared_memory_per_block_optin": "CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN",
        "reserved_shared_memory_per_block": "CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK",
        "registers_per_sm": "CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR",
        "max_registers_per_block": "CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK",
        "max_threads_per_sm": "CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR",
        "max_blocks_per_sm": "CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR",
    }
    for field, attribute in got.items():
        assert _device_attribute(cuda_device, attribute) == getattr(arch, field), field


def test_calculate_matches_the_runtime(cuda_device, arch):
    from cuda.core import Program, ProgramOptions

    optin = arch.max_shared_memory_per_block_optin
    compared = 0
    for live, maxrreg, bounds, static_floats, barriers in KERNELS:
        options = ProgramOptions(arch=f"sm_{cuda_device.arch}", max_register_count=maxrreg)
        code = Program(kernel_source(live, bounds, static_floats, barriers), "c++", options).compile("cubin")
        kernel = code.get_kernel("probe")
        attrs = kernel.attributes
        regs, static = attrs.num_regs, attrs.shared_size_bytes
        max_threads = attrs.max_threads_per_block
        function = _function(kernel)
        sizes = [n for n in (1, 32, 33, 64, 96, 100, 128, 192, 256, 320, 384, 512, 640, 768, 999, 1024)
                 if n <= max_threads]
        for carveout, opt_in in itertools.product((None, 0, 10, 25, 50, 75, 100), (False, True)):
            max_dyn = (optin if opt_in else arch.max_shared_memory_per_block) - static
            _set(function, "CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES", max_dyn)
            _set(function, "CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT", -1 if carveout is None else carveout)
            dyns = sorted({0, 1000, 8192, 20_000, max_dyn, max_dyn // 3, min(max_dyn + 4096, optin - static)})
            for n, dyn in itertools.product(sizes, dyns):
                want = occupancy.calculate(
                    arch, threads_per_block=n, registers_per_thread=regs, static_shared_memory=static,
                    dynamic_shared_memory=dyn, max_dynamic_shared_memory=max_dyn, carveout=carveout,
                    block_barriers=barriers, max_threads_per_block=max_threads,
                )
                try:
                    got = kernel.occupancy.max_active_blocks_per_multiprocessor(n, dyn)
                except Exception:  # the driver refuses a request over the attribute outright
                    assert dyn > max_dyn, (n, dyn)
                    got = 0
                assert got == want.active_blocks_per_sm, (
                    f"regs={regs} static={static} barriers={barriers} threads={n} dyn={dyn} "
                    f"max_dyn={max_dyn} carveout={carveout}: runtime {got}, ours {want}"
                )
                compared += 1
    assert compared >= 2000
