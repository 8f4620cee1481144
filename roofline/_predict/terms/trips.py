"""Load waits: a thread waits for its loads once per round of its hot loop.

A loop whose loads cannot all be issued ahead (the next trip's addresses or its stores
depend on this trip) makes its warps wait one round trip per group of loads in flight, trip
after trip: with few warps nothing hides those waits. A round waits for its slowest load
(`trip_latency`: the level one of its loads reaches, from the kernel's L1 and L2 hit rates
or its bytes at each level). `loop_waits` is one thread's waits; the `trips` term is the
launch's waves of them, and the DRAM term's block life takes them in place of a round trip
per group of the loop's loads.
"""

from __future__ import annotations

from occupancy import SassLoop, SassSummary

from ..._kernel import Kernel
from ._term import Setting, Term
from .l2 import kernel_misses, load_misses
from ..derive.sass import loads_from_instructions, shared_lines

__all__ = ["IMPLIED_LOADS_LIMIT", "enclosing_passes", "hot_loop_trips", "loop_waits", "staying_warps",
           "trip_latency", "trips_term"]

#: Where the hot loop's trips read from the instruction count alone would issue more than this
#: many times the global loads the launch counted, the instructions are not the hot loop's:
#: `enclosing_passes` gives them to the loop around it. Below it the two counts agree (a few
#: percent apart over the corpus: predicated loads, a remainder trip), and the trips stand.
IMPLIED_LOADS_LIMIT = 1.5


def hot_loop_trips(setting: Setting) -> float | None:
    """Trips of the hot loop per warp that runs it: from the kernel's warp instructions where it
    gives them (`loads_from_instructions` on the instructions of the warps that run the loop:
    all of them over the share that does, `staying_warps`), else from its counted warp-wide
    loads (``traffic.load_requests``) or its load bytes, over the loop's loads, per launched
    warp over that share. None without a hot loop with global loads or without either count."""
    kernel, launch, sass = setting.kernel, setting.launch, setting.sass
    if sass is None or sass.hot_loop is None:
        return None
    hot = sass.loops[sass.hot_loop].instructions
    if not hot.global_loads:
        return None
    around = enclosing_passes(setting)
    if around is not None:
        return around["hot_trips_per_warp"]
    issued = setting.path_instructions
    if issued is not None:
        # the warps that leave issue only what comes before their exit: the count, and the flops,
        # are the staying warps', the code outside the loop charged to them once
        share = staying_warps(setting)
        scalar = kernel.flops_by_precision is None and (kernel.precision or "fp32") == "fp32"
        counted = loads_from_instructions(sass, issued / share, launch,
                                          flops_per_thread=float(kernel.flops) / launch.threads / share
                                          if scalar and kernel.flops else None)
        return None if counted is None else counted[1]
    traffic = kernel.traffic
    if traffic is not None and traffic.load_requests:
        # the loads each warp issues, however few of its lanes take part (a walk by thread 0)
        loads = traffic.load_requests / (launch.blocks * setting.occupancy.warps_per_block)
    elif kernel.load_bytes is not None:
        loads = float(kernel.load_bytes) / launch.threads / float(sass.global_load_bytes or 4)
    else:
        return None
    outside = sass.instructions.global_loads - hot.global_loads
    return max(0.0, loads - outside) / hot.global_loads / staying_warps(setting)


def _loops_around(sass: SassSummary) -> list[SassLoop]:
    """The loops around the hot loop of `sass` (not the hot loop itself), by their offsets."""
    hot = sass.loops[sass.hot_loop]
    return [loop for loop in sass.loops if loop is not hot and loop.depth < hot.depth
            and loop.start_offset <= hot.start_offset and hot.end_offset <= loop.end_offset]


