"""Access descriptions of the corpus's Triton-tutorial kernels (see the package docstring)."""

from __future__ import annotations

import re

import numpy as np

from roofline.memory import Access, Coords

from ._description import Describe, Description, tokens

__all__ = ["KERNELS"]

KERNELS: dict[str, Describe] = {}

# Triton picks how a program's block of elements maps onto its threads. We describe a mapping
# that moves the same sectors as the compiled code: each thread holds vectors of contiguous
# elements (16 bytes where the row alignment allows it, LDG.128 / LDGSTS.128), vector j of
# thread t sits at position j * threads + t of the program's tile, so the lanes of a warp are
# adjacent and every warp-wide access covers 32 consecutive vectors.


def _next_pow2(n: int) -> int:
    return 1 << (n - 1).bit_length()


def _rows_cols(launch) -> tuple[int, int]:
    """Rows and columns of an ``"MxN ..."`` shape."""
    m, n = re.match(r"(\d+)x(\d+)", launch.shape).groups()
    return int(m), int(n)


def _lane_vector(c: Coords, j: int, threads: int):
    """Position of thread ``c``'s ``j``-th vector in its program's tile."""
    return j * threads + c.thread_x


# ----------------------------------------------------------------------------- 01 vector add


def _vector_add(launch) -> Description:
    """add_kernel: program p adds x and y over elements [p*BLOCK, (p+1)*BLOCK) (masked to n)
    into out; a thread holds BLOCK/threads elements, in 16-byte vectors at most."""
    t = tokens(launch.shape)
    n, block = int(t["n"]), int(t["BLOCK_SIZE"])
    threads = launch.threads_per_block
    per_thread = max(1, block // threads)
    width = min(4, per_thread)  # fp32 elements per vector
    if n % width:
        width = 1
    copies = max(1, block // (threads * width))
    active = min(threads, block // width)

    def access(array, kind, j):
        def vector(c):
            return c.block_x * (block // width) + _lane_vector(c, j, threads)

        def guard(c):
            return (c.thread_x < active) & (vector(c) * width < n)

        return Access(array=array, index=vector, guard=guard, kind=kind, element_bytes=4 * width)

    return Description(accesses=tuple(
        access(a, kind, j) for a, kind in (("x", "load"), ("y", "load"), ("out", "store"))
        for j in range(copies)))


KERNELS["01-vector-add.add_kernel"] = _vector_add


# ----------------------------------------------------------------------------- 02 fused softmax


def _softmax(launch) -> Description:
    """softmax_kernel: persistent programs; program p takes rows p, p+G, p+2G, ... (G the grid)
    and for each loads the row (fp32, masked to n_cols, software-pipelined into shared memory
    by async copies) and stores its softmax. Rows are contiguous (stride n_cols)."""
    rows, cols = _rows_cols(launch)
    programs = launch.grid[0]
    threads = launch.threads_per_block
    block = _next_pow2(cols)
    width = min(4, max(1, block // threads)) if cols % 4 == 0 else 1
    copies = max(1, block // (threads * width))
    active = min(threads, block // width)
    steps = -(-rows // programs)

    def access(array, kind, j):
        def row(c):
            return c.block_x + c.loop * programs

        def vector(c):
            return row(c) * (cols // width) + _lane_vector(c, j, threads)

        def guard(c):
            return ((c.thread_x < active) & (row(c) < rows)
                    & (_lane_vector(c, j, threads) * width < cols))

        return Access(array=array, index=vector, guard=guard, kind=kind,
                      element_bytes=4 * width, loop=steps)

    return Description(accesses=tuple(
        access(a, kind, j) for a, kind in (("input", "load"), ("output", "store"))
        for j in range(copies)))


KERNELS["02-fused-softmax.softmax_kernel"] = _softmax


# ----------------------------------------------------------------------------- 03 matmul


_GROUP_M = 8  # GROUP_SIZE_M of every CUDA autotune config


def _matmul(launch) -> Description:
    """matmul_kernel: program p computes a BMxBN tile of C = A B (fp16, row-major, A MxK,
    B KxN), tiles in grouped order (8 tile rows per group); each K step loads its BMxBK tile of
    A and BKxBN tile of B (async copies of 16-byte vectors into shared memory), and the fp16
    tile of C is stored once at the end."""
    side = int(re.match(r"(\d+)", launch.shape).group(1))
    bm, bn, bk = (int(v) for v in re.search(r"(\d+)x(\d+)x(\d+)", launch.shape).groups())
    m = n = k = side
    threads = launch.threads_per_block
    vec = 8  # fp16 per 16-byte vector
    tiles_m, tiles_n = -(-m // bm), -(-n // bn)
    steps = -(-k // bk)

    def tile(c: Coords):
        """(pid_m, pid_n) of the program: grouped ordering."""
        pid = c.block_x
        per_group = _GROUP_M * tiles_n
        first_m = pid // per_group * _GROUP_M
        size_m = np.minimum(tiles_m - first_m, _GROUP_M)
        within = pid % per_group
        return first_m + within % size_m, within // size_m

    def tile_vectors(rows_, cols_, array, kind, looped, at, guard_of):
        """Accesses of a rows_ x cols_ tile in 16-byte vectors along its rows."""
        per_row = cols_ // vec
        out = []
        for j in range(rows_ * per_row // threads):
            def pos(c, j=j):
                lin = _lane_vector(c, j, threads)
                return lin // per_row, lin % per_row

            def index(c, pos=pos):
                r, v = pos(c)
                return at(c, r, v)

            def guard(c, pos=pos):
                r, v = pos(c)
                return guard_of(c, r, v)

            out.append(Access(array=array, index=index, guard=guard, kind=kind, element_bytes=16,
                              loop=steps if looped else 1))
        return out

    def a_at(c, r, v):
        pm, _ = tile(c)
        row = (pm * bm + r) % m
        return (row * k + c.loop * bk) // vec + v

    def a_in(c, r, v):
        return c.loop * bk + v * vec < k

    def b_at(c, r, v):
        _, pn = tile(c)
        return ((c.loop * bk + r) * n + pn * bn) // vec + v

    def b_in(c, r, v):
        return c.loop * bk + r < k

    def c_at(c, r, v):
        pm, pn = tile(c)
        return ((pm * bm + r) * n + pn * bn) // vec + v

    def c_in(c, r, v):
        pm, pn = tile(c)
        return (pm * bm + r < m) & (pn * bn + v * vec < n)

    return Description(accesses=(
        *tile_vectors(bm, bk, "a", "load", True, a_at, a_in),
        *tile_vectors(bk, bn, "b", "load", True, b_at, b_in),
        *tile_vectors(bm, bn, "c", "store", False, c_at, c_in),
    ))


KERNELS["03-matrix-multiplication.matmul_kernel"] = _matmul


# ----------------------------------------------------------------------------- 05 layer norm


def _layer_norm(launch) -> Description:
    """_layer_norm_fwd_fused: program r normalises row r of X (fp16, one block of
    next_pow2(N) columns, masked to N): it reads the row three times (mean, variance, and
    normalise passes, each its own load), reads W and B, writes the row of Y, and one thread
    writes Mean[r] and Rstd[r] (fp32)."""
    rows, cols = _rows_cols(launch)
    threads = launch.threads_per_block
    block = _next_pow2(cols)
    width = min(8, max(1, block // threads)) if cols % 8 == 0 else 1  # fp16 per vector
    copies = max(1, block // (threads * width))
    active = min(threads, block // width)

    def access(array, kind, j, per_row=True):
        def vector(c):
            base = c.block_x * (cols // width) if per_row else 0
            return base + _lane_vector(c, j, threads)

        def guard(c):
            return (c.thread_x < active) & (_lane_vector(c, j, threads) * width < cols)

        return Access(array=array, index=vector, guard=guard, kind=kind, element_bytes=2 * width)

    accesses = []
    for j in range(copies):
        accesses += [access("X", "load", j), access("X", "load", j)]
    for j in range(copies):
        accesses += [access("W", "load", j, per_row=False), access("B", "load", j, per_row=False),
                     access("X", "load", j), access("Y", "store", j)]

    def first(c):
        return c.thread_x == 0

    accesses += [Access(array=a, index=lambda c: c.block_x, guard=first, kind="store")
                 for a in ("Mean", "Rstd")]
    return Description(accesses=tuple(accesses))


KERNELS["05-layer-norm._layer_norm_fwd_fused"] = _layer_norm
