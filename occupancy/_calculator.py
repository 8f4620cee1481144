"""calculate and calculate_many: blocks per SM of one launch or of arrays of launches."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict

from . import _validate
from ._arch import Architecture, architecture
from ._driver_config import DriverConfiguration, driver_configuration
from ._errors import OccupancyError
from ._kernel_launch import Launch, resolve
from ._resources import KernelResources, merge_resources
from ._rules import LIMITERS, UNLIMITED, evaluate, limiter_names

__all__ = ["LAUNCH_DEFAULTS", "OccupancyArrays", "OccupancyResult", "calculate", "calculate_many"]

# Values of the loose launch numbers when neither they nor ``resources`` are given
# (registers_per_thread and threads_per_block have none: they are required).
LAUNCH_DEFAULTS = {
    "static_shared_memory": 0,
    "dynamic_shared_memory": 0,
    "block_barriers": 1,
    "max_threads_per_block": None,
    "max_dynamic_shared_memory": None,
}


class OccupancyResult(BaseModel):
    """Occupancy of one launch on one SM.

    Block limits are blocks per SM allowed by each resource on its own; ``None``
    means the resource does not limit (a kernel with no registers or no shared
    memory, or barriers on an architecture where they do not count).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    arch: str
    threads_per_block: int
    registers_per_thread: int
    static_shared_memory: int
    dynamic_shared_memory: int
    max_dynamic_shared_memory: int
    carveout: int | None
    block_barriers: int
    max_threads_per_block: int | None
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

    @property
    def block_limits(self) -> dict[str, int | None]:
        """Block limit of each resource, keyed by limiter name."""
        return {name: getattr(self, f"block_limit_{name}") for name in LIMITERS}


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
            _validate.check_range(f"index[{axis}]", _validate.integer(f"index[{axis}]", i), -size, size - 1)
        return limiter_names(int(self.limiter_mask[index]))


def _unlimited_to_none(value: int) -> int | None:
    return None if value >= UNLIMITED else value


