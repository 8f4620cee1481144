"""Thread-block cluster occupancy against the driver's recorded answers, and the GPC data.

tests/data/cluster_queries.csv.gz holds every query of the validate cluster sweep with the
answers of cuOccupancyMaxActiveClusters, cuOccupancyMaxActiveBlocksPerMultiprocessor and
cuOccupancyMaxPotentialClusterSize on an H200 and an H100 SXM (driver 580.159.04; see
tests/data/README.md). Every recorded query is asked of the calculator.
"""

from __future__ import annotations

import csv
import doctest
import gzip
import json
from pathlib import Path

import numpy as np
import pytest

import occupancy
import roofline
from occupancy import OccupancyError
from occupancy import _clusters, _gpcs

DATA = Path(__file__).resolve().parents[1] / "data"
GPUS = {"h200": "H200", "h100": "H100-SXM"}
# The packaged layouts (the GPUs' facts files), which the cluster functions take.
LAYOUTS = {tag: roofline.gpc_layout(name) for tag, name in GPUS.items()}
H200 = LAYOUTS["h200"]
POLICIES = {0: "spread", 1: "spread", 2: "load_balancing"}


def _rows() -> list[dict[str, str]]:
    with gzip.open(DATA / "cluster_queries.csv.gz", "rt", encoding="utf-8") as f:
        return list(csv.DictReader(f))


ROWS = _rows()
KERNELS = sorted({r["kernel"] for r in ROWS})


def _launch(row: dict[str, str]) -> dict:
    static = int(row["static_shared_memory"])
    carveout = int(row["carveout"])
    return dict(
        threads_per_block=int(row["threads_per_block"]), registers_per_thread=int(row["registers_per_thread"]),
        static_shared_memory=static, dynamic_shared_memory=int(row["dynamic_shared_memory"]),
        # The sweep set the opt-in attribute to the largest dynamic size the kernel may have.
        max_dynamic_shared_memory=occupancy.architecture("sm_90").max_shared_memory_per_block_optin - static,
        carveout=None if carveout < 0 else carveout,
        max_threads_per_block=int(row["max_threads_per_block"]),
        non_portable_cluster_size_allowed=row["non_portable"] == "1",
        scheduling_policy=POLICIES[int(row["policy"])],
    )


def _answer(fn, field, **kw) -> int | str:
    try:
        return getattr(fn(**kw), field)
    except OccupancyError:
        return "error"


def test_the_record_is_large_and_covers_the_axes():
    assert len(ROWS) >= 29_000
    sizes = {int(r["cluster_x"]) * int(r["cluster_y"]) * int(r["cluster_z"]) for r in ROWS}
    assert sizes == set(range(1, 17))
    assert {r["policy"] for r in ROWS} == {"0", "1", "2"}
    assert len({r["registers_per_thread"] for r in ROWS}) >= 9
    assert len({r["carveout"] for r in ROWS}) >= 5
    # Both GPUs gave the same answer to every query asked of both.
    both = [r for r in ROWS if r["h200_active_clusters"] and r["h100_active_clusters"]]
    assert len(both) >= 29_000
    assert all(r["h200_active_clusters"] == r["h100_active_clusters"] for r in both)


def _columns(rows):
    return lambda name: np.array([int(r[name]) for r in rows])


@pytest.mark.parametrize("tag", list(GPUS))
def test_every_recorded_query_matches_the_driver(tag):
    # Every recorded query at once, through the array path: blocks per SM from calculate_many
    # (equal to calculate element by element, test_occ_calculate) and the cluster count of
    # the same per-GPC function max_active_clusters uses.
    arch = occupancy.architecture("sm_90")
    layout = LAYOUTS[tag]
    rows = [r for r in ROWS if r[f"{tag}_active_clusters"] not in ("", "error")]
    col = _columns(rows)
    static = col("static_shared_memory")
    out = occupancy.calculate_many(
        arch, threads_per_block=col("threads_per_block"), registers_per_thread=col("registers_per_thread"),
        static_shared_memory=static, dynamic_shared_memory=col("dynamic_shared_memory"),
        max_dynamic_shared_memory=arch.max_shared_memory_per_block_optin - static, carveout=col("carveout"),
        max_threads_per_block=col("max_threads_per_block"),
    )
    assert np.array_equal(out.active_blocks_per_sm, col(f"{tag}_active_blocks_per_sm"))
    sizes = col("cluster_x") * col("cluster_y") * col("cluster_z")
    policies = col("policy")
    counts = np.zeros(len(rows), dtype=np.int64)
    for code, policy in POLICIES.items():
        pick = policies == code
        counts[pick] = _clusters.clusters(layout, out.active_blocks_per_sm[pick], sizes[pick], policy)
    bad = np.flatnonzero(counts != col(f"{tag}_active_clusters"))
    assert bad.size == 0, [(rows[i], int(counts[i])) for i in bad[:5]]
    # The driver refuses clusters over 8 blocks without the non-portable attribute.
    refused = [r for r in ROWS if r[f"{tag}_active_clusters"] == "error"]
    assert refused and all(int(r["cluster_x"]) > 8 and r["non_portable"] == "0" for r in refused)