def enclosing_passes(setting: Setting) -> dict[str, float] | None:
    """The passes of the loop around the hot loop, where the launch's counts say it has them.

    A hot loop nested in another loop (CUDA's scalarProd: a block walks its vectors, each
    pass a stride loop over the vector whose unrolled body is the hot loop, then a tree of
    barriers) runs as often as the inner trip count lets it: a vector shorter than the
    unroll runs the compiler's remainder code instead, and the pass's barrier levels are
    most of what a warp issues. Reading the hot loop's trips from the instruction count
    alone then gives it instructions it never ran. Where those trips would issue more than
    `IMPLIED_LOADS_LIMIT` times the global loads the launch counted (``kernel.global_loads``,
    Nsight's), the two counts are solved together for the hot loop's trips ``T`` and the
    outer loop's passes ``P``: a warp issues ``outside + P x B + T x H`` instructions and
    ``outside loads + P x b + T x h`` loads, ``B``/``b`` the outer loop's code without the hot
    loop, ``H``/``h`` the hot loop's (``T`` >= 0; at ``T`` = 0 the instructions give ``P``).
    The loads the hot loop does not issue come from the code around it in its smallest
    bursts (``SassLoop.fewest_loads_in_flight`` of the loops around the hot loop): a trip
    count below the unroll runs the remainder's pieces, and each burst is a wait. Each pass
    passes the outer loop's barriers outside the hot loop.

    Returns
    -------
    dict or None
        ``passes_per_warp``, ``hot_trips_per_warp``, ``leftover_loads_per_thread`` (the loads
        the code around the hot loop issues), ``loads_per_leftover_round`` and
        ``leftover_rounds``, and ``barriers_per_pass``; per warp that runs the loops
        (`staying_warps`). None where the rule does not apply: no instruction or load count,
        no loop around the hot loop, or trips that agree with the loads.
    """
    if "enclosing_passes" not in setting.cache:
        setting.cache["enclosing_passes"] = _enclosing_passes(setting)
    return setting.cache["enclosing_passes"]  # type: ignore[return-value]


def _enclosing_passes(setting: Setting) -> dict[str, float] | None:
    kernel, launch, sass = setting.kernel, setting.launch, setting.sass
    issued = setting.path_instructions
    if sass is None or sass.hot_loop is None or issued is None or not kernel.global_loads:
        return None
    hot_loop = sass.loops[sass.hot_loop]
    around = _loops_around(sass)
    hot = hot_loop.instructions
    if not around or not hot.global_loads:
        return None
    outer = min(around, key=lambda loop: loop.depth)
    share = staying_warps(setting)
    warps = launch.blocks * setting.occupancy.warps_per_block * share
    per_warp = float(issued) / warps
    loads = float(kernel.global_loads) / warps  # per thread of a staying warp: a warp load is a load per lane
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
    return {"passes_per_warp": passes, "hot_trips_per_warp": trips, "leftover_loads_per_thread": leftover,
            "loads_per_leftover_round": burst, "leftover_rounds": leftover / burst,
            "barriers_per_pass": float(barriers)}


#: Below this share of its resident warps active on average, a one-wave launch has warps that
#: left early (`staying_warps`); above it, the start and end of the launch explain the gap.
_EARLY_EXIT_SHARE = 0.5


def staying_warps(setting: Setting) -> float:
    """The share of a sub-wave grid's warps that run its loop: 1 unless measured otherwise.

    In a grid of at most one wave every warp is resident from the start, so the warps
    active on an SM on average over its active cycles (``kernel.achieved_occupancy`` x the
    SM's warp slots) below those resident there (``min(blocks per SM, blocks / SMs)`` blocks'
    warps) are warps that left early: a loop only thread 0 of a block runs, a loop over
    items only some blocks have. The loop's trips, counted per warp launched, are then the
    trips of the warps that stay: per launched warp over this share. The warps of a short
    launch start and finish over a while, which keeps the share of a launch whose warps all
    work between 0.5 and 1 (0.6-1.0 over the corpus's one-wave launches; thread 0 alone,
    GRAMSCHM kernel 1, gives 0.03-0.13), so a share above ``_EARLY_EXIT_SHARE`` is 1. A grid
    of more waves mixes in the gaps between blocks and its tail, so it is 1 there too. Where the
    SASS exits every thread but one before the loops (``SassSummary.lone_thread``: ``if (i ==
    0)``), one warp of the grid (or of each block) stays, whatever the profile's average says:
    the warps that leave are resident a while before they go, which held GRAMSCHM kernel 1's
    measured share at 0.076 with one warp of 32 working. Without a profile, the counted
    traffic's ``loop_warp_share`` (the warps that run the loops, from the kernel's guards) is
    the share, under the same rule.
    """
    kernel, launch, sass = setting.kernel, setting.launch, setting.sass
    achieved, traffic = kernel.achieved_occupancy, kernel.traffic
    if launch.blocks > setting.slots:
        return 1.0
    lone = sass.lone_thread if sass is not None else None
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
    return share if share < _EARLY_EXIT_SHARE else 1.0


