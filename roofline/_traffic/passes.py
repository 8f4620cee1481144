"""The counting passes: the fast count over classes of blocks, and the exhaustive walk of every block within its budget."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from .._errors import RooflineError
from .._warps import SECTOR_BYTES, WARP_SIZE, distinct_per_row
from .distinct import LatticeTerm, distinct_sectors
from .segments import Irregular, block_slopes, classes_proven, segment_all
from .space import (
    CHUNK_ELEMENTS,
    LINE_BYTES,
    Access,
    Key,
    Pass,
    Space,
    describe,
    dim_size,
    dims_of,
    evaluate_rows,
    segment_key,
    sorted_unique,
)
from .trace import Cuts, Traced, find_cuts

__all__ = ["as_warps", "check_exhaustive_budget", "exhaustive_pass", "fast_pass", "partial_sectors"]


_NONE = np.iinfo(np.int64).max  # the sort key of a lane that does not access
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
# What a pass totals: bytes by kind, L2 sectors' bytes, partial store sectors, L1 wavefronts and
# warp-wide loads.
_TOTALS = ("load", "store", "l2_load", "l2_store", "l2_partial_store", "l1_wavefronts", "load_requests")


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


def as_warps(values: np.ndarray, fill: int | bool) -> np.ndarray:
    """(rows, threads) as (rows * warps, 32), the last warp padded."""
    rows, threads = values.shape
    warps = -(-threads // WARP_SIZE)
    padded = np.full((rows, warps * WARP_SIZE), fill, dtype=values.dtype)
    padded[:, :threads] = values
    return padded.reshape(rows * warps, WARP_SIZE)


def partial_sectors(sectors: np.ndarray, mask: np.ndarray, element_bytes: int) -> np.ndarray:
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


def fast_pass(space: Space, accesses: Sequence[Access], unit: int, *,
          traced: Callable[[Access], Traced | None]) -> Pass:
    """Counts by classes of blocks (`_classes`), or block by block (`exhaustive_pass`) where that
    is within its budget and the classes are not proven (`classes_proven`) or not found.
    ``traced(access)``: `trace_access` of an access, traced once for every pass.

    Raises
    ------
    RooflineError
        If the classes are not found and the walk is beyond `EXHAUSTIVE_THREAD_BUDGET`.
    """
    evaluations = _walk_evaluations(space, accesses)
    affordable = evaluations <= EXHAUSTIVE_THREAD_BUDGET
    try:
        slopes = block_slopes(space, accesses)
        cuts = find_cuts(space, accesses, slopes, traced)
        if affordable and not cuts.traced:
            return exhaustive_pass(space, accesses, unit)
        # Classes that are not proven were checked at probes only (a guard may switch between
        # them unseen): where the walk is cheap, it is taken instead.
        return _classes(space, accesses, unit, slopes, cuts, proof=affordable)
    except Irregular as exc:
        if affordable:
            return exhaustive_pass(space, accesses, unit)
        raise RooflineError(
            f"{exc}; counting block by block (exhaustive=True) would evaluate {evaluations} threads, beyond its "
            f"budget of {EXHAUSTIVE_THREAD_BUDGET}") from None


def _classes(space: Space, accesses: Sequence[Access], unit: int, slopes: dict[tuple[int, str], int],
             cuts: Cuts, proof: bool = False) -> Pass:
    """Counts by classes of blocks; distinct `unit`-byte pieces per array (sectors by default).
    Raises `Irregular` where the pattern breaks an assumption of the classes, or where they
    are not proven (`classes_proven`) and ``proof`` asks them to be."""
    sizes: dict[Key, int] = {}
    for a in accesses:
        for d in dims_of(a):
            sizes[segment_key(a, d)] = dim_size(space, a, d)
    segments = segment_all(space, accesses, slopes, sizes, unit, cuts)
    if proof and not classes_proven(accesses, segments, cuts):
        raise Irregular("the guards switch at more values than the fast count probes")
    # Classes are worth it only where they are fewer than the blocks: a grid whose dimensions
    # are all boundary blocks (a matmul_tiled of m=85 with 1 x 1 tiles, 85**3 classes) has
    # as many classes as block-iterations, and the block-by-block walk gives the same exact
    # count several times faster (8 s against 1 s there; minutes before the classes were
    # grouped by one sort). Beyond both budgets the fast count is refused, not run out of memory.
    classes = sum(math.prod(len(segments[segment_key(a, d)].classes()) for d in dims_of(a)) for a in accesses)
    walk = math.prod(space.grid) * sum(a.loop for a in accesses)
    if 2 * classes >= walk and walk * space.threads <= EXHAUSTIVE_THREAD_BUDGET:
        return exhaustive_pass(space, accesses, unit)
    if classes * space.threads > FAST_THREAD_BUDGET:
        raise Irregular(
            f"the fast count would evaluate {classes * space.threads} threads ({classes} classes of blocks, most "
            f"of them boundary blocks, x {space.threads} threads); its budget is {FAST_THREAD_BUDGET}: use a "
            "grid whose blocks repeat more regularly, or a smaller grid")
    totals = dict.fromkeys(_TOTALS, 0)
    loop_warps: dict[int, int] = {}
    terms: dict[tuple[str, str], list[LatticeTerm]] = {}
    warps_per_block = -(-space.threads // WARP_SIZE)
    for i, access in enumerate(accesses):
        where = describe(i, access)
        dims = dims_of(access)
        per_dim = {d: segments[segment_key(access, d)].classes() for d in dims}
        index, weight, residue = _rows(per_dim)
        address, mask = evaluate_rows(space, access, index, where)
        _check_classes(space, access, where, dims, segments, slopes, i, index, residue, address, mask)
        lanes = mask.sum(axis=1)
        totals[access.kind] += int((lanes * weight).sum()) * access.element_bytes
        sectors = address // unit
        warp_weight = np.repeat(weight, warps_per_block)
        if unit == SECTOR_BYTES:
            lanes_of, sectors_of = as_warps(mask, False), as_warps(sectors, 0)
            per_warp = distinct_per_row(sectors_of, lanes_of)
            totals[f"l2_{access.kind}"] += int((per_warp * warp_weight).sum()) * SECTOR_BYTES
            _count_issued(totals, loop_warps, i, access, int((lanes_of.any(axis=1) * warp_weight).sum()))
            if access.kind == "store":
                partial = partial_sectors(sectors_of, lanes_of, access.element_bytes)
                totals["l2_partial_store"] += int((partial * warp_weight).sum())
        if unit == LINE_BYTES:  # classes of blocks repeat with the line's period here
            lines = distinct_per_row(as_warps(sectors, 0), as_warps(mask, False))
            totals["l1_wavefronts"] += int((lines * warp_weight).sum())
        # Footprint terms: the run's classes of a dimension together, single blocks alone.
        group = np.stack([np.where(residue[d] >= 0, -1, index[d]) for d in dims], axis=1)
        keys, bases = _sectors_by_group(group, sectors, mask)
        for key, base in zip(keys, bases):
            if not base.size:
                continue
            runs = []
            for d, single in zip(dims, key):
                seg = segments[segment_key(access, d)]
                step = slopes[i, d] * seg.period // unit
                if single >= 0 or step == 0:
                    continue
                if step < 0:  # walk the run backwards so that steps are positive
                    base = base + step * (seg.count - 1)
                    step = -step
                runs.append((segment_key(access, d), seg.count, step))
            terms.setdefault((access.array, access.kind), []).append(LatticeTerm(base, tuple(runs)))
    distinct = {key: distinct_sectors(t) for key, t in terms.items()}
    both = {}
    if unit == SECTOR_BYTES:
        for array in {a for a, kind in terms if kind == "store" and (a, "load") in terms}:
            try:
                union = distinct_sectors(terms[array, "load"] + terms[array, "store"])
            except Irregular:
                # loads and stores moving by different steps over too many blocks to list: the
                # overlap stays unknown (none taken as loaded), the counts themselves are exact
                continue
            both[array] = distinct[array, "load"] + distinct[array, "store"] - union
    return {"totals": totals, "distinct": distinct, "loop_warps": loop_warps, "loaded_stores": both}


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
    runs = [d for d in dims if segments[segment_key(access, d)].count]
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
                seg = segments[segment_key(access, d)]
                steps = np.where(residue[d] >= 0, int(corner[d] * (seg.count - 1)) * seg.period, 0)
                shift = shift + steps * slopes[i, d]
            moved[d].append(index[d] + steps)
        shifts.append(shift)
    other_address, other_mask = evaluate_rows(space, access, {d: np.concatenate(v) for d, v in moved.items()}, where)
    copies = len(corners)
    expected = np.tile(address, (copies, 1)) + np.concatenate(shifts)[:, None]
    same_mask = other_mask == np.tile(mask, (copies, 1))
    if not same_mask.all() or not np.array_equal(
        np.where(other_mask, other_address, 0), np.where(other_mask, expected, 0)
    ):
        raise Irregular(
            f"{where}: blocks of one class do not behave alike (a guard or an address that is not a "
            "boundary check or not affine in the block index)"
        )


def _walk_evaluations(space: Space, accesses: Sequence[Access]) -> int:
    """Thread evaluations of a block-by-block walk: blocks x threads x accesses' loop iterations."""
    return math.prod(space.grid) * space.threads * sum(a.loop for a in accesses)


