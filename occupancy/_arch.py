"""Architecture rules: one frozen model per compute capability, packaged as TOML."""

from __future__ import annotations

import difflib
import functools
import json
import os
import re
import tomllib
from importlib import resources
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ._errors import OccupancyError

__all__ = ["Architecture", "architecture", "architectures", "load_architecture"]


class Architecture(BaseModel):
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

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(description='Canonical name, e.g. "sm_90".')
    compute_capability: str = Field(description='"major.minor", e.g. "9.0".')
    family: str = Field(default="", description='Architecture family, e.g. "Hopper".')
    chips: str = Field(default="", description="Chips with this compute capability.")
    warp_size: int = Field(gt=0, description="Threads per warp.")
    max_threads_per_sm: int = Field(gt=0, description="Resident threads per SM.")
    max_warps_per_sm: int = Field(gt=0, description="Resident warps per SM.")
    max_blocks_per_sm: int = Field(gt=0, description="Resident blocks per SM.")
    max_threads_per_block: int = Field(gt=0, description="Threads per block.")
    registers_per_sm: int = Field(gt=0, description="32-bit registers per SM.")
    max_registers_per_block: int = Field(gt=0, description="32-bit registers per block.")
    max_registers_per_thread: int = Field(gt=0, description="Registers one thread may use.")
    register_allocation_unit: int = Field(
        gt=0, description="Registers are allocated per warp in multiples of this many."
    )
    sub_partitions: int = Field(gt=0, description="SM sub-partitions (warp schedulers).")
    register_check_sub_partitions: tuple[int, ...] = Field(
        default=(),
        description=(
            "Extra sub-partition counts whose register check must also pass "
            "(GP100 is checked as a 4-sub-partition GP10x too)."
        ),
    )
    shared_memory_per_sm: int = Field(gt=0, description="Bytes of shared memory per SM.")
    shared_memory_carveouts: tuple[int, ...] = Field(
        description="Shared-memory configurations the SM supports, bytes, ascending."
    )
    max_shared_memory_per_block: int = Field(
        gt=0, description="Default per-block limit (static + dynamic), bytes."
    )
    max_shared_memory_per_block_optin: int = Field(
        gt=0, description="Per-block limit a kernel may opt in to, bytes."
    )
    reserved_shared_memory_per_block: int = Field(
        ge=0, description="Shared memory the driver reserves for each block, bytes."
    )
    shared_memory_allocation_unit: int = Field(
        gt=0, description="Per-block shared memory is allocated in multiples of this, bytes."
    )
    max_barriers_per_sm: int = Field(gt=0, description="Block barriers per SM.")
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
            if n <= 0 or self.registers_per_sm % n:
                problems.append(f"registers_per_sm is not divisible by {n} sub-partitions")
        for field in ("register_allocation_unit", "shared_memory_allocation_unit", "warp_size"):
            value = getattr(self, field)
            if value & (value - 1):
                problems.append(f"{field}={value} is not a power of two")
        carveouts = self.shared_memory_carveouts
        if not carveouts or list(carveouts) != sorted(set(carveouts)):
            problems.append("shared_memory_carveouts must be non-empty, ascending and distinct")
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


def architecture(spec: Any) -> Architecture:
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
    close = difflib.get_close_matches(str(spec).lower(), names, n=3)
    hint = f" (did you mean {', '.join(close)}?)" if close else ""
    raise OccupancyError(f"arch={spec!r} is not a known architecture{hint}; known: {', '.join(names)}")


def load_architecture(path: str | os.PathLike[str]) -> Architecture:
    """Load a custom architecture from a JSON file.

    The file holds one object with the fields of :class:`Architecture`
    (``json.dumps(arch.model_dump())`` writes one).

    Parameters
    ----------
    path : str or os.PathLike
        The JSON file.

    Returns
    -------
    Architecture

    Raises
    ------
    OccupancyError
        If the file is not valid JSON or the rules are inconsistent.
    """
    with open(path, encoding="utf-8") as f:
        try:
            data = json.load(f)
        except json.JSONDecodeError as exc:
            raise OccupancyError(f"path={os.fspath(path)!r} is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise OccupancyError(f"path={os.fspath(path)!r} must hold one JSON object")
    try:
        return Architecture(**data)
    except ValueError as exc:
        raise OccupancyError(f"path={os.fspath(path)!r}: {exc}") from None
