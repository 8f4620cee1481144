"""The roofline package's error type, and the checks of numbers that raise it."""

from __future__ import annotations

import math

import numpy as np

__all__ = ["RooflineError", "finite_nonnegative", "finite_positive"]


class RooflineError(ValueError):
    """Bad input to a roofline function: names the parameter, the value and the allowed range.

    Examples
    --------
    >>> raise RooflineError("memory_bandwidth=-1 must be > 0 bytes/s")
    Traceback (most recent call last):
    ...
    roofline._errors.RooflineError: memory_bandwidth=-1 must be > 0 bytes/s
    """


def finite_positive(name: str, value: object, *, allow_inf: bool = False) -> float:
    """`value` as a float > 0 (and finite unless `allow_inf`)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a number, not {type(value).__name__}")
    try:
        figure = float(value)
    except OverflowError:
        figure = math.inf
    if not (figure > 0 and (allow_inf or math.isfinite(figure))):
        raise RooflineError(f"{name}={value!r} must be > 0{'' if allow_inf else ' and finite'}")
    return figure


def finite_nonnegative(name: str, value: object) -> float:
    """`value` as a float >= 0, finite."""
    if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_)) \
            and value == 0:
        return 0.0
    return finite_positive(name, value)
