"""Access descriptions of the corpus's polybench kernels (see the package docstring)."""

from __future__ import annotations

from .._traffic import Access, Coords
from ._description import Describe, Description, defines, tokens

__all__ = ["KERNELS"]

KERNELS: dict[str, Describe] = {}


def _gemm(launch) -> Description:
    """GEMM: thread (i, j) scales c[i][j], then adds a[i][k] * b[k][j] over k, c written every k."""
    n = defines(launch.build_defines)
    ni, nj, nk = n["NI"], n["NJ"], n["NK"]

    def inside(c: Coords):
        return (c.y < ni) & (c.x < nj)

    def cij(c: Coords):
        return c.y * nj + c.x

    return Description(accesses=(
        Access(array="c", index=cij, guard=inside),
        Access(array="c", index=cij, guard=inside, kind="store"),
        Access(array="a", index=lambda c: c.y * nk + c.loop, guard=inside, loop=nk),
        Access(array="b", index=lambda c: c.loop * nj + c.x, guard=inside, loop=nk),
        # the compiler keeps c[i][j] in a register (nothing between writes it), so only the store repeats
        Access(array="c", index=cij, guard=inside, loop=nk, kind="store"),
    ))


KERNELS["GEMM.gemm_kernel"] = _gemm
