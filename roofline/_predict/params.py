"""The terms' parameters: one typed group per term, each parameter naming the probe that measures it.

The values are per-GPU packaged data: the ``[calibration.*]`` entries of the GPU's facts file
(``roofline/data/gpus/<gpu>.toml``) over the generic defaults, read as a `roofline.Calibration`
(each with its source), or a calibration ``gpuroof validate`` wrote. `parameters` splits one
calibration, with the GPU's datasheet figures, into the groups the terms take, so that a term
reads only its own. A field's ``probe`` (`probes`) is the name of the ``gpuroof validate``
probe that measures it (``validate.report._registry.PROBES``), or ``"datasheet"`` for a figure of the
GPU database.
"""

from __future__ import annotations

import dataclasses
import typing
from dataclasses import dataclass
from typing import Any

from .._calibration import Calibration
from .._gpu import GPU

__all__ = [
    "DATASHEET", "AtomicParams", "BarrierParams", "DramGranularity", "DramParams", "IssueParams", "L1Params",
    "L2Params", "L2RequestParams", "LaunchParams", "Parameters", "PartialStoreParams", "RampParams",
    "SharedAtomicParams", "SpreadParams", "WaitParams", "dram_granularity", "parameters", "probes",
]

#: The ``probe`` of a figure the GPU database gives (its datasheet), measured by no probe.
DATASHEET = "datasheet"


def _by(probe: str) -> Any:
    """A parameter the probe named `probe` measures (a calibration field of the same name)."""
    return dataclasses.field(metadata={"probe": probe})


@dataclass(frozen=True)
class DramGranularity:
    """How the DRAM spends a kernel's bytes: bursts, lone lines, pages, random bursts
    (`dram_equivalent_bytes`); None where not measured on the GPU."""

    dram_burst_bytes: float | None = _by("effects")
    dram_read_line_bytes: float | None = _by("effects")
    dram_partial_write_line_bytes: float | None = _by("effects")
    dram_page_visit_bytes: float | None = _by("effects")
    dram_random_burst_bytes: float | None = _by("memory_terms")


@dataclass(frozen=True)
class DramParams:
    """The DRAM term's: the roof, Little's law's latency and the SM's port, the knee, the block
    scheduler, the L2 flush's written lines, the DRAM's granularity, L2's size and the most
    written bytes it holds at a kernel's end (the written lines it keeps, rules
    ``l2_keeps_writes`` and ``l2_written_cap``), and the open lines at which L2 lets them go
    (rule ``l2_open_lines``), and the exponent that joins a block's life with its SM's issue
    where each thread loads once, then computes (rule ``phases_take_turns``).

    ``sm_bandwidth_bytes_per_second`` is the calibration's, else the SM's share of the L2
    bandwidth (``gpu.l2_bandwidth / gpu.sm_count``).
    """

    memory_bandwidth: float = _by(DATASHEET)
    sustained_bandwidth_fraction: float = _by("prediction")
    dram_read_bytes_per_second: float | None = _by("working_set")
    idle_latency_seconds: float = _by("prediction")
    sm_bandwidth_bytes_per_second: float = _by("prediction")
    knee_sharpness: float = _by("prediction")
    block_dispatch_seconds: float = _by("prediction")
    flush_dirty_bytes: float | None = _by("memory_terms")
    granularity: DramGranularity
    l2_cache_bytes: float | None = _by(DATASHEET)
    l2_kept_written_bytes: float | None = _by("l2_writes")
    l2_open_lines_onset_bytes: float | None = _by("open_lines")
    l2_open_lines_full_bytes: float | None = _by("open_lines")
    phase_exponent: float | None = _by("compute")


@dataclass(frozen=True)
class L2Params:
    """The ``l2`` term's: L2's measured read plateau (None: not measured), and its datasheet rate."""

    l2_read_bytes_per_second: float | None = _by("working_set")
    l2_bandwidth: float = _by(DATASHEET)


