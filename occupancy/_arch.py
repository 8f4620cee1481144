"""Architecture rules: one frozen model per compute capability, packaged as TOML."""

from __future__ import annotations

import difflib
import functools
import os
import re
import tomllib
from importlib import resources

from pydantic import ConfigDict, Field, ValidationError, model_validator

from ._errors import OccupancyError
from ._real_numbers import RealNumbers
from .common import as_path, pydantic_error, read_json, read_toml

__all__ = [
    "Architecture",
    "ArchitectureLike",
    "MAX_BARRIERS_PER_BLOCK",
    "MAX_BLOCK_DIMS",
    "MAX_GRID_DIMS",
    "architecture",
    "architectures",
    "load_architecture",
]

# CUDA C++ Programming Guide, "Technical Specifications per Compute Capability": the same
# for every compute capability from 5.0 to 12.x (grid y and z, block z, 1024 threads).
MAX_GRID_DIMS = (2**31 - 1, 65535, 65535)
"""Blocks a grid may have in x, y and z."""

MAX_BLOCK_DIMS = (1024, 1024, 64)
"""Threads a block may have in x, y and z (and at most ``max_threads_per_block`` in all)."""

MAX_BARRIERS_PER_BLOCK = 16
"""Named barriers a block may use (``bar.sync`` ids 0-15)."""