def check_exhaustive_budget(space: Space, accesses: Sequence[Access]) -> None:
    """Refuse an exhaustive count beyond `EXHAUSTIVE_THREAD_BUDGET`, before any work."""
    blocks = math.prod(space.grid)
    evaluations = _walk_evaluations(space, accesses)
    if evaluations > EXHAUSTIVE_THREAD_BUDGET:
        raise RooflineError(
            f"exhaustive=True would evaluate {evaluations} threads ({blocks} blocks x {space.threads} threads x "
            f"{sum(a.loop for a in accesses)} accesses and loop iterations); its budget is "
            f"{EXHAUSTIVE_THREAD_BUDGET}: use the fast count (exhaustive=False) or a smaller grid")


def exhaustive_pass(space: Space, accesses: Sequence[Access], unit: int = SECTOR_BYTES) -> Pass:
    totals = dict.fromkeys(_TOTALS, 0)
    loop_warps: dict[int, int] = {}
    units_of: dict[tuple[str, str], list[np.ndarray]] = {}
    for i, access in enumerate(accesses):
        where = describe(i, access)
        shape = (*space.grid[::-1], access.loop)
        rows_total = math.prod(shape)
        chunk = max(1, CHUNK_ELEMENTS // space.threads)
        for begin in range(0, rows_total, chunk):
            flat = np.arange(begin, min(begin + chunk, rows_total), dtype=np.int64)
            z, y, x, loop = np.unravel_index(flat, shape)
            address, mask = evaluate_rows(space, access, {"x": x, "y": y, "z": z, "loop": loop}, where)
            totals[access.kind] += int(mask.sum()) * access.element_bytes
            pieces = address // unit
            if unit == SECTOR_BYTES:
                lanes_of, pieces_of = as_warps(mask, False), as_warps(pieces, 0)
                totals[f"l2_{access.kind}"] += int(distinct_per_row(pieces_of, lanes_of).sum()) * SECTOR_BYTES
                _count_issued(totals, loop_warps, i, access, int(lanes_of.any(axis=1).sum()))
                if access.kind == "store":
                    totals["l2_partial_store"] += int(partial_sectors(pieces_of, lanes_of, access.element_bytes).sum())
            if unit == LINE_BYTES:
                totals["l1_wavefronts"] += int(distinct_per_row(as_warps(pieces, 0), as_warps(mask, False)).sum())
            units_of.setdefault((access.array, access.kind), []).append(sorted_unique(pieces[mask]))
    pieces_of = {key: sorted_unique(np.concatenate(parts)) for key, parts in units_of.items()}
    distinct = {key: int(pieces.size) for key, pieces in pieces_of.items()}
    both = {array: int(np.intersect1d(pieces, pieces_of[array, "load"], assume_unique=True).size)
            for (array, kind), pieces in pieces_of.items()
            if kind == "store" and (array, "load") in pieces_of} if unit == SECTOR_BYTES else {}
    return {"totals": totals, "distinct": distinct, "loop_warps": loop_warps, "loaded_stores": both}
