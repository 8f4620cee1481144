"""`derive`: one launch (kernel, launch, GPU) -> the typed quantities every term reads (`Derived`).

Each quantity is computed once here, so a term never computes what another term also needs:
the hot loop's rounds (the trips term and the DRAM term's block life), the barrier phases (the
DRAM term's block life and its queue), the L2 bytes L1 keeps (the L2 terms and the loads'
misses). Nothing here is measured: `derive` reads the kernel, its launch and the GPU's
datasheet, never a calibration.
"""

from __future__ import annotations

from ..._errors import RooflineError
from ..._gpu import MEMORY_LEVELS
from ..._kernel import Kernel
from ..._locality import Locality
from ..._precision import TENSOR_PRECISIONS
from ..._roofline import compute_roof
from .balance import work_shares
from .hot_loop import enclosing_passes, hot_loop
from .quantities import (
    Atomics,
    Barriers,
    Derived,
    DramTraffic,
    Grid,
    IssueSlots,
    L1Traffic,
    L2Traffic,
    Loads,
    LoopAround,
)
from .reuse import l2_bytes_with_l1_reuse, l2_capacity_rereads, open_lines, served_l2_requests
from .sass import barriers_from_instructions, instructions_from_sass, loops_left_out
from .setting import Setting, issued_instructions, loads_in_one_round, phase_count_known, straight_line_instructions
from .shared_atomics import shared_atomics_of
from ..rules import on

__all__ = ["barrier_phases", "derive", "dram_traffic", "grid_of", "issue_slots"]


def derive(setting: Setting) -> Derived:
    """The derived quantities of `setting`'s launch, each computed once."""
    kernel, launch = setting.kernel, setting.launch
    around = enclosing_passes(setting)
    resident = setting.first_wave_blocks if on("l1_resident_blocks") else None
    served = l2_bytes_with_l1_reuse(kernel, launch, setting.occupancy, resident) if on("l1_reuse") else (
        None if kernel.l2_bytes is None else float(kernel.l2_bytes))
    grid = grid_of(setting)
    rereads = l2_capacity_rereads(kernel, launch.blocks, setting.slots, served, setting.gpu.l2_cache_bytes)
    sass = setting.sass
    addresses = kernel.atomic_addresses
    if addresses is None and sass is not None and sass.global_atomics and \
            sass.global_atomics_one_address == sass.global_atomics and on("atomic_counter"):
        addresses = 1  # every global atomic's address the same for every thread: a counter
    kind = sass.global_atomics_one_address_type if sass is not None and on("float_atomics") else None
    return Derived(
        grid=grid,
        loads=Loads(elements_per_thread=launch.elements_per_thread,
                    in_flight_per_thread=setting.loads_in_flight_per_thread, rounds=setting.rounds),
        dram=dram_traffic(kernel, setting.locality, after_l2_flush=setting.after_l2_flush, reread_bytes=rereads,
                          open_lines=open_lines(kernel, launch.blocks, setting.slots, served)),
        l2=L2Traffic(served_bytes=served, requests=served_l2_requests(kernel, served),
                     partial_store_sectors=kernel.count("l2_partial_store_sectors")),
        l1=L1Traffic(bytes=kernel.l1_bytes),
        atomics=Atomics(updates=float(kernel.atomics or 0), addresses=addresses,
                        one_address_stores=float(kernel.one_address_stores or 0),
                        cas_contenders=None if kernel.cas_contenders is None else float(kernel.cas_contenders),
                        one_address_type=kind if kind in ("f32", "f64") and addresses == 1 else None),
        shared_atomics=shared_atomics_of(setting, around),
        issue=issue_slots(setting, grid),
        barriers=barrier_phases(setting, around),
        hot_loop=hot_loop(setting, around, served, rereads),
        phases_in_turn=loads_in_one_round(sass) and phase_count_known(kernel, sass) and on("phases_take_turns"),
    )


