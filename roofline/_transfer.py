"""Data movement: host <-> device transfer time and L2 persistence.

Transfers over the GPU's host link (``gpu.host_link.bytes_per_second``, per direction,
after line encoding: PCIe Gen3 x16 = 16 lanes x 8 GT/s x 128/130 / 8 = 15.75 GB/s):

* pinned (page-locked) memory is copied by DMA at the link rate times an efficiency of
  12 / 15.75 = 0.76 -- the CUDA C Best Practices Guide, "Pinned Memory": "On PCIe x16 Gen3
  cards, for example, pinned memory can attain roughly 12 GB/s transfer rates" (packet
  headers and flow control eat the rest);
* pageable memory is first copied by the CPU into a pinned staging buffer and then sent,
  so it is slower: rate = pinned rate x 0.69, the ratio of ``bandwidthTest`` host-to-device
  figures for pageable and pinned memory (4026.1 / 5836.3 MB/s, 32 MiB, GeForce GTX TITAN
  Black on PCIe Gen3; the GitHub thread ComputationalRadiationPhysics/jungfrau-photoncounter#18).
  The factor depends on the host's memory system; pass ``pageable_factor`` to override;
* mapped (zero-copy) memory is not copied: the kernel reads it across the link at the
  pinned rate, once per pass over the data (``accesses``), with no copy call to pay for.

A fixed cost per transfer is added: 10 us for a cudaMemcpy call (driver and DMA set-up;
Best Practices Guide: "batching many small transfers into one larger transfer performs
significantly better"), 1 us (one link round trip) for mapped accesses. Both are
assumptions of order of magnitude; pass ``latency_seconds`` to override.

Where `gpuroof validate` has measured the GPU's host link (the ``[host_links]`` section of
its facts file, ``roofline/data/gpus/<gpu>.toml``, each entry with its source), the measured
rate and latency of that memory kind and direction replace the factors above:
``seconds = latency + bytes / rate``, fitted to transfers of 1 MiB to 1 GiB, in two size
segments where the rate changes with size.
Managed memory (first touch: the pages migrate) has no datasheet model and needs such a
measurement.
"""

from __future__ import annotations

import math
import numbers
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ._errors import RooflineError
from ._facts import measured_link, measured_link_gpus

__all__ = [
    "L2Persistence",
    "L2_PARTITIONS",
    "MAPPED_LATENCY_SECONDS",
    "MAX_BYTES",
    "MAX_PERSISTING_FRACTION",
    "MEMCPY_LATENCY_SECONDS",
    "PAGEABLE_FACTOR",
    "PINNED_EFFICIENCY",
    "TransferTime",
    "l2_persistence",
    "transfer_time",
]

# Best Practices Guide: ~12 GB/s pinned on PCIe Gen3 x16, whose per-direction rate after
# 128b/130b encoding is 16 x 8e9 x 128/130 / 8 bytes/s.
PINNED_EFFICIENCY = 12e9 / (16 * 8e9 * 128 / 130 / 8)
PAGEABLE_FACTOR = 4026.1 / 5836.3
MEMCPY_LATENCY_SECONDS = 10e-6
MAPPED_LATENCY_SECONDS = 1e-6
# A100: persistingL2CacheMaxSize 31457280 of l2CacheSize 41943040 (cudaGetDeviceProperties);
# the Programming Guide's example sets aside min(0.75 * l2CacheSize, persistingL2CacheMaxSize).
MAX_PERSISTING_FRACTION = 0.75
# NVIDIA A100 and H100 Tensor Core GPU Architecture whitepapers: the L2 is divided into two
# partitions, each caching data for the SMs directly connected to it.
L2_PARTITIONS = 2

Memory = Literal["pinned", "pageable", "mapped", "managed"]
Direction = Literal["h2d", "d2h"]

# No transfer or cache window exceeds a 64-bit address space; the bound keeps times finite.
MAX_BYTES = 2**64


