"""Access descriptions of CUDA-Programming's (Fan's book) kernels (see the package docstring): chapter
7's copy and transposes, chapter 8's reductions in global and shared memory, chapter 9's atomic
reduction and chapter 10's warp-level ones.

Read from the project's source at the corpus's commit (``src/07-global-memory`` to
``src/10-warp``), built without ``USE_DP``: ``real`` is float.
"""

from __future__ import annotations

from roofline.memory import Access, Coords

from ._description import Describe, Description, tokens
from .cuda_samples._reduction import with_tree
from .cuda_samples._shapes import first_thread, log2, tree_wavefronts

__all__ = ["KERNELS"]

KERNELS: dict[str, Describe] = {}


def _count(value: str) -> int:
    """A shape's ``2^k`` or plain number."""
    return 1 << int(value[2:]) if value.startswith("2^") else int(value)


# ----------------------------------------------------------------------------- chapter 7: matrices


def _matrix(load_by_rows: bool, store_by_rows: bool):
    """copy / transpose1-3 of an N x N matrix: thread (nx, ny) with nx, ny < N reads A and
    writes B, each at ``ny N + nx`` (by rows: a warp along a row) or ``nx N + ny`` (by columns).
    copy: both by rows; transpose1: read by rows, write by columns; transpose2/3: the reverse
    (transpose3 reads through ``__ldg``: the same global loads)."""
    def described(launch) -> Description:
        n = int(tokens(launch.shape)["N"])

        def inside(c: Coords):
            return (c.x < n) & (c.y < n)

        def rows(c: Coords):
            return c.y * n + c.x

        def columns(c: Coords):
            return c.x * n + c.y

        return Description(accesses=(
            Access(array="A", index=rows if load_by_rows else columns, guard=inside),
            Access(array="B", index=rows if store_by_rows else columns, guard=inside, kind="store"),
        ))
    return described


KERNELS["matrix.copy"] = _matrix(True, True)
KERNELS["matrix.transpose1"] = _matrix(True, False)
KERNELS["matrix.transpose2"] = _matrix(False, True)
KERNELS["matrix.transpose3"] = _matrix(False, True)


# ----------------------------------------------------------------------------- chapter 8: reductions


def _in_global(launch) -> Description:
    """reduce_global: block b reduces its slice ``x + b blockDim`` in place: each step
    ``offset = B/2 .. 1`` threads below it load ``x[tid]`` and ``x[tid + offset]`` and store
    ``x[tid]`` (a barrier each); thread 0 then loads ``x[0]`` and writes ``y[b]``."""
    b = launch.block[0]
    accesses = []
    for s in (b >> k for k in range(1, log2(b) + 1)):
        def on(c: Coords, s=s):
            return c.thread_x < s

        def at(c: Coords):
            return c.block_x * b + c.thread_x

        accesses += [Access(array="x", index=at, guard=on),
                     Access(array="x", index=lambda c, s=s, at=at: at(c) + s, guard=on),
                     Access(array="x", index=at, guard=on, kind="store")]
    accesses += [Access(array="x", index=lambda c: c.block_x * b, guard=first_thread),
                 Access(array="y", index=lambda c: c.block_x, guard=first_thread, kind="store")]
    return Description(accesses=tuple(accesses), counts={"barriers_per_block": log2(b)})


#: The book's N (a compile-time constant of chapter 8's kernels, whatever the input's length).
_BOOK_N = 100_000_000


def _loaded(launch, n: int) -> tuple[Access, ...]:
    """Thread i loads ``x[i]`` where i < n."""
    return (Access(array="x", index=lambda c: c.x, guard=lambda c: c.x < n),)


def _block_sum(launch) -> Description:
    """reduce_shared / reduce_dynamic: thread i loads ``x[i]`` (i < the book's N: every thread
    of these launches) into shared memory; thread 0 writes the block's sum to ``y[b]``."""
    return Description(accesses=(
        *_loaded(launch, _BOOK_N),
        Access(array="y", index=lambda c: c.block_x, guard=first_thread, kind="store"),
    ))


# the shared tree is cuda-samples' reduce2 (tid < offset, both words loaded, thread 0's final load)
KERNELS["reduce2gpu.reduce_global"] = _in_global
KERNELS["reduce2gpu.reduce_shared"] = with_tree(_block_sum, "2")
KERNELS["reduce2gpu.reduce_dynamic"] = with_tree(_block_sum, "2")


# ----------------------------------------------------------------------------- chapters 9 and 10: atomics, warps


def _with_atomic(describe):
    """``describe``'s accesses and counts, and thread 0's atomicAdd of the block's sum to
    ``y[0]``: one atomic a block, one address."""
    def described(launch) -> Description:
        d = describe(launch)
        return Description(accesses=d.accesses, counts={
            **d.counts, "atomics": launch.blocks, "atomic_addresses": 1})
    return described


def _loads_to_n(launch) -> Description:
    """Thread i loads ``x[i]`` where i < N (the kernel's argument: the shape's n)."""
    return Description(accesses=_loaded(launch, _count(tokens(launch.shape)["n"])))


def _warp_tail(shuffled: bool):
    """reduce_syncwarp / reduce_shfl / reduce_cp: each warp stores its value (one STS), the
    steps ``offset = B/2 .. 32`` of ``s_y[tid] += s_y[tid + offset]`` for tid < offset (2 LDS
    and an STS a warp, predicated, a barrier each), then the last 32 values: reduce_syncwarp
    goes on in shared memory (offsets 16 .. 1, ``__syncwarp``, issued by every warp) and ends
    with thread 0's load of word 0; reduce_shfl and reduce_cp load ``s_y[tid]`` (one LDS a warp)
    and shuffle (not shared accesses)."""
    def described(launch) -> Description:
        b = launch.block[0]
        warps = b // 32
        steps = [s for s in (1 << k for k in range(log2(b))) if s >= 32]
        if shuffled:
            per_block = warps + tree_wavefronts(b, lambda s, t: t if t < s else None, 2, steps) + warps
        else:
            per_block = warps + tree_wavefronts(b, lambda s, t: t if t < s else None, 2) + warps
        return Description(accesses=_loads_to_n(launch).accesses, counts={
            "shared_wavefronts": launch.blocks * per_block, "barriers_per_block": 1 + len(steps)})
    return described


def _grid_stride(launch) -> Description:
    """reduce_cp (chapter 10's grid-stride form): thread x sums ``x[x + k T]`` (T = blockDim x
    gridDim, below N), then reduces as `_warp_tail` (shuffled); thread 0 writes ``y[b]``."""
    n = _count(tokens(launch.shape)["n"])
    stride = launch.blocks * launch.threads_per_block
    trips = -(-n // stride)

    def at(c: Coords):
        return c.x + c.loop * stride

    tail = _warp_tail(True)(launch)
    return Description(accesses=(
        Access(array="x", index=at, guard=lambda c: at(c) < n, loop=trips),
        Access(array="y", index=lambda c: c.block_x, guard=first_thread, kind="store"),
    ), counts=tail.counts)


KERNELS["atomic.reduce"] = _with_atomic(with_tree(_loads_to_n, "2"))
KERNELS["warp.reduce_syncwarp"] = _with_atomic(_warp_tail(False))
KERNELS["warp.reduce_shfl"] = _with_atomic(_warp_tail(True))
KERNELS["warp.reduce_cp"] = _with_atomic(_warp_tail(True))
KERNELS["warp.reduce_cp_parallelism"] = _grid_stride
