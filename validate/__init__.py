"""Live validation of the models on a real GPU (cuda-python).

``import validate`` needs no GPU and no cuda-python; the functions that touch the device
import ``cuda.core`` when called and raise `DeviceError` (exit code 3 from the command
line) when it, the driver or a GPU is missing.
"""

from ._cluster_check import ClusterCheck, check_clusters, driver_cluster_answers
from ._device import DeviceComparison, DeviceInfo, compare_device, query_device
from ._errors import DeviceError
from ._families import FAMILIES, FamilyRecord, family_model, measure_families
from ._family_report import FamilyReport, FamilyRow, FamilySummary, write_family_report
from ._family_source import family_report
from ._files import write_calibration
from ._fit import CALIBRATION_FIT_PARAMETERS, CalibrationFit, FitParameter, fit_to_measurements
from ._gpc_layout import GpcLayoutMeasurement, measure_gpc_layout
from ._kernel_args import KernelArg, parse_kernel_args
from ._measure import Measurement, measure
from ._launch import LaunchOverhead, block_ramp_figure, measure_launch_overhead
from ._multi import load_report_set, merge_reports, run_validation_devices
from ._ncu_profile import ProfileRun, profile_program
from ._prediction import PredictionCheck, run_prediction_check
from ._prediction_report import write_prediction_report
from ._report import REPORT_SCHEMA_VERSION, ReportSet, ValidationReport, render_markdown
from ._resources_check import ResourcesCheck, check_resources
from ._session import Session, open_session
from ._timing import TimingResult, benchmark
from ._validate import ValidationRun, run_validation

__all__ = [
    "CALIBRATION_FIT_PARAMETERS",
    "CalibrationFit",
    "ClusterCheck",
    "DeviceComparison",
    "DeviceError",
    "DeviceInfo",
    "FAMILIES",
    "FamilyRecord",
    "FamilyReport",
    "FamilyRow",
    "FamilySummary",
    "FitParameter",
    "GpcLayoutMeasurement",
    "KernelArg",
    "LaunchOverhead",
    "Measurement",
    "PredictionCheck",
    "ProfileRun",
    "REPORT_SCHEMA_VERSION",
    "ReportSet",
    "ResourcesCheck",
    "Session",
    "TimingResult",
    "ValidationReport",
    "ValidationRun",
    "benchmark",
    "block_ramp_figure",
    "check_clusters",
    "check_resources",
    "compare_device",
    "driver_cluster_answers",
    "family_model",
    "family_report",
    "fit_to_measurements",
    "load_report_set",
    "measure",
    "measure_families",
    "measure_gpc_layout",
    "measure_launch_overhead",
    "merge_reports",
    "open_session",
    "parse_kernel_args",
    "profile_program",
    "query_device",
    "render_markdown",
    "run_prediction_check",
    "run_validation",
    "run_validation_devices",
    "write_calibration",
    "write_family_report",
    "write_prediction_report",
]