@dataclass(frozen=True)
class PartialStoreParams:
    """The ``l2_partial_stores`` term's: the rate L2 merges partial-sector writes from every SM,
    and from one SM alone."""

    l2_partial_store_sectors_per_second: float | None = _by("effects")
    sm_partial_store_sectors_per_second: float | None = _by("effects")


@dataclass(frozen=True)
class L2RequestParams:
    """The ``l2_requests`` term's: one-sector requests per second L2 serves."""

    l2_requests_per_second: float | None = _by("memory_terms")


@dataclass(frozen=True)
class AtomicParams:
    """The ``atomics`` term's: updates spread over L2, updates to one address, stores to one address,
    and the round trip each round of a compare-and-swap loop waits at least: a returning CAS's
    (``cas_round_trip_seconds``), else a load's L2 hit; and the rate of 32-lane CAS on one line a
    warp that bounds all of a CAS loop's attempts; the rates of float adds to one word, where
    the SASS finds the one-address updates float adds (rule ``float_atomics``)."""

    atomic_spread_updates_per_second: float | None = _by("memory_terms")
    atomic_one_address_updates_per_second: float | None = _by("memory_terms")
    one_address_stores_per_second: float | None = _by("memory_terms")
    l2_hit_latency_seconds: float | None = _by("latency")
    cas_round_trip_seconds: float | None = _by("global_cas")
    cas_line_attempts_per_second: float | None = _by("global_cas")
    atomic_one_address_f32_updates_per_second: float | None = _by("global_cas")
    atomic_one_address_f64_updates_per_second: float | None = _by("global_cas")


@dataclass(frozen=True)
class SharedAtomicParams:
    """The ``shared_atomics`` term's: one SM's rates of shared atomic updates and of
    compare-and-swap attempts, on one word and spread over the banks, and a CAS's round trip."""

    sm_shared_atomic_one_word_updates_per_second: float | None = _by("shared_atomics")
    sm_shared_atomic_spread_updates_per_second: float | None = _by("shared_atomics")
    sm_shared_cas_one_word_attempts_per_second: float | None = _by("shared_atomics")
    sm_shared_cas_spread_attempts_per_second: float | None = _by("shared_atomics")
    shared_cas_round_trip_seconds: float | None = _by("shared_atomics")


@dataclass(frozen=True)
class L1Params:
    """The ``l1_shared`` term's: the L1 datasheet rate (one 128-byte line per clock and SM)."""

    l1_bandwidth: float = _by(DATASHEET)


@dataclass(frozen=True)
class WaitParams:
    """What a round of the hot loop waits (`trip_latency`): each level's latency, and the rate a
    round's bytes pass the SM's port (``sm_bandwidth_bytes_per_second`` as the calibration has
    it: None when not fitted)."""

    trip_latency_seconds: float | None = _by("compute")
    dram_latency_seconds: float | None = _by("latency")
    l2_hit_latency_seconds: float | None = _by("latency")
    l1_hit_latency_seconds: float | None = _by("latency")
    sm_bandwidth_bytes_per_second: float | None = _by("prediction")
    trip_bytes_per_second: float | None = _by("compute")


@dataclass(frozen=True)
class BarrierParams:
    """A block's barrier levels' cost: ``tree_level_seconds + warps x tree_level_warp_seconds``."""

    tree_level_seconds: float | None = _by("effects")
    tree_level_warp_seconds: float | None = _by("effects")


@dataclass(frozen=True)
class IssueParams:
    """The ``arithmetic`` and ``instructions`` terms': the dependent FMA's latency and the
    share of the tensor rate the tensor pipe sustains."""

    fma_latency_cycles: float = _by("compute")
    tensor_rate_fraction: float | None = _by("compute")


