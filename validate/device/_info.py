"""What the GPU says about itself, as a roofline GPU description matched to the database."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import occupancy
import roofline
from pydantic import BaseModel, ConfigDict, Field

from ._driver import cuda_errors
from ._session import Session, takes_session

if TYPE_CHECKING:
    from cuda.core import Device

__all__ = ["DeviceComparison", "DeviceInfo", "FieldDifference", "compare_device", "gpu_slug", "query_device"]


class DeviceInfo(BaseModel):
    """One GPU as the driver (and NVML, where available) reports it. SI units."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    index: int = Field(ge=0)
    name: str
    compute_capability: str = Field(description='"major.minor", e.g. "9.0".')
    arch: str = Field(description='NVRTC target, e.g. "sm_90".')
    sm_count: int = Field(gt=0)
    clock_hz: float = Field(gt=0, description="Peak SM clock the driver reports.")
    nvml_max_sm_clock_hz: float | None = Field(default=None, description="NVML maximum SM clock.")
    nvml_sm_clock_hz: float | None = Field(default=None, description="NVML SM clock when queried.")
    memory_clock_hz: float = Field(gt=0, description="Peak memory clock the driver reports.")
    memory_bus_width_bits: int = Field(gt=0)
    memory_bandwidth: float = Field(
        gt=0, description="Theoretical DRAM bytes/s: 2 transfers per memory clock x bus width / 8."
    )
    memory_size_bytes: int = Field(gt=0)
    l2_cache_bytes: int = Field(ge=0)
    max_persisting_l2_bytes: int = Field(ge=0)
    shared_memory_per_sm: int = Field(gt=0, description="Bytes.")
    max_shared_memory_per_block: int = Field(gt=0, description="Default per-block limit, bytes.")
    max_shared_memory_per_block_optin: int = Field(gt=0, description="Opt-in per-block limit, bytes.")
    reserved_shared_memory_per_block: int = Field(ge=0, description="Bytes.")
    registers_per_sm: int = Field(gt=0)
    max_registers_per_block: int = Field(gt=0)
    max_threads_per_sm: int = Field(gt=0)
    max_threads_per_block: int = Field(gt=0)
    max_blocks_per_sm: int = Field(gt=0)
    warp_size: int = Field(gt=0)
    ecc_enabled: bool | None = None
    driver_version: str = ""
    cuda_core_version: str = ""
    cuda_bindings_version: str = ""


class FieldDifference(BaseModel):
    """One figure where the device and a description of it disagree."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    field: str
    device: float | int | str
    database: float | int | str | None
    relative_difference: float | None = Field(
        default=None, description="(device - database) / database, for numbers."
    )


class DeviceComparison(BaseModel):
    """The device matched to the roofline database entry and occupancy architecture."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    database_gpu: str | None = Field(description="roofline database name, None when no entry matched.")
    match: str = Field(description="How the entry was found (name lookup, same chip, none).")
    differences: tuple[FieldDifference, ...] = ()
    architecture_differences: tuple[FieldDifference, ...] = Field(
        default=(), description="Device limits that differ from occupancy.architecture(cc)."
    )


@takes_session
def query_device(session: Session) -> DeviceInfo:
    """Read the device's properties through cuda.core (NVML clocks where available).

    Parameters
    ----------
    session : validate.Session
        An open device.

    Returns
    -------
    DeviceInfo
    """
    device = session.device
    with cuda_errors("querying the device"):
        p = device.properties
        cc = device.compute_capability
        major, minor = int(cc.major), int(cc.minor)
        clock_hz = float(p.clock_rate) * 1e3  # kHz, converted once here
        memory_clock_hz = float(p.memory_clock_rate) * 1e3
        bus = int(p.global_memory_bus_width)
        total = session.cuda.driver.cuDeviceTotalMem(device.device_id)
        memory_size = int(total[1]) if int(total[0]) == 0 else 0
        try:
            driver_version = session.cuda.driver.cuDriverGetVersion()[1]
            driver_text = f"{driver_version // 1000}.{driver_version % 1000 // 10}"
        except Exception:  # noqa: BLE001 - informational only
            driver_text = ""
        ecc = _maybe(lambda: bool(p.ecc_enabled))
        info = dict(
            index=session.index,
            name=str(device.name),
            compute_capability=f"{major}.{minor}",
            arch=f"sm_{major}{minor}",
            sm_count=int(p.multiprocessor_count),
            clock_hz=clock_hz,
            memory_clock_hz=memory_clock_hz,
            memory_bus_width_bits=bus,
            memory_bandwidth=2.0 * memory_clock_hz * bus / 8,
            memory_size_bytes=max(memory_size, 1),
            l2_cache_bytes=int(p.l2_cache_size),
            max_persisting_l2_bytes=int(_maybe(lambda: p.max_persisting_l2_cache_size) or 0),
            shared_memory_per_sm=int(p.max_shared_memory_per_multiprocessor),
            max_shared_memory_per_block=int(p.max_shared_memory_per_block),
            max_shared_memory_per_block_optin=int(p.max_shared_memory_per_block_optin),
            reserved_shared_memory_per_block=int(_maybe(lambda: p.reserved_shared_memory_per_block) or 0),
            registers_per_sm=int(p.max_registers_per_multiprocessor),
            max_registers_per_block=int(p.max_registers_per_block),
            max_threads_per_sm=int(p.max_threads_per_multiprocessor),
            max_threads_per_block=int(p.max_threads_per_block),
            max_blocks_per_sm=int(p.max_blocks_per_multiprocessor),
            warp_size=int(p.warp_size),
            ecc_enabled=ecc,
            driver_version=driver_text,
            cuda_core_version=session.cuda.core_version,
            cuda_bindings_version=session.cuda.bindings_version,
        )
    info.update(_nvml_clocks(device))
    return DeviceInfo(**info)


