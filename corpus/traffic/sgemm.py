"""Access descriptions of the corpus's sgemm kernels (see the package docstring).

Every launch is C = alpha * A @ B + beta * C with square row-major n x n matrices (M = N = K = n,
the shape ``M=N=K=n``) and the template arguments of the project's runner.cu (the kernel's name).
Tiled kernels: block (blockIdx.y, blockIdx.x) owns the C tile (row block, column block); the
fixed-count inner loops are unrolled by the compiler, so each of their loads is an access of its
own, in a loop over the K tiles; C is read and written once per element at the end.
"""

from __future__ import annotations

from collections.abc import Callable

from roofline.memory import Access, Coords

from ._description import Describe, Description

__all__ = ["KERNELS"]

KERNELS: dict[str, Describe] = {}

_Index = Callable[[Coords], object]


def _n(launch) -> int:
    """The matrix size of ``M=N=K=n``."""
    return int(launch.shape.rsplit("=", 1)[1])


def _tid(c: Coords):
    return c.thread_x


def _c_epilogue(n: int, row: _Index, col: _Index, tm: int, cols: tuple[int, ...], width: int = 1) -> tuple[Access, ...]:
    """C read then written at rows ``row + m`` (m < tm) and columns ``col + j`` (j in cols), width floats a go."""
    out = []
    for j in cols:
        def index(c: Coords, j=j):
            return ((row(c) + c.loop) * n + col(c) + j) // width
        out += [Access(array="C", index=index, loop=tm, element_bytes=4 * width),
                Access(array="C", index=index, loop=tm, element_bytes=4 * width, kind="store")]
    return tuple(out)


def _tile_loads(n: int, bm: int, bn: int, bk: int, a_rows: tuple[int, ...], a_row: _Index, a_col: _Index,
                b_rows: tuple[int, ...], b_row: _Index, b_col: _Index, width: int) -> tuple[Access, ...]:
    """The loads of the A tile (bm x bk) and B tile (bk x bn) each K step (loop over n / bk):
    thread loads A[a_row + r][a_col] for r in a_rows and B[b_row + r][b_col] for r in b_rows."""
    steps = n // bk

    def a(r: int):
        return lambda c: ((c.block_y * bm + a_row(c) + r) * n + c.loop * bk + a_col(c)) // width

    def b(r: int):
        return lambda c: ((c.loop * bk + b_row(c) + r) * n + c.block_x * bn + b_col(c)) // width

    return (tuple(Access(array="A", index=a(r), loop=steps, element_bytes=4 * width) for r in a_rows)
            + tuple(Access(array="B", index=b(r), loop=steps, element_bytes=4 * width) for r in b_rows))


def _naive(launch) -> Description:
    """Thread (x, y) computes C[x][y]: A's row x (a row per lane: strided), B's column y (one per warp)."""
    n = _n(launch)

    def inside(c: Coords):
        return (c.x < n) & (c.y < n)

    def cxy(c: Coords):
        return c.x * n + c.y

    return Description(accesses=(
        Access(array="A", index=lambda c: c.x * n + c.loop, guard=inside, loop=n),
        Access(array="B", index=lambda c: c.loop * n + c.y, guard=inside, loop=n),
        # the dot product accumulates in a register: C is read and written once
        Access(array="C", index=cxy, guard=inside),
        Access(array="C", index=cxy, guard=inside, kind="store"),
    ))


def _coalesce(launch) -> Description:
    """Thread t of block (bx, by) computes C[32 bx + t / 32][32 by + t % 32]: a warp shares A's row."""
    n = _n(launch)

    def row(c: Coords):
        return c.block_x * 32 + c.thread_x // 32

    def col(c: Coords):
        return c.block_y * 32 + c.thread_x % 32

    def inside(c: Coords):
        return (row(c) < n) & (col(c) < n)

    def cij(c: Coords):
        return row(c) * n + col(c)

    return Description(accesses=(
        Access(array="A", index=lambda c: row(c) * n + c.loop, guard=inside, loop=n),
        Access(array="B", index=lambda c: c.loop * n + col(c), guard=inside, loop=n),
        Access(array="C", index=cij, guard=inside),
        Access(array="C", index=cij, guard=inside, kind="store"),
    ))


