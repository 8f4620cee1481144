"""cuda-samples descriptions of the reductions and scans: reduction, scalarProd, the scans."""

from __future__ import annotations

import re

from roofline.memory import Access, Coords

from .._description import Describe, Description
from ._shapes import first_thread, log2, n_of, tree_wavefronts, with_counts

__all__ = ["KERNELS", "with_tree"]

KERNELS: dict[str, Describe] = {}


# ----------------------------------------------------------------------------- reduction


def _reduce_one(launch) -> Description:
    """reduce0/1/2: thread i loads element i; thread 0 writes the block's sum."""
    n = n_of(launch)
    return Description(accesses=(
        Access(array="in", index=lambda c: c.x, guard=lambda c: c.x < n),
        Access(array="out", index=lambda c: c.block_x, guard=first_thread, kind="store"),
    ))


def _reduce_two(launch) -> Description:
    """reduce3/4/5: a block covers 2 x blockDim elements, each thread loading one from each half;
    thread 0 writes the block's sum."""
    n, b = n_of(launch), launch.block[0]

    def first(c: Coords):
        return c.block_x * 2 * b + c.thread_x

    return Description(accesses=(
        Access(array="in", index=first, guard=lambda c: first(c) < n),
        Access(array="in", index=lambda c: first(c) + b, guard=lambda c: first(c) + b < n),
        Access(array="out", index=lambda c: c.block_x, guard=first_thread, kind="store"),
    ))


