"""Models of the classic CUDA kernels: flops, requested bytes, sector and DRAM traffic, launch.

Each function returns a `roofline.Kernel` whose docstring gives the exact kernel (indexing,
guards, grid and block), so a CUDA implementation can do exactly what the model counts.

Examples
--------
>>> from roofline import models
>>> round(models.matmul_naive(4096).arithmetic_intensity, 4)  # 2 flops per 8 bytes
0.25
>>> round(models.matmul_tiled(4096, tile=16).arithmetic_intensity, 2)
3.99
"""

from ._catalog import ModelInfo, ModelParameter, catalog, describe
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
from ._reduction import REDUCTION_VARIANTS, ReductionSteps, reduction, reduction_steps
from ._registry import get, names, suite
from ._stencil import blur
from ._transpose import TRANSPOSE_VARIANTS, transpose

__all__ = [
    "ModelInfo",
    "ModelParameter",
    "REDUCTION_VARIANTS",
    "ReductionSteps",
    "TRANSPOSE_VARIANTS",
    "aos",
    "blur",
    "catalog",
    "copy",
    "describe",
    "get",
    "matmul_naive",
    "matmul_register_tiled",
    "matmul_tiled",
    "names",
    "offset_read",
    "offset_write",
    "reduction",
    "reduction_steps",
    "soa",
    "strided_read",
    "strided_write",
    "suite",
    "transpose",
    "triad",
    "vector_add",
]
