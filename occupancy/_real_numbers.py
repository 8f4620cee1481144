"""Real numbers at the model boundary: a complex one is refused, never cut to its real part.

pydantic (lax mode) takes for a ``float`` or ``int`` field anything with ``__float__`` or
``__int__``: numpy's complex scalars have both, and hand over their real part with no more
than a ComplexWarning, so ``Ceiling(value=np.complex128(3 + 4j))`` would hold 3.0. The
models that take the caller's numbers subclass `RealNumbers`, whose one check runs before
the fields' own.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, model_validator

__all__ = ["RealNumbers", "complex_at"]


def complex_at(value: object, where: str = "") -> tuple[str, object] | None:
    """The place (``field.key[index]``) and value of the first complex number inside `value`,
    looking through mappings, lists and tuples; None when there is none.

    Examples
    --------
    >>> import numpy as np
    >>> complex_at({"peaks": {"fp32": np.complex128(1 + 2j)}, "n": 3})
    ('peaks.fp32', np.complex128(1+2j))
    >>> complex_at({"n": 3.0, "dims": (1, 2)}) is None
    True
    """
    if isinstance(value, numbers.Complex) and not isinstance(value, numbers.Real):
        return where, value
    if isinstance(value, Mapping):
        items: Any = ((f"{where}.{key}" if where else str(key), item) for key, item in value.items())
    elif isinstance(value, (list, tuple)):
        items = ((f"{where}[{i}]", item) for i, item in enumerate(value))
    else:
        return None
    for place, item in items:
        if (found := complex_at(item, place)) is not None:
            return found
    return None


class RealNumbers(BaseModel):
    """The base of the models that take the caller's numbers: a complex number in any field
    (nested ones too) is a TypeError naming the field, the value and its type."""

    @model_validator(mode="before")
    @classmethod
    def _refuse_complex(cls, data: object) -> object:
        found = complex_at(data) if isinstance(data, Mapping) else None
        if found is not None:
            where, value = found
            raise TypeError(f"{cls.__name__} {where}={value!r} must be a real number, not {type(value).__name__}")
        return data
