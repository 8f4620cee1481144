"""Each grid dimension (and loop) cut into its boundary blocks and an interior run of classes of blocks that touch sectors alike."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from .._errors import RooflineError
from .._warps import SECTOR_BYTES
from .space import Access, Key, Space, describe, dim_size, dims_of, evaluate_rows, segment_key
from .trace import Cuts

__all__ = ["Irregular", "block_slopes", "classes_proven", "dim_name", "key_dim", "segment_all"]


# Boundary blocks of one dimension taken one by one before giving up on the fast count.
_MAX_BOUNDARY = 4096
# Thread evaluations spent comparing the first and last blocks of a dimension one by one.
_SCAN_ELEMENTS = 1 << 17
# Interior blocks of a dimension compared with their class's reference.
_INTERIOR_SAMPLE = 8


def classes_proven(accesses: Sequence[Access], segments: dict[Key, _Segments], cuts: Cuts) -> bool:
    """Whether the classes of `segments` are exact: every access traced, and along every
    dimension with a run of classes, its own switch points sampled and those of the access's
    other dimensions probed (none crowded, see `Cuts`)."""
    if not cuts.traced:
        return False
    for access in accesses:
        keys = [segment_key(access, d) for d in dims_of(access)]
        if any(segments[k].count for k in keys) and cuts.crowded & set(keys):
            return False
    return True


# ----------------------------------------------------------------------------- the grid's classes


class Irregular(RooflineError):
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


def block_slopes(space: Space, accesses: Sequence[Access]) -> dict[tuple[int, str], int]:
    """Bytes each access's addresses move per step of each dimension (checked uniform)."""
    slopes: dict[tuple[int, str], int] = {}
    for i, access in enumerate(accesses):
        middle = {d: dim_size(space, access, d) // 2 for d in dims_of(access)}
        for d in dims_of(access):
            size = dim_size(space, access, d)
            if size < 2:
                slopes[i, d] = 0
                continue
            first = min(size // 2, size - 2)
            rows = {k: np.array([v, v]) for k, v in middle.items()}
            rows[d] = np.array([first, first + 1])
            address, mask = evaluate_rows(space, access, rows, describe(i, access))
            both = mask[0] & mask[1]
            if not both.any():
                both = np.ones_like(both)
            step = np.unique(address[1][both] - address[0][both])
            if step.size != 1:
                raise Irregular(
                    f"{describe(i, access)}: addresses do not move together when the {dim_name(d)} moves by one "
                    "(not affine in it)"
                )
            slopes[i, d] = int(step[0])
    return slopes


def dim_name(dim: str) -> str:
    return "loop iteration" if dim == "loop" else f"blockIdx.{dim}"


def key_dim(key: Key) -> str:
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


@dataclass(frozen=True)
class _Reference:
    """The interior reference of one dimension: each member access evaluated at one period of
    blocks from the dimension's middle, at the other dimensions' probes (`views`)."""

    space: Space
    slopes: dict
    middle: int
    period: int
    views: tuple

    def matches(self, blocks: Sequence[int]) -> np.ndarray:
        """Per block: whether its guards equal, and its addresses are the shifted ones of, its
        class's reference block."""
        blocks = np.asarray(blocks, dtype=np.int64)
        residue = (blocks - self.middle) % self.period
        ok = np.ones(blocks.size, dtype=bool)
        for i, access, d, at, n, ref_address, ref_mask in self.views:
            rows = {e: np.tile(v, blocks.size) for e, v in at.items()}
            rows[d] = np.repeat(blocks, n)
            address, mask = evaluate_rows(self.space, access, rows, describe(i, access))
            address, mask = address.reshape(blocks.size, n, -1), mask.reshape(blocks.size, n, -1)
            shift = ((blocks - self.middle - residue) * self.slopes[i, d])[:, None, None]
            want_address, want_mask = ref_address[residue], ref_mask[residue]
            same = (mask == want_mask) & (~mask | (address - shift == want_address))
            ok &= same.reshape(blocks.size, -1).all(axis=1)
        return ok


def _reference(space: Space, members: list, slopes: dict, middle: int, period: int,
               probes: dict[Key, list[int]]) -> _Reference:
    """Every member at the other dimensions' probes, and at the reference blocks once."""
    views = []
    for i, access, d in members:
        others = [e for e in dims_of(access) if e != d]
        grid = np.meshgrid(*[probes[segment_key(access, e)] for e in others], indexing="ij")
        at = {e: g.ravel() for e, g in zip(others, grid)}
        n = grid[0].size
        reference = {e: np.tile(v, period) for e, v in at.items()}
        reference[d] = np.repeat(np.arange(middle, middle + period), n)
        ref_address, ref_mask = evaluate_rows(space, access, reference, describe(i, access))
        views.append((i, access, d, at, n, ref_address.reshape(period, n, -1), ref_mask.reshape(period, n, -1)))
    return _Reference(space, slopes, middle, period, tuple(views))


def _boundary(reference: _Reference, ok_end: np.ndarray, ends: Callable[[int, int], np.ndarray], limit: int) -> int:
    """How many blocks from one end (at most `limit`) are boundary blocks, given whether each
    of the first ones matched (`ok_end`) and the blocks ``ends(at, k)`` from ``at`` on."""
    period = reference.period
    bad = np.flatnonzero(~ok_end)
    if not bad.size:
        return 0
    if bad[-1] + period < ok_end.size:
        return int(bad[-1]) + 1
    # A wide boundary: search on, taking it to end where a whole period matches.
    bad_e, good = ok_end.size, ok_end.size
    while good < limit and not reference.matches(ends(good, period)).all():
        bad_e, good = good, min(limit, 2 * good)
    while good - bad_e > 1:
        mid = (bad_e + good) // 2
        bad_e, good = (bad_e, mid) if reference.matches(ends(mid, period)).all() else (mid, good)
    return good


def _check_run(reference: _Reference, key: Key, run: tuple[int, int], cuts: Sequence[int],
               compared: np.ndarray, ok_inner: np.ndarray, inner: np.ndarray) -> None:
    """Refuse an interior run ``[low, end)`` with a block unlike its neighbours.

    Between two switch points the guards do not change, so whether a block matches its
    reference repeats with the period: one period from the run's start and from each switch
    point inside it sees every kind of block in the run (the blocks already `compared`
    are not compared again).
    """
    low, end = run
    starts = [low, *(b for b in cuts if low < b < end)]
    sample = np.unique(np.concatenate([np.arange(b, min(b + reference.period, end)) for b in starts]))
    sample = sample[~np.isin(sample, compared)]
    if not ok_inner[(inner >= low) & (inner < end)].all() or (sample.size and not reference.matches(sample).all()):
        raise Irregular(
            f"the {dim_name(key_dim(key))} has blocks inside the grid that behave unlike their neighbours (a "
            "guard that switches threads on or off away from the grid's ends)"
        )


def _find_segments(
    space: Space,
    accesses: Sequence[Access],
    slopes: dict,
    key: Key,
    size: int,
    probes: dict[Key, list[int]],
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
    points along this dimension (`cuts`, see `Cuts`).
    """
    members = [(i, a, d) for i, a in enumerate(accesses) for d in dims_of(a) if segment_key(a, d) == key]
    period = 1
    for i, _, d in members:
        period = max(period, _period(slopes[i, d], unit))  # powers of two: the lcm is the max
    if size < 4 * period:
        return _Segments(size, period, tuple(range(size)))
    middle = size // 2 // period * period  # a class's interior reference starts here
    reference = _reference(space, members, slopes, middle, period, probes)

    # One call compares the first and last blocks one by one (as far as a work budget
    # allows) and a sample of the blocks between them.
    rows = sum(view[4] for view in reference.views)
    scan = min(middle, max(2 * period, min(64 * period, _SCAN_ELEMENTS // (rows * space.threads))))
    head = np.arange(scan)
    tail = np.arange(size - 1, max(size - 1 - scan, middle + period - 1), -1)
    inner = np.unique(np.linspace(scan, size - 1 - scan, num=_INTERIOR_SAMPLE).astype(np.int64))
    ok = reference.matches(np.concatenate([head, tail, inner]))
    ok_head, ok_tail, ok_inner = ok[: head.size], ok[head.size : head.size + tail.size], ok[head.size + tail.size :]

    low = _boundary(reference, ok_head, lambda at, k: np.arange(at, at + k), middle)
    high = size - _boundary(reference, ok_tail, lambda at, k: size - 1 - np.arange(at, at + k), size - middle - period)
    count = (high - low) // period
    end = low + count * period if count >= 2 else low
    singles = (*range(low), *range(end, size))
    if len(singles) > _MAX_BOUNDARY:
        raise Irregular(
            f"{len(singles)} of the {size} values of the {dim_name(key_dim(key))} behave unlike the interior "
            "(guards or addresses that change away from the boundaries)"
        )
    if count < 2:
        return _Segments(size, period, tuple(range(size)))
    _check_run(reference, key, (low, end), cuts, np.concatenate([head, tail, inner]), ok_inner, inner)
    return _Segments(size, period, singles, low, count)


def segment_all(space: Space, accesses: Sequence[Access], slopes: dict, sizes: dict[Key, int],
                 unit: int = SECTOR_BYTES, cuts: Cuts | None = None) -> dict:
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
