"""The result types of the kernel models: a launch configuration and the kernel's counts."""

from __future__ import annotations

import math
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, computed_field, model_validator

__all__ = ["KernelModel", "Launch"]

_LABEL_KEYS = ("variant", "radius", "tile", "offset", "stride")


class Launch(BaseModel):
    """Launch configuration of a modelled kernel, ready to feed `occupancy.calculate`.

    Examples
    --------
    >>> Launch(grid=(4, 1, 1), block=(256, 1, 1)).threads
    1024
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    grid: tuple[int, int, int] = Field(description="gridDim (x, y, z) in blocks.")
    block: tuple[int, int, int] = Field(description="blockDim (x, y, z) in threads.")
    registers_per_thread: int | None = Field(
        default=None, ge=0, description="Registers per thread, None when not known before compiling."
    )
    static_shared_memory: int = Field(default=0, ge=0, description="__shared__ bytes per block.")
    dynamic_shared_memory: int = Field(default=0, ge=0, description="Dynamic shared bytes.")
    elements_per_thread: int = Field(
        default=1, ge=1, le=2**31 - 1, description="Output elements per thread."
    )

    @model_validator(mode="after")
    def _hardware_limits(self) -> Launch:
        # The limits every architecture shares; `roofline.predict` checks the GPU's own.
        from occupancy._validate import grid_and_block

        grid_and_block(self.grid, self.block)
        return self

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


class KernelModel(BaseModel):
    """Operation and memory-traffic counts of one classic kernel at one size.

    Byte counts:

    * ``load_bytes`` / ``store_bytes``: what the code requests from global memory
      (active lanes x access size, every access counted, however often repeated);
    * ``l2_bytes``: 32-byte sectors each warp-wide access touches, summed over accesses
      (the SM <-> L2 traffic when L1 keeps nothing between instructions);
    * ``l1_bytes``: requested global bytes plus shared-memory traffic counted as 128 bytes
      per shared wavefront (a bank conflict costs a whole extra wavefront);
    * ``dram_bytes``: compulsory traffic, each distinct 32-byte sector of every array read
      once and written once (assumes L2 captures the reuse; a lower bound otherwise).

    Examples
    --------
    >>> from roofline import models
    >>> round(models.matmul_naive(1024).arithmetic_intensity, 3)
    0.25
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(description='Model function name, e.g. "matmul_tiled".')
    parameters: dict[str, Any] = Field(description="The call's arguments, resolved, JSON-able.")
    formula: str = Field(description="What each thread does, C-like.")
    precision: str = Field(default="fp32", description="Precision of the arithmetic.")
    element_bytes: int = Field(default=4, description="Bytes per data element.")
    flops: int = Field(ge=0, description="Useful floating-point operations (FMA = 2).")
    load_bytes: int = Field(ge=0, description="Global bytes the code loads.")
    store_bytes: int = Field(ge=0, description="Global bytes the code stores.")
    dram_bytes: int = Field(ge=0, description="Estimated DRAM traffic (compulsory), bytes.")
    l2_bytes: int | None = Field(default=None, ge=0, description="SM <-> L2 sector traffic.")
    l1_bytes: int | None = Field(default=None, ge=0, description="L1/shared data-path bytes.")
    shared_bytes: int = Field(default=0, ge=0, description="Shared-memory bytes accessed.")
    bank_conflict_ways: int | None = Field(
        default=None, description="Worst shared-memory conflict degree; None without shared."
    )
    launch: Launch

    @computed_field  # type: ignore[prop-decorator]
    @property
    def requested_bytes(self) -> int:
        """load_bytes + store_bytes."""
        return self.load_bytes + self.store_bytes

    @computed_field  # type: ignore[prop-decorator]
    @property
    def label(self) -> str:
        """Name plus the parameters that select a variant, e.g. ``transpose(variant=shared)``."""
        keys = [k for k in _LABEL_KEYS if k in self.parameters]
        if not keys:
            return self.name
        return f"{self.name}({', '.join(f'{k}={self.parameters[k]}' for k in keys)})"

    @property
    def arithmetic_intensity(self) -> float:
        """flops / requested_bytes: the textbook compute-to-global-memory-access ratio."""
        return self.flops / self.requested_bytes if self.requested_bytes else math.inf

    @property
    def dram_arithmetic_intensity(self) -> float:
        """flops / dram_bytes, flop/byte."""
        return self.flops / self.dram_bytes if self.dram_bytes else math.inf
