"""Argument checks with messages that name the parameter, the value and the allowed range
(`occupancy.common` re-exports them for every package): `integer`, `check_range`, `sequence`,
and `short_repr`, the one-line repr those messages show a value with."""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from typing import Any

import numpy as np

__all__ = ["check_range", "integer", "sequence", "short_repr"]


def integer(name: str, value: object) -> int:
    """``value`` as a Python int; anything but an integer (a bool or a float too) is a TypeError."""
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be an integer, not bool")
    if isinstance(value, numbers.Integral):
        return int(value)
    raise TypeError(f"{name} must be an integer, not {type(value).__name__}")


def check_range(
    name: str, value: int | np.ndarray, low: int, high: int | None, error: type[Exception], what: str = ""
) -> None:
    """Raise `error` when a number or an array leaves ``[low, high]`` (empty arrays pass).

    ``what`` follows the maximum in the message (a unit, "on sm_90"); ``high`` None: no maximum.
    """
    if isinstance(value, np.ndarray):
        if value.size == 0:
            return
        lo, hi = int(value.min()), int(value.max())
    else:
        lo = hi = value
    if lo < low:
        raise error(f"{name}={lo} is below the minimum of {low}")
    if high is not None and hi > high:
        raise error(f"{name}={hi} exceeds the maximum of {high}{what}")


def sequence(name: str, value: object, what: str = "a sequence") -> list[Any]:
    """``value`` as a list: a string, bytes, a mapping, a 0-d numpy array (iterable in name
    only: iterating it raises numpy's TypeError) or a non-iterable is a TypeError naming `name`.

    ``what`` describes the sequence in the message ("a sequence of numbers").
    """
    if isinstance(value, np.ndarray) and value.ndim == 0:
        raise TypeError(f"{name} must be {what}, not a 0-d numpy array ({short_repr(value, 40)})")
    if isinstance(value, (str, bytes, Mapping)) or not hasattr(value, "__iter__"):
        raise TypeError(f"{name} must be {what}, not {type(value).__name__}")
    return list(value)


def short_repr(value: object, width: int = 80) -> str:
    """``repr(value)`` on one line, cut to `width` characters (an array's repr spans lines)."""
    text = " ".join(repr(value).split())
    return text if len(text) <= width else text[: width - 3] + "..."
