"""What every term of the time model gives (`Term`), and the checks of its figures."""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from ..._errors import RooflineError

__all__ = ["Limiter", "Side", "Term", "finite_nonnegative", "finite_positive"]

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
        The term (``dram``, ``l2``, ``l2_partial_stores``, ``l2_requests``, ``atomics``,
        ``l1_shared``, ``trips``, ``arithmetic``, ``instructions``, ``launch``, ``ramp``,
        ``spread``).
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
    roof_seconds : float or None
        The plain roofline's time for this term's work (`roofline_bound`): its work at its
        rate, with no latency or scheduling; None for a term that models latency, issue or
        overhead. It is in the term's JSON, so a prediction read back keeps its bound.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    side: Side
    seconds: float = Field(ge=0)
    limiter: Limiter
    inputs: dict[str, float] = Field(default_factory=dict)
    notes: tuple[str, ...] = ()
    roof_seconds: float | None = Field(default=None, repr=False)


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
