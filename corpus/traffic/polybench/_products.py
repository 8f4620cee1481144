"""PolyBench descriptions of the matrix products (GEMM, 2MM, 3MM, SYRK, SYR2K) and the
matrix-vector products (ATAX, BICG, MVT, GESUMMV, GEMVER)."""

from __future__ import annotations

from roofline.memory import Access, Coords

from .._description import Describe, Description, defines
from ._helpers import accumulated, matrix_product, rows_guard

__all__ = ["KERNELS"]

KERNELS: dict[str, Describe] = {}


def _gemm(launch) -> Description:
    """GEMM: thread (i, j) scales c[i][j], then adds a[i][k] * b[k][j] over k, c written every k
    (the compiler keeps c[i][j] in a register: nothing between writes it, so only the store repeats)."""
    return matrix_product(launch, "c", "a", "b", scaled=True)


KERNELS["GEMM.gemm_kernel"] = _gemm


# ----------------------------------------------------------------------------- matrix products


def _2mm(launch) -> Description:
    """2MM kernel 1: thread (i, j) sets tmp[i][j] = 0, then adds alpha * A[i][k] * B[k][j] over k."""
    return matrix_product(launch, "tmp", "A", "B", scaled=False)


def _3mm(launch) -> Description:
    """3MM kernel 1: thread (i, j) sets E[i][j] = 0, then adds A[i][k] * B[k][j] over k."""
    return matrix_product(launch, "E", "A", "B", scaled=False)


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
    return Description(accesses=accumulated("c", lambda c: c.y * ni + c.x, inside, nj, tuple(reads),
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
    inside = rows_guard(threads)
    if by_row:
        index = lambda c: c.x * length + c.loop  # noqa: E731 - the one expression that differs
    else:
        index = lambda c: c.loop * threads + c.x  # noqa: E731
    pair = (Access(array=matrix, index=index, guard=inside, loop=length),
            Access(array=vector, index=lambda c: c.loop, guard=inside, loop=length))
    return accumulated(out, lambda c: c.x, inside, length, pair[::-1] if vector_first else pair,
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
    inside = rows_guard(size)

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
    inside = rows_guard(size)
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
