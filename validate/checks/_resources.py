"""Differential check of occupancy.kernel_resources against the CUDA driver.

Each corpus source is compiled once with NVRTC (cuda.core) for the device; the very
same cubin bytes are read offline by ``occupancy.all_kernel_resources`` and loaded into
the driver, whose ``cuFuncGetAttribute`` answers are compared field by field. Then
``occupancy.calculate(resources=...)`` is compared with
``cuOccupancyMaxActiveBlocksPerMultiprocessor`` over block sizes x dynamic shared memory,
and Triton kernels compiled on the spot with the occupancy the driver gives their handles.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import occupancy
from occupancy import KernelResources
from pydantic import BaseModel, ConfigDict, Field

from ..device import (
    DeviceInfo,
    Session,
    compile_cubin,
    cuda_errors,
    cuda_modules,
    kernel_resources,
    kernel_source,
    takes_session,
)
from ._differential import probe_source
from ._occupancy import probe_variants

__all__ = ["ResourceMismatch", "ResourcesCheck", "TritonOccupancy", "check_resources", "resource_corpus"]


class ResourceMismatch(BaseModel):
    """One figure where the offline reading and the driver disagree."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kernel: str
    field: str
    offline: str
    driver: str
    detail: str = ""


class TritonOccupancy(BaseModel):
    """One Triton kernel: its metadata through the adapter against the driver's answer."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kernel: str
    num_warps: int
    shared_bytes: int
    registers_offline: int
    registers_triton: int | None
    active_blocks_calculated: int
    active_blocks_driver: int


class ResourcesCheck(BaseModel):
    """Result of :func:`check_resources`."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    architecture: str
    sources: tuple[str, ...]
    kernels: int = Field(description="Kernels read offline and loaded in the driver.")
    fields_compared: int
    field_mismatches: tuple[ResourceMismatch, ...]
    launches_checked: int = Field(description="calculate(resources=) vs the driver's active blocks.")
    launch_mismatches: tuple[ResourceMismatch, ...]
    launches_beyond_bounds: int = Field(
        default=0, description="Launches over the kernel's MAX_THREADS_PER_BLOCK, counted as 0 blocks.")
    triton: tuple[TritonOccupancy, ...] = ()
    triton_error: str | None = None
    compile_errors: dict[str, str] = Field(default_factory=dict)
    seconds: float

    @property
    def mismatch_count(self) -> int:
        """Field and launch mismatches, and Triton kernels whose occupancy differs."""
        triton = sum(t.active_blocks_calculated != t.active_blocks_driver for t in self.triton)
        return len(self.field_mismatches) + len(self.launch_mismatches) + triton


def resource_corpus(quick: bool = False) -> dict[str, str]:
    """Source name -> CUDA C of the corpus: the validate kernels, resources.cu and the probes.

    Raises
    ------
    TypeError
        When `quick` is not a bool.

    Examples
    --------
    >>> sorted(resource_corpus(quick=True))
    ['ceilings.cu', 'prediction.cu', 'probe.cu', 'resources.cu', 'suite.cu']
    """
    if not isinstance(quick, bool):
        raise TypeError(f"quick must be a bool, not {type(quick).__name__}")

    names = ("suite.cu", "prediction.cu", "resources.cu", "ceilings.cu")
    corpus = {name: kernel_source(name) for name in names}
    corpus["probe.cu"] = probe_source([v for v in probe_variants(quick) if v.max_register_count is None])
    return corpus


def _driver_max_threads(occupancy: ModuleType, arch: occupancy.Architecture, r: KernelResources) -> int:
    """The driver's MAX_THREADS_PER_BLOCK: the launch bounds, then the largest block whose
    registers fit (whole warps; the register file of an SM must hold one block)."""
    limit = min(arch.max_threads_per_block, r.max_threads_per_block or arch.max_threads_per_block)
    for threads in range(limit, 0, -arch.warp_size if limit % arch.warp_size == 0 else -1):
        res = occupancy.calculate(arch, threads_per_block=threads, registers_per_thread=r.registers_per_thread,
                                  block_barriers=0)
        if res.block_limit_registers != 0:
            return threads
    return 0


def _launch_grid(arch: occupancy.Architecture, static: int, quick: bool) -> list[tuple[int, int]]:
    blocks = [32, 64, 96, 128, 160, 192, 256, 320, 384, 512, 640, 768, 896, 1024, 48, 200]
    dynamic_max = max(0, arch.max_shared_memory_per_block - static)
    dynamic = sorted({d for d in (0, 1, 1024, 4096, 8192, 12288, 16384, 24576, 32768, dynamic_max) if d <= dynamic_max})
    if quick:
        blocks, dynamic = blocks[::4], dynamic[::3]
    return [(t, d) for t in blocks for d in dynamic]


