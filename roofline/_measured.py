"""What `gpuroof validate` measured on a GPU: its ceilings and its host-link transfers.

The datasheet says what a GPU could do; these say what `gpuroof validate` reached on one:
the higher of gpuroof's own kernel and the best library figure of the same session (cuBLAS,
CuPy), whether the run was throttled, and where it was measured. They live in the
``[ceilings]`` and ``[host_links]`` sections of the GPU's facts file
(``roofline/data/gpus/<gpu>.toml``); `roofline.measured_ceilings` and `roofline.transfer.transfer_time`
read them.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = ["LinkSegment", "MeasuredCeiling", "MeasuredLink"]

_FROZEN = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)


class MeasuredCeiling(BaseModel):
    """One measured ceiling of one GPU model."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(description="validate.CEILING_NAMES: dram_copy, bf16_tensor, fp64_tensor, ...")
    value: float = Field(gt=0, description="The ceiling: the higher of `ours` and `reference_value`.")
    unit: Literal["bytes_per_second", "flops_per_second"]
    ours: float = Field(gt=0, description="gpuroof's kernel.")
    reference: str | None = Field(default=None, description="Best independent figure of the same session.")
    reference_value: float | None = None
    throttled: bool | None = Field(default=None, description="NVML saw a power, thermal or slowdown reason.")
    source: str


class LinkSegment(BaseModel):
    """One line of a host-link fit: ``seconds = latency_seconds + bytes / bytes_per_second`` for
    transfers from ``from_bytes`` up (`validate.measure_host_links` fits them, the facts files
    keep them)."""

    model_config = _FROZEN

    from_bytes: int = Field(ge=0, description="The smallest transfer, bytes, this line applies to.")
    latency_seconds: float = Field(ge=0)
    bytes_per_second: float = Field(gt=0)


class MeasuredLink(BaseModel):
    """Host-link transfers of one memory kind and direction, fitted to sizes of 1 MiB to 1 GiB.

    The fit minimises the largest relative error over those sizes (``max_relative_error``);
    where one line missed a size by more than 10%, two segments: a transfer of ``b`` bytes
    uses the last segment with ``from_bytes <= b``.
    """

    model_config = _FROZEN

    source: str = Field(min_length=1)
    max_relative_error: float = Field(ge=0)
    segments: tuple[LinkSegment, ...] = Field(min_length=1)

    @model_validator(mode="after")
    def _ordered(self) -> MeasuredLink:
        starts = [s.from_bytes for s in self.segments]
        if starts[0] != 0 or starts != sorted(set(starts)):
            raise ValueError(f"segments must start at from_bytes=0 and ascend, not {starts}")
        return self

    def segment(self, nbytes: float) -> LinkSegment:
        """The segment a transfer of `nbytes` bytes uses."""
        return [s for s in self.segments if s.from_bytes <= nbytes][-1]
