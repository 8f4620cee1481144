"""The probe protocol: what a step of ``gpuroof validate`` implements to be run, reported and
calibrated from, and the `RunContext` every probe receives.

A probe is one module (the measurement, its result model, its Markdown) and one line in
`validate.report._registry.PROBES`: `run_validation` runs the registry in a loop, in its order; a probe
finds the results of earlier ones in ``RunContext.results`` by name (the references refine the
ceilings, the memory effects need the prediction check's fit, the calibration takes every
probe's figures, the kernel suite the calibration). The report keeps each result in the field
its `Probe.fields` names, `render_markdown` renders the probes' sections in registry order, and
the calibration takes the figures each probe's `figures` gives.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, TypeVar

import numpy as np
import roofline
from roofline import GPU

from ..device import ClockMonitor, DeviceInfo, Session

__all__ = ["Figures", "Probe", "RunContext"]

#: Calibration field -> (value, how it was measured); `measured_calibration` adds where and when.
Figures = dict[str, tuple[float | None, str]]

R = TypeVar("R")
T = TypeVar("T")


@dataclass
class RunContext:
    """What one validation run hands every probe.

    ``results`` holds the results of the probes run so far, by name, and ``figures`` the union of
    their calibration figures (a probe may use an earlier one's: L2 persistence uses the
    working-set plateaus, the calibration the figures).
    """

    session: Session
    info: DeviceInfo
    quick: bool
    progress: Callable[[str], None]
    out: Path | None = None
    entry: GPU | None = None
    clocks: ClockMonitor | None = None
    models: tuple[roofline.Kernel, ...] = ()
    families: tuple[str, ...] = ()
    rng: np.random.Generator = field(default_factory=np.random.default_rng)
    created_utc: str = ""
    host: str = ""
    results: dict[str, object] = field(default_factory=dict)
    figures: Figures = field(default_factory=dict)

    def result(self, name: str, kind: type[T]) -> T | None:
        """The result of the earlier probe ``name`` if it ran and gave a ``kind``, else None."""
        value = self.results.get(name)
        return value if isinstance(value, kind) else None


class Probe(Protocol[R]):
    """One step of the run. Subclass it for the defaults (no needs, failures recorded under the
    step's name, no figures, no section, the result in the field named as the probe).

    Attributes
    ----------
    name : str
        Its key in ``RunContext.results`` (``"latency"``), and the report field of its result.
    step : str
        Its name in progress lines, step times and failures (``"latency ladder"``).
    needs : tuple of str
        Earlier probes without whose results it is not run (`applies`).
    required : bool
        The report cannot be written without it: a failure ends the run.
    error_field : str or None
        The report field that holds its failure (``"prediction_error"``); None records it
        in ``measurement_errors`` under its step.
    """

    name: str
    step: str
    needs: tuple[str, ...] = ()
    required: bool = False
    error_field: str | None = None

    def applies(self, ctx: RunContext) -> bool:
        """Whether the run takes this step at all (no step time, no result when not): by default,
        when every probe it needs has its result."""
        return all(name in ctx.results for name in self.needs)

    def run(self, ctx: RunContext) -> R | None:
        """Measure; None when the probe does not apply (a figure it needs is missing)."""
        ...

    def figures(self, result: R) -> Figures:
        """The calibration figures the result gives (empty when none)."""
        return {}

    def fields(self, result: R) -> Mapping[str, object]:
        """The report fields the result fills: the one named as the probe."""
        return {self.name: result}

    def render(self, result: R, heading: str, assets: str) -> list[str]:
        """The report's Markdown section in the probes' part of the report (empty when its
        section is laid out with the kernels by `render_markdown`); ``heading`` is ``"##"`` or
        deeper, ``assets`` prefixes images."""
        return []
