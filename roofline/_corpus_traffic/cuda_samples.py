"""Access descriptions of the corpus's cuda_samples kernels (see the package docstring)."""

from __future__ import annotations

from .._traffic import Access, Coords
from ._description import Describe, Description, defines, tokens

__all__ = ["KERNELS"]

KERNELS: dict[str, Describe] = {}
