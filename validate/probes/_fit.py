"""Fitting `roofline.predict`'s parameters to measured times by calling `roofline.predict` itself.

One model: the fit never re-derives the time model in a formula of its own. Each candidate
set of parameters is a `roofline.Calibration`, and every measured launch is predicted with
it by `roofline.predict`; an edit to the model is an edit to the fit. The fitted parameters
are a declared list (`CALIBRATION_FIT_PARAMETERS`: the calibration field, its grid and
scale), so a new parameter of the model joins the fit by adding one entry.

The search, written with numpy (no scipy), in the box the grids span (coordinates
normalised to [0, 1], log-scaled where the parameter is): the base's values and 16 Halton
points of the grids as starts; a coordinate search over each parameter's grid (two cycles
at most); Levenberg-Marquardt on the log ratios predicted / measured (exact data is fitted
exactly); Nelder-Mead on the criterion, twice. A stage's result is kept only where it
improves the criterion: the worst relative error over the launches the parameters move (a
launch whose prediction no parameter changes, as where the block scheduler's measured cap
binds, is left out of it: `_moved`), with a hundredth of the mean added so that ties on a
plateau break toward the better fit.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence

import numpy as np
import occupancy
import roofline
from pydantic import BaseModel, ConfigDict, Field, model_validator
from roofline import Calibration, RooflineError

__all__ = ["CALIBRATION_FIT_PARAMETERS", "CalibrationFit", "FitParameter", "fit_to_measurements"]

_FROZEN = ConfigDict(frozen=True, extra="forbid")

#: Weight of the mean error beside the worst one in the criterion (ties break toward it).
MEAN_WEIGHT = 0.01
#: A launch's log ratio must move by more than this share of the median launch's, and by
#: more than rounding, for the criterion to judge it (`_moved`) ...
MOVED_SHARE = 0.1
MOVED_TOLERANCE = 1e-9
#: ... when each parameter steps this far (normalised coordinates) from the best start.
MOVE_STEP = 0.02
#: Starts spread over the box (Halton points) before the coordinate search.
STARTS = 16
#: Parameter sets a fit tries at most by default (a few seconds to tens of seconds of CPU
#: for the 32 sweep points: each set predicts every launch).
FIT_EVALUATIONS = 2000
#: Local searches, each from one of the best distinct starts (after one from the base's own
#: values): the sweep's criterion has more than one basin (a soft knee traded for a fast SM
#: port, knee 1.5 and 160 GB/s on the H200 against 2.6 and 51 GB/s), and the best start is not
#: always in the deepest.
LOCAL_SEARCHES = 3
#: Cycles of the coordinate search at most (each tries every grid value of every parameter).
COORDINATE_CYCLES = 2
#: Step of the Levenberg-Marquardt Jacobian's forward differences (normalised coordinates).
FINITE_DIFFERENCE = 1e-5
#: Nelder-Mead runs, each from the last one's best with a simplex half as large.
POLISHES = 2
#: Nelder-Mead stops when the simplex is this small (normalised coordinates) ...
SIMPLEX_TOLERANCE = 1e-4
#: ... or when its criterion values agree to this.
VALUE_TOLERANCE = 1e-7


def _number(name: str, value: object) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a number, not {type(value).__name__}")
    try:
        figure = float(value)
    except OverflowError:
        figure = math.inf if value > 0 else -math.inf
    if math.isnan(figure):
        raise RooflineError(f"{name}={value!r} must not be NaN")
    return figure


class FitParameter(BaseModel):
    """One parameter of `roofline.Calibration` that a fit adjusts.

    Attributes
    ----------
    name : str
        The calibration field (e.g. ``"idle_latency_seconds"``), in its SI unit.
    grid : tuple of float
        Values the coordinate search tries, increasing; the first and last bound the
        Nelder-Mead polish.
    log_scale : bool
        Search in the logarithm of the value (for rates and times spanning a decade).

    Examples
    --------
    >>> FitParameter(name="knee_sharpness", grid=(1.0, 2.0, 4.0), log_scale=False).grid[-1]
    4.0
    """

    model_config = _FROZEN

    name: str
    grid: tuple[float, ...] = Field(min_length=2)
    log_scale: bool = True

    @model_validator(mode="after")
    def _check(self) -> FitParameter:
        if self.name not in Calibration.model_fields or self.name in ("gpu", "sources"):
            fields = ", ".join(k for k in Calibration.model_fields if k not in ("gpu", "sources"))
            raise RooflineError(f"name={self.name!r} is not a parameter of roofline.Calibration; known: {fields}")
        values = np.asarray(self.grid, dtype=float)
        if not np.all(np.isfinite(values)) or np.any(np.diff(values) <= 0):
            raise RooflineError(f"grid of {self.name} must be finite and increasing, got {self.grid}")
        if self.log_scale and values[0] <= 0:
            raise RooflineError(f"grid of {self.name} must be > 0 on a log scale, got {self.grid[0]}")
        return self

    def to_unit(self, value: float) -> float:
        """Position of `value` in the grid's span, 0 at its first value and 1 at its last (clipped)."""
        lo, hi, v = self.grid[0], self.grid[-1], min(max(_number("value", value), self.grid[0]), self.grid[-1])
        if self.log_scale:
            return math.log(v / lo) / math.log(hi / lo)
        return (v - lo) / (hi - lo)

    def from_unit(self, unit: float) -> float:
        """The value at position `unit` (clipped to [0, 1]) of the grid's span."""
        u = min(max(_number("unit", unit), 0.0), 1.0)
        lo, hi = self.grid[0], self.grid[-1]
        return lo * (hi / lo) ** u if self.log_scale else lo + (hi - lo) * u