class TransferTime(BaseModel):
    """Estimated time to move bytes between host and device.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> from roofline._transfer import transfer_time
    >>> gpu = SimpleNamespace(host_link=SimpleNamespace(kind="pcie", bytes_per_second=15.75e9))
    >>> round(transfer_time(gpu, 12e9, memory="pinned", latency_seconds=0).seconds, 2)
    1.0
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    memory: Memory
    direction: Direction = "h2d"
    bytes: int = Field(description="Bytes moved per pass.")
    accesses: int = Field(description="Passes over the data across the link (mapped only).")
    link_kind: str = Field(description='"pcie" or "nvlink-c2c".')
    link_bytes_per_second: float = Field(description="Host link rate per direction.")
    efficiency: float = Field(description="Fraction of the link rate the transfer reaches.")
    bytes_per_second: float = Field(description="Rate of the data phase.")
    latency_seconds: float = Field(description="Fixed cost added once.")
    seconds: float = Field(description="latency + accesses x bytes / bytes_per_second.")
    source: str = Field(default="", description="Where the rate and latency come from.")


class L2Persistence(BaseModel):
    """What an L2 access policy window persists (CUDA Programming Guide, L2 cache control).

    Examples
    --------
    >>> from roofline._transfer import l2_persistence
    >>> p = l2_persistence(32 << 20, hit_ratio=1.0, set_aside_bytes=16 << 20,
    ...                    l2_cache_bytes=40 << 20)
    >>> p.thrashing, p.recommended_hit_ratio
    (True, 0.5)
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    window_bytes: int = Field(description="accessPolicyWindow.num_bytes.")
    hit_ratio: float = Field(description="accessPolicyWindow.hitRatio.")
    l2_cache_bytes: int = Field(description="Size of L2.")
    max_persisting_bytes: int = Field(description="persistingL2CacheMaxSize.")
    set_aside_bytes: int = Field(description="cudaLimitPersistingL2CacheSize, after the cap.")
    designated_bytes: int = Field(description="hit_ratio x window: bytes given hitProp.")
    persisting_bytes: int = Field(description="Designated bytes that fit in the set-aside.")
    thrashing: bool = Field(description="Designated bytes exceed the set-aside and evict each other.")
    recommended_hit_ratio: float = Field(description="min(1, set_aside / window).")
    hit_fraction: float = Field(description="persisting_bytes / window_bytes (steady state).")
    normal_l2_bytes: int = Field(description="L2 left to normal and streaming accesses.")
    reuse_distance_bytes: float | None = Field(
        default=None, description="Distinct bytes touched between two reads of one window line.")
    baseline_hit_fraction: float | None = Field(
        default=None, description="Window reads that hit L2 without a window (1 if the reuse distance fits L2).")
    seconds_without: float | None = Field(default=None, description="Predicted kernel time without the window.")
    seconds_with: float | None = Field(default=None, description="Predicted kernel time with it.")
    time_ratio: float | None = Field(default=None, description="seconds_with / seconds_without.")
    buys_nothing: bool | None = Field(default=None, description="The window saves less than 2% of the time.")
    reason: str = Field(default="", description="Why the window helps, or why it does not.")


