"""The GPC layout of the device, measured: which SMs can hold blocks of one cluster.

The blocks of a thread-block cluster always run in one GPC. `measure_gpc_layout` launches
1-D clusters of many sizes, each block recording its ``%smid`` and ``%clusterid``; SMs
that ever hold blocks of one cluster are joined (union-find), and the groups left are
the GPCs as cluster scheduling sees them. Each launch also records how many clusters
were resident at once (from the blocks' global-timer spans) next to the driver's
``cuOccupancyMaxActiveClusters`` for the same launch.
"""

from __future__ import annotations

import ctypes
from typing import TYPE_CHECKING

import numpy as np
import occupancy
from pydantic import BaseModel, ConfigDict, Field

from ..device import DeviceInfo, Session, compile_kernels, cuda_errors, driver_call, kernel_source, takes_session
from ._clusters import set_attribute

if TYPE_CHECKING:
    from cuda.bindings.driver import CUfunction
    from cuda.core import Kernel

__all__ = ["GpcLaunch", "GpcLayoutMeasurement", "dynamic_for_blocks", "measure_gpc_layout", "sm_map_blocks"]


class GpcLaunch(BaseModel):
    """One cluster launch of the layout measurement."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    cluster_size: int
    threads_per_block: int
    dynamic_shared_memory: int
    clusters_launched: int
    blocks_seen: int
    sms_touched: int
    max_resident_clusters: int = Field(description="Most clusters whose spans overlapped.")
    driver_max_active_clusters: int | None


class GpcLayoutMeasurement(BaseModel):
    """SMs grouped into GPCs by the clusters they shared."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    device_name: str
    sm_count: int
    gpc_sms: tuple[tuple[int, ...], ...] = Field(description="SM ids of each GPC, largest GPC first.")
    launches: tuple[GpcLaunch, ...]

    @property
    def sms_per_gpc(self) -> tuple[int, ...]:
        """SM count of each GPC, largest first."""
        return tuple(len(g) for g in self.gpc_sms)


