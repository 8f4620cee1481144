"""Exact CUDA occupancy calculator (compute capability 5.0-12.1), no GPU needed.

>>> import occupancy
>>> occupancy.calculate("sm_90", threads_per_block=256, registers_per_thread=40).occupancy
0.75
"""

import importlib as _importlib
import typing as _typing

if _typing.TYPE_CHECKING:
    from ._arch import MAX_BLOCK_DIMS, MAX_GRID_DIMS, Architecture, architecture, architectures, load_architecture
    from ._block_size import BlockSizeResult, available_dynamic_shared_memory, max_potential_block_size
    from ._calculator import OccupancyResult, calculate, calculate_many
    from ._cliffs import Cliffs, ClusterCliffs, ClusterPoint, ResourceCliffs, Threshold, cliffs
    from ._clusters import (
        SCHEDULING_POLICIES,
        ClusterOccupancy,
        ClusterSizeResult,
        max_active_clusters,
        max_potential_cluster_size,
    )
    from ._compile import CompileError, CompilerNotFoundError
    from ._driver_config import DriverConfiguration
    from ._errors import OccupancyError
    from ._gate import GATE_FIELDS, ResourceChange, ResourceComparison, compare_resources
    from ._gpcs import GpcLayout
    from ._compile_inputs import COMPILERS
    from ._kernel_resources import all_kernel_resources, kernel_resources, kernel_resources_by_architecture
    from ._launch import Launch
    from ._lines import KernelLines, SourceLine
    from ._plot import plot_occupancy
    from ._resources import KernelResources
    from ._rules import LIMITERS, UNLIMITED, OccupancyArrays
    from ._sass import SassCounts, SassLoop, SassSummary, read_sass
    from ._source_build import file_cubin
    from ._source_lines import source_lines

# Each public name and the private module that holds it: a module is imported when one of
# its names is first asked for (PEP 562), so `import occupancy` stays cheap and the command
# line's `calculate` does not import the compiler, the SASS reader or the cluster tables.
_HOMES = {
    "_arch": ("MAX_BLOCK_DIMS", "MAX_GRID_DIMS", "Architecture", "architecture", "architectures", "load_architecture"),
    "_block_size": ("BlockSizeResult", "available_dynamic_shared_memory", "max_potential_block_size"),
    "_calculator": ("OccupancyResult", "calculate", "calculate_many"),
    "_cliffs": ("Cliffs", "ClusterCliffs", "ClusterPoint", "ResourceCliffs", "Threshold", "cliffs"),
    "_clusters": (
        "SCHEDULING_POLICIES", "ClusterOccupancy", "ClusterSizeResult", "max_active_clusters",
        "max_potential_cluster_size",
    ),
    "_compile": ("CompileError", "CompilerNotFoundError"),
    "_compile_inputs": ("COMPILERS",),
    "_driver_config": ("DriverConfiguration",),
    "_errors": ("OccupancyError",),
    "_gate": ("GATE_FIELDS", "ResourceChange", "ResourceComparison", "compare_resources"),
    "_gpcs": ("GpcLayout",),
    "_kernel_resources": ("all_kernel_resources", "kernel_resources", "kernel_resources_by_architecture"),
    "_launch": ("Launch",),
    "_lines": ("KernelLines", "SourceLine"),
    "_plot": ("plot_occupancy",),
    "_resources": ("KernelResources",),
    "_rules": ("LIMITERS", "UNLIMITED", "OccupancyArrays"),
    "_sass": ("SassCounts", "SassLoop", "SassSummary", "read_sass"),
    "_source_build": ("file_cubin",),
    "_source_lines": ("source_lines",),
}
_HOME = {name: module for module, names in _HOMES.items() for name in names}


def __getattr__(name: str) -> object:
    module = _HOME.get(name)
    if module is None:
        raise AttributeError(f"module 'occupancy' has no attribute {name!r}")
    value = getattr(_importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value  # the next look-up is a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


__all__ = [
    "Architecture",
    "BlockSizeResult",
    "COMPILERS",
    "Cliffs",
    "ClusterCliffs",
    "ClusterOccupancy",
    "ClusterPoint",
    "ClusterSizeResult",
    "CompileError",
    "CompilerNotFoundError",
    "DriverConfiguration",
    "GATE_FIELDS",
    "GpcLayout",
    "KernelLines",
    "KernelResources",
    "LIMITERS",
    "Launch",
    "MAX_BLOCK_DIMS",
    "MAX_GRID_DIMS",
    "OccupancyArrays",
    "OccupancyError",
    "OccupancyResult",
    "ResourceChange",
    "ResourceCliffs",
    "ResourceComparison",
    "SCHEDULING_POLICIES",
    "SassCounts",
    "SassLoop",
    "SassSummary",
    "SourceLine",
    "Threshold",
    "UNLIMITED",
    "all_kernel_resources",
    "architecture",
    "architectures",
    "available_dynamic_shared_memory",
    "calculate",
    "calculate_many",
    "cliffs",
    "compare_resources",
    "file_cubin",
    "kernel_resources",
    "kernel_resources_by_architecture",
    "load_architecture",
    "max_active_clusters",
    "max_potential_block_size",
    "max_potential_cluster_size",
    "plot_occupancy",
    "read_sass",
    "source_lines",
]
