"""The driver's shared-memory configuration and Nsight Compute's limits, from recorded profiles.

tests/data/ncu_launches.csv holds every launch Nsight Compute 2025.3.1 profiled on an H200 and
an H100 SXM (driver 580.159.04): synthetic kernels over block size, registers, static and
dynamic shared memory, opt-in, carveout, clusters, launch history and grid size, and the
kernels of a small PyTorch program (tests/data/README.md). For each, the inputs and ncu's
launch__shared_mem_config_size and launch__occupancy_limit_* are kept; every one is asked of
occupancy.calculate(...).driver.
"""

from __future__ import annotations

import csv
import doctest
from collections import defaultdict
from pathlib import Path

import pytest

import occupancy
import roofline
from occupancy import _driver_config

DATA = Path(__file__).resolve().parents[1] / "data"
K = 1024

with open(DATA / "ncu_launches.csv", encoding="utf-8", newline="") as _f:
    LAUNCHES = list(csv.DictReader(_f))

GROUPS: dict[str, list[dict[str, str]]] = defaultdict(list)
for _row in LAUNCHES:
    GROUPS[f"{_row['gpu']}-{_row['source']}-{_row['part']}"].append(_row)

# Library kernels of the PyTorch program launched with 228 KB though they need less. A profile
# does not show a kernel's carveout preference; with 100% (maximum shared memory, presumably
# set by cuBLAS and cuDNN for their own kernels) the rule gives what ncu reports.
MAX_SHARED_KERNELS = ("cudnn_generated_fort_native_sdpa", "sm80_xmma_gemm_", "sm80_xmma_fprop_implicit_gemm")


def _optional(text: str) -> int | None:
    return None if text == "" else int(text)


def _inputs(row: dict[str, str], carveout: int | None) -> dict:
    static, dynamic = int(row["static_shared_memory"]), int(row["dynamic_shared_memory"])
    attribute = _optional(row["max_dynamic_shared_memory"])
    if attribute is None and static + dynamic > 48 * K:
        attribute = 227 * K - static  # a profiled launch over 48 KB has opted in
    return dict(threads_per_block=int(row["threads_per_block"]), registers_per_thread=int(row["registers_per_thread"]),
                static_shared_memory=static, dynamic_shared_memory=dynamic, max_dynamic_shared_memory=attribute,
                carveout=carveout, block_barriers=int(row["block_barriers"]))


def _differences(row: dict[str, str], carveout: int | None) -> dict:
    d = occupancy.calculate("sm_90", **_inputs(row, carveout)).driver
    ours = {"shared_mem_config_size": d.shared_memory_config, "occupancy_limit_warps": d.block_limit_warps,
            "occupancy_limit_registers": d.block_limit_registers,
            "occupancy_limit_shared_mem": d.block_limit_shared_memory, "occupancy_limit_blocks": d.block_limit_blocks,
            "occupancy_limit_barriers": d.block_limit_barriers}
    return {k: (int(row[k]), v) for k, v in ours.items() if int(row[k]) != v}


def test_the_record_is_large_enough():
    assert len(LAUNCHES) >= 1400
    assert sum(r["source"] == "pytorch" for r in LAUNCHES) >= 200
    assert {r["gpu"] for r in LAUNCHES} == {"h200", "h100"}
    assert len({r["carveout"] for r in LAUNCHES}) == 7  # none, 0, 10, 25, 50, 75, 100


@pytest.mark.parametrize("group", sorted(GROUPS))
def test_every_profiled_launch_matches_nsight_compute(group):
    bad = []
    for row in GROUPS[group]:
        diff = _differences(row, _optional(row["carveout"]))
        if diff and row["source"] == "pytorch" and row["kernel"].startswith(MAX_SHARED_KERNELS):
            diff = _differences(row, 100)
        if diff:
            bad.append((row["kernel"], _inputs(row, _optional(row["carveout"])), diff))
    assert not bad, bad[:5]