@takes_session
def check_resources(
    session: Session,
    info: DeviceInfo,
    *,
    quick: bool = False,
    triton: bool = True,
    progress: Callable[[str], None] = lambda message: None,
) -> ResourcesCheck:
    """Compare offline kernel resources and occupancy with the driver on this GPU.

    Parameters
    ----------
    session : validate.Session
        An open session.
    info : validate.DeviceInfo
        The device (its architecture and compute capability).
    quick : bool
        Fewer probes and launches.
    triton : bool
        Also compile Triton kernels here (skipped, with the reason, when Triton is missing).

    Returns
    -------
    ResourcesCheck
    """
    start = time.perf_counter()
    arch = occupancy.architecture(info.compute_capability)
    field_mismatches: list[ResourceMismatch] = []
    launch_mismatches: list[ResourceMismatch] = []
    errors: dict[str, str] = {}
    compared = launches = kernels = beyond = 0
    corpus = resource_corpus(quick)
    for name, source in corpus.items():
        try:
            with cuda_errors(f"compiling {name}"):
                module = compile_cubin(source, arch=info.arch, name=name)
                cubin = bytes(module.code)
        except Exception as exc:  # noqa: BLE001 - a source the device cannot compile is reported
            errors[name] = str(exc)
            continue
        offline = occupancy.all_kernel_resources(cubin)
        for kernel_name, r in offline.items():
            with cuda_errors(f"loading {kernel_name}"):
                kernel = module.get_kernel(kernel_name)
            driver = kernel_resources(kernel, kernel_name)
            kernels += 1
            fields = _compare_fields(f"{name}:{kernel_name}", arch, r, driver)
            compared += fields.compared
            field_mismatches.extend(fields.mismatches)
            blocks = _compare_launches(f"{name}:{kernel_name}", arch, r, kernel, driver, quick)
            launches += blocks.compared
            beyond += blocks.beyond_bounds
            launch_mismatches.extend(blocks.mismatches)
        progress(f"resources {name}: {len(offline)} kernels")
    triton_rows: tuple[TritonOccupancy, ...] = ()
    triton_error = None
    if triton:
        try:
            triton_rows = _check_triton(occupancy, arch, info)
        except Exception as exc:  # noqa: BLE001 - Triton is optional on the device
            triton_error = f"{type(exc).__name__}: {exc}"
    progress(f"resources check: {kernels} kernels, {compared} fields, {len(field_mismatches)} field mismatches; "
             f"{launches} launches, {len(launch_mismatches)} mismatches; {len(triton_rows)} Triton kernels")
    return ResourcesCheck(
        architecture=arch.name, sources=tuple(corpus), kernels=kernels, fields_compared=compared,
        field_mismatches=tuple(field_mismatches), launches_checked=launches,
        launch_mismatches=tuple(launch_mismatches), launches_beyond_bounds=beyond, triton=triton_rows, triton_error=triton_error,
        compile_errors=errors, seconds=time.perf_counter() - start,
    )


@dataclass(frozen=True)
class _Comparison:
    """What one kernel's comparison with the driver counted and where the two disagree."""

    compared: int
    mismatches: list[ResourceMismatch]
    beyond_bounds: int = 0


def _compare_fields(kernel: str, arch: occupancy.Architecture, r: KernelResources,
                    driver: KernelResources) -> _Comparison:
    """The offline resources of `kernel` against the driver's attributes, field by field."""
    expected = {
        "registers_per_thread": r.registers_per_thread,
        "static_shared_memory": r.static_shared_memory,
        "local_memory": r.local_memory,
        "constant_memory": r.constant_memory,
        "max_threads_per_block": _driver_max_threads(occupancy, arch, r),
        "architecture": r.architecture,
        "cluster_dims": r.cluster_dims,
    }
    mismatches = [
        ResourceMismatch(
            kernel=kernel, field=field, offline=str(value), driver=str(getattr(driver, field)),
            detail=f"launch bounds {r.max_threads_per_block}" if field == "max_threads_per_block" else "",
        )
        for field, value in expected.items() if getattr(driver, field) != value
    ]
    return _Comparison(compared=len(expected), mismatches=mismatches)


