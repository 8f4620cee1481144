"""Live validation of the models on a real GPU (cuda-python).

``import validate`` needs no GPU and no cuda-python; the functions that touch the device
import ``cuda.core`` when called and raise `DeviceError` (exit code 3 from the command
line) when it, the driver or a GPU is missing.
"""

from ._calibration import measured_calibration
from ._ceilings import CEILING_NAMES, Ceiling, Ceilings, measure_ceilings
from ._clocks import ClockMonitor, ClockRecord, ClockSample, clock_record, open_clock_monitor
from ._cluster_check import ClusterCheck, ClusterMismatch, check_clusters, driver_cluster_answers
from ._compile import compile_kernels, kernel_resources, kernel_source, with_defines
from ._device import DeviceComparison, DeviceInfo, FieldDifference, compare_device, gpu_slug, query_device
from ._errors import DeviceError
from ._families import FAMILIES, FamilyRecord, family_model, measure_families
from ._family_report import (
    FamilyReport,
    FamilyRow,
    FamilySummary,
    family_report,
    plot_families,
    render_family_markdown,
    write_family_report,
)
from ._files import write_calibration
from ._fit import CALIBRATION_FIT_PARAMETERS, CalibrationFit, FitParameter, fit_to_measurements
from ._gpc_layout import GpcLaunch, GpcLayoutMeasurement, measure_gpc_layout
from ._hostlink import HostLinkFit, HostLinkPoint, HostLinks, fit_link, measure_host_links
from ._kernel_args import DTYPES, KernelArg, parse_kernel_arg, parse_kernel_args
from ._kernels import KernelCase, VerificationResult, build_case, check_outputs, supported_kernels
from ._latency import ChasePlan, ChasePoint, LatencyLadder, LatencyLevels, measure_latency_ladder, split_modes
from ._launch import LaunchOverhead, QueuedEventTimer, measure_launch_overhead
from ._measure import ClockReading, Measurement, OutputCheck, benchmark_until_stable, measure
from ._multi import device_spread, load_report_set, merge_reports, run_validation_devices
from ._occupancy_check import OccupancyCheck, OccupancyMismatch, ProbeVariant, check_occupancy, probe_source
from ._persistence import Persistence, PersistencePoint, measure_persistence
from ._prediction import PredictionCheck, fit_calibration, run_prediction_check
from ._prediction_report import write_prediction_report
from ._reference import Reference, References, apply_references, measure_references
from ._report import REPORT_SCHEMA_VERSION, ReportSet, SpreadRow, ValidationReport, render_markdown, write_report
from ._resources_check import ResourceMismatch, ResourcesCheck, TritonOccupancy, check_resources, resource_corpus
from ._session import Session, open_session
from ._suite import KernelValidation, PredictionSummary, RegimeSummary, measured_prediction, summarize_predictions
from ._timing import EventTimer, Timer, TimingResult, benchmark, summarize
from ._validate import ValidationRun, run_validation, select_models
from ._workingset import WorkingSet, WorkingSetPoint, measure_working_set

__all__ = [
    "CALIBRATION_FIT_PARAMETERS",
    "CEILING_NAMES",
    "CalibrationFit",
    "Ceiling",
    "Ceilings",
    "ChasePlan",
    "ChasePoint",
    "ClockMonitor",
    "ClockReading",
    "ClockRecord",
    "ClockSample",
    "ClusterCheck",
    "ClusterMismatch",
    "DTYPES",
    "DeviceComparison",
    "DeviceError",
    "DeviceInfo",
    "EventTimer",
    "FAMILIES",
    "FamilyRecord",
    "FamilyReport",
    "FamilyRow",
    "FamilySummary",
    "FieldDifference",
    "FitParameter",
    "GpcLaunch",
    "GpcLayoutMeasurement",
    "HostLinkFit",
    "HostLinkPoint",
    "HostLinks",
    "KernelArg",
    "KernelCase",
    "KernelValidation",
    "LatencyLadder",
    "LatencyLevels",
    "LaunchOverhead",
    "Measurement",
    "OccupancyCheck",
    "OccupancyMismatch",
    "OutputCheck",
    "Persistence",
    "PersistencePoint",
    "PredictionCheck",
    "PredictionSummary",
    "ProbeVariant",
    "QueuedEventTimer",
    "REPORT_SCHEMA_VERSION",
    "Reference",
    "References",
    "RegimeSummary",
    "ReportSet",
    "ResourceMismatch",
    "ResourcesCheck",
    "Session",
    "SpreadRow",
    "Timer",
    "TimingResult",
    "TritonOccupancy",
    "ValidationReport",
    "ValidationRun",
    "VerificationResult",
    "WorkingSet",
    "WorkingSetPoint",
    "apply_references",
    "benchmark",
    "benchmark_until_stable",
    "build_case",
    "check_clusters",
    "check_occupancy",
    "check_outputs",
    "check_resources",
    "clock_record",
    "compare_device",
    "compile_kernels",
    "device_spread",
    "driver_cluster_answers",
    "family_model",
    "family_report",
    "fit_calibration",
    "fit_link",
    "fit_to_measurements",
    "gpu_slug",
    "kernel_resources",
    "kernel_source",
    "load_report_set",
    "measure",
    "measure_ceilings",
    "measure_families",
    "measure_gpc_layout",
    "measure_host_links",
    "measure_latency_ladder",
    "measure_launch_overhead",
    "measure_persistence",
    "measure_references",
    "measure_working_set",
    "measured_calibration",
    "measured_prediction",
    "merge_reports",
    "open_clock_monitor",
    "open_session",
    "parse_kernel_arg",
    "parse_kernel_args",
    "plot_families",
    "probe_source",
    "query_device",
    "render_family_markdown",
    "render_markdown",
    "resource_corpus",
    "run_prediction_check",
    "run_validation",
    "run_validation_devices",
    "select_models",
    "split_modes",
    "summarize",
    "summarize_predictions",
    "supported_kernels",
    "with_defines",
    "write_calibration",
    "write_family_report",
    "write_prediction_report",
    "write_report",
]
