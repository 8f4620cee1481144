"""The records of an Nsight Compute profile: `NcuKernel` per profiled launch, `NcuProfile`, kernel names."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from occupancy import SassSummary
from occupancy.common import base_name

from ._errors import RooflineError
from ._profile_counts import ProfileCounts

__all__ = ["NCU_SECTIONS", "NcuKernel", "NcuProfile", "short_kernel_name"]

_FROZEN = ConfigDict(frozen=True, extra="forbid")

#: The sections gpuroof reads, as ``--section`` arguments of ``ncu``.
NCU_SECTIONS: tuple[str, ...] = (
    "SpeedOfLight",
    "SpeedOfLight_HierarchicalDoubleRooflineChart",
    "SpeedOfLight_HierarchicalHalfRooflineChart",
    "SpeedOfLight_HierarchicalSingleRooflineChart",
    "SpeedOfLight_HierarchicalTensorRooflineChart",
    "MemoryWorkloadAnalysis",
    "LaunchStats",
    "Occupancy",
)


def _strip_groups(text: str, opening: str, closing: str) -> str:
    """Drop every balanced ``opening ... closing`` group (template arguments, parameters)."""
    out, depth = [], 0
    for char in text:
        if char == opening:
            depth += 1
        elif char == closing and depth:
            depth -= 1
        elif depth == 0:
            out.append(char)
    return "".join(out)


def short_kernel_name(name: str) -> str:
    """A kernel's short name: no return type, namespaces, template arguments or parameters.

    Parameters
    ----------
    name : str
        As Nsight Compute prints it (demangled, or mangled with ``--print-kernel-base mangled``).

    Returns
    -------
    str

    Examples
    --------
    >>> short_kernel_name("void at::native::reduce_kernel<512, 1, at::native::R<float>>(T3)")
    'reduce_kernel'
    >>> short_kernel_name("void at::<unnamed>::vectorized_layer_norm_kernel<float, float>(int, T2)")
    'vectorized_layer_norm_kernel'
    >>> short_kernel_name("_ZN7pytorch5flash16flash_fwd_kernelI6TraitsEEvT_")
    'flash_fwd_kernel'
    """
    text = name.strip()
    if text.startswith("_Z"):
        return base_name(text)
    cleaned = text.replace("<unnamed>", "").replace("(anonymous namespace)", "")
    cleaned = _strip_groups(_strip_groups(cleaned, "<", ">"), "(", ")").strip()
    if cleaned.startswith("void "):
        cleaned = cleaned[5:]
    last = cleaned.split()[-1] if cleaned.split() else cleaned
    short = last.split("::")[-1]
    return short or text


# ---------------------------------------------------------------------------------------
# records


class NcuKernel(BaseModel):
    """One profiled kernel launch, in SI units (bytes, seconds, hertz, flops, fractions).

    ``flops`` holds operations by `roofline.PRECISIONS` name for every precision whose
    roofline section was collected (zeros included). A field the profile does not hold is
    None, and ``missing`` maps it to the ``ncu --section`` that would supply it.
    The launch and the roofline's figures (flops, bytes per level) are fields; the other
    counts the profile measured are one `roofline.ProfileCounts`, ``measured``.
    """

    model_config = _FROZEN

    id: int = Field(description="Nsight's launch ID in the profile.")
    name: str = Field(description="Short kernel name (short_kernel_name).")
    demangled_name: str = Field(description="The kernel's name as the profile prints it: demangled by default, "
                                            "mangled or the function's name alone with ncu --print-kernel-base.")
    mangled_name: str | None = Field(
        default=None, description="The kernel's symbol where the profile holds it: a .ncu-rep always, a CSV exported "
                                  "with --print-kernel-base mangled.")
    nvtx_range: str | None = Field(default=None, description="Enclosing NVTX ranges, outer/inner.")
    device_name: str | None = None
    arch: str | None = Field(default=None, description='Compute capability as "sm_90".')
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    cluster: tuple[int, int, int] | None = None
    registers_per_thread: int | None = None
    static_shared_memory: int | None = Field(default=None, description="Bytes per block.")
    dynamic_shared_memory: int | None = Field(default=None, description="Bytes per block.")
    driver_shared_memory: int | None = Field(default=None, description="Bytes the driver reserves per block.")
    shared_memory_config: int | None = Field(
        default=None, description="Bytes of shared memory per SM in the configuration the driver chose.")
    block_barriers: int | None = None
    sm_count: int | None = None
    flops: dict[str, float] = Field(default_factory=dict)
    dram_bytes: float | None = None
    l2_bytes: float | None = Field(default=None, description="L2 to SM bytes (Nsight's L2 roofline).")
    l1_bytes: float | None = Field(default=None, description="L1 load/store writeback bytes (Nsight's L1 roofline).")
    measured: ProfileCounts = Field(
        default_factory=ProfileCounts, description="What the profile measured beyond the launch and its roofline "
                                                   "figures (duration, clocks, hit rates, wavefronts, ...).")
    sass: SassSummary | None = Field(
        default=None, description="The kernel's SASS summary (from the report's source page or a binary), as "
                                  "occupancy.kernel_resources gives it on the source path.")
    sass_source: str | None = Field(default=None, description="Where the SASS was read, or why there is none.")
    missing: dict[str, str] = Field(default_factory=dict)

    @property
    def label(self) -> str:
        """Short name with the innermost NVTX range, e.g. ``flash_fwd_kernel [attention]``."""
        if self.nvtx_range:
            return f"{self.name} [{self.nvtx_range.split('/')[-1]}]"
        return self.name

    @property
    def threads_per_block(self) -> int:
        """Threads in one block."""
        return self.block[0] * self.block[1] * self.block[2]

    @property
    def blocks(self) -> int:
        """Blocks in the grid."""
        return self.grid[0] * self.grid[1] * self.grid[2]

    @property
    def total_flops(self) -> float | None:
        """Flops over every precision collected (None when no roofline section was)."""
        return sum(self.flops.values()) if self.flops else None

    @property
    def precision(self) -> str | None:
        """The precision with the most flops (None without flops)."""
        busy = {p: f for p, f in self.flops.items() if f > 0}
        return max(busy, key=lambda p: busy[p]) if busy else None


class NcuProfile(BaseModel):
    """Every kernel of one Nsight Compute profile, in the profile's order."""

    model_config = _FROZEN

    path: str
    format: Literal["csv", "ncu-rep"]
    kernels: tuple[NcuKernel, ...]
    checks: tuple[str, ...] = Field(
        default=(), description="What load_ncu cross-checked and what it assumed (kernel IDs, units, a possible cut).")

    def matching(self, pattern: str) -> NcuProfile:
        """The kernels whose name, demangled name or NVTX range matches a regular expression.

        Raises
        ------
        RooflineError
            For an invalid expression, or one that matches no kernel (the message lists them).
        """
        if not isinstance(pattern, str):
            raise TypeError(f"pattern must be a str (a regular expression), not {type(pattern).__name__}")
        try:
            regex = re.compile(pattern)
        except re.error as exc:
            raise RooflineError(f"kernel pattern {pattern!r} is not a regular expression: {exc}") from None
        chosen = tuple(k for k in self.kernels
                       if regex.search(k.name) or regex.search(k.demangled_name) or regex.search(k.nvtx_range or ""))
        if not chosen:
            names = ", ".join(sorted({k.name for k in self.kernels}))
            raise RooflineError(f"kernel pattern {pattern!r} matches no kernel of {self.path}; kernels: {names}")
        return self.model_copy(update={"kernels": chosen})

