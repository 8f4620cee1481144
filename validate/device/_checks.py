"""Argument checks shared by validate's public functions: one message format for each kind.

Wrong types raise TypeError; values out of range raise `roofline.RooflineError` (a
ValueError) naming the parameter, the value and the allowed range.
"""

from __future__ import annotations

import math
import numbers

import numpy as np
from occupancy.common import integer
from roofline import RooflineError

__all__ = ["as_float", "check_callables", "check_count", "check_optional_positive", "check_positive", "positive_series"]


def as_float(value: numbers.Real) -> float:
    """A real number as a float; one past the float range (an int of 400 digits) is infinite."""
    try:
        return float(value)
    except OverflowError:
        return math.inf


def check_callables(**functions: object) -> None:
    """TypeError naming the first argument that is neither callable nor None (None: not given)."""
    for name, function in functions.items():
        if function is not None and not callable(function):
            raise TypeError(f"{name} must be a callable, not {type(function).__name__}")


def check_count(name: str, value: object, low: int, high: int) -> int:
    """`value` as a count from `low` to `high`: TypeError for a non-int, RooflineError out of range."""
    number = integer(name, value)
    if not low <= number <= high:
        raise RooflineError(f"{name}={number} must be from {low} to {high}")
    return number


def check_positive(name: str, value: object, high: float = math.inf, unit: str = "") -> float:
    """`value` as a finite float in (0, `high`]: TypeError for a non-number, RooflineError otherwise."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number, not {type(value).__name__}")
    if not (math.isfinite(number := as_float(value)) and 0 < number <= high):
        at_most = f" and at most {high:g}{unit}" if math.isfinite(high) else ""
        raise RooflineError(f"{name}={value!r} must be > 0 and finite{at_most}")
    return number


def check_optional_positive(name: str, value: object, unit: str = "") -> float | None:
    """None, or `value` checked by `check_positive` (a device figure NVML may not give)."""
    return None if value is None else check_positive(name, value, unit=unit)


def positive_series(name: str, values: object, low: float, high: float, unit: str = "") -> np.ndarray:
    """A 1-D sequence of real numbers, each in [`low`, `high`], as a float array.

    TypeError for anything but a list, tuple or 1-D array of real numbers (bools, strings,
    None refused); RooflineError naming the first value out of range (NaN included).
    """
    if isinstance(values, np.ndarray):
        if values.ndim != 1 or values.dtype.kind not in "iuf":
            raise TypeError(f"{name} must be a 1-D array of real numbers, not a {values.ndim}-D {values.dtype} array")
        items = values.tolist()
    elif isinstance(values, (list, tuple)):
        items = list(values)
    else:
        raise TypeError(f"{name} must be a sequence of numbers, not {type(values).__name__}")
    for i, value in enumerate(items):
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
            raise TypeError(f"{name}[{i}] must be a number, not {type(value).__name__}")
        if not low <= as_float(value) <= high:
            raise RooflineError(f"{name}[{i}]={value!r} is out of range; it must be from {low:g} to {high:g}{unit}")
    return np.array([as_float(v) for v in items], dtype=float)
