"""validate's cluster and Nsight Compute checks: the comparison without a GPU, the sweep on one.

The CPU tests feed recorded driver answers (tests/data) through `compare_answers` and a small
ncu export through the parser; the GPU tests (marked ``gpu``) ask the driver itself.
"""

from __future__ import annotations

import csv
import gzip
import itertools
from pathlib import Path

import pytest

import occupancy
import roofline
import validate
from validate.checks import _clusters, _ncu_launches
from occupancy import KernelResources

DATA = Path(__file__).resolve().parents[1] / "data"


def _answers(limit: int = 3000) -> dict:
    """A `driver_cluster_answers` dict rebuilt from the recorded H100 answers."""
    with gzip.open(DATA / "cluster_queries.csv.gz", "rt", encoding="utf-8") as f:
        rows = list(itertools.islice(csv.DictReader(f), limit))
    kernels, index, out = [], {}, []
    for r in rows:
        if r["kernel"] not in index:
            index[r["kernel"]] = len(kernels)
            kernels.append({"name": r["kernel"], "registers_per_thread": int(r["registers_per_thread"]),
                            "static_shared_memory": int(r["static_shared_memory"]),
                            "max_threads_per_block": int(r["max_threads_per_block"])})
        answer = [r[f"h100_{a}"] for a in ("active_clusters", "active_blocks_per_sm", "potential_cluster_size")]
        out.append([index[r["kernel"]], *(int(r[c]) for c in ("cluster_x", "cluster_y", "cluster_z",
                    "threads_per_block", "dynamic_shared_memory", "carveout", "non_portable", "policy")),
                    *(a if a == "error" else int(a) for a in answer)])
    columns = ["kernel", "cluster_x", "cluster_y", "cluster_z", "threads_per_block", "dynamic_shared_memory",
               "carveout", "non_portable", "policy", "active_clusters", "active_blocks_per_sm",
               "potential_cluster_size"]
    return {"kernels": kernels, "columns": columns, "rows": out, "compile_errors": {}}


def test_recorded_answers_compare_without_mismatch():
    clusters, potentials, mismatches = _clusters.compare_answers("H100-SXM", _answers())
    assert clusters == 3000 and potentials > 100 and mismatches == []


def test_a_wrong_answer_is_reported():
    answers = _answers(200)
    answers["rows"][5][9] += 1
    _, _, mismatches = _clusters.compare_answers("H100-SXM", answers)
    assert len(mismatches) == 1 and mismatches[0].query == "max_active_clusters"
    assert int(mismatches[0].driver) == int(mismatches[0].calculated) + 1


def test_a_measured_layout_stands_in_for_a_packaged_one():
    layout = _clusters.measured_layout("NVIDIA H100 80GB HBM3", "9.0", (18, 18, 16, 16, 16, 16, 16, 8, 2, 2, 2, 2),
                                            "test")
    _, _, mismatches = _clusters.compare_answers(layout, _answers(1000))
    assert mismatches == []
    wrong = _clusters.measured_layout("x", "9.0", (16,) * 8 + (4,), "a layout that is not the device's")
    assert _clusters.compare_answers(wrong, _answers(1000))[2]


def test_the_sweep_asks_enough_questions():
    arch = occupancy.architecture("sm_90")
    res = KernelResources(kernel="probe", architecture="sm_90", registers_per_thread=32, static_shared_memory=0,
                          local_memory=0, constant_memory=0, max_threads_per_block=1024)
    grid = _clusters.cluster_query_grid(arch, res)
    assert len(grid) * len(_clusters.cluster_probe_variants()) > 20_000
    assert {q.cluster_size for q in grid} == set(range(1, 17))
    assert len(set(grid)) == len(grid)
    quick = _clusters.cluster_query_grid(arch, res, quick=True)
    assert 100 < len(quick) < len(grid)


def test_the_ncu_launch_plan_is_unique_and_covers_each_part():
    plan = _ncu_launches.launch_plan(occupancy.architecture("sm_90"))
    parts = {p.part for p in plan}
    assert parts == {"carveout", "optin", "static", "cluster", "reset", "history", "grid", "resources"}
    resources = [p for p in plan if p.part == "resources"]
    assert len(resources) == len(set(resources)) >= 800


