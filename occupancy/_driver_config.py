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
from ._rules import UNLIMITED, OccupancyArrays

__all__ = ["DriverConfiguration", "driver_configuration", "unified_l1_shared_memory"]


class DriverConfiguration(BaseModel):
    """The driver's shared-memory configuration for a launch, and the limits against it.

    Block limits are blocks per SM, as Nsight Compute reports them
    (``launch__occupancy_limit_*``); ``None`` where the resource is not used.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    shared_memory_config: int = Field(description="Bytes of shared memory the SM is configured with.")
    l1_cache: int | None = Field(description="Bytes of L1 data cache left (None before Volta).")
    unified_l1_shared_memory: int | None = Field(description="Bytes of the unified L1/shared array per SM.")
    active_blocks_per_sm: int = Field(
        description="Blocks per SM at launch: the smallest limit against this configuration."
    )
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


def launch_config(arch: Architecture, *, blocks: int, alloc: int, warps_per_block: int, carveout: int) -> int:
    """The shared-memory configuration, bytes, the driver launches with.

    ``blocks`` is the launch's blocks per SM with no carveout preference (counted against
    the largest configuration, as `calculate` does), ``alloc`` one block's shared memory as
    allocated (static + dynamic + the driver's reserved bytes, rounded to the allocation
    unit) and ``carveout`` the preference in percent, -1 for none.

    The rule, measured with Nsight Compute on Hopper (1,234 synthetic launches on an H200 and
    an H100, none off; docs/occupancy.md):

    * no preference: the smallest configuration that holds ``blocks`` blocks, or, when larger,
      the one that holds ``T`` blocks with ``T * alloc`` capped at half the unified L1/shared
      array: room for a second set of blocks beside the launch's own,
      ``T = min(2 * blocks, max_blocks_per_sm - warps_per_block)``, or that cap itself for a
      kernel whose only shared memory is the driver's reserve; ``T = blocks`` for one block
      per SM;
    * a preference of ``p`` percent: ``p`` percent of the SM's shared memory rounded up to a
      configuration, grown to hold as many blocks as that preference holds when the driver's
      reserved bytes are left out of the count (a kernel with no shared memory of its own
      gets at least the no-preference configuration).
    """
    configs = arch.shared_memory_carveouts
    if len(configs) == 1:
        return configs[0]
    largest = configs[-1]
    user = alloc - arch.reserved_shared_memory_per_block
    if carveout >= 0:
        preferred = carveout * arch.shared_memory_per_sm // 100
        if user <= 0:
            return max(_align(arch, preferred), launch_config(arch, blocks=blocks, alloc=alloc,
                                                              warps_per_block=warps_per_block, carveout=-1))
        counted = max(1, preferred // user)
        return max(_align(arch, preferred), _align(arch, min(counted * alloc, largest)))
    if alloc == 0 or blocks == 0:
        return _align(arch, alloc)
    keep = _align(arch, min(blocks, largest // alloc) * alloc)
    if blocks == 1:
        return keep
    room = arch.max_blocks_per_sm - warps_per_block
    target = room if user <= 0 else min(2 * blocks, room)
    target = max(target, blocks)
    unified = unified_l1_shared_memory(arch) or arch.shared_memory_per_sm
    return max(keep, _align(arch, min(target * alloc, unified // 2)))


def driver_configuration(
    arch: Architecture, *, barriers: int, carveout: int, out: OccupancyArrays
) -> DriverConfiguration:
    """The driver's view of one evaluated launch (``out``: `_rules.evaluate` of one launch)."""
    alloc = int(out.shared_memory_per_block)
    warps = int(out.block_limit_warps)
    registers = int(out.block_limit_registers)
    if arch.barriers_limit_occupancy:
        bars = min(arch.max_blocks_per_sm, arch.max_barriers_per_sm // max(barriers, 1))
    else:
        bars = arch.max_blocks_per_sm
    refused = int(out.block_limit_shared_memory) == 0
    others = min(warps, registers, bars, arch.max_blocks_per_sm)
    if refused:
        blocks = 0
    elif alloc == 0:
        blocks = others
    else:
        blocks = min(others, arch.shared_memory_per_sm // alloc)
    config = launch_config(arch, blocks=blocks, alloc=alloc, warps_per_block=int(out.warps_per_block),
                           carveout=carveout)
    smem_limit: int | None
    if refused:
        smem_limit = 0
    elif alloc == 0:
        smem_limit = None
    else:
        smem_limit = config // alloc
    active = min(others, UNLIMITED if smem_limit is None else smem_limit)
    unified = unified_l1_shared_memory(arch)
    entry = _unified().get(arch.name)
    return DriverConfiguration(
        shared_memory_config=config,
        l1_cache=None if unified is None else unified - config,
        unified_l1_shared_memory=unified,
        active_blocks_per_sm=active,
        block_limit_warps=warps,
        block_limit_registers=None if registers >= UNLIMITED else registers,
        block_limit_shared_memory=smem_limit,
        block_limit_blocks=arch.max_blocks_per_sm,
        block_limit_barriers=bars,
        rule="assumed" if entry is None else entry["rule"],
    )
