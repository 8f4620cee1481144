"""The data behind a roofline plot: ceilings and kernel points, exportable and re-plottable."""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

import numpy as np
from occupancy.common import RealNumbers, sequence
from pydantic import ConfigDict, Field, field_validator

from ._errors import RooflineError
from ._facts import gpu as lookup_gpu
from ._gpu import GPU, MEMORY_LEVELS, check_level
from ._kernel import Kernel, KernelLike, kernel_of
from ._precision import PRECISION_LABELS, PRECISIONS, check_precision
from ._roofline import analyze

__all__ = [
    "BandwidthPoint",
    "CHART_SCHEMA_VERSION",
    "Ceiling",
    "ChartPoint",
    "Measurements",
    "RooflineChart",
    "format_bandwidth",
    "kernel_labels",
    "roofline_chart",
]

#: Version of the JSON/CSV schema written by `save_chart`; bumped on incompatible changes.
#: Version 2 added ``bandwidth_points``; 3: the CSV ends with an "end" record holding its row
#: count, so a truncated file is refused; 4: a point's ``origin`` is "roofline" (the bound,
#: called "predicted" before), "model" (the time model's time) or "measured". JSON of
#: versions 1 to 3 and CSV of version 3 still load, their "predicted" points as "roofline".
CHART_SCHEMA_VERSION = 4

#: Where a kernel point comes from: the roofline's bound, the time model (`roofline.predict`)
#: or a measurement. "predicted", the name of "roofline" before schema version 4, is read as it.
Origin = Literal["roofline", "model", "measured"]
_FORMER_ORIGINS = {"predicted": "roofline"}

# A chart holds finite figures only: a plot cannot place an infinite ceiling or point.
_FROZEN = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)
LEVEL_LABELS = {"dram": "DRAM", "l2": "L2", "l1": "L1/shared"}


class Ceiling(RealNumbers):
    """One roof: a compute peak (flops/s) or a memory bandwidth (bytes/s).

    ``origin`` is "theoretical" (derived from the datasheet) or "measured".
    """

    model_config = _FROZEN

    name: str
    kind: Literal["compute", "memory"]
    value: float = Field(gt=0)
    origin: Literal["theoretical", "measured"] = "theoretical"
    label: str = ""
    formula: str = ""
    source: str = ""


def _current_origin(value: object) -> object:
    """An origin under its current name: charts and code from before schema version 4 say
    "predicted" for the roofline bound."""
    return _FORMER_ORIGINS.get(value, value) if isinstance(value, str) else value


class ChartPoint(RealNumbers):
    """One kernel at one memory level: its arithmetic intensity there and its throughput.

    ``origin`` is "roofline" (the roofline's attainable flops/s, its time lower bound),
    "model" (flops over the time model's time, `roofline.predict`) or "measured".
    "predicted", the former name of "roofline", is accepted and stored as "roofline".
    """

    model_config = _FROZEN

    kernel: str
    level: Literal["dram", "l2", "l1"] = "dram"
    arithmetic_intensity: float = Field(gt=0)
    flops_per_second: float = Field(gt=0)
    origin: Origin = "roofline"
    bound: str = ""

    _origin = field_validator("origin", mode="before")(_current_origin)


class BandwidthPoint(RealNumbers):
    """One kernel's bandwidth at one memory level, bytes/s: every kernel has one, also a
    kernel without flops, which has no place on the flop/s roofline.

    ``origin`` is "roofline" (bytes over the roofline time bound), "model" (bytes over the
    time model's time) or "measured"; "predicted" is read as "roofline".
    """

    model_config = _FROZEN

    kernel: str
    level: Literal["dram", "l2", "l1"] = "dram"
    bytes_per_second: float = Field(gt=0)
    origin: Origin = "roofline"

    _origin = field_validator("origin", mode="before")(_current_origin)


