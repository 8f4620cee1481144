"""The time model's calibration: its parameters and measured figures per GPU, and their loaders.

The model itself is `roofline._time_model` (composed of the terms in ``roofline/_terms``).
"""

from __future__ import annotations

import functools
import math
import numbers
import tomllib
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from occupancy.common import pydantic_error

from ._errors import RooflineError
from ._gpu import GPU
from ._gpu import gpu as _lookup_gpu

__all__ = ["CALIBRATION_FIGURES", "CALIBRATION_PARAMETERS", "Calibration", "calibration", "load_calibration"]

# A calibration's figures are finite: one infinite parameter makes every prediction NaN.
_FINITE = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

#: Parameters of the calibration, in the order reports list them.
CALIBRATION_PARAMETERS = (
    "idle_latency_seconds",
    "sustained_bandwidth_fraction",
    "knee_sharpness",
    "sm_bandwidth_bytes_per_second",
    "block_dispatch_seconds",
    "launch_overhead_seconds",
    "fma_latency_cycles",
)

#: Measured figures a calibration may carry beside the model's parameters (None when not
#: measured on that GPU): the latency ladder, launch cost without the host, and the
#: working-set plateaus (`gpuroof validate`). The time model reads them by name.
CALIBRATION_FIGURES = (
    "l1_hit_latency_seconds",
    "l2_hit_latency_seconds",
    "l2_near_hit_latency_seconds",
    "l2_far_hit_latency_seconds",
    "dram_latency_seconds",
    "tlb_miss_penalty_seconds",
    "graph_kernel_seconds",
    "l1_read_bytes_per_second",
    "l2_read_bytes_per_second",
    "dram_read_bytes_per_second",
    "dram_burst_bytes",
    "dram_read_line_bytes",
    "dram_partial_write_line_bytes",
    "l2_partial_store_sectors_per_second",
    "tree_level_seconds",
    "tree_level_warp_seconds",
    "dram_page_visit_bytes",
)


class Calibration(BaseModel):
    """Per-GPU parameters of the prediction model, each with where it came from.

    Attributes
    ----------
    gpu : str
        Canonical GPU name the parameters belong to (or ``"generic"``).
    idle_latency_seconds : float
        Round trip of one block's independent loads in an unloaded memory system, from
        issue to the block's retirement, seconds.
    sustained_bandwidth_fraction : float
        Best DRAM bandwidth a streaming kernel reaches, as a fraction of the datasheet's.
    knee_sharpness : float
        Exponent ``p`` of the soft minimum of the three rates (latency-bound, block
        scheduling, DRAM roof); large values give the textbook hard corner.
    sm_bandwidth_bytes_per_second : float or None
        Rate at which one block's bytes stream through its SM, bytes/s; None means the
        SM's share of the L2 bandwidth (``gpu.l2_bandwidth / gpu.sm_count``).
    block_dispatch_seconds : float
        Shortest interval between two block launches on one SM, seconds.
    launch_overhead_seconds : float
        Fixed cost of one kernel launch as CUDA events see it, seconds.
    fma_latency_cycles : float
        Dependent-issue latency of an FP32 FMA, cycles.
    l1_hit_latency_seconds, l2_hit_latency_seconds, dram_latency_seconds : float or None
        Latency of one dependent load that hits L1, hits L2, or misses L2 (pointer chases
        of the latency ladder, each level established by construction), seconds.
    l2_near_hit_latency_seconds, l2_far_hit_latency_seconds : float or None
        The two modes of L2 hits where the near and far partitions are told apart, seconds.
    tlb_miss_penalty_seconds : float or None
        Extra latency of an L2 hit whose page misses the TLBs, seconds.
    graph_kernel_seconds : float or None
        Time per empty kernel launched back to back from a CUDA graph, seconds.
    l1_read_bytes_per_second, l2_read_bytes_per_second, dram_read_bytes_per_second : float or None
        Read-bandwidth plateaus of the working-set sweep (hierarchical ceilings), bytes/s.
    dram_burst_bytes : float or None
        Bytes the DRAM reads for a lone sector (64 on HBM3/HBM3e Hopper); None: 32.
    dram_read_line_bytes : float or None
        DRAM-equivalent bytes of a 128-byte line read alone (one burst and the row's cost).
    dram_partial_write_line_bytes : float or None
        DRAM-equivalent bytes of a line whose sectors are written in part (fill and write back).
    l2_partial_store_sectors_per_second : float or None
        Partial-sector writes per second L2 merges (the probe: one float per line, 32 lines
        per warp store, nothing for L1 to combine): `predict` takes the kernel's
        ``l2_partial_store_sectors`` at this rate as an L2 floor.
    tree_level_seconds, tree_level_warp_seconds : float or None
        Latency of one level of a block's tree (shared load, add, shared store, barrier):
        ``tree_level_seconds + warps of the block x tree_level_warp_seconds``.
    dram_page_visit_bytes : float or None
        DRAM-equivalent bytes of opening a DRAM page beyond those a stream opens (a
        column of a row-major matrix opens one per row): the kernel's
        ``dram_*_page_visits`` over ``bytes / 1024`` cost this much each.
    sources : dict[str, str]
        For every parameter, ``"measured: ..."`` or ``"default: ..."`` with its origin.
    """

    model_config = _FINITE

    gpu: str
    idle_latency_seconds: float = Field(gt=0)
    sustained_bandwidth_fraction: float = Field(gt=0, le=1)
    knee_sharpness: float = Field(gt=0)
    sm_bandwidth_bytes_per_second: float | None = Field(default=None, gt=0)
    block_dispatch_seconds: float = Field(ge=0)
    launch_overhead_seconds: float = Field(ge=0)
    fma_latency_cycles: float = Field(gt=0)
    l1_hit_latency_seconds: float | None = Field(default=None, gt=0)
    l2_hit_latency_seconds: float | None = Field(default=None, gt=0)
    l2_near_hit_latency_seconds: float | None = Field(default=None, gt=0)
    l2_far_hit_latency_seconds: float | None = Field(default=None, gt=0)
    dram_latency_seconds: float | None = Field(default=None, gt=0)
    tlb_miss_penalty_seconds: float | None = Field(default=None, ge=0)
    graph_kernel_seconds: float | None = Field(default=None, gt=0)
    l1_read_bytes_per_second: float | None = Field(default=None, gt=0)
    l2_read_bytes_per_second: float | None = Field(default=None, gt=0)
    dram_read_bytes_per_second: float | None = Field(default=None, gt=0)
    dram_burst_bytes: float | None = Field(default=None, ge=32, le=256)
    dram_read_line_bytes: float | None = Field(default=None, gt=0)
    dram_partial_write_line_bytes: float | None = Field(default=None, gt=0)
    l2_partial_store_sectors_per_second: float | None = Field(default=None, gt=0)
    tree_level_seconds: float | None = Field(default=None, gt=0)
    tree_level_warp_seconds: float | None = Field(default=None, ge=0)
    dram_page_visit_bytes: float | None = Field(default=None, ge=0)
    sources: dict[str, str]

    @property
    def measured(self) -> tuple[str, ...]:
        """Names of the parameters that were measured on a GPU (figures are None unless measured)."""
        return tuple(k for k in CALIBRATION_PARAMETERS if self.sources.get(k, "").startswith("measured"))

    @property
    def defaulted(self) -> tuple[str, ...]:
        """Names of the parameters that fell back to defaults."""
        return tuple(k for k in CALIBRATION_PARAMETERS if k not in self.measured)