def _shared_mem_block(launch) -> Description:
    """32x32 tiles through shared memory; block (bx, by) computes the C tile (row bx, column by).

    Shared, per warp and K tile: 2 conflict-free stores (the A and B element); the 32-step dot
    product reads B's column as 32 conflict-free LDS.32 and the warp's A row (one row a warp) as
    8 broadcast LDS.128 of 2 wavefronts: 32 + 16 + 2 = 50.
    """
    n = _n(launch)

    def row(c: Coords):
        return c.thread_x // 32

    def col(c: Coords):
        return c.thread_x % 32

    def cij(c: Coords):
        return (c.block_x * 32 + row(c)) * n + c.block_y * 32 + col(c)

    steps = n // 32
    return Description(accesses=(
        Access(array="A", index=lambda c: (c.block_x * 32 + row(c)) * n + c.loop * 32 + col(c), loop=steps),
        Access(array="B", index=lambda c: (c.loop * 32 + row(c)) * n + c.block_y * 32 + col(c), loop=steps),
        Access(array="C", index=cij),
        Access(array="C", index=cij, kind="store"),
    ), counts=_shared(n, 32, 32, 32, 50))


def _shared(n: int, bm: int, warps: int, bk: int, per_warp_tile: int) -> dict[str, float]:
    """Counts of a tiled kernel with (n / bm)^2 blocks of ``warps`` warps and n / bk K tiles: each
    warp spends ``per_warp_tile`` shared wavefronts a K tile, each thread 2 barriers a K tile.

    Wavefront costs of the compiled code (checked against Nsight's per-instruction counts): a
    4-byte access is 1 wavefront per distinct word in its worst bank; an LDS.128 costs 2 when
    each half-warp reads a single float4 (broadcast), 8 when the 16 lanes of a half-warp read 16
    float4 at a 32-byte stride (the other half-warp repeating them); a contiguous STS.128 costs 4.
    """
    tiles = n // bk
    return {"shared_wavefronts": float((n // bm) ** 2 * warps * tiles * per_warp_tile),
            "barriers_per_block": float(2 * tiles)}


def _blocktiling_1d(launch) -> Description:
    """BM = BN = 64, BK = 8, TM = 8: each thread one A and one B element per K step, 8 rows of one C column."""
    n = _n(launch)
    loads = _tile_loads(n, 64, 64, 8, (0,), lambda c: _tid(c) // 8, lambda c: _tid(c) % 8,
                        (0,), lambda c: _tid(c) // 64, lambda c: _tid(c) % 64, 1)
    # shared per warp and K tile: 2 conflict-free stores; 8 LDS.32 of B's row (conflict-free) and
    # the warp's 8 A rows of 8 (one thread row a warp: 64 contiguous floats) as 16 broadcast
    # LDS.128 of 2 wavefronts: 2 + 8 + 32 = 42
    return Description(accesses=loads + _c_epilogue(
        n, lambda c: c.block_y * 64 + _tid(c) // 64 * 8, lambda c: c.block_x * 64 + _tid(c) % 64, 8, (0,)),
        counts=_shared(n, 64, 16, 8, 42))


def _blocktiling_2d(launch) -> Description:
    """BM = BN = 128, BK = 8, TM = TN = 8, 256 threads: 4 A and 4 B floats per K step, an 8x8 C tile."""
    n = _n(launch)
    loads = _tile_loads(n, 128, 128, 8, (0, 32, 64, 96), lambda c: _tid(c) // 8, lambda c: _tid(c) % 8,
                        (0, 2, 4, 6), lambda c: _tid(c) // 128, lambda c: _tid(c) % 128, 1)
    # shared per warp and K tile: 8 conflict-free STS.32; each of the 8 dot steps reads A's 8 values
    # as LDS.32 (a warp's 2 thread rows hit one bank: 2 wavefronts) and B's 8 as 2 LDS.128 (16
    # column threads at a 32-byte stride: 8 wavefronts): 8 + 8 * (16 + 16) = 264
    return Description(accesses=loads + _c_epilogue(
        n, lambda c: c.block_y * 128 + _tid(c) // 16 * 8, lambda c: c.block_x * 128 + _tid(c) % 16 * 8,
        8, tuple(range(8))), counts=_shared(n, 128, 8, 8, 264))


def _vectorized(launch, per_warp_tile: int = 172) -> Description:
    """Kernels 6-8 (BM = BN = 128, BK = 8, TM = TN = 8): one float4 of A and of B per K step,
    the 8x8 C tile read and written as float4 (they differ only in shared-memory layout).

    Shared per warp and K tile. All three store A transposed with 4 STS.32 (the warp's lane
    pairs land 4 rows of 128 apart, one bank: 2 wavefronts each) and read A's 8 values each dot
    step as 2 LDS.128 (one float4 a half-warp: 2 wavefronts). 06: B stored as one contiguous
    STS.128 (4) and read as 2 LDS.128 at a 32-byte stride (8): 8 + 4 + 8 * (4 + 16) = 172.
    07: B stored as 4 STS.32 (lane pairs 64 words apart: 2 each), read as 8 conflict-free LDS.32:
    8 + 8 + 8 * (4 + 8) = 112. 08: B rows padded to 133, stored as 4 STS.32 at a 4-word lane
    stride (4-way: 4 each) and read as 8 LDS.32 at an 8-word stride (4-way): 8 + 16 + 8 * (4 + 32) = 312.
    """
    n = _n(launch)
    loads = _tile_loads(n, 128, 128, 8, (0,), lambda c: _tid(c) // 2, lambda c: _tid(c) % 2 * 4,
                        (0,), lambda c: _tid(c) // 32, lambda c: _tid(c) % 32 * 4, 4)
    return Description(accesses=loads + _c_epilogue(
        n, lambda c: c.block_y * 128 + _tid(c) // 16 * 8, lambda c: c.block_x * 128 + _tid(c) % 16 * 8,
        8, (0, 4), width=4), counts=_shared(n, 128, 8, 8, per_warp_tile))


def _autotuned(launch) -> Description:
    """BM = BN = 128, BK = 16, TM = TN = 8: two float4 of A and two of B per K step, C as float4.

    Shared per warp and K tile: A stored transposed with 8 STS.32 (4 lanes of one row 128 words
    apart: 4-way, 4 each), B with 2 contiguous STS.128 (4 each); each of the 16 dot steps as in
    06: 2 LDS.128 of A (2 each) and 2 of B (8 each): 32 + 8 + 16 * 20 = 360.
    """
    n = _n(launch)
    loads = _tile_loads(n, 128, 128, 16, (0, 64), lambda c: _tid(c) // 4, lambda c: _tid(c) % 4 * 4,
                        (0, 8), lambda c: _tid(c) // 32, lambda c: _tid(c) % 32 * 4, 4)
    return Description(accesses=loads + _c_epilogue(
        n, lambda c: c.block_y * 128 + _tid(c) // 16 * 8, lambda c: c.block_x * 128 + _tid(c) % 16 * 8,
        8, (0, 4), width=4), counts=_shared(n, 128, 8, 16, 360))


def _warptiling(launch) -> Description:
    """BM = BN = 128, BK = 16, warp tile 64x64 (4 subtiles of 64x16), TM = 8, TN = 4, 128 threads:
    four float4 of A and four of B per K step; each lane's C: 8 rows x one float4 per subtile.

    Shared per warp and K tile: A stored transposed with 16 STS.32 (4-way as in 09: 4 each), B
    with 4 contiguous STS.128 (4 each); each of the 16 dot steps reads A's 8 values as 2 LDS.128
    and B's 4 subtile float4 as 4 LDS.128, 20 wavefronts the step on Nsight's count (6 instructions
    of 2-4 each; Nsight gives the step's total, not its split): 64 + 16 + 16 * 20 = 400.
    """
    n = _n(launch)
    loads = _tile_loads(n, 128, 128, 16, (0, 32, 64, 96), lambda c: _tid(c) // 4, lambda c: _tid(c) % 4 * 4,
                        (0, 4, 8, 12), lambda c: _tid(c) // 32, lambda c: _tid(c) % 32 * 4, 4)

    def row(c: Coords):  # warp row (2 of 64 rows), then the lane's 8 rows
        return c.block_y * 128 + _tid(c) // 64 * 64 + _tid(c) % 32 // 4 * 8

    def col(c: Coords):  # warp column (2 of 64), then the lane's float4 of a 16-wide subtile
        return c.block_x * 128 + _tid(c) // 32 % 2 * 64 + _tid(c) % 4 * 4

    return Description(accesses=loads + _c_epilogue(n, row, col, 8, (0, 16, 32, 48), width=4),
                       counts=_shared(n, 128, 4, 16, 400))


KERNELS["01_naive"] = _naive
KERNELS["02_coalesce"] = _coalesce
KERNELS["03_shared_mem_block"] = _shared_mem_block
KERNELS["04_1d_blocktiling"] = _blocktiling_1d
KERNELS["05_2d_blocktiling"] = _blocktiling_2d
KERNELS["06_vectorize"] = _vectorized
KERNELS["07_bank_conflicts"] = lambda launch: _vectorized(launch, 112)
KERNELS["08_bank_extra_col"] = lambda launch: _vectorized(launch, 312)
KERNELS["09_autotuned"] = _autotuned
KERNELS["10_warptiling"] = _warptiling