def _maybe(read: Callable[[], object]) -> Any:
    try:
        return read()
    except Exception:  # noqa: BLE001 - optional properties differ between drivers
        return None


def _nvml_clocks(device: Device) -> dict[str, float]:
    """SM clocks from NVML through cuda.core.system, MHz converted to Hz; {} if unavailable."""
    try:
        clock = device.to_system_device().get_clock("sm")
        return {
            "nvml_max_sm_clock_hz": float(clock.get_max_mhz()) * 1e6,
            "nvml_sm_clock_hz": float(clock.get_current_mhz()) * 1e6,
        }
    except Exception:  # noqa: BLE001 - NVML is optional (containers, older cuda.core)
        return {}


def _difference(field: str, device: object, database: object, tolerance: float = 0.0) -> FieldDifference | None:
    if database is None:
        return None
    if isinstance(device, (int, float)) and isinstance(database, (int, float)):
        relative = (device - database) / database if database else None
        if relative is not None and abs(relative) <= tolerance:
            return None
        if relative is None and device == database:
            return None
        return FieldDifference(field=field, device=device, database=database, relative_difference=relative)
    if str(device) == str(database):
        return None
    return FieldDifference(field=field, device=str(device), database=str(database))


def _find_entry(info: DeviceInfo) -> tuple[roofline.GPU | None, str]:
    for candidate in (info.name, re.sub(r"^NVIDIA\s+", "", info.name)):
        try:
            return roofline.gpu(candidate), "name"
        except roofline.RooflineError:  # not this spelling: try the next, then the same chip
            continue
    # No name match: the entry of the same chip (compute capability and SM count) whose
    # DRAM bandwidth is closest to the device's.
    same = [g for g in roofline.gpus() if g.compute_capability == info.compute_capability and g.sm_count == info.sm_count]
    if same:
        best = min(same, key=lambda g: abs(g.memory_bandwidth - info.memory_bandwidth))
        return best, "same compute capability and SM count, closest DRAM bandwidth"
    return None, "none"


def compare_device(info: DeviceInfo) -> tuple[roofline.GPU | None, DeviceComparison]:
    """Match the device to a roofline database entry and list the figures that differ.

    Returns
    -------
    (roofline.GPU or None, DeviceComparison)
        The matched entry (None when nothing matches) and the comparison.
    """
    if not isinstance(info, DeviceInfo):
        raise TypeError(f"info must be a validate.DeviceInfo, not {type(info).__name__}")
    entry, how = _find_entry(info)
    differences: list[FieldDifference | None] = []
    if entry is not None:
        differences += [
            _difference("compute_capability", info.compute_capability, entry.compute_capability),
            _difference("sm_count", info.sm_count, entry.sm_count),
            _difference("boost_clock_hz", info.clock_hz, entry.boost_clock_hz, 0.005),
            _difference("memory_bus_width_bits", info.memory_bus_width_bits, entry.memory_bus_width_bits),
            _difference("memory_bandwidth", info.memory_bandwidth, entry.memory_bandwidth, 0.01),
            _difference("l2_cache_bytes", info.l2_cache_bytes, entry.l2_cache_bytes, 0.01),
            _difference("memory_size_bytes", info.memory_size_bytes, entry.memory_size_bytes, 0.10),
        ]
    arch_differences: list[FieldDifference | None] = []
    try:
        arch = occupancy.architecture(info.compute_capability)
    except ValueError:
        arch = None
    if arch is not None:
        pairs = {
            "shared_memory_per_sm": "shared_memory_per_sm",
            "max_shared_memory_per_block": "max_shared_memory_per_block",
            "max_shared_memory_per_block_optin": "max_shared_memory_per_block_optin",
            "reserved_shared_memory_per_block": "reserved_shared_memory_per_block",
            "registers_per_sm": "registers_per_sm",
            "max_registers_per_block": "max_registers_per_block",
            "max_threads_per_sm": "max_threads_per_sm",
            "max_threads_per_block": "max_threads_per_block",
            "max_blocks_per_sm": "max_blocks_per_sm",
            "warp_size": "warp_size",
        }
        for device_field, arch_field in pairs.items():
            arch_differences.append(
                _difference(device_field, getattr(info, device_field), getattr(arch, arch_field, None))
            )
    return entry, DeviceComparison(
        database_gpu=None if entry is None else entry.name,
        match=how,
        differences=tuple(d for d in differences if d is not None),
        architecture_differences=tuple(d for d in arch_differences if d is not None),
    )


def gpu_slug(name: str) -> str:
    """A folder name for a GPU: lower case, runs of other characters as one hyphen.

    Examples
    --------
    >>> gpu_slug("H100-SXM")
    'h100-sxm'
    >>> gpu_slug("NVIDIA H200")
    'nvidia-h200'
    """
    if not isinstance(name, str):
        raise TypeError(f"name must be a str, not {type(name).__name__}")
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "gpu"
