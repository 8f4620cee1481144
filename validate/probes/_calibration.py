"""The calibration a validation run writes: the fitted model parameters plus the measured figures.

`run_prediction_check` fits the model's parameters (latency round trip, SM bandwidth, block
dispatch, knee, launch overhead); the probes (`validate.probes.Probe.figures`: the latency
ladder, the launch measurements, the working-set sweep, the memory effects) add their figures
under `roofline.Calibration`'s named fields, each with its source (how it was measured, on
which GPU, when, by which command).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from occupancy.common import pydantic_error
from pydantic import ValidationError
from roofline import Calibration, RooflineError

from ..device import DeviceInfo, JsonDict
from ._prediction import PredictionCheck
from ._probe import Probe, RunContext

__all__ = ["CalibrationProbe", "RunCalibration", "measured_calibration", "measurement_origin"]


def measurement_origin(info: DeviceInfo, created_utc: str, command: str = "gpuroof validate") -> str:
    """'an NVIDIA H200, CUDA driver 13.0, 2026-11-22, gpuroof validate': where a figure was measured."""
    return f"an {info.name}, CUDA driver {info.driver_version}, {created_utc[:10]}, {command}"


def measured_calibration(fitted: Mapping[str, object], *, origin: str,
                         figures: Mapping[str, tuple[float | None, str]] | None = None) -> JsonDict:
    """`fitted` (a `roofline.Calibration` as a dict) with the run's measured figures added.

    Parameters
    ----------
    fitted : mapping
        The prediction check's calibration (``PredictionCheck.calibration``).
    origin : str
        Where and when (`measurement_origin`), appended to every new source.
    figures : mapping, optional
        Calibration field -> (value, how it was measured), the union of the probes'
        `figures` (`validate.probes.Probe`); a None value is not measured and left out.

    Returns
    -------
    dict
        Valid as a `roofline.Calibration`; figures not measured stay as fitted.

    Raises
    ------
    TypeError
        For an argument of the wrong type (`fitted` or `figures` not a mapping, a figure
        not a (value, description) pair).
    roofline.RooflineError
        When `fitted` with the measured figures is not a valid `roofline.Calibration`.

    Examples
    --------
    >>> import roofline
    >>> base = roofline.calibration("H200").model_dump()
    >>> out = measured_calibration(base, origin="a test")
    >>> roofline.Calibration.model_validate(out).dram_latency_seconds is None
    True
    """
    if not isinstance(fitted, Mapping):
        raise TypeError(f"fitted must be a mapping (a Calibration as a dict), not {type(fitted).__name__}")
    if not isinstance(origin, str):
        raise TypeError(f"origin must be a str, not {type(origin).__name__}")
    if figures is not None and not isinstance(figures, Mapping):
        raise TypeError(f"figures must be a mapping of name to (value, description), not {type(figures).__name__}")
    values: dict[str, float] = {}
    sources: dict[str, str] = {}
    for name, figure in (figures or {}).items():
        if not (isinstance(figure, tuple) and len(figure) == 2 and isinstance(figure[1], str)):
            raise TypeError(f"figures[{name!r}] must be a (value, description) pair, not {figure!r}")
        value, how = figure
        if value is not None:
            values[name] = float(value)
            sources[name] = f"measured: {how}; {origin}"
    out = dict(fitted)
    out.update(values)
    known = fitted.get("sources", {})
    if not isinstance(known, Mapping):
        raise TypeError(f"fitted['sources'] must be a mapping of names to sources, not {type(known).__name__}")
    out["sources"] = {**dict(known), **sources}
    try:
        Calibration.model_validate(out)
    except ValidationError as exc:
        raise pydantic_error(exc, RooflineError, "fitted with the measured figures is not a valid calibration") from None
    return out


@dataclass(frozen=True)
class RunCalibration:
    """The run's calibration: as report.json and calibration.json hold it, and as the model takes it."""

    values: JsonDict
    calibration: Calibration


class CalibrationProbe(Probe[RunCalibration]):
    """The prediction check's fit with every earlier probe's figures (`measured_calibration`),
    which the kernel suite and the families predict with; a failure is the prediction check's."""

    name = "calibration"
    step = "calibration"
    needs = ("prediction",)
    error_field = "prediction_error"

    def run(self, ctx: RunContext) -> RunCalibration | None:
        prediction = ctx.result("prediction", PredictionCheck)
        if prediction is None:
            return None
        values = measured_calibration(prediction.calibration, origin=measurement_origin(ctx.info, ctx.created_utc),
                                      figures=ctx.figures)
        return RunCalibration(values, Calibration.model_validate(values))

    def fields(self, result: RunCalibration) -> Mapping[str, object]:
        return {"calibration": result.values}
