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
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ._errors import RooflineError
from ._gpu import GPU, MEMORY_LEVELS, check_level, gpu as lookup_gpu, translate_validation_error
from ._precision import check_precision

__all__ = [
    "KernelCounts",
    "RooflineArrays",
    "RooflineResult",
    "analyze",
    "analyze_many",
    "attainable",
    "counts_of",
]

_FROZEN = ConfigDict(frozen=True, extra="forbid")


def _check_positive(name: str, value: Any, *, allow_zero: bool = False, allow_inf: bool = False) -> np.ndarray:
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


class KernelCounts(BaseModel):
    """What a kernel does: flops and the bytes it moves at each memory level.

    ``l2_bytes`` and ``l1_bytes`` are optional; give them for a hierarchical roofline.
    Flops are ops for the integer precision.

    Examples
    --------
    >>> KernelCounts(flops=2e9, dram_bytes=8e9).arithmetic_intensity
    0.25
    """

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    flops: float = Field(ge=0)
    dram_bytes: float = Field(ge=0)
    l2_bytes: float | None = Field(default=None, ge=0)
    l1_bytes: float | None = Field(default=None, ge=0)
    name: str = "kernel"
    precision: str | None = None

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise translate_validation_error(exc, "KernelCounts") from None

    @property
    def arithmetic_intensity(self) -> float:
        """DRAM arithmetic intensity in flop/byte (inf when no DRAM bytes move)."""
        return _ratio(self.flops, self.dram_bytes)

    def bytes_at(self, level: str) -> float | None:
        """Bytes moved at `level` ("dram", "l2", "l1"), or None when not given."""
        return {"dram": self.dram_bytes, "l2": self.l2_bytes, "l1": self.l1_bytes}[check_level(level)]


def _ratio(flops: float, nbytes: float) -> float:
    if nbytes == 0:
        return math.inf if flops > 0 else 0.0
    return flops / nbytes


class RooflineResult(BaseModel):
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


def counts_of(kernel: Any) -> KernelCounts:
    """Turn a KernelCounts, a `roofline.models.KernelModel` (or anything with ``flops`` and
    ``dram_bytes``, optionally ``l2_bytes``, ``l1_bytes``, ``name``, ``precision``) into
    `KernelCounts`.

    Raises
    ------
    TypeError
        If `kernel` has no ``flops`` and ``dram_bytes``.
    """
    if isinstance(kernel, KernelCounts):
        return kernel
    if not (hasattr(kernel, "flops") and hasattr(kernel, "dram_bytes")):
        raise TypeError(
            "kernel_or_counts must be a KernelCounts or have flops and dram_bytes "
            f"(a roofline.models.KernelModel), not {type(kernel).__name__}"
        )
    return KernelCounts(
        flops=_count("flops", kernel.flops),
        dram_bytes=_count("dram_bytes", kernel.dram_bytes),
        l2_bytes=_count("l2_bytes", getattr(kernel, "l2_bytes", None)),
        l1_bytes=_count("l1_bytes", getattr(kernel, "l1_bytes", None)),
        name=str(getattr(kernel, "name", "kernel")),
        precision=getattr(kernel, "precision", None),
    )


def _count(name: str, value: Any) -> float | None:
    """A kernel's count as a float (None stays None); KernelCounts checks the range."""
    if value is None:
        return None
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a number, not {type(value).__name__}")
    try:
        return float(value)
    except OverflowError:
        raise RooflineError(f"{name}={value} is too large for a float") from None


def analyze(gpu: GPU | str, kernel_or_counts: Any, precision: str | None = None) -> RooflineResult:
    """Bound a kernel on a GPU with the (hierarchical) roofline.

    Parameters
    ----------
    gpu
        A `GPU` or a name for `roofline.gpu`.
    kernel_or_counts
        A `KernelCounts` or a `roofline.models.KernelModel`.
    precision
        The compute roof; default: the kernel's own ``precision``, else "fp32".

    Returns
    -------
    RooflineResult

    Raises
    ------
    RooflineError
        Unknown GPU or precision, or a kernel with neither flops nor bytes.

    Examples
    --------
    >>> r = analyze("A100-SXM4-40GB", KernelCounts(flops=1e9, dram_bytes=12e9))
    >>> r.bound, r.bound_level, round(r.time_lower_bound_seconds * 1e3, 2)
    ('memory', 'dram', 7.72)
    """
    device = lookup_gpu(gpu)
    counts = counts_of(kernel_or_counts)
    p = check_precision(precision if precision is not None else (counts.precision or "fp32"))
    if counts.flops == 0 and not any(counts.bytes_at(lvl) for lvl in MEMORY_LEVELS):
        raise RooflineError(f"kernel {counts.name!r} has flops=0 and no bytes; nothing to bound")
    peak = device.peak_flops(p)
    times = {"compute": counts.flops / peak}
    nbytes: dict[str, float] = {}
    bandwidths: dict[str, float] = {}
    for level in MEMORY_LEVELS:
        moved = counts.bytes_at(level)
        if moved is None:
            continue
        nbytes[level] = moved
        bandwidths[level] = device.bandwidth(level)
        times[level] = moved / bandwidths[level]
    # Ties go to compute, then to the slowest level: a kernel exactly at the ridge point
    # is reported compute-bound, matching min(P, I x BW) taking P at equality.
    binding = max(times, key=lambda k: times[k])
    time = times[binding]
    # min() keeps fraction_of_peak <= 1 when rounding puts flops/time a hair above peak.
    achievable = peak if binding == "compute" else min(peak, counts.flops / time)
    return RooflineResult(
        name=counts.name,
        gpu=device.name,
        precision=p,
        flops=counts.flops,
        bytes=nbytes,
        arithmetic_intensity=counts.arithmetic_intensity,
        arithmetic_intensities={lvl: _ratio(counts.flops, b) for lvl, b in nbytes.items()},
        peak_flops_per_second=peak,
        bandwidths=bandwidths,
        attainable_flops_per_second=achievable,
        bound="compute" if binding == "compute" else "memory",
        bound_level=None if binding == "compute" else binding,
        time_lower_bound_seconds=time,
        fraction_of_peak=achievable / peak,
        ridge_point=peak / bandwidths.get("dram", device.memory_bandwidth),
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
    *,
    flops,
    dram_bytes,
    l2_bytes=None,
    l1_bytes=None,
    precision: str = "fp32",
) -> RooflineArrays:
    """Vectorized `analyze` over arrays of flops and bytes (numpy broadcasting).

    Examples
    --------
    >>> r = analyze_many("H100-SXM", flops=[1e9, 1e12], dram_bytes=[1e9, 1e9])
    >>> r.bound.tolist()
    ['memory', 'compute']
    """
    device = lookup_gpu(gpu)
    p = check_precision(precision)
    peak = device.peak_flops(p)
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
