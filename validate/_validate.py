"""`run_validation`: the whole ``gpuroof validate`` run, start to report."""

from __future__ import annotations

import datetime as _dt
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ._ceilings import measure_ceilings
from ._device import compare_device, query_device
from ._errors import DeviceError
from ._occupancy_check import check_occupancy
from ._report import ValidationReport, write_report
from ._session import open_session
from ._suite import run_suite, summarize_predictions

__all__ = ["ValidationRun", "run_validation", "select_models"]

# Datasheet figure each ceiling is compared with (roofline.GPU names).
_DATASHEET_KEYS = {"dram": "dram", "l2": "l2", "l1": "l1"}
_PRECISIONS = ("fp32", "fp64", "fp16_tensor", "bf16_tensor")


class ValidationRun:
    """A finished run: the report, the folder and files written."""

    def __init__(self, report: ValidationReport, files: dict[str, Path]) -> None:
        self.report = report
        self.files = files


def select_models(kernels: Sequence[str] | None = None, *, quick: bool = False) -> tuple[Any, ...]:
    """The kernel models to validate: ``roofline.models.suite()``, filtered by name or label.

    Parameters
    ----------
    kernels : sequence of str, optional
        Model names (``"transpose"``) or labels; None for all.
    quick : bool
        Keep one kernel per name.

    Raises
    ------
    roofline.RooflineError
        For a name that matches no kernel of the suite (the message lists them).
    """
    from roofline import RooflineError, models

    suite = tuple(models.suite())
    if not isinstance(quick, bool):
        raise TypeError(f"quick must be a bool, not {type(quick).__name__}")
    if kernels is not None and not isinstance(kernels, (list, tuple)):
        raise TypeError(f"kernels must be a sequence of names, not {type(kernels).__name__}")
    if kernels:
        wanted = list(kernels)
        for k in wanted:
            if not isinstance(k, str):
                raise TypeError(f"kernels must hold names (str), not {type(k).__name__}")
        chosen = tuple(m for m in suite if m.name in wanted or getattr(m, "label", m.name) in wanted)
        known = {m.name for m in suite} | {getattr(m, "label", m.name) for m in suite}
        unknown = [k for k in wanted if k not in known]
        if unknown:
            raise RooflineError(f"kernels={unknown} not in the suite; known: {', '.join(sorted(known))}")
        suite = chosen
    if quick:
        seen: set[str] = set()
        suite = tuple(m for m in suite if not (m.name in seen or seen.add(m.name)))
    return suite


def _datasheet(entry: Any, info: Any) -> dict[str, float | None]:
    out: dict[str, float | None] = {"dram": info.memory_bandwidth}
    if entry is None:
        return out
    for level in ("dram", "l2", "l1"):
        try:
            out[level] = float(entry.bandwidth(level))
        except (ValueError, TypeError, AttributeError):
            pass
    for precision in _PRECISIONS:
        try:
            out[precision] = float(entry.peak_flops(precision))
        except (ValueError, TypeError, AttributeError):
            out[precision] = None
    return out


def _source_version() -> str:
    """The version in pyproject.toml, for a source checkout that is not installed."""
    import tomllib

    try:
        text = (Path(__file__).resolve().parent.parent / "pyproject.toml").read_text(encoding="utf-8")
        return f"{tomllib.loads(text)['project']['version']} (source)"
    except (OSError, KeyError, ValueError):
        return "unknown"


def _stderr(message: str) -> None:
    print(f"gpuroof validate: {message}", file=sys.stderr, flush=True)


