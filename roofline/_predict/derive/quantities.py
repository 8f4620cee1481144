"""The derived quantities of one launch: what the terms of the time model are computed from.

`derive` fills them once per prediction from the kernel, its launch and the GPU; nothing here
is measured (a term's measured parameters are `roofline._predict.params`). Each group is what
one or a few terms read: the grid and its waves, the loads in flight, the bytes and requests
at each level, the global and shared atomics, the issue slots, the barrier phases and the hot loop's rounds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["Atomics", "Barriers", "Derived", "DramTraffic", "Grid", "HotLoop", "IssueSlots", "L1Traffic",
           "L2Traffic", "LeftoverBursts", "Loads", "LoopAround", "SharedAtomics"]

#: A count as a kernel gives it (ints stay ints).
Count = int | float


@dataclass(frozen=True)
class Grid:
    """The launch on the GPU: its blocks, a full wave's slots, the busiest SM and the first wave.

    Attributes
    ----------
    blocks, sm_count, slots : int
        Blocks of the grid, SMs of the GPU, blocks resident on the whole GPU at once.
    sms_in_use : int
        SMs the grid occupies (its blocks, at most the GPU's SMs).
    first_wave_blocks : int
        Blocks the busiest SM holds at once in the first wave.
    warps_per_block : int
    busiest_sm_factor : float
        How much more of the launch the busiest SM runs than an even share (`work_shares`).
    slowest_warp_factor : float
        The slowest warp's hot-loop trips over the mean warp's (`work_shares`).
    moves_bytes : bool
        The kernel moves bytes at some level (its first memory round spreads over the SMs).
    """

    blocks: int
    sm_count: int
    slots: int
    sms_in_use: int
    first_wave_blocks: int
    warps_per_block: int
    busiest_sm_factor: float
    slowest_warp_factor: float
    moves_bytes: bool


@dataclass(frozen=True)
class Loads:
    """The loads a thread keeps in flight: ``rounds`` round trips for its ``elements_per_thread``."""

    elements_per_thread: int
    in_flight_per_thread: int
    rounds: int


@dataclass(frozen=True)
class DramTraffic:
    """The kernel's DRAM bytes and the counts that say how the DRAM spends them.

    ``bytes`` counts 32-byte sectors (``kernel.dram_bytes``). ``store_bytes`` is None when the
    kernel has no ``traffic`` to say which bytes are written; the other counts are those of
    ``kernel.traffic`` (None where it does not give them). ``page_bytes`` is the GPU's DRAM page
    size; ``after_l2_flush``: the launch starts from validate's L2 flush. ``store_filled_sectors``:
    the sectors written in part that DRAM fills first (those the kernel does not load itself).
    ``open_line_bytes``: the lines the resident blocks hold open across a loop iteration (None
    without the count); ``rerequested_bytes``: the load bytes they request at L2 again because
    L1 let go of the iteration before's sectors (`open_lines`).
    """

    bytes: float
    store_bytes: float | None
    load_bursts: Count | None
    load_page_visits: Count | None
    load_lines: Count | None
    store_partial_sectors: float
    store_filled_sectors: float
    store_page_visits: Count | None
    store_lines: Count | None
    page_bytes: float
    after_l2_flush: bool
    open_line_bytes: float | None = None
    rerequested_bytes: float = 0.0


@dataclass(frozen=True)
class L2Traffic:
    """What reaches L2: its bytes once L1 keeps what it can (`l2_bytes_with_l1_reuse`, None when
    the kernel gives no L2 bytes), its requests (the share of them L1 does not keep), and the
    sectors warps write in part."""

    served_bytes: float | None
    requests: float | None
    partial_store_sectors: Count | None


@dataclass(frozen=True)
class L1Traffic:
    """The kernel's L1/shared data-path bytes (``kernel.l1_bytes``, None without them)."""

    bytes: Count | None


@dataclass(frozen=True)
class Atomics:
    """Global atomic updates and stores to one address.

    ``addresses``: the addresses the updates hit (the kernel's, else 1 where its SASS finds
    every global atomic's address the same for every thread; None when not known).
    ``cas_contenders``: the threads whose compare-and-swap retry loops update each address at
    once (``kernel.cas_contenders``; None: not such a loop, or not known).
    ``one_address_type``: ``"f32"``/``"f64"`` where the SASS finds the one-address atomics
    float (double) adds (rule ``float_atomics``), else None.
    """

    updates: float
    addresses: Count | None
    one_address_stores: float
    cas_contenders: float | None = None
    one_address_type: Literal["f32", "f64"] | None = None


@dataclass(frozen=True)
class SharedAtomics:
    """Shared-memory atomics: plain updates and compare-and-swap retry loops, per launch.

    ``words``: the shared words one block's atomics hit (None: taken as spread over the
    banks); ``cas_contenders``: the threads that contend for one word at once in the retry
    loops (at least 1); ``threads``: the launch's threads (a thread's own loops run in series).
    """

    updates: float
    words: Count | None
    cas_successes: float
    cas_contenders: float
    threads: int


@dataclass(frozen=True)
class IssueSlots:
    """The work the schedulers issue and the schedulers of the busiest SM that issue it.

    Attributes
    ----------
    flops : float
    tensor : bool
        The flops run on the tensor pipe.
    peak_flops_per_second : float
        The datasheet's rate at the kernel's precision.
    paths_per_warp : float
        ``kernel.branch_issue_factor``: a divergent warp runs both sides of a branch.
    busiest_sm_share, schedulers_in_use, warps_per_scheduler : float
        `issue_slots`: the busiest SM's share of the launch, the share of its schedulers its
        warps occupy, the warps each of them holds.
    fma_chains_per_thread : int
    sm_count : int
    sub_partitions, schedulers : int
        Schedulers per SM and on the whole GPU.
    clock_hz : float
        The boost clock.
    warp_instructions : int or float or None
        ``kernel.instructions``, else estimated from the SASS (times the paths), else None.
    notes : tuple of str
        How the instructions were estimated.
    straight_line_listed, straight_line_issued : float
        Of an estimate from the SASS, the warp instructions of the code outside every loop as
        listed and as issued at the paths per warp (`straight_line_instructions`); 0 without.
    """

    flops: float
    tensor: bool
    peak_flops_per_second: float
    paths_per_warp: float
    busiest_sm_share: float
    schedulers_in_use: float
    warps_per_scheduler: float
    fma_chains_per_thread: int
    sm_count: int
    sub_partitions: int
    schedulers: int
    clock_hz: float
    warp_instructions: Count | None
    notes: tuple[str, ...] = ()
    straight_line_listed: float = 0.0
    straight_line_issued: float = 0.0


@dataclass(frozen=True)
class Barriers:
    """The barrier phases of a block: the barriers it passes, its warps, whether barriers
    keep its warps in one phase (its SASS holds a ``BAR``, or the kernel says it passes some),
    and the stretches between barriers in which it loads (``kernel.load_phases_per_block``;
    None: not known)."""

    per_block: float
    warps_per_block: int
    phased: bool
    load_phases: float | None = None


@dataclass(frozen=True)
class LoopAround:
    """The passes of the loop around the hot loop, where the launch's counts say it has them
    (`enclosing_passes`); per warp that runs the loops."""

    passes_per_warp: float
    hot_trips_per_warp: float
    leftover_loads_per_thread: float
    loads_per_leftover_round: float
    leftover_rounds: float
    barriers_per_pass: float


@dataclass(frozen=True)
class LeftoverBursts:
    """The loads the code around the hot loop issues, in bursts that each wait (`LoopAround`),
    with a burst's bytes per block."""

    around: LoopAround
    bytes_per_block_round: float


@dataclass(frozen=True)
class HotLoop:
    """The rounds of a thread's hot loop: what its waits are made of.

    Attributes
    ----------
    trips_per_warp, rounds_per_trip : float
        Trips of the loop per warp that runs it, rounds of loads in flight per trip.
    loads_per_round : int
        Loads in flight in one round.
    bytes_per_block_round : float
        A block's bytes of one round (its loads and its share of the loop's stores).
    loads_per_thread : float
        Global loads the loop (and the bursts around it) cover per thread.
    warps_sharing_a_line, blocks_sharing_a_line : float
        `shared_lines`: warps of a block, and resident blocks, that load one line in one trip.
    misses : (float, float)
        `load_misses`: the shares of load sectors that miss L1, and of those that miss L2.
    sms_in_use_share : float
        The share of the GPU's SMs the grid occupies.
    leftover : LeftoverBursts or None
        The remainder's bursts around the hot loop.
    issue_seconds_per_trip : float
        The issue a trip adds to its rounds' wait, seconds: 0 where other warps' waits hide it
        (`lone_warp`: one lane runs the loop, its instructions one a clock).
    notes : tuple of str
        Where the trips came from, where that is not the usual count (the ``trips`` term's notes).
    """

    trips_per_warp: float
    rounds_per_trip: float
    loads_per_round: int
    bytes_per_block_round: float
    loads_per_thread: float
    warps_sharing_a_line: float
    blocks_sharing_a_line: float
    misses: tuple[float, float]
    sms_in_use_share: float
    leftover: LeftoverBursts | None
    issue_seconds_per_trip: float = 0.0
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Derived:
    """Everything the terms read about one launch (`derive`), and the launch's occupancy.

    ``phases_in_turn``: each thread loads once, then computes, then stores
    (`loads_in_one_round`), and the instructions of its compute phase are counted, not bounded
    (`phase_count_known`): the DRAM term joins a block's life with the issue its warps spend with
    no load in flight (rule ``phases_take_turns``)."""

    grid: Grid
    loads: Loads
    dram: DramTraffic
    l2: L2Traffic
    l1: L1Traffic
    atomics: Atomics
    shared_atomics: SharedAtomics
    issue: IssueSlots
    barriers: Barriers
    hot_loop: HotLoop | None
    phases_in_turn: bool = False
