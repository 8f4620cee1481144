"""Access descriptions of the corpus's polybench kernels (see the package docstring)."""

from __future__ import annotations

from roofline.memory import Access, Coords

from ._description import Describe, Description, defines, tokens

__all__ = ["KERNELS"]

KERNELS: dict[str, Describe] = {}


def _gemm(launch) -> Description:
    """GEMM: thread (i, j) scales c[i][j], then adds a[i][k] * b[k][j] over k, c written every k
    (the compiler keeps c[i][j] in a register: nothing between writes it, so only the store repeats)."""
    return _product(launch, "c", "a", "b", scaled=True)


KERNELS["GEMM.gemm_kernel"] = _gemm


# ----------------------------------------------------------------------------- helpers


def _argument(launch, name: str, default: int) -> int:
    """A kernel's step argument (``t``, ``k``, ``i``): the shape's token where it names one, else
    the value the corpus passes to every launch (its spec gives one fixed argument per kernel)."""
    value = tokens(launch.shape).get(name)
    return int(value) if value is not None else default


def _rows(n: int):
    """Guard ``x < n`` of a 1-D kernel (x = blockIdx.x * blockDim.x + threadIdx.x, the row or column
    a thread handles). The corpus launches the 1-D kernels with 32x8 blocks too (the project's
    block): their 8 rows of threads share x and repeat each other's accesses."""
    return lambda c: c.x < n


def _accumulate(array: str, at, guard, loop: int, reads: tuple[Access, ...], *,
                load_first: bool, scaled: bool = False) -> tuple[Access, ...]:
    """``array[at] (+)= ...`` summed in global memory over a loop of `loop` iterations of `reads`.

    The pointers may alias, so the compiler writes the sum back every iteration (a later load may
    read it); it keeps the value in a register (nothing else writes between), so the sum is read
    once before the loop (`load_first`: ``+=`` onto what is there) or not at all (the kernel first
    stores 0). `scaled`: the kernel first scales the sum in place (``c *= beta``: read, then
    written) and adds to it."""
    if scaled:
        first: tuple[Access, ...] = (Access(array=array, index=at, guard=guard),
                                     Access(array=array, index=at, guard=guard, kind="store"))
    else:
        first = (Access(array=array, index=at, guard=guard, kind="load" if load_first else "store"),)
    return (*first, *reads, Access(array=array, index=at, guard=guard, loop=loop, kind="store"))


def _product(launch, out: str, a: str, b: str, *, scaled: bool) -> Description:
    """``out[i][j] (+)= a[i][k] * b[k][j]`` over k for thread (i, j) = (y, x): the sum starts at 0
    or at ``out`` scaled in place (`scaled`), and is written back every k (`_accumulate`)."""
    n = defines(launch.build_defines)
    ni, nj, nk = n["NI"], n["NJ"], n["NK"]

    def inside(c: Coords):
        return (c.y < ni) & (c.x < nj)

    return Description(accesses=_accumulate(out, lambda c: c.y * nj + c.x, inside, nk, (
        Access(array=a, index=lambda c: c.y * nk + c.loop, guard=inside, loop=nk),
        Access(array=b, index=lambda c: c.loop * nj + c.x, guard=inside, loop=nk),
    ), load_first=False, scaled=scaled))


# ----------------------------------------------------------------------------- matrix products


def _2mm(launch) -> Description:
    """2MM kernel 1: thread (i, j) sets tmp[i][j] = 0, then adds alpha * A[i][k] * B[k][j] over k."""
    return _product(launch, "tmp", "A", "B", scaled=False)


def _3mm(launch) -> Description:
    """3MM kernel 1: thread (i, j) sets E[i][j] = 0, then adds A[i][k] * B[k][j] over k."""
    return _product(launch, "E", "A", "B", scaled=False)


