"""What L1 keeps: the L2 bytes and requests a launch sends past L1, and the shares of its loads
that miss L1 and L2; what L2 does not keep: a block's rereads of its own sectors once the
resident blocks' footprints outgrow it (`l2_capacity_rereads`), and the lines the resident blocks
hold open across an iteration, whose sectors come back to L2 when L1 lets them go (`open_lines`)."""

from __future__ import annotations

from occupancy import Launch, OccupancyResult

from ..._kernel import Kernel, Traffic, kernel_of
from ..._profile_counts import ProfileCounts
from ..rules import on

__all__ = ["kernel_misses", "l2_bytes_with_l1_reuse", "l2_capacity_rereads", "l2_requests", "load_misses",
           "open_lines", "served_l2_requests"]


def l2_bytes_with_l1_reuse(kernel: Kernel, launch: Launch, occupancy_result: OccupancyResult,
                           resident_blocks: int | None = None) -> float | None:
    """The kernel's L2 bytes when L1 keeps what a block loads (None when they are not known).

    When every resident block's load footprint (``kernel.traffic.l1_footprint_bytes_per_block``) fits in
    the L1 the launch's shared-memory configuration leaves (``occupancy_result.driver``), a
    block reads each sector from L2 once: its loads cost ``blocks x footprint`` bytes (the blocks
    of the launch the traffic was counted on, ``traffic.blocks``) at L2
    (never more than without reuse); stores go to L2 as they are. Else, when two
    consecutive loop iterations of every resident block fit
    (``l1_window_bytes_per_block``), a block reads from L2 only what its iteration before
    did not load (``blocks x l1_stream_bytes_per_block``). Otherwise ``l2_bytes``.

    Parameters
    ----------
    kernel : Kernel
    launch : occupancy.Launch
        The launch (its block count).
    occupancy_result : occupancy.OccupancyResult
        The launch's occupancy (resident blocks, the driver's L1 share).
    resident_blocks : int, optional
        Blocks an SM holds at once: a grid smaller than the GPU's room puts fewer on an SM than
        the occupancy allows (`roofline.predict` passes its first wave's, at most
        ``ceil(blocks / SMs)``). Default: the occupancy's ``active_blocks_per_sm``.

    Raises
    ------
    TypeError
        If an argument is not of its type.
    """
    kernel = kernel_of(kernel)
    if not isinstance(launch, Launch):
        raise TypeError(f"launch must be an occupancy.Launch, not {type(launch).__name__}")
    if not isinstance(occupancy_result, OccupancyResult):
        raise TypeError(f"occupancy_result must be an occupancy.OccupancyResult, not {type(occupancy_result).__name__}")
    if kernel.l2_bytes is None:
        return None
    l2 = float(kernel.l2_bytes)
    traffic = kernel.traffic
    l1 = occupancy_result.driver.l1_cache
    if traffic is None or traffic.l1_footprint_bytes_per_block is None or not l1:
        return l2
    footprint, stores = traffic.l1_footprint_bytes_per_block, traffic.l2_store_bytes
    # the footprints are per block of the launch the traffic was counted on
    blocks = traffic.blocks or launch.blocks
    resident = occupancy_result.active_blocks_per_sm if resident_blocks is None else \
        min(occupancy_result.active_blocks_per_sm, max(1, int(resident_blocks)))
    loads = max(0.0, l2 - float(stores))
    if resident * float(footprint) <= l1:
        return min(loads, blocks * float(footprint)) + float(stores)
    stream, window = traffic.l1_stream_bytes_per_block, traffic.l1_window_bytes_per_block
    if window is not None and traffic.l2_open_bytes_per_block and on("l1_open_lines"):
        # L1 holds a block's open lines whole (a tag a 128-byte line), not only their sectors
        window = max(window, traffic.l2_open_bytes_per_block)
    if stream is not None and window is not None and resident * float(window) <= l1:
        # the whole footprint does not fit, two loop iterations do: what the last
        # iteration loaded is still there (a row walked 4 bytes at a time, a shared column)
        return min(loads, blocks * float(stream)) + float(stores)
    return l2