def _steps(start: float, stop: float, step: float) -> tuple[float, ...]:
    return tuple(float(v) for v in np.round(np.arange(start, stop + step / 2, step), 15))


#: The parameters `gpuroof validate` and `gpuroof calibrate` fit to the copy sweep.
CALIBRATION_FIT_PARAMETERS: tuple[FitParameter, ...] = (
    FitParameter(name="idle_latency_seconds", grid=_steps(2e-7, 1.2e-6, 5e-8)),
    FitParameter(name="sm_bandwidth_bytes_per_second", grid=_steps(2e10, 1.6e11, 1e10)),
    FitParameter(name="block_dispatch_seconds", grid=_steps(2e-8, 2e-7, 1e-8)),
    FitParameter(name="knee_sharpness", grid=(1.0, 1.5, 2.0, 2.5, 3.0, 4.0, 6.0, 8.0), log_scale=False),
)


class CalibrationFit(BaseModel):
    """How a calibration was fitted, and its error on the launches it saw and on the others.

    Errors are relative (0.05 is 5 %): measured over predicted time, minus one (for a copy,
    predicted over measured bandwidth, minus one).
    """

    # Its errors go into report.json: a NaN there would be written as null and not read back.
    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    method: str
    parameters: tuple[str, ...] = Field(description="The calibration fields fitted.")
    evaluations: int = Field(description="Parameter sets tried, each predicted at every fitted launch.")
    seconds: float = Field(description="CPU wall time of the fit.")
    train_points: int
    train_median_abs_error: float
    train_max_abs_error: float
    test_points: int = 0
    test_median_abs_error: float | None = None
    test_max_abs_error: float | None = None


class _Exhausted(Exception):
    """The fit has tried `max_evaluations` parameter sets: stop where it stands."""


def _criterion(errors: np.ndarray) -> float:
    return float(errors.max() + MEAN_WEIGHT * errors.mean())


