"""The one Nsight adapter (roofline/_ncu_metrics.py): each metric of a raw page becomes one typed
field of `roofline.ProfileCounts`, in SI units, and no other record repeats those fields."""

from __future__ import annotations

import pytest

import roofline
from roofline._ncu_metrics import kernel_from_metrics

_LAUNCH = {"Grid Size": "(4, 1, 1)", "Block Size": "(256, 1, 1)"}

# metric values (with Nsight's printed unit), the ProfileCounts field and its value: Nsight scales by
# powers of 1000 and prints occupancy in percent (the section files and `ncu --print-units base`)
READS = [
    ({"gpu__time_duration.sum": (2.0, "usecond")}, "duration_seconds", 2e-6),
    ({"sm__cycles_elapsed.avg.per_second": (1.5, "Ghz")}, "sm_clock_hz", 1.5e9),
    ({"dram__cycles_elapsed.avg.per_second": (3.2, "Ghz")}, "memory_clock_hz", 3.2e9),
    ({"smsp__inst_executed.sum": (2.5, "Kinst")}, "instructions", 2500.0),
    ({"smsp__inst_executed_op_global_ld.sum": (64.0, "inst")}, "global_load_instructions", 64.0),
    ({"smsp__sass_inst_executed_op_global_ld.sum": (32.0, "inst")}, "global_load_instructions", 32.0),
    ({"smsp__sass_inst_executed_op_global_atom.sum": (3.0, "inst"),
      "smsp__sass_inst_executed_op_global_red.sum": (4.0, "inst")}, "global_atomic_instructions", 7.0),
    ({"smsp__sass_inst_executed_op_shared_atom.sum": (5.0, "inst")}, "shared_atomic_instructions", 5.0),
    ({"l1tex__data_pipe_lsu_wavefronts.sum": (7.0, "")}, "l1_wavefronts", 7.0),
    ({"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": (100.0, "sector"),
      "l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum": (25.0, "sector")}, "l1_hit_rate", 0.25),
    ({"lts__t_sectors_srcunit_tex.sum": (200.0, "sector"),
      "lts__t_sectors_srcunit_tex_lookup_hit.sum": (150.0, "sector")}, "l2_hit_rate", 0.75),
    ({"l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum": (96.0, "sector")}, "global_store_sectors", 96.0),
    ({"l1tex__t_requests_pipe_lsu_mem_global_op_st.sum": (3.0, "request")}, "global_store_requests", 3.0),
    ({"lts__t_sectors_srcunit_tex.sum": (10.0, "sector")}, "l2_sector_bytes", 320.0),  # 32 bytes a sector
    ({"lts__t_sectors_srcunit_tex_op_read.sum": (12.0, "sector")}, "l2_read_sectors", 12.0),
    ({"lts__t_requests_srcunit_tex.sum": (5.0, "request")}, "l2_requests", 5.0),
    ({"dram__bytes_write.sum": (3.0, "Mbyte")}, "dram_written_bytes", 3e6),
    ({"sm__warps_active.avg.pct_of_peak_sustained_active": (50.0, "%")}, "achieved_occupancy", 0.5),
    ({"sm__maximum_warps_per_active_cycle_pct": (75.0, "%")}, "theoretical_occupancy", 0.75),
    ({"launch__occupancy_limit_warps": (8.0, "block"), "launch__occupancy_limit_registers": (3.0, "block")},
     "block_limits", {"warps": 8, "registers": 3}),
]


def _read(metrics: dict) -> roofline.NcuKernel:
    values = {**_LAUNCH, **{name: value for name, (value, _) in metrics.items()}}
    units = {name: unit for name, (_, unit) in metrics.items()}
    return kernel_from_metrics(values, units, where="test", demangled="k(float*)")


@pytest.mark.parametrize(("metrics", "field", "expected"), READS, ids=[f"{f}-{i}" for i, (_, f, _) in enumerate(READS)])
def test_each_metric_becomes_one_typed_field(metrics, field, expected):
    measured = _read(metrics).measured
    got = getattr(measured, field)
    assert got == (expected if isinstance(expected, dict) else pytest.approx(expected, rel=1e-12))
    # every other count stays unread
    others = {name for name in roofline.ProfileCounts.model_fields if name != field and getattr(measured, name)}
    # the L2 lookups the hit rate falls back on are the L2 sector traffic too
    assert others == ({"l2_sector_bytes"} if "lts__t_sectors_srcunit_tex.sum" in metrics and field != "l2_sector_bytes"
                      else set())


def test_the_table_reads_every_field_of_the_record():
    assert {field for _, field, _ in READS} == set(roofline.ProfileCounts.model_fields)


def test_a_profile_without_the_counts_holds_an_empty_record():
    k = _read({})
    assert k.measured == roofline.ProfileCounts()
    assert k.missing["duration_seconds"] == "SpeedOfLight" and k.missing["block_limits"] == "Occupancy"


@pytest.mark.parametrize("model", [roofline.NcuKernel, roofline.Kernel], ids=["NcuKernel", "Kernel"])
def test_no_record_repeats_what_the_profile_measured(model):
    profile_only = set(roofline.ProfileCounts.model_fields) - {"instructions", "l2_requests"}
    assert not profile_only & set(model.model_fields)
    assert "measured" in roofline.NcuKernel.model_fields


@pytest.mark.parametrize(("field", "value"), [("l1_hit_rate", 1.5), ("l2_hit_rate", -0.1), ("l1_hit_rate", float("nan"))],
                         ids=["l1-over-1", "l2-negative", "l1-nan"])
def test_hit_rates_are_shares(field, value):
    with pytest.raises(ValueError, match=field):
        roofline.ProfileCounts(**{field: value})


def test_predict_refuses_what_is_not_a_record():
    kernel = roofline.Kernel(flops=0, dram_bytes=1 << 20, launch=roofline.measured_launch(64, 256, registers_per_thread=32))
    with pytest.raises(TypeError, match="measured must be a roofline.ProfileCounts"):
        roofline.predict("H200", kernel, measured={"l1_hit_rate": 0.5})
