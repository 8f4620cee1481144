"""What `derive` reads: one launch of a kernel on a GPU, checked (`Setting`)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from occupancy import Launch, OccupancyResult, SassSummary

from ..._gpu import GPU
from ..._kernel import Kernel
from ..._locality import Locality
from ..._profile_counts import ProfileCounts
from ..rules import on

__all__ = ["Setting", "issued_instructions", "launch_warps", "loads_in_one_round", "outside_loops",
           "phase_count_known", "sass_of", "straight_line_instructions"]


def sass_of(launch: Launch) -> SassSummary | None:
    """The SASS summary a launch's resources carry, None without one."""
    return launch.resources.sass if launch.resources is not None else None


def loads_in_one_round(sass: SassSummary | None) -> bool:
    """Whether each thread loads once, then computes on what came back, then stores: its SASS
    has global loads, none of them (nor a global-to-shared copy) inside a loop, and no barrier.

    A warp of such a kernel holds no load in flight while it computes, so its memory and compute
    phases take turns instead of overlapping (docs/prediction.md, "Load, then compute: the phases
    take turns"). A barrier's phases are the block life's already (`barrier_phases`); a load in
    a loop can be in flight while the loop computes. False without SASS.
    """
    if sass is None or not sass.instructions.global_loads or sass.instructions.barriers:
        return False
    return not any(loop.instructions.global_loads or loop.instructions.async_copies for loop in sass.loops)


def phase_count_known(kernel: Kernel, sass: SassSummary | None) -> bool:
    """Whether the instructions a warp issues between its loads and its stores are counted, not
    bounded: the kernel gives its instruction count (a profile's, or yours) or its
    ``branch_issue_factor``, or the SASS outside its loops has one path (its longest path is the
    listing: no side of a branch left out). A listing with sides a warp skips is an upper
    bound, which the phases taking turns would add to the time rather than hide.
    """
    if kernel.instructions is not None or kernel.branch_issue_factor is not None:
        return True
    return sass is not None and sass.longest_path_instructions == outside_loops(sass)


def launch_warps(launch: Launch) -> int:
    """Warps the launch runs (a partial warp takes a whole warp's issue slots)."""
    return launch.blocks * math.ceil(launch.threads_per_block / 32)


def outside_loops(sass: SassSummary) -> int:
    """Instructions of `sass` outside every loop (each listed once)."""
    return sass.instructions.total - sum(loop.instructions.total for loop in sass.loops if loop.depth == 1)


def straight_line_instructions(sass: SassSummary | None, launch: Launch,
                               paths: float | None) -> tuple[float, float]:
    """Warp instructions of the launch's code outside every loop: as its SASS lists them, and as
    its warps issue them at ``paths`` paths per warp (``Kernel.branch_issue_factor``).

    The listing holds each side of a branch once: what a warp split over both sides issues in
    turn. A warp whose lanes all take one side issues one, at most the longest path through
    that code (``SassSummary.longest_path_instructions``): at ``paths`` per warp, at most
    ``paths`` times that path and at most the listing. Where the kernel does not give
    ``paths`` (None) or the summary not the path, the listing. (0, 0) without SASS or with
    ``branch_sides_in_sass`` off.
    """
    if sass is None or not on("branch_sides_in_sass"):
        return 0.0, 0.0
    warps = launch_warps(launch)
    listed = float(outside_loops(sass))
    issued = listed
    if paths is not None and sass.longest_path_instructions is not None:
        issued = min(listed, float(paths) * sass.longest_path_instructions)
    return listed * warps, issued * warps


def issued_instructions(estimate: float, paths: float, straight: tuple[float, float]) -> float:
    """Warp instructions issued, from the SASS estimate (the code outside every loop as listed,
    the loops' trips for one side of each branch).

    A divergent warp issues each side of a branch in turn, ``paths`` per warp on average
    (``Kernel.branch_issue_factor``): the loops, whose trips the kernel's counts give for one
    side, ``paths`` times; the code outside them as `straight_line_instructions` issues it
    (``straight``: listed, issued). The branch-paths probe measures both (docs/prediction.md,
    "Branches in straight-line SASS").
    """
    listed, issued = straight
    return issued + paths * (estimate - listed)


@dataclass(frozen=True)
class Setting:
    """One launch to predict, checked: the kernel, its launch and the GPU, nothing measured.

    ``loads_in_flight_per_thread`` and ``fma_chains_per_thread`` are resolved and checked
    by `roofline.predict`; ``occupancy`` is the launch's on ``gpu`` (at least one block);
    ``locality`` the GPU's DRAM page figures; ``after_l2_flush``: the launch starts from
    validate's L2 flush (L2 full of written lines); ``measured``: what a profile of the
    launch measured, None without one.
    """

    gpu: GPU
    kernel: Kernel
    launch: Launch
    occupancy: OccupancyResult
    locality: Locality
    loads_in_flight_per_thread: int
    fma_chains_per_thread: int
    after_l2_flush: bool = False
    measured: ProfileCounts | None = None

    @property
    def slots(self) -> int:
        """Blocks resident on the whole GPU at once (a full wave)."""
        return self.occupancy.active_blocks_per_sm * self.gpu.sm_count

    @property
    def busiest_sm_blocks(self) -> int:
        """Blocks the busiest SM runs: blocks go to the SMs in turn, ``ceil(blocks / SMs)``."""
        return math.ceil(self.launch.blocks / self.gpu.sm_count)

    @property
    def sms_in_use(self) -> int:
        """SMs the grid occupies: its blocks, at most the GPU's SMs."""
        return min(self.launch.blocks, self.gpu.sm_count)

    @property
    def first_wave_blocks(self) -> int:
        """Blocks the busiest SM holds at once in the first wave: its `busiest_sm_blocks`, at
        most the blocks resident per SM."""
        return min(self.occupancy.active_blocks_per_sm, self.busiest_sm_blocks)

    @property
    def sass(self) -> SassSummary | None:
        """The launch's SASS summary (`sass_of`)."""
        return sass_of(self.launch)

    @property
    def path_instructions(self) -> float | None:
        """Warp instructions of one path through the kernel's branches: the inverse of
        `issued_instructions` on its ``instructions`` (None without a count)."""
        kernel = self.kernel
        if not kernel.instructions:
            return None
        listed, issued = straight_line_instructions(self.sass, self.launch, kernel.branch_issue_factor)
        if issued > float(kernel.instructions):  # a count below the code outside the loops: all of it
            listed = issued = 0.0
        return listed + (float(kernel.instructions) - issued) / float(kernel.branch_issue_factor or 1.0)

    @property
    def rounds(self) -> int:
        """Round trips a thread makes for its elements, ``loads_in_flight_per_thread`` at a time."""
        elements = self.launch.elements_per_thread
        return math.ceil(elements / min(int(self.loads_in_flight_per_thread), elements))
