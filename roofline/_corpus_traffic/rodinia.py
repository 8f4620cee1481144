# HELPER: READ /work/helper_rules.md FIRST (the rules and the checking script for this task); delete this line when done.
"""Access descriptions of the corpus's rodinia kernels (see the package docstring)."""

from __future__ import annotations

from .._traffic import Access, Coords
from ._description import Describe, Description, defines, tokens

__all__ = ["KERNELS"]

KERNELS: dict[str, Describe] = {}
