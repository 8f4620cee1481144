"""The oracles: gpuroof's calculators checked against the CUDA driver and Nsight Compute.

The occupancy calculator against ``cuOccupancyMaxActiveBlocksPerMultiprocessor``, cluster
occupancy against ``cuOccupancyMaxActiveClusters`` (with the GPC layout measured),
`occupancy.kernel_resources` against the driver's attributes of the same kernels, the shared
harness of those differential checks, and the synthetic launches whose Nsight Compute
launch statistics are compared with the calculator.
"""

from ._clusters import ClusterCheck, check_clusters, driver_cluster_answers
from ._gpc_layout import GpcLayoutMeasurement, measure_gpc_layout
from ._occupancy import OccupancyCheck, OccupancyCheckProbe
from ._resources import ResourcesCheck, check_resources

__all__ = [
    "ClusterCheck",
    "GpcLayoutMeasurement",
    "OccupancyCheck",
    "OccupancyCheckProbe",
    "ResourcesCheck",
    "check_clusters",
    "check_resources",
    "driver_cluster_answers",
    "measure_gpc_layout",
]
