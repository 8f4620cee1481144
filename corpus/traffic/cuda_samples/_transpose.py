"""cuda-samples descriptions of the matrix transposes."""

from __future__ import annotations

from roofline.memory import Access, Coords

from .._description import Describe, Description
from ._shapes import side_of

__all__ = ["KERNELS"]

KERNELS: dict[str, Describe] = {}


# ----------------------------------------------------------------------------- transpose

_TILE = 32  # a block moves a 32x32 tile with 32x16 threads: two rows per thread


def _tile_row(c: Coords, block):
    """Row of the tile (of the block index ``block``) this thread handles in loop trip c.loop."""
    return block * _TILE + c.thread_y + c.loop * (_TILE // 2)


def _row_major(block_col, block_row, width):
    """Element (row, column) of a row-major matrix of ``width`` columns, thread-x along the row."""
    return lambda c: _tile_row(c, block_row(c)) * width + block_col(c) * _TILE + c.thread_x


def _bx(c: Coords):
    return c.block_x


def _by(c: Coords):
    return c.block_y


def _transpose_copy(launch) -> Description:
    """copy / copySharedMem: each thread copies two elements of its tile, rows ty and ty+16."""
    n = side_of(launch)
    at = _row_major(_bx, _by, n)
    return Description(accesses=(
        Access(array="idata", index=at, loop=2),
        Access(array="odata", index=at, loop=2, kind="store"),
    ))


def _transpose_tiled(launch) -> Description:
    """transposeCoalesced / NoBankConflicts / CoarseGrained: tile (bx, by) is read by rows and,
    through shared memory, written by rows as tile (by, bx) of the output."""
    n = side_of(launch)
    return Description(accesses=(
        Access(array="idata", index=_row_major(_bx, _by, n), loop=2),
        Access(array="odata", index=_row_major(_by, _bx, n), loop=2, kind="store"),
    ))


def _transpose_diagonal(launch) -> Description:
    """transposeDiagonal: as transposeCoalesced, but block (bx, by) takes the tile
    ((bx + by) mod gridDim.x, bx) (square matrices).

    That reordering is a bijection of blocks onto tiles and not affine in the block index; the
    counts do not depend on which block takes which tile, so the tiles are described in the plain
    order (the same accesses, in another block order).
    """
    return _transpose_tiled(launch)


def _transpose_fine(launch) -> Description:
    """transposeFineGrained: reads its tile by rows and writes the transposed tile in place
    (the same positions of the output as it read)."""
    return _transpose_copy(launch)


def _transpose_naive(launch) -> Description:
    """transposeNaive: reads element (row, col) by rows and writes it to (col, row): a warp's
    32 stores land in 32 different rows."""
    n = side_of(launch)

    def out(c: Coords):
        return (c.block_x * _TILE + c.thread_x) * n + _tile_row(c, c.block_y)

    return Description(accesses=(
        Access(array="idata", index=_row_major(_bx, _by, n), loop=2),
        Access(array="odata", index=out, loop=2, kind="store"),
    ))


def _through_tile(describe, column_ways: int):
    """A tiled kernel: each warp stores two rows of the 32x32 tile (conflict-free) and, after
    one barrier, loads two rows or columns of it: a column of the unpadded tile is 32 words in
    one bank (32 wavefronts), of the padded (33-word rows) tile or a row, one."""
    def described(launch) -> Description:
        d = describe(launch)
        return Description(accesses=d.accesses, counts={
            "shared_wavefronts": launch.warps * 2 * (1 + column_ways),
            "barriers_per_block": 1,
        })
    return described


KERNELS["transpose.copy"] = _transpose_copy
KERNELS["transpose.copySharedMem"] = _through_tile(_transpose_copy, 1)
KERNELS["transpose.transposeCoalesced"] = _through_tile(_transpose_tiled, 32)
KERNELS["transpose.transposeNoBankConflicts"] = _through_tile(_transpose_tiled, 1)
KERNELS["transpose.transposeCoarseGrained"] = _through_tile(_transpose_tiled, 1)
KERNELS["transpose.transposeDiagonal"] = _through_tile(_transpose_diagonal, 1)
KERNELS["transpose.transposeFineGrained"] = _through_tile(_transpose_fine, 1)
KERNELS["transpose.transposeNaive"] = _transpose_naive
