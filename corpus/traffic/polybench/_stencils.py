"""PolyBench descriptions of the stencils: 2DCONV, 3DCONV, JACOBI1D, JACOBI2D, FDTD-2D."""

from __future__ import annotations

from roofline.memory import Access, Coords

from .._description import Describe, Description, defines
from ._helpers import step_argument

__all__ = ["KERNELS"]

KERNELS: dict[str, Describe] = {}


# ----------------------------------------------------------------------------- stencils


def _conv2d(launch) -> Description:
    """2DCONV: thread (i, j) inside the border writes B[i][j] from A's 3x3 neighbourhood (9 loads)."""
    n = defines(launch.build_defines)
    ni, nj = n["NI"], n["NJ"]

    def inside(c: Coords):
        return (c.y > 0) & (c.y < ni - 1) & (c.x > 0) & (c.x < nj - 1)

    def a(di: int, dj: int):
        return Access(array="A", index=lambda c: (c.y + di) * nj + c.x + dj, guard=inside)

    return Description(accesses=(
        *(a(di, dj) for di in (-1, 0, 1) for dj in (-1, 0, 1)),
        Access(array="B", index=lambda c: c.y * nj + c.x, guard=inside, kind="store"),
    ))


#: 3DCONV's taps (di, dj, dk) as its source writes them, those it repeats (c11/c21/c31 all read
#: A[i-1][j-1][k-1], c13/c23/c33 A[i+1][j-1][k-1]) loaded once: nothing is stored between them.
_CONV3D_TAPS = ((-1, -1, -1), (1, -1, -1), (0, -1, 0), (0, 0, 0), (0, 1, 0), (-1, -1, 1), (1, -1, 1),
                (-1, 0, 1), (1, 0, 1), (-1, 1, 1), (1, 1, 1))


