"""The hot loop of a launch: its trips per warp, the loop around it, the warps that run it, and
the rounds of loads a thread waits for, trip after trip (`HotLoop`).

A loop whose loads cannot all be issued ahead (the next trip's addresses or its stores depend
on this trip) makes its warps wait one round trip per group of loads in flight, trip after
trip: with few warps nothing hides those waits. What a round waits for is the latency
term's (`roofline._predict.terms.waits`); what the rounds are is derived here.
"""

from __future__ import annotations

from occupancy import SassLoop, SassSummary

from .quantities import HotLoop, LeftoverBursts, LoopAround
from .reuse import load_misses
from .sass import loads_from_bytes, loads_from_instructions, shared_lines
from .setting import Setting
from ..rules import on

__all__ = ["IMPLIED_LOADS_LIMIT", "enclosing_passes", "hot_loop", "hot_loop_trips", "lone_warp", "staying_warps"]

#: Where the hot loop's trips read from the instruction count alone would issue more than this
#: many times the global loads the launch counted, the instructions are not the hot loop's:
#: `enclosing_passes` gives them to the loop around it. Below it the two counts agree (a few
#: percent apart over the corpus: predicated loads, a remainder trip), and the trips stand.
IMPLIED_LOADS_LIMIT = 1.5


def hot_loop_trips(setting: Setting, around: LoopAround | None) -> float | None:
    """Trips of the hot loop per warp that runs it: those `enclosing_passes` solved for with the
    loop around it (`around`), where it did; else from the kernel's warp instructions where it
    gives them (`loads_from_instructions` on the instructions of the warps that run the loop:
    all of them over the share that does, `staying_warps`), or from the profile's counted loads
    where loops beside the hot loop issue the rest of those instructions (rule
    ``counted_load_trips``); else from its counted warp-wide loads (``traffic.load_requests``)
    or its load bytes, over the loop's loads, per launched warp over that share. None without a
    hot loop with global loads or without either count."""
    return _trips_and_notes(setting, around)[0]


def _trips_and_notes(setting: Setting, around: LoopAround | None) -> tuple[float | None, tuple[str, ...]]:
    """`hot_loop_trips`, with what the trips term says of where they came from where that is
    not the usual count."""
    kernel, launch, sass = setting.kernel, setting.launch, setting.sass
    if sass is None or sass.hot_loop is None:
        return None, ()
    hot = sass.loops[sass.hot_loop].instructions
    if not hot.global_loads:
        return None, ()
    if around is not None:
        return around.hot_trips_per_warp, ()
    issued = setting.path_instructions
    if issued is not None:
        # the warps that leave issue only what comes before their exit: the count, and the flops,
        # are the staying warps', the code outside the loop charged to them once
        share = staying_warps(setting)
        scalar = kernel.flops_by_precision is None and (kernel.precision or "fp32") == "fp32"
        counted = loads_from_instructions(sass, issued / share, launch,
                                          flops_per_thread=float(kernel.flops) / launch.threads / share
                                          if scalar and kernel.flops else None)
        if counted is None:
            return None, ()
        loads = _counted_loads_per_thread(setting, share)
        if loads is None or 1 / IMPLIED_LOADS_LIMIT <= counted[0] / loads <= IMPLIED_LOADS_LIMIT:
            return counted[1], ()
        by_loads = _trips_from_loads(sass, loads)
        beside = _loops_beside(sass)
        if counted[0] > IMPLIED_LOADS_LIMIT * loads and beside and not _loops_around(sass) \
                and not any(loop.instructions.global_loads for loop in beside) and on("counted_load_trips"):
            # the instructions are not all the hot loop's: the loops beside it (a store loop after
            # a load loop) issue theirs, and no global load; each trip issues the hot loop's loads
            # once, so the counted loads give its trips (a loop around it is `enclosing_passes`')
            return by_loads, (f"the hot loop's trips from the profile's load count, {by_loads:.4g} a warp: its "
                              f"instructions read as the hot loop's alone give {counted[1]:.4g}, the loops beside "
                              "it issue the rest (rule counted_load_trips)",)
        # the counts disagree where no rule says which to trust (a branch around the loop's loads,
        # loops beside it that load too): the instructions stand, and the row says so
        return counted[1], (f"the hot loop's trips from the instructions, {counted[1]:.4g} a warp; the profile's "
                            f"load count would give {by_loads:.4g}: the two disagree (loads under a branch, or "
                            "loops beside it that load too), the waits rest on the instructions",)
    traffic = kernel.traffic
    if traffic is not None and traffic.load_requests:
        # the loads each warp issues, however few of its lanes take part (a walk by thread 0)
        loads = traffic.load_requests / (launch.blocks * setting.occupancy.warps_per_block)
    else:
        loads = loads_from_bytes(sass, kernel, launch)
        if loads is None:
            return None, ()
    return _trips_from_loads(sass, loads) / staying_warps(setting), ()


