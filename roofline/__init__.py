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
    from . import chart, cliffs, divergence, instructions, memory, models, suite, terms, transfer
    from ._adapters import counted_kernel, measured_launch
    from ._calibration import Calibration, load_calibration
    from ._errors import RooflineError
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
    from ._measured import MeasuredCeiling
    from ._ncu import NCU_SECTIONS, NcuKernel, NcuProfile, load_ncu
    from ._precision import PRECISIONS
    from ._profile import (
        ProfileKernel,
        ProfileReport,
        format_profile_report,
        nsight_calibration,
        profile_report,
    )
    from ._profile_counts import ProfileCounts
    from ._roofline import RooflineArrays, RooflineResult, analyze, analyze_many, attainable
    from ._time_model import Prediction, predict

#: Submodules that are public names (each a group of names by idea: ``roofline.chart``,
#: ``roofline.transfer``, ...), and where every other public name lives.
_SUBMODULES = ("chart", "cliffs", "divergence", "instructions", "memory", "models", "suite", "terms", "transfer")
_LOCATIONS = {
    "_adapters": ("counted_kernel", "measured_launch"),
    "_calibration": ("Calibration", "load_calibration"),
    "_errors": ("RooflineError",),
    "_facts": ("calibration", "gpc_layout", "gpc_layouts", "gpu", "gpus", "measured_ceilings"),
    "_gpu": (
        "ArchRates", "DEFAULT_GPU", "Derivation", "GPU", "HostLink", "MEMORY_LEVELS", "arch_rates",
        "custom_gpu", "load_gpu",
    ),
    "_kernel": ("Kernel", "Traffic"),
    "_measured": ("MeasuredCeiling",),
    "_ncu": ("NCU_SECTIONS", "NcuKernel", "NcuProfile", "load_ncu"),
    "_precision": ("PRECISIONS",),
    "_profile_counts": ("ProfileCounts",),
    "_profile": (
        "ProfileKernel", "ProfileReport", "format_profile_report", "nsight_calibration", "profile_report",
    ),
    "_roofline": ("RooflineArrays", "RooflineResult", "analyze", "analyze_many", "attainable"),
    "_time_model": ("Prediction", "predict"),
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
    "ArchRates",
    "Calibration",
    "DEFAULT_GPU",
    "Derivation",
    "GPU",
    "HostLink",
    "Kernel",
    "MEMORY_LEVELS",
    "MeasuredCeiling",
    "NCU_SECTIONS",
    "NcuKernel",
    "NcuProfile",
    "PRECISIONS",
    "Prediction",
    "ProfileCounts",
    "ProfileKernel",
    "ProfileReport",
    "RooflineArrays",
    "RooflineError",
    "RooflineResult",
    "Traffic",
    "analyze",
    "analyze_many",
    "arch_rates",
    "attainable",
    "calibration",
    "chart",
    "cliffs",
    "counted_kernel",
    "custom_gpu",
    "divergence",
    "format_profile_report",
    "gpc_layout",
    "gpc_layouts",
    "gpu",
    "gpus",
    "instructions",
    "load_calibration",
    "load_gpu",
    "load_ncu",
    "measured_ceilings",
    "measured_launch",
    "memory",
    "models",
    "nsight_calibration",
    "predict",
    "profile_report",
    "suite",
    "terms",
    "transfer",
]
