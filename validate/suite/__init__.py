"""Known kernels measured against `roofline.predict`: the models' suite (CUDA implementations of
`roofline.models`, each checked against numpy, timed and predicted) and the kernel families
(`measure_families`, the error per family in `FamilyReport`).
"""

from ._families import FAMILIES, FamilyRecord, check_families, family_model, measure_families
from ._family_report import (
    FamiliesProbe,
    FamilyReport,
    FamilyRow,
    FamilySummary,
    family_rows,
    plot_families,
    render_family_markdown,
    write_family_report,
)
from ._suite import KernelValidation, PredictionSummary, SuiteProbe

__all__ = [
    "FAMILIES",
    "FamiliesProbe",
    "FamilyRecord",
    "FamilyReport",
    "FamilyRow",
    "FamilySummary",
    "KernelValidation",
    "PredictionSummary",
    "SuiteProbe",
    "check_families",
    "family_model",
    "family_rows",
    "measure_families",
    "plot_families",
    "render_family_markdown",
    "write_family_report",
]
