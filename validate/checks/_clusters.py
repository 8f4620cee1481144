"""Cluster occupancy asked of the driver, and compared with ``occupancy.max_active_clusters``.

Generated kernels (the occupancy-check template, compiled with different register caps and
static shared memory) are asked ``cuOccupancyMaxActiveClusters`` over cluster sizes 1-16
(with the non-portable attribute), cluster shapes, block sizes, dynamic shared memory and
preferred carveouts, and ``cuOccupancyMaxPotentialClusterSize`` over the same launches. Each
answer is compared with the calculator; `driver_cluster_answers` returns the raw answers for
the record kept under ``tests/data``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import occupancy
import roofline
from occupancy import KernelResources
from pydantic import BaseModel, ConfigDict, Field

from ..device import (
    DeviceError,
    DeviceInfo,
    JsonDict,
    Session,
    cuda_errors,
    driver_call,
    kernel_resources,
    takes_session,
)
from ._differential import ProbeVariant, ask, counts_agree, error_text, load_probe_kernels

if TYPE_CHECKING:
    from cuda.bindings.driver import CUfunction, CUlaunchConfig
    from cuda.core import Kernel

__all__ = [
    "ClusterCheck",
    "ClusterMismatch",
    "ClusterQuery",
    "check_clusters",
    "cluster_probe_variants",
    "cluster_query_grid",
    "compare_answers",
    "driver_cluster_answers",
    "measured_layout",
    "set_attribute",
]


def cluster_probe_variants(quick: bool = False) -> tuple[ProbeVariant, ...]:
    """Kernels whose register counts and static shared memory span the cluster sweep.

    Examples
    --------
    >>> len(cluster_probe_variants(quick=True)) < len(cluster_probe_variants())
    True
    """
    caps = [(4, None), (200, 32), (200, 40), (200, 56), (200, 72), (200, 96), (200, 128), (200, 168), (220, 255)]
    if quick:
        caps = caps[::3]
    variants = [ProbeVariant(live, 0, 1, cap) for live, cap in caps]
    variants += [ProbeVariant(40, 12300, 1, 64), ProbeVariant(200, 40960, 1, 96)]
    return tuple(dict.fromkeys(variants))


@dataclass(frozen=True)
class ClusterQuery:
    """One cluster-occupancy question about one kernel.

    ``cluster`` is (x, y, z) blocks; ``carveout`` None is no preference; ``non_portable``
    sets ``CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED``; ``policy`` is the
    cluster scheduling policy preference (0 default, 1 spread, 2 load balancing).
    """

    cluster: tuple[int, int, int]
    threads_per_block: int
    dynamic_shared_memory: int
    carveout: int | None = None
    non_portable: bool = True
    policy: int = 0

    @property
    def cluster_size(self) -> int:
        """Blocks per cluster."""
        x, y, z = self.cluster
        return x * y * z


SHAPES = {4: [(2, 2, 1)], 6: [(3, 2, 1)], 8: [(2, 4, 1), (2, 2, 2)], 9: [(3, 3, 1)], 12: [(4, 3, 1)],
          16: [(4, 4, 1), (2, 8, 1), (2, 2, 4)]}


def cluster_query_grid(arch: occupancy.Architecture, resources: KernelResources, quick: bool = False) -> list[ClusterQuery]:
    """The cluster questions asked about one kernel (the opt-in attribute is set to the
    architecture's maximum, so every dynamic size below is a legal launch)."""
    static = resources.static_shared_memory
    bound = resources.max_threads_per_block or arch.max_threads_per_block
    optin = max(0, arch.max_shared_memory_per_block_optin - static)
    blocks = [t for t in (32, 64, 96, 128, 192, 256, 320, 384, 512, 640, 768, 1024)
              if t <= bound]
    dynamic = [0, 2048, 9000, 20000, 33000, 47000, 60000, 76000, 100000, 116000, 150000, 200000, optin]
    sizes = list(range(1, 17))
    if quick:
        blocks, dynamic, sizes = blocks[::3], dynamic[::3], [1, 2, 3, 4, 8, 9, 16]
    dynamic = sorted({d for d in dynamic if d <= optin})
    out: list[ClusterQuery] = []
    for size in sizes:
        for t in blocks:
            for d in dynamic:
                out.append(ClusterQuery((size, 1, 1), t, d))
    # Shapes other than (n, 1, 1), carveouts, the portable limit and the scheduling policy,
    # each on a thinner grid.
    thin_blocks, thin_dynamic = blocks[1::4], dynamic[::3]
    for size, shapes in SHAPES.items():
        if quick and size not in (4, 16):
            continue
        for shape in shapes:
            for t in thin_blocks:
                for d in thin_dynamic:
                    out.append(ClusterQuery(shape, t, d))
    for carveout in (0, 10, 25, 50, 100):
        for size in (1, 2, 4, 8, 16) if not quick else (2, 16):
            for t in thin_blocks:
                for d in thin_dynamic:
                    out.append(ClusterQuery((size, 1, 1), t, d, carveout=carveout))
    for size in (8, 9, 12, 16):
        for t in thin_blocks:
            out.append(ClusterQuery((size, 1, 1), t, 0, non_portable=False))
    if bound < 1024:
        # Blocks larger than the kernel allows: no block fits, the driver's answer for none.
        for size in (1, 2, 16):
            out.append(ClusterQuery((size, 1, 1), bound + 32, 0))
    for policy in (1, 2):
        for size in (2, 4, 8, 16):
            for t in thin_blocks:
                for d in thin_dynamic:
                    out.append(ClusterQuery((size, 1, 1), t, d, policy=policy))
    return out


class ClusterMismatch(BaseModel):
    """One launch where the calculator and the driver disagree."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    query: str = Field(description='"max_active_clusters" or "max_potential_cluster_size".')
    kernel: str
    registers_per_thread: int
    static_shared_memory: int
    cluster: tuple[int, int, int]
    threads_per_block: int
    dynamic_shared_memory: int
    carveout: int | None
    non_portable: bool
    policy: int
    driver: str
    calculated: str


class ClusterCheck(BaseModel):
    """Result of the differential cluster-occupancy check on one GPU."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    gpu: str = Field(description="The GPU name the calculator was asked about.")
    device_name: str
    sm_count: int
    kernels: int
    cluster_queries: int = Field(description="max_active_clusters queries compared.")
    potential_size_queries: int = Field(description="max_potential_cluster_size queries compared.")
    mismatches: tuple[ClusterMismatch, ...]
    compile_errors: dict[str, str] = Field(default_factory=dict)
    seconds: float

    @property
    def mismatch_count(self) -> int:
        """Number of mismatches."""
        return len(self.mismatches)


def set_attribute(session: Session, kernel: Kernel, function: CUfunction, name: str, value: int) -> None:
    """Set ``CU_FUNC_ATTRIBUTE_<name>`` on the kernel for the session's device, or, where the
    driver refuses that for this attribute, on the kernel's function in the current context."""
    try:
        session.set_kernel_attribute(kernel, name, value)
    except DeviceError:
        driver = session.cuda.driver
        attribute = getattr(driver.CUfunction_attribute, f"CU_FUNC_ATTRIBUTE_{name}")
        driver_call(driver.cuFuncSetAttribute, function, attribute, int(value))


class _Asker:
    """Driver occupancy queries of one loaded kernel, with its attributes set as asked."""

    def __init__(self, session: Session, kernel: Kernel) -> None:
        self.session = session
        self.kernel = kernel
        driver = session.cuda.driver
        self.driver = driver
        with cuda_errors("getting the kernel's function"):
            self.function = driver_call(driver.cuKernelGetFunction, kernel.handle)
        self.state: dict[str, int] = {}

    def set(self, name: str, value: int) -> None:
        if self.state.get(name) != value:
            set_attribute(self.session, self.kernel, self.function, name, value)
            self.state[name] = value

    def configure(self, query: ClusterQuery, max_dynamic: int) -> None:
        self.set("MAX_DYNAMIC_SHARED_SIZE_BYTES", max_dynamic)
        self.set("PREFERRED_SHARED_MEMORY_CARVEOUT", -1 if query.carveout is None else query.carveout)
        self.set("NON_PORTABLE_CLUSTER_SIZE_ALLOWED", int(query.non_portable))
        self.set("CLUSTER_SCHEDULING_POLICY_PREFERENCE", query.policy)

    def _config(self, query: ClusterQuery, with_cluster: bool) -> CUlaunchConfig:
        d = self.driver
        cfg = d.CUlaunchConfig()
        x, y, z = query.cluster
        # Grid: a whole number of clusters in every dimension.
        cfg.gridDimX, cfg.gridDimY, cfg.gridDimZ = x * 8, y, z
        cfg.blockDimX, cfg.blockDimY, cfg.blockDimZ = query.threads_per_block, 1, 1
        cfg.sharedMemBytes = query.dynamic_shared_memory
        attrs = []
        if with_cluster:
            a = d.CUlaunchAttribute()
            a.id = d.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
            a.value.clusterDim.x, a.value.clusterDim.y, a.value.clusterDim.z = x, y, z
            attrs.append(a)
        cfg.attrs = attrs
        cfg.numAttrs = len(attrs)
        return cfg

    def active_clusters(self, query: ClusterQuery) -> int | str:
        return ask(lambda: driver_call(self.driver.cuOccupancyMaxActiveClusters, self.function,
                                       self._config(query, True)))

    def potential_cluster_size(self, query: ClusterQuery) -> int | str:
        return ask(lambda: driver_call(self.driver.cuOccupancyMaxPotentialClusterSize, self.function,
                                       self._config(query, False)))

    def active_blocks(self, query: ClusterQuery) -> int | str:
        return ask(lambda: driver_call(self.driver.cuOccupancyMaxActiveBlocksPerMultiprocessor, self.function,
                                       query.threads_per_block, query.dynamic_shared_memory))


@takes_session
def driver_cluster_answers(
    session: Session,
    info: DeviceInfo,
    *,
    quick: bool = False,
    progress: Callable[[str], None] = lambda message: None,
) -> JsonDict:
    """The driver's raw answers over the cluster sweep, as plain JSON-ready data.

    Returns
    -------
    dict
        ``kernels``: one entry per compiled kernel (name, registers, static shared memory);
        ``columns`` and ``rows``: one row per query with the kernel's index, cluster x/y/z,
        threads, dynamic shared memory, carveout (-1 none), non-portable flag, policy, and
        the driver's active clusters, active blocks per SM and potential cluster size
        (an int, or the driver's error text).
    """
    arch = occupancy.architecture(info.compute_capability)
    kernels, errors = load_probe_kernels(info, cluster_probe_variants(quick), "cluster_probe")
    table, rows = [], []
    start = time.perf_counter()
    potential_seen: dict[tuple, int | str] = {}
    for index, (variant, kernel) in enumerate(kernels.items()):
        res = kernel_resources(kernel)
        table.append({"name": variant.name, "registers_per_thread": res.registers_per_thread,
                      "static_shared_memory": res.static_shared_memory,
                      "max_threads_per_block": res.max_threads_per_block})
        asker = _Asker(session, kernel)
        max_dynamic = max(0, arch.max_shared_memory_per_block_optin - res.static_shared_memory)
        for q in cluster_query_grid(arch, res, quick):
            head = [index, *q.cluster, q.threads_per_block, q.dynamic_shared_memory,
                    -1 if q.carveout is None else q.carveout, int(q.non_portable), q.policy]
            try:
                asker.configure(q, max_dynamic)
            except Exception as exc:  # noqa: BLE001 - an attribute this driver refuses is recorded
                rows.append([*head, *[error_text(exc)] * 3])
                continue
            key = (q.threads_per_block, q.dynamic_shared_memory, q.carveout, q.non_portable, q.policy)
            if key not in potential_seen:
                potential_seen[key] = asker.potential_cluster_size(q)
            rows.append([*head, asker.active_clusters(q), asker.active_blocks(q), potential_seen[key]])
        potential_seen.clear()
        try:
            asker.configure(ClusterQuery((1, 1, 1), 32, 0, None, False, 0), max_dynamic)
        except Exception:  # noqa: BLE001 - the same refusal was recorded in the rows
            pass
        progress(f"cluster sweep: {variant.name} done, {len(rows)} rows, "
                 f"{time.perf_counter() - start:.1f} s")
    return {
        "device": info.name, "sm_count": info.sm_count, "driver_version": info.driver_version,
        "kernels": table, "compile_errors": errors,
        "columns": ["kernel", "cluster_x", "cluster_y", "cluster_z", "threads_per_block",
                    "dynamic_shared_memory", "carveout", "non_portable", "policy",
                    "active_clusters", "active_blocks_per_sm", "potential_cluster_size"],
        "rows": rows,
    }


def _calculated(function: Callable[..., object], field: str, **kw: object) -> str:
    try:
        return str(getattr(function(**kw), field))
    except (ValueError, TypeError) as exc:
        return f"error: {exc}"


POLICIES = {0: "spread", 1: "spread", 2: "load_balancing"}
"""CUclusterSchedulingPolicy values: default, spread, load balancing."""


def measured_layout(name: str, compute_capability: str, sms_per_gpc: Sequence[int], source: str) -> occupancy.GpcLayout:
    """A `occupancy.GpcLayout` for a layout just measured (the cluster limits of Hopper)."""
    return occupancy.GpcLayout(
        name=name, compute_capability=compute_capability, sm_count=sum(sms_per_gpc),
        sms_per_gpc=tuple(sms_per_gpc), max_blocks_per_sm_in_cluster=8, max_cluster_size=8,
        max_nonportable_cluster_size=16, measured=True, source=source,
    )


def compare_answers(gpu: str | occupancy.GpcLayout, answers: JsonDict) -> tuple[int, int, list[ClusterMismatch]]:
    """Compare recorded driver answers (`driver_cluster_answers`) with the calculator.

    ``gpu`` is a GPU name with a packaged layout or an `occupancy.GpcLayout`. Returns
    (cluster queries, potential-size queries, mismatches).
    """
    layout = roofline.gpc_layout(gpu)
    arch = occupancy.architecture(layout.compute_capability)
    kernels = answers["kernels"]
    cols = {name: i for i, name in enumerate(answers["columns"])}
    mismatches: list[ClusterMismatch] = []
    clusters = potentials = 0
    seen: set[tuple] = set()
    for row in answers["rows"]:
        k = kernels[row[cols["kernel"]]]
        cluster = (row[cols["cluster_x"]], row[cols["cluster_y"]], row[cols["cluster_z"]])
        carveout = None if row[cols["carveout"]] < 0 else row[cols["carveout"]]
        policy = row[cols["policy"]]
        kw = dict(
            threads_per_block=row[cols["threads_per_block"]], registers_per_thread=k["registers_per_thread"],
            static_shared_memory=k["static_shared_memory"], dynamic_shared_memory=row[cols["dynamic_shared_memory"]],
            max_dynamic_shared_memory=arch.max_shared_memory_per_block_optin - k["static_shared_memory"],
            carveout=carveout, non_portable_cluster_size_allowed=bool(row[cols["non_portable"]]),
            max_threads_per_block=k["max_threads_per_block"], scheduling_policy=POLICIES[policy],
        )
        common = dict(kernel=k["name"], registers_per_thread=k["registers_per_thread"],
                      static_shared_memory=k["static_shared_memory"], cluster=cluster,
                      threads_per_block=kw["threads_per_block"], dynamic_shared_memory=kw["dynamic_shared_memory"],
                      carveout=carveout, non_portable=bool(row[cols["non_portable"]]), policy=policy)
        clusters += 1
        calc = _calculated(occupancy.max_active_clusters, "active_clusters", gpu=layout, cluster_size=cluster, **kw)
        driver = row[cols["active_clusters"]]
        if not counts_agree(driver, calc):
            mismatches.append(ClusterMismatch(query="max_active_clusters", driver=str(driver), calculated=calc,
                                              **common))
        key = (row[cols["kernel"]], kw["threads_per_block"], kw["dynamic_shared_memory"], carveout,
               kw["non_portable_cluster_size_allowed"], policy)
        if key in seen:
            continue
        seen.add(key)
        potentials += 1
        calc = _calculated(occupancy.max_potential_cluster_size, "cluster_size", gpu=layout, **kw)
        driver = row[cols["potential_cluster_size"]]
        if not counts_agree(driver, calc):
            mismatches.append(ClusterMismatch(query="max_potential_cluster_size", driver=str(driver),
                                              calculated=calc, **{**common, "cluster": (0, 0, 0)}))
    return clusters, potentials, mismatches


@takes_session
def check_clusters(
    session: Session,
    info: DeviceInfo,
    *,
    gpu: str | occupancy.GpcLayout | None = None,
    quick: bool = False,
    answers: JsonDict | None = None,
    progress: Callable[[str], None] = lambda message: None,
) -> ClusterCheck:
    """Compare ``occupancy.max_active_clusters`` and ``max_potential_cluster_size`` with the driver.

    Parameters
    ----------
    session, info
        An open `Session` and its `DeviceInfo`.
    gpu : str or occupancy.GpcLayout, optional
        The GPU to ask the calculator about (default: the device's name), or a layout just
        measured (`measured_layout`) for a GPU with none packaged.
    answers : dict, optional
        Answers already read with `driver_cluster_answers` (not asked again).

    Returns
    -------
    ClusterCheck
    """
    start = time.perf_counter()
    if answers is None:
        answers = driver_cluster_answers(session, info, quick=quick, progress=progress)
    gpu = info.name if gpu is None else gpu
    name = gpu if isinstance(gpu, str) else gpu.name
    clusters, potentials, mismatches = compare_answers(gpu, answers)
    progress(f"cluster check: {clusters} cluster queries, {potentials} potential-size queries, "
             f"{len(mismatches)} mismatches")
    return ClusterCheck(
        gpu=name, device_name=info.name, sm_count=info.sm_count, kernels=len(answers["kernels"]),
        cluster_queries=clusters, potential_size_queries=potentials, mismatches=tuple(mismatches),
        compile_errors=answers["compile_errors"], seconds=time.perf_counter() - start,
    )
