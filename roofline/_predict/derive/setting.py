"""What `derive` reads: one launch of a kernel on a GPU, checked (`Setting`)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from occupancy import Launch, OccupancyResult, SassSummary

from ..._gpu import GPU
from ..._kernel import Kernel
from ..._locality import Locality
from ..._profile_counts import ProfileCounts

__all__ = ["Setting", "sass_of"]


def sass_of(launch: Launch) -> SassSummary | None:
    """The SASS summary a launch's resources carry, None without one."""
    return launch.resources.sass if launch.resources is not None else None


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
        """Warp instructions of one path through the kernel's branches: its ``instructions``
        over ``branch_issue_factor`` (None without a count)."""
        kernel = self.kernel
        if not kernel.instructions:
            return None
        return float(kernel.instructions) / float(kernel.branch_issue_factor or 1.0)

    @property
    def rounds(self) -> int:
        """Round trips a thread makes for its elements, ``loads_in_flight_per_thread`` at a time."""
        elements = self.launch.elements_per_thread
        return math.ceil(elements / min(int(self.loads_in_flight_per_thread), elements))
