"""The probe registry and the report: `PROBES` (run order and section order), report.json's
schema (`ValidationReport`, `ReportSet`), its Markdown and plots, the prediction check's
report, the family report read back from a report or file, and calibration.json.
"""

from ._calibration_file import write_calibration
from ._family_source import family_report
from ._prediction_report import write_prediction_report
from ._registry import PROBES
from ._report import REPORT_SCHEMA_VERSION, ReportSet, SpreadRow, ValidationReport, render_markdown, write_report

__all__ = [
    "PROBES",
    "REPORT_SCHEMA_VERSION",
    "ReportSet",
    "SpreadRow",
    "ValidationReport",
    "family_report",
    "render_markdown",
    "write_calibration",
    "write_prediction_report",
    "write_report",
]
