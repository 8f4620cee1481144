"""What every term of the time model gives (`Term`), and the checks of its figures."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ..._errors import RooflineError, finite_nonnegative, finite_positive

__all__ = ["Limiter", "Side", "Term", "finite_nonnegative", "finite_positive"]

#: Relative slack between a term's roof and its seconds that rounding alone makes.
_ROUNDING = 1e-12

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
        ``shared_atomics``, ``l1_shared``, ``trips``, ``arithmetic``, ``instructions``, ``launch``, ``ramp``,
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
        The plain roofline's time for this term's work (`roofline_bound`): the bytes it moves
        at one level, or the flops, at the datasheet's rate (`roofline.analyze`'s ceilings; the
        term's own measured rate where a datasheet figure is lower), with no latency or scheduling; None for a term that is no roof of the plain roofline
        (latency, issue, requests, atomics, shared atomics, overhead). Never above ``seconds``: a term spends
        at least its roof's work at most at its roof's rate. It is in the term's JSON, so a
        prediction read back keeps its bound.

    Raises
    ------
    RooflineError
        ``roof_seconds`` above ``seconds`` (a term that would run faster than its own roof).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    side: Side
    seconds: float = Field(ge=0)
    limiter: Limiter
    inputs: dict[str, float] = Field(default_factory=dict)
    notes: tuple[str, ...] = ()
    roof_seconds: float | None = Field(default=None, ge=0, repr=False)

    @model_validator(mode="after")
    def _never_below_its_roof(self) -> Term:
        # the invariant prediction >= roofline bound rests on it (`roofline_bound`); the slack
        # is the rounding of the terms that sum their time over waves
        if self.roof_seconds is not None and self.roof_seconds > self.seconds * (1 + _ROUNDING):
            raise RooflineError(f"term {self.name!r}: roof_seconds={self.roof_seconds!r} is above "
                                f"seconds={self.seconds!r}; a term never runs faster than its roof")
        return self

