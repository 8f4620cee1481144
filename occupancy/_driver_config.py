"""The shared-memory configuration the driver picks for a launch, and the limits against it.

The occupancy API (``cudaOccupancyMaxActiveBlocksPerMultiprocessor``, and `calculate`)
counts shared-memory blocks against the largest configuration when there is no carveout
preference. The driver launches with a configuration of its own choosing, reported by
Nsight Compute as ``launch__shared_mem_config_size``; the per-resource block limits Nsight
Compute shows are counted against it, and the L1 cache gets the rest of the unified
L1/shared-memory array. The rule is in :func:`launch_config` (learned from Nsight Compute on
an H200 and an H100; see ``docs/occupancy.md``).
"""

from __future__ import annotations

import functools
import tomllib
from importlib import resources

from pydantic import BaseModel, ConfigDict, Field

from ._arch import Architecture

__all__ = ["DriverConfiguration", "driver_configuration", "unified_l1_shared_memory"]


class DriverConfiguration(BaseModel):
    """The driver's shared-memory configuration for a launch, and the limits against it.

    Block limits are blocks per SM, as Nsight Compute reports them
    (``launch__occupancy_limit_*``); ``None`` where the resource is not used.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    shared_memory_config: int = Field(description="Bytes of shared memory the SM is configured with.")
    l1_cache: int | None = Field(description="Bytes of L1 data cache left (None before Volta).")
    unified_l1_shared_memory: int | None = Field(description="Bytes of the unified L1/shared array per SM.")
    block_limit_warps: int
    block_limit_registers: int | None
    block_limit_shared_memory: int | None
    block_limit_blocks: int
    block_limit_barriers: int
    rule: str = Field(description='"measured" or "assumed" for this architecture (see the data file).')


@functools.cache
def _unified() -> dict[str, dict]:
    text = resources.files("occupancy").joinpath("data", "l1_shared.toml").read_text(encoding="utf-8")
    return {e["name"]: e for e in tomllib.loads(text)["architecture"]}


def unified_l1_shared_memory(arch: Architecture) -> int | None:
    """Bytes of the unified L1/shared-memory array of an SM (None where L1 is separate)."""
    entry = _unified().get(arch.name)
    return None if entry is None else int(entry["unified_bytes"])


def _align(arch: Architecture, size: int) -> int:
    """Smallest supported configuration of at least ``size`` bytes (the largest if none)."""
    for c in arch.shared_memory_carveouts:
        if c >= size:
            return c
    return arch.shared_memory_carveouts[-1]


DOUBLING_CAP_FRACTION = 0.5
"""The room the driver adds for concurrent blocks is capped at this fraction of the
unified L1/shared array (128 KiB on Hopper; measured, see docs/occupancy.md)."""


def launch_config(arch: Architecture, *, active_blocks: int, alloc: int, warps_per_block: int,
                  carveout: int, occupancy_config: int) -> int:
    """The configuration, bytes, the driver launches with.

    ``active_blocks`` is the launch's blocks per SM, ``alloc`` one block's shared memory as
    allocated (with the driver's reserved bytes), ``carveout`` -1 for no preference, and
    ``occupancy_config`` the configuration the occupancy API assumes.
    """
    if len(arch.shared_memory_carveouts) == 1:
        return arch.shared_memory_carveouts[0]
    if carveout >= 0 or alloc == 0 or active_blocks == 0:
        return occupancy_config
    unified = unified_l1_shared_memory(arch) or arch.shared_memory_per_sm
    keep = _align(arch, active_blocks * alloc)
    target = active_blocks
    if active_blocks > 1 and warps_per_block < arch.max_warps_per_sm // 2:
        target = min(2 * active_blocks, arch.max_blocks_per_sm)
    room = _align(arch, min(target * alloc, int(unified * DOUBLING_CAP_FRACTION)))
    return max(keep, room)


def driver_configuration(arch: Architecture, *, barriers: int, carveout: int, out: dict) -> DriverConfiguration:
    """The driver's view of one evaluated launch (``out``: the scalar `_rules.evaluate` output)."""
    from ._rules import UNLIMITED

    alloc = int(out["shared_memory_per_block"])
    active = int(out["active_blocks_per_sm"])
    config = launch_config(arch, active_blocks=active, alloc=alloc, warps_per_block=int(out["warps_per_block"]),
                           carveout=carveout, occupancy_config=int(out["shared_memory_config"]))
    unified = unified_l1_shared_memory(arch)
    entry = _unified().get(arch.name)
    smem_limit: int | None = None
    if int(out["block_limit_shared_memory"]) == 0:
        smem_limit = 0
    elif alloc > 0:
        smem_limit = config // alloc
    registers_limit = int(out["block_limit_registers"])
    if arch.barriers_limit_occupancy:
        barrier_limit = min(arch.max_blocks_per_sm, arch.max_barriers_per_sm // max(barriers, 1))
    else:
        barrier_limit = arch.max_blocks_per_sm
    return DriverConfiguration(
        shared_memory_config=config,
        l1_cache=None if unified is None else unified - config,
        unified_l1_shared_memory=unified,
        block_limit_warps=int(out["block_limit_warps"]),
        block_limit_registers=None if registers_limit >= UNLIMITED else registers_limit,
        block_limit_shared_memory=smem_limit,
        block_limit_blocks=arch.max_blocks_per_sm,
        block_limit_barriers=barrier_limit,
        rule="assumed" if entry is None else entry["rule"],
    )