def _rank_update(launch, products: tuple[tuple[str, str], ...]) -> Description:
    """``c[i][j] = beta c[i][j] + alpha sum over k of x[i][k] y[j][k]`` for each (x, y) of
    `products`, thread (i, j) = (y, x): c scaled in place, then summed and written every k."""
    n = defines(launch.build_defines)
    ni, nj = n["NI"], n["NJ"]

    def inside(c: Coords):
        return (c.y < ni) & (c.x < ni)

    reads = []
    for first, second in products:
        reads += [Access(array=first, index=lambda c: c.y * nj + c.loop, guard=inside, loop=nj),
                  Access(array=second, index=lambda c: c.x * nj + c.loop, guard=inside, loop=nj)]
    return Description(accesses=_accumulate("c", lambda c: c.y * ni + c.x, inside, nj, tuple(reads),
                                            load_first=False, scaled=True))


def _syrk(launch) -> Description:
    """SYRK: thread (i, j) scales c[i][j] by beta, then adds alpha * a[i][k] * a[j][k] over k."""
    return _rank_update(launch, (("a", "a"),))


def _syr2k(launch) -> Description:
    """SYR2K: thread (i, j) scales c[i][j] by beta, then adds alpha * (a[i][k] b[j][k] + b[i][k] a[j][k])."""
    return _rank_update(launch, (("a", "b"), ("b", "a")))


KERNELS["2MM.mm2_kernel1"] = _2mm
KERNELS["3MM.mm3_kernel1"] = _3mm
KERNELS["SYRK.syrk_kernel"] = _syrk
KERNELS["SYR2K.syr2k_kernel"] = _syr2k


# ----------------------------------------------------------------------------- matrix-vector products
# One thread a row (A[i][j] over j: each lane its own row, a sector a lane) or a column
# (A[i][j] over i: a warp reads consecutive elements); the vector read over the loop is one
# element for the whole warp; the sum is written back to global memory every iteration.


def _matvec(out: str, matrix: str, vector: str, threads: int, length: int, *, by_row: bool, load_first: bool,
            vector_first: bool = False) -> tuple[Access, ...]:
    """``out[i] (+)= sum over j of matrix * vector[j]`` for ``threads`` threads i over ``length`` j:
    thread i walks row i (`by_row`: ``matrix[i][j]``, rows of ``length``) or column i
    (``matrix[j][i]``, rows of ``threads``); the source's order of the two loads kept."""
    inside = _rows(threads)
    if by_row:
        index = lambda c: c.x * length + c.loop  # noqa: E731 - the one expression that differs
    else:
        index = lambda c: c.loop * threads + c.x  # noqa: E731
    pair = (Access(array=matrix, index=index, guard=inside, loop=length),
            Access(array=vector, index=lambda c: c.loop, guard=inside, loop=length))
    return _accumulate(out, lambda c: c.x, inside, length, pair[::-1] if vector_first else pair,
                       load_first=load_first)


def _atax1(launch) -> Description:
    """ATAX kernel 1: thread i sets tmp[i] = 0, then adds A[i][j] * x[j] over j."""
    n = defines(launch.build_defines)
    return Description(accesses=_matvec("tmp", "A", "x", n["NX"], n["NY"], by_row=True, load_first=False))


def _atax2(launch) -> Description:
    """ATAX kernel 2: thread j sets y[j] = 0, then adds A[i][j] * tmp[i] over i."""
    n = defines(launch.build_defines)
    return Description(accesses=_matvec("y", "A", "tmp", n["NY"], n["NX"], by_row=False, load_first=False))


def _bicg1(launch) -> Description:
    """BICG kernel 1: thread j sets s[j] = 0, then adds r[i] * A[i][j] over i."""
    n = defines(launch.build_defines)
    return Description(accesses=_matvec("s", "A", "r", n["NY"], n["NX"], by_row=False, load_first=False,
                                        vector_first=True))


def _bicg2(launch) -> Description:
    """BICG kernel 2: thread i sets q[i] = 0, then adds A[i][j] * p[j] over j."""
    n = defines(launch.build_defines)
    return Description(accesses=_matvec("q", "A", "p", n["NX"], n["NY"], by_row=True, load_first=False))


def _mvt1(launch) -> Description:
    """MVT kernel 1: thread i adds a[i][j] * y_1[j] to x1[i] over j."""
    size = defines(launch.build_defines)["N"]
    return Description(accesses=_matvec("x1", "a", "y_1", size, size, by_row=True, load_first=True))