def _moved(ratios: np.ndarray) -> np.ndarray:
    """Which launches the parameters move: those whose predicted time changes between the
    best start and a step of each parameter from it (rows of `ratios`, log predicted /
    measured) by more than `MOVED_SHARE` of the median launch's change (and rounding).

    A launch whose time the fit's parameters barely change (a block scheduler's cap that
    binds, its interval measured apart: on the H100 SXM's sweep of 2026-11-27 a 5 % step of
    all three moved it by 1e-4, the others by 0.005-0.04) keeps its error whatever the fit
    does: where it is the worst, the worst error is flat over the whole box and cannot choose
    between basins that the other launches tell apart. All of them where none moves
    (nothing to choose by).
    """
    if len(ratios) < 2:
        return np.ones(ratios.shape[1], dtype=bool)
    change = np.abs(ratios[1:] - ratios[0]).max(axis=0)
    moved = change > max(MOVED_TOLERANCE, MOVED_SHARE * float(np.median(change)))
    return moved if moved.any() else np.ones_like(moved)


def _halton(count: int, dimensions: int) -> np.ndarray:
    """The first `count` points of the Halton sequence in [0, 1]^dimensions (a deterministic spread)."""
    primes = [2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53][:dimensions]
    while len(primes) < dimensions:
        candidate = primes[-1] + 2
        while any(candidate % q == 0 for q in primes):
            candidate += 2
        primes.append(candidate)
    points = np.zeros((count, dimensions))
    for j, base in enumerate(primes):
        for i in range(count):
            f, k, x = 1.0, i + 1, 0.0
            while k:
                f /= base
                x += f * (k % base)
                k //= base
            points[i, j] = x
    return points


def _levenberg_marquardt(residuals: Callable[[np.ndarray], np.ndarray], u0: np.ndarray,
                         iterations: int = 40) -> None:
    """Least squares of `residuals` over [0, 1]^d from `u0` (forward-difference Jacobian; steps clipped)."""
    u, r = u0.copy(), residuals(u0)
    cost, damping = float(r @ r), 1e-3
    for _ in range(iterations):
        if cost < 1e-24:
            break
        jacobian = np.empty((len(r), len(u)))
        for j in range(len(u)):
            h = FINITE_DIFFERENCE if u[j] + FINITE_DIFFERENCE <= 1 else -FINITE_DIFFERENCE
            shifted = u.copy()
            shifted[j] += h
            jacobian[:, j] = (residuals(shifted) - r) / h
        normal, gradient = jacobian.T @ jacobian, jacobian.T @ r
        improved = False
        while damping < 1e8:
            matrix = normal + damping * np.diag(np.diag(normal) + 1e-12)
            step = np.linalg.lstsq(matrix, -gradient, rcond=None)[0]
            trial = np.clip(u + step, 0.0, 1.0)
            rt = residuals(trial)
            trial_cost = float(rt @ rt)
            if trial_cost < cost:
                gain = (cost - trial_cost) / cost
                u, r, cost, damping, improved = trial, rt, trial_cost, max(damping / 3, 1e-9), True
                break
            damping *= 4
        if not improved or gain < 1e-10:
            break


def _nelder_mead(f: Callable[[np.ndarray], float], x0: np.ndarray, step: float) -> None:
    """Minimise `f` over [0, 1]^d from `x0` (points are clipped into the box)."""
    d = len(x0)
    simplex = [x0]
    values = [f(x0)]
    for i in range(d):
        x = x0.copy()
        x[i] = x[i] + step if x[i] + step <= 1 else x[i] - step
        simplex.append(x)
        values.append(f(x))
    while True:
        order = np.argsort(values)
        simplex = [simplex[i] for i in order]
        values = [values[i] for i in order]
        size = max(np.abs(x - simplex[0]).max() for x in simplex[1:])
        if size < SIMPLEX_TOLERANCE or values[-1] - values[0] < VALUE_TOLERANCE:
            break
        centroid = np.mean(simplex[:-1], axis=0)
        worst = simplex[-1]
        reflected = np.clip(centroid + (centroid - worst), 0, 1)
        fr = f(reflected)
        if fr < values[0]:
            expanded = np.clip(centroid + 2 * (centroid - worst), 0, 1)
            fe = f(expanded)
            simplex[-1], values[-1] = (expanded, fe) if fe < fr else (reflected, fr)
        elif fr < values[-2]:
            simplex[-1], values[-1] = reflected, fr
        else:
            outside = fr < values[-1]
            toward = reflected if outside else worst
            contracted = np.clip(centroid + 0.5 * (toward - centroid), 0, 1)
            fc = f(contracted)
            if fc < (fr if outside else values[-1]):
                simplex[-1], values[-1] = contracted, fc
            else:  # shrink toward the best
                for i in range(1, d + 1):
                    simplex[i] = simplex[0] + 0.5 * (simplex[i] - simplex[0])
                    values[i] = f(simplex[i])


