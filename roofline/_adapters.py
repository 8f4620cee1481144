"""The one seam between measured kernels (a profile, a timed launch) and the prediction.

`roofline.predict` takes a `roofline.models.KernelModel` and its `Launch`; a kernel read
from an Nsight Compute profile or timed by `validate.measure` has counts and a launch but
no formula. These functions build the model from them, in one place, so that when the
one-kernel description (counts plus a public launch) replaces `KernelModel` only this
module changes.
"""

from __future__ import annotations

from typing import Any

from ._errors import RooflineError
from ._roofline import KernelCounts, counts_of

__all__ = ["counted_kernel", "counts_from", "launch_of"]


def launch_of(
    grid: tuple[int, int, int],
    block: tuple[int, int, int],
    *,
    registers_per_thread: int | None,
    static_shared_memory: int = 0,
    dynamic_shared_memory: int = 0,
) -> Any:
    """A `roofline.models.Launch` (the launch type `predict` and the models share)."""
    from .models import Launch

    return Launch(grid=tuple(grid), block=tuple(block), registers_per_thread=registers_per_thread,
                  static_shared_memory=int(static_shared_memory or 0),
                  dynamic_shared_memory=int(dynamic_shared_memory or 0))


def counts_from(kernel: Any) -> KernelCounts:
    """Counts of a `KernelCounts`, a kernel model, or an `NcuKernel` (its busiest precision).

    An `NcuKernel` holds flops per precision; the roofline takes one precision, so the
    flops of the precision with the most operations are used (Nsight's hierarchical charts
    likewise plot one precision per chart).

    Raises
    ------
    RooflineError
        For a profiled kernel without DRAM bytes.
    TypeError
        For anything else without ``flops`` and ``dram_bytes``.
    """
    flops = getattr(kernel, "flops", None)
    if isinstance(flops, dict):
        if getattr(kernel, "dram_bytes", None) is None:
            raise RooflineError(f"kernel {getattr(kernel, 'name', '?')!r} has no DRAM bytes in its profile "
                                "(collect --section SpeedOfLight)")
        precision = kernel.precision
        return KernelCounts(
            name=str(kernel.name), precision=precision,
            flops=float(flops.get(precision, 0.0)) if precision else 0.0,
            dram_bytes=float(kernel.dram_bytes), l2_bytes=kernel.l2_bytes, l1_bytes=kernel.l1_bytes,
        )
    return counts_of(kernel)


def counted_kernel(counts: KernelCounts, launch: Any) -> Any:
    """A `roofline.models.KernelModel` with measured counts and the given launch, for `predict`."""
    from .models import KernelModel

    return KernelModel(
        name=counts.name, parameters={}, formula="counted (profile or user counts)",
        precision=counts.precision or "fp32", flops=int(round(counts.flops)), load_bytes=0, store_bytes=0,
        dram_bytes=int(round(counts.dram_bytes)),
        l2_bytes=None if counts.l2_bytes is None else int(round(counts.l2_bytes)),
        l1_bytes=None if counts.l1_bytes is None else int(round(counts.l1_bytes)),
        launch=launch,
    )
