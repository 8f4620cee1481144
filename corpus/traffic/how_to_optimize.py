"""Access descriptions of How_to_optimize_in_GPU's kernels (see the package docstring): the
reductions reduce0-7, the warp-per-row SGEMVs and the element-wise adds.

Read from the project's source at the corpus's commit (``reduce/``, ``sgemv/``,
``elementwise/``); the launches are the corpus's (grid x block covers the input exactly, so no
guard is a boundary).
"""

from __future__ import annotations

from roofline.memory import Access, Coords

from ._description import Describe, Description, tokens
from .cuda_samples._reduction import with_tree
from .cuda_samples._shapes import first_thread, lane_of, log2, tree_wavefronts

__all__ = ["KERNELS"]

KERNELS: dict[str, Describe] = {}


# ----------------------------------------------------------------------------- reductions


def _sum_out() -> Access:
    """Thread 0 writes its block's sum to ``out[blockIdx.x]``."""
    return Access(array="out", index=lambda c: c.block_x, guard=first_thread, kind="store")


def _one_each(launch) -> Description:
    """reduce0-2: thread i loads ``in[i]`` into shared memory."""
    return Description(accesses=(Access(array="in", index=lambda c: c.x), _sum_out()))


def _two_each(launch) -> Description:
    """reduce3-5: block b covers 2 x blockDim elements from ``2 b blockDim``; thread t adds
    elements t and t + blockDim of them during the load."""
    b = launch.block[0]

    def first(c: Coords):
        return c.block_x * 2 * b + c.thread_x

    return Description(accesses=(
        Access(array="in", index=first),
        Access(array="in", index=lambda c: first(c) + b),
        _sum_out(),
    ))


#: reduce6/7's NUM_PER_THREAD (main's instantiation ``<256, 128>``).
_PER_THREAD = 128


def _many_each(launch) -> Description:
    """reduce6/7: block b sums 256 x 128 elements from ``b x 32768``, thread t the 128 at
    ``t + 256 j`` (an unrolled loop: a warp reads 32 consecutive floats each trip)."""
    b = launch.block[0]
    return Description(accesses=(
        Access(array="in", index=lambda c: c.block_x * b * _PER_THREAD + c.thread_x + c.loop * b,
               loop=_PER_THREAD),
        _sum_out(),
    ))


def _with_last_warp(describe, first_store_wavefronts: int = 1):
    """reduce4-6: each warp stores its sum (``first_store_wavefronts`` a warp), then the steps
    s = B/2 .. 64 of ``sdata[tid] += sdata[tid + s]`` for tid < s (2 LDS and an STS a warp,
    predicated, a barrier each), then warp 0 alone runs warpReduce on volatile shared memory
    (6 steps of 2 LDS and an STS, conflict-free: 18) and thread 0 loads word 0 (every warp)."""
    def described(launch) -> Description:
        b = launch.block[0]
        warps = b // 32
        steps = [s for s in (1 << k for k in range(log2(b))) if s >= 64]
        per_block = (warps * first_store_wavefronts + tree_wavefronts(b, lambda s, t: t if t < s else None, 2, steps)
                     + 18 + warps)
        return Description(accesses=describe(launch).accesses, counts={
            "shared_wavefronts": launch.blocks * per_block, "barriers_per_block": 1 + len(steps)})
    return described


def _shuffled(launch) -> Description:
    """reduce7: warp sums by shuffles; lane 0 of each warp stores its sum and, after one barrier,
    warp 0 loads them. No shared wavefronts are given: those accesses (one a warp, one a block)
    are a tenth of Nsight's total, which the shuffles fill (as for cuda-samples' shfl_scan)."""
    return Description(accesses=_many_each(launch).accesses, counts={"barriers_per_block": 1})