def fit_to_measurements(
    gpu: roofline.GPU | str,
    base: roofline.Calibration,
    launches: Sequence[tuple[roofline.Kernel, occupancy.Launch, float]],
    *,
    parameters: Sequence[FitParameter] = CALIBRATION_FIT_PARAMETERS,
    max_evaluations: int = FIT_EVALUATIONS,
) -> tuple[roofline.Calibration, CalibrationFit]:
    """Fit `parameters` of `base` so that `roofline.predict` matches the measured launches.

    Parameters
    ----------
    gpu : roofline.GPU or str
        The GPU measured.
    base : roofline.Calibration
        Holds every parameter not fitted, and the start of the search.
    launches : sequence of (roofline.Kernel, occupancy.Launch, float)
        Each launch's kernel, its launch and its measured time in seconds.
    parameters : sequence of FitParameter
        What to fit (default `CALIBRATION_FIT_PARAMETERS`).
    max_evaluations : int
        Parameter sets to try at most (each predicts every launch once).

    Returns
    -------
    (roofline.Calibration, CalibrationFit)
        The fitted calibration (the fitted parameters' sources say "measured: fitted ...")
        and how the fit went (its ``test_*`` fields empty: the caller checks held-out data).

    Raises
    ------
    roofline.RooflineError
        With no launches, a non-positive measured time, or the same parameter twice.
    """
    record = roofline.gpu(gpu)
    measured = _checked_inputs(base, launches, parameters, max_evaluations)
    search = _Search(record, base, launches, parameters, measured, max_evaluations)
    started = time.perf_counter()
    search.run()
    return search.result(time.perf_counter() - started)


def _checked_inputs(base: roofline.Calibration, launches: Sequence[tuple[roofline.Kernel, occupancy.Launch, float]],
                    parameters: Sequence[FitParameter], max_evaluations: int) -> np.ndarray:
    """`fit_to_measurements`'s arguments checked (TypeError, RooflineError): the measured seconds."""
    if not isinstance(base, roofline.Calibration):
        raise TypeError(f"base must be a roofline.Calibration, not {type(base).__name__}")
    if isinstance(parameters, (str, bytes)) or not isinstance(parameters, Sequence):
        raise TypeError(f"parameters must be a sequence of FitParameter, not {type(parameters).__name__}")
    for p in parameters:
        if not isinstance(p, FitParameter):
            raise TypeError(f"parameters must hold FitParameter, not {type(p).__name__}")
    names = [p.name for p in parameters]
    if len(set(names)) != len(names) or not names:
        raise roofline.RooflineError(f"parameters must name distinct calibration fields, got {names}")
    for p in parameters:
        for end in (p.grid[0], p.grid[-1]):
            try:
                roofline.Calibration.model_validate({**base.model_dump(), p.name: end})
            except ValueError:
                raise roofline.RooflineError(f"grid of {p.name} reaches {end}, outside what a Calibration "
                                             "allows") from None
    if isinstance(max_evaluations, bool) or not isinstance(max_evaluations, int):
        raise TypeError(f"max_evaluations must be an int, not {type(max_evaluations).__name__}")
    if max_evaluations < 1:
        raise roofline.RooflineError(f"max_evaluations={max_evaluations} must be >= 1")
    if isinstance(launches, (str, bytes)) or not isinstance(launches, Sequence):
        raise TypeError(f"launches must be a sequence of (kernel, launch, seconds), not {type(launches).__name__}")
    if not launches:
        raise roofline.RooflineError("launches is empty: a fit needs at least one measured launch")
    for item in launches:
        if not isinstance(item, (tuple, list)) or len(item) != 3:
            raise TypeError("launches must hold (kernel, launch, measured seconds) triples")
        if isinstance(item[2], bool) or not isinstance(item[2], (int, float, np.integer, np.floating)):
            raise TypeError(f"a measured time must be a number, not {type(item[2]).__name__}")
    measured = np.array([float(seconds) for _, _, seconds in launches])
    if not np.all(np.isfinite(measured) & (measured > 0)):
        raise roofline.RooflineError("every measured time must be > 0 and finite")
    return measured


