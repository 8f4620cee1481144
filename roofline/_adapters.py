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
from ._predict.rules import on
from ._warps import CACHE_LINE_BYTES

__all__ = ["counted_kernel", "counts_from", "measured_launch"]


def measured_launch(
    grid: int | tuple[int, ...],
    block: int | tuple[int, ...],
    *,
    registers_per_thread: int | None = None,
    static_shared_memory: int | None = 0,
    dynamic_shared_memory: int | None = 0,
    block_barriers: int = 1,
    resources: occupancy.KernelResources | None = None,
    elements_per_thread: int = 1,
) -> occupancy.Launch:
    """The `occupancy.Launch` of a launch that ran (profiled or timed).

    A launch that ran with more dynamic shared memory than the runtime's default allows had
    opted in to (at least) that much, or the driver would have refused it: the launch says so
    (``max_dynamic_shared_memory``).

    Parameters
    ----------
    grid, block : int or tuple of int
        Blocks per grid and threads per block, as launched.
    registers_per_thread : int, optional
        Registers per thread of the kernel (None: not known).
    static_shared_memory, dynamic_shared_memory : int or None
        Bytes per block; None is 0.
    block_barriers : int
        Named barriers per block.
    resources : occupancy.KernelResources, optional
        The kernel's resources with its SASS (a profiled kernel's, `load_ncu`): the launch
        takes its loads in flight per thread from the SASS, as on the source path.
    elements_per_thread : int
        Global loads each thread makes (a profile's count), 1 when not known.

    Raises
    ------
    occupancy.OccupancyError
        For a launch `occupancy.Launch` refuses.

    Examples
    --------
    >>> import roofline
    >>> roofline.measured_launch((132, 1, 1), (256, 1, 1), registers_per_thread=32,
    ...                          dynamic_shared_memory=96 * 1024).max_dynamic_shared_memory
    98304
    """
    fields = dict(grid=grid, block=block, registers_per_thread=registers_per_thread,
                  static_shared_memory=0 if static_shared_memory is None else static_shared_memory,
                  dynamic_shared_memory=0 if dynamic_shared_memory is None else dynamic_shared_memory,
                  block_barriers=block_barriers, elements_per_thread=elements_per_thread)
    if resources is not None:
        fields["resources"] = resources
    launch = occupancy.Launch(**fields)  # checked before the arithmetic below
    # The runtime's default cudaFuncAttributeMaxDynamicSharedMemorySize plus static shared
    # memory (the architecture table's figure, 48 KiB on every one): a launch that asked for
    # more had opted in.
    default = min(arch.max_shared_memory_per_block for arch in occupancy.architectures())
    if launch.dynamic_shared_memory > default - launch.static_shared_memory:
        return occupancy.Launch(**fields, max_dynamic_shared_memory=launch.dynamic_shared_memory)
    return launch


def _l1_data_bytes(kernel: NcuKernel) -> float | None:
    """The L1 data-path bytes of a profiled kernel: 128 bytes per LSU wavefront where Nsight
    counted them (what the source path counts: a pass moves up to one 128-byte line, so an
    access spread over 32 lines or a bank conflict costs a pass each), never less than
    Nsight's writeback bytes (the L1 roofline's)."""
    wavefronts, l1_bytes = kernel.measured.l1_wavefronts, kernel.l1_bytes
    if wavefronts is None or not on("profile_l1_wavefronts"):
        return l1_bytes
    passes = CACHE_LINE_BYTES * float(wavefronts)
    return passes if l1_bytes is None else max(passes, float(l1_bytes))


def _partial_store_sectors(kernel: NcuKernel) -> float | None:
    """The store sectors a profiled kernel writes in part: all of them where its store
    requests spread over more sectors than a warp's stores fill (32 lanes of the SASS's
    access width; without SASS the widest, 16 bytes, so that only stores certain to be
    partial count), none where they do not; None without the counts."""
    sectors, requests = kernel.measured.global_store_sectors, kernel.measured.global_store_requests
    if sectors is None or requests is None or not on("profile_partial_stores"):
        return None
    width = float(getattr(kernel.sass, "global_load_bytes", None) or 16)
    full = requests * width  # the sectors a request of 32 lanes fills: 32 x width bytes over 32-byte sectors
    return float(sectors) if requests and sectors > full * 1.05 else 0.0


