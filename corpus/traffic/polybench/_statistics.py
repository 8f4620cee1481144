"""PolyBench descriptions of covariance and correlation: COVAR, CORR."""

from __future__ import annotations

from roofline.memory import Access, Coords

from .._description import Describe, Description, defines
from ._helpers import accumulated, rows_guard

__all__ = ["KERNELS"]

KERNELS: dict[str, Describe] = {}


# ----------------------------------------------------------------------------- covariance, correlation


def _covar_mean(launch) -> Description:
    """COVAR mean: thread j sets mean[j] = 0, adds data[i][j] over i, then divides it by FLOAT_N
    (the last value is in a register: one more store)."""
    n = defines(launch.build_defines)
    m, rows = n["M"], n["N"]
    inside = rows_guard(m)
    return Description(accesses=(
        *accumulated("mean", lambda c: c.x, inside, rows, (
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
    inside = rows_guard(m)
    return Description(accesses=(
        *accumulated("std", lambda c: c.x, inside, rows, (
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
    the first lane's trips; trip s's i loop runs after trip s-1's (its own `phase`)."""
    out: list[Access] = []
    for s in range(m - offset):
        j2 = offset + s

        def active(c: Coords, j2=j2):
            return inside(c) & (c.x + j2 < m)

        def at(c: Coords, j2=j2):
            return c.x * m + c.x + j2

        out += [
            Access(array="symmat", index=at, guard=active, kind="store", phase=s),
            Access(array="data", index=lambda c: c.loop * m + c.x, guard=active, loop=rows, phase=s),
            Access(array="data", index=lambda c, j2=j2: c.loop * m + c.x + j2, guard=active, loop=rows, phase=s),
            Access(array="symmat", index=at, guard=active, loop=rows, kind="store", phase=s),
            Access(array="symmat", index=lambda c, j2=j2: (c.x + j2) * m + c.x, guard=active, kind="store", phase=s),
        ]
    return tuple(out)


def _covar(launch) -> Description:
    """COVAR covar: thread j1 computes symmat[j1][j2] and symmat[j2][j1] for j2 >= j1."""
    n = defines(launch.build_defines)
    m, rows = n["M"], n["N"]
    return Description(accesses=_symmetric(m, rows, 0, rows_guard(m)))


def _corr(launch) -> Description:
    """CORR corr: thread j1 < M-1 sets symmat[j1][j1] = 1, then symmat[j1][j2] and symmat[j2][j1]
    for j2 > j1."""
    n = defines(launch.build_defines)
    m, rows = n["M"], n["N"]
    inside = rows_guard(m - 1)
    return Description(accesses=(
        Access(array="symmat", index=lambda c: c.x * m + c.x, guard=inside, kind="store"),
        *_symmetric(m, rows, 1, inside),
    ))



KERNELS["COVAR.mean_kernel"] = _covar_mean
KERNELS["COVAR.reduce_kernel"] = _covar_reduce
KERNELS["COVAR.covar_kernel"] = _covar
KERNELS["CORR.std_kernel"] = _corr_std
KERNELS["CORR.corr_kernel"] = _corr