def grid_of(setting: Setting) -> Grid:
    """The launch's blocks on the GPU: a full wave's slots, the busiest SM (`work_shares`), the
    first wave."""
    kernel = setting.kernel
    busiest, slowest = work_shares(setting)
    moves = kernel.count("requested_bytes") or any(kernel.bytes_at(level) for level in MEMORY_LEVELS)
    return Grid(blocks=setting.launch.blocks, sm_count=setting.gpu.sm_count, slots=setting.slots,
                sms_in_use=setting.sms_in_use, first_wave_blocks=setting.first_wave_blocks,
                warps_per_block=setting.occupancy.warps_per_block, busiest_sm_factor=busiest,
                slowest_warp_factor=slowest, moves_bytes=bool(moves))


def dram_traffic(kernel: Kernel, locality: Locality, *, after_l2_flush: bool = False,
                 reread_bytes: float = 0.0, open_lines: tuple[float | None, float] = (None, 0.0)) -> DramTraffic:
    """The kernel's DRAM bytes and the counts of its ``traffic`` that say how the DRAM spends them.

    ``reread_bytes``: load bytes read from DRAM again (`l2_capacity_rereads`); they repeat the
    loads' pattern, so the loads' bursts, lines and page visits grow in the same proportion.
    ``open_lines``: the resident blocks' open line bytes and the load bytes requested again for
    them (`open_lines`); the DRAM term decides how many L2 lets go.

    Raises
    ------
    RooflineError
        If the kernel has no ``dram_bytes``.
    """
    if kernel.dram_bytes is None:
        raise RooflineError(f"kernel {kernel.name!r} has no dram_bytes (roofline.memory.traffic() counts them)")
    traffic = kernel.traffic
    if traffic is None:
        return DramTraffic(bytes=float(kernel.dram_bytes), store_bytes=None, load_bursts=None, load_page_visits=None,
                           load_lines=None, store_partial_sectors=0.0, store_filled_sectors=0.0,
                           store_page_visits=None, store_lines=None,
                           page_bytes=locality.dram_page_bytes, after_l2_flush=after_l2_flush)
    open_bytes, rerequested = open_lines
    loads = float(traffic.dram_load_bytes)
    again = 1.0 + reread_bytes / loads if loads and reread_bytes else 1.0

    def scaled(count: int | None) -> int | float | None:
        return count if count is None or again == 1.0 else count * again

    return DramTraffic(bytes=float(kernel.dram_bytes) + reread_bytes, store_bytes=float(traffic.dram_store_bytes),
                       load_bursts=scaled(traffic.dram_load_bursts),
                       load_page_visits=scaled(traffic.dram_load_page_visits),
                       load_lines=scaled(traffic.dram_load_lines),
                       store_partial_sectors=float(traffic.dram_store_partial_sectors),
                       store_filled_sectors=float(traffic.dram_store_partial_sectors - (
                           traffic.dram_store_loaded_partial_sectors if on("loaded_sector_fill") else 0)),
                       store_page_visits=traffic.dram_store_page_visits, store_lines=traffic.dram_store_lines,
                       page_bytes=locality.dram_page_bytes, after_l2_flush=after_l2_flush,
                       open_line_bytes=open_bytes, rerequested_bytes=rerequested)