def _mvt2(launch) -> Description:
    """MVT kernel 2: thread i adds a[j][i] * y_2[j] to x2[i] over j."""
    size = defines(launch.build_defines)["N"]
    return Description(accesses=_matvec("x2", "a", "y_2", size, size, by_row=False, load_first=True))


def _gesummv(launch) -> Description:
    """GESUMMV: thread i adds A[i][j] x[j] to tmp[i] and B[i][j] x[j] to y[i] over j, then
    y[i] = alpha tmp[i] + beta y[i].

    Each sum's store may change the other sum and x (the pointers may alias): every iteration
    reads tmp[i], A, x, writes tmp[i], then reads y[i], B, x again and writes y[i]; after the
    loop tmp[i] is read once more (y[i] was written last) and y[i] written."""
    size = defines(launch.build_defines)["N"]
    inside = _rows(size)

    def at(c: Coords):
        return c.x

    def row(c: Coords):
        return c.x * size + c.loop

    def x(c: Coords):
        return c.loop

    return Description(accesses=(
        Access(array="tmp", index=at, guard=inside, loop=size),
        Access(array="A", index=row, guard=inside, loop=size),
        Access(array="x", index=x, guard=inside, loop=size),
        Access(array="tmp", index=at, guard=inside, loop=size, kind="store"),
        Access(array="y", index=at, guard=inside, loop=size),
        Access(array="B", index=row, guard=inside, loop=size),
        Access(array="x", index=x, guard=inside, loop=size),
        Access(array="y", index=at, guard=inside, loop=size, kind="store"),
        Access(array="tmp", index=at, guard=inside),
        Access(array="y", index=at, guard=inside, kind="store"),
    ))


def _gemver1(launch) -> Description:
    """GEMVER kernel 1: thread (i, j) adds u1[i] v1[j] + u2[i] v2[j] to a[i][j]."""
    size = defines(launch.build_defines)["N"]

    def inside(c: Coords):
        return (c.y < size) & (c.x < size)

    def aij(c: Coords):
        return c.y * size + c.x

    return Description(accesses=(
        Access(array="a", index=aij, guard=inside),
        Access(array="u1", index=lambda c: c.y, guard=inside),
        Access(array="v1", index=lambda c: c.x, guard=inside),
        Access(array="u2", index=lambda c: c.y, guard=inside),
        Access(array="v2", index=lambda c: c.x, guard=inside),
        Access(array="a", index=aij, guard=inside, kind="store"),
    ))


def _gemver2(launch) -> Description:
    """GEMVER kernel 2: thread i adds beta a[j][i] y[j] to x[i] over j, then z[i]."""
    size = defines(launch.build_defines)["N"]
    inside = _rows(size)
    return Description(accesses=(
        *_matvec("x", "a", "y", size, size, by_row=False, load_first=True),
        Access(array="z", index=lambda c: c.x, guard=inside),
        Access(array="x", index=lambda c: c.x, guard=inside, kind="store"),
    ))


def _gemver3(launch) -> Description:
    """GEMVER kernel 3: thread i adds alpha a[i][j] x[j] to w[i] over j."""
    size = defines(launch.build_defines)["N"]
    return Description(accesses=_matvec("w", "a", "x", size, size, by_row=True, load_first=True))