def l2_capacity_rereads(kernel: Kernel, blocks: int, resident_blocks: int, served_l2_bytes: float | None,
                        l2_cache_bytes: int | None) -> float:
    """Load bytes that reach DRAM again: a block's rereads of its own sectors that L2 let go.

    ``kernel.dram_bytes`` counts each sector once, as if L2 kept every sector a launch reads.
    A block that reads its sectors (``traffic.l1_footprint_bytes_per_block``, ``F``) and comes
    back to them after a loop iteration that did not touch them (a row's maximum, then its sum
    of exponentials: its ``l1_stream_bytes_per_block`` ``S`` beyond ``F``; the loads that reach
    L2 at all, `l2_bytes_with_l1_reuse` less the stores, bound ``blocks x S``) finds them in L2
    only while the sectors L2 took in between fit it. Those rereads are taken as a second pass
    over the block's footprint, and the resident blocks run their passes side by side (a wave
    starts together), so between a sector's two reads every resident block brings its own
    footprint: ``min(blocks, resident) x F x own`` bytes, ``own`` the share of
    a block's footprint that is its own (``dram_load_bytes / (blocks x F)``: 1 where blocks
    read disjoint sectors, less where they share). Where that exceeds the L2's capacity
    (``l2_cache_bytes``, the datasheet's), L2 has evicted the sector (least recently used
    first) and the rereads of a block's own sectors, ``rereads x own``, come from DRAM again;
    else none. A sector read again in the next iteration (a thread's row walked 4 bytes at a
    time) is no reread here: L1 or L2 still holds it. 0 without the counts (no ``traffic``, no
    footprint or stream, no L2 size).

    Parameters
    ----------
    kernel : Kernel
    blocks : int
        Blocks of the launch.
    resident_blocks : int
        Blocks resident on the whole GPU at once (a full wave's).
    served_l2_bytes : float or None
        `l2_bytes_with_l1_reuse` of the launch, bytes.
    l2_cache_bytes : int or None
        The GPU's L2 size, bytes.

    Returns
    -------
    float
        Bytes.
    """
    traffic = kernel.traffic
    if traffic is None or served_l2_bytes is None or not l2_cache_bytes or not on("l2_capacity_rereads"):
        return 0.0
    footprint, distinct = traffic.l1_footprint_bytes_per_block, float(traffic.dram_load_bytes)
    stream = traffic.l1_stream_bytes_per_block
    if not footprint or not distinct or stream is None:
        return 0.0
    counted, loads = _counted_loads(traffic, blocks, served_l2_bytes)
    own = min(1.0, distinct / (counted * float(footprint)))
    rereads = min(loads, counted * float(stream)) - counted * float(footprint)
    concurrent = min(blocks, resident_blocks) * float(footprint) * own
    return rereads * own if rereads > 0 and concurrent > l2_cache_bytes else 0.0


def open_lines(kernel: Kernel, blocks: int, resident_blocks: int,
               served_l2_bytes: float | None) -> tuple[float | None, float]:
    """The lines the resident blocks hold open across a loop iteration, and the load bytes that
    come back to L2 for them (rule ``l2_open_lines``).

    A block that walks lines across iterations (a thread's row, 4 bytes a step) holds
    ``traffic.l2_open_bytes_per_block`` of lines open; the GPU's resident blocks (at most
    ``resident_blocks``, a full wave's) hold that many times it. Where L1 does not keep the
    iteration before's sectors, the block asks L2 for them again: the load bytes that reach L2
    (`l2_bytes_with_l1_reuse` less the stores) beyond what the block reads when L1 keeps them
    (``blocks x l1_stream_bytes_per_block``). They hit L2 while it holds the open lines; the
    DRAM term fetches the share the GPU's open-lines probe gives again (`open_line_refetch_bytes`).
    (None, 0) without the counts or with the rule off.

    Parameters
    ----------
    kernel : Kernel
    blocks : int
        Blocks of the launch.
    resident_blocks : int
        Blocks resident on the whole GPU at once (a full wave's).
    served_l2_bytes : float or None
        `l2_bytes_with_l1_reuse` of the launch, bytes.

    Returns
    -------
    tuple of (float or None, float)
        Open line bytes of the resident blocks, and the load bytes requested again, bytes.
    """
    traffic = kernel.traffic
    if traffic is None or served_l2_bytes is None or not traffic.l2_open_bytes_per_block \
            or traffic.l1_stream_bytes_per_block is None or not on("l2_open_lines"):
        return None, 0.0
    counted, loads = _counted_loads(traffic, blocks, served_l2_bytes)
    again = max(0.0, loads - counted * float(traffic.l1_stream_bytes_per_block))
    return min(blocks, resident_blocks) * float(traffic.l2_open_bytes_per_block), again


def _counted_loads(traffic: Traffic, blocks: int, served_l2_bytes: float) -> tuple[int, float]:
    """The blocks the per-block figures were counted on (those of the launch the traffic was
    counted for, else this launch's), and the load bytes that reach L2 (the served bytes less
    the stores)."""
    return traffic.blocks or blocks, max(0.0, served_l2_bytes - float(traffic.l2_store_bytes))


