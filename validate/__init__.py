"""Live validation of the models on a real GPU (cuda-python).

``import validate`` needs no GPU and no cuda-python; the functions that touch the device
import ``cuda.core`` when called and raise `DeviceError` (exit code 3 from the command
line) when it, the driver or a GPU is missing.
"""

from ._ceilings import CEILING_NAMES, Ceiling, Ceilings, measure_ceilings
from ._compile import compile_kernels, kernel_resources, kernel_source, with_defines
from ._cluster_check import ClusterCheck, ClusterMismatch, check_clusters, driver_cluster_answers
from ._device import DeviceComparison, DeviceInfo, FieldDifference, compare_device, gpu_slug, query_device
from ._errors import DeviceError
from ._gpc_layout import GpcLaunch, GpcLayoutMeasurement, measure_gpc_layout
from ._kernel_args import DTYPES, KernelArg, parse_kernel_arg, parse_kernel_args
from ._kernels import KernelCase, VerificationResult, build_case, check_outputs, supported_kernels
from ._measure import ClockReading, Measurement, OutputCheck, benchmark_until_stable, measure
from ._occupancy_check import OccupancyCheck, OccupancyMismatch, ProbeVariant, check_occupancy, probe_source
from ._prediction import PredictionCheck, run_prediction_check
from ._prediction_report import write_prediction_report
from ._resources_check import ResourceMismatch, ResourcesCheck, TritonOccupancy, check_resources, resource_corpus
from ._report import REPORT_SCHEMA_VERSION, ValidationReport, render_markdown, write_report
from ._session import Session, open_session
from ._suite import KernelValidation, PredictionSummary, RegimeSummary, measured_prediction, summarize_predictions
from ._timing import EventTimer, Timer, TimingResult, benchmark, summarize
from ._validate import ValidationRun, run_validation, select_models

__all__ = [
    "CEILING_NAMES",
    "Ceiling",
    "Ceilings",
    "ClockReading",
    "ClusterCheck",
    "ClusterMismatch",
    "DTYPES",
    "DeviceComparison",
    "DeviceError",
    "DeviceInfo",
    "EventTimer",
    "FieldDifference",
    "GpcLaunch",
    "GpcLayoutMeasurement",
    "KernelArg",
    "KernelCase",
    "KernelValidation",
    "Measurement",
    "OccupancyCheck",
    "OccupancyMismatch",
    "OutputCheck",
    "PredictionCheck",
    "PredictionSummary",
    "ProbeVariant",
    "REPORT_SCHEMA_VERSION",
    "RegimeSummary",
    "ResourceMismatch",
    "ResourcesCheck",
    "Session",
    "Timer",
    "TimingResult",
    "TritonOccupancy",
    "ValidationReport",
    "ValidationRun",
    "VerificationResult",
    "benchmark",
    "benchmark_until_stable",
    "build_case",
    "check_clusters",
    "check_occupancy",
    "check_outputs",
    "check_resources",
    "compare_device",
    "compile_kernels",
    "driver_cluster_answers",
    "gpu_slug",
    "kernel_resources",
    "kernel_source",
    "measure",
    "measure_ceilings",
    "measure_gpc_layout",
    "measured_prediction",
    "open_session",
    "parse_kernel_arg",
    "parse_kernel_args",
    "probe_source",
    "query_device",
    "render_markdown",
    "resource_corpus",
    "run_prediction_check",
    "run_validation",
    "select_models",
    "summarize",
    "summarize_predictions",
    "supported_kernels",
    "with_defines",
    "write_prediction_report",
    "write_report",
]
