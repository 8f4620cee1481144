"""cuda-samples descriptions of the matrix transposes."""

from __future__ import annotations

from roofline.memory import Access, Coords

from .._description import Describe, Description
from ._shapes import side_of

__all__ = ["KERNELS", "through_tile", "transpose_copy", "transpose_naive", "transpose_tiled"]

KERNELS: dict[str, Describe] = {}


# ----------------------------------------------------------------------------- transpose

_TILE = 32  # a block moves a 32x32 tile with 32xR threads: 32 / R rows per thread (R = 16 here)


def _tile_row(c: Coords, block):
    """Row of the tile (of the block index ``block``) this thread handles in loop trip c.loop."""
    return block * _TILE + c.thread_y + c.loop * c.block_dim[1]


def _row_major(block_col, block_row, width):
    """Element (row, column) of a row-major matrix of ``width`` columns, thread-x along the row."""
    return lambda c: _tile_row(c, block_row(c)) * width + block_col(c) * _TILE + c.thread_x


def _bx(c: Coords):
    return c.block_x


def _by(c: Coords):
    return c.block_y


def _rows(launch) -> int:
    """Rows of the tile each thread moves: 32 / blockDim.y."""
    return _TILE // launch.block[1]


def transpose_copy(launch) -> Description:
    """copy / copySharedMem: each thread copies `_rows` elements of its tile, rows ty, ty+R, ..."""
    n = side_of(launch)
    at = _row_major(_bx, _by, n)
    return Description(accesses=(
        Access(array="idata", index=at, loop=_rows(launch)),
        Access(array="odata", index=at, loop=_rows(launch), kind="store"),
    ))


def transpose_tiled(launch) -> Description:
    """transposeCoalesced / NoBankConflicts / CoarseGrained: tile (bx, by) is read by rows and,
    through shared memory, written by rows as tile (by, bx) of the output."""
    n = side_of(launch)
    return Description(accesses=(
        Access(array="idata", index=_row_major(_bx, _by, n), loop=_rows(launch)),
        Access(array="odata", index=_row_major(_by, _bx, n), loop=_rows(launch), kind="store"),
    ))


def _transpose_diagonal(launch) -> Description:
    """transposeDiagonal: as transposeCoalesced, but block (bx, by) takes the tile
    ((bx + by) mod gridDim.x, bx) (square matrices).

    That reordering is a bijection of blocks onto tiles and not affine in the block index; the
    counts do not depend on which block takes which tile, so the tiles are described in the plain
    order (the same accesses, in another block order).
    """
    return transpose_tiled(launch)


def _transpose_fine(launch) -> Description:
    """transposeFineGrained: reads its tile by rows and writes the transposed tile in place
    (the same positions of the output as it read)."""
    return transpose_copy(launch)


def transpose_naive(launch) -> Description:
    """transposeNaive: reads element (row, col) by rows and writes it to (col, row): a warp's
    32 stores land in 32 different rows."""
    n = side_of(launch)

    def out(c: Coords):
        return (c.block_x * _TILE + c.thread_x) * n + _tile_row(c, c.block_y)

    return Description(accesses=(
        Access(array="idata", index=_row_major(_bx, _by, n), loop=_rows(launch)),
        Access(array="odata", index=out, loop=_rows(launch), kind="store"),
    ))


def through_tile(describe, column_ways: int):
    """A tiled kernel: each warp stores `_rows` rows of the 32x32 tile (conflict-free) and, after
    one barrier, loads as many rows or columns of it: a column of the unpadded tile is 32 words
    in one bank (32 wavefronts), of the padded (33-word rows) tile or a row, one."""
    def described(launch) -> Description:
        d = describe(launch)
        return Description(accesses=d.accesses, counts={
            "shared_wavefronts": launch.warps * _rows(launch) * (1 + column_ways),
            "barriers_per_block": 1,
        })
    return described


KERNELS["transpose.copy"] = transpose_copy
KERNELS["transpose.copySharedMem"] = through_tile(transpose_copy, 1)
KERNELS["transpose.transposeCoalesced"] = through_tile(transpose_tiled, 32)
KERNELS["transpose.transposeNoBankConflicts"] = through_tile(transpose_tiled, 1)
KERNELS["transpose.transposeCoarseGrained"] = through_tile(transpose_tiled, 1)
KERNELS["transpose.transposeDiagonal"] = through_tile(_transpose_diagonal, 1)
KERNELS["transpose.transposeFineGrained"] = through_tile(_transpose_fine, 1)
KERNELS["transpose.transposeNaive"] = transpose_naive
