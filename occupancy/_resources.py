"""KernelResources: what the compiler gave one kernel, and on which architectures it runs."""

from __future__ import annotations

from pydantic import ConfigDict, Field

from ._arch import Architecture, architecture
from ._errors import OccupancyError
from ._real_numbers import RealNumbers
from ._sass import SassSummary

__all__ = ["KernelResources", "check_architecture"]


class KernelResources(RealNumbers):
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

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    kernel: str = Field(min_length=1, description="The kernel's symbol name (mangled for C++).")
    demangled: str | None = Field(
        default=None, description="The C++ name of a mangled symbol (``softmax<256>(float*)``); None "
        "for an extern \"C\" kernel or where no demangler was found.",
    )
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
    warp_group_registers: tuple[int, ...] | None = Field(
        default=None,
        description="Registers per thread that the kernel's warp groups switch to with setmaxnreg "
        "(warp-specialised kernels: .dec below the launch's count for producers, .inc above it for "
        "consumers), in increasing order; None when the kernel keeps its launch's count. "
        "registers_per_thread stays the launch's count, the one occupancy uses.",
    )
    sass: SassSummary | None = Field(
        default=None,
        description="What the kernel's SASS says (instruction counts, loops, global loads in flight), "
        "read with nvdisasm; None where no cubin or no nvdisasm was at hand (``sources['sass']`` says why).",
    )
    compiler: str | None = Field(
        default=None, description='The compiler and version that made the cubin, e.g. "nvcc 13.0", '
        '"NVRTC 13.0", "ptxas 13.0"; None for a binary read as given.',
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
        if self.warp_group_registers:
            parts[0] += (" at launch (warp groups switch to "
                         + "/".join(str(n) for n in self.warp_group_registers) + " with setmaxnreg)")
        if self.block_barriers is not None:
            parts.append(f"{self.block_barriers} barriers")
        if self.max_threads_per_block is not None:
            parts.append(f"max {self.max_threads_per_block} threads")
        return f"{self.demangled or self.kernel} ({self.architecture}): " + ", ".join(parts)


def check_architecture(arch: Architecture, resources: KernelResources) -> None:
    """Refuse resources whose SASS cannot run on ``arch``: SASS runs on its own major version
    at the same or a later minor (CUDA's binary compatibility)."""
    try:
        built = architecture(resources.architecture)
    except OccupancyError:
        return  # an architecture the tables do not know yet: nothing to compare against
    if built.major != arch.major or built.minor > arch.minor:
        raise OccupancyError(
            f"resources of kernel {resources.kernel!r} were compiled for {resources.architecture}, "
            f"which cannot run on arch={arch.name} (SASS runs on the same major version at the "
            f"same or a later minor)"
        )
