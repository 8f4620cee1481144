"""Live validation of the models on a real GPU (cuda-python).

``import validate`` needs no GPU and no cuda-python; the functions that touch the device
import ``cuda.core`` when called and raise `DeviceError` (exit code 3 from the command
line) when it, the driver or a GPU is missing.
"""

from .checks import (
    ClusterCheck,
    GpcLayoutMeasurement,
    ResourcesCheck,
    check_clusters,
    check_resources,
    driver_cluster_answers,
    measure_gpc_layout,
)
from .device import (
    DeviceComparison,
    DeviceError,
    DeviceInfo,
    Session,
    TimingResult,
    benchmark,
    compare_device,
    open_session,
    query_device,
)
from .probes import (
    CALIBRATION_FIT_PARAMETERS,
    CalibrationFit,
    FitParameter,
    LaunchOverhead,
    PredictionCheck,
    block_ramp_figure,
    fit_to_measurements,
    measure_launch_overhead,
    run_prediction_check,
)
from .report import (
    REPORT_SCHEMA_VERSION,
    ReportSet,
    ValidationReport,
    family_report,
    render_markdown,
    write_calibration,
    write_prediction_report,
)
from .run import ValidationRun, load_report_set, merge_reports, run_validation, run_validation_devices
from .suite import (
    FAMILIES,
    FamilyRecord,
    FamilyReport,
    FamilyRow,
    FamilySummary,
    family_model,
    measure_families,
    write_family_report,
)
from .user_kernel import KernelArg, Measurement, ProfileRun, measure, parse_kernel_args, profile_program

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
