"""Matrix multiplication C = A B (row-major float32), naive and shared-memory tiled (PMPP ch.3, 5)."""

from __future__ import annotations

import numpy as np

from occupancy import Launch

from .._kernel import Kernel
from .._traffic import Access, Coords, traffic
from ._common import (
    FLOAT_BYTES,
    SHARED_WAVEFRONT_BYTES,
    blocks_for,
    check_block_2d,
    check_elements,
    check_grid,
    check_int,
)
from ._traffic import SharedAccess, shared_traffic

__all__ = ["matmul_naive", "matmul_tiled"]


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
        l1_bytes=counts.l1_global_bytes + runs * block_wavefronts * SHARED_WAVEFRONT_BYTES,
        shared_bytes=runs * block_bytes,
        bank_conflict_ways=ways,
        launch=Launch(grid=grid, block=(t, t), static_shared_memory=2 * t * t * FLOAT_BYTES),
    )
