"""Launch: one kernel launch, described once, for `occupancy` and `roofline` alike."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from . import _validate
from ._arch import MAX_BLOCK_DIMS, MAX_GRID_DIMS
from ._errors import OccupancyError
from ._resources import KernelResources
from ._rules import MAX_BARRIERS_PER_BLOCK

__all__ = ["Launch", "resolve"]

# CUDA's launch limits, the same on every compute capability from 5.0 on: one table, in _arch.
MAX_GRID = MAX_GRID_DIMS
MAX_BLOCK = MAX_BLOCK_DIMS
MAX_THREADS_PER_BLOCK = 1024
MAX_REGISTERS_PER_THREAD = 255
# Thread-block clusters (compute capability 9.0+): 8 blocks is the portable maximum;
# 16 needs cudaFuncAttributeNonPortableClusterSizeAllowed (CUDA C++ Programming Guide,
# "Thread Block Clusters").
MAX_CLUSTER_BLOCKS = 16
PORTABLE_CLUSTER_BLOCKS = 8

def _dims(name: str, value: Any, limits: Sequence[int]) -> tuple[int, int, int]:
    """An int or a 1-3 sequence of ints as a (x, y, z) triple, each in 1..limit."""
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
        if part > limit:
            raise OccupancyError(f"{name}.{axis}={part} exceeds the maximum of {limit}")
        out.append(part)
    return (*out, *([1] * (3 - len(out))))  # type: ignore[return-value]


def _count(name: str, value: Any, low: int, high: int | None = None) -> int:
    number = _validate.integer(name, value)
    _validate.check_range(name, number, low, high)
    return number


def _optional(name: str, value: Any, low: int, high: int | None = None) -> int | None:
    return None if value is None else _count(name, value, low, high)


def _from_resources(resources: Any) -> dict[str, Any]:
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


def _normalise(data: dict[str, Any]) -> dict[str, Any]:
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
            fixed["cluster"] = _dims("resources.cluster_dims", fixed["cluster"], (MAX_CLUSTER_BLOCKS,) * 3)
            if data.get("cluster") is not None:
                data = {**data, "cluster": _dims("cluster", data["cluster"], (MAX_CLUSTER_BLOCKS,) * 3)}
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
    out["grid"] = _dims("grid", data["grid"], MAX_GRID)
    out["block"] = block = _dims("block", data["block"], MAX_BLOCK)
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
        out["cluster"] = cluster = _dims("cluster", out["cluster"], (MAX_CLUSTER_BLOCKS,) * 3)
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


class Launch(BaseModel):
    """One kernel launch: grid, block, cluster, the kernel's resources and what each thread does.

    The one launch description of gpuroof: `occupancy.calculate`, `occupancy.cliffs`,
    `occupancy.max_potential_block_size` and `occupancy.plot_occupancy` take it as
    ``launch=``, and `roofline.Kernel` carries one for `roofline.predict`. As cuda.core's
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
        Elements each thread handles (independent accesses of the same kind), >= 1.
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

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)

    grid: tuple[int, int, int] = Field(description="gridDim (x, y, z) in blocks.")
    block: tuple[int, int, int] = Field(description="blockDim (x, y, z) in threads.")
    cluster: tuple[int, int, int] | None = Field(default=None, description="Cluster dims in blocks.")
    resources: Any = Field(default=None, exclude=True, description="The kernel's KernelResources.")
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

    @model_validator(mode="before")
    @classmethod
    def _check(cls, data: Any) -> Any:
        if not isinstance(data, Mapping):
            raise TypeError(f"Launch fields must come as a mapping, not {type(data).__name__}")
        return _normalise(dict(data))

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            # Our own checks raise OccupancyError inside pydantic: give it back unwrapped.
            error = (exc.errors()[0].get("ctx") or {}).get("error")
            if isinstance(error, OccupancyError):
                raise error from None
            raise OccupancyError(f"Launch: {exc.errors()[0]['msg']}") from None

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Launch:
        """A copy with ``update`` applied and checked like a new `Launch`.

        Changing one of the numbers that ``resources`` supplies detaches the copy from
        those resources (the copy describes a different kernel).

        Examples
        --------
        >>> import occupancy
        >>> occupancy.Launch(grid=8, block=256).model_copy(update={"block": 128}).block
        (128, 1, 1)
        """
        if not update:
            return super().model_copy(deep=deep)
        data = {name: getattr(self, name) for name in type(self).model_fields}
        sass = getattr(self.resources, "sass", None)
        if ("resources" in update and "loads_in_flight_per_thread" not in update and sass is not None
                and self.loads_in_flight_per_thread == sass.global_loads_in_flight_per_thread):
            data["loads_in_flight_per_thread"] = None  # the new resources' SASS says
        if self.resources is not None:
            supplied = {name for name, value in _from_resources(self.resources).items() if value is not None}
            if set(update) & supplied:
                data["resources"] = None
        data.update(update)
        return type(self)(**data)

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

    def occupancy_keywords(self, *, assumed_registers_per_thread: int | None = None) -> dict[str, Any]:
        """The keywords of `occupancy.calculate` (and `cliffs`, `plot_occupancy`) for this launch.

        Parameters
        ----------
        assumed_registers_per_thread : int, optional
            Registers per thread to use when the launch does not know them.

        Returns
        -------
        dict
            ``threads_per_block``, ``registers_per_thread``, ``static_shared_memory``,
            ``dynamic_shared_memory``, ``max_dynamic_shared_memory``, ``carveout``,
            ``block_barriers`` and ``max_threads_per_block``.

        Raises
        ------
        OccupancyError
            If registers per thread are unknown and no assumption is given.

        Examples
        --------
        >>> import occupancy
        >>> occupancy.Launch(grid=1, block=(16, 16), registers_per_thread=32).occupancy_keywords()["threads_per_block"]
        256
        """
        registers = self.registers_per_thread
        if registers is None:
            if assumed_registers_per_thread is None:
                raise OccupancyError(
                    "registers_per_thread is not known (None): give registers_per_thread= or resources= "
                    "to the Launch"
                )
            registers = assumed_registers_per_thread
        return {
            "threads_per_block": self.threads_per_block,
            "registers_per_thread": registers,
            "static_shared_memory": self.static_shared_memory,
            "dynamic_shared_memory": self.dynamic_shared_memory,
            "max_dynamic_shared_memory": self.max_dynamic_shared_memory,
            "carveout": self.carveout,
            "block_barriers": self.block_barriers,
            "max_threads_per_block": self.max_threads_per_block,
        }


def resolve(function: str, launch: Any, resources: Any, **loose: Any) -> tuple[dict[str, Any], Any]:
    """The loose keywords of ``function`` and its resources, from ``launch=`` or as given.

    ``loose`` holds the keywords as passed (None where not given). With a launch, every
    one of them comes from it (none may be given as well), and so do the resources.
    """
    if launch is None:
        return loose, resources
    if not isinstance(launch, Launch):
        raise TypeError(f"launch must be an occupancy.Launch, not {type(launch).__name__}")
    if resources is not None:
        raise TypeError(f"{function}() takes launch= or resources=, not both (give the resources to the Launch)")
    given = [k for k, v in loose.items() if v is not None]
    if given:
        raise TypeError(f"{function}() takes launch= or {given[0]}=, not both")
    keywords = launch.occupancy_keywords()
    return {k: keywords[k] for k in loose}, launch.resources
