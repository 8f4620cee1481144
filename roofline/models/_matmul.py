"""Matrix multiplication C = A B (row-major float32): naive and shared-memory tiled (PMPP ch.3, 5), and
register tiled (each thread a block of outputs, as cuBLAS-style kernels do)."""

from __future__ import annotations

import numpy as np

from occupancy import Launch

from .._errors import RooflineError
from .._kernel import Kernel
from .._traffic import Access, Coords, traffic
from ._common import (
    FLOAT_BYTES,
    blocks_for,
    check_block_2d,
    check_elements,
    check_grid,
    check_int,
)
from ._traffic import SharedAccess, shared_traffic

__all__ = ["matmul_naive", "matmul_register_tiled", "matmul_tiled"]


def _sizes(m: int, k: int | None, n: int | None) -> tuple[int, int, int]:
    m = check_int("m", m)
    k = m if k is None else check_int("k", k)
    n = m if n is None else check_int("n", n)
    check_elements(f"m={m} x k={k} (A)", m * k)
    check_elements(f"k={k} x n={n} (B)", k * n)
    check_elements(f"m={m} x n={n} (C)", m * n)
    return m, k, n


def matmul_naive(
    m: int, k: int | None = None, n: int | None = None, *, block: tuple[int, int] = (16, 16)
) -> Kernel:
    """One thread per output element, operands read straight from global memory (PMPP ch.3).

    A is m x k, B is k x n, C is m x n, all row-major float32::

        int row = blockIdx.y * blockDim.y + threadIdx.y;
        int col = blockIdx.x * blockDim.x + threadIdx.x;
        if (row < m && col < n) {
            float sum = 0.0f;
            for (int p = 0; p < k; ++p) sum += A[row * k + p] * B[p * n + col];
            C[row * n + col] = sum;
        }

    Launch: ``grid = (ceil(n / bx), ceil(m / by))``, ``block = (bx, by)`` = (16, 16) by
    default. flops = ``2 m n k``; loads ``8 m n k`` bytes (2 flops per 8 bytes: 0.25
    flop/byte), stores ``4 m n`` (which lowers the ratio by a factor ``2k / (2k + 1)``).
    DRAM: each matrix once (compulsory; real traffic is higher when A's row panels and B
    do not stay in L2).

    Parameters
    ----------
    m : int
        Rows of A and C.
    k : int, optional
        Columns of A, rows of B (default m).
    n : int, optional
        Columns of B and C (default m).
    block : tuple of int
        blockDim (x, y).

    Returns
    -------
    roofline.Kernel

    Examples
    --------
    >>> from roofline import models
    >>> models.matmul_naive(4096).flops == 2 * 4096**3
    True
    """
    m, k, n = _sizes(m, k, n)
    bx, by = check_block_2d(block)

    def inside(c: Coords) -> np.ndarray:
        return (c.y < m) & (c.x < n)

    accesses = [
        Access(array="A", index=lambda c: c.y * k + c.loop, guard=inside, loop=k),
        Access(array="B", index=lambda c: c.loop * n + c.x, guard=inside, loop=k),
        Access(array="C", index=lambda c: c.y * n + c.x, guard=inside, kind="store"),
    ]
    grid = (blocks_for(n, bx), blocks_for(m, by))
    check_grid(grid, (f"n={n}", f"m={m}"))
    return traffic(grid, (bx, by), accesses).kernel(
        name="matmul_naive",
        parameters={"m": m, "k": k, "n": n, "block": [bx, by]},
        formula="C[row*n+col] = sum_p A[row*k+p] * B[p*n+col]  (if row < m && col < n)",
        precision="fp32",
        element_bytes=FLOAT_BYTES,
        flops=2 * m * n * k,
        shared_bytes=0,
        launch=Launch(grid=grid, block=(bx, by)),
    )