def _trips_from_loads(sass: SassSummary, loads: float) -> float:
    """The hot loop's trips from the global loads a thread (or warp) makes: those outside the
    hot loop run once, each trip issues the loop's loads once."""
    hot = sass.loops[sass.hot_loop].instructions
    return max(0.0, loads - (sass.instructions.global_loads - hot.global_loads)) / hot.global_loads


def _counted_loads_per_thread(setting: Setting, share: float) -> float | None:
    """Global loads each thread of a warp that runs the loops issued, from the profile's count of
    warp-wide load instructions (Nsight's ``measured.global_load_instructions``: a warp load is
    a load per lane) over the warps that run them (`staying_warps`' ``share``); None without it."""
    counted = None if setting.measured is None else setting.measured.global_load_instructions
    if not counted:
        return None
    return float(counted) / (setting.launch.blocks * setting.occupancy.warps_per_block * share)


def _nested(inner: SassLoop, outer: SassLoop) -> bool:
    """Whether `inner` lies within `outer`, by their offsets (a loop lies within itself)."""
    return outer.start_offset <= inner.start_offset and inner.end_offset <= outer.end_offset


def _loops_beside(sass: SassSummary) -> list[SassLoop]:
    """The loops of `sass` neither around the hot loop nor inside it: loops that run before or
    after it (a store loop after a load loop)."""
    hot = sass.loops[sass.hot_loop]
    return [loop for loop in sass.loops if loop is not hot and not _nested(hot, loop) and not _nested(loop, hot)]


def _loops_around(sass: SassSummary) -> list[SassLoop]:
    """The loops around the hot loop of `sass` (not the hot loop itself), by their offsets."""
    hot = sass.loops[sass.hot_loop]
    return [loop for loop in sass.loops if loop is not hot and loop.depth < hot.depth and _nested(hot, loop)]


def enclosing_passes(setting: Setting) -> LoopAround | None:
    """The passes of the loop around the hot loop, where the launch's counts say it has them.

    A hot loop nested in another loop (CUDA's scalarProd: a block walks its vectors, each
    pass a stride loop over the vector whose unrolled body is the hot loop, then a tree of
    barriers) runs as often as the inner trip count lets it: a vector shorter than the
    unroll runs the compiler's remainder code instead, and the pass's barrier levels are
    most of what a warp issues. Reading the hot loop's trips from the instruction count
    alone then gives it instructions it never ran. Where those trips would issue more than
    `IMPLIED_LOADS_LIMIT` times the global loads the launch counted (Nsight's
    ``measured.global_load_instructions``), the two counts are solved together for the hot loop's trips ``T`` and the
    outer loop's passes ``P``: a warp issues ``outside + P x B + T x H`` instructions and
    ``outside loads + P x b + T x h`` loads, ``B``/``b`` the outer loop's code without the hot
    loop, ``H``/``h`` the hot loop's (``T`` >= 0; at ``T`` = 0 the instructions give ``P``).
    The loads the hot loop does not issue come from the code around it in its smallest
    bursts (``SassLoop.fewest_loads_in_flight`` of the loops around the hot loop): a trip
    count below the unroll runs the remainder's pieces, and each burst is a wait. Each pass
    passes the outer loop's barriers outside the hot loop.

    Returns
    -------
    LoopAround or None
        Per warp that runs the loops (`staying_warps`). None where the rule does not apply:
        no instruction or load count, no loop around the hot loop, or trips that agree with
        the loads.
    """
    launch, sass = setting.launch, setting.sass
    issued = setting.path_instructions
    if sass is None or sass.hot_loop is None or issued is None or not on("enclosing_passes"):
        return None
    share = staying_warps(setting)
    loads = _counted_loads_per_thread(setting, share)
    if loads is None:
        return None
    hot_loop = sass.loops[sass.hot_loop]
    around = _loops_around(sass)
    hot = hot_loop.instructions
    if not around or not hot.global_loads:
        return None
    outer = min(around, key=lambda loop: loop.depth)
    warps = launch.blocks * setting.occupancy.warps_per_block * share
    per_warp = float(issued) / warps
    outside = sass.instructions.total - outer.instructions.total
    outside_loads = sass.instructions.global_loads - outer.instructions.global_loads
    body = outer.instructions.total - hot.total
    body_loads = outer.instructions.global_loads - hot.global_loads
    # the loads the instruction count alone gives (the code around the hot loop run once)
    implied, _ = loads_from_instructions(sass, float(issued) / share, launch)
    if body <= 0 or implied <= IMPLIED_LOADS_LIMIT * loads:
        return None
    det = body * hot.global_loads - hot.total * body_loads
    left, left_loads = per_warp - outside, loads - outside_loads
    trips = (body * left_loads - body_loads * left) / det if det else 0.0
    if trips <= 0:
        trips = 0.0
    passes = (left - trips * hot.total) / body
    if passes < 1:
        return None
    leftover = max(0.0, left_loads - trips * hot.global_loads)
    bursts = [loop.fewest_loads_in_flight for loop in around if loop.fewest_loads_in_flight]
    burst = float(min(bursts, default=max(1, hot_loop.global_loads_in_flight)))
    barriers = outer.instructions.barriers - hot.barriers
    return LoopAround(passes_per_warp=passes, hot_trips_per_warp=trips, leftover_loads_per_thread=leftover,
                      loads_per_leftover_round=burst, leftover_rounds=leftover / burst,
                      barriers_per_pass=float(barriers))


