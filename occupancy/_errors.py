"""The package's error type."""

from __future__ import annotations


class OccupancyError(ValueError):
    """Bad input to the occupancy calculator.

    The message names the parameter, the value received and the allowed range,
    e.g. ``threads_per_block=1056 exceeds the maximum of 1024 on sm_90``.
    """
