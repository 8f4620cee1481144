"""Latency: Little's law, the round trips a block makes, and its life queued at the SM's L1 pipe.

A block lives for its loads' round trips (``rounds x latency``), the time its own bytes take
through the SM's port, its barriers (`barriers`) and its L1 passes, queued
behind the other resident blocks' (`queued_life`); Little's law turns the bytes the resident
blocks hold over that life into bandwidth (`achieved_bandwidth`).
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from ..._roofline import _check_positive
from ..._errors import RooflineError
from ._term import finite_nonnegative, finite_positive

__all__ = ["achieved_bandwidth", "overlap", "queued_life", "soft_minimum"]


def achieved_bandwidth(
    bytes_in_flight: float | npt.ArrayLike,
    *,
    peak_bytes_per_second: float,
    latency_seconds: float,
    knee_sharpness: float,
    dispatch_bytes_per_second: float = math.inf,
) -> float | np.ndarray:
    """Bandwidth sustained with `bytes_in_flight` outstanding: Little's law under the roofs.

    Three rates bound a streaming kernel: Little's law (``bytes_in_flight / latency``), the
    DRAM roof and the rate at which blocks can be launched (``dispatch_bytes_per_second``).
    The first two meet in a soft minimum ``(little**-p + roof**-p) ** (-1/p)``: it follows
    the smaller far from the corner and bends below both near it, as the loaded latency
    rises while the memory's queues fill. The block scheduler is no queue of the memory: it
    starts one block per interval whatever the DRAM is doing, so its rate caps the result
    as a plain minimum (a soft one bent the copy sweep's common launches 10 % below their
    measured bandwidth where the three rates come close, docs/prediction.md).

    Parameters
    ----------
    bytes_in_flight : float or array_like
        Bytes of outstanding memory requests across the GPU.
    peak_bytes_per_second : float
        Sustained bandwidth roof, bytes/s.
    latency_seconds : float
        Round-trip latency of the outstanding requests, seconds.
    knee_sharpness : float
        Exponent ``p`` of the soft minimum.
    dispatch_bytes_per_second : float
        Bytes/s the block scheduler can start (SMs x bytes per block / dispatch interval);
        infinite by default.

    Returns
    -------
    float or numpy.ndarray
        Achieved bandwidth, bytes/s.

    Examples
    --------
    >>> round(achieved_bandwidth(1e9, peak_bytes_per_second=3e12, latency_seconds=6e-7,
    ...                          knee_sharpness=4) / 3e12, 3)
    1.0
    """
    peak = finite_positive("peak_bytes_per_second", peak_bytes_per_second)
    latency = finite_positive("latency_seconds", latency_seconds)
    p = finite_positive("knee_sharpness", knee_sharpness)
    dispatch = finite_positive("dispatch_bytes_per_second", dispatch_bytes_per_second, allow_inf=True)
    if type(bytes_in_flight) is float and 0 <= bytes_in_flight < math.inf:
        concurrency = bytes_in_flight  # checked: the array check costs more than the arithmetic
    else:
        concurrency = _check_positive("bytes_in_flight", bytes_in_flight, allow_zero=True)
    # A Little's-law rate past the float range is no limit at all: the soft minimum drops it.
    with np.errstate(over="ignore"):
        little = concurrency / latency
    result = np.minimum(soft_minimum(little, peak, p), dispatch)
    return float(result) if np.ndim(result) == 0 else result


def soft_minimum(a: npt.ArrayLike, b: npt.ArrayLike, sharpness: float) -> np.ndarray:
    """``(a**-p + b**-p) ** (-1/p)`` for ``p`` = `sharpness`: the smaller of two positive rates
    far from where they meet, below both where they do.

    Computed in log space, so that rates of very different size (or a large ``p``) neither
    overflow nor underflow; a rate of 0 counts as 1e-300.

    Examples
    --------
    >>> float(soft_minimum(1e300, 2.0, 64.0)), round(float(soft_minimum(1.0, 1.0, 1.0)), 3)
    (2.0, 0.5)
    """
    log_a, log_b = (-sharpness * np.log(np.maximum(r, 1e-300)) for r in (a, b))
    return np.exp(-np.logaddexp(log_a, log_b) / sharpness)


def queued_life(other_seconds: float, l1_seconds: float, blocks_per_sm: float) -> float:
    """A block's life when the blocks resident on an SM take turns at its L1 pipe.

    Mean-value analysis of a closed queue (Reiser & Lavenberg 1980): `blocks_per_sm` blocks
    each spend `other_seconds` away (latency, port, barriers) and `l1_seconds` in the pipe;
    a block arriving at the pipe finds the queue the others leave there. Exact for one
    block; as blocks are added the life tends to ``blocks x l1_seconds`` (the pipe binds).
    """
    if l1_seconds <= 0:
        return other_seconds
    queue, residence = 0.0, l1_seconds
    whole, part = divmod(max(1.0, blocks_per_sm), 1.0)
    for n in range(1, int(whole) + 1):
        residence = l1_seconds * (1.0 + queue)
        queue = n * residence / (other_seconds + residence)
    if part:  # a partial wave: between whole block counts
        nxt = l1_seconds * (1.0 + queue)
        residence += part * (nxt - residence)
    return other_seconds + residence


def overlap(memory_seconds: float, compute_seconds: float, exponent: float | None) -> float:
    """Two times that run at once, not perfectly: ``(m**p + c**p) ** (1/p)``.

    `compose` joins the memory and compute sides with the calibration's ``overlap_exponent``
    (None in the packaged calibrations: the plain maximum); the DRAM term joins a block's life
    with its SM's issue for one round with ``phase_exponent`` where each thread loads once,
    then computes (`dram_term`). Where the two are equal the result is ``2 ** (1/p)`` times
    either. None: the plain maximum (perfect overlap).

    Raises
    ------
    RooflineError
        A side that is negative or not finite, or an exponent below 1 (p < 1 would make the
        two sides cost more than their sum) or not finite.
    """
    memory_seconds = finite_nonnegative("memory_seconds", memory_seconds)
    compute_seconds = finite_nonnegative("compute_seconds", compute_seconds)
    if exponent is not None and finite_positive("exponent", exponent) < 1:
        raise RooflineError(f"exponent={exponent!r} must be >= 1 (1: the sides add; None: the plain maximum)")
    largest = max(memory_seconds, compute_seconds)
    if exponent is None or largest <= 0:
        return largest
    # relative to the larger side, so that neither overflows
    ratio = min(memory_seconds, compute_seconds) / largest
    return largest * (1.0 + ratio ** exponent) ** (1.0 / exponent)
