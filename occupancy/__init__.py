"""Exact CUDA occupancy calculator (compute capability 5.0-12.1), no GPU needed.

>>> import occupancy
>>> occupancy.calculate("sm_90", threads_per_block=256, registers_per_thread=40).occupancy
0.75
"""

from ._arch import MAX_BLOCK_DIMS, MAX_GRID_DIMS, Architecture, architecture, architectures, load_architecture
from ._calculator import OccupancyArrays, OccupancyResult, calculate, calculate_many
from ._cliffs import Cliffs, ClusterCliffs, ClusterPoint, ResourceCliffs, Threshold, cliffs
from ._clusters import (
    SCHEDULING_POLICIES,
    ClusterOccupancy,
    ClusterSizeResult,
    max_active_clusters,
    max_potential_cluster_size,
)
from ._compile import CompileError
from ._driver_config import DriverConfiguration
from ._errors import OccupancyError
from ._gpcs import GpcLayout, gpc_layout, gpc_layouts
from ._kernel_launch import Launch
from ._kernel_resources import all_kernel_resources, kernel_resources
from ._launch import BlockSizeResult, available_dynamic_shared_memory, max_potential_block_size
from ._plot import plot_occupancy
from ._resources import KernelResources
from ._rules import LIMITERS, UNLIMITED
from ._sass import SassCounts, SassLoop, SassSummary

__all__ = [
    "Architecture",
    "BlockSizeResult",
    "Cliffs",
    "ClusterCliffs",
    "ClusterOccupancy",
    "ClusterPoint",
    "ClusterSizeResult",
    "CompileError",
    "DriverConfiguration",
    "GpcLayout",
    "KernelResources",
    "LIMITERS",
    "Launch",
    "MAX_BLOCK_DIMS",
    "MAX_GRID_DIMS",
    "OccupancyArrays",
    "OccupancyError",
    "OccupancyResult",
    "ResourceCliffs",
    "SCHEDULING_POLICIES",
    "SassCounts",
    "SassLoop",
    "SassSummary",
    "Threshold",
    "UNLIMITED",
    "all_kernel_resources",
    "architecture",
    "architectures",
    "available_dynamic_shared_memory",
    "calculate",
    "calculate_many",
    "cliffs",
    "gpc_layout",
    "gpc_layouts",
    "kernel_resources",
    "load_architecture",
    "max_active_clusters",
    "max_potential_block_size",
    "max_potential_cluster_size",
    "plot_occupancy",
]