def trip_latency(kernel: Kernel, calibration, bytes_per_block_trip: float, loads_per_round: int = 1,
                 duplicates: float = 1.0, sharing_blocks: float = 1.0,
                 misses: tuple[float, float] | None = None, sms_in_use: float = 1.0) -> float | None:
    """Seconds one round of a thread's loads takes: as long as its slowest load.

    A round of ``loads_per_round`` loads in flight waits for the deepest level any of them
    reaches. The share of global load sectors that miss L1 and of those that miss L2
    (``misses``, as `load_misses` gives them; else `kernel_misses`: ``1 - l1_hit_rate``, else
    the bytes' ``l2_bytes / l1_bytes``, and ``1 - l2_hit_rate``, else ``dram_bytes /
    l2_bytes``) are taken as gathered on one load of the round: the round
    reaches L2 with probability ``min(1, loads x L1 misses)`` and DRAM with ``min(that,
    loads x L1 misses x L2 misses)``. The levels' latencies are measured: an L1 hit
    (``l1_hit_latency_seconds``), an L2 hit (``l2_hit_latency_seconds``) and a DRAM trip,
    the dependent load that misses L2 (``trip_latency_seconds`` where the trip probe gave
    it, else the latency ladder's ``dram_latency_seconds``) plus the block's bytes of the
    round that miss L1 at one SM's share of the bandwidth: the copy sweep's
    ``sm_bandwidth_bytes_per_second`` is an SM's share when every SM streams, so an SM gets
    that over ``sms_in_use`` (the share of the SMs the grid occupies), up to what its own
    port moves alone (``trip_bytes_per_second``, the trip probe's one block; without it, the
    full GPU's share). A level the kernel gives no figures
    for counts as missed. Warps that load the same line in the same round (``duplicates``
    warps of a block per distinct line, `shared_lines`) wait together: one misses and the
    others hit a line still on its way, waiting as long, so the L1 misses a round sees are
    the share missed times ``duplicates`` (at most all); blocks resident together that load
    the same line in the same round (``sharing_blocks``) do the same at L2. None without a
    DRAM latency.
    """
    cal = calibration
    latency = cal.trip_latency_seconds if cal.trip_latency_seconds is not None else cal.dram_latency_seconds
    if latency is None:
        return None
    l1_miss, l2_miss = misses if misses is not None else kernel_misses(kernel)
    share, port = cal.sm_bandwidth_bytes_per_second, cal.trip_bytes_per_second
    # fewer SMs share the GPU's bandwidth, each at most at its own port's rate
    rate = min(port, share / min(1.0, max(sms_in_use, 1e-9))) if share and port else share or port
    # only the bytes that miss L1 come through the SM's port from L2 or DRAM
    dram = latency + (bytes_per_block_trip * l1_miss / rate if rate else 0.0)
    l2 = min(dram, cal.l2_hit_latency_seconds or dram)
    l1 = min(l2, cal.l1_hit_latency_seconds or l2)
    l1_miss = min(1.0, l1_miss * max(1.0, duplicates))
    l2_miss = min(1.0, l2_miss * max(1.0, sharing_blocks))
    loads = max(1, int(loads_per_round))
    to_l2 = min(1.0, loads * l1_miss)
    to_dram = min(to_l2, loads * l1_miss * l2_miss)
    return l1 + to_l2 * (l2 - l1) + to_dram * (dram - l2)


