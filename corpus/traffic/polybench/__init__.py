"""Access descriptions of the corpus's polybench kernels (see the package docstring), one module per
group of PolyBench benchmarks."""

from __future__ import annotations

from .._description import Describe
from . import _factorizations, _products, _statistics, _stencils

__all__ = ["KERNELS"]

#: Kernel id (the part after ``PolyBench-GPU/``) -> its description.
KERNELS: dict[str, Describe] = {
    **_products.KERNELS, **_stencils.KERNELS, **_statistics.KERNELS, **_factorizations.KERNELS,
}