@functools.cache
def _calibration_table() -> dict[str, dict[str, Any]]:
    text = resources.files("roofline").joinpath("data/calibration.toml").read_text("utf-8")
    return tomllib.loads(text)


def _make_calibration(name: str, entry: dict[str, Any]) -> Calibration:
    # TOML has no null: a parameter without a "value" is None (derived at prediction time)
    names = (*CALIBRATION_PARAMETERS, *CALIBRATION_FIGURES)
    unknown = sorted(set(entry) - set(names))
    if unknown:
        raise RooflineError(f"calibration for {name!r} has unknown entries {unknown}; known: {', '.join(names)}")
    values = {k: entry[k].get("value") for k in names if k in entry}
    sources = {k: entry[k]["source"] for k in names if k in entry}
    try:
        return Calibration(gpu=name, sources=sources, **values)
    except ValidationError as exc:
        raise RooflineError(f"calibration for {name!r} is invalid: {exc.errors()[0]['msg']}") from None


def calibration(gpu: GPU | str) -> Calibration:
    """Return the packaged calibration for `gpu`, falling back per parameter to generic defaults.

    Parameters
    ----------
    gpu : GPU or str
        A GPU record or a name `roofline.gpu` understands.

    Returns
    -------
    Calibration
        Its ``sources`` say, for each parameter, whether it was measured on that GPU model or
        is the generic default.

    Examples
    --------
    >>> import roofline
    >>> roofline.calibration("H100 SXM").idle_latency_seconds > 0
    True
    """
    record = _lookup_gpu(gpu)
    table = _calibration_table()
    merged = dict(table["generic"])
    merged.update(table.get(record.name, {}))
    return _make_calibration(record.name, merged)


# `predict` and `time_cliffs` take a `calibration` argument that shadows the function
_packaged_calibration = calibration


def load_calibration(path: str | Path) -> Calibration:
    """Load a calibration written by ``gpuroof validate`` (its ``calibration`` JSON object).

    Parameters
    ----------
    path : str or Path
        A JSON file holding a `Calibration`: ``calibration.json`` of ``gpuroof calibrate`` or
        ``gpuroof validate``, or the latter's ``report.json`` of one device (its ``calibration``).

    Raises
    ------
    RooflineError
        If the file does not hold a valid calibration (not JSON, truncated, not UTF-8,
        non-finite numbers, a field out of range); the message names the file.
    OSError
        If the file cannot be read.
    """
    from occupancy.common import as_path, read_json

    path = as_path(path, RooflineError)
    data = read_json(path, RooflineError)
    if isinstance(data, dict) and isinstance(data.get("reports"), list):
        # a report.json of schema 2: the reports of one or several devices
        if len(data["reports"]) != 1:
            raise RooflineError(
                f"path={str(path)!r} holds the reports of {len(data['reports'])} devices: give one device's "
                "calibration.json"
            )
        data = data["reports"][0]
    if isinstance(data, dict) and isinstance(data.get("calibration"), dict):
        data = data["calibration"]
    elif isinstance(data, dict) and isinstance(data.get("prediction"), dict) and isinstance(
        data["prediction"].get("calibration"), dict
    ):  # a `gpuroof validate` report.json keeps it in its prediction check
        data = data["prediction"]["calibration"]
    if not isinstance(data, dict):
        raise RooflineError(f"path={str(path)!r} must hold a calibration object")
    try:
        return Calibration.model_validate(data)
    except ValidationError as exc:
        raise pydantic_error(exc, RooflineError, f"path={str(path)!r} is not a calibration", show_value=False) from None
