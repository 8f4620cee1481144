"""Roofline math: attainable performance, bounds and time lower bounds.

The model (Williams, Waterman and Patterson, "Roofline: an insightful visual performance
model for multicore architectures", CACM 52(4), 2009; the hierarchical form of Yang,
Kurth and Williams, "Hierarchical Roofline Analysis for GPUs", CCPE 2020): a kernel that
does F flops and moves B_l bytes through memory level l cannot finish sooner than

    T >= max(F / P, B_dram / BW_dram, B_l2 / BW_l2, B_l1 / BW_l1)

so its attainable throughput is F / T = min(P, I_l x BW_l for every level), with
I_l = F / B_l the arithmetic intensity at that level.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt
from pydantic import ConfigDict

from occupancy.common import Displayed, Shown, percent, shown, si

from ._errors import RooflineError
from ._facts import gpu as lookup_gpu
from ._gpu import GPU, MEMORY_LEVELS
from ._kernel import Kernel, KernelLike, kernel_of
from ._precision import check_precision

__all__ = [
    "RooflineArrays",
    "RooflineResult",
    "analyze",
    "analyze_many",
    "attainable",
    "compute_roof",
]

_FROZEN = ConfigDict(frozen=True, extra="forbid")


def _check_positive(name: str, value: npt.ArrayLike, *, allow_zero: bool = False, allow_inf: bool = False) -> np.ndarray:
    """`value` as a float array, every element > 0 (>= 0 with `allow_zero`) and finite
    (+inf too with `allow_inf`)."""
    if isinstance(value, (bool, np.bool_, np.complexfloating)) or not isinstance(
        value, (int, float, np.ndarray, np.number, list, tuple)
    ):
        raise TypeError(f"{name} must be a number or an array of numbers, not {type(value).__name__}")
    try:
        raw = np.asarray(value)
        if raw.dtype.kind not in "iufO":  # booleans, complex numbers, strings
            raise TypeError
        array = raw.astype(float)
    except (TypeError, ValueError, OverflowError):
        raise TypeError(f"{name} must be a number or a rectangular array of real numbers") from None
    bad = ~np.isfinite(array) & ~np.isposinf(array) if allow_inf else ~np.isfinite(array)
    low = array < 0 if allow_zero else array <= 0
    if np.any(bad | low):
        first = array[bad | low].flat[0]
        bound = ">= 0" if allow_zero else "> 0"
        finite = "" if allow_inf else " and finite"
        raise RooflineError(f"{name}={first:g} is out of range; it must be {bound}{finite}")
    return array


def _out(array: np.ndarray) -> float | np.ndarray:
    return float(array) if array.ndim == 0 else array


def attainable(arithmetic_intensity, *, peak_flops_per_second, memory_bandwidth):
    """Attainable flops/s at an arithmetic intensity: ``min(peak, intensity x bandwidth)``.

    Parameters
    ----------
    arithmetic_intensity : float or array_like
        flop/byte, >= 0 (``inf`` allowed: compute-bound).
    peak_flops_per_second : float or array_like
        Compute roof, flops/s, > 0.
    memory_bandwidth : float or array_like
        Memory roof, bytes/s, > 0.

    Returns
    -------
    float or numpy.ndarray
        flops/s; an array when any input is an array (numpy broadcasting).

    Raises
    ------
    RooflineError
        If an input is negative, zero where it must be positive, or NaN.

    Examples
    --------
    >>> attainable(0.25, peak_flops_per_second=19.5e12, memory_bandwidth=1555e9)
    388750000000.0
    >>> attainable([1, 100], peak_flops_per_second=100.0, memory_bandwidth=10.0)
    array([ 10., 100.])
    """
    intensity = _check_positive("arithmetic_intensity", arithmetic_intensity, allow_zero=True, allow_inf=True)
    peak = _check_positive("peak_flops_per_second", peak_flops_per_second)
    bandwidth = _check_positive("memory_bandwidth", memory_bandwidth)
    _broadcast(("arithmetic_intensity", intensity), ("peak_flops_per_second", peak), ("memory_bandwidth", bandwidth))
    # inf x bandwidth (a compute-bound kernel) and overflowing products both take the peak.
    with np.errstate(invalid="ignore", over="ignore"):
        result = np.minimum(peak, intensity * bandwidth)
    return _out(result)


def _broadcast(*named: tuple[str, np.ndarray]) -> tuple[int, ...]:
    """The common shape of arrays, or a RooflineError naming the ones that do not fit."""
    try:
        return np.broadcast_shapes(*(a.shape for _, a in named))
    except ValueError:
        shapes = ", ".join(f"{name} {a.shape}" for name, a in named)
        raise RooflineError(f"array shapes do not broadcast together: {shapes}") from None


def _ratio(flops: float, nbytes: float) -> float:
    if nbytes == 0:
        return math.inf if flops > 0 else 0.0
    return flops / nbytes


class RooflineResult(Displayed):
    """The roofline verdict on one kernel on one GPU.

    ``bound`` is "compute" or "memory"; ``bound_level`` is the memory level that binds
    ("dram", "l2", "l1") or None when compute binds. ``arithmetic_intensity`` is at DRAM;
    ``arithmetic_intensities`` has every level given.
    """

    model_config = _FROZEN

    name: str
    gpu: str
    precision: str
    flops: float
    bytes: dict[str, float]
    arithmetic_intensity: float
    arithmetic_intensities: dict[str, float]
    peak_flops_per_second: float
    bandwidths: dict[str, float]
    attainable_flops_per_second: float
    bound: Literal["compute", "memory"]
    bound_level: Literal["dram", "l2", "l1"] | None
    time_lower_bound_seconds: float
    fraction_of_peak: float
    ridge_point: float

    headline = (
        shown("name", label="kernel"), shown("gpu"),
        Shown("bound", lambda r: r.bound if r.bound_level is None else f"{r.bound} ({r.bound_level})"),
        shown("attainable_flops_per_second", si("FLOP/s"), label="attainable"),
        shown("time_lower_bound_seconds", si("s"), label="time_lower_bound"),
        shown("arithmetic_intensity", lambda x: f"{x:.3g} FLOP/byte"),
        shown("fraction_of_peak", percent),
    )


def compute_roof(device: GPU, kernel: Kernel, precision: str | None = None) -> tuple[str, float]:
    """The precision that bounds `kernel`'s arithmetic on `device`, and the flops/s it allows.

    With `precision` every flop runs at that precision's peak. Otherwise a kernel with
    ``flops_by_precision`` is bound by its slowest part (time ``max_p flops_p / peak_p``;
    the rate is ``flops`` over that time and the precision is that part's), and any other
    kernel by its ``precision``, fp32 when it names none.
    """
    if precision is not None:
        p = check_precision(precision)
        return p, device.peak_flops(p)
    if kernel.flops_by_precision:
        times = {p: f / device.peak_flops(p) for p, f in kernel.flops_by_precision.items()}
        p = max(times, key=lambda k: times[k])
        return p, kernel.flops / times[p] if times[p] > 0 else device.peak_flops(p)
    p = kernel.precision or "fp32"
    return p, device.peak_flops(p)


def analyze(gpu: GPU | str, kernel: Kernel | KernelLike, precision: str | None = None) -> RooflineResult:
    """Bound a kernel on a GPU with the (hierarchical) roofline.

    Parameters
    ----------
    gpu
        A `GPU` or a name for `roofline.gpu`.
    kernel
        A `roofline.Kernel` (a built-in model, your counts, or any object with
        ``flops`` and ``dram_bytes``). Needs ``dram_bytes``; ``flops`` default to 0 (a
        copy); ``l2_bytes`` and ``l1_bytes``, when given, add those roofs.
    precision
        The compute roof for all the flops; default: the kernel's own (its
        ``flops_by_precision``, else its ``precision``, else "fp32"). With flops of
        several precisions the slowest part binds and ``peak_flops_per_second`` is the
        rate the mix allows.

    Returns
    -------
    RooflineResult

    Raises
    ------
    RooflineError
        Unknown GPU or precision, a kernel without ``dram_bytes``, or one with neither
        flops nor bytes.
    TypeError
        If `kernel` is not a kernel.

    Examples
    --------
    >>> from roofline import Kernel
    >>> r = analyze("A100-SXM4-40GB", Kernel(flops=1e9, dram_bytes=12e9))
    >>> r.bound, r.bound_level, round(r.time_lower_bound_seconds * 1e3, 2)
    ('memory', 'dram', 7.72)
    """
    device = lookup_gpu(gpu)
    counts = kernel_of(kernel)
    if counts.dram_bytes is None:
        raise RooflineError(
            f"kernel {counts.name!r} has no dram_bytes; analyze needs them (the DRAM roof); "
            "roofline.memory.traffic() counts them from the access pattern"
        )
    p, peak = compute_roof(device, counts, precision)
    flops = float(counts.flops)
    if flops == 0 and not any(counts.bytes_at(lvl) for lvl in MEMORY_LEVELS):
        raise RooflineError(f"kernel {counts.name!r} has flops=0 and no bytes; nothing to bound")
    times = {"compute": flops / peak}
    nbytes: dict[str, float] = {}
    bandwidths: dict[str, float] = {}
    for level in MEMORY_LEVELS:
        moved = counts.bytes_at(level)
        if moved is None:
            continue
        nbytes[level] = float(moved)
        bandwidths[level] = device.bandwidth(level)
        times[level] = moved / bandwidths[level]
    # Ties go to compute, then to the slowest level: a kernel exactly at the ridge point
    # is reported compute-bound, matching min(P, I x BW) taking P at equality.
    binding = max(times, key=lambda k: times[k])
    time = times[binding]
    # min() keeps fraction_of_peak <= 1 when rounding puts flops/time a hair above peak.
    achievable = peak if binding == "compute" else min(peak, flops / time)
    return RooflineResult(
        name=counts.name,
        gpu=device.name,
        precision=p,
        flops=flops,
        bytes=nbytes,
        arithmetic_intensity=_ratio(flops, nbytes["dram"]),
        arithmetic_intensities={lvl: _ratio(flops, b) for lvl, b in nbytes.items()},
        peak_flops_per_second=peak,
        bandwidths=bandwidths,
        attainable_flops_per_second=achievable,
        bound="compute" if binding == "compute" else "memory",
        bound_level=None if binding == "compute" else binding,
        time_lower_bound_seconds=time,
        fraction_of_peak=achievable / peak,
        ridge_point=peak / bandwidths["dram"],
    )


@dataclass(frozen=True)
class RooflineArrays:
    """`analyze_many` results, one array element per kernel.

    ``bound`` holds "compute"/"memory"; ``bound_level`` holds "dram"/"l2"/"l1" or "".
    """

    arithmetic_intensity: np.ndarray
    attainable_flops_per_second: np.ndarray
    time_lower_bound_seconds: np.ndarray
    fraction_of_peak: np.ndarray
    bound: np.ndarray
    bound_level: np.ndarray


def analyze_many(
    gpu: GPU | str,
    kernels: Sequence[Kernel | KernelLike] | None = None,
    *,
    flops=None,
    dram_bytes=None,
    l2_bytes=None,
    l1_bytes=None,
    precision: str | None = None,
) -> RooflineArrays:
    """Vectorized `analyze`: over a sequence of kernels, or over arrays of flops and bytes.

    Parameters
    ----------
    gpu
        A `GPU` or a name.
    kernels : sequence of Kernel, optional
        Kernels to bound (each needs ``dram_bytes``; a kernel without ``l2_bytes`` or
        ``l1_bytes`` has no roof at that level). Not with the arrays below.
    flops, dram_bytes, l2_bytes, l1_bytes : array_like, optional
        Flops and bytes per level (numpy broadcasting), instead of `kernels`.
    precision : str, optional
        The compute roof of every kernel; default: each kernel's own, "fp32" for arrays.

    Examples
    --------
    >>> r = analyze_many("H100-SXM", flops=[1e9, 1e12], dram_bytes=[1e9, 1e9])
    >>> r.bound.tolist()
    ['memory', 'compute']
    """
    device = lookup_gpu(gpu)
    if kernels is not None:
        if flops is not None or dram_bytes is not None or l2_bytes is not None or l1_bytes is not None:
            raise TypeError("analyze_many() takes kernels or the flops/bytes arrays, not both")
        counts = [kernel_of(k) for k in kernels]
        for k in counts:
            if k.dram_bytes is None:
                raise RooflineError(f"kernel {k.name!r} has no dram_bytes; analyze_many needs them")
        peak = np.array([compute_roof(device, k, precision)[1] for k in counts], dtype=float)
        flops = [float(k.flops) for k in counts]
        dram_bytes = [float(k.dram_bytes) for k in counts]
        l2_bytes, l1_bytes = (
            [float(k.bytes_at(lvl) or 0.0) for k in counts] if any(k.bytes_at(lvl) is not None for k in counts)
            else None
            for lvl in ("l2", "l1")
        )
    else:
        if flops is None or dram_bytes is None:
            raise TypeError("analyze_many() needs kernels, or flops= and dram_bytes=")
        peak = device.peak_flops(check_precision("fp32" if precision is None else precision))
    f = _check_positive("flops", flops, allow_zero=True)
    columns = [("compute", f / peak)]
    given = {"dram": dram_bytes, "l2": l2_bytes, "l1": l1_bytes}
    for level in MEMORY_LEVELS:
        if given[level] is None:
            continue
        b = _check_positive(f"{level}_bytes", given[level], allow_zero=True)
        columns.append((level, b / device.bandwidth(level)))
    _broadcast(("flops", columns[0][1]), *[(f"{level}_bytes", t) for level, t in columns[1:]])
    names = np.array([name for name, _ in columns])
    stacked = np.stack(np.broadcast_arrays(*[t for _, t in columns]))
    which = np.argmax(stacked, axis=0)
    time = np.take_along_axis(stacked, which[None, ...], axis=0)[0]
    if np.any(time == 0):
        raise RooflineError("a kernel has flops=0 and no bytes; nothing to bound")
    achievable = np.minimum(peak, np.broadcast_to(f, time.shape) / time)
    achievable = np.where(names[which] == "compute", peak, achievable)
    with np.errstate(divide="ignore", invalid="ignore"):
        intensity = np.broadcast_to(f, time.shape) / np.broadcast_to(
            _check_positive("dram_bytes", dram_bytes, allow_zero=True), time.shape
        )
    bound_name = names[which]
    return RooflineArrays(
        arithmetic_intensity=intensity,
        attainable_flops_per_second=achievable,
        time_lower_bound_seconds=time,
        fraction_of_peak=achievable / peak,
        bound=np.where(bound_name == "compute", "compute", "memory"),
        bound_level=np.where(bound_name == "compute", "", bound_name),
    )