def _nonnegative(name: str, value: Any, *, positive: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number, got {type(value).__name__}")
    try:
        figure = float(value)
    except OverflowError:
        figure = math.inf
    if not math.isfinite(figure) or figure < 0 or (positive and figure == 0):
        raise RooflineError(f"{name}={value} must be {'> 0' if positive else '>= 0'} and finite")
    return figure


def transfer_time(
    gpu: Any,
    bytes: int | float,  # noqa: A002 - the unit is the name
    *,
    memory: Memory = "pinned",
    direction: Direction = "h2d",
    accesses: int = 1,
    latency_seconds: float | None = None,
    pageable_factor: float | None = None,
    efficiency: float | None = None,
) -> TransferTime:
    """Time to move ``bytes`` between host and device over the GPU's host link.

    A GPU whose host link was measured (``[host_links]`` of its facts file) uses the measured
    rate and latency of `memory` and `direction`, unless `pageable_factor` or `efficiency`
    is given; otherwise the datasheet link rate times those factors.

    Parameters
    ----------
    gpu : roofline.GPU
        Anything with ``host_link.kind`` and ``host_link.bytes_per_second`` (per direction);
        its ``name`` finds the measurements.
    bytes : int or float
        Bytes to move, >= 0.
    memory : {"pinned", "pageable", "mapped", "managed"}
        Host allocation: ``cudaMallocHost``/``cudaHostRegister`` (pinned), ``malloc``
        (pageable, staged through a pinned buffer), ``cudaHostAlloc(...Mapped)`` read or
        written by the kernel in place (mapped, zero-copy), or ``cudaMallocManaged`` touched
        first on the other side (managed: the pages migrate; measured GPUs only).
    direction : {"h2d", "d2h"}
        Host to device or device to host.
    accesses : int
        Times the kernel reads mapped data across the link (mapped memory is not cached
        in device memory); must be 1 otherwise.
    latency_seconds : float, optional
        Fixed cost; default the measured one, else 10 us for copies, 1 us for mapped memory.
    pageable_factor : float, optional
        Pageable rate / pinned rate, in (0, 1]; default 0.69 (datasheet model only).
    efficiency : float, optional
        Pinned rate / link rate, in (0, 1]; default 0.76 (datasheet model only).

    Returns
    -------
    TransferTime
        ``source`` says whether the rate was measured (and where) or modelled.

    Raises
    ------
    RooflineError
        Negative sizes, an unknown memory kind or direction, factors outside (0, 1],
        managed memory on a GPU whose migration rate was not measured.
    TypeError
        A gpu without ``host_link``.

    Examples
    --------
    >>> import roofline
    >>> t = roofline.transfer.transfer_time(roofline.gpu("A100"), 1 << 30)
    >>> t.source.startswith("model")
    True
    """
    link = getattr(gpu, "host_link", None)
    if link is None or not hasattr(link, "bytes_per_second"):
        raise TypeError(
            f"gpu must have a host_link with bytes_per_second, got {type(gpu).__name__}"
        )
    if not isinstance(memory, str):
        raise TypeError(f"memory must be 'pinned', 'pageable', 'mapped' or 'managed', not {type(memory).__name__}")
    if memory not in ("pinned", "pageable", "mapped", "managed"):
        raise RooflineError(f"memory={memory!r} must be 'pinned', 'pageable', 'mapped' or 'managed'")
    if direction not in ("h2d", "d2h"):
        raise RooflineError(f"direction={direction!r} must be 'h2d' or 'd2h'")
    size = _nonnegative("bytes", bytes)
    if size > MAX_BYTES:
        raise RooflineError(f"bytes={bytes} exceeds {MAX_BYTES} (2**64), more than any address space holds")
    link_rate = _nonnegative("host_link.bytes_per_second", link.bytes_per_second, positive=True)
    for name, value in (("pageable_factor", pageable_factor), ("efficiency", efficiency)):
        if value is not None and _nonnegative(name, value, positive=True) > 1:
            raise RooflineError(f"{name}={value} must be in (0, 1]")
    if isinstance(accesses, bool) or not isinstance(accesses, numbers.Integral):
        raise TypeError(f"accesses must be an int, got {type(accesses).__name__}")
    if not 1 <= accesses <= 2**31 - 1 or (memory != "mapped" and accesses != 1):
        raise RooflineError(
            f"accesses={accesses} must be from 1 to 2147483647, and 1 unless memory='mapped'"
        )
    name = getattr(gpu, "name", None)
    measured = None if (pageable_factor is not None or efficiency is not None or not isinstance(name, str)) else \
        measured_link(name, memory, direction)
    if measured is not None:
        # The measured fit has one segment, or two where the rate changes with size.
        segment = measured.segment(size)
        rate = segment.bytes_per_second
        default_latency = segment.latency_seconds
        source = measured.source
    elif memory == "managed":
        known = sorted(measured_link_gpus("managed"))
        raise RooflineError(
            f"memory='managed' needs a measured migration rate; {getattr(gpu, 'name', 'this GPU')!r} has none "
            f"(measured: {', '.join(known) or 'none'}; run gpuroof validate on it)"
        )
    else:
        factor = PAGEABLE_FACTOR if pageable_factor is None else pageable_factor
        rate = link_rate * (PINNED_EFFICIENCY if efficiency is None else efficiency) * \
            (factor if memory == "pageable" else 1.0)
        default_latency = MAPPED_LATENCY_SECONDS if memory == "mapped" else MEMCPY_LATENCY_SECONDS
        source = "model: datasheet link rate x pinned efficiency" + \
            (" x pageable factor" if memory == "pageable" else "")
    latency = default_latency if latency_seconds is None else _nonnegative("latency_seconds", latency_seconds)
    return TransferTime(
        memory=memory,
        direction=direction,
        bytes=int(size),
        accesses=int(accesses),
        link_kind=str(getattr(link, "kind", "pcie")),
        link_bytes_per_second=link_rate,
        efficiency=rate / link_rate,
        bytes_per_second=rate,
        latency_seconds=latency,
        seconds=latency + accesses * size / rate,
        source=source,
    )


def l2_persistence(
    window_bytes: int,
    *,
    hit_ratio: float,
    set_aside_bytes: int,
    l2_cache_bytes: int,
    max_persisting_bytes: int | None = None,
    window_reads_bytes: float | None = None,
    other_bytes: float = 0.0,
    dram_bytes_per_second: float | None = None,
    l2_bytes_per_second: float | None = None,
    l2_partitions: int = L2_PARTITIONS,
) -> L2Persistence:
    """Bytes an L2 access policy window keeps persisting (compute capability 8.0+), and the time it saves.

    The hardware gives ``hitProp = cudaAccessPropertyPersisting`` to a random ``hit_ratio``
    share of the window's lines; they compete for the set-aside, whose size
    ``cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, ...)`` caps at
    ``persistingL2CacheMaxSize``. When the designated bytes exceed the set-aside, persisting
    lines evict each other (the Programming Guide's 16 KB set-aside / 32 KB window example
    recommends ``hitRatio = 0.5`` there). Normal and streaming accesses use the rest of L2.

    Given the kernel's traffic (`window_reads_bytes` read from the window, `other_bytes`
    streamed once) and the DRAM bandwidth, the time with and without the window (at the
    same set-aside) is predicted. Lines that SMs all over the chip read are held in every
    L2 partition (A100 and H100 whitepapers: each of the two L2 partitions caches the data
    of the SMs attached to it), so the capacity for them is L2 / `l2_partitions`, and the
    set-aside / `l2_partitions` for persisting ones. Without a window a window line still hits
    when its reuse distance (window + other bytes per pass over the window) fits that L2;
    with one, as many designated bytes hit as that room holds (the Programming Guide's
    ``min(designated, set-aside)``, per partition). Time = max(DRAM bytes / DRAM bandwidth,
    L2 bytes / L2 bandwidth). Checked on an H200 and an H100 (`gpuroof validate`, 26
    windows): within 9% of the measured time ratio.

    Parameters
    ----------
    window_bytes : int
        accessPolicyWindow.num_bytes, > 0.
    hit_ratio : float
        accessPolicyWindow.hitRatio, in [0, 1].
    set_aside_bytes : int
        Requested cudaLimitPersistingL2CacheSize, >= 0.
    l2_cache_bytes : int
        L2 size (``gpu.l2_cache_bytes``), > 0.
    max_persisting_bytes : int, optional
        persistingL2CacheMaxSize; default 75% of L2 (A100 reports 30 MiB of 40 MiB).
    window_reads_bytes : float, optional
        Bytes the kernel reads from the window in all (window x passes); with
        `dram_bytes_per_second`, turns on the time prediction.
    other_bytes : float
        Bytes the kernel streams from elsewhere, read once.
    dram_bytes_per_second : float, optional
        Sustained DRAM bandwidth, bytes/s.
    l2_bytes_per_second : float, optional
        L2 bandwidth, bytes/s (no L2 bound when omitted).
    l2_partitions : int
        L2 partitions that each hold a copy of a line all SMs read (2 on A100 and Hopper).

    Returns
    -------
    L2Persistence

    Raises
    ------
    RooflineError
        Out-of-range sizes or ratio.

    Examples
    --------
    >>> p = l2_persistence(16 << 20, hit_ratio=1.0, set_aside_bytes=36 << 20, l2_cache_bytes=60 << 20,
    ...                    window_reads_bytes=128 << 20, other_bytes=512 << 20, dram_bytes_per_second=4e12)
    >>> round(p.time_ratio, 2), p.buys_nothing
    (0.8, False)
    >>> small = l2_persistence(2 << 20, hit_ratio=1.0, set_aside_bytes=36 << 20, l2_cache_bytes=60 << 20,
    ...                        window_reads_bytes=128 << 20, other_bytes=512 << 20, dram_bytes_per_second=4e12)
    >>> small.buys_nothing, small.reason.startswith("the window's lines stay in L2 without it")
    (True, True)
    """
    window = _nonnegative("window_bytes", window_bytes, positive=True)
    l2 = _nonnegative("l2_cache_bytes", l2_cache_bytes, positive=True)
    for name, value in (("window_bytes", window), ("l2_cache_bytes", l2)):
        if value > MAX_BYTES:
            raise RooflineError(f"{name}={value:g} exceeds {MAX_BYTES} (2**64), more than any address space holds")
    ratio = _nonnegative("hit_ratio", hit_ratio)
    if ratio > 1:
        raise RooflineError(f"hit_ratio={hit_ratio} must be in [0, 1]")
    requested = _nonnegative("set_aside_bytes", set_aside_bytes)
    if max_persisting_bytes is None:
        cap = MAX_PERSISTING_FRACTION * l2
    else:
        cap = _nonnegative("max_persisting_bytes", max_persisting_bytes)
        if cap > l2:
            raise RooflineError(
                f"max_persisting_bytes={max_persisting_bytes} exceeds l2_cache_bytes={l2_cache_bytes}"
            )
    set_aside = min(requested, cap)
    designated = window * ratio
    persisting = int(min(designated, set_aside))
    hit_fraction = persisting / window
    timing: dict[str, Any] = {}
    if window_reads_bytes is not None and dram_bytes_per_second is not None:
        reads = _nonnegative("window_reads_bytes", window_reads_bytes, positive=True)
        other = _nonnegative("other_bytes", other_bytes)
        dram = _nonnegative("dram_bytes_per_second", dram_bytes_per_second, positive=True)
        l2_rate = None if l2_bytes_per_second is None else \
            _nonnegative("l2_bytes_per_second", l2_bytes_per_second, positive=True)
        if isinstance(l2_partitions, bool) or not isinstance(l2_partitions, numbers.Integral) or l2_partitions < 1:
            raise RooflineError(f"l2_partitions={l2_partitions!r} must be an integer >= 1")
        reuse = window + other * window / reads
        baseline = 1.0 if reuse <= l2 / l2_partitions else 0.0
        room = set_aside / l2_partitions
        window_hits = min(designated, room) / window
        hits = max(baseline, window_hits)

        def seconds(hit: float) -> float:
            dram_seconds = (other + reads * (1.0 - hit)) / dram
            l2_seconds = 0.0 if l2_rate is None else (other + reads) / l2_rate
            return max(dram_seconds, l2_seconds)

        without, with_window = seconds(baseline), seconds(hits)
        time_ratio = with_window / without
        if baseline >= 1.0:
            reason = (f"the window's lines stay in L2 without it: reuse distance {reuse / 2**20:.0f} MiB <= "
                      f"L2 / {l2_partitions} = {l2 / l2_partitions / 2**20:.0f} MiB")
        elif designated == 0 or set_aside == 0:
            reason = "nothing persists: the hit ratio or the set-aside is zero"
        elif l2_rate is not None and time_ratio > 0.98 and \
                (other + reads) / l2_rate >= (other + reads * (1.0 - hits)) / dram:
            reason = "L2 bandwidth, not DRAM, bounds the kernel"
        elif time_ratio > 0.98:
            reason = "the persisting lines are too small a part of the DRAM traffic"
        elif designated > room:
            reason = (f"{window_hits:.0%} of the window persists (the {room / 2**20:.0f} MiB a set-aside of "
                      f"{set_aside / 2**20:.0f} MiB holds per partition; the other designated lines evict each "
                      f"other: hitRatio {min(1.0, room / window):.2f} would do as well) and saves "
                      f"{reads * (hits - baseline) / 2**20:.0f} MiB of DRAM traffic")
        else:
            reason = (f"{window_hits:.0%} of the window persists and saves "
                      f"{reads * (hits - baseline) / 2**20:.0f} MiB of DRAM traffic")
        timing = dict(reuse_distance_bytes=reuse, baseline_hit_fraction=baseline, seconds_without=without,
                      seconds_with=with_window, time_ratio=time_ratio, buys_nothing=time_ratio > 0.98,
                      reason=reason)
    return L2Persistence(
        window_bytes=int(window),
        hit_ratio=ratio,
        l2_cache_bytes=int(l2),
        max_persisting_bytes=int(cap),
        set_aside_bytes=int(set_aside),
        designated_bytes=int(designated),
        persisting_bytes=int(persisting),
        thrashing=designated > set_aside,
        recommended_hit_ratio=min(1.0, set_aside / window),
        hit_fraction=hit_fraction,
        normal_l2_bytes=int(l2 - persisting),
        **timing,
    )
