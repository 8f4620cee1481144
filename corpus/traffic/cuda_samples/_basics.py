"""cuda-samples descriptions: vectorAdd, matrixMul, BlackScholes, convolutionSeparable, the WMMA GEMMs."""

from __future__ import annotations

from roofline.memory import Access, Coords

from .._description import Describe, Description
from ._shapes import image_of, lane_of, n_of, side_of

__all__ = ["KERNELS"]

KERNELS: dict[str, Describe] = {}


# ----------------------------------------------------------------------------- introduction


def _vector_add(launch) -> Description:
    """vectorAdd: thread i adds A[i] and B[i] into C[i]."""
    n = n_of(launch)

    def inside(c: Coords):
        return c.x < n

    return Description(accesses=(
        Access(array="A", index=lambda c: c.x, guard=inside),
        Access(array="B", index=lambda c: c.x, guard=inside),
        Access(array="C", index=lambda c: c.x, guard=inside, kind="store"),
    ))


def _matrix_mul(launch) -> Description:
    """matrixMul: a block of BSxBS threads walks A's block row and B's block column tile by tile
    (one element of each per thread per tile), then writes its element of C."""
    n, bs = side_of(launch), launch.block[0]
    return Description(accesses=(
        Access(array="A", index=lambda c: c.y * n + c.loop * bs + c.thread_x, loop=n // bs),
        Access(array="B", index=lambda c: (c.loop * bs + c.thread_y) * n + c.x, loop=n // bs),
        Access(array="C", index=lambda c: c.y * n + c.x, kind="store"),
    ), counts={
        # per warp and tile: 2 stores (As, Bs; 32 consecutive words), BS loads of Bs[k][tx]
        # (one wavefront: at most 32 distinct consecutive words) and BS/4 LDS.128 of the As row
        # (the row is vectorised; a 16-byte load serves a half-warp per wavefront: 2 each)
        "shared_wavefronts": launch.warps * (n // bs) * (2 + bs + 2 * (bs // 4)),
        "barriers_per_block": 2 * (n // bs),
    })


KERNELS["vectorAdd"] = _vector_add
KERNELS["matrixMul.16"] = _matrix_mul
KERNELS["matrixMul.32"] = _matrix_mul


# ----------------------------------------------------------------------------- domain specific


def _black_scholes(launch) -> Description:
    """BlackScholes: thread i prices options 2i and 2i+1 (float2 loads of price, strike and
    years; float2 stores of call and put), for i < n/2."""
    half = n_of(launch) // 2

    def inside(c: Coords):
        return c.x < half

    def at(c: Coords):
        return c.x

    return Description(accesses=(
        *(Access(array=a, index=at, guard=inside, element_bytes=8) for a in ("price", "strike", "years")),
        *(Access(array=a, index=at, guard=inside, element_bytes=8, kind="store") for a in ("call", "put")),
    ))


KERNELS["BlackScholes"] = _black_scholes


# ----------------------------------------------------------------------------- convolutionSeparable

_STEPS = 8  # result steps per thread (and one halo step each side, which covers the radius of 8)
_RADIUS = 8  # the filter's radius (17 taps)


def _separable(launch, along_rows: bool) -> Description:
    """One pass of the separable convolution along rows (`along_rows`: a 16x4 block, 8 segments
    of 16 pixels) or columns (a 16x8 block, 8 segments of 8 rows): each thread one pixel per
    segment, loading them plus a halo segment on each side (halos outside the image skipped)."""
    w, h = image_of(launch)
    step_size = launch.block[0] if along_rows else launch.block[1]  # 16 along a row, 8 down a column
    extent = w if along_rows else h

    def base(c: Coords):
        return (c.block_x * _STEPS - 1) * step_size + c.thread_x if along_rows else \
            (c.block_y * _STEPS - 1) * step_size + c.thread_y

    def at(c: Coords, step):
        return c.y * w + base(c) + step * step_size if along_rows else (base(c) + step * step_size) * w + c.x

    def main(c: Coords):
        return at(c, c.loop + 1)

    return Description(accesses=(
        Access(array="src", index=main, loop=_STEPS),
        Access(array="src", index=lambda c: at(c, 0), guard=lambda c: base(c) >= 0),
        Access(array="src", index=lambda c: at(c, _STEPS + 1),
               guard=lambda c: extent - base(c) > (_STEPS + 1) * step_size),
        Access(array="dst", index=main, loop=_STEPS, kind="store"),
    ), counts={
        # every shared access is 2-way: along rows a warp is two rows of the tile, 160 words apart
        # (same banks); down columns the tile is stored by columns (81 words per x) and a warp is
        # 16 x by 2 y, x * 81 + y putting two lanes in one bank. Each thread stores its 10 pixels
        # and loads the (8 - 1) x step + 2 x radius + 1 distinct taps its 8 outputs need (129
        # along rows, 73 down columns; the compiler loads each once).
        "shared_wavefronts": launch.warps * 2 * ((_STEPS + 2) + ((_STEPS - 1) * step_size + 2 * _RADIUS + 1)),
        "barriers_per_block": 1,
    })


def _convolution_rows(launch) -> Description:
    """convolutionRows (`_separable` along rows)."""
    return _separable(launch, along_rows=True)


def _convolution_columns(launch) -> Description:
    """convolutionColumns (`_separable` down columns)."""
    return _separable(launch, along_rows=False)


KERNELS["convolutionSeparable.rows"] = _convolution_rows
KERNELS["convolutionSeparable.columns"] = _convolution_columns


# ----------------------------------------------------------------------------- tensor-core GEMMs


def _wmma_gemm(launch, k_step: int) -> Description:
    """simple_wmma_gemm: each warp computes a 16x16 tile of D = A*B + C (A row-major, B stored by
    columns, both of n x n), stepping k by ``k_step``.

    The compiled fragment loads are 4-byte loads in the mma.sync register layout: each load
    instruction reads 8 rows (of A, or columns of B) x 16 bytes: lane l takes row ``l/4`` (or
    that row + 8) and the ``l%4``-th 4-byte word of its 16-byte piece. fp16 (k_step 16): a word is
    two halves, 4 words per row; tf32 (k_step 8): one float each. C and D move in 8-byte pairs,
    8 rows x 32 bytes per instruction, 4 instructions per warp.
    """
    n = side_of(launch)
    per_word = 2 if k_step == 16 else 1  # elements of A/B per 4-byte word
    row_words = n // per_word           # words per row of A (and per column of B)

    def warp_m(c: Coords):
        return c.x // 32

    def warp_n(c: Coords):
        return c.y

    def group(c: Coords):
        return lane_of(c) // 4

    def quad(c: Coords):
        return c.thread_x % 4

    def fragment(rows, j: int):
        """4-byte words of rows x k: instruction j takes rows +8*(j%2) and words +4*(j//2) (fp16)
        or +4 floats (tf32): 8 rows x 4 consecutive words."""
        def index(c: Coords):
            row = rows(c) * 16 + group(c) + 8 * (j % 2)
            word = c.loop * (k_step // per_word) + quad(c) + 4 * (j // 2)
            return row * row_words + word
        return index

    def tile(j: int):
        """8-byte pairs of the 16x16 float tile of C or D: rows +8*(j%2), columns +8*(j//2)."""
        def index(c: Coords):
            row = warp_m(c) * 16 + group(c) + 8 * (j % 2)
            column = warp_n(c) * 16 + 8 * (j // 2) + 2 * quad(c)
            return (row * n + column) // 2
        return index

    loop = n // k_step
    return Description(accesses=(
        *(Access(array="a", index=fragment(warp_m, j), loop=loop) for j in range(4)),
        *(Access(array="b", index=fragment(warp_n, j), loop=loop) for j in range(4)),
        *(Access(array="c", index=tile(j), element_bytes=8) for j in range(4)),
        *(Access(array="d", index=tile(j), element_bytes=8, kind="store") for j in range(4)),
    ))


KERNELS["cudaTensorCoreGemm.simple_wmma_gemm"] = lambda launch: _wmma_gemm(launch, 16)
KERNELS["tf32TensorCoreGemm.simple_wmma_tf32gemm"] = lambda launch: _wmma_gemm(launch, 8)
