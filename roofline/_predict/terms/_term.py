"""What every term of the time model takes (`Setting`) and gives (`Term`)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from occupancy import Launch, OccupancyResult, SassSummary

from ..._errors import RooflineError
from ..._gpu import GPU
from ..._kernel import Kernel
from ..._locality import Locality
from ..._calibration import Calibration
from ..derive.balance import work_shares

__all__ = ["Limiter", "Setting", "Side", "Term", "finite_nonnegative", "finite_positive"]

#: What a prediction names as its limiter: each term says which of these it is when it binds.
Limiter = Literal[
    "dram_bandwidth", "memory_latency", "block_scheduling", "cache_bandwidth", "compute", "issue", "tail", "launch"
]
#: How a term enters the time: the memory and compute terms overlap (the time is the
#: largest of them), the overhead terms add to it.
Side = Literal["memory", "compute", "overhead"]


class Term(BaseModel):
    """One named part of a predicted time, with the quantities it was computed from.

    Attributes
    ----------
    name : str
        The term (``dram``, ``l2``, ``l2_partial_stores``, ``l1_shared``, ``arithmetic``,
        ``instructions``, ``launch``).
    side : str
        ``memory`` or ``compute`` (these overlap: the prediction takes the largest) or
        ``overhead`` (added).
    seconds : float
        The time this term alone would take, seconds (0 when it does not apply).
    limiter : str
        The prediction's limiter when this term binds.
    inputs : dict of str to float
        The named quantities the term used (bytes, rates in bytes/s, seconds, counts).
    notes : tuple of str
        What the term had to assume.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    side: Side
    seconds: float = Field(ge=0)
    limiter: Limiter
    inputs: dict[str, float] = Field(default_factory=dict)
    notes: tuple[str, ...] = ()


def sass_of(launch: Launch) -> SassSummary | None:
    """The SASS summary a launch's resources carry, None without one."""
    return launch.resources.sass if launch.resources is not None else None


@dataclass(frozen=True)
class Setting:
    """One launch to predict, checked: what every term reads.

    ``loads_in_flight_per_thread`` and ``fma_chains_per_thread`` are resolved and checked
    by `roofline.predict`; ``occupancy`` is the launch's on ``gpu`` (at least one block);
    ``after_l2_flush``: the launch starts from validate's L2 flush (L2 full of written lines).
    """

    gpu: GPU
    calibration: Calibration
    kernel: Kernel
    launch: Launch
    occupancy: OccupancyResult
    locality: Locality
    loads_in_flight_per_thread: int
    fma_chains_per_thread: int
    after_l2_flush: bool = False

    @property
    def slots(self) -> int:
        """Blocks resident on the whole GPU at once (a full wave)."""
        return self.occupancy.active_blocks_per_sm * self.gpu.sm_count

    @property
    def busiest_sm_blocks(self) -> int:
        """Blocks the busiest SM runs: blocks go to the SMs in turn, ``ceil(blocks / SMs)``."""
        return math.ceil(self.launch.blocks / self.gpu.sm_count)

    @property
    def sms_in_use(self) -> int:
        """SMs the grid occupies: its blocks, at most the GPU's SMs."""
        return min(self.launch.blocks, self.gpu.sm_count)

    @property
    def first_wave_blocks(self) -> int:
        """Blocks the busiest SM holds at once in the first wave: its `busiest_sm_blocks`, at
        most the blocks resident per SM."""
        return min(self.occupancy.active_blocks_per_sm, self.busiest_sm_blocks)

    @property
    def busiest_sm_factor(self) -> float:
        """How much more of the launch the busiest SM runs than an even share
        (`busiest_sm_blocks` x SMs / blocks: ``SMs / blocks`` for a grid of fewer blocks than
        SMs); 1 for a grid that divides evenly. Where the hot loop's trips follow the
        thread's index (a triangle), the blocks are weighed by their trips (`work_shares`)."""
        return self.work_shares[0]

    @cached_property
    def work_shares(self) -> tuple[float, float]:
        """`balance.work_shares`: the busiest SM's factor and the slowest warp's trips over
        the mean warp's; computed once per setting."""
        return work_shares(self)

    @cached_property
    def cache(self) -> dict[str, object]:
        """Values more than one term derives from the setting, computed once per prediction
        (the hot loop's waits: the trips and DRAM terms)."""
        return {}

    @property
    def sass(self) -> SassSummary | None:
        """The launch's SASS summary (`sass_of`)."""
        return sass_of(self.launch)

    @property
    def path_instructions(self) -> float | None:
        """Warp instructions of one path through the kernel's branches: its ``instructions``
        over ``branch_issue_factor`` (None without a count)."""
        kernel = self.kernel
        if not kernel.instructions:
            return None
        return float(kernel.instructions) / float(kernel.branch_issue_factor or 1.0)

    @property
    def rounds(self) -> int:
        """Round trips a thread makes for its elements, ``loads_in_flight_per_thread`` at a time."""
        elements = self.launch.elements_per_thread
        return math.ceil(elements / min(int(self.loads_in_flight_per_thread), elements))


def finite_positive(name: str, value: object, *, allow_inf: bool = False) -> float:
    """`value` as a float > 0 (and finite unless `allow_inf`)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a number, not {type(value).__name__}")
    try:
        figure = float(value)
    except OverflowError:
        figure = math.inf
    if not (figure > 0 and (allow_inf or math.isfinite(figure))):
        raise RooflineError(f"{name}={value!r} must be > 0{'' if allow_inf else ' and finite'}")
    return figure


def finite_nonnegative(name: str, value: object) -> float:
    """`value` as a float >= 0, finite."""
    if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_)) \
            and value == 0:
        return 0.0
    return finite_positive(name, value)