def matmul_tiled(
    m: int, k: int | None = None, n: int | None = None, *, tile: int = 16
) -> Kernel:
    """Shared-memory tiled matrix multiplication with boundary checks (PMPP ch.5).

    A is m x k, B is k x n, C is m x n, row-major float32; ``T = tile``::

        __shared__ float As[T][T], Bs[T][T];
        int tx = threadIdx.x, ty = threadIdx.y;
        int row = blockIdx.y * T + ty, col = blockIdx.x * T + tx;
        float sum = 0.0f;
        for (int ph = 0; ph < (k + T - 1) / T; ++ph) {
            As[ty][tx] = (row < m && ph * T + tx < k) ? A[row * k + ph * T + tx] : 0.0f;
            Bs[ty][tx] = (ph * T + ty < k && col < n) ? B[(ph * T + ty) * n + col] : 0.0f;
            __syncthreads();
            for (int q = 0; q < T; ++q) sum += As[ty][q] * Bs[q][tx];
            __syncthreads();
        }
        if (row < m && col < n) C[row * n + col] = sum;

    Launch: ``grid = (ceil(n / T), ceil(m / T))``, ``block = (T, T)``, static shared memory
    ``2 T^2 4`` bytes. flops = ``2 m n k`` (useful work; padded tiles' FMAs on zeros are not
    counted). Each element of A is loaded once per block column and each element of B once
    per block row: loads ``4 (m k ceil(n/T) + k n ceil(m/T))`` bytes, so the ratio is
    0.25 T flop/byte for full tiles. Shared traffic: 2 stores and 2T loads per thread per
    phase (``shared_bytes``); all conflict free.

    Parameters
    ----------
    m : int
        Rows of A and C.
    k : int, optional
        Columns of A, rows of B (default m).
    n : int, optional
        Columns of B and C (default m).
    tile : int
        Tile width T, 1 to 32.

    Returns
    -------
    roofline.Kernel

    Examples
    --------
    >>> from roofline import models
    >>> t = models.matmul_tiled(4096, tile=32)
    >>> round(t.arithmetic_intensity / models.matmul_naive(4096).arithmetic_intensity)
    32
    """
    m, k, n = _sizes(m, k, n)
    t = check_int("tile", tile, 1, 32)
    phases = blocks_for(k, t)

    def a_column(c: Coords) -> np.ndarray:
        return c.loop * t + c.thread_x

    def b_line(c: Coords) -> np.ndarray:
        return c.loop * t + c.thread_y

    accesses = [
        Access(array="A", index=lambda c: c.y * k + a_column(c), guard=lambda c: (c.y < m) & (a_column(c) < k),
               loop=phases),
        Access(array="B", index=lambda c: b_line(c) * n + c.x, guard=lambda c: (b_line(c) < k) & (c.x < n),
               loop=phases),
        Access(array="C", index=lambda c: c.y * n + c.x, guard=lambda c: (c.y < m) & (c.x < n), kind="store"),
    ]
    grid = (blocks_for(n, t), blocks_for(m, t))
    check_grid(grid, (f"n={n}", f"m={m}"))
    counts = traffic(grid, (t, t), accesses)

    b_base = t * t * FLOAT_BYTES
    shared = [
        SharedAccess(lambda tx, ty: (ty * t + tx) * FLOAT_BYTES),
        SharedAccess(lambda tx, ty: b_base + (ty * t + tx) * FLOAT_BYTES),
    ]
    for q in range(t):
        shared += [
            SharedAccess(lambda tx, ty, q=q: (ty * t + q) * FLOAT_BYTES + 0 * tx),
            SharedAccess(lambda tx, ty, q=q: b_base + (q * t + tx) * FLOAT_BYTES + 0 * ty),
        ]
    block_bytes, block_wavefronts, ways = shared_traffic((t, t), shared)
    runs = grid[0] * grid[1] * phases
    return counts.kernel(
        name="matmul_tiled",
        parameters={"m": m, "k": k, "n": n, "tile": t},
        formula="C = A B with T x T tiles of A and B staged in shared memory",
        precision="fp32",
        element_bytes=FLOAT_BYTES,
        flops=2 * m * n * k,
        shared_wavefronts=runs * block_wavefronts,
        shared_bytes=runs * block_bytes,
        bank_conflict_ways=ways,
        launch=Launch(grid=grid, block=(t, t), static_shared_memory=2 * t * t * FLOAT_BYTES),
    )


