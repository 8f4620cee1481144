"""A suite of kernels on one GPU: each kernel's roofline point, predicted time and occupancy.

`analyze_suite` gives a `SuiteReport` (one `SuiteRow` per kernel), `format_suite_table`
prints it and `write_suite_report` writes it with its chart and plot. `demo_kernels` are the
kernels of ``gpuroof demo``, with their compiled registers per thread (`demo_resources`,
a `DemoResources`).

Examples
--------
>>> from roofline.suite import analyze_suite, demo_kernels
>>> report = analyze_suite("H100 SXM", demo_kernels("H100 SXM"))
>>> len(report.rows) == len(demo_kernels("H100 SXM"))
True
"""

from ._demo import DemoResources, demo_kernels, demo_resources
from ._suite import SuiteReport, SuiteRow, analyze_suite, format_suite_table, write_suite_report

__all__ = [
    "DemoResources",
    "SuiteReport",
    "SuiteRow",
    "analyze_suite",
    "demo_kernels",
    "demo_resources",
    "format_suite_table",
    "write_suite_report",
]
