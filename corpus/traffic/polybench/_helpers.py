"""What the PolyBench descriptions share: a kernel's step argument, the 1-D guard, sums kept in
global memory, the matrix product."""

from __future__ import annotations

from roofline.memory import Access, Coords

from .._description import Description, defines, tokens

__all__ = ["accumulated", "matrix_product", "rows_guard", "step_argument"]

# ----------------------------------------------------------------------------- helpers


def step_argument(launch, name: str, default: int) -> int:
    """A kernel's step argument (``t``, ``k``, ``i``): the shape's token where it names one, else
    the value the corpus passes to every launch (its spec gives one fixed argument per kernel)."""
    value = tokens(launch.shape).get(name)
    return int(value) if value is not None else default


def rows_guard(n: int):
    """Guard ``x < n`` of a 1-D kernel (x = blockIdx.x * blockDim.x + threadIdx.x, the row or column
    a thread handles). The corpus launches the 1-D kernels with 32x8 blocks too (the project's
    block): their 8 rows of threads share x and repeat each other's accesses."""
    return lambda c: c.x < n


def accumulated(array: str, at, guard, loop: int, reads: tuple[Access, ...], *,
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


def matrix_product(launch, out: str, a: str, b: str, *, scaled: bool) -> Description:
    """``out[i][j] (+)= a[i][k] * b[k][j]`` over k for thread (i, j) = (y, x): the sum starts at 0
    or at ``out`` scaled in place (`scaled`), and is written back every k (`accumulated`)."""
    n = defines(launch.build_defines)
    ni, nj, nk = n["NI"], n["NJ"], n["NK"]

    def inside(c: Coords):
        return (c.y < ni) & (c.x < nj)

    return Description(accesses=accumulated(out, lambda c: c.y * nj + c.x, inside, nk, (
        Access(array=a, index=lambda c: c.y * nk + c.loop, guard=inside, loop=nk),
        Access(array=b, index=lambda c: c.loop * nj + c.x, guard=inside, loop=nk),
    ), load_first=False, scaled=scaled))