class RooflineChart(RealNumbers):
    """Everything a roofline plot draws; `save_chart` writes it, `plot_roofline` draws it."""

    model_config = _FROZEN

    schema_version: int = CHART_SCHEMA_VERSION
    gpu: str
    precision: str = "fp32"
    title: str = ""
    ceilings: tuple[Ceiling, ...]
    points: tuple[ChartPoint, ...] = ()
    bandwidth_points: tuple[BandwidthPoint, ...] = ()

    def ceiling(self, name: str, origin: str = "theoretical") -> Ceiling:
        """The ceiling called `name` ("fp32", "dram", ...) of the given origin."""
        if not isinstance(name, str) or not isinstance(origin, str):
            raise TypeError("name and origin must be str")
        for c in self.ceilings:
            if c.name == name and c.origin == origin:
                return c
        raise RooflineError(
            f"name={name!r} (origin={origin!r}) is not a ceiling of this chart; "
            f"ceilings: {', '.join(sorted({c.name for c in self.ceilings}))}"
        )


def _fmt_flops(value: float, name: str) -> str:
    unit = "TOP/s" if name == "int8_tensor" else "TFLOP/s"
    return f"{value / 1e12:.4g} {unit}"


def _compute_label(name: str, value: float) -> str:
    return f"{PRECISION_LABELS.get(name, name)} {_fmt_flops(value, name)}"


def format_bandwidth(bytes_per_second: float) -> str:
    """Bytes/s as text in GB/s below 10 TB/s, in TB/s above (``"3352 GB/s"``, ``"33.45 TB/s"``)."""
    if bytes_per_second >= 10e12:
        return f"{bytes_per_second / 1e12:.4g} TB/s"
    return f"{bytes_per_second / 1e9:.4g} GB/s"


def _memory_label(level: str, value: float) -> str:
    return f"{LEVEL_LABELS[level]} {format_bandwidth(value)}"


def kernel_labels(kernels: Iterable[Kernel | KernelLike]) -> list[str]:
    """Unique display names: the kernel's name, plus the parameters that tell apart kernels
    of the same name (``"transpose variant=shared"``, ``"matmul_tiled tile=32"``)."""
    kernels = list(kernels)
    names = [str(getattr(k, "name", "kernel")) for k in kernels]
    labels = list(names)
    for name in set(names):
        same = [i for i, n in enumerate(names) if n == name]
        if len(same) < 2:
            continue
        params = [dict(getattr(kernels[i], "parameters", {}) or {}) for i in same]
        keys = sorted({k for p in params for k in p})
        differing = [k for k in keys if len({repr(p.get(k)) for p in params}) > 1]
        for i, p in zip(same, params):
            # A named variant says enough ("transpose shared"); its block size follows it.
            extra = str(p["variant"]) if "variant" in differing else (
                " ".join(f"{k}={p.get(k)}" for k in differing)
            )
            labels[i] = f"{name} {extra}" if extra else f"{name} #{same.index(i) + 1}"
    return labels




