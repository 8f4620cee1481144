"""Compatibility names of the models' result types, kept so that existing code keeps working.

`KernelModel` is `roofline.Kernel` (the one kernel description) and `Launch` is
`occupancy.Launch` (the one launch description); new code should use those names.
"""

from __future__ import annotations

from occupancy import Launch

from .._kernel import Kernel

__all__ = ["KernelModel", "Launch"]

#: Compatibility name of `roofline.Kernel`, the type every model returns.
KernelModel = Kernel