def test_library_kernels_need_their_carveout():
    # Without the preference the rule gives less than 228 KB for exactly those kernels.
    rows = [r for r in LAUNCHES if r["source"] == "pytorch" and r["kernel"].startswith(MAX_SHARED_KERNELS)]
    assert rows and all(_differences(r, None) for r in rows)
    others = [r for r in LAUNCHES if r["source"] == "pytorch" and not r["kernel"].startswith(MAX_SHARED_KERNELS)]
    assert len(others) >= 180


def test_the_driver_occupancy_matches_the_occupancy_api():
    # Where the driver's occupancy query was recorded with the launch, calculate agrees with it.
    rows = [r for r in LAUNCHES if r["driver_active_blocks_per_sm"]]
    assert len(rows) >= 1000
    for row in rows:
        got = occupancy.calculate("sm_90", **_inputs(row, _optional(row["carveout"]))).active_blocks_per_sm
        assert got == int(row["driver_active_blocks_per_sm"]), row


def test_cluster_launches_match_nsight_computes_resident_clusters():
    rows = [r for r in LAUNCHES if int(r["cluster_size"]) > 1]
    assert len(rows) >= 20
    for row in rows:
        kw = _inputs(row, None)
        r = occupancy.max_active_clusters(roofline.gpc_layout("H100-SXM" if row["gpu"] == "h100" else "H200"),
                                          cluster_size=int(row["cluster_size"]), non_portable_cluster_size_allowed=True,
                                          **kw)
        assert r.active_clusters == int(row["cluster_max_active"]), row


# --------------------------------------------------------------- worked examples


def test_layer_norm_gets_a_32_kb_configuration():
    # PyTorch's vectorized_layer_norm_kernel (bf16): 128 threads, 32 registers, 24 bytes of
    # dynamic shared memory; ncu: 32 KB configuration, shared memory limits it to 28 blocks.
    r = occupancy.calculate("sm_90", threads_per_block=128, registers_per_thread=32, dynamic_shared_memory=24)
    assert r.shared_memory_config == 228 * K and r.block_limit_shared_memory == 202  # the occupancy API's view
    assert (r.driver.shared_memory_config, r.driver.block_limit_shared_memory) == (32 * K, 28)
    assert r.driver.l1_cache == 224 * K and r.driver.active_blocks_per_sm == r.active_blocks_per_sm == 16


@pytest.mark.parametrize(("carveout", "config"), [(None, 64 * K), (0, 8 * K), (10, 32 * K), (25, 100 * K),
                                                  (50, 132 * K), (75, 228 * K), (100, 228 * K)])
def test_carveout_changes_the_l1_left(carveout, config):
    # 256 threads, 64 registers, 5000 bytes of dynamic shared memory: what ncu reported for
    # each preference on an H100 (tests/data/ncu_launches.csv, part "carveout").
    d = occupancy.calculate("sm_90", threads_per_block=256, registers_per_thread=64, dynamic_shared_memory=5000,
                            carveout=carveout).driver
    assert d.shared_memory_config == config and d.l1_cache == 256 * K - config


# --------------------------------------------------------------------- properties


@pytest.mark.parametrize("arch", occupancy.architectures(), ids=str)
@pytest.mark.parametrize("carveout", [None, 0, 30, 100])
def test_the_launch_configuration_is_supported_and_keeps_the_occupancy(arch, carveout):
    for t in (32, 96, 256, 1024):
        for d in (0, 100, 3000, 20000):
            r = occupancy.calculate(arch, threads_per_block=t, registers_per_thread=32, dynamic_shared_memory=d,
                                    carveout=carveout)
            drv = r.driver
            assert drv.shared_memory_config in arch.shared_memory_carveouts
            if drv.unified_l1_shared_memory is None:
                assert drv.l1_cache is None and arch.major < 7
            else:
                assert drv.l1_cache == drv.unified_l1_shared_memory - drv.shared_memory_config >= 0
            if carveout is None:
                assert drv.active_blocks_per_sm == r.active_blocks_per_sm
            else:
                assert drv.active_blocks_per_sm >= r.active_blocks_per_sm


