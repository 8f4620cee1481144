"""Cliffs: how far each resource can move before occupancy changes."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from ._arch import MAX_BARRIERS_PER_BLOCK, Architecture, ArchitectureLike, architecture
from ._checks import LaunchNumbers, gc_mode
from ._display import Displayed, Shown, percent, shown
from ._clusters import _layout_for, _policy, check_size, cluster_dims, cluster_limit, clusters
from ._errors import OccupancyError
from ._gpcs import GpcLayout
from ._launch import Launch, launch_of
from ._rules import OccupancyArrays, evaluate, launch_numbers

__all__ = ["ClusterCliffs", "ClusterPoint", "Cliffs", "ResourceCliffs", "Threshold", "cliffs"]


class Threshold(BaseModel):
    """From ``value`` on (up to the next threshold) the SM holds this many blocks."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    value: int
    active_blocks_per_sm: int
    occupancy: float


class ResourceCliffs(Displayed):
    """Occupancy along one resource, the others held fixed.

    ``headroom``: how much more of the resource the kernel can use before a block
    per SM is lost (None when none is lost anywhere up to ``maximum``).
    ``gain``: how much less it must use before one more block fits (None when
    no smaller value fits more blocks). ``thresholds``: every value in
    ``minimum..maximum`` where occupancy changes.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

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

    headline = (
        shown("resource"), Shown("value", lambda c: f"{c.value} {c.unit}"),
        shown("active_blocks_per_sm", label="blocks_per_sm"), shown("occupancy", percent),
        shown("headroom", lambda n: f"+{n}"), shown("gain", lambda n: f"-{n}"),
    )


class ClusterPoint(BaseModel):
    """Resident clusters and blocks on the whole GPU at one cluster size."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    cluster_size: int
    active_clusters: int
    active_blocks: int = Field(description="active_clusters x cluster_size.")
    naive_blocks: int = Field(description="sm_count x blocks per SM, rounded down to whole clusters.")


class ClusterCliffs(Displayed):
    """Resident blocks along the cluster size (1 up to the allowed maximum), the launch held.

    ``headroom``: how many more blocks per cluster before fewer blocks are resident (None
    when none are lost up to ``maximum``); ``gain``: how many fewer before more are (None
    when no smaller size holds more). Both need ``value``, the launch's cluster size.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    gpu: str
    value: int | None
    maximum: int
    scheduling_policy: str
    points: tuple[ClusterPoint, ...]
    headroom: int | None
    gain: int | None

    headline = (
        Shown("resource", lambda c: "cluster_size"), Shown("value", lambda c: f"{c.value} blocks"),
        shown("headroom", lambda n: f"+{n}"), shown("gain", lambda n: f"-{n}"),
    )


class Cliffs(Displayed):
    """Cliffs of one launch along registers, shared memory, block size and barriers, and,
    for a GPU, along the cluster size."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    arch: str
    registers: ResourceCliffs
    shared_memory: ResourceCliffs
    threads_per_block: ResourceCliffs
    barriers: ResourceCliffs
    cluster_size: ClusterCliffs | None = None

    # The headline is the launch as it is; each resource's cliffs are a row (headroom: how
    # much more before a block per SM is lost; gain: how much less before one more fits).
    headline = (
        shown("arch"), shown("registers.active_blocks_per_sm", label="blocks_per_sm"),
        shown("registers.occupancy", percent, label="occupancy"),
    )
    table_rows = staticmethod(lambda c: [r for r in (c.registers, c.shared_memory, c.threads_per_block, c.barriers,
                                               c.cluster_size) if r is not None])


def _sweep(resource: str, unit: str, values: np.ndarray, current: int, out: OccupancyArrays) -> ResourceCliffs:
    blocks = np.broadcast_to(out.active_blocks_per_sm, values.shape).astype(np.int64)
    occ = np.broadcast_to(out.occupancy, values.shape)
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


def sweeps(arch: Architecture, v: LaunchNumbers, gc: str) -> dict[str, tuple[np.ndarray, OccupancyArrays]]:
    """Values and `evaluate` output along each resource, the others held (shared with the plots)."""
    optin = arch.max_shared_memory_per_block_optin
    s, d, m = v.static_shared_memory, v.dynamic_shared_memory, v.max_dynamic_shared_memory
    # Sweeping shared memory assumes the kernel opts in up to the architecture's limit,
    # unless the launch already asks for more than its attribute allows: then the
    # attribute stays, so the sweep agrees with calculate (0 blocks) at the current value
    # and `gain` says how far to come down.
    m_sweep = m if d > m else max(m, optin - s)
    regs = np.arange(arch.max_registers_per_thread + 1)
    dyn = np.arange(optin - s + 1)
    # Up to the kernel's maximum, and on to the block size asked for when it is larger
    # (0 blocks there, as calculate says).
    bound = v.max_threads_per_block
    top = arch.max_threads_per_block if bound is None else max(bound, v.threads_per_block)
    threads = np.arange(1, top + 1)
    bars = np.arange(MAX_BARRIERS_PER_BLOCK + 1)
    return {
        "registers": (regs, evaluate(arch, replace(v, registers_per_thread=regs), gc)),
        "shared_memory": (dyn + s, evaluate(arch, replace(v, dynamic_shared_memory=dyn, max_dynamic_shared_memory=m_sweep), gc)),
        "threads_per_block": (threads, evaluate(arch, replace(v, threads_per_block=threads), gc)),
        "barriers": (bars, evaluate(arch, replace(v, block_barriers=bars), gc)),
    }