SAMPLE = [r for i, r in enumerate(ROWS) if i % 10 == 0 or r["h100_active_clusters"] == "error"]


@pytest.mark.parametrize("kernel", KERNELS)
def test_recorded_queries_through_the_public_functions(kernel):
    # A tenth of the queries (and every refused one) through max_active_clusters, and every
    # distinct launch through max_potential_cluster_size, against both GPUs' answers.
    mismatches = []
    for row in (r for r in SAMPLE if r["kernel"] == kernel):
        kw = _launch(row)
        dims = (int(row["cluster_x"]), int(row["cluster_y"]), int(row["cluster_z"]))
        for tag, layout in LAYOUTS.items():
            driver = row[f"{tag}_active_clusters"]
            got = _answer(occupancy.max_active_clusters, "active_clusters", gpu=layout, cluster_size=dims, **kw)
            if driver and str(got) != driver:
                mismatches.append((tag, dims, kw, driver, got))
    seen = set()
    for row in (r for r in ROWS if r["kernel"] == kernel):
        kw = _launch(row)
        key = tuple(sorted(kw.items()))
        if key in seen:
            continue
        seen.add(key)
        got = _answer(occupancy.max_potential_cluster_size, "cluster_size", gpu=H200, **kw)
        for tag in GPUS:
            driver = row[f"{tag}_potential_cluster_size"]
            if driver and str(got) != driver:
                mismatches.append((tag, "potential", kw, driver, got))
    assert not mismatches, mismatches[:5]


# ------------------------------------------------------------------ GPC layout data


@pytest.mark.parametrize(("tag", "name"), list(GPUS.items()))
def test_measured_layouts_are_the_recorded_measurement(tag, name):
    measured = json.loads((DATA / f"gpc_layout_{tag}.json").read_text())
    assert roofline.gpc_layout(name).measured
    assert tuple(len(g) for g in measured["gpc_sms"]) == roofline.gpc_layout(name).sms_per_gpc
    assert sorted(s for g in measured["gpc_sms"] for s in g) == list(range(measured["sm_count"]))
    # In every layout launch the clusters seen resident at once equal the driver's count.
    for launch in measured["launches"]:
        assert launch["max_resident_clusters"] == launch["driver_max_active_clusters"], launch


def test_a_gpu_name_is_refused_the_layout_is_given():
    with pytest.raises(TypeError, match="roofline.gpc_layout"):
        occupancy.max_active_clusters("H200", cluster_size=2, **KW)
    with pytest.raises(TypeError, match="GpcLayout"):
        occupancy.max_potential_cluster_size(3, **KW)


def test_inconsistent_layout_is_refused():
    fields = H200.model_dump() | {"sms_per_gpc": (18, 18)}
    with pytest.raises(ValueError, match="add up"):
        occupancy.GpcLayout(**fields)


# ---------------------------------------------------------------------- the rule

KW = dict(threads_per_block=128, registers_per_thread=64)


def test_worked_example_below_the_naive_count():
    # One block per SM (120 KB of shared memory each); clusters of 16 fit only in the seven
    # GPCs with at least 16 SMs: 7 clusters, not 132 // 16 = 8.
    r = occupancy.max_active_clusters(H200, cluster_size=16, dynamic_shared_memory=120_000,
                                      max_dynamic_shared_memory=120_000, non_portable_cluster_size_allowed=True, **KW)
    assert (r.active_blocks_per_sm, r.active_clusters, r.naive_clusters) == (1, 7, 8)
    assert r.clusters_per_gpc == (1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0)
    assert r.active_blocks == 112 and r.layout_measured


def test_cluster_launches_hold_at_most_eight_blocks_per_sm():
    # 8 blocks of 128 threads per SM as an ordinary launch; a cluster launch also gets 8.
    r = occupancy.max_active_clusters(H200, cluster_size=1, threads_per_block=64, registers_per_thread=32)
    assert r.active_blocks_per_sm == 32 and r.blocks_per_sm_in_cluster == 8
    assert r.active_clusters == 132 * 8


@pytest.mark.parametrize("size", range(1, 17))
def test_never_above_the_naive_count_and_load_balancing_never_below_spread(size):
    kw = dict(cluster_size=size, non_portable_cluster_size_allowed=True, dynamic_shared_memory=60_000,
              max_dynamic_shared_memory=60_000, **KW)
    spread = occupancy.max_active_clusters(H200, **kw)
    balanced = occupancy.max_active_clusters(H200, scheduling_policy="load_balancing", **kw)
    assert spread.active_clusters <= balanced.active_clusters <= spread.naive_clusters
    assert spread.active_clusters == sum(spread.clusters_per_gpc)