def _one_address_stores(kernel: NcuKernel) -> float | None:
    """The profile's warp store requests to one shared address: its store requests times the
    share of the SASS's global stores that write one address (each store instruction taken
    as run as often as the others); None without the SASS's count."""
    sass = kernel.sass
    one = getattr(sass, "global_stores_one_address", None)
    requests = kernel.measured.global_store_requests
    stores = sass.instructions.global_stores if sass is not None else 0
    if not one or not requests or not stores or not on("profile_one_address_stores"):
        return None
    return float(requests) * one / stores


def counts_from(kernel: Kernel | KernelLike | NcuKernel) -> Kernel:
    """A `Kernel` from a `Kernel` (a model, your counts) or an `NcuKernel` (its busiest precision).

    An `NcuKernel` holds flops per precision; the roofline takes one precision, so the
    flops of the precision with the most operations are used (Nsight's hierarchical charts
    likewise plot one precision per chart). Its measured counts that describe the kernel's
    work (warp instructions, L2 requests, atomics, partial and one-address stores, the L1
    data-path bytes of its wavefronts) become the kernel's; the rest stay in
    ``NcuKernel.measured`` for `predict`'s ``measured=``.

    Raises
    ------
    RooflineError
        For a profiled kernel without DRAM bytes.
    TypeError
        For anything else without ``flops`` and ``dram_bytes``.
    """
    if not isinstance(kernel, NcuKernel):
        return kernel_of(kernel)
    if kernel.dram_bytes is None:
        raise RooflineError(f"kernel {kernel.name!r} has no DRAM bytes in its profile "
                            "(collect --section SpeedOfLight)")
    precision, measured = kernel.precision, kernel.measured
    return Kernel(
        name=str(kernel.name), precision=precision,
        flops=float(kernel.flops.get(precision, 0.0)) if precision else 0.0,
        dram_bytes=float(kernel.dram_bytes), l2_bytes=kernel.l2_bytes, l1_bytes=_l1_data_bytes(kernel),
        instructions=measured.instructions, l2_requests=measured.l2_requests,
        l2_partial_store_sectors=_partial_store_sectors(kernel),
        # a warp-level count: one update per instruction (a warp-aggregated atomic), a lower bound
        atomics=measured.global_atomic_instructions,
        one_address_stores=_one_address_stores(kernel),
    )


def counted_kernel(counts: Kernel | KernelLike | NcuKernel, launch: occupancy.Launch | None = None) -> Kernel:
    """A `Kernel` to predict from measured counts, with the launch that ran.

    Parameters
    ----------
    counts : Kernel, NcuKernel or object with ``flops`` and ``dram_bytes``
        Your counts (flops, bytes per level) or a profiled kernel (`counts_from`'s rules:
        an `NcuKernel` gives its busiest precision).
    launch : occupancy.Launch, optional
        The launch that ran (`measured_launch`); None keeps the counts' own.

    Raises
    ------
    TypeError
        For counts without ``flops`` and ``dram_bytes`` or a launch that is not an `occupancy.Launch`.
    RooflineError
        For a profiled kernel without DRAM bytes.

    Examples
    --------
    >>> import roofline
    >>> launch = roofline.measured_launch(1024, 256, registers_per_thread=16)
    >>> k = roofline.counted_kernel(roofline.Kernel(flops=0, dram_bytes=8 << 20), launch)
    >>> k.launch.threads_per_block, k.formula
    (256, 'counted (profile or user counts)')
    """
    if launch is not None and not isinstance(launch, occupancy.Launch):
        raise TypeError(f"launch must be an occupancy.Launch (see roofline.measured_launch), not {type(launch).__name__}")
    kernel = counts_from(counts)
    if launch is None:
        return kernel
    return kernel.model_copy(update={"launch": launch, "formula": kernel.formula or "counted (profile or user counts)"})