def _compare_launches(kernel: str, arch: occupancy.Architecture, r: KernelResources, handle: Any,
                      driver: KernelResources, quick: bool) -> _Comparison:
    """`occupancy.calculate`'s active blocks against the driver's occupancy query over block
    sizes x dynamic shared memory."""
    mismatches: list[ResourceMismatch] = []
    grid = _launch_grid(arch, r.static_shared_memory, quick)
    beyond = 0
    for threads, dynamic in grid:
        if threads > driver.max_threads_per_block:
            # The driver's occupancy query answers as if such a block could launch (seen on
            # an H200: bounds_512 at 640 threads -> 3 blocks); cuLaunchKernel refuses it,
            # and calculate() gives 0 blocks.
            beyond += 1
            runtime = 0
        else:
            try:
                runtime = int(handle.occupancy.max_active_blocks_per_multiprocessor(threads, dynamic))
            except Exception:  # noqa: BLE001 - a refused launch is 0 blocks
                runtime = 0
        try:
            calc = occupancy.calculate(arch, threads_per_block=threads, dynamic_shared_memory=dynamic,
                                       resources=r).active_blocks_per_sm
        except (ValueError, TypeError):
            calc = 0
        if runtime != calc:
            mismatches.append(ResourceMismatch(
                kernel=kernel, field="active_blocks_per_sm", offline=str(calc),
                driver=str(runtime), detail=f"threads_per_block={threads} dynamic_shared_memory={dynamic}",
            ))
    return _Comparison(compared=len(grid), mismatches=mismatches, beyond_bounds=beyond)


def _triton_kernels() -> list[tuple[Any, dict[str, str], dict[str, Any], int, int]]:
    import triton
    import triton.language as tl

    @triton.jit
    def add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)

    @triton.jit
    def matmul(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
        pid_m, pid_n = tl.program_id(0), tl.program_id(1)
        rm = pid_m * BM + tl.arange(0, BM)
        rn = pid_n * BN + tl.arange(0, BN)
        rk = tl.arange(0, BK)
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(0, K, BK):
            a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
            b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
            acc += tl.dot(a, b)
        tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)

    add_sig = {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"}
    mm_sig = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp32", "M": "i32", "N": "i32", "K": "i32",
              "BM": "constexpr", "BN": "constexpr", "BK": "constexpr"}
    return [
        (add, add_sig, {"BLOCK": 1024}, 4, 1),
        (add, add_sig, {"BLOCK": 4096}, 8, 1),
        (matmul, mm_sig, {"BM": 64, "BN": 64, "BK": 32}, 4, 2),
        (matmul, mm_sig, {"BM": 128, "BN": 128, "BK": 64}, 8, 3),
        (matmul, mm_sig, {"BM": 128, "BN": 256, "BK": 64}, 8, 4),
    ]


def _check_triton(occupancy: ModuleType, arch: occupancy.Architecture, info: DeviceInfo) -> tuple[TritonOccupancy, ...]:
    import triton
    from triton.backends.compiler import GPUTarget

    driver = cuda_modules().driver
    rows = []
    sm = arch.major * 10 + arch.minor
    for fn, signature, constexprs, warps, stages in _triton_kernels():
        try:
            source = triton.compiler.ASTSource(fn=fn, signature=signature, constexprs=constexprs)
        except TypeError:  # Triton before 3.3 names them constants
            source = triton.compiler.ASTSource(fn=fn, signature=signature, constants=constexprs)
        compiled = triton.compile(source, target=GPUTarget("cuda", sm, 32),
                                  options={"num_warps": warps, "num_stages": stages})
        r = occupancy.kernel_resources(compiled)
        calc = occupancy.calculate(arch, resources=r).active_blocks_per_sm
        compiled._init_handles()  # loads the cubin as Triton's launcher does (and sets its attributes)
        err, blocks = driver.cuOccupancyMaxActiveBlocksPerMultiprocessor(
            driver.CUfunction(compiled.function), r.threads_per_block, r.dynamic_shared_memory or 0)
        if int(err) != 0:
            raise RuntimeError(f"cuOccupancyMaxActiveBlocksPerMultiprocessor failed for {r.kernel}: {err}")
        rows.append(TritonOccupancy(
            kernel=f"{r.kernel} {constexprs}", num_warps=warps, shared_bytes=r.dynamic_shared_memory or 0,
            registers_offline=r.registers_per_thread, registers_triton=getattr(compiled, "n_regs", None),
            active_blocks_calculated=calc, active_blocks_driver=int(blocks),
        ))
    return tuple(rows)
