"""KernelResources: what the compiler gave one kernel, and how a launch takes it."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ._arch import architecture
from ._errors import OccupancyError
from ._sass import SassSummary

__all__ = ["KernelResources", "LOOSE_FIELDS", "merge_resources"]


class KernelResources(BaseModel):
    """The resources one compiled kernel needs, read from its binary, its compiler or the driver.

    Sizes are bytes (``local_memory`` per thread, shared memory per block). A field is
    None where the input does not say; ``sources`` names, for every field that is set,
    where it was read (e.g. ``"cubin .nv.info EIATTR_REGCOUNT"``), and for ``sass`` also
    why it is None when `occupancy.kernel_resources` could not read the SASS.

    Examples
    --------
    >>> import occupancy
    >>> r = occupancy.KernelResources(kernel="saxpy", architecture="sm_90",
    ...                               registers_per_thread=40, static_shared_memory=8192)
    >>> occupancy.calculate("sm_90", threads_per_block=256, resources=r).occupancy
    0.75
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    kernel: str = Field(min_length=1, description="The kernel's symbol name (mangled for C++).")
    architecture: str = Field(description='The SASS architecture it was compiled for, e.g. "sm_90".')
    registers_per_thread: int = Field(ge=0, le=255, description="32-bit registers per thread.")
    static_shared_memory: int = Field(default=0, ge=0, description="__shared__ bytes per block.")
    local_memory: int = Field(
        default=0, ge=0, description="Local memory (stack frame, spills) per thread, bytes."
    )
    spill_store_bytes: int | None = Field(default=None, ge=0, description="Bytes of spill stores.")
    spill_load_bytes: int | None = Field(default=None, ge=0, description="Bytes of spill loads.")
    constant_memory: int | None = Field(
        default=None, ge=0, description="User __constant__ bytes of the module."
    )
    max_threads_per_block: int | None = Field(
        default=None, gt=0,
        description="Largest block the kernel may launch with (__launch_bounds__, .maxntid); "
        "None when unbounded.",
    )
    min_blocks_per_sm: int | None = Field(
        default=None, gt=0, description="__launch_bounds__' second argument (.minnctapersm)."
    )
    block_barriers: int | None = Field(
        default=None, ge=0, le=16, description="Named barriers the kernel uses."
    )
    cluster_dims: tuple[int, int, int] | None = Field(
        default=None, description="Blocks per cluster fixed at compile time (__cluster_dims__)."
    )
    threads_per_block: int | None = Field(
        default=None, gt=0,
        description="The block size the kernel is compiled for and launched with (.reqntid, "
        "Triton's num_warps x 32); None when the launch chooses.",
    )
    dynamic_shared_memory: int | None = Field(
        default=None, ge=0,
        description="Dynamic shared memory its launcher always asks for (Triton's metadata.shared).",
    )
    max_dynamic_shared_memory: int | None = Field(
        default=None, ge=0,
        description="The MAX_DYNAMIC_SHARED_SIZE_BYTES attribute its launcher sets (Triton raises "
        "it to the opt-in limit when metadata.shared exceeds 48 KiB); None for the default.",
    )
    sass: SassSummary | None = Field(
        default=None,
        description="What the kernel's SASS says (instruction counts, loops, global loads in flight), "
        "read with nvdisasm; None where no cubin or no nvdisasm was at hand (``sources['sass']`` says why).",
    )
    sources: dict[str, str] = Field(
        default_factory=dict, description="Field name -> where its value was read."
    )

    def __str__(self) -> str:
        parts = [
            f"{self.registers_per_thread} registers",
            f"{self.static_shared_memory} B static shared memory",
            f"{self.local_memory} B local memory",
        ]
        if self.block_barriers is not None:
            parts.append(f"{self.block_barriers} barriers")
        if self.max_threads_per_block is not None:
            parts.append(f"max {self.max_threads_per_block} threads")
        return f"{self.kernel} ({self.architecture}): " + ", ".join(parts)


# Launch keyword -> the KernelResources field it comes from.
LOOSE_FIELDS = {
    "registers_per_thread": "registers_per_thread",
    "static_shared_memory": "static_shared_memory",
    "max_threads_per_block": "max_threads_per_block",
    "block_barriers": "block_barriers",
    "threads_per_block": "threads_per_block",
    "dynamic_shared_memory": "dynamic_shared_memory",
    "max_dynamic_shared_memory": "max_dynamic_shared_memory",
}


def _check_architecture(arch: Any, resources: KernelResources) -> None:
    """SASS runs on its own major version at the same or a later minor (CUDA's binary compatibility)."""
    target = architecture(arch)
    try:
        built = architecture(resources.architecture)
    except OccupancyError:
        return  # an architecture the tables do not know yet: nothing to compare against
    if built.major != target.major or built.minor > target.minor:
        raise OccupancyError(
            f"resources of kernel {resources.kernel!r} were compiled for {resources.architecture}, "
            f"which cannot run on arch={target.name} (SASS runs on the same major version at the "
            f"same or a later minor)"
        )


def merge_resources(arch: Any, resources: Any, defaults: dict[str, Any], **loose: Any) -> dict[str, Any]:
    """Fill the loose launch numbers from ``resources``.

    Parameters
    ----------
    arch
        The architecture the launch is evaluated on.
    resources : KernelResources or None
        The kernel's resources.
    defaults : dict
        Value of each loose keyword when neither it nor ``resources`` gives one
        (a missing key means the keyword is required).
    **loose
        The keywords as the caller gave them, None where not given.

    Returns
    -------
    dict
        Each keyword of ``loose`` with its value.

    Raises
    ------
    OccupancyError
        When a loose number and ``resources`` disagree (the message names both), or the
        resources were compiled for an architecture that cannot run on ``arch``.
    TypeError
        When ``resources`` is not a KernelResources, or a required number is missing.
    """
    out = dict(loose)
    if resources is not None:
        if not isinstance(resources, KernelResources):
            raise TypeError(
                f"resources must be an occupancy.KernelResources, not {type(resources).__name__}"
            )
        _check_architecture(arch, resources)
        for name, value in loose.items():
            field = LOOSE_FIELDS.get(name)
            known = None if field is None else getattr(resources, field)
            if known is None:
                continue
            if value is None:
                out[name] = known
            elif not callable(value) and value != known:
                raise OccupancyError(
                    f"{name}={value!r} disagrees with resources.{field}={known!r} of kernel "
                    f"{resources.kernel!r} ({resources.architecture}); give one or the other"
                )
    for name, value in out.items():
        if value is None:
            if name not in defaults:
                raise TypeError(f"{name} is required (give it, or resources=)")
            out[name] = defaults[name]
    return out
