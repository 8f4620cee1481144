"""`run_validation`: the whole ``gpuroof validate`` run, start to report."""

from __future__ import annotations

import datetime as _dt
import os
import socket
import sys
import time
import tomllib
from collections.abc import Callable, Sequence
from importlib import metadata
from pathlib import Path
from typing import TypeVar

import numpy as np
import roofline
from occupancy.common import ProgressStep, check_writable
from roofline import RooflineError, models as roofline_models

from ..device import DeviceError, compare_device, open_clock_monitor, open_session, query_device
from ..probes import RunContext
from ..report import PROBES, ValidationReport, write_report
from ..suite import check_families

__all__ = ["ValidationRun", "check_run_arguments", "run_validation", "select_models"]

T = TypeVar("T")


class ValidationRun:
    """A finished run: the report, the folder and files written."""

    def __init__(self, report: ValidationReport, files: dict[str, Path]) -> None:
        self.report = report
        self.files = files


def select_models(kernels: Sequence[str] | None = None, *, quick: bool = False) -> tuple[roofline.Kernel, ...]:
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
    _check_kernel_names(kernels, quick)
    suite = tuple(roofline_models.suite())
    if kernels:
        wanted = list(kernels)
        suite = tuple(m for m in suite if m.name in wanted or getattr(m, "label", m.name) in wanted)
    if quick:
        seen: set[str] = set()
        suite = tuple(m for m in suite if not (m.name in seen or seen.add(m.name)))
    return suite


def _check_kernel_names(kernels: object, quick: object) -> None:
    """Refuse `select_models`' bad arguments without building the suite when the names are the
    models' own: building it (every kernel's traffic) takes seconds, more than finding no GPU.
    Only a name that is not a model's (a label such as a size variant) needs the suite."""
    if not isinstance(quick, bool):
        raise TypeError(f"quick must be a bool, not {type(quick).__name__}")
    if kernels is not None and not isinstance(kernels, (list, tuple)):
        raise TypeError(f"kernels must be a sequence of names, not {type(kernels).__name__}")
    for k in kernels or ():
        if not isinstance(k, str):
            raise TypeError(f"kernels must hold names (str), not {type(k).__name__}")
    others = [k for k in kernels or () if k not in roofline_models.names()]
    if others:
        suite = roofline_models.suite()
        known = {m.name for m in suite} | {getattr(m, "label", m.name) for m in suite}
        unknown = [k for k in others if k not in known]
        if unknown:
            raise RooflineError(f"kernels={unknown} not in the suite; known: {', '.join(sorted(known))}")


def check_run_arguments(
    *, out: object, quick: object, kernels: object, device: object, seed: object, progress: object
) -> None:
    """Check `run_validation`'s arguments before any GPU work, cheaply: the suite is built only
    after a GPU was found, so that a machine without one hears so at once.

    Shared with `run_validation_devices`, which checks them once in the parent before it
    starts a process per device.
    """
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
    _check_kernel_names(kernels, quick)
    if out is not None:
        # Before the GPU run: a folder that cannot be written must not cost the measurements.
        check_writable(out, RooflineError, folder=True, name="out")


def _source_version() -> str:
    """The version in pyproject.toml, for a source checkout that is not installed."""
    try:
        text = (Path(__file__).resolve().parents[2] / "pyproject.toml").read_text(encoding="utf-8")
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
    families: Sequence[str] | None = None,
    progress: Callable[[str], None] = _stderr,
) -> ValidationRun:
    """Validate the models on a real GPU and write the report.

    Steps: query the device and match it to the database; then the probes of
    `validate.report._registry.PROBES`, in a loop and in that order: measure the ceilings (clocks and
    power around each; cuBLAS and library copies beside them, not in quick runs); launch
    overhead, the latency ladder, the working-set sweep, host links and L2 persistence;
    check the occupancy calculator against the driver; fit the prediction model, measure
    the memory effects and calibrate from every probe's figures; compile, check and time
    every kernel of the suite and compare each with its prediction; check and time the
    kernel families (the suite's kernels among them) and give `roofline.predict`'s and the
    plain roofline's error per family. Write report.json, report.md, the plots and
    calibration.json into ``out``.

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
    families : sequence of str, optional
        Only these kernel families (`validate.FAMILIES`); default all, an empty sequence none.
    progress : callable
        Receives one line per step (default: stderr); before each probe an
        `occupancy.common.ProgressStep` that says which of how many it is.

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
    check_run_arguments(out=out, quick=quick, kernels=kernels, device=device, seed=seed, progress=progress)
    wanted_families = check_families(families)
    start = time.perf_counter()
    seed = int(np.random.SeedSequence().entropy % 2**63) if seed is None else int(seed)
    # The GPU first: without one the run ends here, before the suite is built.
    session = open_session(device)
    models = select_models(kernels, quick=quick)
    info = query_device(session)
    entry, comparison = compare_device(info)
    progress(f"{info.name} (sm_{info.arch[3:]}, {info.sm_count} SMs); database entry {comparison.database_gpu}; "
             f"{len(comparison.differences)} datasheet differences")
    failures: dict[str, str] = {}
    steps: dict[str, float] = {}
    errors: dict[str, str | None] = {}

    def step(name: str, measure: Callable[[], T], required: bool = False, error_field: str | None = None) -> T | None:
        # A measurement that fails is recorded and the run goes on: the others still count.
        started = time.perf_counter()
        try:
            return measure()
        except (DeviceError, ValueError, MemoryError) as exc:
            if required:
                raise
            message = f"{type(exc).__name__}: {exc}"
            if error_field is None:
                failures[name] = message
            else:
                errors[error_field] = message
            progress(f"{name} failed: {exc}")
            return None
        finally:
            steps[name] = time.perf_counter() - started

    clocks = open_clock_monitor(step("pci bus id", lambda: str(session.device.pci_bus_id)))
    if not clocks.available:
        progress("NVML not available (pip install nvidia-ml-py): clocks and power not read")
    ctx = RunContext(session=session, info=info, quick=quick, progress=progress,
                     out=None if out is None else Path(out), entry=entry, clocks=clocks, models=models,
                     families=wanted_families, rng=np.random.default_rng(seed),
                     created_utc=_dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
                     host=socket.gethostname())
    for done, probe in enumerate(PROBES):
        # whether a probe applies depends on the results before it: a skipped one counts as done
        if not probe.applies(ctx):
            continue
        progress(ProgressStep(probe.step, done, len(PROBES)))
        result = step(probe.step, lambda probe=probe: probe.run(ctx), probe.required, probe.error_field)
        if result is not None:
            ctx.results[probe.name] = result
            ctx.figures.update(probe.figures(result))
    fields: dict[str, object] = {}
    for probe in PROBES:
        if probe.name in ctx.results:
            fields.update(probe.fields(ctx.results[probe.name]))
    try:
        version = metadata.version("gpuroof")
    except metadata.PackageNotFoundError:
        version = _source_version()
    report = ValidationReport(
        gpuroof_version=version, created_utc=ctx.created_utc, quick=quick,
        runtime_seconds=time.perf_counter() - start, seed=seed, device=info, comparison=comparison, host=ctx.host,
        measurement_errors=failures, step_seconds=steps, late_timer_samples=session.timer.late, **errors, **fields,
    )
    files = {} if out is None else write_report(report, out, models, progress=progress)
    if files:
        progress(f"wrote {', '.join(str(p) for p in files.values())}")
    return ValidationRun(report, files)
