"""The `gpuroof occupancy` and `gpuroof archs` subcommands: output, JSON, exit codes."""

from __future__ import annotations

import json

import pytest

import occupancy
import roofline
from gpuroof import main


def test_occupancy_prints_result_limiters_and_cliffs(capsys):
    assert main(["occupancy", "--arch", "sm_90", "--threads", "256", "--registers", "40"]) == 0
    out = capsys.readouterr().out
    assert "active blocks per SM  6" in out and "occupancy 75.0%" in out
    assert "limiters              registers" in out
    for resource in ("registers", "shared_memory", "threads_per_block", "barriers"):
        assert resource in out


def test_occupancy_json_matches_the_library(capsys):
    argv = ["occupancy", "--arch", "8.0", "--threads", "512", "--registers", "32", "--smem", "4096",
            "--dynamic-smem", "50000", "--max-dynamic-smem", "100000", "--carveout", "50", "--barriers", "2",
            "--json"]
    assert main(argv) == 0
    data = json.loads(capsys.readouterr().out)
    want = occupancy.calculate("sm_80", threads_per_block=512, registers_per_thread=32, static_shared_memory=4096,
                               dynamic_shared_memory=50000, max_dynamic_shared_memory=100000, carveout=50,
                               block_barriers=2)
    assert data["result"] == json.loads(want.model_dump_json())
    assert data["cliffs"]["registers"]["headroom"] == occupancy.cliffs(
        "sm_80", threads_per_block=512, registers_per_thread=32, static_shared_memory=4096,
        dynamic_shared_memory=50000, max_dynamic_shared_memory=100000, carveout=50, block_barriers=2,
    ).registers.headroom


def test_occupancy_plot_is_written(tmp_path, capsys):
    path = tmp_path / "occ.png"
    argv = ["occupancy", "--arch", "sm_86", "--threads", "128", "--registers", "64", "--plot", str(path)]
    assert main(argv) == 0
    assert path.stat().st_size > 1000 and str(path) in capsys.readouterr().out


def test_zero_blocks_exit_zero_and_say_why(capsys):
    assert main(["occupancy", "--arch", "sm_80", "--threads", "1024", "--registers", "100"]) == 0
    assert "cannot launch" in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv,message",
    [
        (["--arch", "sm_90", "--threads", "1056", "--registers", "40"], "block.x=1056 exceeds the maximum of 1024"),
        (["--arch", "sm_91", "--threads", "256", "--registers", "40"], "known: sm_50"),
        (["--arch", "sm_90", "--threads", "256", "--registers", "300"], "registers_per_thread=300"),
        (["--arch", "sm_90", "--threads", "256", "--registers", "-1"], "registers_per_thread=-1"),
        (["--arch", "sm_90", "--threads", "256", "--registers", "8", "--dynamic-smem", "300000"], "dynamic_shared_memory=300000"),
        (["--arch", "sm_90", "--threads", "x", "--registers", "8"], "'x' is not N, N,N or N,N,N"),
    ],
    ids=["threads", "arch", "registers", "negative", "smem", "not-int"],
)
def test_bad_input_prints_one_line_and_exits_2(argv, message, capsys):
    assert main(["occupancy", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err
    # argparse's own errors name the subcommand ("gpuroof occupancy: error: argument --threads: ...")
    assert len(err.splitlines()) == 1 and err.startswith(("gpuroof: error:", "gpuroof occupancy: error:"))


def test_archs_table_and_json(capsys):
    assert main(["archs"]) == 0
    out = capsys.readouterr().out
    assert all(a.name in out for a in occupancy.architectures())
    assert main(["archs", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [d["name"] for d in data] == [a.name for a in occupancy.architectures()]
    assert occupancy.Architecture(**data[13]) == occupancy.architecture("sm_90")


def test_occupancy_with_a_cluster_prints_the_resident_clusters(capsys):
    argv = ["occupancy", "--arch", "sm_90", "--threads", "128", "--registers", "64", "--dynamic-smem", "120000",
            "--max-dynamic-smem", "120000", "--gpu", "H200", "--cluster", "16", "--non-portable"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "clusters on H200      7 of 16 blocks resident (naive 8" in out
    assert "cluster_size       16 blocks per cluster" in out and "16:112" in out
    assert "driver launches with  135168 B shared memory, 126976 B L1 (measured)" in out
    assert main([*argv, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    want = occupancy.max_active_clusters(roofline.gpc_layout("H200"), cluster_size=16, threads_per_block=128, registers_per_thread=64,
                                         dynamic_shared_memory=120000, max_dynamic_shared_memory=120000,
                                         non_portable_cluster_size_allowed=True)
    assert data["clusters"]["active_clusters"] == want.active_clusters == 7
    assert [p["active_blocks"] for p in data["cliffs"]["cluster_size"]["points"]][:4] == [132, 132, 117, 120]


def test_cluster_dimensions_and_policy(capsys):
    base = ["occupancy", "--arch", "sm_90", "--threads", "128", "--registers", "64", "--dynamic-smem", "60000",
            "--max-dynamic-smem", "60000", "--gpu", "H100 SXM", "--json"]
    assert main([*base, "--cluster", "2,2,1"]) == 0
    spread = json.loads(capsys.readouterr().out)["clusters"]
    assert main([*base, "--cluster", "4", "--cluster-policy", "load_balancing"]) == 0
    balanced = json.loads(capsys.readouterr().out)["clusters"]
    assert spread["cluster_dims"] == [2, 2, 1] and spread["active_clusters"] <= balanced["active_clusters"]


@pytest.mark.parametrize(
    "extra,message",
    [
        (["--cluster", "4"], "needs gpu="),
        (["--gpu", "H200", "--cluster", "2,x"], "--cluster '2,x' must be N or X,Y,Z"),
        (["--gpu", "H200", "--cluster", "12"], "cluster_size=12 exceeds the portable maximum of 8"),
        (["--gpu", "A100", "--cluster", "2"], "has no packaged GPC layout"),
        (["--gpu", "H200", "--cluster", "2", "--cluster-policy", "x"], "invalid choice"),
    ],
    ids=["no-gpu", "not-int", "non-portable", "unknown-gpu", "policy"],
)
def test_bad_cluster_input_exits_2(extra, message, capsys):
    assert main(["occupancy", "--arch", "sm_90", "--threads", "128", "--registers", "64", *extra]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1
