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
  Black on PCIe Gen3; ComputationalRadiationPhysics/jungfrau-photoncounter issue #18).
  The factor depends on the host's memory system; pass ``pageable_factor`` to override;
* mapped (zero-copy) memory is not copied: the kernel reads it across the link at the
  pinned rate, once per pass over the data (``accesses``), with no copy call to pay for.

A fixed cost per transfer is added: 10 us for a cudaMemcpy call (driver and DMA set-up;
Best Practices Guide: "batching many small transfers into one larger transfer performs
significantly better"), 1 us (one link round trip) for mapped accesses. Both are
assumptions of order of magnitude; pass ``latency_seconds`` to override.
"""

from __future__ import annotations

import math
import numbers
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ._errors import RooflineError

__all__ = [
    "L2Persistence",
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
# No transfer or cache window exceeds a 64-bit address space; the bound keeps times finite.
MAX_BYTES = 2**64

Memory = Literal["pinned", "pageable", "mapped"]


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
    bytes: int = Field(description="Bytes moved per pass.")
    accesses: int = Field(description="Passes over the data across the link (mapped only).")
    link_kind: str = Field(description='"pcie" or "nvlink-c2c".')
    link_bytes_per_second: float = Field(description="Host link rate per direction.")
    efficiency: float = Field(description="Fraction of the link rate the transfer reaches.")
    bytes_per_second: float = Field(description="Rate of the data phase.")
    latency_seconds: float = Field(description="Fixed cost added once.")
    seconds: float = Field(description="latency + accesses x bytes / bytes_per_second.")


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
    accesses: int = 1,
    latency_seconds: float | None = None,
    pageable_factor: float = PAGEABLE_FACTOR,
    efficiency: float = PINNED_EFFICIENCY,
) -> TransferTime:
    """Time to move ``bytes`` between host and device over the GPU's host link.

    Parameters
    ----------
    gpu : roofline.GPU
        Anything with ``host_link.kind`` and ``host_link.bytes_per_second`` (per direction).
    bytes : int or float
        Bytes to move, >= 0.
    memory : {"pinned", "pageable", "mapped"}
        Host allocation: ``cudaMallocHost``/``cudaHostRegister`` (pinned), ``malloc``
        (pageable, staged through a pinned buffer), or ``cudaHostAlloc(...Mapped)`` read
        by the kernel in place (mapped, zero-copy).
    accesses : int
        Times the kernel reads mapped data across the link (mapped memory is not cached
        in device memory); must be 1 for copies.
    latency_seconds : float, optional
        Fixed cost; default 10 us for copies, 1 us for mapped memory.
    pageable_factor : float
        Pageable rate / pinned rate, in (0, 1].
    efficiency : float
        Pinned rate / link rate, in (0, 1].

    Returns
    -------
    TransferTime

    Raises
    ------
    RooflineError
        Negative sizes, an unknown memory kind, factors outside (0, 1].
    TypeError
        A gpu without ``host_link``.

    Examples
    --------
    >>> import roofline
    >>> t = roofline.transfer_time(roofline.gpu("A100-SXM4-40GB"), 1 << 30)  # doctest: +SKIP
    """
    link = getattr(gpu, "host_link", None)
    if link is None or not hasattr(link, "bytes_per_second"):
        raise TypeError(
            f"gpu must have a host_link with bytes_per_second, got {type(gpu).__name__}"
        )
    if not isinstance(memory, str):
        raise TypeError(f"memory must be 'pinned', 'pageable' or 'mapped', not {type(memory).__name__}")
    if memory not in ("pinned", "pageable", "mapped"):
        raise RooflineError(f"memory={memory!r} must be 'pinned', 'pageable' or 'mapped'")
    size = _nonnegative("bytes", bytes)
    if size > MAX_BYTES:
        raise RooflineError(f"bytes={bytes} exceeds {MAX_BYTES} (2**64), more than any address space holds")
    link_rate = _nonnegative("host_link.bytes_per_second", link.bytes_per_second, positive=True)
    for name, value in (("pageable_factor", pageable_factor), ("efficiency", efficiency)):
        if _nonnegative(name, value, positive=True) > 1:
            raise RooflineError(f"{name}={value} must be in (0, 1]")
    if isinstance(accesses, bool) or not isinstance(accesses, numbers.Integral):
        raise TypeError(f"accesses must be an int, got {type(accesses).__name__}")
    if not 1 <= accesses <= 2**31 - 1 or (memory != "mapped" and accesses != 1):
        raise RooflineError(
            f"accesses={accesses} must be from 1 to 2147483647, and 1 unless memory='mapped'"
        )
    if latency_seconds is None:
        latency = MAPPED_LATENCY_SECONDS if memory == "mapped" else MEMCPY_LATENCY_SECONDS
    else:
        latency = _nonnegative("latency_seconds", latency_seconds)
    reached = efficiency * (pageable_factor if memory == "pageable" else 1.0)
    rate = link_rate * reached
    return TransferTime(
        memory=memory,
        bytes=int(size),
        accesses=int(accesses),
        link_kind=str(getattr(link, "kind", "pcie")),
        link_bytes_per_second=link_rate,
        efficiency=reached,
        bytes_per_second=rate,
        latency_seconds=latency,
        seconds=latency + accesses * size / rate,
    )


def l2_persistence(
    window_bytes: int,
    *,
    hit_ratio: float,
    set_aside_bytes: int,
    l2_cache_bytes: int,
    max_persisting_bytes: int | None = None,
) -> L2Persistence:
    """Bytes an L2 access policy window keeps persisting (compute capability 8.0+).

    The hardware gives ``hitProp = cudaAccessPropertyPersisting`` to a random ``hit_ratio``
    share of the window's lines; they compete for the set-aside, whose size
    ``cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, ...)`` caps at
    ``persistingL2CacheMaxSize``. When the designated bytes exceed the set-aside, persisting
    lines evict each other (the Programming Guide's 16 KB set-aside / 32 KB window example
    recommends ``hitRatio = 0.5`` there). Normal and streaming accesses use the rest of L2.

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

    Returns
    -------
    L2Persistence

    Raises
    ------
    RooflineError
        Out-of-range sizes or ratio.
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
        hit_fraction=persisting / window,
        normal_l2_bytes=int(l2 - persisting),
    )