# reduce0-3 are cuda-samples' reduce0-2 trees (reduce3 loads both words of each step, as reduce2)
KERNELS["reduce.v0"] = with_tree(_one_each, "0")
KERNELS["reduce.v1"] = with_tree(_one_each, "1")
KERNELS["reduce.v2"] = with_tree(_one_each, "2")
KERNELS["reduce.v3"] = with_tree(_two_each, "2")
KERNELS["reduce.v4"] = _with_last_warp(_two_each)
KERNELS["reduce.v5"] = _with_last_warp(_two_each)
KERNELS["reduce.v6"] = _with_last_warp(_many_each)
KERNELS["reduce.v7"] = _shuffled


# ----------------------------------------------------------------------------- sgemv


def _mn(launch) -> tuple[int, int]:
    t = tokens(launch.shape)
    return int(t["M"]), int(t["N"])


def _row(c: Coords):
    """Sgemv_v0/v1's row: ``blockDim.y * blockIdx.x + threadIdx.y`` (a warp per row)."""
    return c.block_dim[1] * c.block_x + c.thread_y


def _sgemv(launch, width: int) -> Description:
    """Sgemv_v0 (``width`` 1) / v1 (4, float4): a warp per row (row < M); lane l reads
    ``A[row][32 i + l]`` and ``x[32 i + l]`` (in units of ``width`` floats) for
    i < max(N / (32 width), 1); lane 0 writes ``y[row]``."""
    m, n = _mn(launch)
    trips = max(n // (32 * width), 1)

    def inside(c: Coords):
        return _row(c) < m

    def col(c: Coords):
        return c.loop * 32 + lane_of(c)

    return Description(accesses=(
        Access(array="A", index=lambda c: _row(c) * (n // width) + col(c), guard=inside, loop=trips,
               element_bytes=4 * width),
        Access(array="x", index=col, guard=inside, loop=trips, element_bytes=4 * width),
        Access(array="y", index=_row, guard=lambda c: inside(c) & (lane_of(c) == 0), kind="store"),
    ))


#: Sgemv_v2's ROW_PER_WARP (main's instantiation).
_ROWS_PER_WARP = 2


def _sgemv_v2(launch) -> Description:
    """Sgemv_v2<2>: half a warp per row (16 columns): lane l of warp w takes row
    ``2 w + l / 16`` and column ``l % 16``, reads ``A[row][col]`` and ``x[col]``; lane 0 of each
    half writes ``y[row]``."""
    m, n = _mn(launch)
    half = 32 // _ROWS_PER_WARP

    def row(c: Coords):
        return _row(c) * _ROWS_PER_WARP + lane_of(c) // half

    def col(c: Coords):
        return lane_of(c) % half

    def inside(c: Coords):
        return row(c) < m

    return Description(accesses=(
        Access(array="A", index=lambda c: row(c) * n + col(c), guard=inside),
        Access(array="x", index=col, guard=inside),
        Access(array="y", index=row, guard=lambda c: inside(c) & (col(c) == 0), kind="store"),
    ))


KERNELS["sgemv.v0"] = lambda launch: _sgemv(launch, 1)
KERNELS["sgemv.v1"] = lambda launch: _sgemv(launch, 4)
KERNELS["sgemv.v2"] = _sgemv_v2


# ----------------------------------------------------------------------------- element-wise


def _add(width: int):
    """add / vec2_add / vec4_add: thread i loads ``a`` and ``b`` and stores ``c`` at its
    ``width`` floats from ``width x i`` (float, float2, float4)."""
    def described(launch) -> Description:
        del launch  # grid x block x width is n: no guard

        def at(c: Coords):
            return c.x

        return Description(accesses=(
            Access(array="a", index=at, element_bytes=4 * width),
            Access(array="b", index=at, element_bytes=4 * width),
            Access(array="c", index=at, element_bytes=4 * width, kind="store"),
        ))
    return described


KERNELS["elementwise.add"] = _add(1)
KERNELS["elementwise.vec2_add"] = _add(2)
KERNELS["elementwise.vec4_add"] = _add(4)
