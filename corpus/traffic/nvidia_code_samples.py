"""Access descriptions of NVIDIA code-samples' kernels (see the package docstring): the CUDA C++
blog series' transposes, coalescing tests and finite differences.

Read from the project's source at the corpus's commit (``series/cuda-cpp/transpose``,
``coalescing-global``, ``finite-difference``). The transposes are cuda-samples' with 32x8
blocks (TILE_DIM 32, BLOCK_ROWS 8: four rows per thread), so they share its descriptions.
"""

from __future__ import annotations

from roofline.memory import Access, Coords

from ._description import Describe, Description, tokens
from .cuda_samples._transpose import through_tile, transpose_copy, transpose_naive, transpose_tiled

__all__ = ["KERNELS"]

KERNELS: dict[str, Describe] = {}


# ----------------------------------------------------------------------------- transpose

KERNELS["transpose.copy"] = transpose_copy
KERNELS["transpose.copySharedMem"] = through_tile(transpose_copy, 1)
KERNELS["transpose.transposeNaive"] = transpose_naive
KERNELS["transpose.transposeCoalesced"] = through_tile(transpose_tiled, 32)
KERNELS["transpose.transposeNoBankConflicts"] = through_tile(transpose_tiled, 1)


# ----------------------------------------------------------------------------- coalescing


def _in_place(element_bytes: int, step: str):
    """offset<T> / stride<T>: thread i adds 1 to ``a[i + s]`` (offset) or ``a[i s]`` (stride),
    a load and a store of the same element; ``s`` is the shape's offset or stride."""
    def described(launch) -> Description:
        s = int(tokens(launch.shape)[step])

        def at(c: Coords):
            return c.x + s if step == "offset" else c.x * s

        return Description(accesses=(
            Access(array="a", index=at, element_bytes=element_bytes),
            Access(array="a", index=at, element_bytes=element_bytes, kind="store"),
        ))
    return described


KERNELS["coalescing.offset.float"] = _in_place(4, "offset")
KERNELS["coalescing.offset.double"] = _in_place(8, "offset")
KERNELS["coalescing.stride.float"] = _in_place(4, "stride")
KERNELS["coalescing.stride.double"] = _in_place(8, "stride")


# ----------------------------------------------------------------------------- finite differences

#: The grid's points per side (mx = my = mz, fixed at compile time) and the pencils of the
#: lPencils kernels.
_SIDE = 64
_LONG_PENCILS = 32
#: Shared accesses of the 8-point stencil: 8 loads (s_f at +-1 .. +-4), each one wavefront
#: (32 consecutive words, or 4 x 8 words of one bank-free 32-word block); one store of f.
_STENCIL_LOADS = 8
#: The periodic images: 2 loads and 2 stores by the threads of the first 4 points (a branch:
#: only warps holding such threads issue them).
_HALO = 4


def _points(index, loop: int = 1) -> tuple[Access, ...]:
    """Each thread loads ``f`` and stores ``df`` at ``index`` (``loop`` points per thread)."""
    return (Access(array="f", index=index, loop=loop), Access(array="df", index=index, loop=loop, kind="store"))


def _counts(launch, per_point: int, halo_warps_per_block: float, points: int = 1) -> dict:
    """Each warp stores and stencils ``points`` points per thread; ``halo_warps_per_block`` warps
    a block fill the periodic images (``points`` times in the lPencils forms of x, once in y and z)."""
    return {"shared_wavefronts": launch.warps * points * per_point
            + launch.blocks * halo_warps_per_block * _HALO,
            "barriers_per_block": 2}


def _derivative_x(launch) -> Description:
    """derivative_x: block (64, 4) over (i, j), grid (16, 64) over (j / 4, k): thread (i, j, k)
    loads f and stores df at ``k 64^2 + j 64 + i``; a warp is 32 i of one j row. The first warp
    of each row (i < 4) fills the images."""
    def at(c: Coords):
        return c.block_y * _SIDE * _SIDE + (c.block_x * c.block_dim[1] + c.thread_y) * _SIDE + c.thread_x
    return Description(accesses=_points(at), counts=_counts(launch, 1 + _STENCIL_LOADS, launch.block[1]))


def _derivative_x_pencils(launch) -> Description:
    """derivative_x_lPencils: block (64, 4), grid (2, 64): each thread the 8 rows
    ``sj = ty + 4 loop`` of its block's 32 pencils; the first warp of each row of threads fills
    the images of its 8 rows."""
    rows = launch.block[1]
    trips = _LONG_PENCILS // rows

    def at(c: Coords):
        return c.block_y * _SIDE * _SIDE + (c.block_x * _LONG_PENCILS + c.thread_y + rows * c.loop) * _SIDE + c.thread_x

    return Description(accesses=_points(at, trips),
                       counts=_counts(launch, 1 + _STENCIL_LOADS, rows * trips, points=trips))


def _derivative_y(launch) -> Description:
    """derivative_y: block (4, 64) over (i, j), grid (16, 64) over (i / 4, k): f and df at
    ``k 64^2 + j 64 + i`` (a warp: 8 rows of 16 bytes); warp 0 (j < 4) fills the images."""
    def at(c: Coords):
        return c.block_y * _SIDE * _SIDE + c.thread_y * _SIDE + c.x
    return Description(accesses=_points(at), counts=_counts(launch, 1 + _STENCIL_LOADS, 1))


def _derivative_z(launch) -> Description:
    """derivative_z: block (4, 64) over (i, k), grid (16, 64) over (i / 4, j): f and df at
    ``k 64^2 + j 64 + i`` (a warp: 8 planes of 16 bytes); warp 0 (k < 4) fills the images."""
    def at(c: Coords):
        return c.thread_y * _SIDE * _SIDE + c.block_y * _SIDE + c.x
    return Description(accesses=_points(at), counts=_counts(launch, 1 + _STENCIL_LOADS, 1))


def _pencils_yz(launch, along_y: bool) -> Description:
    """derivative_y/z_lPencils: block (32, 8), grid (2, 64): i = 32 bx + tx; each thread the 8
    rows (y) or planes (z) ``ty + 8 loop``; a warp is 32 i of one row. Warps 0-3 (ty < 4) fill
    the images once."""
    rows = launch.block[1]
    trips = _SIDE // rows

    def at(c: Coords):
        step = c.thread_y + rows * c.loop
        if along_y:
            return c.block_y * _SIDE * _SIDE + step * _SIDE + c.x
        return step * _SIDE * _SIDE + c.block_y * _SIDE + c.x

    # the 8 stores and 8 x 8 stencil loads a warp, and the images: 4 warps a block
    return Description(accesses=_points(at, trips),
                       counts=_counts(launch, 1 + _STENCIL_LOADS, 4, points=trips))


KERNELS["finite-difference.derivative_x"] = _derivative_x
KERNELS["finite-difference.derivative_x_lPencils"] = _derivative_x_pencils
KERNELS["finite-difference.derivative_y"] = _derivative_y
KERNELS["finite-difference.derivative_y_lPencils"] = lambda launch: _pencils_yz(launch, True)
KERNELS["finite-difference.derivative_z"] = _derivative_z
KERNELS["finite-difference.derivative_z_lPencils"] = lambda launch: _pencils_yz(launch, False)