# The register-tiled kernel's fixed shape (validate/kernels/suite.cu): a 128 x 128 tile of C per
# block of 16 x 16 threads, 8 x 8 outputs per thread, k in steps of 8.
_RT_TILE, _RT_STEP, _RT_THREAD = 128, 8, 8
_RT_BLOCK = (_RT_TILE // _RT_THREAD, _RT_TILE // _RT_THREAD)


def matmul_register_tiled(m: int, k: int | None = None, n: int | None = None) -> Kernel:
    """Register-tiled SGEMM: each thread computes an 8 x 8 block of C in registers.

    A is m x k, B is k x n, C is m x n, row-major float32. A block of 16 x 16 threads
    computes a 128 x 128 tile of C, stepping through k 8 at a time: each thread loads one
    float4 of A's 128 x 8 tile (stored transposed in shared memory) and one of B's 8 x 128
    tile, then each of the 8 steps reads 8 values of each tile from shared memory into
    registers and does 64 FMAs on them; C is written as float4 rows::

        __shared__ float As[8][128], Bs[8][128];   // A's tile transposed, B's tile
        float acc[8][8] = {};
        for (int k0 = 0; k0 < k; k0 += 8) {
            /* one float4 of A -> As (4 scalar stores), one float4 of B -> Bs */  __syncthreads();
            for (kk < 8) { a[i] = As[kk][ty*8 + i]; b[j] = Bs[kk][tx*8 + j]; acc[i][j] += a[i] * b[j]; }
            __syncthreads();
        }
        /* 16 float4 stores of acc to C */

    Launch: ``grid = (n / 128, m / 128)``, ``block = (16, 16)``, static shared memory
    8 KiB. flops = ``2 m n k``; each block reads a 128-row panel of A and a 128-column
    panel of B, so loads are ``4 k (m n / 128 + m n / 128)`` bytes: 32 flop per loaded
    byte, 8 times the 16 x 16 tiled kernel. The 64 accumulators need about 100 registers
    per thread, so registers, not warps, cap the resident blocks (``occupancy.calculate``).

    Parameters
    ----------
    m : int
        Rows of A and C, a multiple of 128.
    k : int, optional
        Columns of A, rows of B (default m), a multiple of 8.
    n : int, optional
        Columns of B and C (default m), a multiple of 128.

    Returns
    -------
    roofline.Kernel

    Examples
    --------
    >>> from roofline import models
    >>> r = models.matmul_register_tiled(4096)
    >>> round(r.flops / r.count("requested_bytes")), r.launch.block
    (32, (16, 16, 1))
    """
    m, k, n = _sizes(m, k, n)
    for name, value, multiple in (("m", m, _RT_TILE), ("k", k, _RT_STEP), ("n", n, _RT_TILE)):
        if value % multiple:
            raise RooflineError(f"matmul_register_tiled: {name}={value} must be a multiple of {multiple} "
                                "(the kernel loads and stores whole float4 tiles)")
    steps, vec = k // _RT_STEP, 4  # float4: 4 floats per access

    def tid(c: Coords) -> np.ndarray:
        return c.thread_y * _RT_BLOCK[0] + c.thread_x

    def c_row(i: int, half: int) -> Access:
        def index(c: Coords) -> np.ndarray:
            row = c.block_y * _RT_TILE + c.thread_y * _RT_THREAD + i
            return row * (n // vec) + c.block_x * (_RT_TILE // vec) + c.thread_x * 2 + half
        return Access(array="C", index=index, kind="store", element_bytes=vec * FLOAT_BYTES)

    accesses = [
        # A[(row0 + tid / 2) * k + k0 + (tid % 2) * 4] as a float4
        Access(array="A", index=lambda c: (c.block_y * _RT_TILE + tid(c) // 2) * (k // vec) + c.loop * 2 + tid(c) % 2,
               loop=steps, element_bytes=vec * FLOAT_BYTES),
        # B[(k0 + tid / 32) * n + col0 + (tid % 32) * 4] as a float4
        Access(array="B", index=lambda c: (c.loop * _RT_STEP + tid(c) // 32) * (n // vec)
               + c.block_x * (_RT_TILE // vec) + tid(c) % 32, loop=steps, element_bytes=vec * FLOAT_BYTES),
    ] + [c_row(i, half) for i in range(_RT_THREAD) for half in (0, 1)]
    grid = (n // _RT_TILE, m // _RT_TILE)
    check_grid(grid, (f"n={n}", f"m={m}"))
    counts = traffic(grid, _RT_BLOCK, accesses)

    b_base = _RT_STEP * _RT_TILE * FLOAT_BYTES
    width = _RT_BLOCK[0]

    def a_store(q: int):
        return lambda tx, ty: ((((ty * width + tx) % 2) * 4 + q) * _RT_TILE + (ty * width + tx) // 2) * FLOAT_BYTES

    shared = [SharedAccess(a_store(q)) for q in range(4)]
    shared.append(SharedAccess(lambda tx, ty: b_base + (((ty * width + tx) // 32) * _RT_TILE
                                                        + ((ty * width + tx) % 32) * 4) * FLOAT_BYTES,
                               access_bytes=vec * FLOAT_BYTES))
    for kk in range(_RT_STEP):
        for i in range(_RT_THREAD):
            shared += [
                SharedAccess(lambda tx, ty, kk=kk, i=i: (kk * _RT_TILE + ty * _RT_THREAD + i) * FLOAT_BYTES + 0 * tx),
                SharedAccess(lambda tx, ty, kk=kk, i=i: b_base + (kk * _RT_TILE + tx * _RT_THREAD + i) * FLOAT_BYTES
                             + 0 * ty),
            ]
    block_bytes, block_wavefronts, ways = shared_traffic(_RT_BLOCK, shared)
    runs = grid[0] * grid[1] * steps
    return counts.kernel(
        name="matmul_register_tiled",
        parameters={"m": m, "k": k, "n": n},
        formula="C = A B, 128 x 128 tiles per block, 8 x 8 outputs per thread in registers",
        precision="fp32",
        element_bytes=FLOAT_BYTES,
        flops=2 * m * n * k,
        shared_wavefronts=runs * block_wavefronts,
        shared_bytes=runs * block_bytes,
        bank_conflict_ways=ways,
        launch=Launch(grid=grid, block=_RT_BLOCK, static_shared_memory=2 * _RT_STEP * _RT_TILE * FLOAT_BYTES),
    )
