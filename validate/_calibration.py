"""The calibration a validation run writes: the fitted model parameters plus the measured figures.

`run_prediction_check` fits the model's parameters (latency round trip, SM bandwidth, block
dispatch, knee, launch overhead); the latency ladder, the launch measurements and the
working-set sweep add their figures under `roofline.Calibration`'s named fields, each with
its source (how it was measured, on which GPU, when, by which command).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["measured_calibration", "measurement_origin"]


def measurement_origin(info: Any, created_utc: str, command: str = "gpuroof validate") -> str:
    """'an NVIDIA H200, CUDA driver 13.0, 2026-11-22, gpuroof validate': where a figure was measured."""
    return f"an {info.name}, CUDA driver {info.driver_version}, {created_utc[:10]}, {command}"


def measured_calibration(fitted: Mapping[str, Any], *, origin: str, latency: Any = None, launch: Any = None,
                         working_set: Any = None, effects: Any = None) -> dict[str, Any]:
    """`fitted` (a `roofline.Calibration` as a dict) with the run's measured figures added.

    Parameters
    ----------
    fitted : mapping
        The prediction check's calibration (``PredictionCheck.calibration``).
    origin : str
        Where and when (`measurement_origin`), appended to every new source.
    latency : LatencyLadder, optional
    launch : LaunchOverhead, optional
    working_set : WorkingSet, optional
    effects : MemoryEffects, optional
        The memory-effect probes (DRAM burst, lone line read, partial line write, L2
        partial stores, tree level).

    Returns
    -------
    dict
        Valid as a `roofline.Calibration`; figures not measured stay None.

    Raises
    ------
    TypeError
        For an argument of the wrong type (`fitted` not a mapping, a measurement not of
        its class).
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
    from pydantic import ValidationError

    from roofline import Calibration
    from roofline._gpu import translate_validation_error

    from ._latency import LatencyLadder
    from ._launch import LaunchOverhead
    from ._workingset import WorkingSet

    if not isinstance(fitted, Mapping):
        raise TypeError(f"fitted must be a mapping (a Calibration as a dict), not {type(fitted).__name__}")
    if not isinstance(origin, str):
        raise TypeError(f"origin must be a str, not {type(origin).__name__}")
    for name, value, cls in (("latency", latency, LatencyLadder), ("launch", launch, LaunchOverhead),
                             ("working_set", working_set, WorkingSet)):
        if value is not None and not isinstance(value, cls):
            raise TypeError(f"{name} must be a {cls.__name__} or None, not {type(value).__name__}")
    values: dict[str, float] = {}
    sources: dict[str, str] = {}

    def put(name: str, value: float | None, how: str) -> None:
        if value is not None:
            values[name] = float(value)
            sources[name] = f"measured: {how}; {origin}"

    if latency is not None:
        levels = latency.levels
        put("l1_hit_latency_seconds", levels.l1_hit_seconds,
            "pointer chase, 128 lines in 16 KiB, ld.global.ca, warmed in the same launch, median hop")
        put("l2_hit_latency_seconds", levels.l2_hit_seconds,
            "pointer chase, 4096 random lines over L2/4, ld.global.cg, warmed, median hop")
        put("l2_near_hit_latency_seconds", levels.l2_near_hit_seconds, "the low mode of the L2-hit chase's hops")
        put("l2_far_hit_latency_seconds", levels.l2_far_hit_seconds, "the high mode of the L2-hit chase's hops")
        put("dram_latency_seconds", levels.dram_seconds, f"pointer chase that misses L2 by construction ({levels.dram_proof})")
        penalty = levels.tlb_miss_penalty_seconds
        how = "warm L2 chase at the widest stride minus at one line per hop"
        if penalty is not None and penalty < 0:
            # the widest stride as fast as one line per hop, less the chase's noise: no penalty
            penalty, how = 0.0, f"{how} ({penalty * 1e9:.2f} ns: no penalty, recorded as 0)"
        put("tlb_miss_penalty_seconds", penalty, how)
    if launch is not None:
        put("graph_kernel_seconds", launch.graph_kernel_seconds,
            f"CUDA graph of {launch.graph_kernels} empty kernels replayed behind a spin kernel, time per kernel")
    if working_set is not None:
        plateaus = working_set.plateaus
        put("l1_read_bytes_per_second", plateaus.l1_bytes_per_second,
            f"working-set sweep, median of {plateaus.l1_points} ld.global.ca points with footprint <= SMs x 64 KiB")
        put("l2_read_bytes_per_second", plateaus.l2_bytes_per_second,
            f"working-set sweep, median of {plateaus.l2_points} ld.global.cg points with footprint <= L2/2")
        put("dram_read_bytes_per_second", plateaus.dram_bytes_per_second,
            f"working-set sweep, median of {plateaus.dram_points} points with footprint >= 4x L2")
    if effects is not None:
        from ._effects import effects_calibration

        for name, (value, how) in effects_calibration(effects).items():
            put(name, value, how)
    out = dict(fitted)
    out.update(values)
    known = fitted.get("sources", {})
    if not isinstance(known, Mapping):
        raise TypeError(f"fitted['sources'] must be a mapping of names to sources, not {type(known).__name__}")
    out["sources"] = {**dict(known), **sources}
    try:
        Calibration.model_validate(out)
    except ValidationError as exc:
        raise translate_validation_error(exc, "fitted with the measured figures is not a valid calibration") from None
    return out