def test_rule_is_marked_measured_only_where_it_was():
    assert occupancy.calculate("sm_90", threads_per_block=128, registers_per_thread=32).driver.rule == "measured"
    assert occupancy.calculate("sm_80", threads_per_block=128, registers_per_thread=32).driver.rule == "assumed"
    assert _driver_config.unified_l1_shared_memory(occupancy.architecture("sm_61")) is None


def test_doctests():
    assert doctest.testmod(_driver_config).failed == 0


def _brute_carveout(arch: str, inputs: dict, config: int) -> int | None:
    """The smallest carveout whose calculated configuration is ``config``, by trying all 101."""
    for carveout in range(101):
        if occupancy.calculate(arch, **{**inputs, "carveout": carveout}).shared_memory_config == config:
            return carveout
    return None


# Hand-derived: sm_90 has 233472 bytes per SM and configurations of 0, 8, 16, 32, 64, 100, ... 228 KiB;
# sm_80 167936 bytes and 0 ... 164 KiB; sm_75 65536 bytes and 32 or 64 KiB. A carveout of p percent
# asks for p * bytes_per_sm // 100, rounded up to a configuration, never below one block's.
CARVEOUTS = [
    # arch, static shared bytes, configuration, expected carveout (percent)
    ("sm_90", 0, 8 * K, 0),          # one block's 1 KiB reserve already rounds up to 8 KiB
    ("sm_90", 0, 16 * K, 4),         # 4% = 9338 > 8192 (3% = 7004 is not)
    ("sm_90", 0, 64 * K, 15),        # 15% = 35020 > 32768 (14% = 32686 is not)
    ("sm_90", 0, 228 * K, 86),       # 86% = 200785 > 200704 (85% = 198451 is not)
    ("sm_90", 40 * K, 64 * K, 0),    # a 41 KiB block needs 64 KiB already
    ("sm_90", 40 * K, 32 * K, None),  # smaller than one block
    ("sm_90", 0, 1000, None),        # not a configuration
    ("sm_80", 0, 100 * K, 40),       # 40% = 67174 > 65536 (39% = 65495 is not)
    ("sm_75", 0, 32 * K, 0),
    ("sm_75", 0, 64 * K, 51),        # 51% = 33423 > 32768 (50% = 32768 is not)
]


def test_carveout_for_matches_trying_every_carveout_on_the_table():
    for arch, static, config, _ in CARVEOUTS:
        inputs = dict(threads_per_block=128, registers_per_thread=32, static_shared_memory=static)
        assert occupancy.calculate(arch, **inputs).carveout_for(config) == _brute_carveout(arch, inputs, config)


@pytest.mark.parametrize(("arch", "static", "config", "expected"), CARVEOUTS,
                         ids=[f"{a}-static{s}-config{c}" for a, s, c, _ in CARVEOUTS])
def test_carveout_for(arch, static, config, expected):
    r = occupancy.calculate(arch, threads_per_block=128, registers_per_thread=32, static_shared_memory=static)
    assert r.carveout_for(config) == expected


@pytest.mark.parametrize("group", sorted(GROUPS))
def test_carveout_for_reproduces_nsights_configuration(group):
    """Every recorded launch: the carveout `carveout_for` gives from Nsight's configuration makes the
    calculator pick that configuration, and it is the smallest (each of the 101 carveouts tried)."""
    bad = []
    for row in GROUPS[group]:
        config = int(row["shared_mem_config_size"])
        inputs = _inputs(row, None)
        carveout = occupancy.calculate("sm_90", **inputs).carveout_for(config)
        if carveout != _brute_carveout("sm_90", inputs, config):
            bad.append((row["kernel"], inputs, config, carveout))
        elif carveout is not None:
            got = occupancy.calculate("sm_90", **{**inputs, "carveout": carveout}).shared_memory_config
            if got != config:
                bad.append((row["kernel"], inputs, config, carveout, got))
    assert not bad, bad[:5]
