"""Access descriptions of the corpus's cuda_samples kernels (see the package docstring), one module
per group of samples."""

from __future__ import annotations

from .._description import Describe
from . import _atomics, _basics, _reduction, _sorting, _transpose

__all__ = ["KERNELS"]

#: Kernel id (the part after ``cuda-samples/``) -> its description.
KERNELS: dict[str, Describe] = {
    **_basics.KERNELS, **_atomics.KERNELS, **_reduction.KERNELS, **_sorting.KERNELS, **_transpose.KERNELS,
}
