"""A whole ``gpuroof validate`` run: `run_validation` on one GPU (the registry's probes in a loop,
then the report), `run_validation_devices` on every GPU of a host, and merging reports of
many devices or hosts.
"""

from ._multi import load_report_set, merge_reports, run_validation_devices
from ._run import ValidationRun, run_validation

__all__ = [
    "ValidationRun",
    "load_report_set",
    "merge_reports",
    "run_validation",
    "run_validation_devices",
]
