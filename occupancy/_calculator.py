"""calculate and calculate_many: blocks per SM of one launch or of arrays of launches."""

from __future__ import annotations

import dataclasses

import numpy as np
from numpy.typing import ArrayLike
from pydantic import ConfigDict

from ._arch import Architecture, ArchitectureLike, architecture
from ._checks import LaunchNumbers, checked, gc_mode
from ._display import Displayed, joined, percent, shown
from ._driver_config import DriverConfiguration, driver_configuration
from ._launch import Launch, launch_of
from ._rules import LIMITERS, UNLIMITED, OccupancyArrays, align_up_config, evaluate, launch_numbers, limiter_names

__all__ = ["OccupancyResult", "calculate", "calculate_many"]


class OccupancyResult(Displayed):
    """Occupancy of one launch on one SM.

    Block limits are blocks per SM allowed by each resource on its own; ``None``
    means the resource does not limit (a kernel with no registers or no shared
    memory, or barriers on an architecture where they do not count). ``launch`` is the
    launch as the calculator read it: the `occupancy.Launch` given (or built from the
    loose keywords), with ``max_dynamic_shared_memory`` the runtime's default where the
    launch left it unset.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    arch: str
    launch: Launch
    partitioned_global_caching: str
    active_blocks_per_sm: int
    active_warps_per_sm: int
    active_threads_per_sm: int
    occupancy: float
    warps_per_block: int
    max_warps_per_sm: int
    limiters: tuple[str, ...]
    block_limit_registers: int | None
    block_limit_shared_memory: int | None
    block_limit_warps: int
    block_limit_blocks: int
    block_limit_barriers: int | None
    registers_per_block: int
    shared_memory_per_block: int
    shared_memory_config: int
    driver: DriverConfiguration
    reason: str | None = None

    headline = (
        shown("arch"), shown("launch.threads_per_block", label="threads_per_block"),
        shown("launch.registers_per_thread", label="registers_per_thread"),
        shown("active_blocks_per_sm", label="blocks_per_sm"), shown("occupancy", percent),
        shown("limiters", joined, label="limiter"), shown("reason"),
    )

    @property
    def block_limits(self) -> dict[str, int | None]:
        """Block limit of each resource, keyed by limiter name."""
        return {name: getattr(self, f"block_limit_{name}") for name in LIMITERS}

    def carveout_for(self, shared_memory_config: int) -> int | None:
        """The smallest carveout (percent) with which this launch gets ``shared_memory_config``.

        With a carveout of ``p`` percent the SM takes ``p`` percent of its shared memory
        rounded up to a supported configuration, or the smallest configuration that holds
        one block (``shared_memory_per_block``) when that is larger: the carveout that
        rounds up to ``shared_memory_config`` is one step past the configuration below it.
        A driver's choice (Nsight Compute's ``launch__shared_mem_config_size``) is
        reproduced with it.

        Parameters
        ----------
        shared_memory_config : int
            Bytes of shared memory the SM is configured with.

        Returns
        -------
        int or None
            Percent, 0 to 100; None when no carveout gives that configuration (one that is
            not supported, or smaller than one block needs).

        Examples
        --------
        >>> import occupancy
        >>> r = occupancy.calculate("sm_90", threads_per_block=256, registers_per_thread=32)
        >>> r.carveout_for(65536), r.carveout_for(8192), r.carveout_for(1000)
        (15, 0, None)
        """
        arch = architecture(self.arch)
        configs = arch.shared_memory_carveouts
        if shared_memory_config not in configs:
            return None
        one_block = int(align_up_config(arch, self.shared_memory_per_block))
        if shared_memory_config < one_block:
            return None
        if shared_memory_config == one_block:
            return 0
        below = configs[configs.index(shared_memory_config) - 1]
        # the smallest p with p * shared_memory_per_sm // 100 > below, unless it steps past the configuration
        percent = -(-100 * (below + 1) // arch.shared_memory_per_sm)
        if percent * arch.shared_memory_per_sm // 100 > shared_memory_config:
            return None
        return percent


def _unlimited_to_none(value: int) -> int | None:
    return None if value >= UNLIMITED else value


def _reason(arch: Architecture, v: LaunchNumbers, out: OccupancyArrays) -> str:
    """Why a valid launch gets no block on an SM."""
    reasons = []
    if out.block_limit_warps == 0:
        reasons.append(
            f"threads_per_block={v.threads_per_block} exceeds the kernel's "
            f"max_threads_per_block={v.max_threads_per_block}"
        )
    if out.block_limit_registers == 0:
        subs = arch.sub_partitions
        warps = int(out.warps_per_block)
        per_warp = int(out.registers_per_block) // warps
        assumed = per_warp * (-(-warps // subs) * subs)
        reasons.append(
            f"registers: a block of {warps} warps needs {int(out.registers_per_block)} registers "
            f"({per_warp} per warp; {assumed} with its warps rounded up to the {subs} "
            f"sub-partitions) but a block may use at most {arch.max_registers_per_block} on "
            f"{arch.name}"
        )
    if out.block_limit_shared_memory == 0:
        if v.dynamic_shared_memory > v.max_dynamic_shared_memory:
            reasons.append(
                f"dynamic_shared_memory={v.dynamic_shared_memory} exceeds the kernel's "
                f"max_dynamic_shared_memory={v.max_dynamic_shared_memory} (raise it with cudaFuncSetAttribute("
                f"..., cudaFuncAttributeMaxDynamicSharedMemorySize, ...))"
            )
        else:
            reasons.append(
                f"shared memory: a block needs {int(out.shared_memory_per_block)} bytes, over "
                f"the per-block limit on {arch.name}"
            )
    if out.block_limit_barriers == 0:  # pragma: no cover - 16 barriers always fit one block
        reasons.append(f"block_barriers={v.block_barriers} exceed the barriers of an SM")
    return "; ".join(reasons)


def calculate(
    arch: ArchitectureLike,
    launch: Launch | None = None,
    *,
    partitioned_global_caching: str | bool = "off",
    **fields: object,
) -> OccupancyResult:
    """Blocks of one launch that fit on an SM, what limits them, and why.

    Matches ``cudaOccupancyMaxActiveBlocksPerMultiprocessor`` (with the kernel's
    attributes) exactly.

    Parameters
    ----------
    arch : str, tuple or Architecture
        The compute capability, e.g. ``"sm_90"``, ``"9.0"``, ``(9, 0)``.
    launch : Launch, optional
        The launch; its registers per thread must be known.
    partitioned_global_caching : {"off", "on", "strict"}, optional
        Partitioned global caching (compute capabilities 5.2, 5.3, 6.1, 6.2).
    **fields
        In place of ``launch``: the fields of `occupancy.Launch` as keywords (the one
        place they are documented), ``threads_per_block`` for a one-dimensional block.
        The launch numbers are ``threads_per_block`` (1 to 1024; from ``resources`` when
        they fix it), ``registers_per_thread`` (``cudaFuncAttributes.numRegs``, 0 to 255;
        required unless ``resources`` gives it), ``static_shared_memory``,
        ``dynamic_shared_memory`` and ``max_dynamic_shared_memory`` (bytes; None: the
        runtime's default of 48 KiB minus static, and a launch asking for more gets 0
        blocks), ``carveout`` (percent of the SM's shared memory, None for no preference;
        rounded up to a supported configuration as the driver does), ``block_barriers``
        (1 by default), ``max_threads_per_block`` (``__launch_bounds__``; a larger block
        gets 0 blocks) and ``resources`` (:func:`occupancy.kernel_resources`: its
        numbers stand in for the loose ones, and a loose number that disagrees with it is
        an error). None counts as not given.

    Returns
    -------
    OccupancyResult

    Raises
    ------
    OccupancyError
        For negative or non-integer values, values over the architecture's limits, or
        loose numbers that disagree with ``resources``.
    TypeError
        For values of the wrong type, no ``registers_per_thread`` nor ``resources``, or
        ``launch`` together with loose keywords.

    Examples
    --------
    >>> import occupancy
    >>> r = occupancy.calculate("sm_80", threads_per_block=512, registers_per_thread=33)
    >>> r.active_blocks_per_sm, r.occupancy, r.limiters
    (3, 0.75, ('registers',))
    >>> occupancy.calculate("sm_80", occupancy.Launch(grid=108, block=512, registers_per_thread=33)).occupancy
    0.75
    """
    arch = architecture(arch)
    gc = gc_mode(partitioned_global_caching)
    launch = launch_of("calculate", launch, fields, arch)
    v = launch_numbers(arch, launch)
    out = evaluate(arch, v, gc)
    active = int(out.active_blocks_per_sm)
    if launch.max_dynamic_shared_memory is None:
        # every field comes from a checked Launch, and the runtime's default from `checked`:
        # built as it is (a checked copy would cost a third of the call)
        default = int(v.max_dynamic_shared_memory)
        launch = Launch.model_construct(**(dict(launch) | {"max_dynamic_shared_memory": default}))
    return OccupancyResult(
        arch=arch.name,
        launch=launch,
        partitioned_global_caching=gc,
        active_blocks_per_sm=active,
        active_warps_per_sm=int(out.active_warps_per_sm),
        active_threads_per_sm=int(out.active_threads_per_sm),
        occupancy=float(out.occupancy),
        warps_per_block=int(out.warps_per_block),
        max_warps_per_sm=arch.max_warps_per_sm,
        limiters=limiter_names(out.limiter_mask),
        block_limit_registers=_unlimited_to_none(int(out.block_limit_registers)),
        block_limit_shared_memory=_unlimited_to_none(int(out.block_limit_shared_memory)),
        block_limit_warps=int(out.block_limit_warps),
        block_limit_blocks=int(out.block_limit_blocks),
        block_limit_barriers=_unlimited_to_none(int(out.block_limit_barriers)),
        registers_per_block=int(out.registers_per_block),
        shared_memory_per_block=int(out.shared_memory_per_block),
        shared_memory_config=int(out.shared_memory_config),
        driver=driver_configuration(arch, barriers=v.block_barriers, carveout=v.carveout, out=out),
        reason=_reason(arch, v, out) if active == 0 else None,
    )


# The launch numbers calculate_many takes as arrays: the fields of LaunchNumbers, the first two
# required, the others defaulting as a Launch's do.
_LAUNCH_ARRAYS = tuple(f.name for f in dataclasses.fields(LaunchNumbers))
_REQUIRED_ARRAYS = ("threads_per_block", "registers_per_thread")
_ARRAY_DEFAULTS = {name: Launch.model_fields[name].default for name in _LAUNCH_ARRAYS if name not in _REQUIRED_ARRAYS}


def calculate_many(
    arch: ArchitectureLike,
    *,
    partitioned_global_caching: str | bool = "off",
    **arrays: ArrayLike | None,
) -> OccupancyArrays:
    """:func:`calculate` over numpy arrays, with broadcasting.

    Parameters
    ----------
    arch : str, tuple or Architecture
        The compute capability, e.g. ``"sm_90"``.
    partitioned_global_caching : {"off", "on", "strict"}, optional
        One value for all the launches.
    **arrays
        The launch numbers of :func:`calculate` as keywords, each a scalar or an array of
        integers (the arrays broadcast together): ``threads_per_block`` and
        ``registers_per_thread`` (required), ``static_shared_memory``,
        ``dynamic_shared_memory``, ``max_dynamic_shared_memory``, ``carveout`` (which may
        hold -1 for "no preference"), ``block_barriers`` and ``max_threads_per_block``; one
        left out takes :func:`calculate`'s default, as does None for the last three kernel
        attributes. Every element equals :func:`calculate` on the same values.

    Returns
    -------
    OccupancyArrays

    Raises
    ------
    OccupancyError
        If any element is out of range (the message names the first bad value).
    TypeError
        For a keyword that is not a launch number, a missing ``threads_per_block`` or
        ``registers_per_thread``, or values that are not integers.

    Examples
    --------
    >>> import numpy as np, occupancy
    >>> r = occupancy.calculate_many("sm_80", threads_per_block=512,
    ...                              registers_per_thread=np.array([32, 33, 64]))
    >>> r.occupancy.tolist()
    [1.0, 0.75, 0.5]
    """
    unknown = [name for name in arrays if name not in _LAUNCH_ARRAYS]
    if unknown:
        raise TypeError(f"calculate_many() got an unexpected keyword argument {unknown[0]!r}; the launch "
                        f"numbers are {', '.join(_LAUNCH_ARRAYS)}")
    missing = [name for name in _REQUIRED_ARRAYS if name not in arrays]
    if missing:
        raise TypeError(f"calculate_many() missing the launch numbers {' and '.join(map(repr, missing))}")
    arch = architecture(arch)
    gc = gc_mode(partitioned_global_caching)
    out = evaluate(arch, checked(arch, LaunchNumbers(**(_ARRAY_DEFAULTS | arrays)), arrays=True), gc)
    values = {f.name: getattr(out, f.name) for f in dataclasses.fields(out)}
    shape = np.broadcast_shapes(*(np.shape(x) for x in values.values()))
    return OccupancyArrays(**{k: np.broadcast_to(x, shape) for k, x in values.items()})
