"""Exact CUDA occupancy calculator (compute capability 5.0-12.1), no GPU needed.

>>> import occupancy
>>> occupancy.calculate("sm_90", threads_per_block=256, registers_per_thread=40).occupancy
0.75
"""

from ._arch import MAX_BLOCK_DIMS, MAX_GRID_DIMS, Architecture, architecture, architectures, load_architecture
from ._calculator import OccupancyArrays, OccupancyResult, calculate, calculate_many
from ._cliffs import Cliffs, ResourceCliffs, Threshold, cliffs
from ._errors import OccupancyError
from ._launch import BlockSizeResult, available_dynamic_shared_memory, max_potential_block_size
from ._plot import plot_occupancy
from ._rules import LIMITERS, UNLIMITED

__all__ = [
    "Architecture",
    "BlockSizeResult",
    "Cliffs",
    "LIMITERS",
    "MAX_BLOCK_DIMS",
    "MAX_GRID_DIMS",
    "OccupancyArrays",
    "OccupancyError",
    "OccupancyResult",
    "ResourceCliffs",
    "Threshold",
    "UNLIMITED",
    "architecture",
    "architectures",
    "available_dynamic_shared_memory",
    "calculate",
    "calculate_many",
    "cliffs",
    "load_architecture",
    "max_potential_block_size",
    "plot_occupancy",
]
