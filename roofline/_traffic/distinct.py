"""The distinct sectors of an array over the whole launch: the union of a representative's sectors translated by a lattice of whole-sector steps."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .segments import Irregular, dim_name, key_dim
from .space import EXPAND_ELEMENTS, Key, sorted_unique

__all__ = ["LatticeTerm", "distinct_sectors"]


# ----------------------------------------------------------------------------- distinct sectors


@dataclass(frozen=True, eq=False)
class LatticeTerm:
    """Sectors ``base + sum over run dims of step[d] * m[d]`` for ``0 <= m[d] < count[d]``."""

    base: np.ndarray  # sorted unique sector numbers of the representatives
    runs: tuple[tuple[Key, int, int], ...]  # (dim, count, step in sectors > 0)

    def extent(self, without: Key | None = None) -> tuple[int, int]:
        reach = sum(step * (count - 1) for d, count, step in self.runs if d != without)
        return int(self.base[0]), int(self.base[-1]) + reach

    def shifted(self, d: Key, copies: Sequence[int]) -> list[LatticeTerm]:
        """This term with dimension `d` fixed at each of `copies`."""
        step = next(s for e, _, s in self.runs if e == d)
        rest = tuple(r for r in self.runs if r[0] != d)
        return [LatticeTerm(self.base + step * m, rest) for m in copies]


def _union_one_dim(terms: Sequence[LatticeTerm]) -> int:
    """Distinct sectors of terms with at most one run dimension (one step): per residue of
    the step, an exact union of intervals."""
    steps = {s for t in terms for _, _, s in t.runs}
    if not steps:
        return int(sorted_unique(np.concatenate([t.base for t in terms])).size)
    (step,) = steps
    start = np.concatenate([t.base for t in terms])
    length = np.concatenate([np.full(t.base.size, t.runs[0][1] if t.runs else 1, dtype=np.int64) for t in terms])
    k, residue = np.divmod(start, step)
    k = k - k.min()
    # Lay the residues side by side, far enough apart that one sorted sweep merges them all.
    span = int(k.max() + length.max() + 1)
    lo = residue * span + k
    order = np.argsort(lo, kind="stable")
    lo = lo[order]
    reach = np.maximum.accumulate(lo + length[order])
    first = np.flatnonzero(np.r_[True, lo[1:] >= reach[:-1]])
    last = np.r_[first[1:] - 1, lo.size - 1]
    return int((reach[last] - lo[first]).sum())


def distinct_sectors(terms: Sequence[LatticeTerm]) -> int:
    """Distinct sectors of the union of `terms`, without listing the translates."""
    terms = [t for t in terms if t.base.size]
    if not terms:
        return 0
    steps: dict[Key, set[tuple[int, int]]] = {}
    for t in terms:
        for d, count, step in t.runs:
            steps.setdefault(d, set()).add((count, step))
    for d, kinds in steps.items():
        if len(kinds) > 1:
            # Accesses to one array that move by different steps: list this dimension's
            # translates (work grows with its length, hence the budget).
            runs = [t for t in terms if any(e == d for e, _, _ in t.runs)]
            work = sum(t.base.size * next(c for e, c, _ in t.runs if e == d) for t in runs)
            if work > EXPAND_ELEMENTS:
                raise Irregular(
                    f"accesses to one array move by different amounts along the {dim_name(key_dim(d))} (different "
                    "slopes) over too many blocks to list"
                )
            expanded = [s for t in runs for s in t.shifted(d, range(next(c for e, c, _ in t.runs if e == d)))]
            rest = [t for t in terms if not any(e == d for e, _, _ in t.runs)]
            return distinct_sectors(rest + expanded)
    if len(steps) <= 1:
        return _union_one_dim(terms)
    d = max(steps, key=lambda e: next(iter(steps[e]))[1])
    count, step = next(iter(steps[d]))
    runs = [t for t in terms if any(e == d for e, _, _ in t.runs)]
    singles = [t for t in terms if not any(e == d for e, _, _ in t.runs)]
    low = min(t.extent(d)[0] for t in runs)
    high = max(t.extent(d)[1] for t in runs)
    apart = (high - low) // step + 1  # translates this many steps apart never meet
    if count <= apart + 1:
        return distinct_sectors([s for t in runs for s in t.shifted(d, range(count))] + singles)

    def first(k: int) -> int:
        return distinct_sectors([s for t in runs for s in t.shifted(d, range(k))])

    head, more = first(apart), first(apart + 1)
    total = head + (count - apart) * (more - head)
    if not singles:
        return total
    # Only the translates that reach a single term's sectors can share them.
    near = np.zeros(count, dtype=bool)
    for s in singles:
        s_low, s_high = s.extent()
        near[max(0, -(-(s_low - high) // step)) : max(0, min(count, (s_high - low) // step + 1))] = True
    copies = np.flatnonzero(near).tolist()
    if not copies:
        return total + distinct_sectors(singles)
    touching = [s for t in runs for s in t.shifted(d, copies)]
    return total + distinct_sectors(touching + singles) - distinct_sectors(touching)