def test_cluster_dims_multiply():
    a = occupancy.max_active_clusters(H200, cluster_size=(2, 2, 2), **KW)
    b = occupancy.max_active_clusters(H200, cluster_size=8, **KW)
    assert a.active_clusters == b.active_clusters and a.cluster_dims == (2, 2, 2)


@pytest.mark.parametrize(("kw", "message"), [
    (dict(cluster_size=9), "portable maximum of 8 blocks on H200; set non_portable"),
    (dict(cluster_size=17, non_portable_cluster_size_allowed=True), "non-portable maximum of 16"),
    (dict(cluster_size=0), "cluster_size.x=0 is below the minimum of 1"),
    (dict(cluster_size=(2, 2, 2, 2)), "1 to 3 dimensions"),
    (dict(cluster_size=2, scheduling_policy="fast"), "scheduling_policy='fast' is not one of"),
], ids=["portable", "over-16", "zero", "four-dims", "policy"])
def test_bad_cluster_arguments(kw, message):
    with pytest.raises(OccupancyError, match=message):
        occupancy.max_active_clusters(H200, **kw, **KW)


def test_clusters_need_hopper():
    fields = H200.model_dump() | {"name": "old", "compute_capability": "8.0"}
    with pytest.raises(OccupancyError, match="need 9.0 or later"):
        occupancy.max_active_clusters(occupancy.GpcLayout(**fields), cluster_size=2, **KW)


def test_no_block_fits_gives_no_cluster_and_a_reason():
    r = occupancy.max_active_clusters(H200, cluster_size=2, threads_per_block=1024, registers_per_thread=128)
    assert r.active_clusters == 0 and "no block" in r.reason
    assert occupancy.max_potential_cluster_size(H200, threads_per_block=1024, registers_per_thread=128).cluster_size == 0


def test_resources_fill_the_kernel_figures():
    res = occupancy.KernelResources(kernel="k", architecture="sm_90", registers_per_thread=64,
                                    max_threads_per_block=1024)
    a = occupancy.max_active_clusters(H200, cluster_size=4, threads_per_block=128, resources=res)
    b = occupancy.max_active_clusters(H200, cluster_size=4, max_threads_per_block=1024, **KW)
    assert a.model_dump() == b.model_dump()  # the same figures; only a's launch holds the resources
    with pytest.raises(TypeError, match="registers_per_thread is required"):
        occupancy.max_active_clusters(H200, cluster_size=4, threads_per_block=128)
    launch = occupancy.Launch(grid=8, block=128, cluster=4, resources=res)
    figures = {"per_sm": {"launch"}}  # the launches differ in grid and cluster; the figures must not
    assert occupancy.max_active_clusters(H200, launch).model_dump(exclude=figures) == a.model_dump(exclude=figures)
    assert occupancy.max_potential_cluster_size(H200, launch) == occupancy.max_potential_cluster_size(
        H200, threads_per_block=128, resources=res)


@pytest.mark.parametrize(("non_portable", "expected"), [(False, 8), (True, 16)])
def test_potential_cluster_size_is_the_largest_that_fits(non_portable, expected):
    r = occupancy.max_potential_cluster_size(LAYOUTS["h100"], non_portable_cluster_size_allowed=non_portable, **KW)
    assert (r.cluster_size, r.limit) == (expected, expected)
    # A GPU whose largest GPC has 12 SMs cannot hold a spread cluster of 13.
    fields = H200.model_dump() | {"name": "small", "sms_per_gpc": (12,) * 11,
                                                            "measured": False}
    small = occupancy.GpcLayout(**fields)
    assert occupancy.max_potential_cluster_size(small, non_portable_cluster_size_allowed=True,
                                                dynamic_shared_memory=120_000, max_dynamic_shared_memory=120_000,
                                                **KW).cluster_size == 12


def test_cluster_cliffs_axis():
    c = occupancy.cliffs("sm_90", dynamic_shared_memory=120_000, max_dynamic_shared_memory=120_000, gpu=H200,
                         cluster_size=4, **KW)
    axis = c.cluster_size
    assert axis.maximum == 8 and [p.cluster_size for p in axis.points] == list(range(1, 9))
    for p in axis.points:
        r = occupancy.max_active_clusters(H200, cluster_size=p.cluster_size, dynamic_shared_memory=120_000,
                                          max_dynamic_shared_memory=120_000, **KW)
        assert (p.active_clusters, p.active_blocks) == (r.active_clusters, r.active_blocks)
    assert axis.headroom == 0 and axis.gain == 2  # 5 holds fewer blocks, 2 holds more
    assert occupancy.cliffs("sm_90", **KW).cluster_size is None
    with pytest.raises(OccupancyError, match="needs gpu="):
        occupancy.cliffs("sm_90", cluster_size=4, **KW)
    with pytest.raises(OccupancyError, match="not sm_80"):
        occupancy.cliffs("sm_80", gpu=H200, **KW)


def test_doctests():
    for module in (_clusters, _gpcs, occupancy._cliffs):
        assert doctest.testmod(module).failed == 0