def _measured(name: str, value: object) -> float:
    """A measured figure: a finite number > 0."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number, not {type(value).__name__}")
    try:
        figure = float(value)
    except OverflowError:
        figure = math.inf
    if not (math.isfinite(figure) and figure > 0):
        raise RooflineError(f"{name}={value!r} must be > 0 and finite")
    return figure


@dataclass(frozen=True)
class Measurements:
    """What was measured of a chart's GPU and kernels, drawn next to the roofline's figures.

    Attributes
    ----------
    ceilings : mapping of str to float, optional
        Measured roofs by name ("fp32", "dram", ...), flops/s or bytes/s, drawn next to the
        theoretical ones.
    points : mapping of str to float, or iterable of ChartPoint, optional
        Measured kernel throughput: kernel name -> flops/s (placed at that kernel's
        arithmetic intensities), or `ChartPoint` objects.
    seconds : mapping of str to float, optional
        Measured time of each kernel, kernel name -> seconds: the measured point of every
        kernel, on the flop/s roofline (when it has flops) and on the bandwidth panel (each
        level's bytes over that time), so kernels without flops are shown too.
    """

    ceilings: Mapping[str, float] | None = None
    points: Mapping[str, float] | Iterable[ChartPoint] | None = None
    seconds: Mapping[str, float] | None = None


def roofline_chart(
    gpu: GPU | str,
    kernels: Iterable[Kernel | KernelLike] = (),
    *,
    precision: str | None = None,
    precisions: Iterable[str] | None = None,
    levels: Iterable[str] = MEMORY_LEVELS,
    measured: Measurements | None = None,
    model_seconds: Mapping[str, float] | None = None,
    title: str = "",
) -> RooflineChart:
    """Collect the ceilings and kernel points of a roofline plot.

    Parameters
    ----------
    gpu
        A `GPU` or a name.
    kernels
        `roofline.Kernel` objects (built-in models included), each with ``dram_bytes``;
        each gives one roofline-bound point per memory level with bytes (origin
        "roofline": the same attainable flops/s at each level's arithmetic intensity, so a
        kernel's points line up horizontally).
    precision
        The compute roof kernels are bounded by (and whose ridge points are marked);
        default: the first kernel's precision, else "fp32".
    precisions
        Compute ceilings to draw; default the precisions of the kernels (every precision
        the GPU supports when there are no kernels).
    levels
        Memory roofs to draw, from "dram", "l2", "l1" (default all three).
    measured
        Measured ceilings, kernel throughputs and kernel times (`Measurements`), drawn next
        to the roofline's.
    model_seconds
        The time model's time of kernels, kernel name -> seconds (``roofline.predict(...)
        .seconds``): each such kernel also gets points of origin "model", its flops and
        each level's bytes over that time, the time `gpuroof predict` prints.
    title
        The chart's title; default ``"Roofline: <gpu>"``.

    Raises
    ------
    RooflineError
        Unknown GPU, precision or level, or a measured value or model time for an unknown
        kernel, or a time that is not a positive number of seconds.

    Examples
    --------
    >>> from roofline.chart import Measurements, roofline_chart
    >>> chart = roofline_chart("H100 SXM", measured=Measurements(ceilings={"dram": 3.0e12}))
    >>> [c.origin for c in chart.ceilings if c.name == "dram"]
    ['theoretical', 'measured']
    >>> import roofline
    >>> copy = roofline.models.copy(1 << 20)
    >>> chart = roofline_chart("H100 SXM", [copy], model_seconds={copy.name: 4e-6})
    >>> [(b.origin, round(b.bytes_per_second / 1e9)) for b in chart.bandwidth_points if b.level == "dram"]
    [('roofline', 3352), ('model', 2097)]
    """
    device = lookup_gpu(gpu)
    kernels = sequence("kernels", kernels)
    if not isinstance(title, str):
        raise TypeError(f"title must be a str, not {type(title).__name__}")
    if measured is None:
        measured = Measurements()
    elif not isinstance(measured, Measurements):
        raise TypeError(f"measured must be a Measurements, not {type(measured).__name__}")
    if precisions is not None:
        precisions = sequence("precisions", precisions)
    levels = sequence("levels", levels)
    kernel_counts = [
        kernel_of(k).model_copy(update={"name": label})
        for k, label in zip(kernels, kernel_labels(kernels))
    ]
    primary, chosen = _chosen_precisions(device, kernel_counts, precision, precisions)
    chosen_levels = [lvl for lvl in MEMORY_LEVELS if lvl in {check_level(x) for x in levels}]
    if "dram" not in chosen_levels:
        chosen_levels.insert(0, "dram")
    ceilings = _ceilings(device, chosen, chosen_levels) + _measured_ceilings(measured.ceilings)
    points, bandwidth_points, intensities = _bound_points(device, kernel_counts, primary, chosen_levels)
    modelled, modelled_bandwidth = _timed_points(device, kernel_counts, primary, model_seconds, bandwidth_points,
                                                 intensities, origin="model", what="model_seconds")
    points += _measured_points(measured.points, intensities)
    timed, timed_bandwidth = _timed_points(device, kernel_counts, primary, measured.seconds, bandwidth_points,
                                           intensities, origin="measured", what="measured.seconds")
    return RooflineChart(
        gpu=device.name,
        precision=primary,
        title=title or f"Roofline: {device.name}",
        ceilings=tuple(ceilings),
        points=tuple(points + modelled + timed),
        bandwidth_points=tuple(bandwidth_points + modelled_bandwidth + timed_bandwidth),
    )


def _chosen_precisions(device: GPU, kernel_counts: list[Kernel], precision: str | None,
                       precisions: list[str] | None) -> tuple[str, list[str]]:
    """The chart's precision and the precisions whose compute ceilings it draws, in order."""
    primary = check_precision(
        precision if precision is not None
        else next((k.precision for k in kernel_counts if k.precision), None) or "fp32"
    )
    if precisions is not None:
        chosen = [check_precision(p) for p in precisions]
    elif kernel_counts:
        # Only the ceilings the kernels can reach: a ceiling of a precision no kernel uses
        # (FP8 at 1979 TFLOP/s over FP32 kernels) stretches the axis and explains nothing.
        chosen = [check_precision(k.precision or "fp32") for k in kernel_counts]
    else:
        chosen = list(device.supported_precisions())
    if primary not in chosen:
        chosen.append(primary)
    return primary, [p for p in PRECISIONS if p in chosen]


def _ceilings(device: GPU, precisions: list[str], levels: list[str]) -> list[Ceiling]:
    """The theoretical compute ceilings and memory roofs, with their derivations."""
    ceilings: list[Ceiling] = []
    for p in precisions:
        d = device.peak_derivation(p)
        ceilings.append(
            Ceiling(name=p, kind="compute", value=d.value, label=_compute_label(p, d.value),
                    formula=d.formula, source=d.source)
        )
    for lvl in levels:
        d = device.bandwidth_derivation(lvl)
        ceilings.append(
            Ceiling(name=lvl, kind="memory", value=d.value, label=_memory_label(lvl, d.value),
                    formula=d.formula, source=d.source)
        )
    return ceilings


def _measured_ceilings(measured_ceilings: Mapping[str, float] | None) -> list[Ceiling]:
    """The measured roofs, each a precision's or a memory level's."""
    if measured_ceilings is not None and not isinstance(measured_ceilings, Mapping):
        raise TypeError(f"measured.ceilings must be a mapping of name to value, not {type(measured_ceilings).__name__}")
    ceilings = []
    for name, raw in (measured_ceilings or {}).items():
        value = _measured(f"measured.ceilings[{name!r}]", raw)
        try:
            key, kind = check_precision(name), "compute"
        except RooflineError:
            try:
                key, kind = check_level(name), "memory"
            except RooflineError:
                raise RooflineError(
                    f"measured.ceilings has {name!r}, which is neither a precision "
                    f"({', '.join(PRECISIONS)}) nor a memory level ({', '.join(MEMORY_LEVELS)})"
                ) from None
        label = _compute_label(key, value) if kind == "compute" else _memory_label(key, value)
        ceilings.append(
            Ceiling(name=key, kind=kind, value=float(value), origin="measured",
                    label=f"{label} (measured)", source="measured")
        )
    return ceilings


def _bound_points(device: GPU, kernel_counts: list[Kernel], primary: str, levels: list[str],
                  ) -> tuple[list[ChartPoint], list[BandwidthPoint], dict[str, dict[str, float]]]:
    """Each kernel's roofline-bound points at each drawn level (flops/s and bytes/s), and its
    arithmetic intensity at each, by kernel name."""
    points: list[ChartPoint] = []
    bandwidth_points: list[BandwidthPoint] = []
    intensities: dict[str, dict[str, float]] = {}
    for counts in kernel_counts:
        result = analyze(device, counts, primary)
        intensities[counts.name] = {}
        for lvl, moved in result.bytes.items():
            if lvl in levels and moved > 0:
                bandwidth_points.append(BandwidthPoint(kernel=counts.name, level=lvl,
                                                       bytes_per_second=moved / result.time_lower_bound_seconds))
        for lvl, ai in result.arithmetic_intensities.items():
            if lvl not in levels or not (0 < ai < math.inf):
                continue
            intensities[counts.name][lvl] = ai
            points.append(
                ChartPoint(kernel=counts.name, level=lvl, arithmetic_intensity=ai,
                           flops_per_second=result.attainable_flops_per_second,
                           bound=result.bound_level or result.bound)
            )
    return points, bandwidth_points, intensities


def _measured_points(measured_points: Mapping[str, float] | Iterable[ChartPoint] | None,
                     intensities: dict[str, dict[str, float]]) -> list[ChartPoint]:
    """The measured throughput of kernels, at their arithmetic intensities (or as given)."""
    points: list[ChartPoint] = []
    if isinstance(measured_points, Mapping):
        for name, value in measured_points.items():
            if name not in intensities:
                raise RooflineError(
                    f"measured.points has kernel {name!r}, which is not among kernels: "
                    f"{', '.join(intensities) or '(none)'}"
                )
            flops_per_second = _measured(f"measured.points[{name!r}]", value)
            for lvl, ai in intensities[name].items():
                points.append(ChartPoint(kernel=name, level=lvl, arithmetic_intensity=ai,
                                         flops_per_second=flops_per_second, origin="measured"))
    elif measured_points is not None:
        given = sequence("measured.points", measured_points)
        for point in given:
            if not isinstance(point, ChartPoint):
                raise TypeError(
                    f"measured.points must be a mapping of kernel name to flops/s or ChartPoint objects, "
                    f"not {type(point).__name__}"
                )
        points.extend(given)
    return points


def _timed_points(device: GPU, kernel_counts: list[Kernel], primary: str, kernel_seconds: Mapping[str, float] | None,
                  bandwidth_points: list[BandwidthPoint], intensities: dict[str, dict[str, float]], *,
                  origin: Origin, what: str) -> tuple[list[ChartPoint], list[BandwidthPoint]]:
    """The points of kernels with a time (measured, or the time model's): flops and each
    level's bytes over that time, of the given origin; `what` names the argument in errors."""
    moved = {b.kernel: {} for b in bandwidth_points}
    for b in bandwidth_points:
        moved[b.kernel][b.level] = b.bytes_per_second
    flops = {k.name: k.flops for k in kernel_counts}
    if kernel_seconds is not None and not isinstance(kernel_seconds, Mapping):
        raise TypeError(f"{what} must be a mapping of kernel name to seconds, not {type(kernel_seconds).__name__}")
    points: list[ChartPoint] = []
    timed: list[BandwidthPoint] = []
    for name, seconds in (kernel_seconds or {}).items():
        if name not in flops:
            raise RooflineError(
                f"{what} has kernel {name!r}, which is not among kernels: {', '.join(flops) or '(none)'}"
            )
        if isinstance(seconds, bool) or not (isinstance(seconds, (int, float)) and math.isfinite(seconds) and seconds > 0):
            raise RooflineError(f"{what}[{name!r}]={seconds!r} must be a positive number of seconds")
        bound = analyze(device, next(k for k in kernel_counts if k.name == name), primary).time_lower_bound_seconds
        for lvl, rate in moved.get(name, {}).items():
            # the roofline point is bytes over the bound: rescale it to this time
            timed.append(BandwidthPoint(kernel=name, level=lvl, origin=origin, bytes_per_second=rate * bound / seconds))
        if flops[name] > 0:
            for lvl, ai in intensities[name].items():
                points.append(ChartPoint(kernel=name, level=lvl, arithmetic_intensity=ai,
                                         flops_per_second=flops[name] / seconds, origin=origin))
    return points, timed
