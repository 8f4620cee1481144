"""The roofline bound of a prediction: the plain roofline over the ceilings the terms use.

`roofline.analyze` bounds a kernel with the datasheet's ceilings and every byte a level
moves; the time model takes the measured ceilings and the bytes a level really serves
(L2 bytes less what L1 keeps, the DRAM roof of the kernel's mix of reads and writes).
The two can disagree the wrong way round (issue 23: a blur's L2 bytes without L1 reuse
bound it at 104 us where the model, with reuse, predicts 71 us). The bound a prediction
reports is therefore taken over the terms' own ceilings: the kernel's flops at the compute
roof, its DRAM bytes at the DRAM roof, every throughput term's work at its rate. Each of
those is at most its term's seconds, so the bound never exceeds the prediction.
"""

from __future__ import annotations

from collections.abc import Sequence

from ._term import Term

__all__ = ["roofline_bound"]


def roofline_bound(terms: Sequence[Term]) -> float:
    """Seconds the plain roofline allows over the ceilings the prediction's terms use.

    Each memory or compute term gives its roof through its inputs: ``roof_seconds`` when
    it has one (the DRAM term: the compulsory bytes at its roof, with no latency or
    scheduling), ``flops / peak_flops_per_second`` for the arithmetic term; a term that is
    its work over a rate and nothing else (the cache, request and atomic terms) is its own
    roof. Terms that model latency or issue (``instructions``) are no roof. The bound is
    the largest of these, never more than the largest memory or compute term.

    Parameters
    ----------
    terms : sequence of Term
        A prediction's terms (`roofline.Prediction.terms`).

    Returns
    -------
    float
        Seconds.

    Examples
    --------
    >>> import roofline
    >>> p = roofline.predict("H200", roofline.models.copy(1 << 26))
    >>> roofline_bound(p.terms) == p.roofline_seconds <= p.seconds
    True
    """
    roofs = [0.0]
    for term in terms:
        if term.side == "overhead":
            continue
        if "roof_seconds" in term.inputs:
            roof = term.inputs["roof_seconds"]
        elif "flops" in term.inputs and term.inputs.get("peak_flops_per_second"):
            roof = term.inputs["flops"] / term.inputs["peak_flops_per_second"]
        elif term.limiter == "cache_bandwidth":
            roof = term.seconds
        else:
            continue
        roofs.append(min(roof, term.seconds))
    return max(roofs)