class Architecture(RealNumbers):
    """The occupancy rules of one compute capability.

    Device properties (the figures ``cudaGetDeviceProperties`` reports) and the
    allocation rules the CUDA runtime applies to them. Sizes are in bytes,
    registers are 32-bit registers.

    Examples
    --------
    >>> import occupancy
    >>> arch = occupancy.architecture("sm_90")
    >>> arch.max_warps_per_sm, arch.max_shared_memory_per_block_optin
    (64, 232448)
    """

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    name: str = Field(description='Canonical name, e.g. "sm_90".')
    compute_capability: str = Field(description='"major.minor", e.g. "9.0".')
    family: str = Field(default="", description='Architecture family, e.g. "Hopper".')
    chips: str = Field(default="", description="Chips with this compute capability.")
    # Upper bounds keep the lookup tables (one entry per register count, warp and
    # allocation unit) small and their int32 arithmetic exact: a custom architecture
    # beyond them is refused when it is built, not by running out of memory later.
    warp_size: int = Field(gt=0, le=64, description="Threads per warp.")
    max_threads_per_sm: int = Field(gt=0, le=2**14, description="Resident threads per SM.")
    max_warps_per_sm: int = Field(gt=0, le=2**10, description="Resident warps per SM.")
    max_blocks_per_sm: int = Field(gt=0, le=2**10, description="Resident blocks per SM.")
    max_threads_per_block: int = Field(gt=0, le=2**12, description="Threads per block.")
    max_block_dims: tuple[int, int, int] = Field(
        default=MAX_BLOCK_DIMS,
        description="Threads per block in x, y, z (CUDA C++ Programming Guide, Technical Specifications).",
    )
    max_grid_dims: tuple[int, int, int] = Field(
        default=MAX_GRID_DIMS,
        description="Blocks per grid in x, y, z (CUDA C++ Programming Guide, Technical Specifications).",
    )
    registers_per_sm: int = Field(gt=0, le=2**20, description="32-bit registers per SM.")
    max_registers_per_block: int = Field(gt=0, le=2**20, description="32-bit registers per block.")
    max_registers_per_thread: int = Field(gt=0, le=2**10, description="Registers one thread may use.")
    register_allocation_unit: int = Field(
        gt=0, le=2**12, description="Registers are allocated per warp in multiples of this many."
    )
    sub_partitions: int = Field(gt=0, le=64, description="SM sub-partitions (warp schedulers).")
    register_check_sub_partitions: tuple[int, ...] = Field(
        default=(),
        description=(
            "Extra sub-partition counts whose register check must also pass "
            "(GP100 is checked as a 4-sub-partition GP10x too)."
        ),
    )
    shared_memory_per_sm: int = Field(gt=0, le=2**20, description="Bytes of shared memory per SM.")
    shared_memory_carveouts: tuple[int, ...] = Field(
        description="Shared-memory configurations the SM supports, bytes, ascending."
    )
    max_shared_memory_per_block: int = Field(
        gt=0, le=2**20, description="Default per-block limit (static + dynamic), bytes."
    )
    max_shared_memory_per_block_optin: int = Field(
        gt=0, le=2**20, description="Per-block limit a kernel may opt in to, bytes."
    )
    reserved_shared_memory_per_block: int = Field(
        ge=0, le=2**20, description="Shared memory the driver reserves for each block, bytes."
    )
    shared_memory_allocation_unit: int = Field(
        gt=0, le=2**20, description="Per-block shared memory is allocated in multiples of this, bytes."
    )
    max_barriers_per_sm: int = Field(gt=0, le=2**16, description="Block barriers per SM.")
    barriers_limit_occupancy: bool = Field(
        description="Whether the runtime counts block barriers against occupancy."
    )
    partitioned_global_caching: bool = Field(
        default=False, description="Whether partitioned global caching is supported."
    )
    source: str = Field(min_length=1, description="Where these figures come from.")

    @property
    def major(self) -> int:
        """Compute capability major version."""
        return int(self.compute_capability.split(".")[0])

    @property
    def minor(self) -> int:
        """Compute capability minor version."""
        return int(self.compute_capability.split(".")[1])

    @model_validator(mode="after")
    def _check(self) -> Architecture:
        problems = []
        if not re.fullmatch(r"\d+\.\d", self.compute_capability):
            problems.append(f"compute_capability={self.compute_capability!r} is not 'major.minor'")
        if self.max_warps_per_sm * self.warp_size != self.max_threads_per_sm:
            problems.append("max_warps_per_sm * warp_size != max_threads_per_sm")
        if self.max_threads_per_block > self.max_threads_per_sm:
            problems.append("max_threads_per_block exceeds max_threads_per_sm")
        if self.max_registers_per_block > self.registers_per_sm:
            problems.append("max_registers_per_block exceeds registers_per_sm")
        for n in (self.sub_partitions, *self.register_check_sub_partitions):
            if n <= 0 or n > 64 or self.registers_per_sm % n:
                problems.append(f"registers_per_sm is not divisible by {n} sub-partitions")
        for field in ("register_allocation_unit", "shared_memory_allocation_unit", "warp_size"):
            value = getattr(self, field)
            if value & (value - 1):
                problems.append(f"{field}={value} is not a power of two")
        if self.max_threads_per_block > 128 * self.warp_size:
            problems.append("max_threads_per_block exceeds 128 warps")
        if self.shared_memory_per_sm // self.shared_memory_allocation_unit > 2**14:
            problems.append("shared_memory_per_sm holds more than 16384 allocation units")
        if any(d < 1 for d in (*self.max_block_dims, *self.max_grid_dims)):
            problems.append("max_block_dims and max_grid_dims must be >= 1")
        if max(self.max_block_dims) > self.max_threads_per_block:
            problems.append("max_block_dims exceeds max_threads_per_block")
        carveouts = self.shared_memory_carveouts
        if not carveouts or list(carveouts) != sorted(set(carveouts)) or carveouts[0] < 0:
            problems.append("shared_memory_carveouts must be non-empty, ascending, distinct and >= 0")
        elif carveouts[-1] != self.shared_memory_per_sm:
            problems.append("the largest carveout must equal shared_memory_per_sm")
        if not (
            self.max_shared_memory_per_block
            <= self.max_shared_memory_per_block_optin
            <= self.shared_memory_per_sm - self.reserved_shared_memory_per_block
        ):
            problems.append(
                "need max_shared_memory_per_block <= max_shared_memory_per_block_optin "
                "<= shared_memory_per_sm - reserved_shared_memory_per_block"
            )
        if self.max_barriers_per_sm < self.max_blocks_per_sm:
            problems.append("max_barriers_per_sm is below max_blocks_per_sm")
        if problems:
            raise ValueError(f"architecture {self.name}: " + "; ".join(problems))
        return self

    def __str__(self) -> str:
        return self.name


ArchitectureLike = str | tuple[int, int] | Architecture
"""What `architecture` looks up: ``"sm_90"``, ``"9.0"``, ``(9, 0)`` or an `Architecture`."""

_DATA = "architectures.toml"


