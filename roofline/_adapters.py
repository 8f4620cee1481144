"""The one seam between measured kernels (a profile, a timed launch) and the prediction.

A kernel read from an Nsight Compute profile or timed by `validate.measure` has counts and
a launch but no formula. These functions turn them into the one kernel description
(`roofline.Kernel` with an `occupancy.Launch`), in one place.
"""

from __future__ import annotations

import occupancy

from ._errors import RooflineError
from ._kernel import Kernel, KernelLike, kernel_of
from ._ncu import NcuKernel

__all__ = ["counted_kernel", "counts_from", "launch_of"]

def launch_of(
    grid: tuple[int, int, int],
    block: tuple[int, int, int],
    *,
    registers_per_thread: int | None,
    static_shared_memory: int = 0,
    dynamic_shared_memory: int = 0,
    block_barriers: int = 1,
) -> occupancy.Launch:
    """The `occupancy.Launch` of a launch that ran: one with more dynamic shared memory than
    the runtime's default had opted in to (at least) that much, or the driver would have
    refused it."""
    static, dynamic = int(static_shared_memory or 0), int(dynamic_shared_memory or 0)
    # The runtime's default cudaFuncAttributeMaxDynamicSharedMemorySize plus static shared
    # memory (the architecture table's figure, 48 KiB on every one): a launch that asked for
    # more had opted in.
    default = min(arch.max_shared_memory_per_block for arch in occupancy.architectures())
    return occupancy.Launch(
        grid=tuple(grid), block=tuple(block), registers_per_thread=registers_per_thread,
        static_shared_memory=static, dynamic_shared_memory=dynamic, block_barriers=block_barriers,
        max_dynamic_shared_memory=dynamic if dynamic > default - static else None,
    )


def counts_from(kernel: Kernel | KernelLike | NcuKernel) -> Kernel:
    """A `Kernel` from a `Kernel` (a model, your counts) or an `NcuKernel` (its busiest precision).

    An `NcuKernel` holds flops per precision; the roofline takes one precision, so the
    flops of the precision with the most operations are used (Nsight's hierarchical charts
    likewise plot one precision per chart).

    Raises
    ------
    RooflineError
        For a profiled kernel without DRAM bytes.
    TypeError
        For anything else without ``flops`` and ``dram_bytes``.
    """
    flops = getattr(kernel, "flops", None)
    if isinstance(flops, dict):
        if getattr(kernel, "dram_bytes", None) is None:
            raise RooflineError(f"kernel {getattr(kernel, 'name', '?')!r} has no DRAM bytes in its profile "
                                "(collect --section SpeedOfLight)")
        precision = kernel.precision
        return Kernel(
            name=str(kernel.name), precision=precision,
            flops=float(flops.get(precision, 0.0)) if precision else 0.0,
            dram_bytes=float(kernel.dram_bytes), l2_bytes=kernel.l2_bytes, l1_bytes=kernel.l1_bytes,
            instructions=getattr(kernel, "instructions", None),
        )
    return kernel_of(kernel)


def counted_kernel(counts: Kernel, launch: occupancy.Launch) -> Kernel:
    """`counts` with the given launch, for `predict`."""
    return counts.model_copy(update={"launch": launch, "formula": counts.formula or "counted (profile or user counts)"})
