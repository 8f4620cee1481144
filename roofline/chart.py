"""Roofline charts: the ceilings and kernel points of one GPU, saved, read back and plotted.

`roofline_chart` builds a `RooflineChart` (its `Ceiling` lines, one `ChartPoint` per kernel
and memory level, and the `BandwidthPoint` of each kernel's achieved bandwidth; each point's
``origin`` says what it is: "roofline", the roofline's bound; "model", the time model's time
(``model_seconds=``); "measured", what was measured, `Measurements`);
`profile_chart` builds one from a profile's report, `save_chart` writes it as JSON or CSV (schema `CHART_SCHEMA_VERSION`), `load_chart` reads
it back, and `plot_roofline` draws it (matplotlib loads only when a chart is drawn).

Examples
--------
>>> import roofline
>>> from roofline.chart import roofline_chart
>>> chart = roofline_chart("H100 SXM", [roofline.Kernel(flops=2**26, dram_bytes=12 * 2**26)])
>>> chart.points[0].bound, chart.points[0].origin
('dram', 'roofline')
"""

from ._chart import (
    CHART_SCHEMA_VERSION,
    BandwidthPoint,
    Ceiling,
    ChartPoint,
    Measurements,
    RooflineChart,
    roofline_chart,
)
from ._export import load_chart, save_chart
from ._plot import plot_roofline
from ._profile import profile_chart

__all__ = [
    "BandwidthPoint",
    "CHART_SCHEMA_VERSION",
    "Ceiling",
    "ChartPoint",
    "Measurements",
    "RooflineChart",
    "load_chart",
    "plot_roofline",
    "profile_chart",
    "roofline_chart",
    "save_chart",
]
