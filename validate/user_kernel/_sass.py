"""The SASS of the code the driver loaded: what the prediction beside a measurement reads, as
the source and profile paths do (the hot loop, the loads a thread keeps in flight, the
instruction mix), from the very binary that was timed."""

from __future__ import annotations

import occupancy
from occupancy import KernelResources

__all__ = ["with_sass"]


def with_sass(resources: KernelResources, binary: bytes | None, kernel: str, arch: str) -> KernelResources:
    """The driver's `resources` of ``kernel`` with the SASS summary of ``binary`` (the cubin NVRTC
    built, or the user's cubin or fatbin) for ``arch``, disassembled here (nvdisasm or
    cuobjdump, `occupancy.kernel_resources`).

    Where it cannot be read (no disassembler, a fatbin without ``arch``'s cubin, a kernel
    the listing lacks) the resources come back without SASS and ``sources["sass"]`` says why;
    the prediction then takes each thread's loads as one round trip, and says so.
    """
    if binary is None:
        return _without(resources, "not read: the loaded code's binary was not kept")
    try:
        read = occupancy.kernel_resources(binary, arch=arch, kernel=kernel, sass=True)
    except occupancy.OccupancyError as exc:
        # the driver loaded this binary, so this is the reader's limit (a fatbin of other
        # architectures, a name it does not resolve), not bad input: the measurement goes on
        return _without(resources, f"not read: {exc}")
    why = read.sources.get("sass", "not read: the disassembler gave no listing")
    if read.sass is None:
        return _without(resources, why)
    return resources.model_copy(update={"sass": read.sass, "sources": {**resources.sources, "sass": why}})


def _without(resources: KernelResources, why: str) -> KernelResources:
    return resources.model_copy(update={"sources": {**resources.sources, "sass": why}})