#: Below this share of its resident warps active on average, a one-wave launch has warps that
#: left early (`staying_warps`); above it, the start and end of the launch explain the gap.
_EARLY_EXIT_SHARE = 0.5


def lone_warp(setting: Setting) -> str | None:
    """``"global"`` where one lane of the grid runs the hot loop, ``"thread"`` where one lane of
    each block does, else None: the SASS exits every thread but one before the loops
    (``SassSummary.lone_thread``: ``if (i == 0)``) in a grid of at most one wave (the
    ``lone_thread`` rule)."""
    sass = setting.sass
    if sass is None or sass.lone_thread is None or setting.launch.blocks > setting.slots or not on("lone_thread"):
        return None
    return sass.lone_thread


def _lone_served_l2_bytes(setting: Setting, served_l2_bytes: float | None) -> float | None:
    """The L2 bytes the loads of the grid's one lane fetch: its L1 keeps the lines it loaded
    before, so each distinct sector (the counted ``dram_load_bytes``, every load of the launch
    being that lane's) once where they fit the L1 the launch leaves, else every sector it
    looks up (None: the counted ``l2_bytes``); plus the stores. `served_l2_bytes` where no
    traffic was counted."""
    traffic = setting.kernel.traffic
    if traffic is None or not traffic.dram_load_bytes:
        return served_l2_bytes
    l1 = setting.occupancy.driver.l1_cache
    if not l1 or traffic.dram_load_bytes > l1:
        return None
    return float(traffic.dram_load_bytes + traffic.l2_store_bytes)


def staying_warps(setting: Setting) -> float:
    """The share of a sub-wave grid's warps that run its loop: 1 unless measured otherwise.

    In a grid of at most one wave every warp is resident from the start, so the warps
    active on an SM on average over its active cycles (``measured.achieved_occupancy`` x the
    SM's warp slots) below those resident there (``min(blocks per SM, blocks / SMs)`` blocks'
    warps) are warps that left early: a loop only thread 0 of a block runs, a loop over
    items only some blocks have. The loop's trips, counted per warp launched, are then the
    trips of the warps that stay: per launched warp over this share. The warps of a short
    launch start and finish over a while, which keeps the share of a launch whose warps all
    work between 0.5 and 1 (0.6-1.0 over the corpus's one-wave launches; thread 0 alone,
    GRAMSCHM kernel 1, gives 0.03-0.13), so a share above ``_EARLY_EXIT_SHARE`` is 1. A grid
    of more waves mixes in the gaps between blocks and its tail, so it is 1 there too. Where one
    lane runs the loop (`lone_warp`), one warp of the grid (or of each block) stays, whatever the
    profile's average says: the warps that leave are resident a while before they go. Without a
    profile, the counted traffic's ``loop_warp_share`` (the warps that run the loops, from the
    kernel's guards) is the share, under the same rule.
    """
    kernel, launch = setting.kernel, setting.launch
    measured, traffic = setting.measured, kernel.traffic
    # Nsight's percentage over 100 may pass 1 by rounding: a share of the warp slots is at most 1
    achieved = None if measured is None or measured.achieved_occupancy is None else (
        min(1.0, max(0.0, measured.achieved_occupancy)))
    if launch.blocks > setting.slots:
        return 1.0
    lone = lone_warp(setting)
    if lone is not None:
        warps = setting.occupancy.warps_per_block * (launch.blocks if lone == "global" else 1)
        return 1.0 / warps
    if achieved is not None:
        occupancy = setting.occupancy
        resident = setting.first_wave_blocks * occupancy.warps_per_block
        share = max(achieved * occupancy.max_warps_per_sm / resident, 1.0 / resident)
    elif traffic is not None and traffic.loop_warp_share:
        share = traffic.loop_warp_share  # counted: the warps that run the loops
    else:
        return 1.0
    return share if share < _EARLY_EXIT_SHARE and on("early_exit_share") else 1.0


