"""The probe protocol: what a measurement of ``gpuroof validate`` implements to be run, reported
and calibrated from, and the `RunContext` every probe receives.

A probe is one module (the measurement, its result model, its Markdown) and one line in
`validate._probes.PROBES`: `run_validation` runs the registry in a loop, the report keeps each
result under the probe's name, `render_markdown` renders them in registry order, and the
calibration takes the figures each probe's `figures` gives.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol, TypeVar

from pydantic import BaseModel
from roofline import Calibration, GPU

from ._ceilings import Ceilings
from ._device import DeviceInfo
from ._session import Session

__all__ = ["Figures", "Probe", "RunContext", "Stage"]

#: Calibration field -> (value, how it was measured); `measured_calibration` adds where and when.
Figures = dict[str, tuple[float | None, str]]
#: "hierarchy": after the ceilings, before the occupancy and prediction checks;
#: "model": after the prediction check, with its fitted calibration in the context.
Stage = Literal["hierarchy", "model"]

R = TypeVar("R", bound=BaseModel)


@dataclass
class RunContext:
    """What one validation run hands every probe.

    ``results`` holds the results of the probes run so far, by name (a probe may use an
    earlier one's, as L2 persistence uses the working-set plateaus).
    """

    session: Session
    info: DeviceInfo
    quick: bool
    progress: Callable[[str], None]
    out: Path | None = None
    entry: GPU | None = None
    ceilings: Ceilings | None = None
    fitted: Calibration | None = None
    results: dict[str, BaseModel] = field(default_factory=dict)


class Probe(Protocol[R]):
    """One measurement of the run.

    Attributes
    ----------
    name : str
        The report field that holds its result (``"latency"``).
    step : str
        Its name in progress lines, step times and failures (``"latency ladder"``).
    stage : {"hierarchy", "model"}
        When it runs (see `Stage`).
    """

    name: str
    step: str
    stage: Stage

    def run(self, ctx: RunContext) -> R | None:
        """Measure; None when the probe does not apply (a figure it needs is missing)."""
        ...

    def figures(self, result: R) -> Figures:
        """The calibration figures the result gives (empty when none)."""
        ...

    def render(self, result: R, heading: str, assets: str) -> list[str]:
        """The report's Markdown section: ``heading`` is ``"##"`` or deeper, ``assets`` prefixes images."""
        ...
