"""Clocks and power around a measurement (NVML through pynvml), and the throttling verdict.

A ceiling measured while the GPU slowed itself down (power cap, thermal or hardware
slowdown) is not the chip's ceiling; the report says so. NVML is optional: without
``pynvml`` (package ``nvidia-ml-py``) the records say that nothing could be read.

NVML clock-event reason bits (``nvml.h``'s ``nvmlClocksEventReason*``; older headers name the
same bits ``nvmlClocksThrottleReason*``): 0x1 GPU idle, 0x2 application clocks setting, 0x4 software
power cap, 0x8 hardware slowdown, 0x10 sync boost, 0x20 software thermal slowdown, 0x40
hardware thermal slowdown, 0x80 hardware power brake, 0x100 display clock setting.
"""

from __future__ import annotations

import statistics
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from types import ModuleType
from contextlib import contextmanager
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ._checks import check_callables, check_optional_positive, check_positive

__all__ = [
    "THROTTLE_REASONS",
    "ClockMonitor",
    "ClockRecord",
    "ClockSample",
    "clock_record",
    "open_clock_monitor",
    "reason_names",
]

_FROZEN = ConfigDict(frozen=True, extra="forbid")

REASON_BITS = {
    0x1: "gpu_idle",
    0x2: "applications_clocks_setting",
    0x4: "sw_power_cap",
    0x8: "hw_slowdown",
    0x10: "sync_boost",
    0x20: "sw_thermal_slowdown",
    0x40: "hw_thermal_slowdown",
    0x80: "hw_power_brake_slowdown",
    0x100: "display_clock_setting",
}

#: Reasons that mean the GPU ran below the clock it would otherwise have chosen.
THROTTLE_REASONS = frozenset(
    {"sw_power_cap", "hw_slowdown", "sw_thermal_slowdown", "hw_thermal_slowdown", "hw_power_brake_slowdown"}
)

#: A busy GPU whose SM clock stays below this fraction of its maximum is flagged even
#: when NVML names no reason.
LOW_CLOCK_FRACTION = 0.90


def reason_names(mask: int) -> tuple[str, ...]:
    """The names of the reason bits set in an NVML clock-event ``mask``.

    Examples
    --------
    >>> reason_names(0x4 | 0x1)
    ('gpu_idle', 'sw_power_cap')
    """
    return tuple(name for bit, name in sorted(REASON_BITS.items()) if mask & bit)


class ClockSample(BaseModel):
    """One NVML reading. SI units; None where NVML would not say."""

    model_config = _FROZEN

    seconds: float = Field(description="Time since the monitor started, seconds.")
    sm_clock_hz: float | None = None
    memory_clock_hz: float | None = None
    power_watts: float | None = None
    temperature_celsius: float | None = None
    performance_state: int | None = Field(default=None, description="P-state: 0 is full performance.")
    reasons: tuple[str, ...] = ()


class ClockRecord(BaseModel):
    """Clocks and power before, during and after one measurement."""

    model_config = _FROZEN

    before: ClockSample | None
    after: ClockSample | None
    samples_during: int = Field(ge=0, description="Readings taken while the measurement ran.")
    max_sm_clock_hz: float | None = Field(default=None, description="The device's maximum SM clock (NVML).")
    power_limit_watts: float | None = None
    min_sm_clock_hz: float | None = Field(default=None, description="Lowest SM clock read while busy.")
    median_sm_clock_hz: float | None = None
    max_power_watts: float | None = None
    reasons: tuple[str, ...] = Field(default=(), description="Every clock-event reason seen.")
    throttled: bool | None = Field(description="None when NVML could not be read.")
    note: str = ""


