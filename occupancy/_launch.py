"""Launch configuration helpers: the best block size, and dynamic shared memory left."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict

from . import _validate
from ._arch import architecture
from ._calculator import LAUNCH_DEFAULTS
from ._errors import OccupancyError
from ._kernel_launch import Launch, resolve
from ._resources import KernelResources, merge_resources
from ._rules import evaluate

__all__ = ["BlockSizeResult", "available_dynamic_shared_memory", "max_potential_block_size"]


class BlockSizeResult(BaseModel):
    """The block size with the highest occupancy and the grid that fills the GPU."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    block_size: int
    min_grid_size: int
    active_blocks_per_sm: int
    occupancy: float
    sm_count: int


def _static_and_attribute(arch, static_shared_memory, max_dynamic_shared_memory):
    s = _validate.integer("static_shared_memory", static_shared_memory)
    _validate.check_range(
        "static_shared_memory", s, 0, arch.max_shared_memory_per_block, arch,
        " bytes of static shared memory per block",
    )
    optin = arch.max_shared_memory_per_block_optin
    if max_dynamic_shared_memory is None:
        m = arch.max_shared_memory_per_block - s
    else:
        m = _validate.integer("max_dynamic_shared_memory", max_dynamic_shared_memory)
        _validate.check_range(
            "max_dynamic_shared_memory", m, 0, optin - s, arch,
            " bytes (the opt-in limit minus static_shared_memory)",
        )
    return s, m