class _Search:
    """One fit's search: the parameter sets tried (their log ratios predicted / measured), the
    launches the criterion judges, and the steps from starts to local searches."""

    def __init__(self, record: roofline.GPU, base: roofline.Calibration,
                 launches: Sequence[tuple[roofline.Kernel, occupancy.Launch, float]],
                 parameters: Sequence[FitParameter], measured: np.ndarray, max_evaluations: int) -> None:
        self.record, self.base, self.launches, self.parameters = record, base, launches, parameters
        self.measured, self.max_evaluations = measured, max_evaluations
        self.names = [p.name for p in parameters]
        self.seen: dict[tuple[float, ...], np.ndarray] = {}
        # the launches the criterion judges: every one until the starts show which of them the
        # parameters move (`_moved`); the criteria of the sets seen, for that choice
        self.judged = np.ones(len(launches), dtype=bool)
        self.criteria: dict[tuple[float, ...], float] = {}
        self.spacing = min(1.0 / (len(p.grid) - 1) for p in parameters)

    def calibration_at(self, values: Sequence[float]) -> roofline.Calibration:
        return self.base.model_copy(update=dict(zip(self.names, (float(v) for v in values))))

    @staticmethod
    def key_of(values: Sequence[float]) -> tuple[float, ...]:
        return tuple(float(f"{v:.12g}") for v in values)

    def criterion_of(self, key: tuple[float, ...]) -> float:
        if key not in self.criteria:
            self.criteria[key] = _criterion(np.abs(np.exp(-self.seen[key][self.judged]) - 1.0))
        return self.criteria[key]

    def evaluate(self, values: Sequence[float]) -> tuple[float, np.ndarray]:
        """(criterion, log(predicted / measured)) at `values`, each launch predicted by `roofline.predict`."""
        key = self.key_of(values)
        if key not in self.seen:
            if len(self.seen) >= self.max_evaluations:
                raise _Exhausted
            cal = self.calibration_at(key)
            predicted = np.array([roofline.predict(self.record, kernel, launch, calibration=cal).seconds
                                  for kernel, launch, _ in self.launches])
            if not np.all(np.isfinite(predicted) & (predicted > 0)):
                raise roofline.RooflineError(
                    f"roofline.predict gave {predicted.min()} s for a launch: no time to fit a measurement to")
            self.seen[key] = np.log(predicted / self.measured)
        return self.criterion_of(key), self.seen[key]

    def best(self) -> list[float]:
        return list(min(self.seen, key=self.criterion_of))

    def values_at(self, u: np.ndarray) -> list[float]:
        return [p.from_unit(x) for p, x in zip(self.parameters, u)]

    def unit_of(self, values: Sequence[float]) -> np.ndarray:
        return np.array([p.to_unit(v) for p, v in zip(self.parameters, values)])

    def on_grid(self, values: Sequence[float]) -> list[float]:
        return [min(p.grid, key=lambda g, v=v: abs(g - v)) for p, v in zip(self.parameters, values)]

    def run(self) -> None:
        """Starts, the launches the parameters move, then the local searches, until done or out of evaluations."""
        given = [float(getattr(self.base, n) or p.grid[0]) for n, p in zip(self.names, self.parameters)]
        start = self.on_grid(given)
        try:
            self.evaluate_starts(given, start)
            self.judge_moved_launches()
            # the base's own values first (a refit searches where the last fit ended), then the best starts
            origins = [self.key_of(given)] if self.key_of(given) in self.seen else [self.key_of(start)]
            origins += [k for k in sorted(self.seen, key=self.criterion_of) if k not in origins][:LOCAL_SEARCHES]
            for origin in origins:
                self.search_from(origin)
        except _Exhausted:
            pass

    def evaluate_starts(self, given: list[float], start: list[float]) -> None:
        """The base's values and a spread over the box: the searches after them are local, and a
        search started in another basin (a knee far off, latency traded for SM bandwidth) stays
        there: the best few starts each get one."""
        self.evaluate(start)
        if all(p.grid[0] <= v <= p.grid[-1] for p, v in zip(self.parameters, given)):
            self.evaluate(given)  # the base itself: a refit of a fitted calibration is never worse
        for u in _halton(STARTS, len(self.parameters)):
            self.evaluate(self.on_grid(self.values_at(u)))

    def judge_moved_launches(self) -> None:
        """Judge only the launches the parameters move, by a step of each from the best start."""
        centre = self.best()
        origin = self.unit_of(centre)
        count = len(self.parameters)
        steps = [origin + np.eye(count)[i] * (MOVE_STEP if origin[i] + MOVE_STEP <= 1 else -MOVE_STEP)
                 for i in range(count)]
        self.judged[:] = _moved(np.array([self.seen[self.key_of(centre)]]
                                         + [self.evaluate(self.values_at(u))[1] for u in steps]))
        self.criteria.clear()  # judged on other launches from here on

    def search_from(self, origin: tuple[float, ...]) -> None:
        """A coordinate search, Levenberg-Marquardt and Nelder-Mead from `origin`, each step
        from this search's own best (not the best of the searches before it)."""
        mine = {origin}

        def local(values: Sequence[float]) -> tuple[float, np.ndarray]:
            result = self.evaluate(values)
            mine.add(self.key_of(values))
            return result

        def local_best() -> list[float]:
            return list(min(mine, key=self.criterion_of))

        for _ in range(COORDINATE_CYCLES):
            before = local_best()
            for i, p in enumerate(self.parameters):
                current = local_best()
                for candidate in p.grid:
                    local([*current[:i], candidate, *current[i + 1:]])
            if local_best() == before:
                break
        _levenberg_marquardt(lambda u: local(self.values_at(u))[1], self.unit_of(local_best()))
        for polish in range(POLISHES):
            _nelder_mead(lambda u: local(self.values_at(u))[0], self.unit_of(local_best()), self.spacing / 2**polish)

    def result(self, seconds: float) -> tuple[roofline.Calibration, CalibrationFit]:
        """The best calibration found (its fitted parameters' sources say so) and how the fit went."""
        current = self.best()
        errors = np.abs(np.exp(-self.seen[tuple(current)]) - 1.0)
        fitted = self.calibration_at(current)
        launches = len(self.launches)
        note = (f"measured: fitted with roofline.predict to {launches} launches (worst error "
                f"{errors.max():.1%}, {len(self.seen)} parameter sets tried)")
        sources = dict(self.base.sources)
        sources.update({n: note for n in self.names})
        fitted = fitted.model_copy(update={"sources": sources})
        fit = CalibrationFit(
            method=f"from the base and each of the {LOCAL_SEARCHES} best starts, coordinate search over the declared "
                   "grids, Levenberg-Marquardt on the log ratios, Nelder-Mead on the worst relative error over the "
                   f"launches the parameters move ({int(self.judged.sum())} of {launches}) + {MEAN_WEIGHT} x mean; "
                   "each launch predicted by roofline.predict",
            parameters=tuple(self.names), evaluations=len(self.seen), seconds=seconds,
            train_points=launches, train_median_abs_error=float(np.median(errors)),
            train_max_abs_error=float(errors.max()),
        )
        return fitted, fit