def clock_record(samples: Sequence[ClockSample], *, before: ClockSample | None, after: ClockSample | None,
                 max_sm_clock_hz: float | None, power_limit_watts: float | None = None) -> ClockRecord:
    """Summarize the readings of one measurement and decide whether it ran throttled.

    Throttled means: a throttling reason (`THROTTLE_REASONS`) in any reading taken during
    the measurement or right after it, or a busy SM clock (a reading without ``gpu_idle``)
    below `LOW_CLOCK_FRACTION` of the maximum.

    Parameters
    ----------
    samples : sequence of ClockSample
        Readings taken while the measurement ran.
    before, after : ClockSample or None
        Readings just before and just after.
    max_sm_clock_hz : float or None
        The device's maximum SM clock, Hz.
    power_limit_watts : float or None
        Enforced power limit, W.

    Returns
    -------
    ClockRecord

    Raises
    ------
    TypeError
        When `samples` is not a sequence of `ClockSample`, or `before`/`after` is neither a
        `ClockSample` nor None.
    roofline.RooflineError
        When `max_sm_clock_hz` or `power_limit_watts` is given but not a positive finite number.

    Examples
    --------
    >>> hot = ClockSample(seconds=0.1, sm_clock_hz=1.5e9, reasons=("sw_power_cap",))
    >>> clock_record([hot], before=None, after=None, max_sm_clock_hz=1.98e9).throttled
    True
    """
    if isinstance(samples, (str, bytes)) or not isinstance(samples, Sequence):
        raise TypeError(f"samples must be a sequence of ClockSample, not {type(samples).__name__}")
    for name, sample in (*((f"samples[{i}]", s) for i, s in enumerate(samples)), ("before", before), ("after", after)):
        if sample is not None and not isinstance(sample, ClockSample):
            raise TypeError(f"{name} must be a ClockSample, not {type(sample).__name__}")
    max_sm_clock_hz = check_optional_positive("max_sm_clock_hz", max_sm_clock_hz)
    power_limit_watts = check_optional_positive("power_limit_watts", power_limit_watts)
    readings = [s for s in (*samples, after) if s is not None]
    if not readings and before is None:
        return ClockRecord(before=None, after=None, samples_during=0, throttled=None,
                           note="NVML not available: clocks not read")
    busy = [s for s in readings if "gpu_idle" not in s.reasons and s.sm_clock_hz is not None]
    clocks = [s.sm_clock_hz for s in busy]
    seen = sorted({r for s in readings for r in s.reasons})
    throttling = sorted(set(seen) & THROTTLE_REASONS)
    low = bool(clocks and max_sm_clock_hz and min(clocks) < LOW_CLOCK_FRACTION * max_sm_clock_hz)
    notes = []
    if throttling:
        notes.append("throttled: " + ", ".join(throttling))
    if low:
        notes.append(f"SM clock down to {min(clocks) / 1e6:.0f} of {max_sm_clock_hz / 1e6:.0f} MHz")
    powers = [s.power_watts for s in readings if s.power_watts is not None]
    return ClockRecord(
        before=before, after=after, samples_during=len(samples), max_sm_clock_hz=max_sm_clock_hz,
        power_limit_watts=power_limit_watts, min_sm_clock_hz=min(clocks) if clocks else None,
        median_sm_clock_hz=statistics.median(clocks) if clocks else None,
        max_power_watts=max(powers) if powers else None, reasons=tuple(seen),
        throttled=bool(throttling) or low, note="; ".join(notes),
    )


class ClockMonitor:
    """Reads one GPU's clocks through NVML; `watch` samples them around a measurement.

    Parameters
    ----------
    read : callable
        Returns a `ClockSample` (given the seconds since start); injected in tests.
    max_sm_clock_hz, power_limit_watts : float or None
        Fixed device figures.
    interval_seconds : float
        Time between readings while a measurement runs, in (0, 1] s.

    Raises
    ------
    TypeError
        When `read` is neither callable nor None, or a figure is not a number.
    roofline.RooflineError
        When a figure given is not positive and finite.
    """

    def __init__(self, read: Callable[[float], ClockSample] | None, *, max_sm_clock_hz: float | None = None,
                 power_limit_watts: float | None = None, interval_seconds: float = 0.005) -> None:
        check_callables(read=read)
        self._read = read
        # Checked here, not when the record is made after a measurement that took minutes.
        self.max_sm_clock_hz = check_optional_positive("max_sm_clock_hz", max_sm_clock_hz)
        self.power_limit_watts = check_optional_positive("power_limit_watts", power_limit_watts)
        self.interval_seconds = check_positive("interval_seconds", interval_seconds, 1.0, " s")
        self._start = time.perf_counter()

    @property
    def available(self) -> bool:
        """Whether NVML answered when the monitor was opened."""
        return self._read is not None

    def sample(self) -> ClockSample | None:
        """One reading now (None without NVML)."""
        if self._read is None:
            return None
        return self._read(time.perf_counter() - self._start)

    @contextmanager
    def sampling(self) -> Iterator[list[ClockSample]]:
        """Sample in a background thread while the block runs, every ``interval_seconds``.

        Yields the list the readings are appended to (complete once the block has finished;
        empty without NVML).
        """
        samples: list[ClockSample] = []
        stop = threading.Event()

        def sampler() -> None:
            while not stop.wait(self.interval_seconds):
                reading = self.sample()
                if reading is not None:
                    samples.append(reading)

        thread = threading.Thread(target=sampler, daemon=True) if self.available else None
        if thread is not None:
            thread.start()
        try:
            yield samples
        finally:
            stop.set()
            if thread is not None:
                thread.join()

    @contextmanager
    def watch(self) -> Iterator[list[ClockRecord]]:
        """Sample before, during (a background thread) and after the block.

        Yields a list that holds the `ClockRecord` once the block has finished.
        """
        result: list[ClockRecord] = []
        before = self.sample()
        try:
            with self.sampling() as samples:
                yield result
        finally:
            after = self.sample()
            result.append(clock_record(samples, before=before, after=after, max_sm_clock_hz=self.max_sm_clock_hz,
                                       power_limit_watts=self.power_limit_watts))