def _reduce6(launch) -> Description:
    """reduce6: a grid-stride loop over pairs of blockDim elements (stride 2 x blockDim x
    gridDim), each thread loading one of each pair; thread 0 writes the block's sum."""
    n, b, g = n_of(launch), launch.block[0], launch.grid[0]
    stride = 2 * b * g

    def first(c: Coords):
        return c.block_x * 2 * b + c.thread_x + c.loop * stride

    loop = -(-n // stride)
    return Description(accesses=(
        Access(array="in", index=first, guard=lambda c: first(c) < n, loop=loop),
        Access(array="in", index=lambda c: first(c) + b, guard=lambda c: first(c) + b < n, loop=loop),
        Access(array="out", index=lambda c: c.block_x, guard=first_thread, kind="store"),
    ))


def with_tree(describe, kind: str):
    """reduce0-3: the block stores its values (one STS a warp), then log2(B) steps (a barrier
    each, after the first one): reduce0 updates word tid when tid % 2s == 0, reduce1 word
    2s x tid (stride-2s lanes: bank conflicts), reduce2/3 word tid for tid < s; reduce0-2 load
    both words, reduce3 keeps its own sum in a register (one LDS). reduce0-2 end with thread 0's
    load of word 0 (issued by every warp)."""
    def described(launch) -> Description:
        b = launch.block[0]
        pairs = {
            "0": lambda s, t: t if t % (2 * s) == 0 else None,
            "1": lambda s, t: 2 * s * t if 2 * s * t < b else None,
            "2": lambda s, t: t if t < s else None,
            "3": lambda s, t: t if t < s else None,
        }[kind]
        per_block = (b // 32) + tree_wavefronts(b, pairs, 1 if kind == "3" else 2)
        if kind != "3":
            per_block += b // 32
        d = describe(launch)
        return Description(accesses=d.accesses, counts={
            "shared_wavefronts": launch.blocks * per_block,
            "barriers_per_block": 1 + log2(b),
        })
    return described


def _with_unrolled(describe, looped: bool):
    """reduce4/5/6: the block stores its sums (one STS a warp), halves them down to 64 words
    (for s = B/2 .. 64: one LDS and one STS a warp, predicated, a barrier each: a loop in
    reduce4, unrolled with fixed barriers for s = 256, 128, 64 in reduce5/6), then warp 0 loads
    word tid + 32 and finishes with 5 shuffles (not shared accesses)."""
    def described(launch) -> Description:
        b = launch.block[0]
        warps = b // 32
        steps = max(log2(b) - 6, 0)
        per_block = warps + 2 * warps * steps + 1
        d = describe(launch)
        return Description(accesses=d.accesses, counts={
            "shared_wavefronts": launch.blocks * per_block,
            "barriers_per_block": 1 + steps if looped else 4,
        })
    return described


for _k in ("0", "1", "2"):
    KERNELS[f"reduction.reduce{_k}"] = with_tree(_reduce_one, _k)
KERNELS["reduction.reduce3"] = with_tree(_reduce_two, "3")
KERNELS["reduction.reduce4"] = _with_unrolled(_reduce_two, True)
KERNELS["reduction.reduce5"] = _with_unrolled(_reduce_two, False)
KERNELS["reduction.reduce6"] = _with_unrolled(_reduce6, False)


# ----------------------------------------------------------------------------- scalarProd

def _scalar_prod(launch) -> Description:
    """scalarProd: block b takes vectors b, b + gridDim, ...; for each, thread t reads elements
    t + blockDim j of A and B (its accumulators t + blockDim i, each striding by 1024 through the
    vector: the block reads each element once, a warp 32 consecutive ones), thread 0 writes the product.

    The order of j (the source's two nested loops) does not change the count, so they are one
    loop here. The vector loop and the element loop cannot be one affine loop, so the shorter of
    the two is spelt out access by access.
    """
    vectors, elements = map(int, re.match(r"(\d+) vectors x (\d+)", launch.shape).groups())
    grid, b = launch.grid[0], launch.block[0]
    trips = -(-vectors // grid)            # vector-loop trips of block 0
    pieces = -(-elements // b)             # blockDim-long pieces of a vector

    def vector(c: Coords, v):
        return c.block_x + v * grid

    def element(c: Coords, j):
        return j * b + c.thread_x

    def access(array: str, v, j, loop: int) -> Access:
        return Access(array=array, loop=loop,
                      index=lambda c: vector(c, v(c)) * elements + element(c, j(c)),
                      guard=lambda c: (vector(c, v(c)) < vectors) & (element(c, j(c)) < elements))

    accesses = []
    if trips <= pieces:  # a loop over the pieces of each vector
        for v in range(trips):
            accesses += [access(a, lambda c, v=v: v, lambda c: c.loop, pieces) for a in ("A", "B")]
    else:                # a loop over the vectors, per piece
        for j in range(pieces):
            accesses += [access(a, lambda c: c.loop, lambda c, j=j: j, trips) for a in ("A", "B")]
    accesses.append(Access(array="C", index=lambda c: vector(c, c.loop), loop=trips, kind="store",
                           guard=lambda c: first_thread(c) & (vector(c, c.loop) < vectors)))
    return Description(accesses=tuple(accesses))


KERNELS["scalarProd"] = _scalar_prod


# ----------------------------------------------------------------------------- scans


def _scan_exclusive_shared(launch) -> Description:
    """scanExclusiveShared: thread i reads and writes uint4 i (the scan is in shared memory)."""
    return Description(accesses=(
        Access(array="src", index=lambda c: c.x, element_bytes=16),
        Access(array="dst", index=lambda c: c.x, element_bytes=16, kind="store"),
    ))


def _uniform_update(launch) -> Description:
    """uniformUpdate: thread 0 reads its block's offset; every thread adds it to its uint4."""
    return Description(accesses=(
        Access(array="buffer", index=lambda c: c.block_x, guard=first_thread),
        Access(array="data", index=lambda c: c.x, element_bytes=16),
        Access(array="data", index=lambda c: c.x, element_bytes=16, kind="store"),
    ))


def _shfl_scan(launch) -> Description:
    """shfl_scan_test: thread i reads and writes element i; the block's last thread also writes
    the block's sum to the partial sums."""
    b = launch.block[0]
    return Description(accesses=(
        Access(array="data", index=lambda c: c.x),
        Access(array="data", index=lambda c: c.x, kind="store"),
        Access(array="partial", index=lambda c: c.block_x, guard=lambda c: c.thread_x == b - 1, kind="store"),
    ))


def _scan_counts(launch) -> dict:
    """scanExclusiveShared (arrays of 1024: a 256-word scan of the threads' uint4 sums): each
    thread stores a zero and its sum (2 STS), then per offset 1 .. 128 loads two words, and
    after a second barrier stores one; a final load. All conflict-free (consecutive words)."""
    steps = log2(launch.threads_per_block)
    return {"shared_wavefronts": launch.warps * (2 + steps + 2 * steps + 1),
            "barriers_per_block": 2 * steps}


def _uniform_counts(launch) -> dict:
    """uniformUpdate: thread 0 stores the block's offset; every warp loads it (a broadcast)."""
    return {"shared_wavefronts": launch.blocks + launch.warps, "barriers_per_block": 1}


KERNELS["scan.exclusiveShared"] = with_counts(_scan_exclusive_shared, _scan_counts)
KERNELS["scan.uniformUpdate"] = with_counts(_uniform_update, _uniform_counts)
KERNELS["shfl_scan"] = _shfl_scan
