"""The roofline package's error type."""

from __future__ import annotations

__all__ = ["RooflineError"]


class RooflineError(ValueError):
    """Bad input to a roofline function: names the parameter, the value and the allowed range.

    Examples
    --------
    >>> raise RooflineError("memory_bandwidth=-1 must be > 0 bytes/s")
    Traceback (most recent call last):
    ...
    roofline._errors.RooflineError: memory_bandwidth=-1 must be > 0 bytes/s
    """
