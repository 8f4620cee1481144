"""The block-size search (``cudaOccupancyMaxPotentialBlockSize``) and the dynamic shared memory left."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, replace

import numpy as np
from pydantic import ConfigDict

from ._arch import Architecture, ArchitectureLike, architecture
from ._calculator import calculate_many
from ._checks import check_range, integer
from ._display import Displayed, percent, shown
from ._errors import OccupancyError
from ._launch import Launch, launch_of
from ._rules import evaluate, launch_numbers

__all__ = ["BlockSizeResult", "available_dynamic_shared_memory", "max_potential_block_size"]


class BlockSizeResult(Displayed):
    """The block size with the highest occupancy and the grid that fills the GPU."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    block_size: int
    min_grid_size: int
    active_blocks_per_sm: int
    occupancy: float
    sm_count: int

    headline = (
        shown("block_size"), shown("min_grid_size"), shown("active_blocks_per_sm", label="blocks_per_sm"),
        shown("occupancy", percent),
    )


def max_potential_block_size(
    arch: ArchitectureLike,
    launch: Launch | None = None,
    *,
    dynamic_shared_memory: int | Callable[[int], int] | None = None,
    sm_count: int | None = None,
    **fields: object,
) -> BlockSizeResult:
    """The block size that maximises occupancy, as ``cudaOccupancyMaxPotentialBlockSize``.

    Block sizes from the largest allowed down to one warp, in steps of a warp, are
    tried (one `occupancy.calculate_many` over them); the one with the most active
    threads per SM wins, the larger block on a tie.

    Parameters
    ----------
    arch : str, tuple or Architecture
        The compute capability.
    launch : Launch, optional
        The kernel and its launch; its block size is ignored (it is what is searched for).
    dynamic_shared_memory : int or callable, optional
        Dynamic shared memory per block, bytes; or a function of the block size
        returning it (``cudaOccupancyMaxPotentialBlockSizeVariableSMem``). Sizes whose
        shared memory cannot launch count as 0 blocks.
    sm_count : int, optional
        SMs on the device; ``min_grid_size`` is blocks per SM times this
        (None counts one SM, so ``min_grid_size`` is then blocks per SM).
    **fields
        In place of ``launch``: its fields as keywords, as in :func:`occupancy.calculate`,
        without a block size. ``max_threads_per_block`` caps the search; a kernel whose
        ``resources`` fix its block size (Triton's) has only that size to choose.

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
    arch = architecture(arch)
    if launch is not None and callable(dynamic_shared_memory):
        raise TypeError("max_potential_block_size() takes launch= or dynamic_shared_memory=, not both")
    fixed_dynamic = None if callable(dynamic_shared_memory) else dynamic_shared_memory
    launch = launch_of("max_potential_block_size", launch, {**fields, "dynamic_shared_memory": fixed_dynamic},
                       arch, searched=True)
    check_range("dynamic_shared_memory", launch.dynamic_shared_memory, 0,
                arch.max_shared_memory_per_block_optin - launch.static_shared_memory, arch,
                " bytes (the opt-in limit minus static_shared_memory)")
    v = launch_numbers(arch, launch)
    sms = 1 if sm_count is None else integer("sm_count", sm_count)
    check_range("sm_count", sms, 1, 2**31 - 1)
    limit = arch.max_threads_per_block
    if v.max_threads_per_block is not None:
        limit = min(limit, v.max_threads_per_block)
    fixed = None if launch.resources is None else launch.resources.threads_per_block
    if fixed is not None:
        sizes = np.array([min(fixed, limit)])  # a kernel compiled for one block size launches with no other
    else:
        ws = arch.warp_size
        sizes = np.minimum(np.arange(-(-limit // ws) * ws, 0, -ws, dtype=np.int64), limit)
    dynamic, launches = v.dynamic_shared_memory, True
    if callable(dynamic_shared_memory):
        asked = [integer("dynamic_shared_memory", dynamic_shared_memory(int(n))) for n in sizes]
        for n, value in zip(sizes, asked):
            if value < 0:
                raise OccupancyError(f"dynamic_shared_memory({int(n)})={value} is below the minimum of 0")
        # A size asking for more than the kernel's maximum cannot launch (0 blocks, as the runtime says).
        maximum = v.max_dynamic_shared_memory
        launches = np.array([value <= maximum for value in asked])
        dynamic = np.array([min(value, maximum) for value in asked], dtype=np.int64)
    searched = replace(v, threads_per_block=sizes, dynamic_shared_memory=dynamic, max_threads_per_block=None)
    out = calculate_many(arch, **asdict(searched))
    blocks = np.where(launches, out.active_blocks_per_sm, 0)
    threads = sizes * blocks
    if int(threads.max()) == 0:
        return BlockSizeResult(block_size=0, min_grid_size=0, active_blocks_per_sm=0, occupancy=0.0, sm_count=sms)
    i = int(np.argmax(threads))  # first maximum = largest block size among ties
    return BlockSizeResult(
        block_size=int(sizes[i]),
        min_grid_size=int(blocks[i]) * sms,
        active_blocks_per_sm=int(blocks[i]),
        occupancy=float(out.occupancy[i]),
        sm_count=sms,
    )


def available_dynamic_shared_memory(
    arch: ArchitectureLike,
    launch: Launch | None = None,
    *,
    num_blocks: int,
    match_driver: bool = False,
    **fields: object,
) -> int:
    """Dynamic shared memory per block that still lets ``num_blocks`` blocks share an SM.

    Parameters
    ----------
    arch : str, tuple or Architecture
        The compute capability.
    launch : Launch, optional
        The kernel and its launch; its dynamic shared memory is ignored (it is what is
        searched for).
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
    **fields
        In place of ``launch``: its fields as keywords, as in :func:`occupancy.calculate`.

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
    v = launch_numbers(arch, launch_of("available_dynamic_shared_memory", launch, fields, arch))
    n = integer("num_blocks", num_blocks)
    check_range("num_blocks", n, 1, arch.max_blocks_per_sm, arch, " blocks per SM")
    maximum = v.max_dynamic_shared_memory
    fits = int(evaluate(arch, replace(v, dynamic_shared_memory=0)).active_blocks_per_sm)
    if fits < n:
        raise OccupancyError(
            f"num_blocks={n} exceeds the {fits} blocks per SM that fit on {arch.name} "
            f"with no dynamic shared memory"
        )
    if match_driver:
        return _driver_available(arch, v.static_shared_memory, maximum, n, v.carveout)
    dynamic = np.arange(maximum + 1, dtype=np.int64)
    blocks = evaluate(arch, replace(v, dynamic_shared_memory=dynamic)).active_blocks_per_sm
    # Blocks never rise with shared memory, so the last fitting size is the answer.
    return int(np.count_nonzero(blocks >= n) - 1)


def _driver_available(arch: Architecture, static: int, max_dynamic: int, n: int, carveout: int) -> int:
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