@functools.cache
def _builtin() -> dict[str, Architecture]:
    text = resources.files("occupancy").joinpath("data", _DATA).read_text(encoding="utf-8")
    entries = tomllib.loads(text)["architecture"]
    archs = [Architecture(**entry) for entry in entries]
    return {a.name: a for a in archs}


def architectures() -> tuple[Architecture, ...]:
    """Return every packaged architecture, oldest first.

    Examples
    --------
    >>> import occupancy
    >>> [a.compute_capability for a in occupancy.architectures()][:3]
    ['5.0', '5.2', '5.3']
    """
    return tuple(_builtin().values())


def _parse(spec: str) -> tuple[int, int] | None:
    text = spec.strip().lower()
    text = re.sub(r"^(sm|compute|cc)_?", "", text)
    text = re.sub(r"[af]$", "", text)  # sm_90a / sm_100f name the same SM
    if m := re.fullmatch(r"(\d+)\.(\d)", text):
        return int(m[1]), int(m[2])
    if re.fullmatch(r"\d{2,3}", text):
        return int(text[:-1]), int(text[-1])
    return None


def architecture(spec: ArchitectureLike) -> Architecture:
    """Look up an architecture.

    Parameters
    ----------
    spec : str, tuple of int or Architecture
        ``"sm_90"``, ``"9.0"``, ``"90"``, ``"sm_90a"``, ``(9, 0)`` or an
        :class:`Architecture` (returned unchanged).

    Returns
    -------
    Architecture

    Raises
    ------
    OccupancyError
        If the name is not a known compute capability; the message lists the known ones.
    TypeError
        If ``spec`` is of another type.

    Examples
    --------
    >>> import occupancy
    >>> occupancy.architecture("9.0").name
    'sm_90'
    """
    if isinstance(spec, Architecture):
        return spec
    if isinstance(spec, tuple) and len(spec) == 2 and all(isinstance(v, int) for v in spec):
        key: tuple[int, int] | None = spec
    elif isinstance(spec, str):
        key = _parse(spec)
    else:
        raise TypeError(
            f"arch must be a name such as 'sm_90', a (major, minor) tuple or an "
            f"Architecture, not {type(spec).__name__}"
        )
    known = _builtin()
    if key is not None:
        name = f"sm_{key[0]}{key[1]}"
        if name in known:
            return known[name]
    names = list(known)
    hint = ""
    # Suggest only for what reads as a compute capability: "H100" is not close to sm_100.
    if isinstance(spec, tuple) or re.match(r"\s*(sm|compute|cc)?_?\d", str(spec), re.IGNORECASE):
        close = difflib.get_close_matches(str(spec).lower(), names, n=3)
        hint = f" (did you mean {', '.join(close)}?)" if close else ""
    raise OccupancyError(f"arch={spec!r} is not a known architecture{hint}; known: {', '.join(names)}")


def load_architecture(path: str | os.PathLike[str]) -> Architecture:
    """Load a custom architecture from a JSON or TOML file.

    The file holds one object with the fields of :class:`Architecture`
    (``json.dumps(arch.model_dump())`` writes one); a TOML file may also hold it as
    ``[architecture]`` or a single ``[[architecture]]`` table, as the packaged data does.

    Parameters
    ----------
    path : str or os.PathLike
        The file; ``.toml`` is read as TOML, anything else as JSON.

    Returns
    -------
    Architecture

    Raises
    ------
    OccupancyError
        If the file is not valid JSON/TOML (truncated, not UTF-8, non-finite numbers,
        nested too deeply) or the rules are inconsistent; the message names the file.
    OSError
        If the file cannot be read.
    """
    target = as_path(path, OccupancyError)
    where = f"path={str(target)!r}"
    if target.suffix.lower() == ".toml":
        data: object = read_toml(target, OccupancyError)
        if set(data) == {"architecture"}:
            data = data["architecture"]
            if isinstance(data, list):
                if len(data) != 1:
                    raise OccupancyError(f"{where} holds {len(data)} architectures; expected exactly 1")
                data = data[0]
    else:
        data = read_json(target, OccupancyError)
    if not isinstance(data, dict):
        raise OccupancyError(f"{where} must hold one object with the fields of an Architecture")
    try:
        return Architecture(**data)
    except ValidationError as exc:
        raise pydantic_error(exc, OccupancyError, where, show_value=False) from None