def max_potential_block_size(
    arch: Any,
    *,
    registers_per_thread: int | None = None,
    static_shared_memory: int | None = None,
    dynamic_shared_memory: int | Callable[[int], int] | None = None,
    max_dynamic_shared_memory: int | None = None,
    max_threads_per_block: int | None = None,
    sm_count: int | None = None,
    carveout: int | None = None,
    block_barriers: int | None = None,
    resources: KernelResources | None = None,
    launch: Launch | None = None,
) -> BlockSizeResult:
    """The block size that maximises occupancy, as ``cudaOccupancyMaxPotentialBlockSize``.

    Block sizes from the largest allowed down to one warp, in steps of a warp, are
    tried; the one with the most active threads per SM wins, the larger block on a tie.

    Parameters
    ----------
    arch : str, tuple or Architecture
        The compute capability.
    registers_per_thread : int
        Registers per thread as compiled.
    static_shared_memory : int, optional
        Static shared memory per block, bytes.
    dynamic_shared_memory : int or callable, optional
        Dynamic shared memory per block, bytes; or a function of the block size
        returning it (``cudaOccupancyMaxPotentialBlockSizeVariableSMem``). Sizes whose
        shared memory cannot launch count as 0 blocks.
    max_dynamic_shared_memory : int, optional
        The kernel attribute; None for the default 48 KiB minus static.
    max_threads_per_block : int, optional
        The kernel's ``maxThreadsPerBlock`` (``__launch_bounds__``); caps the search.
    sm_count : int, optional
        SMs on the device; ``min_grid_size`` is blocks per SM times this
        (None counts one SM, so ``min_grid_size`` is then blocks per SM).
    carveout, block_barriers, resources : optional
        As in :func:`occupancy.calculate`. A kernel whose ``resources`` fix its block
        size (Triton's) has only that size to choose.
    launch : Launch, optional
        The kernel and its launch as one `occupancy.Launch`, in place of the keywords
        above except ``sm_count``; its block size is ignored (it is what is searched for).

    Returns
    -------
    BlockSizeResult
        ``block_size`` 0 when no block size can launch.

    Examples
    --------
    >>> import occupancy
    >>> r = occupancy.max_potential_block_size("sm_90", registers_per_thread=64, sm_count=132)
    >>> r.block_size, r.min_grid_size, r.occupancy
    (1024, 132, 0.5)
    """
    loose, resources = resolve(
        "max_potential_block_size",
        launch,
        resources,
        registers_per_thread=registers_per_thread,
        static_shared_memory=static_shared_memory,
        dynamic_shared_memory=dynamic_shared_memory,
        max_threads_per_block=max_threads_per_block,
        block_barriers=block_barriers,
        max_dynamic_shared_memory=max_dynamic_shared_memory,
        carveout=carveout,
    )
    carveout = loose.pop("carveout")
    arch = architecture(arch)
    kernel = merge_resources(
        arch, resources, {**LAUNCH_DEFAULTS, "threads_per_block": None}, threads_per_block=None, **loose
    )
    max_dynamic_shared_memory = kernel["max_dynamic_shared_memory"]
    registers_per_thread, static_shared_memory, dynamic_shared_memory, block_barriers = (
        kernel["registers_per_thread"], kernel["static_shared_memory"],
        kernel["dynamic_shared_memory"], kernel["block_barriers"],
    )
    max_threads_per_block = kernel["max_threads_per_block"]
    if kernel["threads_per_block"] is not None:
        fixed = kernel["threads_per_block"]
        max_threads_per_block = fixed if max_threads_per_block is None else min(max_threads_per_block, fixed)
    r = _validate.integer("registers_per_thread", registers_per_thread)
    _validate.check_range("registers_per_thread", r, 0, arch.max_registers_per_thread, arch)
    s, m = _static_and_attribute(arch, static_shared_memory, max_dynamic_shared_memory)
    limit = arch.max_threads_per_block
    if max_threads_per_block is not None:
        mt = _validate.integer("max_threads_per_block", max_threads_per_block)
        _validate.check_range("max_threads_per_block", mt, 1, arch.max_threads_per_block, arch)
        limit = min(limit, mt)
    sms = 1 if sm_count is None else _validate.integer("sm_count", sm_count)
    _validate.check_range("sm_count", sms, 1, 2**31 - 1)
    c = -1 if carveout is None else _validate.integer("carveout", carveout)
    _validate.check_range("carveout", c, -1 if carveout is None else 0, 100, arch, " percent")
    b = _validate.integer("block_barriers", block_barriers)
    _validate.check_range("block_barriers", b, 0, 16, arch)

    ws = arch.warp_size
    aligned = np.arange(-(-limit // ws) * ws, 0, -ws, dtype=np.int64)
    sizes = np.minimum(aligned, limit)
    if kernel["threads_per_block"] is not None:
        sizes = sizes[:1]  # a kernel compiled for one block size launches with no other
    # Sizes beyond every shared-memory limit are refused by evaluate; clip so int math stays small.
    ceiling = 2 * arch.shared_memory_per_sm
    if callable(dynamic_shared_memory):
        asked = [_validate.integer("dynamic_shared_memory", dynamic_shared_memory(int(n))) for n in sizes]
        for n, value in zip(sizes, asked):
            if value < 0:
                raise OccupancyError(
                    f"dynamic_shared_memory({int(n)})={value} is below the minimum of 0"
                )
        d = np.array([min(value, ceiling) for value in asked], dtype=np.int64)
    else:
        d = _validate.integer("dynamic_shared_memory", dynamic_shared_memory)
        _validate.check_range(
            "dynamic_shared_memory", d, 0, arch.max_shared_memory_per_block_optin - s, arch,
            " bytes (the opt-in limit minus static_shared_memory)",
        )
    d = np.minimum(d, ceiling)
    out = evaluate(arch, sizes, r, s, d, m, c, b, None)
    blocks = np.broadcast_to(out["active_blocks_per_sm"], sizes.shape)
    threads = sizes * blocks
    best = int(threads.max())
    if best == 0:
        return BlockSizeResult(
            block_size=0, min_grid_size=0, active_blocks_per_sm=0, occupancy=0.0, sm_count=sms
        )
    i = int(np.argmax(threads))  # first maximum = largest block size among ties
    occ = float(np.broadcast_to(out["occupancy"], sizes.shape)[i])
    return BlockSizeResult(
        block_size=int(sizes[i]),
        min_grid_size=int(blocks[i]) * sms,
        active_blocks_per_sm=int(blocks[i]),
        occupancy=occ,
        sm_count=sms,
    )


def available_dynamic_shared_memory(
    arch: Any,
    *,
    registers_per_thread: int | None = None,
    static_shared_memory: int | None = None,
    max_dynamic_shared_memory: int | None = None,
    num_blocks: int,
    threads_per_block: int | None = None,
    carveout: int | None = None,
    block_barriers: int | None = None,
    match_driver: bool = False,
    resources: KernelResources | None = None,
) -> int:
    """Dynamic shared memory per block that still lets ``num_blocks`` blocks share an SM.

    Parameters
    ----------
    arch : str, tuple or Architecture
        The compute capability.
    registers_per_thread, static_shared_memory, max_dynamic_shared_memory, threads_per_block, carveout, block_barriers, resources
        As in :func:`occupancy.calculate`.
    num_blocks : int
        Blocks wanted on each SM, at least 1.
    match_driver : bool, optional
        False (default): the largest dynamic shared memory, bytes, with which
        :func:`occupancy.calculate` really gives at least ``num_blocks`` blocks
        (never above ``max_dynamic_shared_memory``).
        True: the value of ``cudaOccupancyAvailableDynamicSMemPerBlock``. It divides
        the carveout by ``num_blocks`` without leaving room for the 1 KiB the driver
        reserves per block on compute capability 8.0 and later, so launching
        ``num_blocks`` blocks with that much dynamic shared memory gives
        ``num_blocks - 1`` blocks there.

    Returns
    -------
    int
        Bytes of dynamic shared memory per block.

    Raises
    ------
    OccupancyError
        If ``num_blocks`` blocks do not fit even without dynamic shared memory.

    Examples
    --------
    >>> import occupancy
    >>> kw = dict(registers_per_thread=32, threads_per_block=256, num_blocks=2,
    ...           max_dynamic_shared_memory=200 * 1024)
    >>> occupancy.available_dynamic_shared_memory("sm_90", **kw)
    115712
    >>> occupancy.available_dynamic_shared_memory("sm_90", **kw, match_driver=True)
    116736
    """
    arch = architecture(arch)
    kernel = merge_resources(
        arch, resources, LAUNCH_DEFAULTS,
        registers_per_thread=registers_per_thread,
        static_shared_memory=static_shared_memory,
        threads_per_block=threads_per_block,
        block_barriers=block_barriers,
        max_dynamic_shared_memory=max_dynamic_shared_memory,
    )
    s, m = _static_and_attribute(arch, kernel["static_shared_memory"], kernel["max_dynamic_shared_memory"])
    n = _validate.integer("num_blocks", num_blocks)
    _validate.check_range("num_blocks", n, 1, arch.max_blocks_per_sm, arch, " blocks per SM")
    v = _validate.launch(
        arch,
        threads_per_block=kernel["threads_per_block"],
        registers_per_thread=kernel["registers_per_thread"],
        static_shared_memory=s,
        dynamic_shared_memory=0,
        max_dynamic_shared_memory=m,
        carveout=carveout,
        block_barriers=kernel["block_barriers"],
        max_threads_per_block=None,
        arrays=False,
    )
    args = (v["t"], v["r"], s)
    fits = int(evaluate(arch, *args, 0, m, v["c"], v["b"], None)["active_blocks_per_sm"])
    if fits < n:
        raise OccupancyError(
            f"num_blocks={n} exceeds the {fits} blocks per SM that fit on {arch.name} "
            f"with no dynamic shared memory"
        )
    if match_driver:
        return _driver_available(arch, s, m, n, v["c"])
    dyn = np.arange(m + 1, dtype=np.int64)
    blocks = evaluate(arch, *args, dyn, m, v["c"], v["b"], None)["active_blocks_per_sm"]
    # Blocks never rise with shared memory, so the last fitting size is the answer.
    return int(np.count_nonzero(blocks >= n) - 1)


def _driver_available(arch, static: int, max_dynamic: int, n: int, carveout: int) -> int:
    """cudaOccupancyAvailableDynamicSMemPerBlock's arithmetic."""
    unit = arch.shared_memory_allocation_unit
    configs = arch.shared_memory_carveouts

    def align(size: int) -> int:
        return next(c for c in configs if c >= size)

    # The driver sizes the per-block limit for a kernel that may use the whole SM.
    optin = arch.shared_memory_per_sm > arch.max_shared_memory_per_block
    limit = (
        arch.max_shared_memory_per_block_optin if optin else arch.max_shared_memory_per_block
    ) + arch.reserved_shared_memory_per_block
    if n == 1:
        per_sm = limit
    else:
        wanted = arch.shared_memory_per_sm if carveout < 0 else carveout * arch.shared_memory_per_sm // 100
        per_sm = align(wanted) or align(1)
    available = min(per_sm // n // unit * unit, limit) - static
    return max(0, min(available, max_dynamic))
