"""A user's own kernel, measured: `measure` (its options in `MeasureOptions`), the kernel
arguments it takes (`KernelArg`, `parse_kernel_args`), and `profile_program`, which runs a
user's program under Nsight Compute the way gpuroof reads it.
"""

from ._kernel_args import KernelArg, parse_kernel_args
from ._measure import Measurement, database_gpu, measure
from ._options import MeasureOptions
from ._ncu_profile import ProfileRun, profile_program

__all__ = [
    "KernelArg",
    "MeasureOptions",
    "Measurement",
    "ProfileRun",
    "database_gpu",
    "measure",
    "parse_kernel_args",
    "profile_program",
]