def _nvml_reader(nvml: ModuleType, handle: object) -> Callable[[float], ClockSample]:
    def optional(read: Callable[[], object]) -> Any:
        try:
            return read()
        except nvml.NVMLError:  # a field this GPU or driver does not report
            return None

    events = getattr(nvml, "nvmlDeviceGetCurrentClocksEventReasons", None) or \
        nvml.nvmlDeviceGetCurrentClocksThrottleReasons

    def read(seconds: float) -> ClockSample:
        sm = optional(lambda: nvml.nvmlDeviceGetClockInfo(handle, nvml.NVML_CLOCK_SM))
        memory = optional(lambda: nvml.nvmlDeviceGetClockInfo(handle, nvml.NVML_CLOCK_MEM))
        power = optional(lambda: nvml.nvmlDeviceGetPowerUsage(handle))
        temperature = optional(lambda: nvml.nvmlDeviceGetTemperature(handle, nvml.NVML_TEMPERATURE_GPU))
        state = optional(lambda: nvml.nvmlDeviceGetPerformanceState(handle))
        mask = optional(lambda: events(handle))
        return ClockSample(
            seconds=seconds,
            sm_clock_hz=None if sm is None else sm * 1e6,  # MHz, converted once here
            memory_clock_hz=None if memory is None else memory * 1e6,
            power_watts=None if power is None else power / 1e3,  # mW
            temperature_celsius=None if temperature is None else float(temperature),
            performance_state=None if state is None else int(state),
            reasons=reason_names(int(mask)) if mask is not None else (),
        )

    return read


def open_clock_monitor(pci_bus_id: str | None) -> ClockMonitor:
    """A monitor of the GPU at ``pci_bus_id`` ("0000:1b:00.0"), or one that reads nothing.

    NVML is matched to the CUDA device by PCI bus id, because NVML's device order and
    CUDA's need not agree (CUDA_VISIBLE_DEVICES, CUDA_DEVICE_ORDER).

    Raises
    ------
    TypeError
        For a ``pci_bus_id`` that is neither a str nor None.
    """
    if pci_bus_id is not None and not isinstance(pci_bus_id, str):
        raise TypeError(f"pci_bus_id must be a str such as '0000:1b:00.0' or None, not {type(pci_bus_id).__name__}")
    if not pci_bus_id:
        return ClockMonitor(None)
    try:
        import pynvml as nvml
    except ImportError:
        return ClockMonitor(None)
    try:
        nvml.nvmlInit()
        handle = nvml.nvmlDeviceGetHandleByPciBusId(pci_bus_id.encode())
    except nvml.NVMLError:
        return ClockMonitor(None)
    read = _nvml_reader(nvml, handle)

    def fixed(read_one: Callable[[], object], scale: float) -> float | None:
        try:
            value = float(read_one()) * scale
        except nvml.NVMLError:
            return None
        return value if value > 0 else None  # 0: a figure this GPU or driver does not report

    return ClockMonitor(
        read,
        max_sm_clock_hz=fixed(lambda: nvml.nvmlDeviceGetMaxClockInfo(handle, nvml.NVML_CLOCK_SM), 1e6),
        power_limit_watts=fixed(lambda: nvml.nvmlDeviceGetEnforcedPowerLimit(handle), 1e-3),
    )
