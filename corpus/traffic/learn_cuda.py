"""Access descriptions of Learn-CUDA-Programming's kernels (see the package docstring): Chapter 3's
reductions, from one step in global memory to the grid-stride, warp-shuffle and atomic forms.

Read from the project's source at the corpus's commit
(``Chapter03/03_cuda_thread_programming``); a shape's ``size`` is the input's length.
"""

from __future__ import annotations

from roofline.memory import Access, Coords

from ._description import Describe, Description, tokens
from .cuda_samples._reduction import with_tree
from .cuda_samples._shapes import first_thread

__all__ = ["KERNELS"]

KERNELS: dict[str, Describe] = {}


def _size(launch) -> int:
    value = tokens(launch.shape)["size"]
    return 1 << int(value[2:]) if value.startswith("2^") else int(value)


def _global_step(launch) -> Description:
    """global_reduction_kernel: thread i with ``i + stride < size`` adds ``in[i + stride]`` to
    ``out[i]`` (a load and a store of out).

    Where the stride is half the input or more, the threads on are the first ``size - stride``
    of the grid and the blocks beyond them do nothing: a guard that switches off half the grid,
    which the count's classes do not take. The stand-in spreads those threads over every block
    (the first ``(size - stride) / gridDim`` threads of each, a whole number of warps), covering
    the same elements of in and out by the same warps' 128-byte rows: the same sectors,
    requests and DRAM bytes, in another block order.
    """
    size, stride = _size(launch), int(tokens(launch.shape)["stride"])
    active = max(size - stride, 0)
    per_block = active // launch.blocks
    if 2 * stride >= size and per_block * launch.blocks == active and per_block % 32 == 0:
        def at(c: Coords):
            return c.block_x * per_block + c.thread_x

        def inside(c: Coords):
            return c.thread_x < per_block
    else:
        def at(c: Coords):
            return c.x

        def inside(c: Coords):
            return c.x + stride < size

    return Description(accesses=(
        Access(array="in", index=lambda c: at(c) + stride, guard=inside),
        Access(array="out", index=at, guard=inside),
        Access(array="out", index=at, guard=inside, kind="store"),
    ))


def _one_each(launch) -> Description:
    """reduction_kernel / _1 / _2: thread i loads ``in[i]`` (i < size) into shared memory;
    thread 0 writes the block's sum to ``out[blockIdx.x]``."""
    size = _size(launch)
    return Description(accesses=(
        Access(array="in", index=lambda c: c.x, guard=lambda c: c.x < size),
        Access(array="out", index=lambda c: c.block_x, guard=first_thread, kind="store"),
    ))


#: NUM_LOAD: the loads each trip of the grid-stride loop.
_LOADS = 4


def _grid_stride(launch) -> tuple[Access, ...]:
    """The grid-stride loop of the last four kernels: with T = blockDim x gridDim, thread x takes
    ``i = x, x + 4T, ...`` (i < size) and loads ``in[i + s T]`` for s < 4 where that is below size."""
    size = _size(launch)
    threads = launch.blocks * launch.threads_per_block
    trips = -(-size // (_LOADS * threads))

    def at(s: int):
        return lambda c: c.x + c.loop * _LOADS * threads + s * threads

    return tuple(Access(array="in", index=at(s), guard=lambda c, at=at(s): at(c) < size, loop=trips)
                 for s in range(_LOADS))


def _block_tree(launch) -> Description:
    """reduction_kernel (cooperative groups): the grid-stride loads, a shared-memory tree (its
    counts: `with_tree`); thread 0 writes the block's sum to ``out[blockIdx.x]``."""
    return Description(accesses=(
        *_grid_stride(launch),
        Access(array="out", index=lambda c: c.block_x, guard=first_thread, kind="store"),
    ))


def _block_sums(launch) -> Description:
    """reduction_kernel (warp primitives): the grid-stride loads, warp shuffles and one slot a
    warp of shared memory; thread 0 writes the block's sum. No shared wavefronts are given: the
    source's shared accesses (one store a warp, warp 0's load) are a fraction of Nsight's total,
    which the shuffles fill (as for cuda-samples' shfl_scan)."""
    return Description(accesses=_block_tree(launch).accesses, counts={"barriers_per_block": 1})


def _block_atomic(launch) -> Description:
    """reduction_blk_atmc_kernel: the grid-stride loads and the block's shuffles (shared
    wavefronts not given, as `_block_sums`); thread 0 of each block adds the sum to ``out[0]``
    with one atomicAdd: one atomic a block, one address."""
    return Description(accesses=_grid_stride(launch), counts={
        "atomics": launch.blocks, "atomic_addresses": 1, "barriers_per_block": 1})


def _warp_atomic(launch) -> Description:
    """reduction_wrp_atmc_kernel: the grid-stride loads and warp shuffles; lane 0 of each warp
    adds the warp's sum to ``out[0]``: one atomic a warp, one address, no barrier."""
    return Description(accesses=_grid_stride(launch), counts={
        "atomics": launch.warps, "atomic_addresses": 1, "barriers_per_block": 0})


KERNELS["global_reduction"] = _global_step
# the shared-memory trees are cuda-samples' reduce0-2 (idx % 2s, 2s x tid, tid < s)
KERNELS["reduction_shared"] = with_tree(_one_each, "0")
KERNELS["reduction_interleaving"] = with_tree(_one_each, "1")
KERNELS["reduction_sequential"] = with_tree(_one_each, "2")
KERNELS["reduction_wp"] = _block_sums
KERNELS["reduction_cg"] = with_tree(_block_tree, "2")
KERNELS["reduction_blk_atmc"] = _block_atomic
KERNELS["reduction_wrp_atmc"] = _warp_atomic
