"""Exact global-memory traffic of an access pattern, in time independent of the grid size.

A kernel's global accesses are given as numpy functions of the block and thread
coordinates (and of a loop iteration), each with a guard. For every warp-wide execution
of every access this module counts the bytes requested (active lanes x access size) and
the 32-byte sectors touched (the L2 traffic), and for every array the distinct sectors
read and written over the whole launch (the compulsory DRAM traffic), exactly.

How, without visiting every block: a warp's sector count only depends on where its block
sits through (a) the guards, which differ only in the first and last blocks of each grid
dimension, and (b) the alignment of its addresses to 32 bytes. When addresses are affine in
the block index (moving a block by one moves each of its threads' addresses by the same
``slope`` bytes), moving it by ``P = 32 / gcd(32, slope)`` blocks moves them by whole
sectors and leaves every count unchanged. So each grid dimension (and each loop) splits
into its boundary blocks, taken one by one, and an interior run whose blocks fall into
``P`` classes; one representative per class is evaluated and weighted by the class size.
The boundary widths are found by probing: blocks are compared with the middle one with the
other dimensions at a few values. Those values must include one between every two places
where a guard switches, or a guard that switches on between them goes unseen. So the index
and guard functions are first called on traced block indices (`_Affine`), which keep every
comparison of an affine expression, and each comparison's switch points along each dimension
are probed too (`_Cuts`): between two of them no guard changes, and the classes are exact
(`_proven`). A pattern the tracer cannot follow (a numpy function of a block index, a product
of two) or with too many switch points is counted block by block where that is within
`EXHAUSTIVE_THREAD_BUDGET`, and so is one found outside the assumptions; beyond the budget the
latter is refused, and the former rests on the probes and on checks at the corners and the
centre of every class.

The distinct sectors of an array are the union, over the classes, of a representative's
sectors translated by a lattice of whole-sector steps. Its size is counted without
listing it: along the dimension with the largest step, translates more than ``D`` steps
apart cannot meet, so the count grows by the same amount per step after ``D`` of them
(counted once, then extrapolated), and the last dimension is an exact union of intervals
per residue of its step.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict, Field, ValidationError, computed_field, field_validator

from occupancy import Launch
from occupancy.common import sequence

from ._errors import RooflineError
from ._gpu import translate_validation_error
from ._kernel import Traffic
from ._locality import MEASURED_ON, Locality, locality as _locality_of
from ._warps import SECTOR_BYTES, WARP_SIZE, distinct_per_row

_NONE = np.iinfo(np.int64).max  # the sort key of a lane that does not access
#: DRAM's read burst and the cache line, bytes (the footprint's coarser units).
BURST_BYTES = 64
LINE_BYTES = 128
__all__ = ["Access", "Coords", "Traffic", "traffic"]

_AXES = ("x", "y", "z")
_ELEMENT_BYTES = (1, 2, 4, 8, 16)
# Boundary blocks of one dimension taken one by one before giving up on the fast count.
_MAX_BOUNDARY = 4096
# Thread evaluations spent comparing the first and last blocks of a dimension one by one.
_SCAN_ELEMENTS = 1 << 17
# Interior blocks of a dimension compared with their class's reference.
_INTERIOR_SAMPLE = 8
# Switch points of the guards along one dimension probed before the fast count stops
# claiming it sees every kind of block.
_MAX_CUTS = 64
# Sectors listed when accesses to one array move by different steps along a dimension.
_EXPAND_ELEMENTS = 1 << 23
# Rows (blocks x threads) evaluated in one numpy call of the exhaustive count.
_CHUNK_ELEMENTS = 1 << 22
#: The exhaustive count's hard budget: thread evaluations (blocks x threads per block x loop
#: iterations, summed over the accesses): a few seconds on one core (a copy of 2**21 floats); a grid of
#: 2**31 blocks would take days, so beyond this it is refused up front (never sampled: an
#: exhaustive count that is not exhaustive would be a different answer under the same name).
EXHAUSTIVE_THREAD_BUDGET = 1 << 22
#: The fast count's budget: thread evaluations of its classes of blocks (most grids need a few
#: thousand; one made mostly of boundary blocks can need the whole grid's, or more). PolyBench's
#: COVAR and CORR at 1024 columns (a triangle of loops whose lanes drop out one by one: 42 M
#: evaluations) count in 40-80 s and 170 MB within it.
FAST_THREAD_BUDGET = 1 << 26
# A dimension's segmentation key: a grid axis, or ("loop", its length).
_Key = str | tuple[str, int]
# One counting pass: "totals" (bytes and sectors by kind), "distinct" ((array, kind) -> pieces) and
# "loop_warps" (access index -> warp executions with a lane active, for accesses in a loop).
_Pass = dict[str, dict[Hashable, int]]
# What a pass totals: bytes by kind, L2 sectors' bytes, partial store sectors, L1 wavefronts and
# warp-wide loads.
_TOTALS = ("load", "store", "l2_load", "l2_store", "l2_partial_store", "l1_wavefronts", "load_requests")
# A pass's unit: bytes per piece, or ("elements", array) for one array's elements.
_Unit = int | tuple[str, str]


@dataclass(frozen=True)
class Coords:
    """Block, thread and loop indices handed to an `Access`'s functions.

    Each attribute is an integer numpy array; all broadcast to (rows, threads per block).
    Threads are numbered x first, then y, then z, and cut into warps of 32 in that order.

    Attributes
    ----------
    block_x, block_y, block_z : numpy.ndarray
        ``blockIdx``.
    thread_x, thread_y, thread_z : numpy.ndarray
        ``threadIdx``.
    loop : numpy.ndarray
        The iteration of the access's loop (0 for an access outside a loop).
    block_dim, grid_dim : tuple of int
        ``blockDim`` and ``gridDim`` as (x, y, z).
    """

    block_x: np.ndarray
    block_y: np.ndarray
    block_z: np.ndarray
    thread_x: np.ndarray
    thread_y: np.ndarray
    thread_z: np.ndarray
    loop: np.ndarray
    block_dim: tuple[int, int, int]
    grid_dim: tuple[int, int, int]

    @functools.cached_property
    def x(self) -> np.ndarray:
        """``blockIdx.x * blockDim.x + threadIdx.x``."""
        return self.block_x * self.block_dim[0] + self.thread_x

    @functools.cached_property
    def y(self) -> np.ndarray:
        """``blockIdx.y * blockDim.y + threadIdx.y``."""
        return self.block_y * self.block_dim[1] + self.thread_y

    @functools.cached_property
    def z(self) -> np.ndarray:
        """``blockIdx.z * blockDim.z + threadIdx.z``."""
        return self.block_z * self.block_dim[2] + self.thread_z


class Access(BaseModel):
    """One global-memory instruction of a kernel: which element of which array each thread touches.

    Attributes
    ----------
    array : str
        The allocation accessed. Arrays are separate, 256-byte aligned allocations
        (``cudaMalloc``); accesses that name the same array share its DRAM sectors.
    index : callable
        ``index(c) -> array of int``: the element of `array` each thread accesses, from
        the `Coords` ``c``; the byte address is ``index * element_bytes``.
    guard : callable or None
        ``guard(c) -> array of bool``: the threads that execute the access (the ``if``
        around it); None: every thread.
    kind : {"load", "store"}
        A read or a write (a read-modify-write is one of each).
    element_bytes : int
        Bytes per thread: 1, 2, 4, 8 or 16 (``float4``); the index counts in these units.
    loop : int
        The access runs in a loop of this many iterations; ``c.loop`` is the iteration.

    Examples
    --------
    >>> import roofline
    >>> n = 1000
    >>> load = roofline.Access(array="x", index=lambda c: c.x, guard=lambda c: c.x < n)
    >>> load.kind, load.element_bytes
    ('load', 4)
    """

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)

    array: str = Field(min_length=1, description="The allocation accessed.")
    index: Callable[[Coords], npt.ArrayLike] = Field(description="Element index of each thread.")
    guard: Callable[[Coords], npt.ArrayLike] | None = Field(default=None, description="Threads that execute it.")
    kind: Literal["load", "store"] = Field(default="load", description="Read or write.")
    element_bytes: int = Field(default=4, description="Bytes per thread.")
    loop: int = Field(default=1, ge=1, description="Iterations of the loop around the access.")

    @field_validator("element_bytes")
    @classmethod
    def _width(cls, value: int) -> int:
        if value not in _ELEMENT_BYTES:
            raise ValueError(f"element_bytes={value} must be one of {', '.join(map(str, _ELEMENT_BYTES))}")
        return value

    def __init__(self, **data: object) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise translate_validation_error(exc, "Access") from None


# ----------------------------------------------------------------------------- evaluation


@dataclass
class _Space:
    """The launch's index space: grid, block, threads in warp order."""

    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    thread_x: np.ndarray = field(init=False)
    thread_y: np.ndarray = field(init=False)
    thread_z: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        linear = np.arange(math.prod(self.block), dtype=np.int64)
        bx, by = self.block[0], self.block[1]
        self.thread_x = (linear % bx)[None, :]
        self.thread_y = (linear // bx % by)[None, :]
        self.thread_z = (linear // (bx * by))[None, :]

    @property
    def threads(self) -> int:
        return self.thread_x.shape[1]


def _dims_of(access: Access) -> tuple[str, ...]:
    return (*_AXES, "loop") if access.loop > 1 else _AXES


def _key(access: Access, dim: str) -> _Key:
    """The segmentation a dimension of an access shares: grid axes with every access,
    a loop with the accesses of the same loop length."""
    return ("loop", access.loop) if dim == "loop" else dim


def _size(space: _Space, access: Access, dim: str) -> int:
    return access.loop if dim == "loop" else space.grid[_AXES.index(dim)]


def _evaluate(space: _Space, access: Access, rows: dict[str, np.ndarray], where: str) -> tuple[np.ndarray, np.ndarray]:
    """Byte addresses and guards of `access` at ``rows`` (dim -> index per row): (rows, threads)."""
    n = len(next(iter(rows.values())))
    column = {d: np.asarray(rows.get(d, np.zeros(n, dtype=np.int64)), dtype=np.int64)[:, None] for d in (*_AXES, "loop")}
    c = Coords(column["x"], column["y"], column["z"], space.thread_x, space.thread_y, space.thread_z,
               column["loop"], space.block, space.grid)
    shape = (n, space.threads)
    index = np.asarray(access.index(c))
    if index.dtype.kind not in "iu":
        raise TypeError(
            f"{where}: index must return integers, not {index.dtype} (use // for integer division)"
        )
    address = np.broadcast_to(index.astype(np.int64) * access.element_bytes, shape)
    if access.guard is None:
        mask = np.ones(shape, dtype=bool)
    else:
        mask = np.asarray(access.guard(c))
        if mask.dtype != bool:
            raise TypeError(f"{where}: guard must return booleans, not {mask.dtype}")
        mask = np.broadcast_to(mask, shape)
    return address, mask


def _describe(i: int, access: Access) -> str:
    return f"accesses[{i}] ({access.kind} of {access.array!r})"


# ----------------------------------------------------------------------------- tracing the guards


class _Untraceable(Exception):
    """An index or guard the tracer cannot follow (not an error: the fast count then cannot
    prove its classes, see `_Cuts`)."""


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


def _trace(space: _Space, access: Access, function: Callable[[Coords], object]) -> object:
    """`function` of `Coords` whose block indices (and loop iteration) are traced; raises
    `_Untraceable` where it does more than affine arithmetic and comparisons on them."""
    def index(d: str) -> object:
        size = _size(space, access, d) if d in _dims_of(access) else 1
        # an index that is always 0 is a number: nothing can switch along it
        return _Affine(np.int64(0), {d: np.int64(1)}) if size > 1 else np.zeros((1, 1), dtype=np.int64)

    c = Coords(index("x"), index("y"), index("z"), space.thread_x, space.thread_y, space.thread_z,
               index("loop"), space.block, space.grid)
    try:
        return function(c)
    except _TRACE_FAILURES as exc:
        raise _Untraceable(str(exc)) from None


@dataclass(frozen=True)
class _Traced:
    """One access, traced (`_trace_access`).

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
class _Cuts:
    """Where the guards can switch, per segmentation key, from their traced comparisons.

    ``at[key]``: block indices ``b`` where a guard may differ between ``b - 1`` and ``b``;
    between two of them every guard is the same for every thread, whatever the other
    dimensions. ``crowded``: keys with too many to probe (`_MAX_CUTS`). ``traced``: every
    index traced affine with the slopes measured and every guard traced (`_trace_access`).
    """

    at: dict[_Key, tuple[int, ...]]
    crowded: frozenset[_Key]
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


def _trace_access(space: _Space, access: Access) -> _Traced | None:
    """`access`'s index and guard traced (`_Traced`), or None where the tracer cannot follow them."""
    sizes = {d: _size(space, access, d) for d in _dims_of(access)}
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
            return _Traced(slopes, {}, frozenset())  # the same for every block
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
    return _Traced(slopes, points, frozenset(crowded))


def _cuts(space: _Space, accesses: Sequence[Access], slopes: dict[tuple[int, str], int],
          traced: Callable[[Access], _Traced | None]) -> _Cuts:
    """The guards' switch points (`_Cuts`) from the accesses traced (``traced(access)``)."""
    at: dict[_Key, set[int]] = {}
    crowded: set[_Key] = set()
    every = True
    for i, access in enumerate(accesses):
        t = traced(access)
        if t is None:
            every = False
            continue
        every = every and all(t.slopes[d] == slopes[i, d] for d in _dims_of(access))
        crowded |= {_key(access, d) for d in t.crowded}
        for d, points in t.points.items():
            at.setdefault(_key(access, d), set()).update(points.tolist())
    crowded |= {key for key, points in at.items() if len(points) > _MAX_CUTS}
    return _Cuts({key: tuple(sorted(points)) for key, points in at.items() if key not in crowded},
                 frozenset(crowded), every)


def _proven(accesses: Sequence[Access], segments: dict[_Key, _Segments], cuts: _Cuts) -> bool:
    """Whether the classes of `segments` are exact: every access traced, and along every
    dimension with a run of classes, its own switch points sampled and those of the access's
    other dimensions probed (none crowded, see `_Cuts`)."""
    if not cuts.traced:
        return False
    for access in accesses:
        keys = [_key(access, d) for d in _dims_of(access)]
        if any(segments[k].count for k in keys) and cuts.crowded & set(keys):
            return False
    return True


# ----------------------------------------------------------------------------- the grid's classes


class _Irregular(RooflineError):
    """The access pattern breaks an assumption of the fast count."""


@dataclass(frozen=True)
class _Segments:
    """One dimension cut into single blocks and a run of ``count`` periods of ``period`` blocks."""

    size: int
    period: int
    singles: tuple[int, ...]
    run_start: int = 0
    count: int = 0  # periods in the run; 0 means no run

    def classes(self) -> list[tuple[int, int, int | None]]:
        """(representative index, blocks it stands for, residue in the run or None)."""
        out = [(b, 1, None) for b in self.singles if b < self.run_start or not self.count]
        if self.count:
            out += [(self.run_start + j, self.count, j) for j in range(self.period)]
            out += [(b, 1, None) for b in self.singles if b >= self.run_start]
        return out


def _slopes(space: _Space, accesses: Sequence[Access]) -> dict[tuple[int, str], int]:
    """Bytes each access's addresses move per step of each dimension (checked uniform)."""
    slopes: dict[tuple[int, str], int] = {}
    for i, access in enumerate(accesses):
        middle = {d: _size(space, access, d) // 2 for d in _dims_of(access)}
        for d in _dims_of(access):
            size = _size(space, access, d)
            if size < 2:
                slopes[i, d] = 0
                continue
            first = min(size // 2, size - 2)
            rows = {k: np.array([v, v]) for k, v in middle.items()}
            rows[d] = np.array([first, first + 1])
            address, mask = _evaluate(space, access, rows, _describe(i, access))
            both = mask[0] & mask[1]
            if not both.any():
                both = np.ones_like(both)
            step = np.unique(address[1][both] - address[0][both])
            if step.size != 1:
                raise _Irregular(
                    f"{_describe(i, access)}: addresses do not move together when the {_name(d)} moves by one "
                    "(not affine in it)"
                )
            slopes[i, d] = int(step[0])
    return slopes


def _name(dim: str) -> str:
    return "loop iteration" if dim == "loop" else f"blockIdx.{dim}"


def _dim(key: _Key) -> str:
    """The dimension a segmentation key stands for."""
    return key if isinstance(key, str) else "loop"


def _period(slope: int, unit: int = SECTOR_BYTES) -> int:
    """Blocks after which a slope of ``slope`` bytes has moved by whole units (sectors)."""
    return unit // math.gcd(unit, abs(slope))


def _representatives(segments: _Segments) -> set[int]:
    """A few blocks of a dimension that show its every kind of block: the boundary blocks
    nearest each end and the run's first classes."""
    singles = sorted(segments.singles)
    picked = set(singles[:3] + singles[-3:])
    if segments.count:
        picked |= {segments.run_start + j for j in range(min(segments.period, 4))}
    return picked


def _find_segments(
    space: _Space,
    accesses: Sequence[Access],
    slopes: dict,
    key: _Key,
    size: int,
    probes: dict[_Key, list[int]],
    unit: int = SECTOR_BYTES,
    cuts: Sequence[int] = (),
) -> _Segments:
    """Cut one dimension into its boundary blocks and an interior run.

    A block is interior when its guards equal, and its addresses are the shifted ones of,
    the block of the same class (same index modulo the period) in the middle of the
    dimension, with the other dimensions at each of their `probes`. The first and last
    blocks are compared one by one as far as a work budget allows, then by an
    exponential and a binary search; a sample of the interior is checked too, and so is
    the first period of blocks from the run's start and from each of the guards' switch
    points along this dimension (`cuts`, see `_Cuts`).
    """
    members = [(i, a, d) for i, a in enumerate(accesses) for d in _dims_of(a) if _key(a, d) == key]
    period = 1
    for i, _, d in members:
        period = max(period, _period(slopes[i, d], unit))  # powers of two: the lcm is the max
    if size < 4 * period:
        return _Segments(size, period, tuple(range(size)))
    middle = size // 2 // period * period  # a class's interior reference starts here

    # Every member at the other dimensions' probes, and at the reference blocks once.
    views = []
    for i, access, d in members:
        others = [e for e in _dims_of(access) if e != d]
        grid = np.meshgrid(*[probes[_key(access, e)] for e in others], indexing="ij")
        at = {e: g.ravel() for e, g in zip(others, grid)}
        n = grid[0].size
        reference = {e: np.tile(v, period) for e, v in at.items()}
        reference[d] = np.repeat(np.arange(middle, middle + period), n)
        ref_address, ref_mask = _evaluate(space, access, reference, _describe(i, access))
        views.append((i, access, d, at, n, ref_address.reshape(period, n, -1), ref_mask.reshape(period, n, -1)))

    def matches(blocks: Sequence[int]) -> np.ndarray:
        blocks = np.asarray(blocks, dtype=np.int64)
        residue = (blocks - middle) % period
        ok = np.ones(blocks.size, dtype=bool)
        for i, access, d, at, n, ref_address, ref_mask in views:
            rows = {e: np.tile(v, blocks.size) for e, v in at.items()}
            rows[d] = np.repeat(blocks, n)
            address, mask = _evaluate(space, access, rows, _describe(i, access))
            address, mask = address.reshape(blocks.size, n, -1), mask.reshape(blocks.size, n, -1)
            shift = ((blocks - middle - residue) * slopes[i, d])[:, None, None]
            want_address, want_mask = ref_address[residue], ref_mask[residue]
            same = (mask == want_mask) & (~mask | (address - shift == want_address))
            ok &= same.reshape(blocks.size, -1).all(axis=1)
        return ok

    # One call compares the first and last blocks one by one (as far as a work budget
    # allows) and a sample of the blocks between them.
    rows = sum(view[4] for view in views)
    scan = min(middle, max(2 * period, min(64 * period, _SCAN_ELEMENTS // (rows * space.threads))))
    head = np.arange(scan)
    tail = np.arange(size - 1, max(size - 1 - scan, middle + period - 1), -1)
    inner = np.unique(np.linspace(scan, size - 1 - scan, num=_INTERIOR_SAMPLE).astype(np.int64))
    ok = matches(np.concatenate([head, tail, inner]))
    ok_head, ok_tail, ok_inner = ok[: head.size], ok[head.size : head.size + tail.size], ok[head.size + tail.size :]

    def boundary(ok_end: np.ndarray, ends: Callable[[int, int], np.ndarray], limit: int) -> int:
        """How many blocks from one end (at most `limit`) are boundary blocks."""
        bad = np.flatnonzero(~ok_end)
        if not bad.size:
            return 0
        if bad[-1] + period < ok_end.size:
            return int(bad[-1]) + 1
        # A wide boundary: search on, taking it to end where a whole period matches.
        bad_e, good = ok_end.size, ok_end.size
        while good < limit and not matches(ends(good, period)).all():
            bad_e, good = good, min(limit, 2 * good)
        while good - bad_e > 1:
            mid = (bad_e + good) // 2
            bad_e, good = (bad_e, mid) if matches(ends(mid, period)).all() else (mid, good)
        return good

    low = boundary(ok_head, lambda at, k: np.arange(at, at + k), middle)
    high = size - boundary(ok_tail, lambda at, k: size - 1 - np.arange(at, at + k), size - middle - period)
    count = (high - low) // period
    end = low + count * period if count >= 2 else low
    singles = (*range(low), *range(end, size))
    if len(singles) > _MAX_BOUNDARY:
        raise _Irregular(
            f"{len(singles)} of the {size} values of the {_name(_dim(key))} behave unlike the interior "
            "(guards or addresses that change away from the boundaries)"
        )
    if count < 2:
        return _Segments(size, period, tuple(range(size)))
    # Between two switch points the guards do not change, so whether a block matches its
    # reference repeats with the period: one period from the run's start and from each
    # switch point inside it sees every kind of block in the run (the head and the tail
    # blocks inside the run matched already).
    starts = [low, *(b for b in cuts if low < b < end)]
    sample = np.unique(np.concatenate([np.arange(b, min(b + period, end)) for b in starts]))
    sample = sample[~np.isin(sample, np.concatenate([head, tail, inner]))]
    if not ok_inner[(inner >= low) & (inner < end)].all() or (sample.size and not matches(sample).all()):
        raise _Irregular(
            f"the {_name(_dim(key))} has blocks inside the grid that behave unlike their neighbours (a "
            "guard that switches threads on or off away from the grid's ends)"
        )
    return _Segments(size, period, singles, low, count)


def _segment_all(space: _Space, accesses: Sequence[Access], slopes: dict, sizes: dict[_Key, int],
                 unit: int = SECTOR_BYTES, cuts: _Cuts | None = None) -> dict:
    """Segments of every dimension. The other dimensions are probed at their ends, middle and
    every switch point of the guards (one value between two switch points stands for them all),
    then also at the representatives the first pass found, until the cut is stable. Probes are
    only ever added: a pass that dropped some could undo the pass before and never settle."""
    at = {} if cuts is None else cuts.at
    probes = {key: {0, size // 2, size - 1, *at.get(key, ())} for key, size in sizes.items()}
    for _ in range(3):
        segments = {key: _find_segments(space, accesses, slopes, key, size,
                                        {k: sorted(v) for k, v in probes.items()}, unit, at.get(key, ()))
                    for key, size in sizes.items()}
        wanted = {key: probes[key] | _representatives(seg) for key, seg in segments.items()}
        if wanted == probes:  # every kind of block was probed already
            break
        probes = wanted
    return segments


# ----------------------------------------------------------------------------- distinct sectors


@dataclass(frozen=True, eq=False)
class _Term:
    """Sectors ``base + sum over run dims of step[d] * m[d]`` for ``0 <= m[d] < count[d]``."""

    base: np.ndarray  # sorted unique sector numbers of the representatives
    runs: tuple[tuple[_Key, int, int], ...]  # (dim, count, step in sectors > 0)

    def extent(self, without: _Key | None = None) -> tuple[int, int]:
        reach = sum(step * (count - 1) for d, count, step in self.runs if d != without)
        return int(self.base[0]), int(self.base[-1]) + reach

    def shifted(self, d: _Key, copies: Sequence[int]) -> list[_Term]:
        """This term with dimension `d` fixed at each of `copies`."""
        step = next(s for e, _, s in self.runs if e == d)
        rest = tuple(r for r in self.runs if r[0] != d)
        return [_Term(self.base + step * m, rest) for m in copies]


def _union_one_dim(terms: Sequence[_Term]) -> int:
    """Distinct sectors of terms with at most one run dimension (one step): per residue of
    the step, an exact union of intervals."""
    steps = {s for t in terms for _, _, s in t.runs}
    if not steps:
        return int(np.unique(np.concatenate([t.base for t in terms])).size)
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


def _distinct(terms: Sequence[_Term]) -> int:
    """Distinct sectors of the union of `terms`, without listing the translates."""
    terms = [t for t in terms if t.base.size]
    if not terms:
        return 0
    steps: dict[_Key, set[tuple[int, int]]] = {}
    for t in terms:
        for d, count, step in t.runs:
            steps.setdefault(d, set()).add((count, step))
    for d, kinds in steps.items():
        if len(kinds) > 1:
            # Accesses to one array that move by different steps: list this dimension's
            # translates (work grows with its length, hence the budget).
            runs = [t for t in terms if any(e == d for e, _, _ in t.runs)]
            work = sum(t.base.size * next(c for e, c, _ in t.runs if e == d) for t in runs)
            if work > _EXPAND_ELEMENTS:
                raise _Irregular(
                    f"accesses to one array move by different amounts along the {_name(_dim(d))} (different "
                    "slopes) over too many blocks to list"
                )
            expanded = [s for t in runs for s in t.shifted(d, range(next(c for e, c, _ in t.runs if e == d)))]
            rest = [t for t in terms if not any(e == d for e, _, _ in t.runs)]
            return _distinct(rest + expanded)
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
        return _distinct([s for t in runs for s in t.shifted(d, range(count))] + singles)

    def first(k: int) -> int:
        return _distinct([s for t in runs for s in t.shifted(d, range(k))])

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
        return total + _distinct(singles)
    touching = [s for t in runs for s in t.shifted(d, copies)]
    return total + _distinct(touching + singles) - _distinct(touching)


# ----------------------------------------------------------------------------- counting


def _rows(per_dim: dict[str, list[tuple[int, int, int | None]]]) -> tuple[dict[str, np.ndarray], np.ndarray, dict]:
    """The product of the dimensions' classes: index per row, weight per row, residue per row."""
    dims = list(per_dim)
    grids = np.meshgrid(*[np.arange(len(per_dim[d])) for d in dims], indexing="ij")
    picks = {d: g.ravel() for d, g in zip(dims, grids)}
    index = {d: np.array([c[0] for c in per_dim[d]], dtype=np.int64)[picks[d]] for d in dims}
    weight = np.ones(len(next(iter(picks.values()))), dtype=object)
    for d in dims:
        weight = weight * np.array([c[1] for c in per_dim[d]], dtype=object)[picks[d]]
    residue = {d: np.array([-1 if c[2] is None else c[2] for c in per_dim[d]])[picks[d]] for d in dims}
    return index, weight, residue


def _warps(values: np.ndarray, fill: int | bool) -> np.ndarray:
    """(rows, threads) as (rows * warps, 32), the last warp padded."""
    rows, threads = values.shape
    warps = -(-threads // WARP_SIZE)
    padded = np.full((rows, warps * WARP_SIZE), fill, dtype=values.dtype)
    padded[:, :threads] = values
    return padded.reshape(rows * warps, WARP_SIZE)


def _partial_sectors(sectors: np.ndarray, mask: np.ndarray, element_bytes: int) -> np.ndarray:
    """Per warp (row of 32 lanes): sectors the warp writes only in part (fewer than 32 bytes)."""
    k = np.sort(np.where(mask, sectors, _NONE), axis=1)
    valid = k != _NONE
    first = np.ones(k.shape, dtype=bool)
    first[:, 1:] = k[:, 1:] != k[:, :-1]
    group = np.cumsum(first.ravel()) - 1
    lanes = np.bincount(group, weights=valid.ravel(), minlength=group[-1] + 1 if group.size else 0)
    partial = (lanes > 0) & (lanes * element_bytes < SECTOR_BYTES)
    row_of_group = np.repeat(np.arange(k.shape[0]), first.sum(axis=1))
    return np.bincount(row_of_group, weights=partial, minlength=k.shape[0]).astype(np.int64)


def _fast(space: _Space, accesses: Sequence[Access], unit: int, *,
          traced: Callable[[Access], _Traced | None]) -> _Pass:
    """Counts by classes of blocks (`_classes`), or block by block (`_exhaustive`) where that
    is within its budget and the classes are not proven (`_proven`) or not found.
    ``traced(access)``: `_trace_access` of an access, traced once for every pass.

    Raises
    ------
    RooflineError
        If the classes are not found and the walk is beyond `EXHAUSTIVE_THREAD_BUDGET`.
    """
    evaluations = _walk_evaluations(space, accesses)
    affordable = evaluations <= EXHAUSTIVE_THREAD_BUDGET
    try:
        slopes = _slopes(space, accesses)
        cuts = _cuts(space, accesses, slopes, traced)
        if affordable and not cuts.traced:
            return _exhaustive(space, accesses, unit)
        # Classes that are not proven were checked at probes only (a guard may switch between
        # them unseen): where the walk is cheap, it is taken instead.
        return _classes(space, accesses, unit, slopes, cuts, proof=affordable)
    except _Irregular as exc:
        if affordable:
            return _exhaustive(space, accesses, unit)
        raise RooflineError(
            f"{exc}; counting block by block (exhaustive=True) would evaluate {evaluations} threads, beyond its "
            f"budget of {EXHAUSTIVE_THREAD_BUDGET}") from None


def _classes(space: _Space, accesses: Sequence[Access], unit: int, slopes: dict[tuple[int, str], int],
             cuts: _Cuts, proof: bool = False) -> _Pass:
    """Counts by classes of blocks; distinct `unit`-byte pieces per array (sectors by default).
    Raises `_Irregular` where the pattern breaks an assumption of the classes, or where they
    are not proven (`_proven`) and ``proof`` asks them to be."""
    sizes: dict[_Key, int] = {}
    for a in accesses:
        for d in _dims_of(a):
            sizes[_key(a, d)] = _size(space, a, d)
    segments = _segment_all(space, accesses, slopes, sizes, unit, cuts)
    if proof and not _proven(accesses, segments, cuts):
        raise _Irregular("the guards switch at more values than the fast count probes")
    # Classes are worth it only where they are fewer than the blocks: a grid whose dimensions
    # are all boundary blocks (a matmul_tiled of m=85 with 1 x 1 tiles, 85**3 classes) has
    # as many classes as block-iterations, and the block-by-block walk gives the same exact
    # count several times faster (8 s against 1 s there; minutes before the classes were
    # grouped by one sort). Beyond both budgets the fast count is refused, not run out of memory.
    classes = sum(math.prod(len(segments[_key(a, d)].classes()) for d in _dims_of(a)) for a in accesses)
    walk = math.prod(space.grid) * sum(a.loop for a in accesses)
    if 2 * classes >= walk and walk * space.threads <= EXHAUSTIVE_THREAD_BUDGET:
        return _exhaustive(space, accesses, unit)
    if classes * space.threads > FAST_THREAD_BUDGET:
        raise _Irregular(
            f"the fast count would evaluate {classes * space.threads} threads ({classes} classes of blocks, most "
            f"of them boundary blocks, x {space.threads} threads); its budget is {FAST_THREAD_BUDGET}: use a "
            "grid whose blocks repeat more regularly, or a smaller grid")
    totals = dict.fromkeys(_TOTALS, 0)
    loop_warps: dict[int, int] = {}
    terms: dict[tuple[str, str], list[_Term]] = {}
    warps_per_block = -(-space.threads // WARP_SIZE)
    for i, access in enumerate(accesses):
        where = _describe(i, access)
        dims = _dims_of(access)
        per_dim = {d: segments[_key(access, d)].classes() for d in dims}
        index, weight, residue = _rows(per_dim)
        address, mask = _evaluate(space, access, index, where)
        _check_classes(space, access, where, dims, segments, slopes, i, index, residue, address, mask)
        lanes = mask.sum(axis=1)
        totals[access.kind] += int((lanes * weight).sum()) * access.element_bytes
        sectors = address // unit
        warp_weight = np.repeat(weight, warps_per_block)
        if unit == SECTOR_BYTES:
            lanes_of, sectors_of = _warps(mask, False), _warps(sectors, 0)
            per_warp = distinct_per_row(sectors_of, lanes_of)
            totals[f"l2_{access.kind}"] += int((per_warp * warp_weight).sum()) * SECTOR_BYTES
            _count_issued(totals, loop_warps, i, access, int((lanes_of.any(axis=1) * warp_weight).sum()))
            if access.kind == "store":
                partial = _partial_sectors(sectors_of, lanes_of, access.element_bytes)
                totals["l2_partial_store"] += int((partial * warp_weight).sum())
        if unit == LINE_BYTES:  # classes of blocks repeat with the line's period here
            lines = distinct_per_row(_warps(sectors, 0), _warps(mask, False))
            totals["l1_wavefronts"] += int((lines * warp_weight).sum())
        # Footprint terms: the run's classes of a dimension together, single blocks alone.
        group = np.stack([np.where(residue[d] >= 0, -1, index[d]) for d in dims], axis=1)
        keys, bases = _sectors_by_group(group, sectors, mask)
        for key, base in zip(keys, bases):
            if not base.size:
                continue
            runs = []
            for d, single in zip(dims, key):
                seg = segments[_key(access, d)]
                step = slopes[i, d] * seg.period // unit
                if single >= 0 or step == 0:
                    continue
                if step < 0:  # walk the run backwards so that steps are positive
                    base = base + step * (seg.count - 1)
                    step = -step
                runs.append((_key(access, d), seg.count, step))
            terms.setdefault((access.array, access.kind), []).append(_Term(base, tuple(runs)))
    distinct = {key: _distinct(t) for key, t in terms.items()}
    return {"totals": totals, "distinct": distinct, "loop_warps": loop_warps}


def _count_issued(totals: dict[str, int], loop_warps: dict[int, int], i: int, access: Access,
                  issued: int) -> None:
    """Add access `i`'s warp executions with a lane active (``issued``): to the load requests
    of a load, and to the loop's warps of an access in a loop."""
    if access.kind == "load":
        totals["load_requests"] += issued
    if access.loop > 1:
        loop_warps[i] = loop_warps.get(i, 0) + issued


def _sectors_by_group(group: np.ndarray, sectors: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
    """The distinct rows of `group` (sorted) and, for each, the sorted distinct sectors its
    rows touch (`sectors` where `mask`). One sort over every (group, sector) pair: comparing
    every row with every group took minutes where most blocks are boundary blocks (a
    matmul_tiled of m=85 with 1 x 1 tiles has about 7,000 groups over 600,000 rows)."""
    keys, inverse = np.unique(group, axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    owner = np.broadcast_to(inverse[:, None], mask.shape)[mask]
    touched = sectors[mask]
    order = np.lexsort((touched, owner))
    owner, touched = owner[order], touched[order]
    fresh = np.ones(owner.size, dtype=bool)
    fresh[1:] = (owner[1:] != owner[:-1]) | (touched[1:] != touched[:-1])
    owner, touched = owner[fresh], touched[fresh]
    cuts = np.searchsorted(owner, np.arange(1, keys.shape[0]))
    return keys, np.split(touched, cuts) if keys.shape[0] else []


def _check_classes(space, access, where, dims, segments, slopes, i, index, residue, address, mask) -> None:
    """Every block of a class must look like its representative, shifted: checked at the
    corners and the centre of the class."""
    runs = [d for d in dims if segments[_key(access, d)].count]
    if not runs:
        return
    corners = [dict(zip(runs, bits)) for bits in np.ndindex(*([2] * len(runs))) if any(bits)]
    corners.append({d: 0.5 for d in runs})
    moved: dict[str, list[np.ndarray]] = {d: [] for d in index}
    shifts = []
    for corner in corners:
        shift = np.zeros(len(next(iter(index.values()))), dtype=np.int64)
        for d in index:
            steps = 0
            if d in corner:
                seg = segments[_key(access, d)]
                steps = np.where(residue[d] >= 0, int(corner[d] * (seg.count - 1)) * seg.period, 0)
                shift = shift + steps * slopes[i, d]
            moved[d].append(index[d] + steps)
        shifts.append(shift)
    other_address, other_mask = _evaluate(space, access, {d: np.concatenate(v) for d, v in moved.items()}, where)
    copies = len(corners)
    expected = np.tile(address, (copies, 1)) + np.concatenate(shifts)[:, None]
    same_mask = other_mask == np.tile(mask, (copies, 1))
    if not same_mask.all() or not np.array_equal(
        np.where(other_mask, other_address, 0), np.where(other_mask, expected, 0)
    ):
        raise _Irregular(
            f"{where}: blocks of one class do not behave alike (a guard or an address that is not a "
            "boundary check or not affine in the block index)"
        )


def _walk_evaluations(space: _Space, accesses: Sequence[Access]) -> int:
    """Thread evaluations of a block-by-block walk: blocks x threads x accesses' loop iterations."""
    return math.prod(space.grid) * space.threads * sum(a.loop for a in accesses)


def _check_exhaustive_budget(space: _Space, accesses: Sequence[Access]) -> None:
    """Refuse an exhaustive count beyond `EXHAUSTIVE_THREAD_BUDGET`, before any work."""
    blocks = math.prod(space.grid)
    evaluations = _walk_evaluations(space, accesses)
    if evaluations > EXHAUSTIVE_THREAD_BUDGET:
        raise RooflineError(
            f"exhaustive=True would evaluate {evaluations} threads ({blocks} blocks x {space.threads} threads x "
            f"{sum(a.loop for a in accesses)} accesses and loop iterations); its budget is "
            f"{EXHAUSTIVE_THREAD_BUDGET}: use the fast count (exhaustive=False) or a smaller grid")


def _exhaustive(space: _Space, accesses: Sequence[Access], unit: int = SECTOR_BYTES) -> _Pass:
    totals = dict.fromkeys(_TOTALS, 0)
    loop_warps: dict[int, int] = {}
    units_of: dict[tuple[str, str], list[np.ndarray]] = {}
    for i, access in enumerate(accesses):
        where = _describe(i, access)
        shape = (*space.grid[::-1], access.loop)
        rows_total = math.prod(shape)
        chunk = max(1, _CHUNK_ELEMENTS // space.threads)
        for begin in range(0, rows_total, chunk):
            flat = np.arange(begin, min(begin + chunk, rows_total), dtype=np.int64)
            z, y, x, loop = np.unravel_index(flat, shape)
            address, mask = _evaluate(space, access, {"x": x, "y": y, "z": z, "loop": loop}, where)
            totals[access.kind] += int(mask.sum()) * access.element_bytes
            pieces = address // unit
            if unit == SECTOR_BYTES:
                lanes_of, pieces_of = _warps(mask, False), _warps(pieces, 0)
                totals[f"l2_{access.kind}"] += int(distinct_per_row(pieces_of, lanes_of).sum()) * SECTOR_BYTES
                _count_issued(totals, loop_warps, i, access, int(lanes_of.any(axis=1).sum()))
                if access.kind == "store":
                    totals["l2_partial_store"] += int(_partial_sectors(pieces_of, lanes_of, access.element_bytes).sum())
            if unit == LINE_BYTES:
                totals["l1_wavefronts"] += int(distinct_per_row(_warps(pieces, 0), _warps(mask, False)).sum())
            units_of.setdefault((access.array, access.kind), []).append(np.unique(pieces[mask]))
    distinct = {key: int(np.unique(np.concatenate(parts)).size) for key, parts in units_of.items()}
    return {"totals": totals, "distinct": distinct, "loop_warps": loop_warps}


def _result(passes: dict[_Unit, _Pass], accesses: Sequence[Access]) -> Traffic:
    main = passes[SECTOR_BYTES]
    totals = main["totals"]
    dram = {key: n * SECTOR_BYTES for key, n in main["distinct"].items()}
    by_array = {a.array: 0 for a in accesses}
    for (array, _), nbytes in dram.items():
        by_array[array] += nbytes

    def over(unit: int, kind: str) -> int:
        return sum(n for (_, k), n in passes[unit]["distinct"].items() if k == kind)

    # Bytes each array receives: distinct elements x their size (one element size per array).
    written = 0
    partial = 0
    for (array, kind), sectors in main["distinct"].items():
        if kind != "store":
            continue
        sizes = {a.element_bytes for a in accesses if a.array == array and a.kind == "store"}
        size = min(sizes)
        elements = passes[("elements", array)]["distinct"].get((array, "store"), 0) if len(sizes) == 1 else None
        covered = sectors * SECTOR_BYTES if elements is None else elements * size
        written += covered
        # Written at most half on average: every sector in part (a strided or sparse store).
        # Otherwise a sector written in part misses at most 32 - size bytes: the fewest partial
        # sectors that leave the bytes missing (a few ragged ends of mostly full rows).
        missing = sectors * SECTOR_BYTES - covered
        if missing > 0 and size < SECTOR_BYTES:
            partial += sectors if 2 * covered <= sectors * SECTOR_BYTES else min(
                sectors, -(-missing // (SECTOR_BYTES - size)))
    return Traffic(
        load_bytes=totals["load"],
        store_bytes=totals["store"],
        l2_load_bytes=totals["l2_load"],
        l2_store_bytes=totals["l2_store"],
        dram_load_bytes=sum(v for (_, kind), v in dram.items() if kind == "load"),
        dram_store_bytes=sum(v for (_, kind), v in dram.items() if kind == "store"),
        dram_bytes_by_array=by_array,
        l2_partial_store_sectors=totals["l2_partial_store"],
        load_requests=totals["load_requests"],
        l1_wavefronts=passes[LINE_BYTES]["totals"]["l1_wavefronts"],
        dram_load_bursts=over(BURST_BYTES, "load"),
        dram_load_lines=over(LINE_BYTES, "load"),
        dram_store_lines=over(LINE_BYTES, "store"),
        dram_store_written_bytes=written,
        dram_store_partial_sectors=partial,
    )


def _middle_block(space: _Space, access: Access, i: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(address, mask, loop iteration) of every thread and loop iteration (rows) of `access`
    in the grid's middle block."""
    middle = {axis: space.grid[k] // 2 for k, axis in enumerate(_AXES)}
    step = np.arange(access.loop, dtype=np.int64)
    rows = {**{axis: np.full(access.loop, v, dtype=np.int64) for axis, v in middle.items()}, "loop": step}
    address, mask = _evaluate(space, access, rows, _describe(i, access))
    return address, mask, np.broadcast_to(step[:, None], address.shape)


def _block_footprint(space: _Space, accesses: Sequence[Access]) -> int | None:
    """Distinct sectors (x 32 bytes) the middle block of the grid loads, all loop iterations."""
    loads = [a for a in accesses if a.kind == "load"]
    if not loads:
        return 0
    if sum(a.loop for a in loads) * space.threads > _CHUNK_ELEMENTS:
        return None
    sectors = []
    for i, access in enumerate(loads):
        address, mask, _ = _middle_block(space, access, i)
        # arrays are separate allocations: key the sectors by array
        sectors.append(np.unique(address[mask] // SECTOR_BYTES) * 1024 + sorted({a.array for a in loads}).index(access.array))
    return int(np.unique(np.concatenate(sectors)).size) * SECTOR_BYTES if sectors else 0


def _woken_together(space: _Space, accesses: Sequence[Access], store: Access, index: np.ndarray,
                    mask: np.ndarray, figures: Locality) -> np.ndarray | None:
    """Warps of the middle block that store `store` together, per loop iteration: (rows,
    warps) labels, or None when each warp stores on its own time.

    A store whose threads write the element each of them loaded (same index, same size,
    same loop: ``out[i] = f(in[i])``) issues when that load returns; warps whose loads
    touch a common sector wait for the same fill (the first misses, the others find it
    in flight) and wake together. Those warps, linked through the sectors they share,
    share a label. L1 combines their pieces only while a warp store touches at most
    ``figures.l1_combine_sectors`` sectors (the pieces of one sector arrive that many apart).
    `index` and `mask` are the store's byte addresses and guards in the middle block.
    """
    if distinct_per_row(_warps(index // SECTOR_BYTES, 0), _warps(mask, False)).max(initial=0) \
            > figures.l1_combine_sectors:
        return None
    for j, load in enumerate(accesses):
        if load.kind != "load" or load.loop != store.loop or load.element_bytes != store.element_bytes:
            continue
        address, load_mask, _ = _middle_block(space, load, j)
        if not (np.array_equal(load_mask, mask) and np.array_equal(address[mask], index[mask])):
            continue
        sectors = _warps(address // SECTOR_BYTES, 0).ravel()  # (rows x warps, 32), flattened
        valid = _warps(load_mask, False).ravel()
        rows, warps = address.shape[0], sectors.size // WARP_SIZE // address.shape[0]
        label = np.tile(np.arange(warps, dtype=np.int64), rows)
        if not valid.any():
            return label.reshape(rows, warps)
        owner = np.repeat(np.arange(rows * warps), WARP_SIZE)[valid]
        key = np.stack([owner // warps, sectors[valid]], axis=1)  # (iteration, sector) of each lane
        _, which = np.unique(key, axis=0, return_inverse=True)
        which = which.ravel()
        for _ in range(warps):  # label propagation: each warp takes the least label of its sectors' warps
            least = np.full(which.max() + 1, np.iinfo(np.int64).max)
            np.minimum.at(least, which, label[owner])
            new = label.copy()
            np.minimum.at(new, owner, least[which])
            if np.array_equal(new, label):
                break
            label = new
        return label.reshape(rows, warps)
    return None


def _own_merge_ratio(space: _Space, accesses: Sequence[Access], figures: Locality) -> float:
    """Partial sectors left when L1 combines the stores to one array in one loop iteration
    of a warp, or of the warps a shared load wakes together (`_woken_together`), over
    those counted store by store, in the middle block (1: nothing combines)."""
    stores = [a for a in accesses if a.kind == "store"]
    if not stores or sum(a.loop for a in stores + [a for a in accesses if a.kind == "load"]) * space.threads \
            > _CHUNK_ELEMENTS:
        return 1.0
    names = sorted({a.array for a in stores})
    warps = -(-space.threads // WARP_SIZE)
    warp_of = np.arange(space.threads) // WARP_SIZE
    separate = 0
    keys, sizes = [], []
    together = False
    for i, access in enumerate(stores):
        address, mask, step = _middle_block(space, access, i)
        separate += int(_partial_sectors(_warps(address // SECTOR_BYTES, 0), _warps(mask, False),
                                         access.element_bytes).sum())
        labels = _woken_together(space, accesses, access, address, mask, figures)
        if labels is None:
            warp = np.broadcast_to(warp_of[None, :], address.shape)
        else:
            warp = np.take_along_axis(labels, np.broadcast_to(warp_of[None, :], address.shape), axis=1)
            together = together or bool((labels != np.arange(warps)[None, :]).any())
        group = (step[mask] * warps + warp[mask]) * len(names) + names.index(access.array)
        keys.append(np.stack([group, address[mask]], axis=1))
        sizes.append(np.full(int(mask.sum()), access.element_bytes, dtype=np.int64))
    if not separate or (not together and all(sum(a.array == n for a in stores) < 2 for n in names)):
        return 1.0  # nothing to combine with
    pairs, first = np.unique(np.concatenate(keys), axis=0, return_index=True)
    size = np.concatenate(sizes)[first]
    sector = np.stack([pairs[:, 0], pairs[:, 1] // SECTOR_BYTES], axis=1)
    _, which = np.unique(sector, axis=0, return_inverse=True)
    covered = np.bincount(which.ravel(), weights=size)
    merged = int((covered < SECTOR_BYTES).sum())
    return merged / separate


def _block_stream(space: _Space, accesses: Sequence[Access]) -> tuple[int, int] | None:
    """The middle block's loads when L1 keeps only the sectors of the loop iteration before:
    (sectors read from L2, the most distinct sectors two consecutive iterations touch),
    x 32 bytes; None when the accesses are too many to list or have no loop."""
    loads = [a for a in accesses if a.kind == "load"]
    if not loads or max(a.loop for a in loads) < 2:
        return None
    if sum(a.loop for a in loads) * space.threads > _CHUNK_ELEMENTS:
        return None
    names = sorted({a.array for a in loads})
    steps, keys = [], []
    for i, access in enumerate(loads):
        address, mask, step = _middle_block(space, access, i)
        steps.append(step[mask])
        keys.append(address[mask] // SECTOR_BYTES * len(names) + names.index(access.array))
    step, key = np.concatenate(steps), np.concatenate(keys)
    if not key.size:
        return 0, 0
    span = int(key.max()) + 1
    iterations = int(step.max()) + 2
    if key.min() < 0 or span * iterations >= 2**62:
        return None
    pairs = np.unique(step * span + key)  # each (iteration, sector) once
    new = ~np.isin(pairs - span, pairs)   # not touched in the iteration before
    per_step = np.bincount(pairs // span, minlength=iterations)
    new_per_step = np.bincount(pairs // span, weights=new, minlength=iterations).astype(np.int64)
    window = int((per_step[:-1] + new_per_step[1:]).max())
    return int(new.sum()) * SECTOR_BYTES, window * SECTOR_BYTES


def _page_visits(space: _Space, accesses: Sequence[Access], figures: Locality) -> dict[str, int] | None:
    """DRAM pages opened per kind of access ({"load": n, "store": n}) by a window of
    consecutive blocks (``figures.page_window_threads`` threads) in the middle of the grid, starting at a
    multiple of its size, scaled to the launch; None when its accesses are too many to list."""
    blocks = math.prod(space.grid)
    window = max(1, min(blocks, figures.page_window_threads // space.threads))
    if sum(a.loop for a in accesses) * window * space.threads > _EXPAND_ELEMENTS:
        return None
    first = blocks // 2 // window * window  # a window that starts at a multiple of its size
    ids = np.arange(first, first + window, dtype=np.int64)
    gx, gy = space.grid[0], space.grid[1]
    names = sorted({a.array for a in accesses})
    visits = {}
    for kind in ("load", "store"):
        arrays, bursts, steps = [], [], []
        for i, access in enumerate(accesses):
            if access.kind != kind:
                continue
            step = np.repeat(np.arange(access.loop, dtype=np.int64), window)
            block = np.tile(ids, access.loop)
            rows = {"x": block % gx, "y": block // gx % gy, "z": block // (gx * gy), "loop": step}
            address, mask = _evaluate(space, access, rows, _describe(i, access))
            bursts.append(address[mask] // BURST_BYTES)
            arrays.append(np.full(bursts[-1].size, names.index(access.array), dtype=np.int64))
            steps.append(np.broadcast_to(step[:, None], address.shape)[mask])
        if not bursts or not sum(b.size for b in bursts):
            visits[kind] = 0
            continue
        array, burst, step = np.concatenate(arrays), np.concatenate(bursts), np.concatenate(steps)
        order = np.lexsort((step, burst, array))  # each burst's first iteration first
        array, burst, step = array[order], burst[order], step[order]
        first = np.ones(burst.size, dtype=bool)
        first[1:] = (burst[1:] != burst[:-1]) | (array[1:] != array[:-1])
        page = burst[first] // (figures.dram_page_bytes // BURST_BYTES)
        opened = np.unique(np.stack([array[first], page, step[first]], axis=1), axis=0).shape[0]
        visits[kind] = round(opened * blocks / window)
    return visits


def traffic(grid: int | Sequence[int], block: int | Sequence[int], accesses: Sequence[Access], *,
            exhaustive: bool = False, locality: Locality | None = None) -> Traffic:
    """Requested, L2-sector and compulsory DRAM bytes of a launch's global accesses, exactly.

    Parameters
    ----------
    grid, block : int or tuple of int
        ``gridDim`` and ``blockDim``, as for `occupancy.Launch` (1 to 3 dimensions).
    accesses : sequence of Access
        Every global-memory instruction of the kernel.
    exhaustive : bool
        False (default): count by classes of blocks, in time independent of the grid size.
        This needs (a) addresses affine in each block index and loop iteration (every
        thread's address moves by the same number of bytes when its block moves by one)
        and (b) guards that are boundary checks (away from a few blocks at each end of a
        dimension, a thread's guard does not depend on its block). Guards combined with
        ``&``, ``|`` and ``~`` from comparisons of affine expressions are traced to find
        every block where they switch, which makes the classes exact; a pattern outside
        (a) or (b), or one the tracer cannot follow (``np.where``, ``c.block_x % 3``,
        ...), is walked block by block where that is within the budget below, and
        beyond it the former is refused and the latter counted by classes checked at
        their corners and centre only. True: walk every block (time and memory grow with
        the grid, so it is refused beyond `EXHAUSTIVE_THREAD_BUDGET` = 2**22 thread
        evaluations: blocks x threads per block x loop iterations, summed over the accesses).
    locality : Locality, optional
        The GPU's locality figures (`roofline.locality`): the page size and window of the
        page visits, and the sectors up to which L1 combines the stores of warps woken
        together. Default the H200's, where they were measured.

    Returns
    -------
    Traffic

    Raises
    ------
    RooflineError
        If the pattern is outside the assumptions of the fast count on a grid too large to
        walk block by block (the message says which assumption and gives the walk's count),
        or with ``exhaustive=True`` beyond its budget (the message gives both counts).
    OccupancyError
        If grid or block are out of CUDA's limits.
    TypeError
        If an access's functions return other than integers (index) or booleans (guard).

    Examples
    --------
    >>> import roofline
    >>> n = 1 << 30
    >>> copy = [roofline.Access(array="x", index=lambda c: c.x, guard=lambda c: c.x < n),
    ...         roofline.Access(array="y", index=lambda c: c.x, guard=lambda c: c.x < n, kind="store")]
    >>> t = roofline.traffic(n // 256, 256, copy)
    >>> t.requested_bytes == t.l2_bytes == t.dram_bytes == 8 * n
    True
    """
    shape = Launch(grid=grid, block=block)
    accesses = sequence("accesses", accesses, "a sequence of roofline.Access")
    for a in accesses:
        if not isinstance(a, Access):
            raise TypeError(f"accesses must hold roofline.Access objects, not {type(a).__name__}")
    if not isinstance(exhaustive, (bool, np.bool_)):
        raise TypeError(f"exhaustive must be a bool, not {type(exhaustive).__name__}")
    space = _Space(shape.grid, shape.block)
    if exhaustive:
        _check_exhaustive_budget(space, accesses)
    # The passes trace each access once (its traces do not depend on the unit).
    traces = {id(a): _trace_access(space, a) for a in ([] if exhaustive else accesses)}
    count = _exhaustive if exhaustive else functools.partial(_fast, traced=lambda a: traces[id(a)])
    passes: dict[_Unit, _Pass] = {unit: count(space, accesses, unit)
                                         for unit in (SECTOR_BYTES, BURST_BYTES, LINE_BYTES)}
    for array in {a.array for a in accesses if a.kind == "store"}:
        stores = [a for a in accesses if a.array == array and a.kind == "store"]
        if len({a.element_bytes for a in stores}) == 1:
            passes[("elements", array)] = count(space, stores, stores[0].element_bytes)
    result = _result(passes, accesses)
    stream = _block_stream(space, accesses)
    figures = _locality_of(MEASURED_ON) if locality is None else locality
    if not isinstance(figures, Locality):
        raise TypeError(f"locality must be a roofline.Locality, not {type(figures).__name__}")
    merged = round(result.l2_partial_store_sectors * _own_merge_ratio(space, accesses, figures))
    pages = _page_visits(space, accesses, figures)
    # the warps that run the loops: over the accesses in a loop, the most warp executions with a
    # lane active per iteration, over the warps launched
    launched = shape.blocks * -(-space.threads // WARP_SIZE)
    looped = passes[SECTOR_BYTES]["loop_warps"]
    share = max((n / (accesses[i].loop * launched) for i, n in looped.items()), default=None)
    return result.model_copy(update={
        "blocks": shape.blocks,
        "loop_warp_share": share,
        "dram_load_page_visits": None if pages is None else pages["load"],
        "dram_store_page_visits": None if pages is None else pages["store"],
        "l2_partial_store_sectors": merged,
        "l1_footprint_bytes_per_block": _block_footprint(space, accesses),
        "l1_stream_bytes_per_block": None if stream is None else stream[0],
        "l1_window_bytes_per_block": None if stream is None else stream[1]})