KERNELS["ATAX.atax_kernel1"] = _atax1
KERNELS["ATAX.atax_kernel2"] = _atax2
KERNELS["BICG.bicg_kernel1"] = _bicg1
KERNELS["BICG.bicg_kernel2"] = _bicg2
KERNELS["MVT.mvt_kernel1"] = _mvt1
KERNELS["MVT.mvt_kernel2"] = _mvt2
KERNELS["GESUMMV.gesummv_kernel"] = _gesummv
KERNELS["GEMVER.gemver_kernel1"] = _gemver1
KERNELS["GEMVER.gemver_kernel2"] = _gemver2
KERNELS["GEMVER.gemver_kernel3"] = _gemver3


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
    i = _argument(launch, "i", ni // 2)

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
    t = _argument(launch, "t", 1)

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


# ----------------------------------------------------------------------------- covariance, correlation


def _covar_mean(launch) -> Description:
    """COVAR mean: thread j sets mean[j] = 0, adds data[i][j] over i, then divides it by FLOAT_N
    (the last value is in a register: one more store)."""
    n = defines(launch.build_defines)
    m, rows = n["M"], n["N"]
    inside = _rows(m)
    return Description(accesses=(
        *_accumulate("mean", lambda c: c.x, inside, rows, (
            Access(array="data", index=lambda c: c.loop * m + c.x, guard=inside, loop=rows),
        ), load_first=False),
        Access(array="mean", index=lambda c: c.x, guard=inside, kind="store"),
    ))


def _covar_reduce(launch) -> Description:
    """COVAR reduce: thread (i, j) subtracts mean[j] from data[i][j]."""
    n = defines(launch.build_defines)
    m, rows = n["M"], n["N"]

    def inside(c: Coords):
        return (c.y < rows) & (c.x < m)

    def dij(c: Coords):
        return c.y * m + c.x

    return Description(accesses=(
        Access(array="data", index=dij, guard=inside),
        Access(array="mean", index=lambda c: c.x, guard=inside),
        Access(array="data", index=dij, guard=inside, kind="store"),
    ))


def _corr_std(launch) -> Description:
    """CORR std: thread j sets std[j] = 0, adds (data[i][j] - mean[j])^2 over i (mean[j] read again
    every iteration: the store to std[j] may change it), then stores sqrt(std[j] / FLOAT_N), or 1
    where that is <= EPS (the division's store is dead: one store after the loop)."""
    n = defines(launch.build_defines)
    m, rows = n["M"], n["N"]
    inside = _rows(m)
    return Description(accesses=(
        *_accumulate("std", lambda c: c.x, inside, rows, (
            Access(array="data", index=lambda c: c.loop * m + c.x, guard=inside, loop=rows),
            Access(array="mean", index=lambda c: c.x, guard=inside, loop=rows),
        ), load_first=False),
        Access(array="std", index=lambda c: c.x, guard=inside, kind="store"),
    ))


def _symmetric(m: int, rows: int, offset: int, inside) -> tuple[Access, ...]:
    """COVAR / CORR: thread j1 (`inside`) runs j2 = j1 + offset ... M-1, each j2 setting
    symmat[j1][j2] = 0, adding data[i][j1] * data[i][j2] over the N rows i (the sum written back
    every i), then copying it to symmat[j2][j1].

    A warp's lanes take their j2 loops in step: its s-th trip has lane j1 at j2 = j1 + offset + s,
    the lanes whose loop has ended idle. One access per trip s (each with the i loop), as many as
    the first lane's trips."""
    out: list[Access] = []
    for s in range(m - offset):
        j2 = offset + s

        def active(c: Coords, j2=j2):
            return inside(c) & (c.x + j2 < m)

        def at(c: Coords, j2=j2):
            return c.x * m + c.x + j2

        out += [
            Access(array="symmat", index=at, guard=active, kind="store"),
            Access(array="data", index=lambda c: c.loop * m + c.x, guard=active, loop=rows),
            Access(array="data", index=lambda c, j2=j2: c.loop * m + c.x + j2, guard=active, loop=rows),
            Access(array="symmat", index=at, guard=active, loop=rows, kind="store"),
            Access(array="symmat", index=lambda c, j2=j2: (c.x + j2) * m + c.x, guard=active, kind="store"),
        ]
    return tuple(out)


def _covar(launch) -> Description:
    """COVAR covar: thread j1 computes symmat[j1][j2] and symmat[j2][j1] for j2 >= j1."""
    n = defines(launch.build_defines)
    m, rows = n["M"], n["N"]
    return Description(accesses=_symmetric(m, rows, 0, _rows(m)))


def _corr(launch) -> Description:
    """CORR corr: thread j1 < M-1 sets symmat[j1][j1] = 1, then symmat[j1][j2] and symmat[j2][j1]
    for j2 > j1."""
    n = defines(launch.build_defines)
    m, rows = n["M"], n["N"]
    inside = _rows(m - 1)
    return Description(accesses=(
        Access(array="symmat", index=lambda c: c.x * m + c.x, guard=inside, kind="store"),
        *_symmetric(m, rows, 1, inside),
    ))


# ----------------------------------------------------------------------------- Gram-Schmidt, LU


def _gramschmidt1(launch) -> Description:
    """GRAMSCHM kernel 1 (the corpus passes k = 1): thread 0 alone sums a[i][k]^2 over i (one load
    an i) and stores r[k][k]."""
    n = defines(launch.build_defines)
    ni, nj = n["NI"], n["NJ"]
    k = _argument(launch, "k", 1)

    def first(c: Coords):
        return c.x == 0

    return Description(accesses=(
        Access(array="a", index=lambda c: c.loop * nj + k, guard=first, loop=ni),
        Access(array="r", index=lambda c: k * nj + k, guard=first, kind="store"),
    ))


def _gramschmidt3(launch) -> Description:
    """GRAMSCHM kernel 3 (the corpus passes k = 1): thread j, k < j < NJ, sets r[k][j] = 0, adds
    q[i][k] a[i][j] over i, then subtracts q[i][k] r[k][j] from a[i][j] over i, reading a[i][j],
    q[i][k] and r[k][j] every trip of the second loop (the store to a may change them)."""
    n = defines(launch.build_defines)
    ni, nj = n["NI"], n["NJ"]
    k = _argument(launch, "k", 1)

    def inside(c: Coords):
        return (c.x > k) & (c.x < nj)

    def q(c: Coords):
        return c.loop * nj + k

    def a(c: Coords):
        return c.loop * nj + c.x

    def r(c: Coords):
        return k * nj + c.x

    return Description(accesses=(
        *_accumulate("r", r, inside, ni, (
            Access(array="q", index=q, guard=inside, loop=ni),
            Access(array="a", index=a, guard=inside, loop=ni),
        ), load_first=False),
        Access(array="a", index=a, guard=inside, loop=ni),
        Access(array="q", index=q, guard=inside, loop=ni),
        Access(array="r", index=r, guard=inside, loop=ni),
        Access(array="a", index=a, guard=inside, loop=ni, kind="store"),
    ))


def _lu1(launch) -> Description:
    """LU kernel 1 (the corpus passes k = 0): thread j, k < j < N, divides A[k][j] by A[k][k]."""
    size = defines(launch.build_defines)["N"]
    k = _argument(launch, "k", 0)

    def inside(c: Coords):
        return (c.x > k) & (c.x < size)

    return Description(accesses=(
        Access(array="A", index=lambda c: k * size + c.x, guard=inside),
        Access(array="A", index=lambda c: k * size + k, guard=inside),
        Access(array="A", index=lambda c: k * size + c.x, guard=inside, kind="store"),
    ))


def _lu2(launch) -> Description:
    """LU kernel 2 (the corpus passes k = 0): thread (i, j), i, j > k, subtracts A[i][k] A[k][j]
    from A[i][j]."""
    size = defines(launch.build_defines)["N"]
    k = _argument(launch, "k", 0)

    def inside(c: Coords):
        return (c.y > k) & (c.x > k) & (c.y < size) & (c.x < size)

    def aij(c: Coords):
        return c.y * size + c.x

    return Description(accesses=(
        Access(array="A", index=aij, guard=inside),
        Access(array="A", index=lambda c: c.y * size + k, guard=inside),
        Access(array="A", index=lambda c: k * size + c.x, guard=inside),
        Access(array="A", index=aij, guard=inside, kind="store"),
    ))


KERNELS["COVAR.mean_kernel"] = _covar_mean
KERNELS["COVAR.reduce_kernel"] = _covar_reduce
KERNELS["COVAR.covar_kernel"] = _covar
KERNELS["CORR.std_kernel"] = _corr_std
KERNELS["CORR.corr_kernel"] = _corr
KERNELS["GRAMSCHM.gramschmidt_kernel1"] = _gramschmidt1
KERNELS["GRAMSCHM.gramschmidt_kernel3"] = _gramschmidt3
KERNELS["LU.lu_kernel1"] = _lu1
KERNELS["LU.lu_kernel2"] = _lu2