def issue_slots(setting: Setting, grid: Grid) -> IssueSlots:
    """The work the schedulers issue, and the busiest SM's schedulers that issue it.

    Blocks go to the SMs in turn, so the busiest SM runs ``ceil(blocks / SMs)`` of them (a
    grid of less than one block per SM leaves SMs idle; a last partial round leaves some SMs
    one block short), weighed by their trips where these follow the thread's index
    (`Grid.busiest_sm_factor`). On that SM ``min(resident blocks, its blocks) x warps per
    block`` warps are resident; they occupy ``min(sub-partitions, warps)`` schedulers. The
    warp instructions are the kernel's, else estimated by `instructions_from_sass` from the
    launch's SASS, times the paths per warp (a divergent branch's two sides are both issued).
    """
    gpu, kernel, launch = setting.gpu, setting.kernel, setting.launch
    precision, peak_flops = compute_roof(gpu, kernel)
    resident_warps = grid.first_wave_blocks * grid.warps_per_block
    subs = gpu.architecture.sub_partitions
    used = min(subs, resident_warps) if on("schedulers_in_use") else subs
    # a divergent warp runs each side of its branches with the other lanes idle
    paths = float(kernel.branch_issue_factor or 1.0)
    instructions = kernel.instructions
    sass = setting.sass
    notes: tuple[str, ...] = ()
    straight = (0.0, 0.0)
    if instructions is None and sass is not None and on("sass_instruction_estimate"):
        instructions = instructions_from_sass(sass, kernel, launch)
        if instructions is not None:
            straight = straight_line_instructions(sass, launch, kernel.branch_issue_factor)
            instructions = issued_instructions(instructions, paths, straight)
            how = "" if not sass.loops else " (the hot loop runs once per group of its global loads" + (
                f"; its loops x{paths:g} paths per warp through divergent branches" if paths > 1 else "") + ")"
            notes = (f"{instructions / launch.blocks:.0f} warp instructions per block, estimated from the "
                     f"SASS{how}",)
            left_out = loops_left_out(sass, kernel)
            if left_out:
                body = sum(loop.instructions.total for loop in left_out)
                notes += (f"{len(left_out)} loop{'s' if len(left_out) > 1 else ''} of shared-memory or arithmetic "
                          f"work ({body} instructions) counted once per pass of the code around "
                          f"{'them' if len(left_out) > 1 else 'it'}: no count the kernel gives says how often "
                          "they run (give instructions=, --count instructions=N, for the whole launch)",)
    return IssueSlots(flops=float(kernel.flops), tensor=precision in TENSOR_PRECISIONS, peak_flops_per_second=peak_flops,
                      paths_per_warp=paths, busiest_sm_share=grid.busiest_sm_factor / gpu.sm_count,
                      schedulers_in_use=used / subs, warps_per_scheduler=resident_warps / used,
                      fma_chains_per_thread=setting.fma_chains_per_thread, sm_count=gpu.sm_count, sub_partitions=subs,
                      schedulers=gpu.sm_count * subs, clock_hz=gpu.boost_clock_hz, warp_instructions=instructions,
                      notes=notes, straight_line_listed=straight[0], straight_line_issued=straight[1])


def barrier_phases(setting: Setting, around: LoopAround | None) -> Barriers:
    """The barriers one block passes, and whether they keep its warps in one phase.

    ``kernel.barriers_per_block`` (the levels of a tree); where the kernel does not say, its
    SASS's barriers with the trips of the loops that hold them (`barriers_from_instructions`),
    and those of a loop around the hot loop once per pass (`around`, `enclosing_passes`).
    Barriers keep a block's warps in one phase where its SASS holds a ``BAR`` (without SASS,
    where the kernel passes barriers); the stretches between them in which it loads are the
    kernel's ``load_phases_per_block``.
    """
    kernel, sass = setting.kernel, setting.sass
    if kernel.barriers_per_block is not None or sass is None or not on("sass_barriers"):
        barriers = float(kernel.barriers_per_block or 0)
    else:
        barriers = barriers_from_instructions(sass, setting.path_instructions, setting.launch)
        if around is not None:
            # the loop around the hot loop passes its barriers once per pass
            barriers += around.passes_per_warp * around.barriers_per_pass
    phased = bool(sass.instructions.barriers if sass is not None else kernel.barriers_per_block)
    phases = None if kernel.load_phases_per_block is None else float(kernel.load_phases_per_block)
    return Barriers(per_block=barriers, warps_per_block=setting.occupancy.warps_per_block, phased=phased,
                    load_phases=phases)
