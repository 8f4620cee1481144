"""PolyBench descriptions of the factorisations: GRAMSCHM (Gram-Schmidt), LU."""

from __future__ import annotations

from roofline.memory import Access, Coords

from .._description import Describe, Description, defines
from ._helpers import accumulated, step_argument

__all__ = ["KERNELS"]

KERNELS: dict[str, Describe] = {}


# ----------------------------------------------------------------------------- Gram-Schmidt, LU


def _gramschmidt1(launch) -> Description:
    """GRAMSCHM kernel 1 (the corpus passes k = 1): thread 0 alone sums a[i][k]^2 over i (one load
    an i) and stores r[k][k]."""
    n = defines(launch.build_defines)
    ni, nj = n["NI"], n["NJ"]
    k = step_argument(launch, "k", 1)

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
    k = step_argument(launch, "k", 1)

    def inside(c: Coords):
        return (c.x > k) & (c.x < nj)

    def q(c: Coords):
        return c.loop * nj + k

    def a(c: Coords):
        return c.loop * nj + c.x

    def r(c: Coords):
        return k * nj + c.x

    return Description(accesses=(
        *accumulated("r", r, inside, ni, (
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
    k = step_argument(launch, "k", 0)

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
    k = step_argument(launch, "k", 0)

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

KERNELS["GRAMSCHM.gramschmidt_kernel1"] = _gramschmidt1
KERNELS["GRAMSCHM.gramschmidt_kernel3"] = _gramschmidt3
KERNELS["LU.lu_kernel1"] = _lu1
KERNELS["LU.lu_kernel2"] = _lu2
