"""The calibration of the time model: per-GPU parameters and measured figures, each with its source.

A GPU's calibration is the generic defaults (``roofline/data/calibration_defaults.toml``)
overridden entry by entry by the ``[calibration]`` section of its facts file
(``roofline/data/gpus/<gpu>.toml``, read by `roofline.calibration`); `load_calibration` reads
one that ``gpuroof validate`` or ``gpuroof calibrate`` wrote.
"""

from __future__ import annotations

import functools
import tomllib
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import ConfigDict, Field, ValidationError

from occupancy.common import RealNumbers, as_path, pydantic_error, read_json

from ._errors import RooflineError

__all__ = [
    "CALIBRATION_FIGURES",
    "CALIBRATION_PARAMETERS",
    "Calibration",
    "calibration_defaults",
    "load_calibration",
    "make_calibration",
]

# A calibration's figures are finite: one infinite parameter makes every prediction NaN.
_FINITE = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)
# Marks the fields that are measured figures (None unless measured), not model parameters.
_FIGURE = {"figure": True}


class Calibration(RealNumbers):
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
    block_ramp_seconds : float or None
        How much later each further block of a launch's first wave starts on an SM, seconds:
        the slope of an empty kernel's time over its blocks per SM (the launch probe).
    first_round_seconds_per_sm : float or None
        How much later a launch's first memory round ends for each further SM that takes
        part, seconds: the slope over the SMs in use of a kernel that loads and stores one
        float per thread, beyond the empty kernel on the same grid (the launch probe).
    nsight_empty_kernel_seconds : float or None
        Nsight Compute's ``gpu__time_duration`` of an empty one-block kernel at real clocks,
        seconds: the launch cost as Nsight measures a kernel (`profile_report` predicts
        profiled launches with it).
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
    sm_partial_store_sectors_per_second : float or None
        The same stores from one block alone on the GPU: what one SM's stores are merged at
        when no other SM shares L2's rate. An SM of a grid on ``k`` SMs gets
        ``min(this, l2_partial_store_sectors_per_second / k)``.
    tree_level_seconds, tree_level_warp_seconds : float or None
        Latency of one level of a block's tree (shared load, add, shared store, barrier):
        ``tree_level_seconds + warps of the block x tree_level_warp_seconds``.
    dram_page_visit_bytes : float or None
        DRAM-equivalent bytes of opening a DRAM page beyond those a stream opens (a
        column of a row-major matrix opens one per row): the kernel's
        ``dram_*_page_visits`` over ``bytes / 1024`` cost this much each.
    trip_latency_seconds, trip_bytes_per_second : float or None
        One trip of a loop whose loads miss L2 waits ``trip_latency_seconds`` plus the
        block's bytes of that trip at ``trip_bytes_per_second`` (the trip-latency probe:
        a grid-stride loop whose trips wait for each other, 1 to 8 KiB per block and trip).
    overlap_exponent : float or None
        Exponent ``p`` of the soft maximum ``(memory**p + compute**p) ** (1/p)`` that joins
        the memory and compute sides (the overlap probe's sweep of arithmetic intensity
        across the ridge); None: the plain maximum (perfect overlap).
    phase_exponent : float or None
        Exponent ``q`` of the soft maximum ``(life**q + issue**q) ** (1/q)`` that joins a
        block's life in Little's law with its SM's issue time for one round of its resident
        blocks, for kernels whose threads load once, then compute, then store (a warp holds
        no load in flight while it computes): the overlap sweep fitted with
        `roofline.predict` itself (`validate.probes._compute.model_phase_exponent`); None: the
        block's life is its memory life alone.
    tensor_rate_fraction : float or None
        Share of the datasheet's tensor rate the tensor pipe sustains under load (its clock
        under tensor load included): the measured tensor ceiling over the datasheet's.
    l2_requests_per_second : float or None
        SM -> L2 requests per second L2 serves when each holds one sector (the L2-request
        probe): `predict` takes the kernel's L2 requests at this rate beside its sectors at
        L2's bandwidth.
    atomic_spread_updates_per_second : float or None
        Global atomic updates per second when they go to distinct lines spread over L2.
    atomic_one_address_updates_per_second : float or None
        Global atomic updates per second to one address (applied in series at its L2 slice;
        the probe: one warp-aggregated ``atomicAdd`` per warp to one counter).
    one_address_stores_per_second : float or None
        Warp stores per second to one address many warps write once each (a flag), applied
        in series at its L2 slice (the probe: a copy whose warps each set one flag after their
        own load, against the same copy without it).
    dram_random_burst_bytes : float or None
        DRAM-equivalent bytes of one 64-byte burst read at a random place (a gather: each
        burst opens its own DRAM page): its time x the read bandwidth / bursts.
    flush_dirty_bytes : float or None
        Written bytes L2 holds after validate's L2 flush (a memset of 4x L2): a launch timed
        after the flush (``predict(..., after_l2_flush=True)``) writes back the ones its DRAM
        traffic displaces (the flush probe: a read stream after the flush against after a
        clean scrub).
    sm_shared_atomic_one_word_updates_per_second : float or None
        Lane updates per second one SM's shared memory applies when every lane of a warp adds
        to one word (the shared-atomics probe: one block per SM, ``atomicAdd`` to one word).
    sm_shared_atomic_spread_updates_per_second : float or None
        The same when the lanes of a warp add to 32 words in 32 banks.
    sm_shared_cas_one_word_attempts_per_second : float or None
        Shared compare-and-swap attempts (an active lane of ``ATOMS.CAS``, whether it
        succeeds or fails) per second one SM applies when a warp's lanes hit one word.
    sm_shared_cas_spread_attempts_per_second : float or None
        The same when the lanes of a warp hit 32 words in 32 banks.
    shared_cas_round_trip_seconds : float or None
        One shared compare-and-swap's round trip: issue to the old value back in a register
        (the probe: one thread's chain of dependent ``atomicCAS``).
    cas_round_trip_seconds : float or None
        One returning global compare-and-swap's round trip: issue to the old value back in a
        register, through L2's atomic unit (the global-CAS probe: one thread's chain of
        dependent ``atomicCAS`` on one word).
    cas_line_attempts_per_second : float or None
        Lane attempts per second of the whole GPU when every warp sends 32-lane ``atomicCAS``
        to a 128-byte line of its own, each lane on its own word (the global-CAS probe).
    atomic_one_address_f32_updates_per_second : float or None
        Float adds (``REDG.E.ADD.F32``, ``atomicAdd`` of a ``float``) per second to one word,
        applied in series at its L2 slice (the global-CAS probe: lane 0 of every warp adds).
    atomic_one_address_f64_updates_per_second : float or None
        The same for ``double`` adds (``REDG.E.ADD.F64``).
    l2_kept_written_bytes : float or None
        The most bytes of a kernel's written lines L2 holds at its end, written back after it
        (the L2-writes probe: a store-only sweep of 1 to 4 x L2 from an emptied L2, its written
        bytes less Nsight's ``dram__bytes_write.sum``).
    l2_open_lines_onset_bytes, l2_open_lines_full_bytes : float or None
        The open lines of the resident blocks (lines a block holds across a loop iteration, a
        thread's row walked 4 bytes at a time) at which L2 starts to let them go, and at which
        every sector request beyond the compulsory ones is fetched from DRAM again: the straight
        line through the open-lines probe's fetched-again shares between 0.1 and 0.9 (threads
        walking rows of two arrays, more rows in flight launch by launch, under Nsight).
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
    l1_hit_latency_seconds: float | None = Field(default=None, gt=0, json_schema_extra=_FIGURE)
    l2_hit_latency_seconds: float | None = Field(default=None, gt=0, json_schema_extra=_FIGURE)
    l2_near_hit_latency_seconds: float | None = Field(default=None, gt=0, json_schema_extra=_FIGURE)
    l2_far_hit_latency_seconds: float | None = Field(default=None, gt=0, json_schema_extra=_FIGURE)
    dram_latency_seconds: float | None = Field(default=None, gt=0, json_schema_extra=_FIGURE)
    tlb_miss_penalty_seconds: float | None = Field(default=None, ge=0, json_schema_extra=_FIGURE)
    graph_kernel_seconds: float | None = Field(default=None, gt=0, json_schema_extra=_FIGURE)
    block_ramp_seconds: float | None = Field(default=None, ge=0, json_schema_extra=_FIGURE)
    first_round_seconds_per_sm: float | None = Field(default=None, ge=0, json_schema_extra=_FIGURE)
    nsight_empty_kernel_seconds: float | None = Field(default=None, gt=0, json_schema_extra=_FIGURE)
    l1_read_bytes_per_second: float | None = Field(default=None, gt=0, json_schema_extra=_FIGURE)
    l2_read_bytes_per_second: float | None = Field(default=None, gt=0, json_schema_extra=_FIGURE)
    dram_read_bytes_per_second: float | None = Field(default=None, gt=0, json_schema_extra=_FIGURE)
    dram_burst_bytes: float | None = Field(default=None, ge=32, le=256, json_schema_extra=_FIGURE)
    dram_read_line_bytes: float | None = Field(default=None, gt=0, json_schema_extra=_FIGURE)
    dram_partial_write_line_bytes: float | None = Field(default=None, gt=0, json_schema_extra=_FIGURE)
    l2_partial_store_sectors_per_second: float | None = Field(default=None, gt=0, json_schema_extra=_FIGURE)
    sm_partial_store_sectors_per_second: float | None = Field(default=None, gt=0, json_schema_extra=_FIGURE)
    tree_level_seconds: float | None = Field(default=None, gt=0, json_schema_extra=_FIGURE)
    tree_level_warp_seconds: float | None = Field(default=None, ge=0, json_schema_extra=_FIGURE)
    dram_page_visit_bytes: float | None = Field(default=None, ge=0, json_schema_extra=_FIGURE)
    trip_latency_seconds: float | None = Field(default=None, gt=0, json_schema_extra=_FIGURE)
    trip_bytes_per_second: float | None = Field(default=None, gt=0, json_schema_extra=_FIGURE)
    overlap_exponent: float | None = Field(default=None, ge=1, json_schema_extra=_FIGURE)
    phase_exponent: float | None = Field(default=None, ge=1, json_schema_extra=_FIGURE)
    tensor_rate_fraction: float | None = Field(default=None, gt=0, le=1, json_schema_extra=_FIGURE)
    l2_requests_per_second: float | None = Field(default=None, gt=0, json_schema_extra=_FIGURE)
    atomic_spread_updates_per_second: float | None = Field(default=None, gt=0, json_schema_extra=_FIGURE)
    atomic_one_address_updates_per_second: float | None = Field(default=None, gt=0, json_schema_extra=_FIGURE)
    one_address_stores_per_second: float | None = Field(default=None, gt=0, json_schema_extra=_FIGURE)
    dram_random_burst_bytes: float | None = Field(default=None, gt=0, json_schema_extra=_FIGURE)
    flush_dirty_bytes: float | None = Field(default=None, ge=0, json_schema_extra=_FIGURE)
    sm_shared_atomic_one_word_updates_per_second: float | None = Field(default=None, gt=0, json_schema_extra=_FIGURE)
    sm_shared_atomic_spread_updates_per_second: float | None = Field(default=None, gt=0, json_schema_extra=_FIGURE)
    sm_shared_cas_one_word_attempts_per_second: float | None = Field(default=None, gt=0, json_schema_extra=_FIGURE)
    sm_shared_cas_spread_attempts_per_second: float | None = Field(default=None, gt=0, json_schema_extra=_FIGURE)
    shared_cas_round_trip_seconds: float | None = Field(default=None, gt=0, json_schema_extra=_FIGURE)
    cas_round_trip_seconds: float | None = Field(default=None, gt=0, json_schema_extra=_FIGURE)
    cas_line_attempts_per_second: float | None = Field(default=None, gt=0, json_schema_extra=_FIGURE)
    atomic_one_address_f32_updates_per_second: float | None = Field(default=None, gt=0, json_schema_extra=_FIGURE)
    atomic_one_address_f64_updates_per_second: float | None = Field(default=None, gt=0, json_schema_extra=_FIGURE)
    l2_kept_written_bytes: float | None = Field(default=None, gt=0, json_schema_extra=_FIGURE)
    l2_open_lines_onset_bytes: float | None = Field(default=None, gt=0, json_schema_extra=_FIGURE)
    l2_open_lines_full_bytes: float | None = Field(default=None, gt=0, json_schema_extra=_FIGURE)
    sources: dict[str, str]

    @property
    def measured(self) -> tuple[str, ...]:
        """Names of the parameters that were measured on a GPU (figures are None unless measured)."""
        return tuple(k for k in CALIBRATION_PARAMETERS if self.sources.get(k, "").startswith("measured"))

    @property
    def defaulted(self) -> tuple[str, ...]:
        """Names of the parameters that fell back to defaults."""
        return tuple(k for k in CALIBRATION_PARAMETERS if k not in self.measured)


#: Parameters of the calibration, in the order reports list them: the model's fields that are
#: not measured figures.
CALIBRATION_PARAMETERS: tuple[str, ...] = tuple(
    name for name, field in Calibration.model_fields.items()
    if name not in ("gpu", "sources") and field.json_schema_extra != _FIGURE
)

#: Measured figures a calibration may carry beside the model's parameters (None when not
#: measured on that GPU): the latency ladder, launch cost without the host, and the
#: working-set plateaus (`gpuroof validate`). The time model reads them by name.
CALIBRATION_FIGURES: tuple[str, ...] = tuple(
    name for name, field in Calibration.model_fields.items() if field.json_schema_extra == _FIGURE
)


@functools.cache
def calibration_defaults() -> dict[str, dict[str, Any]]:
    """The generic entries (``{name: {"value": ..., "source": ...}}``) every GPU starts from."""
    text = resources.files("roofline").joinpath("data/calibration_defaults.toml").read_text("utf-8")
    return tomllib.loads(text)["calibration"]


def make_calibration(name: str, entries: Mapping[str, Mapping[str, Any]]) -> Calibration:
    """A `Calibration` for GPU `name` from ``{parameter: {"value": ..., "source": ...}}`` entries.

    TOML has no null: an entry without a ``value`` is None (derived at prediction time).

    Raises
    ------
    RooflineError
        For an unknown entry name, an entry without a source, or a value out of range.
    """
    names = (*CALIBRATION_PARAMETERS, *CALIBRATION_FIGURES)
    unknown = sorted(set(entries) - set(names))
    if unknown:
        raise RooflineError(f"calibration for {name!r} has unknown entries {unknown}; known: {', '.join(names)}")
    missing = sorted(k for k, entry in entries.items() if not entry.get("source"))
    if missing:
        raise RooflineError(f"calibration for {name!r}: entries {missing} name no source")
    values = {k: entries[k].get("value") for k in names if k in entries}
    sources = {k: entries[k]["source"] for k in names if k in entries}
    try:
        return Calibration(gpu=name, sources=sources, **values)
    except ValidationError as exc:
        raise RooflineError(f"calibration for {name!r} is invalid: {exc.errors()[0]['msg']}") from None


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