def swept(
    arch: ArchitectureLike, launch: Launch, partitioned_global_caching: str | bool
) -> tuple[Architecture, dict[str, tuple[np.ndarray, OccupancyArrays]], dict[str, int]]:
    """Check one launch and sweep each resource with the others fixed.

    Returns the `Architecture`, the sweeps (resource -> (values, results)) and the
    launch's current value of each resource; shared by `cliffs` and `plot_occupancy`.
    """
    arch = architecture(arch)
    gc = gc_mode(partitioned_global_caching)
    v = launch_numbers(arch, launch)
    current = {
        "registers": v.registers_per_thread,
        "shared_memory": v.static_shared_memory + v.dynamic_shared_memory,
        "threads_per_block": v.threads_per_block,
        "barriers": v.block_barriers,
    }
    return arch, sweeps(arch, v, gc), current


def cliffs(
    arch: ArchitectureLike,
    launch: Launch | None = None,
    *,
    partitioned_global_caching: str | bool = "off",
    gpu: GpcLayout | None = None,
    cluster_size: int | tuple[int, ...] | None = None,
    non_portable_cluster_size_allowed: bool = False,
    scheduling_policy: str = "spread",
    **fields: object,
) -> Cliffs:
    """Headroom, gain and every occupancy threshold along each resource.

    Parameters are those of :func:`occupancy.calculate` (``launch`` or its fields as
    keywords; with ``gpu``, a launch's cluster is the default ``cluster_size``), and, for the cluster-size axis,
    ``gpu`` (the GPU's `GpcLayout`, e.g. ``roofline.gpc_layout("H200")``), ``cluster_size`` (the launch's, optional),
    ``non_portable_cluster_size_allowed`` and ``scheduling_policy`` as in
    :func:`occupancy.max_active_clusters`. Each resource is swept over
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
        each a :class:`ResourceCliffs`; ``cluster_size``, a :class:`ClusterCliffs`, when
        ``gpu`` is given (resident blocks on the whole GPU for each cluster size).

    Examples
    --------
    >>> import occupancy, roofline
    >>> c = occupancy.cliffs("sm_80", threads_per_block=512, registers_per_thread=32)
    >>> c.registers.headroom, c.registers.thresholds[-1].value
    (0, 129)
    >>> c = occupancy.cliffs("sm_90", threads_per_block=128, registers_per_thread=64,
    ...                      dynamic_shared_memory=120_000, max_dynamic_shared_memory=120_000,
    ...                      gpu=roofline.gpc_layout("H200"), cluster_size=4)
    >>> [(p.cluster_size, p.active_blocks) for p in c.cluster_size.points][2:5]
    [(3, 117), (4, 120), (5, 110)]
    >>> c.cluster_size.headroom
    0
    """
    if launch is not None and cluster_size is None and gpu is not None:
        cluster_size = launch.cluster
    arch, sw, current = swept(arch, launch_of("cliffs", launch, fields, architecture(arch)), partitioned_global_caching)
    units = {
        "registers": "registers per thread",
        "shared_memory": "bytes per block",
        "threads_per_block": "threads per block",
        "barriers": "barriers per block",
    }
    along_clusters = None
    if gpu is not None:
        values, out = sw["registers"]
        # The registers sweep runs over 0..255, so the launch's own blocks sit at its register count.
        blocks = int(np.broadcast_to(out.active_blocks_per_sm, values.shape)[current["registers"]])
        along_clusters = _cluster_axis(arch, gpu, blocks, cluster_size, non_portable_cluster_size_allowed,
                                       scheduling_policy)
    elif cluster_size is not None:
        raise OccupancyError(
            f"cluster_size={cluster_size!r} needs gpu= (a GPU's GpcLayout, e.g. roofline.gpc_layout('H200'))"
        )
    return Cliffs(
        arch=arch.name,
        **{k: _sweep(k, units[k], values, current[k], out) for k, (values, out) in sw.items()},
        cluster_size=along_clusters,
    )


def _cluster_axis(arch: Architecture, gpu: GpcLayout, blocks: int, cluster_size: int | tuple[int, ...] | None,
                  non_portable: bool, policy: str) -> ClusterCliffs:
    """Resident blocks for every cluster size with the launch's blocks per SM held."""
    layout = _layout_for(gpu)
    if layout.compute_capability != arch.compute_capability:
        raise OccupancyError(
            f"gpu={layout.name!r} is compute capability {layout.compute_capability}, not {arch.name}'s "
            f"{arch.compute_capability}"
        )
    policy = _policy(policy)
    limit = cluster_limit(layout, non_portable)
    value = None
    if cluster_size is not None:
        x, y, z = cluster_dims(cluster_size)
        value = x * y * z
        check_size(layout, value, non_portable)
    sizes = np.arange(1, limit + 1)
    counts = clusters(layout, blocks, sizes, policy)
    resident = counts * sizes
    naive = (layout.sm_count * blocks // sizes) * sizes
    points = tuple(
        ClusterPoint(cluster_size=int(c), active_clusters=int(n), active_blocks=int(r), naive_blocks=int(v))
        for c, n, r, v in zip(sizes, counts, resident, naive)
    )
    headroom = gain = None
    if value is not None:
        i = value - 1
        later = np.flatnonzero(resident[i + 1:] < resident[i])
        headroom = int(later[0]) if later.size and resident[i] else None
        earlier = np.flatnonzero(resident[:i] > resident[i])
        gain = int(i - earlier[-1]) if earlier.size else None
    return ClusterCliffs(gpu=layout.name, value=value, maximum=limit, scheduling_policy=policy, points=points,
                         headroom=headroom, gain=gain)