def hot_loop(setting: Setting, around: LoopAround | None, served_l2_bytes: float | None,
             reread_dram_bytes: float = 0.0) -> HotLoop | None:
    """The rounds of one thread's hot loop: its trips (`hot_loop_trips`), the rounds of loads in
    flight per trip (``max(1, loop loads / loads in flight)``), a block's bytes of a round (the
    loads in flight and the round's share of the loop's stores), the warps and blocks that load
    one line in one trip (`shared_lines`), the loads' misses (`load_misses`) and the remainder's
    bursts around the loop (`enclosing_passes`); ``reread_dram_bytes`` are the loads L2 let go
    (`l2_capacity_rereads`), which miss it. None without a hot loop with global loads or
    without its trip count.

    Where one lane runs the loop (`lone_warp`) nothing overlaps its trips: a trip is its rounds'
    wait and the issue of the loop's instructions, one a clock (``SassCounts.total`` over the
    GPU's clock); a round moves that lane's bytes; no other warp of its block loads its lines,
    and where it is the grid's one lane no other block does, and its L1 keeps the lines it
    loaded (`_lone_served_l2_bytes`) where no profile gives the hit rates.
    """
    launch, sass = setting.launch, setting.sass
    trips, notes = _trips_and_notes(setting, around)
    if trips is None or sass is None:
        return None
    loop = sass.loops[sass.hot_loop]
    lone = lone_warp(setting)
    in_flight = max(1, loop.global_loads_in_flight)
    # loads beyond those in flight wait for earlier ones to return: a part of a round each
    rounds = max(1.0, loop.instructions.global_loads / in_flight)
    # a round moves the loads in flight and its share of the loop's stores through the SM's port
    stores_per_round = loop.instructions.global_stores / rounds
    width = float(sass.global_load_bytes or 4)
    threads = 1 if lone is not None else launch.threads_per_block
    round_bytes = (min(in_flight, loop.instructions.global_loads) + stores_per_round) * width * threads
    warps, blocks = shared_lines(launch, setting.slots)
    warps, blocks = warps if on("duplicate_warps") else 1.0, blocks if on("blocks_sharing_a_line") else 1.0
    issue = 0.0
    if lone is not None:
        warps, blocks = 1.0, 1.0 if lone == "global" else blocks
        issue = loop.instructions.total / setting.gpu.boost_clock_hz
        if lone == "global":
            served_l2_bytes = _lone_served_l2_bytes(setting, served_l2_bytes)
    loads = trips * loop.instructions.global_loads
    leftover = None
    if around is not None and around.leftover_rounds:
        # the remainder's bursts around the hot loop wait one after the other too
        leftover = LeftoverBursts(around=around,
                                  bytes_per_block_round=around.loads_per_leftover_round * width * threads)
        loads = loads + around.leftover_loads_per_thread
    return HotLoop(trips_per_warp=trips, rounds_per_trip=rounds,
                   loads_per_round=min(in_flight, loop.instructions.global_loads), bytes_per_block_round=round_bytes,
                   loads_per_thread=loads, warps_sharing_a_line=warps, blocks_sharing_a_line=blocks,
                   misses=load_misses(setting.kernel, served_l2_bytes, setting.measured, reread_dram_bytes),
                   sms_in_use_share=setting.sms_in_use / setting.gpu.sm_count, leftover=leftover,
                   issue_seconds_per_trip=issue, notes=notes)
