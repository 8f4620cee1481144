"""Tensor-core ceilings: which kernels apply to a GPU, and timing the best of them.

Hopper (sm_90) reaches its full matrix rate only through warpgroup-level ``wgmma`` (an
sm_90a instruction, compiled with NVRTC for ``sm_90a``); the warp-level ``mma.sync`` of
Ampere runs at about two thirds of it there. Each precision has candidate kernels and
launch shapes; a short probe picks the fastest, which is then timed properly (the way
empirical roofline tools report a ceiling). FP64 tensor cores (DMMA) are measured with
``mma.sync ... .f64`` (m8n8k4 from sm_80, m16n8k16 from sm_90).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..device import (
    DeviceError,
    DeviceInfo,
    Session,
    StopRules,
    TimingResult,
    benchmark,
    compile_kernels,
    kernel_source,
    takes_session,
)

__all__ = ["TENSOR_CEILINGS", "TensorKernel", "TensorMeasurement", "measure_tensor", "tensor_kernels"]

#: Ceiling names (roofline precisions) measured on the tensor cores.
TENSOR_CEILINGS = ("fp16_tensor", "bf16_tensor", "tf32_tensor", "fp8_tensor", "int8_tensor", "fp64_tensor")


@dataclass(frozen=True)
class TensorKernel:
    """One candidate kernel for a tensor ceiling.

    ``flops_per_instruction`` counts a multiply-add as two operations; ``unit_threads`` is
    the threads that issue one instruction together (a warp, or a warpgroup of 128);
    each unit issues four instructions per loop iteration. ``shapes`` are the launch
    shapes tried: (threads per block, blocks per SM, None for as many as fit).
    """

    kernel: str
    precision: str
    flops_per_instruction: int
    unit_threads: int
    shapes: tuple[tuple[int, int | None], ...]
    description: str

    def flops(self, blocks: int, threads: int, iterations: int) -> float:
        """Operations one launch does."""
        return float(blocks * (threads // self.unit_threads) * iterations * 4 * self.flops_per_instruction)


def _wgmma(precision: str, kernel: str, k: int, types: str) -> TensorKernel:
    return TensorKernel(kernel, precision, 2 * 64 * 256 * k, 128, ((128, 2), (128, 3), (256, 1), (384, 1)),
                        f"wgmma.mma_async m64n256k{k} {types}, operands in shared memory (sm_90a)")


def tensor_kernels(compute_capability: str) -> dict[str, tuple[TensorKernel, ...]]:
    """The candidate kernels of each tensor ceiling on a compute capability ("9.0").

    Examples
    --------
    >>> [k.kernel for k in tensor_kernels("9.0")["bf16_tensor"]]
    ['wgmma_bf16', 'mma_bf16']
    >>> tensor_kernels("7.5")
    {}
    """
    major, minor = (int(part) for part in compute_capability.split("."))
    cc = 10 * major + minor
    out: dict[str, list[TensorKernel]] = {name: [] for name in TENSOR_CEILINGS}
    if cc == 90:  # wgmma exists on sm_90a only (not on sm_100 and later)
        out["fp16_tensor"].append(_wgmma("fp16_tensor", "wgmma_fp16", 16, "f16 x f16 + f32"))
        out["bf16_tensor"].append(_wgmma("bf16_tensor", "wgmma_bf16", 16, "bf16 x bf16 + f32"))
        out["tf32_tensor"].append(_wgmma("tf32_tensor", "wgmma_tf32", 8, "tf32 x tf32 + f32"))
        out["fp8_tensor"].append(_wgmma("fp8_tensor", "wgmma_fp8", 32, "e4m3 x e4m3 + f32"))
        out["int8_tensor"].append(_wgmma("int8_tensor", "wgmma_int8", 32, "s8 x s8 + s32"))
    if cc >= 80:
        full = ((256, None),)
        out["fp16_tensor"].append(TensorKernel("mma_fp16", "fp16_tensor", 2 * 16 * 8 * 16, 32, full,
                                               "mma.sync m16n8k16 f16 x f16 + f32, register operands"))
        out["bf16_tensor"].append(TensorKernel("mma_bf16", "bf16_tensor", 2 * 16 * 8 * 16, 32, full,
                                               "mma.sync m16n8k16 bf16 x bf16 + f32, register operands"))
        out["int8_tensor"].append(TensorKernel("mma_int8", "int8_tensor", 2 * 16 * 8 * 32, 32, full,
                                               "mma.sync m16n8k32 s8 x s8 + s32, register operands"))
        out["fp64_tensor"].append(TensorKernel("dmma_m8n8k4", "fp64_tensor", 2 * 8 * 8 * 4, 32, full,
                                               "mma.sync m8n8k4 f64 (DMMA), register operands"))
    if cc >= 90:
        out["fp64_tensor"].append(TensorKernel("dmma_m16n8k16", "fp64_tensor", 2 * 16 * 8 * 16, 32,
                                               ((256, None), (128, None)),
                                               "mma.sync m16n8k16 f64 (DMMA), register operands"))
    return {name: tuple(kernels) for name, kernels in out.items() if kernels}


def compile_arch(compute_capability: str) -> str:
    """The NVRTC target of the tensor kernels: ``sm_90a`` on Hopper (for wgmma), else ``sm_XY``."""
    major, minor = compute_capability.split(".")
    return f"sm_{major}{minor}a" if (major, minor) == ("9", "0") else f"sm_{major}{minor}"


@dataclass(frozen=True)
class TensorMeasurement:
    """The timed best candidate of one tensor ceiling."""

    work: float
    timing: TimingResult
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    note: str


@takes_session
def measure_tensor(session: Session, info: DeviceInfo, precision: str, *, quick: bool = False,
                   target_seconds: float | None = None) -> TensorMeasurement:
    """Probe every candidate kernel and shape of `precision`, then time the fastest.

    Parameters
    ----------
    session : validate.Session
    info : DeviceInfo
    precision : str
        One of `TENSOR_CEILINGS` that `tensor_kernels` lists for the device.
    quick : bool
        Shorter launches and fewer repetitions.
    target_seconds : float, optional
        Length of one timed launch (default 2 ms, 0.5 ms quick).

    Raises
    ------
    DeviceError
        When no candidate compiles and runs.
    """
    candidates = tensor_kernels(info.compute_capability).get(precision, ())
    if not candidates:
        raise DeviceError(f"no tensor kernel for {precision} on compute capability {info.compute_capability}")
    names = [k.kernel for ks in tensor_kernels(info.compute_capability).values() for k in ks]
    kernels = compile_kernels(kernel_source("tensor.cu"), sorted(set(names)),
                              arch=compile_arch(info.compute_capability), name="tensor.cu")
    sink = session.allocate(8 * 1024)
    double = precision == "fp64_tensor"
    sentinel = np.float64(1.2345e300) if double else np.float32(1.2345e38)
    target = target_seconds or (0.5e-3 if quick else 2e-3)
    probe_iterations = 64

    def launch(candidate: TensorKernel, threads: int, blocks: int, iterations: int) -> Callable[[], None]:
        return session.launcher(kernels[candidate.kernel], (blocks, 1, 1), (threads, 1, 1),
                                (sink, np.int32(iterations), sentinel))

    trials = []
    for candidate in candidates:
        kernel = kernels[candidate.kernel]
        for threads, per_sm in candidate.shapes:
            fits = int(kernel.occupancy.max_active_blocks_per_multiprocessor(threads, 0))
            if fits == 0 or (per_sm is not None and per_sm > fits):
                continue
            blocks = info.sm_count * (fits if per_sm is None else per_sm)
            seconds = benchmark(launch(candidate, threads, blocks, probe_iterations), timer=session.timer,
                                rules=StopRules(warmup=1, repetitions=3)).median_seconds
            rate = candidate.flops(blocks, threads, probe_iterations) / seconds
            trials.append((rate, candidate, threads, blocks, seconds))
    if not trials:
        raise DeviceError(f"no {precision} kernel fits on the device")
    rate, best, threads, blocks, seconds = max(trials, key=lambda t: t[0])
    iterations = max(probe_iterations, int(math.ceil(probe_iterations * target / seconds)))
    timing = benchmark(launch(best, threads, blocks, iterations), timer=session.timer,
                       rules=StopRules(warmup=3, repetitions=10 if quick else 20))
    session.synchronize()
    note = (f"{best.description}; best of {len(trials)} kernels and shapes: {best.kernel}, "
            f"{threads} threads x {blocks // info.sm_count} blocks/SM, {iterations} iterations")
    return TensorMeasurement(work=best.flops(blocks, threads, iterations), timing=timing, grid=(blocks, 1, 1),
                             block=(threads, 1, 1), note=note)
