"""The log axes of a roofline plot: the figures they can place, and their limits in decades.

matplotlib's log axes put ticks up to one axis width beyond their limits (``LogLocator``
strides over the decades), and a tick past 1.8e308 is an infinite float that its formatter
cannot round (OverflowError). Axes held within 1e-100 to 1e100 keep every tick below
1e301; a figure outside that range is refused by name.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator

from ._chart import Ceiling, RooflineChart
from ._errors import RooflineError
from ._instruction_roofline import InstructionRoofline

__all__ = ["PLOT_RANGE", "chart_figures", "decade_ceil", "decade_floor", "instruction_figures", "plottable"]

#: The smallest and largest figure a roofline plot places (flop/s, bytes/s, flop/byte, ...).
PLOT_RANGE = (1e-100, 1e100)
_LOWEST, _HIGHEST = (round(math.log10(end)) for end in PLOT_RANGE)


def plottable(figures: Iterable[tuple[str, float, str]]) -> None:
    """Refuse the first figure a plot cannot place.

    Parameters
    ----------
    figures
        ``(what, value, unit)`` for each figure the plot places, e.g.
        ``("ceiling 'fp32'", 6.7e13, "flop/s")``.

    Raises
    ------
    RooflineError
        A value outside `PLOT_RANGE` (or one whose computation overflowed to infinity or
        underflowed to 0), named with its unit and the range.

    Examples
    --------
    >>> plottable([("ceiling 'dram'", 3.35e12, "bytes/s")])
    >>> plottable([("ridge point of 'fp32' on 'dram'", 1e200, "flop/byte")])
    Traceback (most recent call last):
    ...
    roofline._errors.RooflineError: ridge point of 'fp32' on 'dram'=1e+200 flop/byte is outside the range a roofline plot draws, 1e-100 to 1e+100
    """
    for what, value, unit in figures:
        if not PLOT_RANGE[0] <= value <= PLOT_RANGE[1]:
            raise RooflineError(f"{what}={value:.4g} {unit} is outside the range a roofline plot draws, "
                                f"{PLOT_RANGE[0]:g} to {PLOT_RANGE[1]:g}")


def decade_floor(x: float) -> float:
    """The power of ten at or below `x` (> 0), no lower than `PLOT_RANGE`'s start."""
    return 10.0 ** max(math.floor(math.log10(x)), _LOWEST)


def decade_ceil(x: float) -> float:
    """The power of ten at or above `x` (> 0), no higher than `PLOT_RANGE`'s end."""
    return 10.0 ** min(math.ceil(math.log10(x)), _HIGHEST)


def chart_figures(chart: RooflineChart, primary: Ceiling) -> Iterator[tuple[str, float, str]]:
    """Every figure `plot_roofline` places for `chart`, as ``(what, value, unit)``: the
    ceilings, the ridge points of `primary` (the chart's own compute ceiling), where each
    compute ceiling meets the fastest memory roof, and every kernel point."""
    memory = [c for c in chart.ceilings if c.kind == "memory"]
    fastest = max(memory, key=lambda c: c.value)
    for c in chart.ceilings:
        yield f"ceiling {c.name!r} ({c.origin})", c.value, "flop/s" if c.kind == "compute" else "bytes/s"
    for m in memory:
        yield f"ridge point of {primary.name!r} on {m.name!r}", primary.value / m.value, "flop/byte"
    for c in chart.ceilings:
        if c.kind == "compute":
            yield f"ridge point of {c.name!r} on {fastest.name!r}", c.value / fastest.value, "flop/byte"
    for p in chart.points:
        yield f"{p.kernel!r} at {p.level} arithmetic_intensity", p.arithmetic_intensity, "flop/byte"
        yield f"{p.kernel!r} at {p.level} flops_per_second", p.flops_per_second, "flop/s"
    for b in chart.bandwidth_points:
        yield f"{b.kernel!r} at {b.level} bytes_per_second", b.bytes_per_second, "bytes/s"


def instruction_figures(ir: InstructionRoofline) -> Iterator[tuple[str, float, str]]:
    """Every figure the instruction roofline's panel places, as ``(what, value, unit)``."""
    for c in ir.ceilings:
        yield f"instruction ceiling {c.name!r}", c.value, "per second"
        if c.kind == "memory":
            yield f"instruction ridge point on {c.name!r}", ir.issue_rate / c.value, "instructions/transaction"
    for p in ir.points:
        yield (f"{p.kernel!r} at {p.level} instructions_per_transaction", p.instructions_per_transaction,
               "instructions/transaction")
        yield f"{p.kernel!r} at {p.level} instructions_per_second", p.instructions_per_second, "per second"
