"""The predicted time at every occupancy cliff of a launch (`time_cliffs`)."""

from __future__ import annotations

import math
from typing import Literal

from pydantic import ConfigDict

from occupancy import Launch
from occupancy import cliffs as occupancy_cliffs
from occupancy.common import Displayed, shown, si

from ._calibration import Calibration
from ._errors import RooflineError
from ._facts import calibration as _packaged_calibration
from ._facts import gpu as _lookup_gpu
from ._gpu import GPU
from ._kernel import Kernel, kernel_of
from ._predict import Limiter
from ._time_model import Prediction, launch_of, occupancy_launch, predict

__all__ = ["TimeCliff", "TimeCliffs", "time_cliffs"]

_FROZEN = ConfigDict(frozen=True, extra="forbid")


class TimeCliff(Displayed):
    """Predicted time of the launch with one resource moved to an occupancy threshold.

    Attributes
    ----------
    resource : str
        ``registers`` (per thread), ``shared_memory`` (bytes per block) or
        ``threads_per_block`` (the grid shrinks or grows to keep the same threads).
    value : int
        The resource's value at the threshold (the first value with the new occupancy); for
        registers and shared memory the first row may lie below the current value, where one
        more block an SM fits (``occupancy.ResourceCliffs.gain``).
    active_blocks_per_sm, active_warps_per_sm : int
        Occupancy from that value on.
    predicted_seconds : float
        Predicted time there, seconds.
    relative_time : float
        ``predicted_seconds`` over the current configuration's prediction.
    limiter : str
        The prediction's limiter there.
    """

    model_config = _FROZEN

    resource: Literal["registers", "shared_memory", "threads_per_block"]
    value: int
    active_blocks_per_sm: int
    active_warps_per_sm: int
    predicted_seconds: float
    relative_time: float
    limiter: Limiter

    headline = (
        shown("resource"), shown("value"), shown("active_blocks_per_sm", label="blocks_per_sm"),
        shown("predicted_seconds", si("s"), label="time"), shown("relative_time", lambda x: f"x{x:.3g}"),
        shown("limiter"),
    )


class TimeCliffs(Displayed):
    """The current prediction and the predicted time at every occupancy cliff."""

    model_config = _FROZEN

    gpu: str
    kernel: str
    current: Prediction
    cliffs: tuple[TimeCliff, ...]

    headline = (
        shown("kernel"), shown("gpu"), shown("current.seconds", si("s"), label="time"),
        shown("current.limiter", label="limiter"),
        shown("current.active_blocks_per_sm", label="blocks_per_sm"),
    )
    table_rows = staticmethod(lambda c: c.cliffs)

    def worst(self, resource: str) -> TimeCliff | None:
        """The cliff of `resource` with the largest predicted slowdown (None if none)."""
        if not isinstance(resource, str):
            raise TypeError(f"resource must be a str, not {type(resource).__name__}")
        rows = [c for c in self.cliffs if c.resource == resource]
        return max(rows, key=lambda c: c.relative_time, default=None)


def time_cliffs(gpu: GPU | str, kernel: Kernel, launch: Launch | None = None, *,
                calibration: Calibration | None = None) -> TimeCliffs:
    """Predict the time at every occupancy threshold of registers, shared memory and block size.

    The thresholds come from `occupancy.cliffs`; each is re-predicted with `predict`, the
    other resources held fixed. Moving the block size keeps the total thread count (the
    grid is re-sized), so the same work is done. For registers and shared memory the cliff
    below comes first where there is one: the value at which one more block fits an SM (the
    axis's ``gain``), what a smaller footprint would win.

    Parameters
    ----------
    gpu : GPU or str
        The GPU.
    kernel : Kernel
        A `roofline.Kernel`, with what `predict` needs (``dram_bytes``, a launch).
    launch : occupancy.Launch, optional
        Launch instead of ``kernel.launch``.
    calibration : Calibration, optional
        Model parameters; default `roofline.calibration(gpu)`.

    Returns
    -------
    TimeCliffs

    Raises
    ------
    RooflineError
        As `predict`.

    Examples
    --------
    >>> import roofline
    >>> tc = roofline.cliffs.time_cliffs("H100 SXM", roofline.models.copy(2**26))
    >>> tc.worst("registers").relative_time > 1
    True
    """
    record = _lookup_gpu(gpu)
    cal = calibration if calibration is not None else _packaged_calibration(record)
    kernel = kernel_of(kernel)
    launch = launch_of(kernel, launch, "time_cliffs")
    current = predict(record, kernel, launch, calibration=cal)
    found = occupancy_cliffs(record.architecture, occupancy_launch(launch))
    # occupancy.cliffs sweeps shared memory as if the kernel opted in to all of it
    default_dynamic = record.architecture.max_shared_memory_per_block - launch.static_shared_memory
    allowed_dynamic = default_dynamic if launch.max_dynamic_shared_memory is None else launch.max_dynamic_shared_memory
    rows: list[TimeCliff] = []
    threads = launch.threads
    for resource in ("registers", "shared_memory", "threads_per_block"):
        axis = getattr(found, resource)
        values = [t.value for t in axis.thresholds if t.active_blocks_per_sm > 0]
        if resource != "threads_per_block" and axis.gain is not None and axis.value - axis.gain >= 0:
            # the cliff below: as much less as one more block an SM needs (what a smaller
            # footprint would win), first in its resource's rows
            values.insert(0, axis.value - axis.gain)
        for value in values:
            if resource == "registers":
                update_registers: dict[str, object] = {"registers_per_thread": value}
                if launch.resources is not None:
                    # the same code at another register count: its SASS (loops, loads in flight,
                    # instruction mix) stays; a copy with registers alone would drop the resources
                    update_registers["resources"] = launch.resources.model_copy(
                        update={"registers_per_thread": value})
                changed = launch.model_copy(update=update_registers)
            elif resource == "shared_memory":
                if value < launch.static_shared_memory:
                    continue  # less than the kernel's static shared memory: no launch holds it
                dynamic = max(0, value - launch.static_shared_memory)
                update: dict[str, int] = {"dynamic_shared_memory": dynamic}
                if dynamic > allowed_dynamic:
                    update["max_dynamic_shared_memory"] = dynamic
                changed = launch.model_copy(update=update)
            else:
                changed = launch.model_copy(update={"block": value, "grid": math.ceil(threads / value)})
            try:
                moved = predict(record, kernel, changed, calibration=cal)
            except (RooflineError, ValueError):
                continue
            rows.append(
                TimeCliff(
                    resource=resource,
                    value=value,
                    active_blocks_per_sm=moved.active_blocks_per_sm,
                    active_warps_per_sm=moved.active_warps_per_sm,
                    predicted_seconds=moved.seconds,
                    relative_time=moved.seconds / current.seconds,
                    limiter=moved.limiter,
                )
            )
    return TimeCliffs(gpu=record.name, kernel=kernel.name, current=current,
                      cliffs=tuple(rows))