def run_validation(
    *,
    out: str | os.PathLike[str] | None = None,
    quick: bool = False,
    kernels: Sequence[str] | None = None,
    device: int = 0,
    seed: int | None = None,
    progress: Callable[[str], None] = _stderr,
) -> ValidationRun:
    """Validate the models on a real GPU and write the report.

    Steps: query the device and match it to the database; measure the ceilings; check the
    occupancy calculator against the driver; compile, check and time every kernel of the
    suite and compare each with its prediction; write report.json, report.md and
    roofline.png into ``out``.

    Parameters
    ----------
    out : path, optional
        Report folder; None writes nothing.
    quick : bool
        Smaller sizes, fewer repetitions, one kernel per model (about 20 s).
    kernels : sequence of str, optional
        Only these kernel models (names or labels).
    device : int
        CUDA device index.
    seed : int, optional
        Seed of the random inputs; default a fresh one (recorded in the report).
    progress : callable
        Receives one line per step (default: stderr).

    Returns
    -------
    ValidationRun

    Raises
    ------
    DeviceError
        No cuda-python, no GPU, or a CUDA failure outside a single kernel.
    roofline.RooflineError
        Unknown kernel names, a negative device index or seed.
    OSError
        If `out` cannot be written (checked before the GPU is touched).
    """
    from occupancy._files import check_writable
    from roofline import RooflineError

    if not isinstance(device, int) or isinstance(device, bool):
        raise TypeError(f"device must be an int, not {type(device).__name__}")
    if not 0 <= device <= 2**31 - 1:
        raise RooflineError(f"device={device} must be from 0 to 2147483647")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise TypeError(f"seed must be an int, not {type(seed).__name__}")
    if seed is not None and seed < 0:
        raise RooflineError(f"seed={seed} must be >= 0")
    if not callable(progress):
        raise TypeError(f"progress must be callable, not {type(progress).__name__}")
    models = select_models(kernels, quick=quick)
    if out is not None:
        # Before the GPU run: a folder that cannot be written must not cost the measurements.
        check_writable(out, RooflineError, folder=True, name="out")
    start = time.perf_counter()
    seed = int(np.random.SeedSequence().entropy % 2**63) if seed is None else int(seed)
    rng = np.random.default_rng(seed)
    session = open_session(device)
    info = query_device(session)
    entry, comparison = compare_device(info)
    progress(f"{info.name} (sm_{info.arch[3:]}, {info.sm_count} SMs); database entry {comparison.database_gpu}; "
             f"{len(comparison.differences)} datasheet differences")
    datasheet = _datasheet(entry, info)
    ceilings = measure_ceilings(session, info, datasheet, quick=quick, progress=progress)
    measured: dict[str, float | None] = {
        "dram": ceilings.value("dram_copy"), "l2": ceilings.value("l2_read"), "l1": ceilings.value("shared_read"),
        "fp32": ceilings.value("fp32_fma"), "fp64": ceilings.value("fp64_fma"),
        "fp16_tensor": ceilings.value("fp16_tensor"), "bf16_tensor": ceilings.value("bf16_tensor"),
    }
    occupancy_check, occupancy_error = None, None
    try:
        occupancy_check = check_occupancy(session, info, quick=quick, progress=progress)
    except (DeviceError, ValueError) as exc:
        occupancy_error = str(exc)
        progress(f"occupancy check failed: {exc}")
    prediction, prediction_error, calibration = None, None, None
    try:
        from ._prediction import run_prediction_check

        prediction = run_prediction_check(session, entry, progress=progress, quick=quick)
        import roofline

        calibration = roofline.Calibration.model_validate(prediction.calibration)
    except (DeviceError, ValueError) as exc:
        prediction_error = str(exc)
        progress(f"prediction check failed: {exc}")
    rows = run_suite(session, info, models, database_gpu=entry, measured=measured, quick=quick, rng=rng,
                     progress=progress, calibration=calibration)
    from importlib import metadata

    try:
        version = metadata.version("gpuroof")
    except metadata.PackageNotFoundError:
        version = _source_version()
    report = ValidationReport(
        gpuroof_version=version,
        created_utc=_dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        quick=quick, runtime_seconds=time.perf_counter() - start, seed=seed, device=info, comparison=comparison,
        ceilings=ceilings, occupancy_check=occupancy_check, occupancy_check_error=occupancy_error, kernels=rows,
        summary=summarize_predictions(rows), prediction=prediction, prediction_error=prediction_error,
    )
    files = {} if out is None else write_report(report, out, models, progress=progress)
    if files:
        progress(f"wrote {', '.join(str(p) for p in files.values())}")
    return ValidationRun(report, files)
