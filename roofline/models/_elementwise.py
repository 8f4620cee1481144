"""One-dimensional kernels: streams, offset and strided accesses, AoS/SoA.

Every kernel here is launched as ``grid = ceil(threads / block)`` blocks of ``block``
threads in x, and each thread computes ``i = blockIdx.x * blockDim.x + threadIdx.x``.
Arrays hold float32 and start 256-byte aligned (cudaMalloc).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from occupancy import Launch

from .._errors import RooflineError
from .._kernel import Kernel
from .._traffic import Access, Coords, traffic
from ._common import (
    FLOAT_BYTES,
    MAX_ELEMENTS,
    blocks_for,
    check_block_1d,
    check_grid,
    check_int,
)

__all__ = [
    "aos",
    "copy",
    "offset_read",
    "offset_write",
    "soa",
    "strided_read",
    "strided_write",
    "triad",
    "vector_add",
]


def _at(
    array: str,
    kind: str,
    element: Callable[[np.ndarray], np.ndarray],
    guard: Callable[[np.ndarray], np.ndarray],
    *,
    field: int = 0,
    fields: int = 1,
    base: int = 0,
) -> Access:
    """``array[base + element(i) * fields + field]`` where ``guard(i)``, 4-byte floats."""

    def index(c: Coords) -> np.ndarray:
        return base + element(c.x) * fields + field

    return Access(array=array, index=index, guard=lambda c: guard(c.x), kind=kind)


def _stream(
    name: str,
    parameters: dict,
    formula: str,
    *,
    threads: int,
    block: int,
    flops: int,
    accesses: list[Access],
    element_bytes: int = FLOAT_BYTES,
) -> Kernel:
    grid = blocks_for(threads, block)
    check_grid((grid,), (", ".join(f"{k}={v}" for k, v in parameters.items()) or name,))
    counts = traffic(grid, block, accesses)
    return counts.kernel(
        name=name,
        parameters={**parameters, "block": block},
        formula=formula,
        precision="fp32",
        element_bytes=element_bytes,
        flops=flops,
        shared_bytes=0,
        launch=Launch(grid=grid, block=block),
    )


def _identity(i: np.ndarray) -> np.ndarray:
    return i


def _offset(name: str, n: int, offset: int, block: int) -> Kernel:
    """``offset_read`` (loads shifted) or ``offset_write`` (the store shifted):
    ``unsigned k = i + offset; if (k < n) ...`` with n threads."""
    n = check_int("n", n)
    offset = check_int("offset", offset, 0, n - 1)
    block = check_block_1d(block)
    inside = lambda i: i + offset < n  # noqa: E731
    reads_shifted = name == "offset_read"
    load = (lambda i: i + offset) if reads_shifted else _identity
    store = _identity if reads_shifted else (lambda i: i + offset)
    formula = ("unsigned k = i + offset; if (k < n) c[i] = a[k] + b[k];" if reads_shifted
               else "unsigned k = i + offset; if (k < n) c[k] = a[i] + b[i];")
    return _stream(
        name,
        {"n": n, "offset": offset},
        formula,
        threads=n,
        block=block,
        flops=n - offset,
        accesses=[_at("a", "load", load, inside), _at("b", "load", load, inside), _at("c", "store", store, inside)],
    )


def _strided(name: str, n: int, stride: int, block: int) -> Kernel:
    """``strided_read`` (gather: the load strided) or ``strided_write`` (scatter: the
    store strided), ``m = ceil(n / stride)`` threads."""
    n = check_int("n", n)
    stride = check_int("stride", stride, 1, MAX_ELEMENTS)
    block = check_block_1d(block)
    m = blocks_for(n, stride)
    inside = lambda i: i < m  # noqa: E731
    strided = lambda i: i * stride  # noqa: E731
    gather = name == "strided_read"
    load, store = (strided, _identity) if gather else (_identity, strided)
    formula = ("m = (n + stride - 1) / stride; if (i < m) y[i] = x[(size_t)i * stride];" if gather
               else "m = (n + stride - 1) / stride; if (i < m) y[(size_t)i * stride] = x[i];")
    return _stream(
        name,
        {"n": n, "stride": stride},
        formula,
        threads=m,
        block=block,
        flops=0,
        accesses=[_at("x", "load", load, inside), _at("y", "store", store, inside)],
    )


def copy(n: int, *, block: int = 256) -> Kernel:
    """Copy a float array: ``if (i < n) y[i] = x[i];``.

    Launch: ``grid = ceil(n / block)`` x ``block`` threads (1-D). 0 flops, 4 bytes loaded
    and 4 stored per element; DRAM: both arrays once.

    Parameters
    ----------
    n : int
        Elements (float32), >= 1.
    block : int
        Threads per block, 1 to 1024.

    Returns
    -------
    roofline.Kernel

    Examples
    --------
    >>> from roofline import models
    >>> models.copy(1024).count("requested_bytes")
    8192
    """
    n = check_int("n", n)
    block = check_block_1d(block)
    inside = lambda i: i < n  # noqa: E731
    return _stream(
        "copy",
        {"n": n},
        "if (i < n) y[i] = x[i];",
        threads=n,
        block=block,
        flops=0,
        accesses=[_at("x", "load", _identity, inside), _at("y", "store", _identity, inside)],
    )


def vector_add(n: int, *, block: int = 256) -> Kernel:
    """PMPP's vector addition: ``if (i < n) c[i] = a[i] + b[i];``.

    Launch: ``grid = ceil(n / block)`` x ``block`` (1-D). 1 flop, 8 bytes loaded and 4 stored
    per element: arithmetic intensity 1/12 flop/byte.

    Parameters
    ----------
    n : int
        Elements (float32), >= 1.
    block : int
        Threads per block, 1 to 1024.

    Returns
    -------
    roofline.Kernel

    Examples
    --------
    >>> from roofline import models
    >>> models.vector_add(1 << 20).arithmetic_intensity == 1 / 12
    True
    """
    n = check_int("n", n)
    block = check_block_1d(block)
    inside = lambda i: i < n  # noqa: E731
    return _stream(
        "vector_add",
        {"n": n},
        "if (i < n) c[i] = a[i] + b[i];",
        threads=n,
        block=block,
        flops=n,
        accesses=[
            _at("a", "load", _identity, inside),
            _at("b", "load", _identity, inside),
            _at("c", "store", _identity, inside),
        ],
    )


def triad(n: int, *, scalar: float = 3.0, block: int = 256) -> Kernel:
    """STREAM triad: ``if (i < n) a[i] = b[i] + scalar * c[i];``.

    Launch: ``grid = ceil(n / block)`` x ``block`` (1-D). 2 flops (one FMA), 8 bytes loaded and
    4 stored per element: 1/6 flop/byte.

    Parameters
    ----------
    n : int
        Elements (float32), >= 1.
    scalar : float
        The constant multiplier (does not change the counts).
    block : int
        Threads per block, 1 to 1024.

    Returns
    -------
    roofline.Kernel

    Examples
    --------
    >>> from roofline import models
    >>> models.triad(1 << 20).arithmetic_intensity == 1 / 6
    True
    """
    n = check_int("n", n)
    block = check_block_1d(block)
    if isinstance(scalar, bool) or not isinstance(scalar, (int, float)):
        raise TypeError(f"scalar must be a float, got {type(scalar).__name__}")
    if not -1e308 <= scalar <= 1e308:
        raise RooflineError(f"scalar={scalar!r} must be a finite float")
    inside = lambda i: i < n  # noqa: E731
    return _stream(
        "triad",
        {"n": n, "scalar": float(scalar)},
        "if (i < n) a[i] = b[i] + scalar * c[i];",
        threads=n,
        block=block,
        flops=2 * n,
        accesses=[
            _at("a", "load", _identity, inside),
            _at("b", "load", _identity, inside),
            _at("c", "store", _identity, inside),
        ],
    )


def offset_read(n: int, offset: int, *, block: int = 256) -> Kernel:
    """Misaligned reads (Cheng et al. ch.4 ``readOffset``).

    ``unsigned k = i + offset; if (k < n) c[i] = a[k] + b[k];`` with ``n`` threads in
    ``grid = ceil(n / block)`` blocks; a, b and c hold n floats. ``n - offset`` elements
    are computed: 1 flop, 8 bytes loaded, 4 stored each. When ``offset`` is not a multiple
    of 8 floats every warp's loads straddle one more 32-byte sector (``l2_bytes``); DRAM
    sees each sector once (compulsory rule).

    Parameters
    ----------
    n : int
        Elements per array, >= 1.
    offset : int
        Elements, 0 <= offset < n.
    block : int
        Threads per block, 1 to 1024.

    Returns
    -------
    roofline.Kernel

    Examples
    --------
    >>> from roofline import models
    >>> m = models.offset_read(1 << 20, 11)
    >>> m.l2_bytes > m.count("requested_bytes")
    True
    """
    return _offset("offset_read", n, offset, block)


def offset_write(n: int, offset: int, *, block: int = 256) -> Kernel:
    """Misaligned writes (Cheng et al. ch.4 ``writeOffset``).

    ``unsigned k = i + offset; if (k < n) c[k] = a[i] + b[i];`` with ``n`` threads in
    ``grid = ceil(n / block)`` blocks; a, b and c hold n floats. Counts mirror
    `offset_read`: the stores straddle an extra sector per warp when misaligned.

    Parameters
    ----------
    n : int
        Elements per array, >= 1.
    offset : int
        Elements, 0 <= offset < n.
    block : int
        Threads per block, 1 to 1024.

    Returns
    -------
    roofline.Kernel
    """
    return _offset("offset_write", n, offset, block)


def strided_read(n: int, stride: int, *, block: int = 256) -> Kernel:
    """Strided gather: ``if (i < m) y[i] = x[(size_t)i * stride];`` with ``m = ceil(n / stride)``.

    ``x`` holds ``n`` floats, ``y`` holds ``m``; ``m`` threads in ``grid = ceil(m / block)``
    blocks. 0 flops, 4 bytes loaded and 4 stored per thread. A warp's loads touch
    ``min(32, ceil(32 * stride / 8))`` sectors, so L2 and DRAM move whole 32-byte sectors:
    DRAM reads = distinct sectors of x touched x 32, i.e. one sector per element once
    ``stride >= 8`` floats and every sector of x for smaller strides.

    Parameters
    ----------
    n : int
        Elements of x, >= 1.
    stride : int
        Elements between consecutive reads, >= 1.
    block : int
        Threads per block, 1 to 1024.

    Returns
    -------
    roofline.Kernel

    Examples
    --------
    >>> from roofline import models
    >>> m = models.strided_read(1 << 20, 8)
    >>> m.l2_bytes / m.count("requested_bytes")  # 32-byte sector per 4-byte load, plus the store
    4.5
    """
    return _strided("strided_read", n, stride, block)


def strided_write(n: int, stride: int, *, block: int = 256) -> Kernel:
    """Strided scatter: ``if (i < m) y[(size_t)i * stride] = x[i];`` with ``m = ceil(n / stride)``.

    ``y`` holds ``n`` floats, ``x`` holds ``m``; ``m`` threads in ``grid = ceil(m / block)``
    blocks. 0 flops; the stores touch one sector per element once the stride reaches 8 floats
    (DRAM counts each written sector once, as a whole).

    Parameters
    ----------
    n : int
        Elements of y, >= 1.
    stride : int
        Elements between consecutive writes, >= 1.
    block : int
        Threads per block, 1 to 1024.

    Returns
    -------
    roofline.Kernel
    """
    return _strided("strided_write", n, stride, block)


def aos(n: int, *, block: int = 128) -> Kernel:
    """Array of structures (Cheng et al. ch.4 ``testInnerStruct``).

    ``struct innerStruct { float x; float y; };`` (4-byte aligned, so each field is its own
    32-bit load and store); ``if (i < n) { innerStruct t = data[i]; t.x += 10.f;
    t.y += 20.f; result[i] = t; }``. ``n`` threads in ``grid = ceil(n / block)`` blocks.
    2 flops, 8 bytes loaded, 8 stored per element; each field access uses half of the
    sectors it touches (50% efficiency, Cheng's nvprof figure), so ``l2_bytes`` is twice
    the requested bytes. DRAM: both arrays once.

    Parameters
    ----------
    n : int
        Structures, >= 1.
    block : int
        Threads per block (Cheng uses 128), 1 to 1024.

    Returns
    -------
    roofline.Kernel

    Examples
    --------
    >>> from roofline import models
    >>> m = models.aos(1 << 20)
    >>> m.l2_bytes / m.count("requested_bytes")
    2.0
    """
    n = check_int("n", n)
    block = check_block_1d(block)
    inside = lambda i: i < n  # noqa: E731
    struct = 2 * FLOAT_BYTES
    fields = [
        _at(array, kind, _identity, inside, field=f, fields=2)
        for array, kind in (("data", "load"), ("result", "store"))
        for f in (0, 1)
    ]
    return _stream(
        "aos",
        {"n": n},
        "innerStruct t = data[i]; t.x += 10.f; t.y += 20.f; result[i] = t;  (if i < n)",
        threads=n,
        block=block,
        flops=2 * n,
        accesses=fields,
        element_bytes=struct,
    )


def soa(n: int, *, block: int = 128) -> Kernel:
    """Structure of arrays (Cheng et al. ch.4 ``testInnerArray``).

    ``struct InnerArray { float x[n]; float y[n]; };`` (one allocation, y starts at byte
    4n); ``if (i < n) { result->x[i] = data->x[i] + 10.f; result->y[i] = data->y[i] + 20.f; }``.
    ``n`` threads in ``grid = ceil(n / block)`` blocks. Same flops and requested bytes as
    `aos`, but every access is coalesced.

    Parameters
    ----------
    n : int
        Elements per field, >= 1.
    block : int
        Threads per block, 1 to 1024.

    Returns
    -------
    roofline.Kernel
    """
    n = check_int("n", n)
    block = check_block_1d(block)
    inside = lambda i: i < n  # noqa: E731
    fields = [
        _at(array, kind, _identity, inside, base=base)
        for array, kind in (("data", "load"), ("result", "store"))
        for base in (0, n)
    ]
    # The y field starts at byte 4n of the same allocation: it shares a sector with the
    # end of x when n is not a multiple of 8.
    return _stream(
        "soa",
        {"n": n},
        "result->x[i] = data->x[i] + 10.f; result->y[i] = data->y[i] + 20.f;  (if i < n)",
        threads=n,
        block=block,
        flops=2 * n,
        accesses=fields,
    )
