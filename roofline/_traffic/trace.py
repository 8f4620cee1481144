"""Tracing an access's index and guard on symbolic block indices: the affine expressions and the comparisons that switch along each dimension."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from .space import Access, Coords, Key, Space, dim_size, dims_of, segment_key

__all__ = ["Cuts", "Traced", "find_cuts", "trace_access"]


# Switch points of the guards along one dimension probed before the fast count stops
# claiming it sees every kind of block.
_MAX_CUTS = 64


# ----------------------------------------------------------------------------- tracing the guards


class _Untraceable(Exception):
    """An index or guard the tracer cannot follow (not an error: the fast count then cannot
    prove its classes, see `Cuts`)."""


# What a user's function may raise on a traced value: an operation `_Affine` refuses, one it
# does not define (TypeError), an array attribute it lacks. Any of them only means "not traced";
# a function that is wrong fails again, loudly, when it is evaluated on numbers.
_TRACE_FAILURES = (_Untraceable, TypeError, AttributeError, ValueError, IndexError)


def _constant(value: object) -> object:
    """A number or numeric array as it is, anything else refused."""
    if isinstance(value, (bool, int, float, np.bool_, np.integer, np.floating)):
        return value
    if isinstance(value, np.ndarray) and value.dtype.kind in "biuf":
        return value
    raise _Untraceable(f"cannot trace through {type(value).__name__}")


class _Affine:
    """``const + sum of coef[d] * v_d`` over the block indices and the loop iteration ``v_d``:
    what an index or a guard's comparison computes, traced. Threads are not traced: const and
    coef are numbers or per-thread arrays. Only affine operations are allowed; the others raise
    `_Untraceable`. An expression left without a block index is returned as its plain value."""

    __array_ufunc__ = None  # ndarray <op> _Affine calls the reflected operator below
    __hash__ = None  # type: ignore[assignment]  # == builds a comparison

    def __init__(self, const: object, coef: dict[str, object]) -> None:
        self.const = const
        self.coef = coef

    @staticmethod
    def make(const: object, coef: dict[str, object]) -> object:
        coef = {d: a for d, a in coef.items() if np.any(np.asarray(a) != 0)}
        return _Affine(const, coef) if coef else const

    @staticmethod
    def parts(value: object) -> tuple[object, dict[str, object]]:
        if isinstance(value, _Affine):
            return value.const, value.coef
        return _constant(value), {}

    def __add__(self, other: object) -> object:
        const, coef = _Affine.parts(other)
        merged = dict(self.coef)
        for d, a in coef.items():
            merged[d] = merged[d] + a if d in merged else a
        return _Affine.make(self.const + const, merged)

    __radd__ = __add__

    def __neg__(self) -> object:
        return _Affine.make(-self.const, {d: -a for d, a in self.coef.items()})

    def __sub__(self, other: object) -> object:
        return self + -_Affine.make(*_Affine.parts(other))

    def __rsub__(self, other: object) -> object:
        return -self + other

    def __mul__(self, other: object) -> object:
        if isinstance(other, _Affine):
            raise _Untraceable("a product of two block indices")
        other = _constant(other)
        return _Affine.make(self.const * other, {d: a * other for d, a in self.coef.items()})

    __rmul__ = __mul__

    def _divisible(self, other: object) -> int:
        """`other` as a divisor that divides every coefficient (so that // and % keep the
        expression affine: (k + m q) // m = k // m + q)."""
        if not isinstance(other, (int, np.integer)) or isinstance(other, (bool, np.bool_)) or other == 0:
            raise _Untraceable("// or % of a block index by other than a whole number")
        for a in self.coef.values():
            a = np.asarray(a)
            if a.dtype.kind not in "iu" or np.any(a % other):
                raise _Untraceable("// or % of a block index that does not divide it")
        return int(other)

    def __floordiv__(self, other: object) -> object:
        m = self._divisible(other)
        return _Affine.make(self.const // m, {d: np.asarray(a) // m for d, a in self.coef.items()})

    def __mod__(self, other: object) -> object:
        return self.const % self._divisible(other)

    def _compare(self, other: object, op: Callable[[object, object], object]) -> object:
        h = self - other
        if not isinstance(h, _Affine):  # the block indices cancel out
            return op(np.asarray(h), 0)
        return _Predicate((h,))

    def __lt__(self, other: object) -> object:
        return self._compare(other, np.less)

    def __le__(self, other: object) -> object:
        return self._compare(other, np.less_equal)

    def __gt__(self, other: object) -> object:
        return self._compare(other, np.greater)

    def __ge__(self, other: object) -> object:
        return self._compare(other, np.greater_equal)

    def __eq__(self, other: object) -> object:  # type: ignore[override]
        return self._compare(other, np.equal)

    def __ne__(self, other: object) -> object:  # type: ignore[override]
        return self._compare(other, np.not_equal)

    def __bool__(self) -> bool:
        raise _Untraceable("a block index in an if")

    def __array__(self, *args: object, **kwargs: object) -> np.ndarray:
        raise _Untraceable("a block index passed to a numpy function")

    def __rfloordiv__(self, other: object) -> object:
        raise _Untraceable("division by a block index")

    __rmod__ = __rtruediv__ = __truediv__ = __pow__ = __rpow__ = __rfloordiv__


def _boolean(value: object) -> bool:
    """Whether `value` is a plain boolean or boolean array (no block index in it)."""
    return isinstance(value, (bool, np.bool_)) or (isinstance(value, np.ndarray) and value.dtype == bool)


class _Predicate:
    """A guard traced: some boolean combination of comparisons, each ``h >= 0``-like for an
    `_Affine` ``h`` (its leaves). Which combination does not matter: every leaf keeps its
    truth between two of its switch points, and so does the guard."""

    __array_ufunc__ = None
    __hash__ = None  # type: ignore[assignment]

    def __init__(self, leaves: tuple[_Affine, ...]) -> None:
        self.leaves = leaves

    def _join(self, other: object) -> _Predicate:
        if isinstance(other, _Predicate):
            return _Predicate(self.leaves + other.leaves)
        if _boolean(other):
            return self
        raise _Untraceable(f"a guard combined with {type(other).__name__}")

    __and__ = __rand__ = __or__ = __ror__ = __xor__ = __rxor__ = _join

    def __invert__(self) -> _Predicate:
        return self

    def __bool__(self) -> bool:
        raise _Untraceable("a traced comparison in an if, and or or")

    def __array__(self, *args: object, **kwargs: object) -> np.ndarray:
        raise _Untraceable("a traced comparison passed to a numpy function")

    def __eq__(self, other: object) -> object:  # type: ignore[override]
        raise _Untraceable("a traced comparison compared")

    __ne__ = __eq__


def _trace(space: Space, access: Access, function: Callable[[Coords], object]) -> object:
    """`function` of `Coords` whose block indices (and loop iteration) are traced; raises
    `_Untraceable` where it does more than affine arithmetic and comparisons on them."""
    def index(d: str) -> object:
        size = dim_size(space, access, d) if d in dims_of(access) else 1
        # an index that is always 0 is a number: nothing can switch along it
        return _Affine(np.int64(0), {d: np.int64(1)}) if size > 1 else np.zeros((1, 1), dtype=np.int64)

    c = Coords(index("x"), index("y"), index("z"), space.thread_x, space.thread_y, space.thread_z,
               index("loop"), space.block, space.grid)
    try:
        return function(c)
    except _TRACE_FAILURES as exc:
        raise _Untraceable(str(exc)) from None


@dataclass(frozen=True)
class Traced:
    """One access, traced (`trace_access`).

    ``slopes[d]``: bytes its address moves per step of dimension d, the same for every thread,
    or None where it is not (a coefficient that depends on the thread). ``points[d]``: values
    b of dimension d where its guard may differ between b - 1 and b, for some thread and some
    values of the other dimensions (`_switch_points`); a dimension with more than `_MAX_CUTS`
    of them is left out of ``points`` and named in ``crowded``.
    """

    slopes: dict[str, int | None]
    points: dict[str, np.ndarray]
    crowded: frozenset[str]


@dataclass(frozen=True)
class Cuts:
    """Where the guards can switch, per segmentation key, from their traced comparisons.

    ``at[key]``: block indices ``b`` where a guard may differ between ``b - 1`` and ``b``;
    between two of them every guard is the same for every thread, whatever the other
    dimensions. ``crowded``: keys with too many to probe (`_MAX_CUTS`). ``traced``: every
    index traced affine with the slopes measured and every guard traced (`trace_access`).
    """

    at: dict[Key, tuple[int, ...]]
    crowded: frozenset[Key]
    traced: bool


def _switch_points(leaf: _Affine, d: str, threads: int, sizes: dict[str, int]) -> np.ndarray | None:
    """The values b in [1, sizes[d]) where the comparison ``leaf`` may differ between b - 1 and
    b, for some thread and some values of the other dimensions in ``leaf`` (each e in [0,
    sizes[e])); None where they are more than `_MAX_CUTS`."""
    a = np.broadcast_to(np.asarray(leaf.coef[d]), (1, threads)).ravel()
    low = high = np.broadcast_to(np.asarray(leaf.const), (1, threads)).ravel()
    for e, coef in leaf.coef.items():  # the other dimensions' terms, at their extremes
        if e != d:
            reach = np.broadcast_to(np.asarray(coef), (1, threads)).ravel() * (sizes[e] - 1)
            low, high = low + np.minimum(reach, 0), high + np.maximum(reach, 0)
    moving = a != 0
    a, low, high = a[moving], low[moving], high[moving]
    # leaf = rest + a * b crosses zero at b0 = -rest / a: below floor(b0) it has one sign,
    # above it the other, and floor(b0) itself may be either or zero. A float constant
    # takes a step more on each side, for rounding.
    exact = all(np.asarray(v).dtype.kind in "biu" for v in (leaf.const, *leaf.coef.values()))
    if exact:
        ends = np.stack([(-low.astype(np.int64)) // a.astype(np.int64), (-high.astype(np.int64)) // a.astype(np.int64)])
    else:
        ends = np.floor(np.stack([-low / a, -high / a])).astype(np.int64)
    first = np.maximum(ends.min(axis=0) - (0 if exact else 1), 1)
    last = np.minimum(ends.max(axis=0) + (1 if exact else 2), sizes[d] - 1)
    keep = first <= last
    first, last = first[keep], last[keep]
    if first.size and int((last - first).max()) >= _MAX_CUTS:
        return None
    width = int((last - first).max()) + 1 if first.size else 0
    candidates = first[:, None] + np.arange(width)[None, :]
    points = np.unique(candidates[candidates <= last[:, None]])
    return points if points.size <= _MAX_CUTS else None


def trace_access(space: Space, access: Access) -> Traced | None:
    """`access`'s index and guard traced (`Traced`), or None where the tracer cannot follow them."""
    sizes = {d: dim_size(space, access, d) for d in dims_of(access)}
    try:
        index = _trace(space, access, access.index)
        if isinstance(index, _Predicate):
            return None
        _, coef = _Affine.parts(index)
        slopes: dict[str, int | None] = {}
        for d in sizes:
            step = np.asarray(coef.get(d, 0))
            uniform = step.dtype.kind in "biu" and bool((step == step.flat[0]).all())
            slopes[d] = int(step.flat[0]) * access.element_bytes if uniform else None
        guard = None if access.guard is None else _trace(space, access, access.guard)
        if guard is None or _boolean(guard):
            return Traced(slopes, {}, frozenset())  # the same for every block
        if not isinstance(guard, _Predicate):
            return None
        points: dict[str, np.ndarray] = {}
        crowded: set[str] = set()
        for leaf in guard.leaves:
            for d in leaf.coef:
                found = None if d in crowded else _switch_points(leaf, d, space.threads, sizes)
                if found is None:
                    crowded.add(d)
                    points.pop(d, None)
                    continue
                points[d] = np.union1d(points[d], found) if d in points else found
                if points[d].size > _MAX_CUTS:
                    crowded.add(d)
                    del points[d]
    except _TRACE_FAILURES:
        return None
    return Traced(slopes, points, frozenset(crowded))


def find_cuts(space: Space, accesses: Sequence[Access], slopes: dict[tuple[int, str], int],
          traced: Callable[[Access], Traced | None]) -> Cuts:
    """The guards' switch points (`Cuts`) from the accesses traced (``traced(access)``)."""
    at: dict[Key, set[int]] = {}
    crowded: set[Key] = set()
    every = True
    for i, access in enumerate(accesses):
        t = traced(access)
        if t is None:
            every = False
            continue
        every = every and all(t.slopes[d] == slopes[i, d] for d in dims_of(access))
        crowded |= {segment_key(access, d) for d in t.crowded}
        for d, points in t.points.items():
            at.setdefault(segment_key(access, d), set()).update(points.tolist())
    crowded |= {key for key, points in at.items() if len(points) > _MAX_CUTS}
    return Cuts({key: tuple(sorted(points)) for key, points in at.items() if key not in crowded},
                 frozenset(crowded), every)
