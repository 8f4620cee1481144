"""Launch: one kernel launch, described once, for `occupancy` and `roofline` alike."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike
from pydantic import ConfigDict, Field

from ._arch import MAX_BARRIERS_PER_BLOCK, MAX_BLOCK_DIMS, MAX_GRID_DIMS, Architecture
from ._checks import check_range, integer
from ._errors import OccupancyError
from ._resources import KernelResources
from .common import CheckedModel

__all__ = ["Launch", "dims", "launch_of"]

# CUDA's launch limits, the same on every compute capability from 5.0 on (with _arch's
# MAX_GRID_DIMS and MAX_BLOCK_DIMS).
MAX_THREADS_PER_BLOCK = 1024
MAX_REGISTERS_PER_THREAD = 255
# Thread-block clusters (compute capability 9.0+): 8 blocks is the portable maximum;
# 16 needs cudaFuncAttributeNonPortableClusterSizeAllowed (CUDA C++ Programming Guide,
# "Thread Block Clusters").
MAX_CLUSTER_BLOCKS = 16
PORTABLE_CLUSTER_BLOCKS = 8

def dims(name: str, value: ArrayLike, limits: Sequence[int | None] = (None, None, None)) -> tuple[int, int, int]:
    """An int or a 1-3 sequence of ints as a (x, y, z) triple, each from 1 to its limit (None: no limit).

    The one normaliser of grid, block and cluster dimensions.
    """
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be an int or a tuple of 1 to 3 ints, not bool")
    if isinstance(value, (str, bytes)) or not isinstance(value, (int, np.integer, Sequence, np.ndarray)):
        raise TypeError(f"{name} must be an int or a tuple of 1 to 3 ints, not {type(value).__name__}")
    parts = [value] if isinstance(value, (int, np.integer)) else list(np.asarray(value, dtype=object).ravel())
    if not 1 <= len(parts) <= 3:
        raise OccupancyError(f"{name}={tuple(parts)!r} must have 1 to 3 dimensions")
    out = []
    for axis, (part, limit) in zip("xyz", zip(parts, limits)):
        if isinstance(part, (bool, np.bool_)) or not isinstance(part, (int, np.integer)):
            raise TypeError(f"{name}.{axis} must be an int, not {type(part).__name__}")
        part = int(part)
        if part < 1:
            raise OccupancyError(f"{name}.{axis}={part} is below the minimum of 1")
        if limit is not None and part > limit:
            raise OccupancyError(f"{name}.{axis}={part} exceeds the maximum of {limit}")
        out.append(part)
    return (*out, *([1] * (3 - len(out))))  # type: ignore[return-value]


def _count(name: str, value: object, low: int, high: int | None = None) -> int:
    number = integer(name, value)
    check_range(name, number, low, high)
    return number


def _optional(name: str, value: object, low: int, high: int | None = None) -> int | None:
    return None if value is None else _count(name, value, low, high)


def _from_resources(resources: object) -> dict[str, int | tuple[int, int, int] | None]:
    """The launch fields a `KernelResources` fixes (None where it does not say)."""
    if not isinstance(resources, KernelResources):
        raise TypeError(f"resources must be an occupancy.KernelResources, not {type(resources).__name__}")
    return {
        "registers_per_thread": resources.registers_per_thread,
        "static_shared_memory": resources.static_shared_memory,
        "block_barriers": resources.block_barriers,
        "max_threads_per_block": resources.max_threads_per_block,
        "dynamic_shared_memory": resources.dynamic_shared_memory,
        "max_dynamic_shared_memory": resources.max_dynamic_shared_memory,
        "cluster": resources.cluster_dims,
    }


def _normalise(data: dict[str, object]) -> dict[str, object]:
    """Check and normalise the inputs of a `Launch` (raises OccupancyError or TypeError)."""
    unknown = sorted(set(data) - set(Launch.model_fields))
    if unknown:
        raise TypeError(
            f"Launch got an unexpected field {unknown[0]!r}; fields: {', '.join(Launch.model_fields)}"
        )
    for required in ("grid", "block"):
        if data.get(required) is None:
            raise TypeError(f"Launch needs {required}= (an int or a tuple of 1 to 3 ints)")
    out = dict(data)
    resources = data.get("resources")
    if resources is not None:
        fixed = _from_resources(resources)
        if fixed["cluster"] is not None:
            fixed["cluster"] = dims("resources.cluster_dims", fixed["cluster"], (MAX_CLUSTER_BLOCKS,) * 3)
            if data.get("cluster") is not None:
                data = {**data, "cluster": dims("cluster", data["cluster"], (MAX_CLUSTER_BLOCKS,) * 3)}
        for name, value in fixed.items():
            given = data.get(name)
            if given is not None and value is not None and given != value:
                raise OccupancyError(
                    f"{name}={given!r} disagrees with resources.{'cluster_dims' if name == 'cluster' else name}"
                    f"={value!r} of kernel {resources.kernel!r}; give the kernel's resources or the loose "
                    "value, not both"
                )
            if value is not None:
                out[name] = value
        # unlike the numbers above, loads in flight are a count the caller may know better
        # (the SASS counts instructions, not the accesses of the model): a given value wins
        sass = resources.sass
        if data.get("loads_in_flight_per_thread") is None and sass is not None:
            out["loads_in_flight_per_thread"] = sass.global_loads_in_flight_per_thread or None
    out["grid"] = dims("grid", data["grid"], MAX_GRID_DIMS)
    out["block"] = block = dims("block", data["block"], MAX_BLOCK_DIMS)
    threads = math.prod(block)
    if threads > MAX_THREADS_PER_BLOCK:
        raise OccupancyError(
            f"block={block} has {threads} threads; the maximum is {MAX_THREADS_PER_BLOCK} threads per block"
        )
    fixed_threads = getattr(resources, "threads_per_block", None)
    if fixed_threads is not None and threads != fixed_threads:
        raise OccupancyError(
            f"block={block} has {threads} threads, but kernel {resources.kernel!r} is launched with "
            f"resources.threads_per_block={fixed_threads}"
        )
    if out.get("cluster") is not None:
        out["cluster"] = cluster = dims("cluster", out["cluster"], (MAX_CLUSTER_BLOCKS,) * 3)
        size = math.prod(cluster)
        if size > MAX_CLUSTER_BLOCKS:
            raise OccupancyError(
                f"cluster={cluster} has {size} blocks; the maximum is {MAX_CLUSTER_BLOCKS} "
                f"({PORTABLE_CLUSTER_BLOCKS} without the non-portable cluster size attribute)"
            )
        for axis, g, c in zip("xyz", out["grid"], cluster):
            if g % c:
                raise OccupancyError(f"grid.{axis}={g} is not a multiple of cluster.{axis}={c}")
    out["registers_per_thread"] = _optional(
        "registers_per_thread", out.get("registers_per_thread"), 0, MAX_REGISTERS_PER_THREAD
    )
    out["static_shared_memory"] = _count("static_shared_memory", out.get("static_shared_memory", 0), 0)
    out["block_barriers"] = _count("block_barriers", out.get("block_barriers", 1), 0, MAX_BARRIERS_PER_BLOCK)
    out["max_threads_per_block"] = _optional(
        "max_threads_per_block", out.get("max_threads_per_block"), 1, MAX_THREADS_PER_BLOCK
    )
    out["dynamic_shared_memory"] = _count("dynamic_shared_memory", out.get("dynamic_shared_memory", 0), 0)
    out["max_dynamic_shared_memory"] = _optional("max_dynamic_shared_memory", out.get("max_dynamic_shared_memory"), 0)
    out["carveout"] = _optional("carveout", out.get("carveout"), 0, 100)
    out["elements_per_thread"] = _count("elements_per_thread", out.get("elements_per_thread", 1), 1)
    out["loads_in_flight_per_thread"] = _optional(
        "loads_in_flight_per_thread", out.get("loads_in_flight_per_thread"), 1
    )
    return out


class Launch(CheckedModel):
    """One kernel launch: grid, block, cluster, the kernel's resources and what each thread does.

    The one launch description of gpuroof: every occupancy function (`occupancy.calculate`,
    `cliffs`, `plot_occupancy`, `max_potential_block_size`, `available_dynamic_shared_memory`,
    `max_active_clusters`, `max_potential_cluster_size`) takes it as its second argument,
    ``launch=``, or builds one from these fields given as loose keywords (with
    ``threads_per_block`` for a one-dimensional ``block``; ``grid`` then defaults to one
    cluster); `roofline.Kernel` carries one for `roofline.predict`. As cuda.core's
    ``LaunchConfig``, ``grid``, ``block`` and ``cluster`` take an int or a tuple of 1 to 3
    ints and are stored as (x, y, z) triples. Every input is checked against CUDA's launch
    limits once, at construction; the per-architecture limits (shared memory, registers
    per block) are checked where an architecture is known, by `occupancy.calculate`.

    Attributes
    ----------
    grid : tuple of int
        ``gridDim`` in blocks: x up to 2**31 - 1, y and z up to 65535.
    block : tuple of int
        ``blockDim`` in threads: x and y up to 1024, z up to 64, at most 1024 threads.
    cluster : tuple of int or None
        Thread-block cluster dimensions in blocks (compute capability 9.0+): at most 16
        blocks (8 are portable; more need the non-portable cluster size attribute), and
        each grid dimension a multiple of the cluster's. None: no clusters.
    resources : occupancy.KernelResources or None
        What the compiler gave the kernel (`occupancy.kernel_resources`). It fills the
        fields below that it knows (registers, static shared memory, barriers, launch
        bounds; the dynamic shared memory a framework's launcher fixes) and a fixed cluster
        shape, and a block size it fixes must be the block's; a loose value given as well
        must agree with it. Its SASS summary, when read, gives ``loads_in_flight_per_thread``
        unless the caller gives one. Not serialised: a dumped launch carries the numbers.
    registers_per_thread : int or None
        Registers per thread as compiled, 0 to 255; None while unknown (before compiling).
    static_shared_memory : int
        ``__shared__`` bytes per block.
    block_barriers : int
        Named barriers the kernel uses (``__syncthreads`` is one), 0 to 16.
    max_threads_per_block : int or None
        The kernel's ``__launch_bounds__`` / ``.maxntid`` maximum; None when unset.
    dynamic_shared_memory : int
        Dynamic shared memory the launch asks for, bytes.
    max_dynamic_shared_memory : int or None
        The kernel attribute ``cudaFuncAttributeMaxDynamicSharedMemorySize``, bytes; None
        is the runtime's default (48 KiB minus static), which a launch asking for more
        dynamic shared memory than that cannot run with.
    carveout : int or None
        Preferred shared-memory carveout, percent 0 to 100; None for no preference.
    elements_per_thread : int
        Elements each thread handles (independent accesses of the same kind), >= 1: one global
        load each, as `roofline.predict` counts a thread's round trips (and, where the
        kernel gives no ``load_bytes``, the trips of its SASS's hot loop).
    loads_in_flight_per_thread : int or None
        How many of them a thread keeps outstanding at once; None: all of them. With
        ``resources`` whose SASS was read and none given, the SASS's count
        (``resources.sass.global_loads_in_flight_per_thread``).

    Examples
    --------
    >>> import occupancy
    >>> launch = occupancy.Launch(grid=4096, block=256, registers_per_thread=40)
    >>> launch.grid, launch.block, launch.threads
    ((4096, 1, 1), (256, 1, 1), 1048576)
    >>> occupancy.calculate("sm_90", launch=launch).occupancy
    0.75
    """

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True, arbitrary_types_allowed=True)

    grid: tuple[int, int, int] = Field(description="gridDim (x, y, z) in blocks.")
    block: tuple[int, int, int] = Field(description="blockDim (x, y, z) in threads.")
    cluster: tuple[int, int, int] | None = Field(default=None, description="Cluster dims in blocks.")
    resources: KernelResources | None = Field(default=None, exclude=True, description="The kernel's KernelResources.")
    registers_per_thread: int | None = Field(default=None, description="Registers per thread; None: unknown.")
    static_shared_memory: int = Field(default=0, description="__shared__ bytes per block.")
    block_barriers: int = Field(default=1, description="Named barriers the kernel uses.")
    max_threads_per_block: int | None = Field(default=None, description="__launch_bounds__ maximum.")
    dynamic_shared_memory: int = Field(default=0, description="Dynamic shared bytes per block.")
    max_dynamic_shared_memory: int | None = Field(
        default=None, description="cudaFuncAttributeMaxDynamicSharedMemorySize; None: the default."
    )
    carveout: int | None = Field(default=None, description="Preferred carveout, percent.")
    elements_per_thread: int = Field(default=1, description="Elements each thread handles.")
    loads_in_flight_per_thread: int | None = Field(
        default=None, description="Accesses a thread keeps outstanding; None: all of them."
    )

    error: ClassVar[type[Exception]] = OccupancyError

    @classmethod
    def normalise(cls, data: dict[str, Any]) -> dict[str, Any]:
        return _normalise(data)

    def copy_fields(self, update: Mapping[str, Any]) -> dict[str, Any]:
        """The fields a copy (`model_copy(update=...)`) starts from.

        Changing one of the numbers that ``resources`` supplies detaches the copy from
        those resources (the copy describes a different kernel).

        Examples
        --------
        >>> import occupancy
        >>> occupancy.Launch(grid=8, block=256).model_copy(update={"block": 128}).block
        (128, 1, 1)
        """
        data = super().copy_fields(update)
        sass = getattr(self.resources, "sass", None)
        if ("resources" in update and "loads_in_flight_per_thread" not in update and sass is not None
                and self.loads_in_flight_per_thread == sass.global_loads_in_flight_per_thread):
            data["loads_in_flight_per_thread"] = None  # the new resources' SASS says
        if self.resources is not None:
            supplied = {name for name, value in _from_resources(self.resources).items() if value is not None}
            if set(update) & supplied:
                data["resources"] = None
        return data

    @property
    def threads_per_block(self) -> int:
        """Threads in one block."""
        return math.prod(self.block)

    @property
    def blocks(self) -> int:
        """Blocks in the grid."""
        return math.prod(self.grid)

    @property
    def threads(self) -> int:
        """Threads in the grid."""
        return self.blocks * self.threads_per_block

    @property
    def cluster_size(self) -> int:
        """Blocks per cluster (1 without clusters)."""
        return 1 if self.cluster is None else math.prod(self.cluster)

    def assuming_registers(self, registers_per_thread: int) -> Launch:
        """This launch, with ``registers_per_thread`` where it does not know its own.

        For a model of a kernel not compiled yet: occupancy needs a register count.

        Examples
        --------
        >>> import occupancy
        >>> occupancy.Launch(grid=1, block=256).assuming_registers(32).registers_per_thread
        32
        >>> occupancy.Launch(grid=1, block=256, registers_per_thread=40).assuming_registers(32).registers_per_thread
        40
        """
        if self.registers_per_thread is not None:
            return self
        return self.model_copy(update={"registers_per_thread": registers_per_thread})


def launch_of(
    function: str,
    launch: Launch | None,
    fields: Mapping[str, object],
    arch: Architecture | None = None,
    *,
    searched: bool = False,
) -> Launch:
    """The one `Launch` of a call to a public function: ``launch`` as given, or one built from
    the loose keywords ``fields``.

    ``fields`` are `Launch` fields, with ``threads_per_block`` for a one-dimensional block; a
    None value counts as not given. ``grid`` defaults to one cluster (or one block), ``block``
    to the block size that ``resources`` fix; ``registers_per_thread`` and the block size are
    required (``searched``: the function searches the block size, so none is given and the
    launch's is a placeholder). ``arch``, when known, names itself in the block-size message.

    Raises
    ------
    TypeError
        For ``launch`` with loose keywords as well, an unknown keyword, a missing required
        number, or a value of the wrong type.
    OccupancyError
        For a value out of CUDA's launch limits or one that disagrees with ``resources``.
    """
    if launch is not None:
        if not isinstance(launch, Launch):
            raise TypeError(f"launch must be an occupancy.Launch, not {type(launch).__name__}")
        given = [name for name, value in fields.items() if value is not None]
        if given:
            raise TypeError(f"{function}() takes launch= or {given[0]}=, not both")
        return launch
    unknown = sorted(set(fields) - set(Launch.model_fields) - {"threads_per_block"})
    if unknown:
        raise TypeError(f"{function}() got an unexpected keyword argument {unknown[0]!r}")
    data = {name: value for name, value in fields.items() if value is not None}
    resources = data.get("resources")
    if resources is not None and not isinstance(resources, KernelResources):
        raise TypeError(f"resources must be an occupancy.KernelResources, not {type(resources).__name__}")
    fixed = None if resources is None else resources.threads_per_block
    if searched and ("threads_per_block" in data or "block" in data):
        raise TypeError(f"{function}() searches the block size: give no threads_per_block= or block=")
    if "threads_per_block" in data:
        if "block" in data:
            raise TypeError(f"{function}() takes block= or threads_per_block=, not both")
        threads = integer("threads_per_block", data.pop("threads_per_block"))
        check_range("threads_per_block", threads, 1, MAX_THREADS_PER_BLOCK, arch)
        data["block"] = threads
    elif "block" not in data:
        if fixed is None and not searched:
            raise TypeError("threads_per_block is required (give it, or resources= that fix it)")
        data["block"] = fixed or 1
    if data.get("registers_per_thread") is None and resources is None:
        raise TypeError("registers_per_thread is required (give it, or resources=)")
    data.setdefault("grid", data.get("cluster") or (resources and resources.cluster_dims) or 1)
    return Launch(**data)
