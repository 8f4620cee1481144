"""Roofline models, the GPU database and plots.

How fast can a kernel possibly go on a given GPU, and what is in the way: DRAM, a cache
level, or arithmetic? Every ceiling is derived from datasheet facts and says where it
came from. A kernel that ran (profiled, or timed by ``validate.measure``) becomes the same
`Kernel` with its launch through `measured_launch` and `counted_kernel`.

>>> import roofline
>>> h100 = roofline.gpu("H100 SXM")
>>> r = roofline.analyze(h100, roofline.Kernel(flops=2**26, dram_bytes=12 * 2**26))
>>> r.bound, r.bound_level
('memory', 'dram')
"""

# The names below load on first use (PEP 562): `import roofline` costs no more than its
# package, and a name pulls in only the modules it needs. The TYPE_CHECKING imports are the
# same table for type checkers and readers.
from importlib import import_module as _import_module
from typing import TYPE_CHECKING as _TYPE_CHECKING

if _TYPE_CHECKING:
    from . import divergence, memory, models
    from ._adapters import counted_kernel, measured_launch
    from ._calibration import Calibration, load_calibration
    from ._chart import BandwidthPoint, CHART_SCHEMA_VERSION, Ceiling, ChartPoint, RooflineChart, roofline_chart
    from ._cliffs import TimeCliff, TimeCliffs, time_cliffs
    from ._demo import DemoResources, demo_kernels, demo_resources
    from ._errors import RooflineError
    from ._export import load_chart, save_chart
    from ._facts import calibration, gpc_layout, gpc_layouts, gpu, gpus, measured_ceilings
    from ._gpu import (
        ArchRates,
        DEFAULT_GPU,
        Derivation,
        GPU,
        HostLink,
        MEMORY_LEVELS,
        arch_rates,
        custom_gpu,
        load_gpu,
    )
    from ._kernel import Kernel, Traffic
    from ._locality import Locality, locality
    from ._measured import LinkSegment, MeasuredCeiling
    from ._ncu import NCU_SECTIONS, NcuKernel, NcuProfile, load_ncu
    from ._plot import plot_roofline
    from ._precision import PRECISIONS
    from ._instruction_roofline import InstructionCeiling, InstructionPoint, InstructionRoofline, instruction_roofline
    from ._predict import (
        Term,
        achieved_bandwidth,
        dram_equivalent_bytes,
        dram_roof,
        instructions_from_sass,
        l2_bytes_with_l1_reuse,
        mixed_dram_bandwidth,
        overlap,
    )
    from ._profile import (
        ProfileKernel,
        ProfileReport,
        format_profile_report,
        nsight_calibration,
        profile_chart,
        profile_report,
    )
    from ._profile_counts import ProfileCounts
    from ._roofline import RooflineArrays, RooflineResult, analyze, analyze_many, attainable
    from ._spaces import MemorySpace, memory_space, memory_spaces
    from ._suite import SuiteReport, SuiteRow, analyze_suite, format_suite_table, write_suite_report
    from ._time_model import Prediction, predict
    from ._traffic import Access, Coords, traffic
    from ._transfer import L2Persistence, TransferTime, l2_persistence, transfer_time