@dataclass(frozen=True)
class LaunchParams:
    """The ``launch`` term's: one launch's fixed cost as CUDA events see it, and the launch
    floor of a profiled kernel, an empty kernel's Nsight ``gpu__time_duration`` (None: not
    measured on the GPU), which `roofline.nsight_calibration` puts in place of that cost for
    Nsight's durations."""

    launch_overhead_seconds: float = _by("prediction")
    nsight_empty_kernel_seconds: float | None = _by("nsight_launch")


@dataclass(frozen=True)
class RampParams:
    """The ``ramp`` term's: how much later each further block of the first wave starts on an SM."""

    block_ramp_seconds: float | None = _by("launch")


@dataclass(frozen=True)
class SpreadParams:
    """The ``spread`` term's: how much later a first memory round ends per further SM."""

    first_round_seconds_per_sm: float | None = _by("launch")


@dataclass(frozen=True)
class Parameters:
    """Every term's parameters for one GPU, and the exponent the composition joins the memory
    and compute sides with (`overlap`; None: the plain maximum)."""

    dram: DramParams
    l2: L2Params
    partial_stores: PartialStoreParams
    l2_requests: L2RequestParams
    atomics: AtomicParams
    shared_atomics: SharedAtomicParams
    l1: L1Params
    waits: WaitParams
    barriers: BarrierParams
    issue: IssueParams
    launch: LaunchParams
    ramp: RampParams
    spread: SpreadParams
    overlap_exponent: float | None = _by("compute")


def _read(group: type, calibration: Calibration, **given: Any) -> Any:
    """`group` with its fields from the calibration's fields of the same names, but for `given`."""
    names = [f.name for f in dataclasses.fields(group)]
    return group(**{name: given[name] if name in given else getattr(calibration, name) for name in names})


def dram_granularity(calibration: Calibration) -> DramGranularity:
    """The calibration's figures of how the DRAM spends bytes (`DramGranularity`)."""
    return _read(DramGranularity, calibration)


def parameters(calibration: Calibration, gpu: GPU) -> Parameters:
    """Every term's parameters from `calibration`, with `gpu`'s datasheet figures."""
    sm_bandwidth = calibration.sm_bandwidth_bytes_per_second or gpu.l2_bandwidth / gpu.sm_count
    return Parameters(
        dram=_read(DramParams, calibration, memory_bandwidth=gpu.memory_bandwidth,
                   l2_cache_bytes=gpu.l2_cache_bytes,
                   sm_bandwidth_bytes_per_second=sm_bandwidth, granularity=dram_granularity(calibration)),
        l2=_read(L2Params, calibration, l2_bandwidth=gpu.bandwidth("l2")),
        partial_stores=_read(PartialStoreParams, calibration),
        l2_requests=_read(L2RequestParams, calibration),
        atomics=_read(AtomicParams, calibration),
        shared_atomics=_read(SharedAtomicParams, calibration),
        l1=L1Params(l1_bandwidth=gpu.bandwidth("l1")),
        waits=_read(WaitParams, calibration),
        barriers=_read(BarrierParams, calibration),
        issue=_read(IssueParams, calibration),
        launch=_read(LaunchParams, calibration),
        ramp=_read(RampParams, calibration),
        spread=_read(SpreadParams, calibration),
        overlap_exponent=calibration.overlap_exponent,
    )


def _groups(group: type = Parameters) -> list[type]:
    """`group` and the parameter groups it holds, depth first."""
    hints = typing.get_type_hints(group)
    found = [group]
    for field in dataclasses.fields(group):
        if dataclasses.is_dataclass(hints[field.name]):
            found += _groups(hints[field.name])
    return found


def probes() -> dict[str, str]:
    """Every calibration field a term reads, and the probe that measures it (sorted by field)."""
    found = {f.name: f.metadata["probe"] for group in _groups() for f in dataclasses.fields(group)
             if f.metadata.get("probe", DATASHEET) != DATASHEET}
    return dict(sorted(found.items()))