def dynamic_for_blocks(arch: occupancy.Architecture, per_sm: int) -> int:
    """The largest dynamic shared memory (bytes, a multiple of 128, at most the opt-in limit)
    that still fits ``per_sm`` blocks on an SM of ``arch`` (the driver's reserve each on top)."""
    dyn = (arch.shared_memory_per_sm // per_sm - arch.reserved_shared_memory_per_block) // 128 * 128
    return min(dyn, arch.max_shared_memory_per_block_optin)


def sm_map_blocks(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """`sm_map`'s rows (eight 32-bit words a block) decoded: each block's SM, its cluster, and the
    global timer (ns) when it started and when it finished spinning."""
    def timer(low: int) -> np.ndarray:
        return rows[:, low].astype(np.int64) | (rows[:, low + 1].astype(np.int64) << 32)

    return rows[:, 0].astype(np.int64), rows[:, 1].astype(np.int64), timer(3), timer(5)


def _find(parent: list[int], i: int) -> int:
    while parent[i] != i:
        parent[i] = parent[parent[i]]
        i = parent[i]
    return i


def _max_overlap(starts: np.ndarray, ends: np.ndarray) -> int:
    events = np.concatenate([np.stack([starts, np.ones_like(starts)], 1), np.stack([ends, -np.ones_like(ends)], 1)])
    # Ends sort before starts at the same instant: touching spans do not overlap.
    order = np.lexsort((events[:, 1], events[:, 0]))
    return int(np.max(np.cumsum(events[order, 1]))) if len(events) else 0


def _launch(session: Session, kernel: Kernel, function: CUfunction, clusters: int, size: int, threads: int, dyn: int,
            args: tuple[object, ...]) -> None:
    core = session.cuda.core
    try:
        with cuda_errors("launching sm_map"):
            config = core.LaunchConfig(grid=clusters, cluster=size, block=threads, shmem_size=dyn)
            core.launch(session.stream, config, kernel, *args)
        return
    except Exception:  # noqa: BLE001 - older cuda.core: fall back to cuLaunchKernelEx
        pass
    d = session.cuda.driver
    cfg = d.CUlaunchConfig()
    cfg.gridDimX, cfg.gridDimY, cfg.gridDimZ = clusters * size, 1, 1
    cfg.blockDimX, cfg.blockDimY, cfg.blockDimZ = threads, 1, 1
    cfg.sharedMemBytes = dyn
    cfg.hStream = session.stream.handle
    a = d.CUlaunchAttribute()
    a.id = d.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
    a.value.clusterDim.x, a.value.clusterDim.y, a.value.clusterDim.z = size, 1, 1
    cfg.attrs = [a]
    cfg.numAttrs = 1
    params = ((int(args[0].handle), int(args[1])), (ctypes.c_void_p, ctypes.c_ulonglong))
    driver_call(d.cuLaunchKernelEx, cfg, function, params, 0)


@takes_session
def measure_gpc_layout(
    session: Session,
    info: DeviceInfo,
    *,
    sizes: tuple[int, ...] = (2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 14, 16),
    blocks_per_sm: tuple[int, ...] = (1, 2),
    waves: int = 3,
    spin_ns: int = 40_000,
) -> GpcLayoutMeasurement:
    """Group the device's SMs into GPCs by launching clusters and reading ``%smid``.

    Parameters
    ----------
    session, info
        An open `Session` and its `DeviceInfo` (compute capability 9.0 or later).
    sizes : tuple of int
        Cluster sizes launched (sizes over 8 with the non-portable attribute).
    blocks_per_sm : tuple of int
        Dynamic shared memory is chosen so that this many blocks fit on an SM.
    waves : int
        Blocks launched, in multiples of the SM count.
    spin_ns : int
        How long each block holds its SM, nanoseconds (so that clusters are co-resident).

    Returns
    -------
    GpcLayoutMeasurement
    """
    arch = occupancy.architecture(info.compute_capability)
    kernel = compile_kernels(kernel_source("sm_map.cu"), ["sm_map"], arch=info.arch, name="sm_map")["sm_map"]
    function = driver_call(session.cuda.driver.cuKernelGetFunction, kernel.handle)
    optin = arch.max_shared_memory_per_block_optin
    set_attribute(session, kernel, function, "MAX_DYNAMIC_SHARED_SIZE_BYTES", optin)
    set_attribute(session, kernel, function, "NON_PORTABLE_CLUSTER_SIZE_ALLOWED", 1)
    sms = info.sm_count
    parent = list(range(max(sms, 1024)))
    launches: list[GpcLaunch] = []
    threads = 128
    most_blocks = waves * sms * max(blocks_per_sm) + 16 * max(blocks_per_sm)
    out = session.allocate(8 * 4 * most_blocks)
    touched: set[int] = set()
    for per_sm in blocks_per_sm:
        dyn = dynamic_for_blocks(arch, per_sm)
        for size in sizes:
            clusters = -(-waves * sms * per_sm // size)
            session.fill(out, 0, 8 * 4 * most_blocks)
            _launch(session, kernel, function, clusters, size, threads, dyn, (out, np.uint64(spin_ns)))
            session.synchronize()
            rows = session.download(out, (most_blocks, 8), np.uint32)
            rows = rows[rows[:, 7] == 1]
            smid, cluster, t0, t1 = sm_map_blocks(rows)
            for c in np.unique(cluster):
                members = smid[cluster == c]
                root = _find(parent, int(members[0]))
                for m in members[1:]:
                    other = _find(parent, int(m))
                    if other != root:
                        parent[other] = root
            touched.update(int(s) for s in np.unique(smid))
            ids = np.unique(cluster)
            starts = np.array([t0[cluster == c].min() for c in ids], dtype=np.int64)
            ends = np.array([t1[cluster == c].max() for c in ids], dtype=np.int64)
            launches.append(GpcLaunch(
                cluster_size=size, threads_per_block=threads, dynamic_shared_memory=dyn,
                clusters_launched=clusters, blocks_seen=len(rows), sms_touched=len(np.unique(smid)),
                max_resident_clusters=_max_overlap(starts, ends),
                driver_max_active_clusters=_driver_clusters(session, function, size, threads, dyn),
            ))
    groups: dict[int, list[int]] = {}
    for s in sorted(touched):
        groups.setdefault(_find(parent, s), []).append(s)
    gpcs = sorted((tuple(g) for g in groups.values()), key=lambda g: (-len(g), g))
    return GpcLayoutMeasurement(device_name=info.name, sm_count=sms, gpc_sms=tuple(gpcs), launches=tuple(launches))


def _driver_clusters(session: Session, function: CUfunction, size: int, threads: int, dyn: int) -> int | None:
    d = session.cuda.driver
    cfg = d.CUlaunchConfig()
    cfg.gridDimX, cfg.gridDimY, cfg.gridDimZ = size * 8, 1, 1
    cfg.blockDimX, cfg.blockDimY, cfg.blockDimZ = threads, 1, 1
    cfg.sharedMemBytes = dyn
    a = d.CUlaunchAttribute()
    a.id = d.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
    a.value.clusterDim.x, a.value.clusterDim.y, a.value.clusterDim.z = size, 1, 1
    cfg.attrs = [a]
    cfg.numAttrs = 1
    try:
        return int(driver_call(d.cuOccupancyMaxActiveClusters, function, cfg))
    except Exception:  # noqa: BLE001 - recorded as unknown
        return None
