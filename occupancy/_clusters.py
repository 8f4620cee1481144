"""Thread-block cluster occupancy: how many clusters a GPU keeps resident, as the driver says.

The rule, learned from ``cuOccupancyMaxActiveClusters`` on an H200 and an H100 (see
``docs/occupancy.md``):

* each SM holds ``b = min(B, max_blocks_per_sm_in_cluster)`` blocks of a cluster launch, where
  ``B`` is the ordinary blocks-per-SM occupancy of the kernel (``calculate``);
* the blocks of one cluster stay inside one GPC, so a GPC of ``n`` SMs holds
  ``floor(n * b / C)`` clusters of ``C`` blocks;
* with the default (spread) scheduling policy a cluster's blocks go to distinct SMs, so a GPC
  with fewer SMs than ``C`` holds none; the load-balancing policy may stack them;
* the GPU holds the sum over its GPCs.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike
from pydantic import BaseModel, ConfigDict, Field

from ._arch import architecture
from ._calculator import OccupancyResult, calculate
from ._errors import OccupancyError
from ._gpcs import GpcLayout
from ._launch import Launch, dims, launch_of
from .common import short_repr

__all__ = [
    "SCHEDULING_POLICIES",
    "ClusterOccupancy",
    "ClusterSizeResult",
    "max_active_clusters",
    "max_potential_cluster_size",
]

SCHEDULING_POLICIES = ("spread", "load_balancing")
"""``CU_CLUSTER_SCHEDULING_POLICY_SPREAD`` (the default) and ``..._LOAD_BALANCING``."""


class ClusterOccupancy(BaseModel):
    """Resident clusters of one cluster launch on one GPU."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    gpu: str
    cluster_dims: tuple[int, int, int]
    cluster_size: int = Field(description="Blocks per cluster.")
    scheduling_policy: str
    active_clusters: int = Field(description="Clusters resident at once (cuOccupancyMaxActiveClusters).")
    naive_clusters: int = Field(description="sm_count x active_blocks_per_sm // cluster_size.")
    active_blocks: int = Field(description="Blocks resident at once: active_clusters x cluster_size.")
    active_blocks_per_sm: int = Field(description="Blocks per SM of an ordinary launch (calculate).")
    blocks_per_sm_in_cluster: int = Field(description="Blocks per SM a cluster launch may use.")
    clusters_per_gpc: tuple[int, ...]
    sms_per_gpc: tuple[int, ...]
    layout_measured: bool = Field(description="False where the GPU's GPC layout is an assumption.")
    occupancy: float = Field(description="Resident warps over the warps all SMs could hold.")
    per_sm: OccupancyResult = Field(description="The per-SM occupancy of the same launch.")
    reason: str | None = Field(default=None, description="Why no cluster fits, when none does.")


