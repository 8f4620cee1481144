"""The composition: every term evaluated on the derived quantities, and the one rule that
combines them into a time and names the term that binds.

Reading order: `roofline.predict` checks the launch and builds a `Setting`; `derive` turns it
into typed quantities (`roofline._predict.derive`); `parameters` splits the GPU's calibration
into each term's own (`roofline._predict.params`); `evaluate` computes every term (one module
each in `roofline._predict.terms`), handing the quantities one term's time is made of to the
terms that take them (the hot loop's waits: ``trips`` and ``dram``; the ``instructions`` term's
seconds: ``dram``, where each thread loads once, then computes; the barriers' and the L1
passes' time per block: ``dram``); `compose` is the rule.

The rule: the memory and compute terms overlap (each side is its largest term; the two
sides are joined by `overlap`), the overhead terms add to that. The term that binds is the
largest memory or compute term (the first of equal ones, in `evaluate`'s order: memory before
compute), unless the overhead is at least as long as the overlapped sides (then the largest
overhead term binds); its ``limiter`` is the prediction's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from .._errors import RooflineError
from .._kernel import Kernel
from .derive import Derived
from .params import Parameters
from .rules import on
from .terms import (
    DramTime,
    Term,
    arithmetic_term,
    atomics_term,
    barrier_wait,
    dram_term,
    exposed_issue_seconds,
    instructions_term,
    l1_seconds_per_block,
    l1_term,
    l2_partial_stores_term,
    l2_requests_term,
    l2_term,
    launch_term,
    loop_waits,
    overlap,
    ramp_term,
    shared_atomics_term,
    spread_term,
    trips_term,
)

__all__ = ["Composition", "bound_counts", "compose", "evaluate", "overlap", "roofline_bound"]


def evaluate(d: Derived, params: Parameters) -> tuple[DramTime, tuple[Term, ...]]:
    """Every term of the time model on one launch's derived quantities, in the order ties are
    broken (memory before compute, then the overhead): the DRAM term's result, and all the terms.

    A new effect is a new term: a module in ``roofline/_predict/terms``, its parameters in
    `roofline._predict.params`, what it reads in `derive`'s quantities, and one line here.
    """
    waits = loop_waits(d.hot_loop, params.waits)
    instructions = instructions_term(d.issue, params.issue)
    # a thread that loads once, then computes: the issue it waits with no load in flight joins the block's life
    exposed = exposed_issue_seconds(instructions.seconds, d.issue, d.grid, d.loads) if d.phases_in_turn else 0.0
    dram = dram_term(d, params.dram, waits=waits, barriers=barrier_wait(d.barriers, params.barriers),
                     l1_seconds_per_block=l1_seconds_per_block(d.l1, d.grid, params.l1),
                     exposed_issue_seconds=exposed)
    terms = (
        dram.term,
        l2_term(d.l2, params.l2),
        l2_partial_stores_term(d.l2, d.grid, params.partial_stores),
        l2_requests_term(d.l2, params.l2_requests),
        atomics_term(d.atomics, params.atomics),
        shared_atomics_term(d.shared_atomics, d.grid, params.shared_atomics),
        l1_term(d.l1, d.grid, params.l1),
        trips_term(d.grid, waits),
        arithmetic_term(d.issue, params.issue),
        instructions,
        launch_term(params.launch),
        ramp_term(d.grid, params.ramp),
        spread_term(d.grid, params.spread),
    )
    if all(on(f"term_{t.name}") for t in terms):
        return dram, terms
    # the ablation's switch (`rules.disabled`): a term turned off takes no time
    terms = tuple(t if on(f"term_{t.name}") else t.model_copy(update={"seconds": 0.0, "roof_seconds": 0.0})
                  for t in terms)
    return replace(dram, term=terms[0]), terms


def roofline_bound(terms: Sequence[Term]) -> float:
    """Seconds the plain roofline allows for the work the prediction's terms do.

    `roofline.analyze`'s roofs (the flops at the datasheet's peak, each level's bytes at its
    datasheet bandwidth) over the flops and bytes the terms charge: the DRAM term's are the
    kernel's DRAM bytes, the ``l2`` term's the L2 bytes L1 does not keep
    (`l2_bytes_with_l1_reuse`), the ``l1_shared`` term's the kernel's L1 bytes, the
    arithmetic term's its flops. Each is a term's ``roof_seconds``, the largest binds. For a
    kernel whose L1 keeps nothing (no ``traffic``, as a profile's counts) it is
    ``roofline.analyze(gpu, kernel).time_lower_bound_seconds``.

    Never above the prediction, by construction: every term is at least its roof (`Term`
    refuses one that is not: its rate is never above the datasheet's and its bytes are at
    least the roof's), the memory and compute sides are their largest terms, `overlap` never
    gives less than the larger side and the overhead terms only add.

    Examples
    --------
    >>> import roofline
    >>> p = roofline.predict("H200", roofline.models.copy(1 << 26))
    >>> roofline_bound(p.terms) == p.roofline_seconds <= p.seconds
    True
    """
    return max([0.0, *(t.roof_seconds for t in terms if t.side != "overhead" and t.roof_seconds is not None)])


def bound_counts(kernel: Kernel, terms: Sequence[Term]) -> Kernel:
    """``kernel``'s counts as its prediction's ``terms`` move them: its L2 bytes are those the
    ``l2`` term serves (less what L1 keeps), its DRAM bytes those DRAM moves while it runs (less
    the written lines L2 keeps past its end after validate's flush), so that `roofline.analyze`
    of them is `roofline_bound` of the terms, with the level that binds it.

    Raises
    ------
    TypeError
        ``kernel`` is not a `roofline.Kernel`, or ``terms`` holds something other than a Term.
    RooflineError
        ``kernel`` has L2 bytes and ``terms`` hold no ``l2`` term.

    Examples
    --------
    >>> import roofline
    >>> blur = roofline.models.blur(4096, 4096, radius=3)
    >>> p = roofline.predict("H200", blur)
    >>> bound = roofline.analyze("H200", bound_counts(blur, p.terms))
    >>> bound.bound_level, abs(bound.time_lower_bound_seconds / p.roofline_seconds - 1) < 1e-12
    ('l1', True)
    """
    if not isinstance(kernel, Kernel):
        raise TypeError(f"kernel must be a roofline.Kernel, not {type(kernel).__name__}")
    if isinstance(terms, (str, bytes)) or not all(isinstance(t, Term) for t in terms):
        raise TypeError("terms must be a sequence of roofline.terms.Term (a Prediction's terms)")
    dram = next((t for t in terms if t.name == "dram"), None)
    if dram is not None and "roof_bytes" in dram.inputs:
        kernel = kernel.model_copy(update={"dram_bytes": min(kernel.dram_bytes, dram.inputs["roof_bytes"])})
    if kernel.l2_bytes is None:
        return kernel
    served = next((t for t in terms if t.name == "l2"), None)
    if served is None:
        raise RooflineError("terms hold no 'l2' term: pass the terms of a prediction of this kernel")
    served = served.inputs["l2_bytes"]
    return kernel.model_copy(update={"l2_bytes": served})


@dataclass(frozen=True)
class Composition:
    """The time the terms make (`compose`): ``seconds``, each side's, the term that binds and
    the plain roofline's bound over the terms' ceilings (`roofline_bound`)."""

    seconds: float
    memory_seconds: float
    compute_seconds: float
    overhead_seconds: float
    binding: Term
    roofline_seconds: float


def compose(terms: Sequence[Term], overlap_exponent: float | None) -> Composition:
    """The time from the terms: the memory and compute sides joined by `overlap`, plus the
    overhead terms; the term that binds as the module's rule says."""
    memory = [t for t in terms if t.side == "memory"]
    compute = [t for t in terms if t.side == "compute"]
    overhead = [t for t in terms if t.side == "overhead"]
    memory_seconds = max(t.seconds for t in memory)
    compute_seconds = max(t.seconds for t in compute)
    overhead_seconds = sum(t.seconds for t in overhead)
    overlapped = overlap(memory_seconds, compute_seconds, overlap_exponent)
    binding = max(memory + compute, key=lambda t: t.seconds)
    if overhead and overhead_seconds >= overlapped:
        binding = max(overhead, key=lambda t: t.seconds)
    return Composition(seconds=overlapped + overhead_seconds, memory_seconds=memory_seconds,
                       compute_seconds=compute_seconds, overhead_seconds=overhead_seconds, binding=binding,
                       roofline_seconds=roofline_bound(terms))