NCU_CSV = '''"ID","Process ID","Kernel Name","launch__block_size","launch__registers_per_thread",\
"launch__shared_mem_config_size","launch__shared_mem_per_block_dynamic","launch__shared_mem_per_block_static",\
"launch__occupancy_limit_warps","launch__occupancy_limit_registers","launch__occupancy_limit_shared_mem",\
"launch__occupancy_limit_blocks","launch__occupancy_limit_barriers","launch__barrier_count"
"","","","","register/thread","Kbyte","Kbyte/block","Kbyte/block","block","block","block","block","block",""
"0","1","vectorized_layer_norm_kernel","128","32","32.768000","0.024000","0","16","16","28","32","32","1"
"1","1","cunn_SoftMaxForward","1,024","32","8.192000","0.128000","0","2","2","7","32","32","1"
'''


def test_ncu_export_is_parsed_into_bytes_and_compared():
    launches = _ncu_launches.ncu_launches(_ncu_launches.parse_ncu_csv(NCU_CSV))
    assert [(x["block_size"], x["shared_mem_config_size"], x["shared_mem_per_block_dynamic"]) for x in launches] == [
        (128, 32768, 24), (1024, 8192, 128)]
    arch = occupancy.architecture("sm_90")
    assert all(_ncu_launches.compare_launch(x, arch)["differences"] == {} for x in launches)
    launches[0]["shared_mem_config_size"] = 65536
    assert "shared_memory_config" in _ncu_launches.compare_launch(launches[0], arch)["differences"]


# ------------------------------------------------------------------------ on a GPU


@pytest.mark.gpu
def test_cluster_occupancy_matches_the_driver_on_the_device(gpu_session, gpu_info):
    if gpu_info.compute_capability < "9.0":
        pytest.skip(f"{gpu_info.name} has no thread-block clusters")
    layout = validate.measure_gpc_layout(gpu_session, gpu_info, sizes=(2, 4, 8, 16), blocks_per_sm=(1,))
    assert sum(layout.sms_per_gpc) == gpu_info.sm_count
    for launch in layout.launches:
        assert launch.max_resident_clusters == launch.driver_max_active_clusters
    try:
        gpu = roofline.gpc_layout(gpu_info.name)
    except roofline.RooflineError:
        gpu = _clusters.measured_layout(gpu_info.name, gpu_info.compute_capability, layout.sms_per_gpc, "test")
    check = validate.check_clusters(gpu_session, gpu_info, gpu=gpu, quick=True)
    assert check.cluster_queries > 500 and check.mismatches == ()


@pytest.mark.parametrize("per_sm, blocks", [(1, 1), (2, 2), (4, 4), (8, 8)])
def test_the_dynamic_size_for_blocks_fits_them_and_no_more(per_sm, blocks):
    from validate.checks._gpc_layout import dynamic_for_blocks
    arch = occupancy.architecture("sm_90")
    dyn = dynamic_for_blocks(arch, per_sm)
    assert dyn % 128 == 0 and dyn <= arch.max_shared_memory_per_block_optin
    occ = occupancy.calculate(arch, threads_per_block=128, registers_per_thread=16, dynamic_shared_memory=dyn,
                              max_dynamic_shared_memory=arch.max_shared_memory_per_block_optin)
    assert occ.active_blocks_per_sm == blocks


def test_sm_map_rows_decode_the_sm_cluster_and_64_bit_timers():
    import numpy as np
    from validate.checks._gpc_layout import sm_map_blocks
    start, end = (1 << 40) + 7, (1 << 40) + (1 << 33) + 5
    rows = np.array([[12, 3, 1, start & 0xffffffff, start >> 32, end & 0xffffffff, end >> 32, 1]], dtype=np.uint32)
    sm, cluster, t0, t1 = sm_map_blocks(rows)
    assert (sm[0], cluster[0], t0[0], t1[0]) == (12, 3, start, end)
