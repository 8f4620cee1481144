"""What the probes timed at ``iters`` and at ``2 x iters`` operations a thread share: a figure
from the time the longer launch adds (the launch's cost cancels), its display, and the
standalone run that prints the probe's section and writes its figures."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from ..device import DeviceInfo, Session, StopRules, benchmark, open_session, query_device
from ._probe import Probe

__all__ = ["added_figures", "doubled_times", "run_alone", "shown"]


def added_figures(rows: Iterable[tuple[str, str, int]], iters: int,
                  seconds: Mapping[str, tuple[float, float]]) -> dict[str, float | None]:
    """Each figure from its kernel's ``(seconds at iters, seconds at 2 x iters)``.

    `rows` are ``(kernel, figure name, threads)``. A figure named ``*_seconds`` is the added
    time over ``iters`` (one thread's chain); any other is ``threads x iters`` operations over
    the added time, per second. None where the longer launch added no time.
    """
    figures: dict[str, float | None] = {}
    for kernel, name, threads in rows:
        short, long = seconds[kernel]
        added = long - short
        if added <= 0:
            figures[name] = None
        elif name.endswith("_seconds"):
            figures[name] = added / iters
        else:
            figures[name] = threads * iters / added
    return figures


def doubled_times(session: Session, kernels: Mapping[str, Any], shapes: Mapping[str, tuple[int, int]],
                  buffers: tuple[object, ...], iters: int, *, quick: bool) -> dict[str, tuple[float, float]]:
    """Each kernel's median time at ``iters`` and at ``2 x iters`` operations a thread.

    `shapes` maps a kernel to its ``(blocks, threads)``; each launch takes `buffers` and the
    operations as its last argument (``int``). Two warm-up launches, then 5 (`quick`) or 9
    timed ones.
    """
    rules = StopRules(warmup=2, repetitions=5 if quick else 9)
    seconds = {kernel: tuple(
        benchmark(session.launcher(kernels[kernel], (grid, 1, 1), (block, 1, 1), (*buffers, np.int32(n))),
                  timer=session.timer, rules=rules).median_seconds for n in (iters, 2 * iters))
        for kernel, (grid, block) in shapes.items()}
    session.synchronize()
    return seconds


def shown(value: float | None) -> str:
    """A figure as a table shows it: nanoseconds for a time, G/s for a rate."""
    if value is None:
        return "none added"
    return f"{value * 1e9:.1f} ns" if value < 1 else f"{value / 1e9:.2f} G/s"


def run_alone(probe: Probe[Any], measure: Callable[..., Any], out: Path | None) -> int:
    """Measure with ``measure(session, info, progress=...)`` on the first GPU, print the probe's
    section (progress on stderr), write ``out`` (JSON: device, result, figures).

    Returns
    -------
    int
        The number of figures not measured (a longer launch that added no time).
    """
    session: Session = open_session()
    info: DeviceInfo = query_device(session)
    result = measure(session, info, progress=lambda message: print(message, file=sys.stderr))
    print("\n".join(probe.render(result, "##", "")))
    figures = probe.figures(result)
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps({"device": info.name, "result": result.model_dump(mode="json"),
                                   "figures": figures}, indent=1) + "\n")
    return sum(1 for value, _ in figures.values() if value is None)
