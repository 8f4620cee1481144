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
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from occupancy.common import CheckedModel

from ._errors import RooflineError
from ._facts import measured_link, measured_link_gpus

__all__ = [
    "AccessPolicyWindow",
    "L2Persistence",
    "L2_PARTITIONS",
    "MAPPED_LATENCY_SECONDS",
    "MAX_BYTES",
    "MAX_PERSISTING_FRACTION",
    "MEMCPY_LATENCY_SECONDS",
    "PAGEABLE_FACTOR",
    "PINNED_EFFICIENCY",
    "TransferTime",
    "WindowTraffic",
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
    >>> from roofline._transfer import AccessPolicyWindow, l2_persistence
    >>> p = l2_persistence(AccessPolicyWindow(num_bytes=32 << 20, hit_ratio=1.0), set_aside_bytes=16 << 20,
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
        raise TypeError(f"{name} must be a number, not {type(value).__name__}")
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


class AccessPolicyWindow(CheckedModel):
    """An L2 access policy window (CUDA's ``cudaAccessPolicyWindow``, compute capability 8.0+).

    The window starts at ``base_ptr`` (its address plays no part here) and spans `num_bytes`;
    ``hitProp = cudaAccessPropertyPersisting`` is given to a random `hit_ratio` share of its
    lines, and the other lines (``missProp``) and every access outside it use the L2 left to
    normal and streaming accesses.

    Attributes
    ----------
    num_bytes : int
        ``num_bytes``: the window's size in bytes, > 0 and at most 2**64.
    hit_ratio : float
        ``hitRatio``: the share of the window's lines designated persisting, in [0, 1].

    Examples
    --------
    >>> AccessPolicyWindow(num_bytes=32 << 10, hit_ratio=0.5).num_bytes
    32768
    """

    model_config = ConfigDict(frozen=True, extra="forbid")
    error: ClassVar[type[Exception]] = RooflineError

    num_bytes: int = Field(description="cudaAccessPolicyWindow.num_bytes: the window's size, bytes.")
    hit_ratio: float = Field(description="cudaAccessPolicyWindow.hitRatio: the share designated persisting.")

    @classmethod
    def normalise(cls, data: dict[str, Any]) -> dict[str, Any]:
        size = _bytes("num_bytes", data.get("num_bytes"))
        if not size.is_integer():
            raise RooflineError(f"num_bytes={data['num_bytes']} must be a whole number of bytes")
        ratio = _nonnegative("hit_ratio", data.get("hit_ratio"))
        if ratio > 1:
            raise RooflineError(f"hit_ratio={data['hit_ratio']} must be in [0, 1]")
        return {**data, "num_bytes": int(size), "hit_ratio": ratio}


class WindowTraffic(CheckedModel):
    """What a kernel reads around an access policy window, and the bandwidths that time it.

    Attributes
    ----------
    window_reads_bytes : float
        Bytes the kernel reads from the window in all (window x passes), > 0.
    other_bytes : float
        Bytes the kernel streams from elsewhere, read once, >= 0.
    dram_bytes_per_second : float
        Sustained DRAM bandwidth, bytes/s, > 0.
    l2_bytes_per_second : float, optional
        L2 bandwidth, bytes/s, > 0 (no L2 bound when omitted).

    Examples
    --------
    >>> WindowTraffic(window_reads_bytes=128 << 20, dram_bytes_per_second=4e12).other_bytes
    0.0
    """

    model_config = ConfigDict(frozen=True, extra="forbid")
    error: ClassVar[type[Exception]] = RooflineError

    window_reads_bytes: float = Field(description="Bytes read from the window in all (window x passes).")
    other_bytes: float = Field(default=0.0, description="Bytes streamed from elsewhere, read once.")
    dram_bytes_per_second: float = Field(description="Sustained DRAM bandwidth.")
    l2_bytes_per_second: float | None = Field(default=None, description="L2 bandwidth (no L2 bound when None).")

    @classmethod
    def normalise(cls, data: dict[str, Any]) -> dict[str, Any]:
        checked = {
            "window_reads_bytes": _nonnegative("window_reads_bytes", data.get("window_reads_bytes"), positive=True),
            "other_bytes": _nonnegative("other_bytes", data.get("other_bytes", 0.0)),
            "dram_bytes_per_second": _nonnegative("dram_bytes_per_second", data.get("dram_bytes_per_second"),
                                                  positive=True),
        }
        if data.get("l2_bytes_per_second") is not None:
            checked["l2_bytes_per_second"] = _nonnegative("l2_bytes_per_second", data["l2_bytes_per_second"],
                                                          positive=True)
        return {**data, **checked}


def _bytes(name: str, value: Any) -> float:
    """A size in bytes, > 0 and at most `MAX_BYTES`."""
    size = _nonnegative(name, value, positive=True)
    if size > MAX_BYTES:
        raise RooflineError(f"{name}={size:g} exceeds {MAX_BYTES} (2**64), more than any address space holds")
    return size


def l2_persistence(
    window: AccessPolicyWindow,
    *,
    set_aside_bytes: int,
    l2_cache_bytes: int,
    max_persisting_bytes: int | None = None,
    traffic: WindowTraffic | None = None,
    l2_partitions: int = L2_PARTITIONS,
) -> L2Persistence:
    """Bytes an L2 access policy window keeps persisting (compute capability 8.0+), and the time it saves.

    The hardware gives ``hitProp = cudaAccessPropertyPersisting`` to a random ``hitRatio``
    share of the window's lines; they compete for the set-aside, whose size
    ``cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, ...)`` caps at
    ``persistingL2CacheMaxSize``. When the designated bytes exceed the set-aside, persisting
    lines evict each other (the Programming Guide's 16 KB set-aside / 32 KB window example
    recommends ``hitRatio = 0.5`` there). Normal and streaming accesses use the rest of L2.

    Given the kernel's `traffic` (bytes read from the window, bytes streamed once, the DRAM
    bandwidth), the time with and without the window (at the same set-aside) is predicted.
    Lines that SMs all over the chip read are held in every
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
    window : AccessPolicyWindow
        The window: its size (``num_bytes``) and ``hitRatio``.
    set_aside_bytes : int
        Requested cudaLimitPersistingL2CacheSize, bytes, >= 0.
    l2_cache_bytes : int
        L2 size (``gpu.l2_cache_bytes``), bytes, > 0.
    max_persisting_bytes : int, optional
        persistingL2CacheMaxSize, bytes; default 75% of L2 (A100 reports 30 MiB of 40 MiB).
    traffic : WindowTraffic, optional
        The kernel's reads and the bandwidths; turns on the time prediction.
    l2_partitions : int
        L2 partitions that each hold a copy of a line all SMs read (2 on A100 and Hopper).

    Returns
    -------
    L2Persistence

    Raises
    ------
    RooflineError
        Out-of-range sizes or partitions.
    TypeError
        A `window` or `traffic` of the wrong type.

    Examples
    --------
    >>> traffic = WindowTraffic(window_reads_bytes=128 << 20, other_bytes=512 << 20, dram_bytes_per_second=4e12)
    >>> p = l2_persistence(AccessPolicyWindow(num_bytes=16 << 20, hit_ratio=1.0), set_aside_bytes=36 << 20,
    ...                    l2_cache_bytes=60 << 20, traffic=traffic)
    >>> round(p.time_ratio, 2), p.buys_nothing
    (0.8, False)
    >>> small = l2_persistence(AccessPolicyWindow(num_bytes=2 << 20, hit_ratio=1.0), set_aside_bytes=36 << 20,
    ...                        l2_cache_bytes=60 << 20, traffic=traffic)
    >>> small.buys_nothing, small.reason.startswith("the window's lines stay in L2 without it")
    (True, True)
    """
    if not isinstance(window, AccessPolicyWindow):
        raise TypeError(f"window must be a roofline.transfer.AccessPolicyWindow, not {type(window).__name__}")
    if traffic is not None and not isinstance(traffic, WindowTraffic):
        raise TypeError(f"traffic must be a roofline.transfer.WindowTraffic or None, not {type(traffic).__name__}")
    l2 = _bytes("l2_cache_bytes", l2_cache_bytes)
    cap, set_aside = _set_aside(set_aside_bytes, max_persisting_bytes, l2)
    size = float(window.num_bytes)
    designated = size * window.hit_ratio
    persisting = int(min(designated, set_aside))
    timing: dict[str, Any] = {}
    if traffic is not None:
        timing = _timing(_Cache(size, designated, set_aside, l2, _partitions(l2_partitions)), traffic)
    return L2Persistence(
        window_bytes=window.num_bytes,
        hit_ratio=window.hit_ratio,
        l2_cache_bytes=int(l2),
        max_persisting_bytes=int(cap),
        set_aside_bytes=int(set_aside),
        designated_bytes=int(designated),
        persisting_bytes=persisting,
        thrashing=designated > set_aside,
        recommended_hit_ratio=min(1.0, set_aside / size),
        hit_fraction=persisting / size,
        normal_l2_bytes=int(l2 - persisting),
        **timing,
    )


def _set_aside(set_aside_bytes: Any, max_persisting_bytes: Any, l2: float) -> tuple[float, float]:
    """The persisting cap (persistingL2CacheMaxSize, bytes) and the set-aside it leaves, bytes."""
    requested = _nonnegative("set_aside_bytes", set_aside_bytes)
    if max_persisting_bytes is None:
        cap = MAX_PERSISTING_FRACTION * l2
    else:
        cap = _nonnegative("max_persisting_bytes", max_persisting_bytes)
        if cap > l2:
            raise RooflineError(f"max_persisting_bytes={max_persisting_bytes} exceeds l2_cache_bytes={l2:.0f}")
    return cap, min(requested, cap)


def _partitions(l2_partitions: Any) -> int:
    """`l2_persistence`'s ``l2_partitions`` checked: an integer >= 1."""
    if isinstance(l2_partitions, bool) or not isinstance(l2_partitions, numbers.Integral) or l2_partitions < 1:
        raise RooflineError(f"l2_partitions={l2_partitions!r} must be an integer >= 1")
    return int(l2_partitions)


@dataclass(frozen=True)
class _Cache:
    """The window against L2, in bytes: its size, its designated lines, the set-aside, L2 and
    the partitions that each hold a line every SM reads."""

    window: float
    designated: float
    set_aside: float
    l2: float
    partitions: int


def _timing(cache: _Cache, traffic: WindowTraffic) -> dict[str, Any]:
    """`L2Persistence`'s time fields: the window's hits without and with it, and the kernel's
    time either way (seconds, the larger of the DRAM and the L2 time)."""
    reads, other = traffic.window_reads_bytes, traffic.other_bytes
    reuse = cache.window + other * cache.window / reads
    baseline = 1.0 if reuse <= cache.l2 / cache.partitions else 0.0
    window_hits = min(cache.designated, cache.set_aside / cache.partitions) / cache.window
    hits = max(baseline, window_hits)

    def seconds(hit: float) -> float:
        dram_seconds = (other + reads * (1.0 - hit)) / traffic.dram_bytes_per_second
        l2_seconds = 0.0 if traffic.l2_bytes_per_second is None else (other + reads) / traffic.l2_bytes_per_second
        return max(dram_seconds, l2_seconds)

    without, with_window = seconds(baseline), seconds(hits)
    time_ratio = with_window / without
    return dict(reuse_distance_bytes=reuse, baseline_hit_fraction=baseline, seconds_without=without,
                seconds_with=with_window, time_ratio=time_ratio, buys_nothing=time_ratio > 0.98,
                reason=_reason(cache, traffic, reuse, (baseline, window_hits, hits), time_ratio))


def _reason(cache: _Cache, traffic: WindowTraffic, reuse: float, fractions: tuple[float, float, float],
            time_ratio: float) -> str:
    """Why the window helps, or why it does not; `fractions` are the window's hit fractions
    without it, from its persisting lines, and with it."""
    baseline, window_hits, hits = fractions
    reads, other, l2_rate = traffic.window_reads_bytes, traffic.other_bytes, traffic.l2_bytes_per_second
    room = cache.set_aside / cache.partitions
    saved = f"{reads * (hits - baseline) / 2**20:.0f} MiB of DRAM traffic"
    if baseline >= 1.0:
        return (f"the window's lines stay in L2 without it: reuse distance {reuse / 2**20:.0f} MiB <= "
                f"L2 / {cache.partitions} = {cache.l2 / cache.partitions / 2**20:.0f} MiB")
    if cache.designated == 0 or cache.set_aside == 0:
        return "nothing persists: the hit ratio or the set-aside is zero"
    if l2_rate is not None and time_ratio > 0.98 and \
            (other + reads) / l2_rate >= (other + reads * (1.0 - hits)) / traffic.dram_bytes_per_second:
        return "L2 bandwidth, not DRAM, bounds the kernel"
    if time_ratio > 0.98:
        return "the persisting lines are too small a part of the DRAM traffic"
    if cache.designated > room:
        return (f"{window_hits:.0%} of the window persists (the {room / 2**20:.0f} MiB a set-aside of "
                f"{cache.set_aside / 2**20:.0f} MiB holds per partition; the other designated lines evict each "
                f"other: hitRatio {min(1.0, room / cache.window):.2f} would do as well) and saves {saved}")
    return f"{window_hits:.0%} of the window persists and saves {saved}"