class ClusterSizeResult(BaseModel):
    """The largest cluster that can be resident (cuOccupancyMaxPotentialClusterSize)."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    gpu: str
    cluster_size: int = Field(description="Blocks; 0 when no cluster can be resident.")
    active_clusters: int = Field(description="Resident clusters of that size.")
    limit: int = Field(description="The portable or non-portable maximum that applied.")


def cluster_dims(value: int | Sequence[int]) -> tuple[int, int, int]:
    """``cluster_size`` (an int or up to three dims) as (x, y, z); `check_size` checks the blocks."""
    return dims("cluster_size", value)


def _policy(value: object) -> str:
    if isinstance(value, str) and value.lower() in ("spread", "default"):
        return "spread"
    if isinstance(value, str) and value.lower().replace("-", "_") == "load_balancing":
        return "load_balancing"
    raise OccupancyError(f"scheduling_policy={short_repr(value)} is not one of {', '.join(SCHEDULING_POLICIES)}")


def cluster_limit(layout: GpcLayout, non_portable: bool) -> int:
    """The largest cluster size allowed with or without the non-portable attribute."""
    if not isinstance(non_portable, (bool, np.bool_)):
        raise TypeError(f"non_portable_cluster_size_allowed must be a bool, not {type(non_portable).__name__}")
    return layout.max_nonportable_cluster_size if non_portable else layout.max_cluster_size


def check_size(layout: GpcLayout, size: int, non_portable: bool) -> None:
    """Refuse a cluster over the portable (or, with the attribute, the non-portable) limit."""
    limit = cluster_limit(layout, non_portable)
    if size > limit:
        what = "non-portable" if non_portable else "portable"
        hint = "" if non_portable or size > layout.max_nonportable_cluster_size else (
            f"; set non_portable_cluster_size_allowed=True for up to {layout.max_nonportable_cluster_size}")
        raise OccupancyError(f"cluster_size={size} exceeds the {what} maximum of {limit} blocks on {layout.name}{hint}")


def clusters_per_gpc(layout: GpcLayout, blocks_per_sm: ArrayLike, size: ArrayLike, policy: str) -> np.ndarray:
    """Resident clusters of each GPC for blocks per SM and cluster sizes (numpy, broadcast);
    the last axis runs over the GPCs of ``layout``."""
    b = np.minimum(np.asarray(blocks_per_sm, dtype=np.int64), layout.max_blocks_per_sm_in_cluster)[..., None]
    c = np.asarray(size, dtype=np.int64)[..., None]
    n = np.asarray(layout.sms_per_gpc, dtype=np.int64)
    fits = (n * b) // c
    # Spread: a cluster's blocks go to distinct SMs of one GPC, so a smaller GPC holds none.
    return fits if policy == "load_balancing" else np.where(c <= n, fits, 0)


def clusters(layout: GpcLayout, blocks_per_sm: ArrayLike, size: ArrayLike, policy: str) -> np.ndarray:
    """Resident clusters on the GPU for blocks per SM and cluster sizes (numpy, broadcast)."""
    return clusters_per_gpc(layout, blocks_per_sm, size, policy).sum(axis=-1)


def _layout_for(layout: GpcLayout) -> GpcLayout:
    if not isinstance(layout, GpcLayout):
        raise TypeError(
            f"gpu must be an occupancy.GpcLayout (roofline.gpc_layout('H200') finds a packaged one), "
            f"not {type(layout).__name__}"
        )
    if architecture(layout.compute_capability).major < 9:
        raise OccupancyError(
            f"gpu={layout.name!r} is compute capability {layout.compute_capability}; thread-block "
            f"clusters need 9.0 or later"
        )
    return layout


def max_active_clusters(
    gpu: GpcLayout,
    launch: Launch | None = None,
    *,
    cluster_size: int | Sequence[int] | None = None,
    non_portable_cluster_size_allowed: bool = False,
    scheduling_policy: str = "spread",
    **fields: object,
) -> ClusterOccupancy:
    """Clusters of a launch resident at once on a GPU, as ``cuOccupancyMaxActiveClusters``.

    Parameters
    ----------
    gpu : GpcLayout
        The GPU's GPC layout: ``roofline.gpc_layout("H200")`` for a packaged GPU, or one
        measured on the device.
    launch : Launch, optional
        The launch; its cluster is the default ``cluster_size``.
    cluster_size : int or tuple of int
        Blocks per cluster, or the cluster's (x, y, z) dimensions; only the product matters.
        Required unless ``launch`` has a cluster.
    non_portable_cluster_size_allowed : bool, optional
        The kernel attribute ``cudaFuncAttributeNonPortableClusterSizeAllowed``: clusters over
        the portable 8 blocks (up to 16 on Hopper) are refused without it.
    scheduling_policy : {"spread", "load_balancing"}, optional
        The cluster scheduling policy preference.
    **fields
        In place of ``launch``: its fields as keywords, as in :func:`occupancy.calculate`.

    Returns
    -------
    ClusterOccupancy

    Raises
    ------
    TypeError
        For a `gpu` that is not a `GpcLayout`.
    OccupancyError
        For a GPU before compute capability 9.0, a cluster over the allowed
        size, or launch values out of range.

    Examples
    --------
    >>> import occupancy, roofline
    >>> r = occupancy.max_active_clusters(roofline.gpc_layout("H200"), cluster_size=16, threads_per_block=128,
    ...                                   registers_per_thread=64, dynamic_shared_memory=120_000,
    ...                                   max_dynamic_shared_memory=120_000,
    ...                                   non_portable_cluster_size_allowed=True)
    >>> r.active_clusters, r.naive_clusters
    (7, 8)
    """
    layout = _layout_for(gpu)
    arch = architecture(layout.compute_capability)
    launch = launch_of("max_active_clusters", launch, fields, arch)
    if cluster_size is None:
        if launch.cluster is None:
            raise TypeError("max_active_clusters() needs cluster_size= or a launch with a cluster")
        cluster_size = launch.cluster
    dims = cluster_dims(cluster_size)
    size = dims[0] * dims[1] * dims[2]
    check_size(layout, size, non_portable_cluster_size_allowed)
    policy = _policy(scheduling_policy)
    per_sm = calculate(arch, launch)
    b = per_sm.active_blocks_per_sm
    per_gpc = tuple(int(x) for x in clusters_per_gpc(layout, b, size, policy))
    active = sum(per_gpc)
    reason = None
    if active == 0:
        if b == 0:
            reason = f"no block of the launch fits on an SM: {per_sm.reason}"
        else:
            reason = (f"a cluster of {size} blocks needs {size} SMs of one GPC with the spread policy; "
                      f"the largest GPC of {layout.name} has {max(layout.sms_per_gpc)}")
    return ClusterOccupancy(
        gpu=layout.name, cluster_dims=dims, cluster_size=size, scheduling_policy=policy,
        active_clusters=active, naive_clusters=layout.sm_count * b // size, active_blocks=active * size,
        active_blocks_per_sm=b, blocks_per_sm_in_cluster=min(b, layout.max_blocks_per_sm_in_cluster),
        clusters_per_gpc=per_gpc, sms_per_gpc=layout.sms_per_gpc, layout_measured=layout.measured,
        occupancy=active * size * per_sm.warps_per_block / (layout.sm_count * arch.max_warps_per_sm),
        per_sm=per_sm, reason=reason,
    )


def max_potential_cluster_size(
    gpu: GpcLayout,
    launch: Launch | None = None,
    *,
    non_portable_cluster_size_allowed: bool = False,
    scheduling_policy: str = "spread",
    **fields: object,
) -> ClusterSizeResult:
    """The largest cluster size with at least one resident cluster, as
    ``cuOccupancyMaxPotentialClusterSize``.

    Parameters are those of :func:`max_active_clusters` without ``cluster_size`` (a
    launch's cluster is ignored: it is what is searched for). The answer
    is at most 8 blocks (the portable limit) or, with ``non_portable_cluster_size_allowed``,
    the GPU's non-portable limit (16 on Hopper).

    Returns
    -------
    ClusterSizeResult

    Examples
    --------
    >>> import occupancy, roofline
    >>> occupancy.max_potential_cluster_size(roofline.gpc_layout("H200"), threads_per_block=256,
    ...                                      registers_per_thread=32).cluster_size
    8
    """
    layout = _layout_for(gpu)
    limit = cluster_limit(layout, non_portable_cluster_size_allowed)
    policy = _policy(scheduling_policy)
    arch = architecture(layout.compute_capability)
    b = calculate(arch, launch_of("max_potential_cluster_size", launch, fields, arch)).active_blocks_per_sm
    sizes = np.arange(1, limit + 1)
    counts = clusters(layout, b, sizes, policy)
    fitting = np.flatnonzero(counts > 0)
    if fitting.size == 0:
        return ClusterSizeResult(gpu=layout.name, cluster_size=0, active_clusters=0, limit=limit)
    best = int(sizes[fitting[-1]])
    return ClusterSizeResult(gpu=layout.name, cluster_size=best, active_clusters=int(counts[fitting[-1]]), limit=limit)
