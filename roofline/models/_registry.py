"""Build kernel models by name, and the classic suite."""

from __future__ import annotations

import difflib
import functools
import inspect
from collections.abc import Callable

from .._errors import RooflineError
from .._kernel import Kernel
from ._elementwise import (
    aos,
    copy,
    offset_read,
    offset_write,
    soa,
    strided_read,
    strided_write,
    triad,
    vector_add,
)
from ._matmul import matmul_naive, matmul_register_tiled, matmul_tiled
from ._reduction import reduction
from ._stencil import blur
from ._transpose import transpose

__all__ = ["get", "names", "suite"]

_MODELS: dict[str, Callable[..., Kernel]] = {
    f.__name__: f
    for f in (
        aos,
        blur,
        copy,
        matmul_naive,
        matmul_register_tiled,
        matmul_tiled,
        offset_read,
        offset_write,
        reduction,
        soa,
        strided_read,
        strided_write,
        transpose,
        triad,
        vector_add,
    )
}

# Sizes for a large GPU (H100: 50 MB L2): the memory-bound kernels' working sets are
# several times the L2, so DRAM, not L2, serves them.
VECTOR = 1 << 26  # 256 MiB per float array
IMAGE = 4096  # 64 MiB per float image
MATRIX = 4096  # 64 MiB per float matrix
TRANSPOSE = 8192  # 256 MiB per float matrix


def names() -> tuple[str, ...]:
    """Names of the kernel models, sorted.

    Examples
    --------
    >>> from roofline import models
    >>> "matmul_tiled" in models.names()
    True
    """
    return tuple(sorted(_MODELS))


def get(name: str, **params: object) -> Kernel:
    """Build a kernel model by name: ``get("matmul_tiled", m=4096, tile=32)``.

    Parameters
    ----------
    name : str
        One of `names`.
    **params
        The model function's arguments (lists are accepted for ``block``, as JSON gives).

    Returns
    -------
    Kernel

    Raises
    ------
    RooflineError
        Unknown name (the message lists the known ones) or parameters the model does not take.

    Examples
    --------
    >>> from roofline import models
    >>> models.get("blur", width=64, height=64, radius=2).parameters["radius"]
    2
    """
    if not isinstance(name, str):
        raise TypeError(f"name must be a str, got {type(name).__name__}")
    if name not in _MODELS:
        close = difflib.get_close_matches(name, _MODELS, n=3)
        hint = f" (did you mean {', '.join(close)}?)" if close else ""
        raise RooflineError(
            f"unknown kernel model {name!r}{hint}; known: {', '.join(names())}"
        )
    function = _MODELS[name]
    signature = inspect.signature(function)
    try:
        signature.bind(**params)
    except TypeError as error:
        accepted = ", ".join(signature.parameters)
        raise RooflineError(f"{name}(): {error}; parameters: {accepted}") from None
    if isinstance(params.get("block"), list):
        params["block"] = tuple(params["block"])
    return function(**params)


@functools.cache
def suite() -> tuple[Kernel, ...]:
    """The classic kernels at sizes that fill a large GPU.

    Streams of 2**26 floats (copy, vector_add, triad, offset_read with offset 11,
    strided_read with strides 2 and 8, aos, soa, reduction), a 4096 x 4096 blur with
    radius 1 and 3, 4096 x 4096 matmuls (naive, tiled with T = 16 and 32) and 8192 x 8192
    transposes (copy_row, naive_row, naive_column with 16 x 16 blocks; shared and
    shared_padded with 32 x 32 blocks).

    Returns
    -------
    tuple of Kernel

    Examples
    --------
    >>> from roofline import models
    >>> len({m.label for m in models.suite()}) == len(models.suite())
    True
    """
    return (
        copy(VECTOR),
        vector_add(VECTOR),
        triad(VECTOR),
        offset_read(VECTOR, 11),
        strided_read(VECTOR, 2),
        strided_read(VECTOR, 8),
        aos(VECTOR),
        soa(VECTOR),
        reduction(VECTOR),
        blur(IMAGE, IMAGE, radius=1),
        blur(IMAGE, IMAGE, radius=3),
        matmul_naive(MATRIX),
        matmul_tiled(MATRIX, tile=16),
        matmul_tiled(MATRIX, tile=32),
        transpose(TRANSPOSE, variant="copy_row"),
        transpose(TRANSPOSE, variant="naive_row"),
        transpose(TRANSPOSE, variant="naive_column"),
        transpose(TRANSPOSE, variant="shared", block=(32, 32)),
        transpose(TRANSPOSE, variant="shared_padded", block=(32, 32)),
    )
