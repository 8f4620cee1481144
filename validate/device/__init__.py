"""The GPU and how it is timed: layer 0 of validate, which knows nothing of the probes.

One session (`Session`: a device, its stream, buffers, the L2 flush), one compile path (NVRTC
through cuda.core, `compile_kernels`, `compile_cubin`), one timing loop (`benchmark`, its stop
rules `StopRules`, its timers CUDA events or the host clock), one clock and power sampler
(NVML, `open_clock_monitor`), what the GPU says about itself (`query_device`,
`compare_device`), and the one place CUDA errors become `DeviceError`. The argument checks,
number formats and JSON object type every layer shares live here too.
"""

from ._checks import positive_series
from ._clocks import ClockMonitor, ClockRecord, ClockSample, open_clock_monitor
from ._compile import (
    CompileOptions,
    compile_cubin,
    compile_kernels,
    kernel_resources,
    kernel_source,
    load_object_code,
    with_defines,
)
from ._driver import cuda_errors, cuda_modules, driver_call, require_driver
from ._errors import DeviceError
from ._format import format_mhz, format_ns, format_rate, format_size
from ._info import DeviceComparison, DeviceInfo, compare_device, query_device
from ._json import JsonDict
from ._session import Session, check_session, open_session, takes_session
from ._timers import EventTimer, HostTimer, QueuedEventTimer
from ._timing import MAX_SECONDS, StopRules, Timer, TimingResult, benchmark

__all__ = [
    "ClockMonitor",
    "ClockRecord",
    "ClockSample",
    "CompileOptions",
    "DeviceComparison",
    "DeviceError",
    "DeviceInfo",
    "EventTimer",
    "HostTimer",
    "JsonDict",
    "MAX_SECONDS",
    "QueuedEventTimer",
    "Session",
    "StopRules",
    "Timer",
    "TimingResult",
    "benchmark",
    "check_session",
    "compare_device",
    "compile_cubin",
    "compile_kernels",
    "cuda_errors",
    "cuda_modules",
    "driver_call",
    "format_mhz",
    "format_ns",
    "format_rate",
    "format_size",
    "kernel_resources",
    "kernel_source",
    "load_object_code",
    "open_clock_monitor",
    "open_session",
    "positive_series",
    "query_device",
    "require_driver",
    "takes_session",
    "with_defines",
]
