"""The occupancy rules as plain numpy: lookup tables per architecture and one core.

Every public entry point (``calculate``, ``calculate_many``, ``cliffs``,
``max_potential_block_size``, the cluster functions) runs :func:`evaluate` on a `Launch`
or on checked arrays of launch numbers, so scalar and array answers cannot drift apart.

The rules (learned from the CUDA runtime's documented behaviour and NVIDIA's
``cuda_occupancy.h``):

* registers are allocated per warp, rounded up to ``register_allocation_unit``; the
  register file is split evenly across the SM's sub-partitions and a warp's registers
  live in one sub-partition, so the warps that fit are counted per sub-partition;
* a block is refused when its registers, with its warps rounded up to a multiple of the
  sub-partition count, exceed ``max_registers_per_block`` (the hardware check);
* each block's shared memory is static + dynamic + the driver's reserved bytes, rounded
  up to ``shared_memory_allocation_unit``; the SM picks the carveout preference rounded
  up to a supported configuration, or the smallest configuration that holds one block
  when the preference is too small;
* block barriers count against occupancy only where ``barriers_limit_occupancy``.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, fields

import numpy as np

from ._arch import MAX_BARRIERS_PER_BLOCK, Architecture
from ._checks import GC_MODES, LaunchNumbers, check_range, checked, integer
from ._errors import OccupancyError
from ._launch import Launch
from ._resources import check_architecture

__all__ = [
    "LIMITERS",
    "OccupancyArrays",
    "UNLIMITED",
    "align_up_config",
    "evaluate",
    "launch_numbers",
    "limiter_names",
    "tables",
]

UNLIMITED = int(np.iinfo(np.int32).max)
"""Block limit of a resource that does not limit (no registers, no shared memory)."""

LIMITERS = ("warps", "registers", "shared_memory", "blocks", "barriers")
"""Limiter names; bit ``1 << i`` in a limiter mask stands for ``LIMITERS[i]``."""

@dataclass(frozen=True)
class Tables:
    """Lookup tables of one architecture (built once, cached)."""

    warps_axis: int  # row length of the (registers, warps) tables
    registers_limit: tuple[np.ndarray, ...]  # per GC mode, flat [r * warps_axis + w]
    warps_limit: tuple[np.ndarray, ...]  # per GC mode, flat [r * warps_axis + w]
    registers_per_block: np.ndarray  # flat [r * warps_axis + w]
    smem_blocks: np.ndarray  # [carveout + 1, slot] blocks per SM by shared memory
    smem_config: np.ndarray  # [carveout + 1, slot] bytes of shared memory the SM uses
    smem_slots: int
    smem_shift: int
    barriers_limit: np.ndarray  # [barriers]


def align_up_config(arch: Architecture, size: np.ndarray) -> np.ndarray:
    """Smallest supported shared-memory configuration holding ``size`` bytes."""
    configs = np.asarray(arch.shared_memory_carveouts, dtype=np.int64)
    idx = np.searchsorted(configs, size, side="left")
    return configs[np.minimum(idx, len(configs) - 1)]


def _register_limits(
    arch: Architecture, regs: np.ndarray, warps: np.ndarray, subs: int, gc: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Blocks per SM allowed by registers; also whether partitioned caching stays on."""
    unit = arch.register_allocation_unit
    per_warp = -(-regs * arch.warp_size // unit) * unit
    per_block = per_warp * warps
    assumed = per_warp * (-(-warps // subs) * subs)
    fits = (
        (assumed <= arch.max_registers_per_block)
        & (per_block <= arch.max_registers_per_block)
        & (regs <= arch.max_registers_per_thread)
    )
    warps_per_sub = (arch.registers_per_sm // subs) // np.maximum(per_warp, 1)
    whole = (warps_per_sub * subs) // warps
    gc_on = np.zeros(np.broadcast(regs, warps).shape, dtype=bool)
    limit = whole
    if gc != "off":
        # Partitioned global caching splits the SM in two halves that cannot share a block.
        halves = (warps_per_sub * (subs // 2)) // warps * 2
        # "on" falls back to off only when a fitting block needs the whole SM's
        # registers; a block refused outright, or one without registers, keeps it on.
        gc_on = (halves > 0) | ~fits | (per_warp == 0) if gc == "on" else np.ones_like(gc_on)
        limit = np.where(gc_on, halves, whole)
    limit = np.where(per_warp == 0, UNLIMITED, limit)
    limit = np.where(fits, limit, 0)
    return limit, gc_on, per_block


@functools.lru_cache(maxsize=64)
def tables(arch: Architecture) -> Tables:
    """Build (once) the lookup tables of ``arch``."""
    max_warps_block = -(-arch.max_threads_per_block // arch.warp_size)
    axis = max_warps_block + 1
    regs = np.arange(arch.max_registers_per_thread + 1, dtype=np.int64)[:, None]
    warps = np.arange(axis, dtype=np.int64)[None, :]
    warps = np.maximum(warps, 1)  # column 0 is never looked up
    reg_limits, warp_limits = [], []
    for gc in GC_MODES:
        mode = gc if arch.partitioned_global_caching else "off"
        limit, gc_on, per_block = _register_limits(arch, regs, warps, arch.sub_partitions, mode)
        for subs in arch.register_check_sub_partitions:
            other, _, _ = _register_limits(arch, regs, warps, subs, mode)
            limit = np.where(other == 0, 0, limit)
        whole = arch.max_warps_per_sm // warps
        halves = (arch.max_warps_per_sm // 2) // warps * 2
        wl = np.where(gc_on, halves, whole) * np.ones_like(limit)
        reg_limits.append(np.ascontiguousarray(limit, dtype=np.int32).ravel())
        warp_limits.append(np.ascontiguousarray(wl, dtype=np.int32).ravel())
    per_block = np.ascontiguousarray(per_block * np.ones_like(limit), dtype=np.int32).ravel()

    unit = arch.shared_memory_allocation_unit
    slots = arch.shared_memory_per_sm // unit + 1
    alloc = np.arange(slots, dtype=np.int64) * unit
    carveout = np.arange(-1, 101, dtype=np.int64)[:, None]
    wanted = np.where(carveout < 0, arch.shared_memory_per_sm, carveout * arch.shared_memory_per_sm // 100)
    preference = align_up_config(arch, wanted)
    config = np.where(preference >= alloc[None, :], preference, align_up_config(arch, alloc)[None, :])
    blocks = np.where(alloc > 0, config // np.maximum(alloc, 1), UNLIMITED)

    n = np.arange(MAX_BARRIERS_PER_BLOCK + 1)
    if arch.barriers_limit_occupancy:
        bars = np.where(n > 0, arch.max_barriers_per_sm // np.maximum(n, 1), UNLIMITED)
    else:
        bars = np.full(n.shape, UNLIMITED)
    return Tables(
        warps_axis=axis,
        registers_limit=tuple(reg_limits),
        warps_limit=tuple(warp_limits),
        registers_per_block=per_block,
        smem_blocks=np.ascontiguousarray(blocks, dtype=np.int32),
        smem_config=np.ascontiguousarray(config, dtype=np.int32),
        smem_slots=slots,
        smem_shift=unit.bit_length() - 1,
        barriers_limit=bars.astype(np.int32),
    )


def _take(table: np.ndarray, index: int | np.ndarray) -> np.ndarray:
    if np.ndim(index) == 0:
        return table[int(index)]
    return np.take(table, index)


def launch_numbers(arch: Architecture, launch: Launch) -> LaunchNumbers:
    """The numbers of ``launch`` checked against ``arch`` (its registers must be known)."""
    if launch.registers_per_thread is None:
        raise OccupancyError(
            "registers_per_thread is not known (None): give registers_per_thread= or resources= to the Launch"
        )
    if launch.resources is not None:
        check_architecture(arch, launch.resources)
    # The Launch has every number under the same name (threads_per_block from its block).
    numbers = LaunchNumbers(**{field.name: getattr(launch, field.name) for field in fields(LaunchNumbers)})
    return checked(arch, numbers, arrays=False)


def evaluate(arch: Architecture, launch: Launch | LaunchNumbers, gc: str = "off") -> OccupancyArrays:
    """Occupancy of a launch, or of arrays of launches, on one SM of ``arch``.

    Parameters
    ----------
    arch : Architecture
        The architecture.
    launch : Launch or LaunchNumbers
        One `Launch` (checked against ``arch`` here), or numbers already `checked`
        (scalars or broadcastable int arrays).
    gc : {"off", "on", "strict"}
        Partitioned global caching.

    Returns
    -------
    OccupancyArrays
        Numbers or arrays of the launch's broadcast shape (not broadcast further).
    """
    v = launch_numbers(arch, launch) if isinstance(launch, Launch) else launch
    threads, registers, barriers = v.threads_per_block, v.registers_per_thread, v.block_barriers
    t = tables(arch)
    mode = GC_MODES.index(gc)
    # Over arrays of a million launches the time goes into writing fresh arrays: the steps
    # below update the arrays they have just made (`_update`; with a number, augmented
    # assignment: in place for an array, a new value for a number), and a condition applies
    # as a factor of 0 or 1 (np.where over random conditions is four times slower).
    ws = arch.warp_size
    warps = threads + (ws - 1)
    warps >>= ws.bit_length() - 1
    rw = _update(np.add, registers * t.warps_axis, warps)
    reg_limit = _take(t.registers_limit[mode], rw)
    warp_limit = _take(t.warps_limit[mode], rw)
    if v.max_threads_per_block is not None:
        warp_limit = warp_limit * (threads <= v.max_threads_per_block)

    reserved = arch.reserved_shared_memory_per_block
    static_total = v.static_shared_memory + reserved
    unit = arch.shared_memory_allocation_unit
    slot = static_total + v.dynamic_shared_memory
    slot += unit - 1
    slot >>= t.smem_shift
    alloc = slot << t.smem_shift
    # A kernel whose static + maximum dynamic shared memory passes the default limit
    # has opted in (cudaFuncAttributeMaxDynamicSharedMemorySize); the reserved bytes
    # come on top of either limit.
    optin = _update(np.add, static_total, v.max_dynamic_shared_memory) > arch.max_shared_memory_per_block
    fits = _update(np.bitwise_or, alloc <= arch.max_shared_memory_per_block + reserved,
                   optin & (alloc <= arch.max_shared_memory_per_block_optin + reserved))
    fits = _update(np.bitwise_and, fits, v.dynamic_shared_memory <= v.max_dynamic_shared_memory)
    slot = np.minimum(slot, t.smem_slots - 1)
    if np.ndim(v.carveout) == 0:
        row = int(v.carveout) + 1
        smem_limit = _take(t.smem_blocks[row], slot)
        config = _take(t.smem_config[row], slot)
    else:
        slot = _update(np.add, slot, (v.carveout + 1) * t.smem_slots)
        smem_limit = np.take(t.smem_blocks, slot)
        config = np.take(t.smem_config, slot)
    smem_limit = smem_limit * fits

    block_limit = arch.max_blocks_per_sm
    bar_limit = _take(t.barriers_limit, barriers)
    active = np.minimum(reg_limit, warp_limit)
    for limit in (smem_limit, bar_limit, block_limit):
        active = _update(np.minimum, active, limit)
    # One bit per limiter, each condition's bytes taken as 0 or 1 (a view of the booleans).
    mask = np.equal(warp_limit, active).view(np.uint8)
    for bit, binds in enumerate((np.equal(reg_limit, active), np.equal(smem_limit, active),
                                 np.equal(active, block_limit), np.equal(bar_limit, active)), 1):
        bits = binds.view(np.uint8)
        bits <<= bit
        mask |= bits
    active_warps = active * warps
    shape = np.shape(active)
    return OccupancyArrays(
        active_blocks_per_sm=active,
        active_warps_per_sm=active_warps,
        active_threads_per_sm=active * threads,
        occupancy=active_warps / arch.max_warps_per_sm,
        warps_per_block=warps,
        limiter_mask=mask,
        block_limit_registers=reg_limit,
        block_limit_shared_memory=smem_limit,
        block_limit_warps=warp_limit,
        block_limit_blocks=np.broadcast_to(np.asarray(block_limit, np.result_type(active)), shape) if shape
        else block_limit,
        block_limit_barriers=bar_limit,
        registers_per_block=_take(t.registers_per_block, rw),
        shared_memory_per_block=alloc,
        shared_memory_config=config,
    )


def _update(ufunc: np.ufunc, a: np.ndarray | int, b: np.ndarray | int) -> np.ndarray | int:
    """``ufunc(a, b)``, written into `a` where `a` is an array of the result's shape and type;
    `a` must be one that its caller has just made (no one else holds it)."""
    if (isinstance(a, np.ndarray) and a.shape == np.broadcast_shapes(a.shape, np.shape(b))
            and np.result_type(a, b) == a.dtype):
        return ufunc(a, b, out=a)
    return ufunc(a, b)


@dataclass(frozen=True)
class OccupancyArrays:
    """Occupancy of many launches: the fields of :class:`OccupancyResult` as arrays.

    All arrays share the broadcast shape of the inputs. Block limits of resources
    that do not limit hold ``UNLIMITED`` (2**31 - 1). ``limiter_mask`` has bit
    ``1 << i`` set when ``LIMITERS[i]`` binds; :meth:`limiters_at` decodes it.
    """

    active_blocks_per_sm: np.ndarray
    active_warps_per_sm: np.ndarray
    active_threads_per_sm: np.ndarray
    occupancy: np.ndarray
    warps_per_block: np.ndarray
    limiter_mask: np.ndarray
    block_limit_registers: np.ndarray
    block_limit_shared_memory: np.ndarray
    block_limit_warps: np.ndarray
    block_limit_blocks: np.ndarray
    block_limit_barriers: np.ndarray
    registers_per_block: np.ndarray
    shared_memory_per_block: np.ndarray
    shared_memory_config: np.ndarray

    @property
    def shape(self) -> tuple[int, ...]:
        """The broadcast shape of the inputs."""
        return self.active_blocks_per_sm.shape

    def limiters_at(self, *index: int) -> tuple[str, ...]:
        """Names of the resources that bind at ``index`` (one integer per dimension)."""
        shape = self.limiter_mask.shape
        if len(index) != len(shape):
            raise OccupancyError(f"index={index} needs {len(shape)} integers, one per dimension of {shape}")
        for axis, (i, size) in enumerate(zip(index, shape)):
            check_range(f"index[{axis}]", integer(f"index[{axis}]", i), -size, size - 1)
        return limiter_names(int(self.limiter_mask[index]))


def limiter_names(mask: int) -> tuple[str, ...]:
    """Names of the limiters set in a limiter mask."""
    return tuple(name for i, name in enumerate(LIMITERS) if int(mask) >> i & 1)
