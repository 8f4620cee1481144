"""`traffic`: a launch's requested, L2-sector and compulsory DRAM bytes, from its counting passes."""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np

from occupancy import Launch
from occupancy.common import sequence

from .._kernel import Traffic
from .._locality import MEASURED_ON, Locality, locality as _locality_of
from .._warps import SECTOR_BYTES, WARP_SIZE
from .combining import block_footprint, block_stream, own_merge_ratio, page_visits
from .passes import check_exhaustive_budget, exhaustive_pass, fast_pass
from .space import BURST_BYTES, LINE_BYTES, Access, Pass, Space
from .trace import trace_access

__all__ = ["traffic"]


# A pass's unit: bytes per piece, or ("elements", array) for one array's elements.
_Unit = int | tuple[str, str]


def _result(passes: dict[_Unit, Pass], accesses: Sequence[Access]) -> Traffic:
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
    loaded_partial = 0
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
            in_part = sectors if 2 * covered <= sectors * SECTOR_BYTES else min(
                sectors, -(-missing // (SECTOR_BYTES - size)))
            partial += in_part
            # the partial sectors spread like the written ones over those the kernel loads too
            loaded_partial += round(in_part * main["loaded_stores"].get(array, 0) / sectors)
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
        dram_store_loaded_partial_sectors=loaded_partial,
    )


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
        The GPU's locality figures (`roofline.memory.locality`): the page size and window of the
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
    >>> copy = [roofline.memory.Access(array="x", index=lambda c: c.x, guard=lambda c: c.x < n),
    ...         roofline.memory.Access(array="y", index=lambda c: c.x, guard=lambda c: c.x < n, kind="store")]
    >>> t = roofline.memory.traffic(n // 256, 256, copy)
    >>> t.requested_bytes == t.l2_bytes == t.dram_bytes == 8 * n
    True
    """
    shape = Launch(grid=grid, block=block)
    accesses = sequence("accesses", accesses, "a sequence of roofline.memory.Access")
    for a in accesses:
        if not isinstance(a, Access):
            raise TypeError(f"accesses must hold roofline.memory.Access objects, not {type(a).__name__}")
    if not isinstance(exhaustive, (bool, np.bool_)):
        raise TypeError(f"exhaustive must be a bool, not {type(exhaustive).__name__}")
    space = Space(shape.grid, shape.block)
    if exhaustive:
        check_exhaustive_budget(space, accesses)
    # The passes trace each access once (its traces do not depend on the unit).
    traces = {id(a): trace_access(space, a) for a in ([] if exhaustive else accesses)}
    count = exhaustive_pass if exhaustive else functools.partial(fast_pass, traced=lambda a: traces[id(a)])
    passes: dict[_Unit, Pass] = {unit: count(space, accesses, unit)
                                         for unit in (SECTOR_BYTES, BURST_BYTES, LINE_BYTES)}
    for array in {a.array for a in accesses if a.kind == "store"}:
        stores = [a for a in accesses if a.array == array and a.kind == "store"]
        if len({a.element_bytes for a in stores}) == 1:
            passes[("elements", array)] = count(space, stores, stores[0].element_bytes)
    result = _result(passes, accesses)
    stream = block_stream(space, accesses)
    figures = _locality_of(MEASURED_ON) if locality is None else locality
    if not isinstance(figures, Locality):
        raise TypeError(f"locality must be a roofline.memory.Locality, not {type(figures).__name__}")
    merged = round(result.l2_partial_store_sectors * own_merge_ratio(space, accesses, figures))
    pages = page_visits(space, accesses, figures)
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
        "l1_footprint_bytes_per_block": block_footprint(space, accesses),
        "l1_stream_bytes_per_block": None if stream is None else stream[0],
        "l1_window_bytes_per_block": None if stream is None else stream[1],
        "l2_open_bytes_per_block": None if stream is None else stream[2]})
