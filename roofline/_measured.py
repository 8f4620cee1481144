"""Ceilings measured on real GPUs (``roofline/data/measured_ceilings.toml``), each with its source.

The datasheet says what a GPU could do; these say what `gpuroof validate` reached on one:
the higher of gpuroof's own kernel and the best library figure of the same session (cuBLAS,
CuPy), whether the run was throttled, and where it was measured.
"""

from __future__ import annotations

import functools
import tomllib
from importlib import resources
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ._gpu import GPU
from ._gpu import gpu as _lookup_gpu

__all__ = ["MeasuredCeiling", "measured_ceilings"]


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


@functools.cache
def _table() -> dict[str, dict[str, dict]]:
    text = resources.files("roofline").joinpath("data/measured_ceilings.toml").read_text("utf-8")
    return tomllib.loads(text)


def measured_ceilings(gpu: GPU | str) -> dict[str, MeasuredCeiling]:
    """The measured ceilings of `gpu` by name; empty when it was never measured.

    Examples
    --------
    >>> c = measured_ceilings("H200")["bf16_tensor"]
    >>> c.value >= c.ours and c.unit
    'flops_per_second'
    >>> measured_ceilings("A100-SXM4-40GB")
    {}
    """
    record = _lookup_gpu(gpu)
    return {name: MeasuredCeiling(name=name, **entry) for name, entry in _table().get(record.name, {}).items()}
