"""How the hardware combines a launch's traffic: a block's footprint, the stores L1 merges across warps and the DRAM page openings."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from .._locality import Locality
from .._warps import SECTOR_BYTES, WARP_SIZE, distinct_per_row
from .passes import as_warps, partial_sectors
from .space import (AXES, BURST_BYTES, CHUNK_ELEMENTS, EXPAND_ELEMENTS, FOOTPRINT_ELEMENTS, LINE_BYTES, Access,
                    Space, describe, evaluate_rows, sorted_unique)

__all__ = ["block_footprint", "block_stream", "own_merge_ratio", "page_visits"]


def _middle_block(space: Space, access: Access, i: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(address, mask, loop iteration) of every thread and loop iteration (rows) of `access`
    in the grid's middle block."""
    middle = {axis: space.grid[k] // 2 for k, axis in enumerate(AXES)}
    step = np.arange(access.loop, dtype=np.int64)
    rows = {**{axis: np.full(access.loop, v, dtype=np.int64) for axis, v in middle.items()}, "loop": step}
    address, mask = evaluate_rows(space, access, rows, describe(i, access))
    return address, mask, np.broadcast_to(step[:, None], address.shape)


def _past_footprint_cap(space: Space, loads: Sequence[Access]) -> bool:
    """Whether the middle block's loads, every thread's every iteration, outnumber
    `FOOTPRINT_ELEMENTS` (L1 reuse is then left uncounted)."""
    return sum(a.loop for a in loads) * space.threads > FOOTPRINT_ELEMENTS


def block_footprint(space: Space, accesses: Sequence[Access]) -> int | None:
    """Distinct sectors (x 32 bytes) the middle block of the grid loads, all loop iterations."""
    loads = [a for a in accesses if a.kind == "load"]
    if not loads:
        return 0
    if _past_footprint_cap(space, loads):
        return None
    names = sorted({a.array for a in loads})
    sectors = []
    for i, access in enumerate(loads):
        address, mask, _ = _middle_block(space, access, i)
        # arrays are separate allocations: key the sectors by array
        sectors.append(sorted_unique(address[mask] // SECTOR_BYTES) * 1024 + names.index(access.array))
    return int(sorted_unique(np.concatenate(sectors)).size) * SECTOR_BYTES if sectors else 0


def _woken_together(space: Space, accesses: Sequence[Access], store: Access, index: np.ndarray,
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
    if distinct_per_row(as_warps(index // SECTOR_BYTES, 0), as_warps(mask, False)).max(initial=0) \
            > figures.l1_combine_sectors:
        return None
    for j, load in enumerate(accesses):
        if load.kind != "load" or load.loop != store.loop or load.element_bytes != store.element_bytes:
            continue
        address, load_mask, _ = _middle_block(space, load, j)
        if not (np.array_equal(load_mask, mask) and np.array_equal(address[mask], index[mask])):
            continue
        sectors = as_warps(address // SECTOR_BYTES, 0).ravel()  # (rows x warps, 32), flattened
        valid = as_warps(load_mask, False).ravel()
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


def own_merge_ratio(space: Space, accesses: Sequence[Access], figures: Locality) -> float:
    """Partial sectors left when L1 combines the stores to one array in one loop iteration
    of a warp, or of the warps a shared load wakes together (`_woken_together`), over
    those counted store by store, in the middle block (1: nothing combines)."""
    stores = [a for a in accesses if a.kind == "store"]
    if not stores or sum(a.loop for a in stores + [a for a in accesses if a.kind == "load"]) * space.threads \
            > CHUNK_ELEMENTS:
        return 1.0
    names = sorted({a.array for a in stores})
    warps = -(-space.threads // WARP_SIZE)
    warp_of = np.arange(space.threads) // WARP_SIZE
    separate = 0
    keys, sizes = [], []
    together = False
    for i, access in enumerate(stores):
        address, mask, step = _middle_block(space, access, i)
        separate += int(partial_sectors(as_warps(address // SECTOR_BYTES, 0), as_warps(mask, False),
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


def block_stream(space: Space, accesses: Sequence[Access]) -> tuple[int, int, int] | None:
    """The middle block's loads when L1 keeps only the sectors of the loop iteration before:
    (sectors read from L2, the most distinct sectors two consecutive iterations touch),
    x 32 bytes, and the most 128-byte lines two consecutive iterations both touch, x 128
    bytes (its open lines: L2 must keep them for the next iteration to hit); None when the
    accesses are too many to list or have no loop. The iterations run phase after phase
    (`Access.phase`): a second loop's first iteration follows the first loop's last."""
    loads = [a for a in accesses if a.kind == "load"]
    # a phase's iterations follow every iteration of the phases before it (`Access.phase`)
    start, walked = {}, 0
    for phase in sorted({a.phase for a in loads}):
        start[phase] = walked
        walked += max(a.loop for a in loads if a.phase == phase)
    if walked < 2:
        return None
    if _past_footprint_cap(space, loads):
        return None
    names = sorted({a.array for a in loads})
    steps, keys = [], []
    for i, access in enumerate(loads):
        address, mask, step = _middle_block(space, access, i)
        steps.append(step[mask] + start[access.phase])
        keys.append(address[mask] // SECTOR_BYTES * len(names) + names.index(access.array))
    step, key = np.concatenate(steps), np.concatenate(keys)
    if not key.size:
        return 0, 0, 0
    span = int(key.max()) + 1
    iterations = int(step.max()) + 2
    if key.min() < 0 or span * iterations >= 2**62:
        return None
    pairs = sorted_unique(step * span + key)  # each (iteration, sector) once, ascending
    new = _new_in_step(pairs, span)
    per_step = np.bincount(pairs // span, minlength=iterations)
    new_per_step = np.bincount(pairs // span, weights=new, minlength=iterations).astype(np.int64)
    window = int((per_step[:-1] + new_per_step[1:]).max())
    # a sector key's line: the array's index stays the remainder, the sector's number / 4
    sector_key, arrays = pairs % span, len(names)
    line_key = sector_key // arrays // (LINE_BYTES // SECTOR_BYTES) * arrays + sector_key % arrays
    lines = sorted_unique(pairs // span * span + line_key)
    line_new = _new_in_step(lines, span)
    # a line touched in the iteration before too is open across the two
    held = np.bincount(lines // span, weights=~line_new, minlength=iterations).astype(np.int64)
    return int(new.sum()) * SECTOR_BYTES, window * SECTOR_BYTES, int(held.max()) * LINE_BYTES


def _new_in_step(pairs: np.ndarray, span: int) -> np.ndarray:
    """Of sorted (iteration x span + key) pairs: which were not touched in the iteration before
    (their pair less ``span`` is absent)."""
    before = np.minimum(np.searchsorted(pairs, pairs - span), pairs.size - 1)
    return pairs[before] != pairs - span


def page_visits(space: Space, accesses: Sequence[Access], figures: Locality) -> dict[str, int] | None:
    """DRAM pages opened per kind of access ({"load": n, "store": n}) by a window of
    consecutive blocks (``figures.page_window_threads`` threads) in the middle of the grid, starting at a
    multiple of its size, scaled to the launch; None when its accesses are too many to list."""
    blocks = math.prod(space.grid)
    window = max(1, min(blocks, figures.page_window_threads // space.threads))
    if sum(a.loop for a in accesses) * window * space.threads > EXPAND_ELEMENTS:
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
            address, mask = evaluate_rows(space, access, rows, describe(i, access))
            bursts.append(address[mask] // BURST_BYTES)
            arrays.append(np.full(bursts[-1].size, names.index(access.array), dtype=np.int64))
            steps.append(np.broadcast_to(step[:, None], address.shape)[mask])
        if not bursts or not sum(b.size for b in bursts):
            visits[kind] = 0
            continue
        array, burst, step = np.concatenate(arrays), np.concatenate(bursts), np.concatenate(steps)
        opened = _pages_opened(array, burst, step, figures.dram_page_bytes // BURST_BYTES)
        visits[kind] = round(opened * blocks / window)
    return visits


def _pages_opened(array: np.ndarray, burst: np.ndarray, step: np.ndarray, bursts_per_page: int) -> int:
    """Distinct (array, page, loop iteration) of each (array, burst)'s first iteration.

    Each triple packed into one int64 where its ranges allow (one sort of integers, not a sort
    of rows: a matmul's window lists millions of accesses), else sorted as rows."""
    if not burst.size:
        return 0
    low, iterations = int(burst.min()), int(step.max()) + 1
    span = int(burst.max()) - low + 1
    if int(array.max() + 1) * span * iterations < 2**62 and int(step.min()) >= 0:
        key = np.sort((array * span + (burst - low)) * iterations + step)  # each burst's first iteration first
        first = np.ones(key.size, dtype=bool)
        first[1:] = key[1:] // iterations != key[:-1] // iterations
        key = key[first]
        page = (key // iterations % span + low) // bursts_per_page
        pages = int(page.max() - page.min()) + 1
        return int(np.unique((key // iterations // span * pages + (page - page.min())) * iterations
                             + key % iterations).size)
    order = np.lexsort((step, burst, array))  # each burst's first iteration first
    array, burst, step = array[order], burst[order], step[order]
    first = np.ones(burst.size, dtype=bool)
    first[1:] = (burst[1:] != burst[:-1]) | (array[1:] != array[:-1])
    page = burst[first] // bursts_per_page
    return int(np.unique(np.stack([array[first], page, step[first]], axis=1), axis=0).shape[0])