def _ratio(part: float | None, whole: float | None) -> float:
    return 1.0 if not part or not whole else min(1.0, float(part) / float(whole))


def kernel_misses(kernel: Kernel, measured: ProfileCounts | None = None) -> tuple[float, float]:
    """The shares of the kernel's load sectors that miss L1, and of those that miss L2, from
    a profile's hit rates (``1 - l1_hit_rate``, ``1 - l2_hit_rate`` of ``measured``), else the
    kernel's bytes (``l2_bytes / l1_bytes``, ``dram_bytes / l2_bytes``; without ``l2_bytes``,
    ``dram_bytes`` over the bytes the threads ask for, ``requested_bytes``, which L2 sees at most;
    1 where a level has no figure)."""
    l1_rate, l2_rate = _hit_rates(measured)
    l1 = 1.0 - l1_rate if l1_rate is not None else _ratio(kernel.l2_bytes, kernel.l1_bytes)
    # without L2 bytes, the bytes the threads ask for reach L2 at most (L1 keeping none of them):
    # DRAM moving fewer says the rest hit L2 (rule requested_bytes_at_l2)
    at_l2 = kernel.l2_bytes
    if at_l2 is None and on("requested_bytes_at_l2"):
        at_l2 = kernel.count("requested_bytes")
    l2 = 1.0 - l2_rate if l2_rate is not None else _ratio(kernel.dram_bytes, at_l2)
    return l1, l2


def _hit_rates(measured: ProfileCounts | None) -> tuple[float | None, float | None]:
    if measured is None or not on("profile_hit_rates"):
        return None, None
    return measured.l1_hit_rate, measured.l2_hit_rate


def load_misses(kernel: Kernel, served_l2_bytes: float | None,
                measured: ProfileCounts | None = None, reread_dram_bytes: float = 0.0) -> tuple[float, float]:
    """The shares of the kernel's load sectors that miss L1, and of those that miss L2.

    A profile's hit rates where it gives them (`kernel_misses`); else, from the traffic
    `roofline.memory.traffic` counted, the loads' own: the load bytes that reach L2 once L1 keeps
    what it can (`served_l2_bytes`, `l2_bytes_with_l1_reuse`, less the stores) over the sectors
    the loads look up (``l2_load_bytes``), and the compulsory DRAM reads (``dram_load_bytes``, with
    the rereads L2 let go, ``reread_dram_bytes``: `l2_capacity_rereads`) over those L2 load bytes. Stores are left out of both: they go to L2 and hit there whatever
    the loads do (a loop that stores its accumulator every trip). Else the bytes' (`kernel_misses`).
    """
    l1, l2 = kernel_misses(kernel, measured)
    traffic = kernel.traffic
    if traffic is None or not traffic.l2_load_bytes:
        return l1, l2
    served = served_l2_bytes
    loads = max(0.0, float(served if served is not None else traffic.l2_bytes) - float(traffic.l2_store_bytes))
    l1_rate, l2_rate = _hit_rates(measured)
    if l1_rate is None:
        l1 = min(1.0, loads / float(traffic.l2_load_bytes))
    if l2_rate is None:
        l2 = min(1.0, (float(traffic.dram_load_bytes) + reread_dram_bytes) / loads) if loads else 0.0
    return l1, l2


def l2_requests(kernel: Kernel) -> float | None:
    """SM -> L2 requests of `kernel`: its ``l2_requests`` (a profile's count), else the lines
    its warps' accesses touch as `roofline.memory.traffic` counted them (``traffic.l1_wavefronts``:
    one request per distinct 128-byte line of a warp access), else None."""
    kernel = kernel_of(kernel)
    if kernel.l2_requests is not None:
        return float(kernel.l2_requests)
    traffic = kernel.traffic
    if traffic is not None and traffic.l1_wavefronts:
        return float(traffic.l1_wavefronts)
    return None


def served_l2_requests(kernel: Kernel, served_l2_bytes: float | None) -> float | None:
    """The `l2_requests` that reach L2: requests counted by `roofline.memory.traffic` (at L1) scaled by
    the share of the L2 bytes that L1 does not keep (`served_l2_bytes`); a profile's count as it is."""
    requests = l2_requests(kernel)
    if requests and kernel.l2_requests is None and kernel.l2_bytes:
        # the traffic counts a warp access's lines at L1: those L1 keeps (`l2_bytes_with_l1_reuse`)
        # never reach L2, so L2 sees the same share of the requests as of the bytes
        served = served_l2_bytes or 0.0
        requests *= min(1.0, served / float(kernel.l2_bytes))
    return requests