def _conv3d(launch) -> Description:
    """3DCONV: one launch per i-plane (the corpus passes i = NI / 2); thread (j, k) = (y, x) inside
    the border writes B[i][j][k] from 11 distinct elements of A around it."""
    n = defines(launch.build_defines)
    ni, nj, nk = n["NI"], n["NJ"], n["NK"]
    i = step_argument(launch, "i", ni // 2)

    def inside(c: Coords):
        inner = (c.y > 0) & (c.y < nj - 1) & (c.x > 0) & (c.x < nk - 1)
        return inner & (0 < i < ni - 1)

    def a(di: int, dj: int, dk: int):
        return Access(array="A", index=lambda c: (i + di) * nk * nj + (c.y + dj) * nk + c.x + dk, guard=inside)

    return Description(accesses=(
        *(a(*tap) for tap in _CONV3D_TAPS),
        Access(array="B", index=lambda c: i * nk * nj + c.y * nk + c.x, guard=inside, kind="store"),
    ))


def _jacobi1d(launch) -> Description:
    """JACOBI1D kernel 1: thread i inside (0, N-1) writes B[i] from A[i-1], A[i], A[i+1]."""
    size = defines(launch.build_defines)["N"]

    def inside(c: Coords):
        return (c.x > 0) & (c.x < size - 1)

    return Description(accesses=(
        *(Access(array="A", index=lambda c, d=d: c.x + d, guard=inside) for d in (-1, 0, 1)),
        Access(array="B", index=lambda c: c.x, guard=inside, kind="store"),
    ))


def _jacobi2d_inside(size: int):
    return lambda c: (c.y >= 1) & (c.y < size - 1) & (c.x >= 1) & (c.x < size - 1)


def _jacobi2d1(launch) -> Description:
    """JACOBI2D kernel 1: thread (i, j) inside the border writes B[i][j] from A's 5-point star."""
    size = defines(launch.build_defines)["N"]
    inside = _jacobi2d_inside(size)
    taps = ((0, 0), (0, -1), (0, 1), (1, 0), (-1, 0))
    return Description(accesses=(
        *(Access(array="A", index=lambda c, di=di, dj=dj: (c.y + di) * size + c.x + dj, guard=inside)
          for di, dj in taps),
        Access(array="B", index=lambda c: c.y * size + c.x, guard=inside, kind="store"),
    ))


def _jacobi2d2(launch) -> Description:
    """JACOBI2D kernel 2: thread (i, j) inside the border copies B[i][j] to A[i][j]."""
    size = defines(launch.build_defines)["N"]
    inside = _jacobi2d_inside(size)
    return Description(accesses=(
        Access(array="B", index=lambda c: c.y * size + c.x, guard=inside),
        Access(array="A", index=lambda c: c.y * size + c.x, guard=inside, kind="store"),
    ))


def _fdtd1(launch) -> Description:
    """FDTD-2D step 1 (the corpus passes t = 1): row 0 sets ey[0][j] = _fict_[t]; the other rows
    update ey[i][j] from hz[i][j] and hz[i-1][j]."""
    n = defines(launch.build_defines)
    nx, ny = n["NX"], n["NY"]
    t = step_argument(launch, "t", 1)

    def first(c: Coords):
        return (c.y == 0) & (c.x < ny)

    def rest(c: Coords):
        return (c.y > 0) & (c.y < nx) & (c.x < ny)

    def eij(c: Coords):
        return c.y * ny + c.x

    return Description(accesses=(
        Access(array="_fict_", index=lambda c: t, guard=first),
        Access(array="ey", index=eij, guard=first, kind="store"),
        Access(array="ey", index=eij, guard=rest),
        Access(array="hz", index=eij, guard=rest),
        Access(array="hz", index=lambda c: (c.y - 1) * ny + c.x, guard=rest),
        Access(array="ey", index=eij, guard=rest, kind="store"),
    ))


def _fdtd2(launch) -> Description:
    """FDTD-2D step 2: thread (i, j), j > 0, updates ex[i][j] from hz[i][j] and hz[i][j-1]."""
    n = defines(launch.build_defines)
    nx, ny = n["NX"], n["NY"]

    def inside(c: Coords):
        return (c.y < nx) & (c.x < ny) & (c.x > 0)

    def eij(c: Coords):
        return c.y * ny + c.x

    return Description(accesses=(
        Access(array="ex", index=eij, guard=inside),
        Access(array="hz", index=eij, guard=inside),
        Access(array="hz", index=lambda c: c.y * ny + c.x - 1, guard=inside),
        Access(array="ex", index=eij, guard=inside, kind="store"),
    ))


def _fdtd3(launch) -> Description:
    """FDTD-2D step 3: thread (i, j) below NX-1, NY-1 updates hz[i][j] from ex[i][j+1], ex[i][j],
    ey[i+1][j] and ey[i][j]."""
    n = defines(launch.build_defines)
    nx, ny = n["NX"], n["NY"]

    def inside(c: Coords):
        return (c.y < nx - 1) & (c.x < ny - 1)

    def eij(c: Coords):
        return c.y * ny + c.x

    return Description(accesses=(
        Access(array="hz", index=eij, guard=inside),
        Access(array="ex", index=lambda c: c.y * ny + c.x + 1, guard=inside),
        Access(array="ex", index=eij, guard=inside),
        Access(array="ey", index=lambda c: (c.y + 1) * ny + c.x, guard=inside),
        Access(array="ey", index=eij, guard=inside),
        Access(array="hz", index=eij, guard=inside, kind="store"),
    ))


KERNELS["2DCONV.convolution2D_kernel"] = _conv2d
KERNELS["3DCONV.convolution3D_kernel"] = _conv3d
KERNELS["JACOBI1D.runJacobiCUDA_kernel1"] = _jacobi1d
KERNELS["JACOBI2D.runJacobiCUDA_kernel1"] = _jacobi2d1
KERNELS["JACOBI2D.runJacobiCUDA_kernel2"] = _jacobi2d2
KERNELS["FDTD-2D.fdtd_step1_kernel"] = _fdtd1
KERNELS["FDTD-2D.fdtd_step2_kernel"] = _fdtd2
KERNELS["FDTD-2D.fdtd_step3_kernel"] = _fdtd3