#: Submodules that are public names, and where every other public name lives.
_SUBMODULES = ("divergence", "memory", "models")
_LOCATIONS = {
    "_adapters": ("counted_kernel", "measured_launch"),
    "_calibration": ("Calibration", "load_calibration"),
    "_chart": (
        "BandwidthPoint", "CHART_SCHEMA_VERSION", "Ceiling", "ChartPoint", "RooflineChart", "roofline_chart",
    ),
    "_cliffs": ("TimeCliff", "TimeCliffs", "time_cliffs"),
    "_demo": ("DemoResources", "demo_kernels", "demo_resources"),
    "_errors": ("RooflineError",),
    "_export": ("load_chart", "save_chart"),
    "_facts": ("calibration", "gpc_layout", "gpc_layouts", "gpu", "gpus", "measured_ceilings"),
    "_gpu": (
        "ArchRates", "DEFAULT_GPU", "Derivation", "GPU", "HostLink", "MEMORY_LEVELS", "arch_rates",
        "custom_gpu", "load_gpu",
    ),
    "_kernel": ("Kernel", "Traffic"),
    "_locality": ("Locality", "locality"),
    "_measured": ("LinkSegment", "MeasuredCeiling"),
    "_ncu": ("NCU_SECTIONS", "NcuKernel", "NcuProfile", "load_ncu"),
    "_plot": ("plot_roofline",),
    "_precision": ("PRECISIONS",),
    "_profile_counts": ("ProfileCounts",),
    "_instruction_roofline": ("InstructionCeiling", "InstructionPoint", "InstructionRoofline", "instruction_roofline"),
    "_predict": (
        "Term", "achieved_bandwidth", "dram_equivalent_bytes", "dram_roof", "instructions_from_sass",
        "l2_bytes_with_l1_reuse", "mixed_dram_bandwidth", "overlap",
    ),
    "_profile": (
        "ProfileKernel", "ProfileReport", "format_profile_report", "nsight_calibration", "profile_chart", "profile_report",
    ),
    "_roofline": ("RooflineArrays", "RooflineResult", "analyze", "analyze_many", "attainable"),
    "_spaces": ("MemorySpace", "memory_space", "memory_spaces"),
    "_suite": ("SuiteReport", "SuiteRow", "analyze_suite", "format_suite_table", "write_suite_report"),
    "_time_model": ("Prediction", "predict"),
    "_traffic": ("Access", "Coords", "traffic"),
    "_transfer": ("L2Persistence", "TransferTime", "l2_persistence", "transfer_time"),
}
_WHERE = {name: module for module, names in _LOCATIONS.items() for name in names}


def __getattr__(name: str) -> object:
    if name in _SUBMODULES:
        value = _import_module(f"{__name__}.{name}")
    elif name in _WHERE:
        value = getattr(_import_module(f"{__name__}.{_WHERE[name]}"), name)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(__all__) | {n for n in globals() if n.startswith("__")})


__all__ = [
    "Access",
    "ArchRates",
    "BandwidthPoint",
    "CHART_SCHEMA_VERSION",
    "Calibration",
    "Ceiling",
    "ChartPoint",
    "Coords",
    "DEFAULT_GPU",
    "DemoResources",
    "Derivation",
    "GPU",
    "HostLink",
    "InstructionCeiling",
    "InstructionPoint",
    "InstructionRoofline",
    "Kernel",
    "L2Persistence",
    "LinkSegment",
    "Locality",
    "MEMORY_LEVELS",
    "MeasuredCeiling",
    "MemorySpace",
    "NCU_SECTIONS",
    "NcuKernel",
    "NcuProfile",
    "PRECISIONS",
    "Prediction",
    "ProfileCounts",
    "ProfileKernel",
    "ProfileReport",
    "RooflineArrays",
    "RooflineChart",
    "RooflineError",
    "RooflineResult",
    "SuiteReport",
    "SuiteRow",
    "Term",
    "TimeCliff",
    "TimeCliffs",
    "Traffic",
    "TransferTime",
    "achieved_bandwidth",
    "analyze",
    "analyze_many",
    "analyze_suite",
    "arch_rates",
    "attainable",
    "calibration",
    "counted_kernel",
    "custom_gpu",
    "demo_kernels",
    "demo_resources",
    "divergence",
    "dram_equivalent_bytes",
    "dram_roof",
    "format_profile_report",
    "format_suite_table",
    "gpc_layout",
    "gpc_layouts",
    "gpu",
    "gpus",
    "instruction_roofline",
    "instructions_from_sass",
    "l2_bytes_with_l1_reuse",
    "l2_persistence",
    "load_calibration",
    "load_chart",
    "load_gpu",
    "load_ncu",
    "locality",
    "measured_ceilings",
    "measured_launch",
    "memory",
    "memory_space",
    "memory_spaces",
    "mixed_dram_bandwidth",
    "models",
    "nsight_calibration",
    "overlap",
    "plot_roofline",
    "predict",
    "profile_chart",
    "profile_report",
    "roofline_chart",
    "save_chart",
    "time_cliffs",
    "traffic",
    "transfer_time",
    "write_suite_report",
]
