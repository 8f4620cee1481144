"""Cliffs: how far each resource can move before occupancy changes."""

from __future__ import annotations

from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict

from . import _validate
from ._arch import Architecture, architecture
from ._rules import MAX_BARRIERS_PER_BLOCK, evaluate

__all__ = ["Cliffs", "ResourceCliffs", "Threshold", "cliffs"]


class Threshold(BaseModel):
    """From ``value`` on (up to the next threshold) the SM holds this many blocks."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    value: int
    active_blocks_per_sm: int
    occupancy: float


class ResourceCliffs(BaseModel):
    """Occupancy along one resource, the others held fixed.

    ``headroom``: how much more of the resource the kernel can use before a block
    per SM is lost (None when none is lost anywhere up to ``maximum``).
    ``gain``: how much less it must use before one more block fits (None when
    no smaller value fits more blocks). ``thresholds``: every value in
    ``minimum..maximum`` where occupancy changes.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    resource: str
    unit: str
    value: int
    minimum: int
    maximum: int
    active_blocks_per_sm: int
    occupancy: float
    headroom: int | None
    gain: int | None
    thresholds: tuple[Threshold, ...]


class Cliffs(BaseModel):
    """Cliffs of one launch along registers, shared memory, block size and barriers."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    arch: str
    registers: ResourceCliffs
    shared_memory: ResourceCliffs
    threads_per_block: ResourceCliffs
    barriers: ResourceCliffs


def _sweep(resource: str, unit: str, values: np.ndarray, current: int, out: dict) -> ResourceCliffs:
    blocks = np.broadcast_to(out["active_blocks_per_sm"], values.shape).astype(np.int64)
    occ = np.broadcast_to(out["occupancy"], values.shape)
    i = int(np.searchsorted(values, current))
    now = int(blocks[i])
    later = np.flatnonzero(blocks[i + 1 :] < now)
    headroom = int(values[i + 1 + later[0]] - 1 - current) if later.size and now else None
    earlier = np.flatnonzero(blocks[:i] > now)
    gain = int(current - values[earlier[-1]]) if earlier.size else None
    change = np.flatnonzero(occ[1:] != occ[:-1]) + 1
    thresholds = tuple(
        Threshold(value=int(values[j]), active_blocks_per_sm=int(blocks[j]), occupancy=float(occ[j]))
        for j in change
    )
    return ResourceCliffs(
        resource=resource,
        unit=unit,
        value=current,
        minimum=int(values[0]),
        maximum=int(values[-1]),
        active_blocks_per_sm=now,
        occupancy=float(occ[i]),
        headroom=headroom,
        gain=gain,
        thresholds=thresholds,
    )


def sweeps(arch: Architecture, v: dict[str, Any], gc: str) -> dict[str, tuple[np.ndarray, dict]]:
    """Values and evaluate() output along each resource (shared with the plots)."""
    optin = arch.max_shared_memory_per_block_optin
    s, d = v["s"], v["d"]
    # Sweeping shared memory assumes the kernel opts in up to the architecture's limit,
    # unless the launch already asks for more than its attribute allows: then the
    # attribute stays, so the sweep agrees with calculate (0 blocks) at the current value
    # and `gain` says how far to come down.
    m_sweep = v["m"] if d > v["m"] else max(v["m"], optin - s)
    base = dict(t=v["t"], r=v["r"], s=s, d=d, m=v["m"], c=v["c"], b=v["b"], mt=v["mt"])

    def run(**change):
        a = {**base, **change}
        return evaluate(arch, a["t"], a["r"], a["s"], a["d"], a["m"], a["c"], a["b"], a["mt"], gc)

    regs = np.arange(arch.max_registers_per_thread + 1)
    dyn = np.arange(optin - s + 1)
    # Up to the kernel's maximum, and on to the block size asked for when it is larger
    # (0 blocks there, as calculate says).
    top = arch.max_threads_per_block if v["mt"] is None else max(v["mt"], v["t"])
    threads = np.arange(1, top + 1)
    bars = np.arange(MAX_BARRIERS_PER_BLOCK + 1)
    return {
        "registers": (regs, run(r=regs)),
        "shared_memory": (dyn + s, run(d=dyn, m=m_sweep)),
        "threads_per_block": (threads, run(t=threads)),
        "barriers": (bars, run(b=bars)),
    }


def swept(arch: Any, *, partitioned_global_caching: str | bool = "off", **config: Any):
    """Validate one launch and sweep each resource with the others fixed.

    Returns the `Architecture`, the sweeps (resource -> (values, results)) and the
    launch's current value of each resource; shared by `cliffs` and `plot_occupancy`.
    """
    arch = architecture(arch)
    gc = _validate.gc_mode(partitioned_global_caching)
    v = _validate.launch(arch, arrays=False, **config)
    current = {
        "registers": v["r"],
        "shared_memory": v["s"] + v["d"],
        "threads_per_block": v["t"],
        "barriers": v["b"],
    }
    return arch, sweeps(arch, v, gc), current


def cliffs(
    arch: Any,
    *,
    threads_per_block: int,
    registers_per_thread: int,
    static_shared_memory: int = 0,
    dynamic_shared_memory: int = 0,
    max_dynamic_shared_memory: int | None = None,
    carveout: int | None = None,
    block_barriers: int = 1,
    max_threads_per_block: int | None = None,
    partitioned_global_caching: str | bool = "off",
) -> Cliffs:
    """Headroom, gain and every occupancy threshold along each resource.

    Parameters are those of :func:`occupancy.calculate`. Each resource is swept over
    its legal range with the others fixed: registers per thread 0-255, shared memory
    per block (static + dynamic, bytes, from the static size up to the opt-in limit,
    as if the kernel opted in; a launch already over its ``max_dynamic_shared_memory``
    keeps that attribute), threads per block 1 up to the kernel's maximum (or the block
    size asked for, if larger), and block barriers 0-16. At the launch's own values every
    sweep agrees with :func:`occupancy.calculate`.

    Returns
    -------
    Cliffs
        ``registers``, ``shared_memory``, ``threads_per_block`` and ``barriers``,
        each a :class:`ResourceCliffs`.

    Examples
    --------
    >>> import occupancy
    >>> c = occupancy.cliffs("sm_80", threads_per_block=512, registers_per_thread=32)
    >>> c.registers.headroom, c.registers.thresholds[-1].value
    (0, 129)
    """
    arch, sw, current = swept(
        arch,
        threads_per_block=threads_per_block,
        registers_per_thread=registers_per_thread,
        static_shared_memory=static_shared_memory,
        dynamic_shared_memory=dynamic_shared_memory,
        max_dynamic_shared_memory=max_dynamic_shared_memory,
        carveout=carveout,
        block_barriers=block_barriers,
        max_threads_per_block=max_threads_per_block,
        partitioned_global_caching=partitioned_global_caching,
    )
    units = {
        "registers": "registers per thread",
        "shared_memory": "bytes per block",
        "threads_per_block": "threads per block",
        "barriers": "barriers per block",
    }
    return Cliffs(
        arch=arch.name,
        **{k: _sweep(k, units[k], values, current[k], out) for k, (values, out) in sw.items()},
    )