def _reason(arch: Architecture, v: dict[str, Any], out: dict[str, Any]) -> str:
    """Why a valid launch gets no block on an SM."""
    reasons = []
    if out["block_limit_warps"] == 0:
        reasons.append(
            f"threads_per_block={v['t']} exceeds the kernel's max_threads_per_block={v['mt']}"
        )
    if out["block_limit_registers"] == 0:
        subs = arch.sub_partitions
        warps = out["warps_per_block"]
        per_warp = out["registers_per_block"] // warps
        assumed = per_warp * (-(-warps // subs) * subs)
        reasons.append(
            f"registers: a block of {warps} warps needs {out['registers_per_block']} registers "
            f"({per_warp} per warp; {assumed} with its warps rounded up to the {subs} "
            f"sub-partitions) but a block may use at most {arch.max_registers_per_block} on "
            f"{arch.name}"
        )
    if out["block_limit_shared_memory"] == 0:
        if v["d"] > v["m"]:
            reasons.append(
                f"dynamic_shared_memory={v['d']} exceeds the kernel's "
                f"max_dynamic_shared_memory={v['m']} (raise it with cudaFuncSetAttribute("
                f"..., cudaFuncAttributeMaxDynamicSharedMemorySize, ...))"
            )
        else:
            reasons.append(
                f"shared memory: a block needs {out['shared_memory_per_block']} bytes, over "
                f"the per-block limit on {arch.name}"
            )
    if out["block_limit_barriers"] == 0:  # pragma: no cover - 16 barriers always fit one block
        reasons.append(f"block_barriers={v['b']} exceed the barriers of an SM")
    return "; ".join(reasons)


def calculate(
    arch: Any,
    *,
    threads_per_block: int | None = None,
    registers_per_thread: int | None = None,
    static_shared_memory: int | None = None,
    dynamic_shared_memory: int | None = None,
    max_dynamic_shared_memory: int | None = None,
    carveout: int | None = None,
    block_barriers: int | None = None,
    max_threads_per_block: int | None = None,
    partitioned_global_caching: str | bool = "off",
    resources: KernelResources | None = None,
    launch: Launch | None = None,
) -> OccupancyResult:
    """Blocks of one launch that fit on an SM, what limits them, and why.

    Matches ``cudaOccupancyMaxActiveBlocksPerMultiprocessor`` (with the kernel's
    attributes) exactly.

    Parameters
    ----------
    arch : str, tuple or Architecture
        The compute capability, e.g. ``"sm_90"``, ``"9.0"``, ``(9, 0)``.
    threads_per_block : int
        Threads in one block, 1 to 1024 (from ``resources`` when it fixes one).
    registers_per_thread : int
        Registers per thread as compiled (``cudaFuncAttributes.numRegs``), 0 to 255;
        required unless ``resources`` gives it.
    static_shared_memory : int, optional
        Static (``__shared__``) shared memory per block, bytes; 0 by default.
    dynamic_shared_memory : int, optional
        Dynamic shared memory the launch asks for, bytes; 0 by default.
    max_dynamic_shared_memory : int, optional
        The kernel attribute ``cudaFuncAttributeMaxDynamicSharedMemorySize``, bytes.
        None means the runtime's default of 48 KiB minus ``static_shared_memory``;
        raising it above that is the opt-in. A launch asking for more gets 0 blocks.
    carveout : int, optional
        Preferred shared-memory carveout, percent of the SM's shared memory
        (``cudaFuncAttributePreferredSharedMemoryCarveout``); None for no preference,
        which lets the SM use its largest configuration. Rounded up to a supported
        configuration as the driver does; ignored before Volta.
    block_barriers : int, optional
        Named barriers the kernel uses (``__syncthreads`` is one), 0 to 16; 1 by default.
    max_threads_per_block : int, optional
        The kernel's ``maxThreadsPerBlock`` attribute (``__launch_bounds__``);
        a larger block gets 0 blocks.
    partitioned_global_caching : {"off", "on", "strict"}, optional
        Partitioned global caching (compute capabilities 5.2, 5.3, 6.1, 6.2).
    resources : KernelResources, optional
        The compiled kernel (:func:`occupancy.kernel_resources`): its registers, static
        shared memory, barriers and launch bounds stand in for the loose numbers. A loose
        number that disagrees with it is an error.
    launch : Launch, optional
        The launch as one `occupancy.Launch`, in place of the keywords above from
        ``threads_per_block`` to ``max_threads_per_block`` and ``resources`` (the launch
        carries its own); its registers per thread must be known.

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
        ``launch=`` together with the keywords it replaces.

    Examples
    --------
    >>> import occupancy
    >>> r = occupancy.calculate("sm_80", threads_per_block=512, registers_per_thread=33)
    >>> r.active_blocks_per_sm, r.occupancy, r.limiters
    (3, 0.75, ('registers',))
    """
    loose, resources = resolve(
        "calculate",
        launch,
        resources,
        threads_per_block=threads_per_block,
        registers_per_thread=registers_per_thread,
        static_shared_memory=static_shared_memory,
        dynamic_shared_memory=dynamic_shared_memory,
        block_barriers=block_barriers,
        max_threads_per_block=max_threads_per_block,
        max_dynamic_shared_memory=max_dynamic_shared_memory,
        carveout=carveout,
    )
    carveout = loose.pop("carveout")
    arch = architecture(arch)
    gc = _validate.gc_mode(partitioned_global_caching)
    kernel = merge_resources(arch, resources, LAUNCH_DEFAULTS, **loose)
    v = _validate.launch(
        arch,
        carveout=carveout,
        arrays=False,
        **kernel,
    )
    raw = evaluate(arch, v["t"], v["r"], v["s"], v["d"], v["m"], v["c"], v["b"], v["mt"], gc)
    out = {k: (float(x) if k == "occupancy" else int(x)) for k, x in raw.items()}
    active = out["active_blocks_per_sm"]
    return OccupancyResult(
        arch=arch.name,
        threads_per_block=v["t"],
        registers_per_thread=v["r"],
        static_shared_memory=v["s"],
        dynamic_shared_memory=v["d"],
        max_dynamic_shared_memory=v["m"],
        carveout=None if v["c"] < 0 else v["c"],
        block_barriers=v["b"],
        max_threads_per_block=v["mt"],
        partitioned_global_caching=gc,
        active_blocks_per_sm=active,
        active_warps_per_sm=out["active_warps_per_sm"],
        active_threads_per_sm=out["active_threads_per_sm"],
        occupancy=out["occupancy"],
        warps_per_block=out["warps_per_block"],
        max_warps_per_sm=arch.max_warps_per_sm,
        limiters=limiter_names(out["limiter_mask"]),
        block_limit_registers=_unlimited_to_none(out["block_limit_registers"]),
        block_limit_shared_memory=_unlimited_to_none(out["block_limit_shared_memory"]),
        block_limit_warps=out["block_limit_warps"],
        block_limit_blocks=out["block_limit_blocks"],
        block_limit_barriers=_unlimited_to_none(out["block_limit_barriers"]),
        registers_per_block=out["registers_per_block"],
        shared_memory_per_block=out["shared_memory_per_block"],
        shared_memory_config=out["shared_memory_config"],
        driver=driver_configuration(arch, barriers=v["b"], carveout=v["c"], out=out),
        reason=_reason(arch, v, out) if active == 0 else None,
    )


def _small(value: Any) -> Any:
    """int32 view of a validated array (the lookup tables are int32)."""
    if isinstance(value, np.ndarray) and value.dtype != np.int32:
        return value.astype(np.int32)
    return value


def calculate_many(
    arch: Any,
    *,
    threads_per_block: Any,
    registers_per_thread: Any,
    static_shared_memory: Any = 0,
    dynamic_shared_memory: Any = 0,
    max_dynamic_shared_memory: Any = None,
    carveout: Any = None,
    block_barriers: Any = 1,
    max_threads_per_block: Any = None,
    partitioned_global_caching: str | bool = "off",
) -> OccupancyArrays:
    """:func:`calculate` over numpy arrays, with broadcasting.

    Parameters are those of :func:`calculate`, each a scalar or an array of
    integers; ``carveout`` may hold -1 for "no preference" and
    ``partitioned_global_caching`` is one value for all. Every element equals
    :func:`calculate` on the same values.

    Returns
    -------
    OccupancyArrays

    Raises
    ------
    OccupancyError
        If any element is out of range (the message names the first bad value).

    Examples
    --------
    >>> import numpy as np, occupancy
    >>> r = occupancy.calculate_many("sm_80", threads_per_block=512,
    ...                              registers_per_thread=np.array([32, 33, 64]))
    >>> r.occupancy.tolist()
    [1.0, 0.75, 0.5]
    """
    arch = architecture(arch)
    gc = _validate.gc_mode(partitioned_global_caching)
    v = _validate.launch(
        arch,
        threads_per_block=threads_per_block,
        registers_per_thread=registers_per_thread,
        static_shared_memory=static_shared_memory,
        dynamic_shared_memory=dynamic_shared_memory,
        max_dynamic_shared_memory=max_dynamic_shared_memory,
        carveout=carveout,
        block_barriers=block_barriers,
        max_threads_per_block=max_threads_per_block,
        arrays=True,
    )
    v = {k: _small(x) for k, x in v.items()}
    raw = evaluate(arch, v["t"], v["r"], v["s"], v["d"], v["m"], v["c"], v["b"], v["mt"], gc)
    shape = np.broadcast_shapes(*(np.shape(x) for x in raw.values()))
    return OccupancyArrays(**{k: np.broadcast_to(x, shape) for k, x in raw.items()})