def loop_waits(setting: Setting) -> dict[str, float] | None:
    """The waits of the hot loop of one thread: its trips, rounds per trip and the latency of
    a round (`trip_latency`), with the global loads they cover and the seconds they take
    (``trips x rounds x latency``). None without a hot loop with global loads, without its
    trip count (`hot_loop_trips`) or without the trip latency. Computed once per setting
    (the trips and DRAM terms both read it)."""
    if "loop_waits" not in setting.cache:
        setting.cache["loop_waits"] = _loop_waits(setting)
    return setting.cache["loop_waits"]  # type: ignore[return-value]


def _loop_waits(setting: Setting) -> dict[str, float] | None:
    launch, kernel, sass = setting.launch, setting.kernel, setting.sass
    trips = hot_loop_trips(setting)
    if trips is None or sass is None:
        return None
    loop = sass.loops[sass.hot_loop]
    in_flight = max(1, loop.global_loads_in_flight)
    # loads beyond those in flight wait for earlier ones to return: a part of a round each
    rounds = max(1.0, loop.instructions.global_loads / in_flight)
    # a round moves the loads in flight and its share of the loop's stores through the SM's port
    stores_per_round = loop.instructions.global_stores / rounds
    round_bytes = (min(in_flight, loop.instructions.global_loads) + stores_per_round) \
        * float(sass.global_load_bytes or 4) * launch.threads_per_block
    warps, blocks = shared_lines(launch, setting.slots)
    misses, sms_in_use = load_misses(setting), setting.sms_in_use / setting.gpu.sm_count

    def latency_of(bytes_per_round: float, loads_per_round: int) -> float | None:
        return trip_latency(kernel, setting.calibration, bytes_per_round, loads_per_round, warps, blocks, misses,
                            sms_in_use)

    latency = latency_of(round_bytes, min(in_flight, loop.instructions.global_loads))
    if latency is None:
        return None
    waits = {"trips_per_warp": trips, "rounds_per_trip": rounds, "trip_latency_seconds": latency,
             "warps_sharing_a_line": warps, "blocks_sharing_a_line": blocks,
             "bytes_per_block_round": round_bytes, "loop_loads_per_thread": trips * loop.instructions.global_loads,
             "seconds": trips * rounds * latency}
    around = enclosing_passes(setting)
    if around is not None and around["leftover_rounds"]:
        # the remainder's bursts around the hot loop wait one after the other too
        burst = around["loads_per_leftover_round"]
        burst_bytes = burst * float(sass.global_load_bytes or 4) * launch.threads_per_block
        burst_latency = latency_of(burst_bytes, int(burst))  # not None: `latency` was not
        waits.update(passes_per_warp=around["passes_per_warp"], barriers_per_pass=around["barriers_per_pass"],
                     leftover_loads_per_thread=around["leftover_loads_per_thread"],
                     loads_per_leftover_round=burst,
                     leftover_rounds=around["leftover_rounds"], leftover_round_latency_seconds=burst_latency,
                     loop_loads_per_thread=waits["loop_loads_per_thread"] + around["leftover_loads_per_thread"],
                     seconds=waits["seconds"] + around["leftover_rounds"] * burst_latency)
    return waits


def trips_term(setting: Setting) -> Term:
    """The launch's waves of warps, each waiting its hot loop's trips one after the other.

    ``max(1, blocks / resident slots) x`` the `loop_waits` of a thread, whose trips are the
    mean warp's: a grid of one wave waits for its slowest warp, which makes
    ``Setting.work_shares[1]`` times as many where the trips follow the thread's index (a
    triangle). 0 without them.
    """
    waits = loop_waits(setting)
    if waits is None:
        return Term(name="trips", side="memory", seconds=0.0, limiter="memory_latency")
    waves = max(1.0, setting.launch.blocks / setting.slots)
    slowest = setting.work_shares[1]
    inputs = {k: v for k, v in waits.items() if k not in ("seconds", "loop_loads_per_thread")}
    return Term(name="trips", side="memory", seconds=waves * slowest * waits["seconds"], limiter="memory_latency",
                inputs={**inputs, "waves": waves, "slowest_warp_factor": slowest})
