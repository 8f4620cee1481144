"""CPU tests of the hierarchy measurements: every computation on fake timers or recorded data.

Clocks and the throttling verdict, the latency ladder's plans, mode split and levels, the
working-set levels and plateaus, host-link fits, tensor kernel tables, independent figures,
the calibration figures, the queued event timer, persistence predictions, and reports of
many devices (merge, spread, one schema). Recorded data: docs/results/ (gpuroof validate on
an H200, an H100 SXM and two H200s, 2026-11-22) and tests/data.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import roofline
import validate
from validate.device import _clocks, _compile, _timers, _timing
from validate.probes import (
    _calibration,
    _hostlink,
    _latency,
    _launch,
    _memory_terms,
    _persistence,
    _references,
    _tensor,
    _workingset,
)
from validate.run import _multi
from validate.probes import _ceilings as ceiling_types
from validate.report._registry import PROBES
from validate.probes._prediction import sweep_base

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "docs" / "results"
MiB, GiB = 1 << 20, 1 << 30


@pytest.fixture(scope="module")
def h200_report():
    """The committed H200 report (it must still validate against the schema)."""
    return validate.load_report_set(RESULTS / "h200").reports[0]


# ------------------------------------------------------------------------- clocks


def _sample(seconds=0.0, clock=1.98e9, reasons=(), power=300.0):
    return _clocks.ClockSample(seconds=seconds, sm_clock_hz=clock, memory_clock_hz=3.2e9, power_watts=power,
                                performance_state=0, reasons=reasons)


@pytest.mark.parametrize(
    "samples, throttled, note",
    [
        ([_sample(), _sample(0.1)], False, ""),
        ([_sample(), _sample(0.1, 1.86e9, ("sw_power_cap",))], True, "sw_power_cap"),
        ([_sample(), _sample(0.1, 1.2e9)], True, "SM clock down to 1200"),
        ([_sample(0.1, 0.35e9, ("gpu_idle",))], False, ""),  # an idle reading is not a throttled one
        ([_sample(0.1, reasons=("hw_thermal_slowdown",))], True, "hw_thermal_slowdown"),
    ],
    ids=["full clock", "power cap", "low clock", "idle", "thermal"],
)
def test_throttling_verdict(samples, throttled, note):
    record = _clocks.clock_record(samples, before=_sample(), after=samples[-1], max_sm_clock_hz=1.98e9,
                                   power_limit_watts=700.0)
    assert record.throttled is throttled
    assert note in record.note
    assert record.samples_during == len(samples)


def test_no_nvml_means_unknown_not_fine():
    record = _clocks.clock_record([], before=None, after=None, max_sm_clock_hz=None)
    assert record.throttled is None and "NVML" in record.note


@pytest.mark.parametrize("mask, names", [(0, ()), (0x4, ("sw_power_cap",)), (0x1 | 0x40, ("gpu_idle", "hw_thermal_slowdown"))],
                         ids=["none", "power cap", "idle and thermal"])
def test_reason_bits(mask, names):
    assert _clocks.reason_names(mask) == names


def test_monitor_samples_around_a_block_with_an_injected_reader():
    clocks = iter([1.98e9, 1.9e9] + [1.7e9] * 1000)
    monitor = _clocks.ClockMonitor(lambda t: _sample(t, next(clocks), ("sw_power_cap",)), max_sm_clock_hz=1.98e9,
                                    interval_seconds=0.001)
    with monitor.watch() as record:
        import time

        time.sleep(0.02)
    assert record[0].throttled and record[0].before.sm_clock_hz == 1.98e9
    assert record[0].samples_during >= 1 and record[0].min_sm_clock_hz == 1.7e9


def test_monitor_without_nvml_reads_nothing():
    monitor = _clocks.open_clock_monitor(None)
    assert not monitor.available and monitor.sample() is None
    with monitor.watch() as record:
        pass
    assert record[0].throttled is None


# ------------------------------------------------------------------------- latency ladder


PLANS = _latency.chase_plans(60 * MiB, 140 * GiB)


def test_ladder_plans_hit_their_level_by_construction():
    by_name = {p.name: p for p in PLANS}
    l1, l2, dram = by_name["l1"], by_name["l2"], by_name["dram"]
    assert l1.cache == "ca" and l1.warm and l1.footprint_bytes <= 64 << 10
    assert l2.cache == "cg" and l2.warm and l2.footprint_bytes <= 60 * MiB // 4 and l2.nodes * 128 <= 60 * MiB
    assert dram.flush and not dram.warm and dram.footprint_bytes >= 4 * 60 * MiB and dram.hops <= dram.nodes
    assert all(p.footprint_bytes <= 16 * GiB for p in PLANS)
    assert all(p.hops <= p.nodes for p in PLANS if p.flush)  # cold chases never revisit a line


def test_plans_shrink_to_the_memory_of_small_gpus():
    assert max(p.footprint_bytes for p in _latency.chase_plans(4 * MiB, 8 * GiB)) <= 2 * GiB


@pytest.mark.parametrize("plan", PLANS, ids=[p.name for p in PLANS])
def test_node_offsets_are_distinct_aligned_and_inside(plan):
    offsets = _latency.node_offsets(plan, np.random.default_rng(1))
    assert offsets.dtype == np.uint64 and len(offsets) == plan.nodes
    assert len(np.unique(offsets)) == plan.nodes
    assert int(offsets.max()) + 8 <= plan.footprint_bytes
    assert not np.any(offsets % np.uint64(plan.stride_bytes))
    if plan.order == "sequential":
        assert np.all(np.diff(offsets.astype(np.int64)) == plan.stride_bytes)


@pytest.mark.parametrize(
    "modes, separated",
    [
        ([(140e-9, 0.5), (157e-9, 0.5)], True),  # the H200's near and far L2 partitions
        ([(148e-9, 1.0)], False),
        ([(140e-9, 0.97), (300e-9, 0.03)], False),  # a rare tail is not a second mode
    ],
    ids=["two partitions", "one mode", "rare tail"],
)
def test_split_modes(modes, separated):
    rng = np.random.default_rng(0)
    hops = np.concatenate([rng.normal(m, m * 0.02, int(4096 * f)) for m, f in modes])
    split = _latency.split_modes(hops)
    assert split.separated is separated
    if separated:
        assert split.low_seconds == pytest.approx(modes[0][0], rel=0.03)
        assert split.high_seconds == pytest.approx(modes[1][0], rel=0.03)


def test_summarize_chase_converts_cycles_with_the_kernels_clock():
    plan = next(p for p in PLANS if p.name == "dram")
    cycles = [np.full(plan.hops, 700, dtype=np.uint32)] * 3
    point = _latency.summarize_chase(plan, cycles, [1e6] * 3, [1.98e6] * 3, l2_cache_bytes=60 * MiB,
                                     pages_touched=128)
    assert point.clock_hz == pytest.approx(1.98e9)
    assert point.median_seconds == pytest.approx(700 / 1.98e9)
    assert point.misses_l2_by_construction and point.launches == 3


def _point(name, seconds):
    plan = next(p for p in _latency.chase_plans(60 * MiB, 140 * GiB) if p.name == name)
    return _latency.ChasePoint(plan=plan, median_seconds=seconds, p10_seconds=seconds, p90_seconds=seconds,
                               median_cycles=seconds * 2e9, clock_hz=2e9, launches=1, pages_touched=1,
                               misses_l2_by_construction=plan.flush and plan.footprint_bytes >= 240 * MiB,
                               modes=_latency.split_modes([140e-9] * 50 + [157e-9] * 50) if name == "l2" else None)


def test_levels_name_each_figure_and_prove_the_dram_one():
    strides = [_point(p.name, s) for p, s in zip([p for p in PLANS if p.sweep == "stride_warm"],
                                                 (145e-9, 146e-9, 147e-9, 165e-9, 170e-9))]
    levels = _latency.latency_levels([_point("l1", 23e-9), _point("l2", 148e-9), _point("dram", 355e-9), *strides],
                                      l2_cache_bytes=60 * MiB)
    assert (levels.l1_hit_seconds, levels.l2_hit_seconds, levels.dram_seconds) == (23e-9, 148e-9, 355e-9)
    assert levels.l2_near_hit_seconds == pytest.approx(140e-9) and levels.l2_far_hit_seconds == pytest.approx(157e-9)
    assert "first touch" in levels.dram_proof
    assert levels.tlb_miss_penalty_seconds == pytest.approx(25e-9)
    assert levels.tlb_reach_bytes == 256 * MiB  # the 64 KiB stride, the last within 10%
    assert not levels.notes


def test_levels_warn_when_the_dram_chase_is_not_slower():
    levels = _latency.latency_levels([_point("l2", 300e-9), _point("dram", 310e-9)], l2_cache_bytes=60 * MiB)
    assert any("not clearly slower" in note for note in levels.notes)


def test_recorded_ladder_is_in_order(h200_report):
    levels = h200_report.latency.levels
    # the L2 hits split into near and far modes in some runs, not in others (notes say so)
    near = levels.l2_near_hit_seconds or levels.l2_hit_seconds
    far = levels.l2_far_hit_seconds or levels.l2_hit_seconds
    assert levels.l1_hit_seconds < near <= far < levels.dram_seconds
    assert (levels.l2_near_hit_seconds is None) == any("one mode" in n for n in levels.notes)
    dram = next(p for p in h200_report.latency.points if p.plan.name == "dram")
    assert dram.misses_l2_by_construction


# ------------------------------------------------------------------------- working set


@pytest.mark.parametrize(
    "cache, footprint, level",
    [("ca", 1 * MiB, "l1"), ("ca", 8 * MiB, "l1"), ("ca", 16 * MiB, "transition"), ("cg", 16 * MiB, "l2"),
     ("cg", 32 * MiB, "transition"), ("cg", 256 * MiB, "dram"), ("ca", 4 * GiB, "dram")],
    ids=["ca 1M", "ca 8M", "ca 16M", "cg 16M", "cg 32M", "cg 256M", "ca 4G"],
)
def test_footprint_level_on_an_h200(cache, footprint, level):
    assert _workingset.footprint_level(cache, footprint, sm_count=132, l2_cache_bytes=60 * MiB) == level


def test_recorded_plateaus_are_ordered_and_match_the_ceilings(h200_report):
    ws = h200_report.working_set
    p = ws.plateaus
    assert p.l1_bytes_per_second > p.l2_bytes_per_second > p.dram_bytes_per_second
    assert _workingset.working_set_plateaus(ws.points) == p
    dram_read = h200_report.ceilings.value("dram_read")
    assert p.dram_bytes_per_second == pytest.approx(dram_read, rel=0.05)
    assert min(q.footprint_bytes for q in ws.points) < 2 * MiB and max(q.footprint_bytes for q in ws.points) >= 2 * GiB


def test_working_set_plot(h200_report):
    pytest.importorskip("matplotlib")
    png = _workingset.plot_working_set(h200_report.working_set, title="t", l2_cache_bytes=60 * MiB, sm_count=132)
    assert png[:8] == b"\x89PNG\r\n\x1a\n"


# ------------------------------------------------------------------------- host links


def test_fit_link_recovers_latency_and_rate():
    sizes = [MiB * 4**k for k in range(6)]
    latency, rate, error = _hostlink.fit_link(sizes, [8e-6 + s / 55e9 for s in sizes])
    assert latency == pytest.approx(8e-6, rel=0.02) and rate == pytest.approx(55e9, rel=0.01) and error < 0.005


def test_fit_link_needs_two_sizes():
    with pytest.raises(ValueError, match="two distinct sizes"):
        _hostlink.fit_link([MiB, MiB], [1e-4, 1e-4])


def test_fit_segments_keeps_one_line_when_it_fits():
    sizes = [MiB * 4**k for k in range(6)]
    segments, error = _hostlink.fit_segments(sizes, [8e-6 + s / 55e9 for s in sizes])
    assert len(segments) == 1 and segments[0].from_bytes == 0 and error < 0.01


def test_fit_links_groups_and_skips_small_and_second_touch():
    def point(memory, direction, size, seconds, touch=None):
        return _hostlink.HostLinkPoint(memory=memory, direction=direction, touch=touch, bytes=size,
                                       median_seconds=seconds, bytes_per_second=size / seconds, spread=0.0,
                                       repetitions=3, timer="events")

    points = [point("pinned", "h2d", s, 7e-6 + s / 55e9) for s in (4096, MiB, 16 * MiB, GiB)]
    points += [point("managed", "h2d", s, 1e-4 + s / 9e9, "first") for s in (MiB, 64 * MiB, GiB)]
    points += [point("managed", "h2d", s, 4e-6 + s / 4e12, "second") for s in (MiB, 64 * MiB, GiB)]
    fits = {(f.memory, f.direction): f for f in _hostlink.fit_links(points)}
    assert set(fits) == {("pinned", "h2d"), ("managed", "h2d")}
    assert fits[("pinned", "h2d")].sizes == (MiB, 16 * MiB, GiB)
    assert fits[("managed", "h2d")].bytes_per_second == pytest.approx(9e9, rel=0.01)
    assert fits[("pinned", "h2d")].seconds(GiB) == pytest.approx(7e-6 + GiB / 55e9, rel=0.01)


@pytest.mark.parametrize("folder", ["h200", "h100-sxm"])
def test_recorded_fits_hold(folder):
    report = validate.load_report_set(RESULTS / folder).reports[0]
    assert len(report.host_links.fits) == 8 and not report.host_links.errors
    for fit in report.host_links.fits:
        # the H100 run of 2026-11-22 (third session) was noisier: managed memory's first touch
        # migrates pages (1 MiB device-to-host took 2.46 ms, 0.42 ms the run before) and
        # pageable host-to-device fit within 15.9 %; the H100 run of 2026-11-26 (after the house
        # move) within 19.6 % (pageable copies go through the host's memory, shared with others)
        assert fit.max_relative_error <= (0.5 if (fit.memory, fit.direction) == ("managed", "d2h") else 0.20)
        for p in report.host_links.points:
            if (p.memory, p.direction) == (fit.memory, fit.direction) and p.bytes >= MiB and p.touch != "second":
                assert abs(fit.seconds(p.bytes) / p.median_seconds - 1) <= fit.max_relative_error + 1e-9


# ------------------------------------------------------------------------- tensor


@pytest.mark.parametrize(
    "cc, precision, kernels",
    [
        ("9.0", "bf16_tensor", ["wgmma_bf16", "mma_bf16"]),
        ("9.0", "fp64_tensor", ["dmma_m8n8k4", "dmma_m16n8k16"]),
        ("9.0", "fp8_tensor", ["wgmma_fp8"]),
        ("8.0", "int8_tensor", ["mma_int8"]),
        ("8.0", "fp64_tensor", ["dmma_m8n8k4"]),
        ("10.0", "bf16_tensor", ["mma_bf16"]),  # no wgmma after Hopper
    ],
    ids=["H100 bf16", "H100 fp64", "H100 fp8", "A100 int8", "A100 fp64", "B200 bf16"],
)
def test_tensor_kernels_per_architecture(cc, precision, kernels):
    assert [k.kernel for k in _tensor.tensor_kernels(cc)[precision]] == kernels


def test_tensor_compile_target_and_flop_count():
    assert _tensor.compile_arch("9.0") == "sm_90a" and _tensor.compile_arch("8.0") == "sm_80"
    wgmma = _tensor.tensor_kernels("9.0")["bf16_tensor"][0]
    # 132 blocks of 3 warpgroups, 10 iterations of 4 x m64n256k16 (2 x 64 x 256 x 16 flops)
    assert wgmma.flops(132, 384, 10) == 132 * 3 * 10 * 4 * 2 * 64 * 256 * 16


def test_tensor_source_holds_every_kernel_of_the_tables():
    source = _compile.kernel_source("tensor.cu")
    names = {k.kernel for cc in ("8.0", "9.0") for ks in _tensor.tensor_kernels(cc).values() for k in ks}
    for name in names:
        assert f"{name}(" in source or f"({name}," in source or f"{name}," in source


# ------------------------------------------------------------------------- independent figures


def _ceilings(measured=900e12):
    timing = _timing.summarize([1e-3])
    item = ceiling_types.Ceiling(name="bf16_tensor", unit="flops_per_second", measured=measured, work_per_launch=1.0,
                            timing=timing, grid=(1, 1, 1), block=(128, 1, 1))
    copy = ceiling_types.Ceiling(name="dram_copy", unit="bytes_per_second", measured=4.2e12, work_per_launch=1.0,
                            timing=timing, grid=(1, 1, 1), block=(256, 1, 1))
    return ceiling_types.Ceilings(items=(item, copy))


def _library_references():
    def ref(name, value):
        return _references.Reference(name=name, value=value, unit="flops_per_second", library="cuBLAS via torch",
                                     description="d", median_seconds=1e-3, repetitions=10)

    return _references.References(items=(ref("cublas_bf16_gemm", 790e12), ref("cupy_memcpy_d2d", 4.3e12),
                                         ref("torch_copy", 4.1e12)))


@pytest.mark.parametrize("ours, used, source", [(900e12, 900e12, "gpuroof kernel"), (700e12, 790e12, "cublas_bf16_gemm")],
                         ids=["ours higher", "library higher"])
def test_the_ceiling_is_the_higher_figure_and_says_which(ours, used, source):
    ceilings = _references.apply_references(_ceilings(ours), _library_references())
    assert ceilings.value("bf16_tensor") == used
    assert ceilings.get("bf16_tensor").value_source.startswith(source)
    assert ceilings.get("bf16_tensor").reference_value == 790e12
    copy = ceilings.get("dram_copy")
    assert copy.reference_name == "cupy_memcpy_d2d" and copy.ceiling == 4.3e12  # best of three copies


def test_recorded_ceilings_meet_the_targets(h200_report):
    c = h200_report.ceilings
    for name in ("dram_copy", "bf16_tensor", "fp64_tensor"):
        assert c.get(name).measured >= c.get(name).reference_value
    assert c.get("fp32_fma").meets_target


# ------------------------------------------------------------------------- calibration


def test_a_negative_tlb_penalty_is_noise_and_recorded_as_zero(h200_report):
    levels = h200_report.latency.levels.model_copy(update={"tlb_miss_penalty_seconds": -5e-10})
    latency = h200_report.latency.model_copy(update={"levels": levels})
    out = _calibration.measured_calibration(roofline.calibration("H200").model_dump(), origin="test",
                                            figures=_latency.LatencyProbe().figures(latency))
    assert out["tlb_miss_penalty_seconds"] == 0.0
    assert "-0.50 ns: no penalty" in out["sources"]["tlb_miss_penalty_seconds"]


def test_measured_calibration_adds_named_figures_with_sources(h200_report):
    fitted = h200_report.prediction.calibration
    figures = {}
    for probe in PROBES:  # what run_validation gives the calibration: every probe's figures
        if getattr(h200_report, probe.name) is not None:
            figures.update(probe.figures(getattr(h200_report, probe.name)))
    out = _calibration.measured_calibration(fitted, origin="an NVIDIA H200, test", figures=figures)
    cal = roofline.Calibration.model_validate(out)
    assert cal.idle_latency_seconds == fitted["idle_latency_seconds"]  # the fitted round trip stays
    assert cal.dram_latency_seconds == h200_report.latency.levels.dram_seconds
    assert cal.l2_read_bytes_per_second == h200_report.working_set.plateaus.l2_bytes_per_second
    assert cal.sources["dram_latency_seconds"].endswith("an NVIDIA H200, test")
    recorded = h200_report.calibration  # what the run wrote, from the same measurements
    assert {k: v for k, v in out.items() if k != "sources"} == {k: v for k, v in recorded.items() if k != "sources"}
    assert set(out["sources"]) == set(recorded["sources"])


# ------------------------------------------------------------------------- queued event timer


class _Event:
    def __init__(self, t):
        self.t = t

    def sync(self):
        pass

    def __sub__(self, other):
        return (self.t - other.t) * 1e3  # milliseconds, as cuda.core gives them


class _Stream:
    def __init__(self, clock):
        self.clock = clock

    def record(self, options=None):
        return _Event(self.clock[0])


def _timer(monkeypatch, host_delays):
    """A timer on a fake stream: the device takes 1 ms per function; the host takes `host_delays`."""
    clock = [0.0]
    host = iter(host_delays)
    now = [0.0]

    def perf_counter():
        now[0] += next(host) / 2  # two reads per attempt
        return now[0]

    monkeypatch.setattr(_timers.time, "perf_counter", perf_counter)
    session = type("S", (), {"stream": _Stream(clock)})()
    timer = _timers.QueuedEventTimer(session.stream, "sm_90", spin_seconds=50e-6)
    timer._options, spins = object(), []
    timer._spin = spins.append

    def work():
        clock[0] += 1e-3

    return timer, work, spins


def test_queued_timer_on_time(monkeypatch):
    timer, work, spins = _timer(monkeypatch, [20e-6, 20e-6])
    assert timer(work) == pytest.approx(1e-3)
    assert timer.late == 0 and spins == [50_000]


def test_queued_timer_retakes_a_late_sample_behind_a_longer_spin(monkeypatch):
    timer, work, spins = _timer(monkeypatch, [120e-6, 120e-6, 20e-6, 20e-6])
    assert timer(work) == pytest.approx(1e-3)
    assert timer.late == 1 and spins == [50_000, 200_000]


# ------------------------------------------------------------------------- persistence


def test_persistence_cases():
    cases = _persistence.persistence_cases(60 * MiB, 37_500 * 1024)
    windows = [c for c in cases if c.hit_ratio is not None]
    assert sorted({c.hit_ratio for c in windows}) == [0.25, 0.5, 0.75, 1.0]
    assert len({c.set_aside_bytes for c in windows}) == 3
    hot = max(c.hot_bytes for c in cases)
    assert hot & (hot - 1) == 0 and hot <= 37_500 * 1024  # a power of two (the kernel masks)
    for c in windows:  # every window has its baseline: same hot set and set-aside, no window
        assert c.model_copy(update={"hit_ratio": None}) in cases


@pytest.mark.parametrize("slug", ["h200", "h100-sxm"])
def test_repredict_recorded_persistence(slug):
    data = json.loads((ROOT / "tests" / "data" / f"persistence_{slug}.json").read_text())
    recorded = _persistence.Persistence.model_validate(data["persistence"])
    again = _persistence.repredict(recorded, l2_cache_bytes=data["l2_cache_bytes"])
    assert again == recorded  # the committed predictions are today's model's
    alone = [p for p in again.points if p.case.hit_ratio is None]
    assert alone and all(p.predicted_time_ratio is None for p in alone)
    assert max(abs(p.error) for p in again.points if p.error is not None) <= 0.15


# ------------------------------------------------------------------------- many devices


def test_report_sets_merge_with_the_spread(h200_report, tmp_path):
    other = h200_report.model_copy(update={
        "device": h200_report.device.model_copy(update={"index": 1}),
        "ceilings": _references.apply_references(h200_report.ceilings, _references.References()),
        "runtime_seconds": h200_report.runtime_seconds * 1.5})
    merged = _multi.merge_report_sets([validate.ReportSet(created_utc="t", reports=(other,)),
                                       validate.ReportSet(created_utc="t", reports=(h200_report,))])
    assert [r.device.index for r in merged.reports] == [0, 1]
    runtime = next(row for row in merged.spread if row.figure == "runtime")
    assert runtime.spread == pytest.approx(0.5 / 1.25)
    assert len(runtime.devices) == 2 and runtime.model == "NVIDIA H200"
    md = _multi.render_report_set(merged, ["device-0/", "device-1/"])
    assert "# gpuroof validation: 2 devices" in md and "## Spread between devices" in md
    assert md.count("## gpuroof validation: NVIDIA H200 (device") == 2 and "](device-1/roofline.png)" in md


def test_one_device_makes_no_spread(h200_report):
    assert _multi.device_spread([h200_report]) == ()


def test_schema_one_reports_merge_too(h200_report, tmp_path):
    old = json.loads(h200_report.model_dump_json())
    old["schema_version"] = 1
    for key in ("references", "launch", "latency", "working_set", "host_links", "persistence", "calibration",
                "measurement_errors", "step_seconds", "late_timer_samples", "host"):
        old.pop(key)
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "report.json").write_text(json.dumps(old))
    merged = validate.merge_reports([tmp_path / "old", RESULTS / "h200" / "report.json"], tmp_path / "merged")
    assert len(merged.reports) == 2 and merged.reports[0].schema_version in (1, 2)
    assert (tmp_path / "merged" / "report.md").read_text().startswith("# gpuroof validation: 2 devices")


def test_merge_rejects_nothing_and_non_reports(tmp_path):
    with pytest.raises(ValueError, match="empty"):
        validate.merge_reports([], tmp_path)
    (tmp_path / "x.json").write_text("{}")
    with pytest.raises(ValueError, match="no gpuroof validation report"):
        validate.load_report_set(tmp_path / "x.json")


def test_committed_two_gpu_report():
    merged = validate.load_report_set(RESULTS / "h200-x2")
    assert [r.device.index for r in merged.reports] == [0, 1] and not merged.errors
    # the measurements and the kernel families (about 210 s of 290 s per H200 with both at work)
    assert all(r.runtime_seconds < 400 for r in merged.reports)
    assert {row.figure for row in merged.spread} >= {"ceiling dram_copy", "ceiling bf16_tensor", "latency dram"}


def test_committed_reports_render_every_section(h200_report):
    md = validate.render_markdown(h200_report)
    for heading in ("## Measured ceilings", "### Clocks and power", "## Launch overhead", "## Latency ladder",
                    "## Working-set sweep", "## Host links", "## L2 persistence"):
        assert heading in md
    assert "cublas_bf16_gemm" in md and "first touch of its line since the flush" in md
    # about 70 s of measurements, and the kernel families (about 130-200 s on an H200: 201 s on 2026-11-27)
    assert h200_report.runtime_seconds < 330
    assert h200_report.step_seconds.get("families", 0) < 240


# ---------------------------------------------------------------------------- the probe registry


# Probes added since the committed reports were run on a GPU: the next `gpuroof validate` on the
# device fills their fields (scripts/device_validate.sh); until then they are checked on a result
# built here (only when the report lacks them: deriving the compute terms fits the overlap
# exponent, a few seconds of CPU).
NOT_IN_COMMITTED_REPORTS = {
    "nsight_launch": lambda: validate.probes.NsightLaunch(empty_kernel_seconds=1.4e-6, spread_seconds=1e-7,
                                                          launches=20, command="ncu ..."),
    "compute": lambda: validate.probes._compute.derive_compute(
        trip_points={1024: 4.5e-7, 8192: 7.2e-7}, overlap_points={0: 1e-4, 32: 1.2e-4, 64: 1.5e-4, 256: 5.2e-4},
        overlap_elements=1 << 25, fma_chain_seconds=2.02e-9, clock_hz=1.98e9, tensor_rate_fraction=0.92),
    "memory_terms": lambda: _memory_terms.derive_memory_terms(_memory_terms.MemoryTermTimes(
        lone_sector_seconds=1.3e-5, lone_sector_requests=2 << 20, full_line_seconds=3.2e-5, full_line_sectors=8 << 20,
        one_address_seconds=1e-4, one_address_updates=1 << 17, spread_seconds=4e-5, spread_updates=2 << 20,
        random_burst_seconds=4.3e-4, random_bursts=1 << 24), read_bytes_per_second=4.5e12),
    "shared_atomics": lambda: validate.probes._shared_atomics.derive_shared_atomics(
        validate.probes._shared_atomics.SharedAtomicTimes(iters=256, sm_count=132, seconds={
            "shared_add_one_word": (8e-6, 12e-6), "shared_add_spread": (8e-6, 12e-6),
            "shared_cas_one_word": (30e-6, 57e-6), "shared_cas_spread": (20e-6, 37e-6),
            "shared_cas_chain": (20e-6, 37e-6)})),
    "global_cas": lambda: validate.probes._global_cas.derive_global_cas(validate.probes._global_cas.GlobalCasTimes(
        iters=512, threads={"global_cas_chain": 1, "global_cas_lines": 270336},
        seconds={"global_cas_chain": (260e-6, 516e-6), "global_cas_lines": (1.2e-3, 2.4e-3)})),
    "l2_writes": lambda: validate.probes._kept_writes.derive_l2_writes(62914560, (
        validate.probes._kept_writes.L2WriteLaunch(kernel="l2_store_only", footprint_bytes=125829120,
                                                 written_bytes=125829120, dram_written_bytes=96.8e6,
                                                 dram_read_bytes=0.0),)),
    # two launches on the ramp of an H200-sized L2: 30 % and 70 % of the sectors asked again refetched
    "open_lines": lambda: validate.probes._open_lines.derive_open_lines(62914560, tuple(
        validate.probes._open_lines.OpenLineLaunch(blocks=blocks, columns=64, l2_read_sectors=8 * blocks * 64 * 64 / 4,
                                                   dram_read_bytes=blocks * 64 * 64 * 8 * (1 + 7 * 2 * share))
        for blocks, share in ((3000, 0.3), (4000, 0.7)))),
}


def test_every_probe_has_its_report_field_and_its_figures_name_calibration_fields(h200_report):
    names = [probe.name for probe in PROBES]
    assert len(set(names)) == len(names)
    for i, probe in enumerate(PROBES):
        assert probe.name in validate.ValidationReport.model_fields, probe.name
        assert probe.error_field is None or probe.error_field in validate.ValidationReport.model_fields, probe.name
        earlier = set(names[:i])
        assert set(probe.needs) <= earlier, f"{probe.name} needs a probe that runs after it: {probe.needs}"
        result = getattr(h200_report, probe.name) or NOT_IN_COMMITTED_REPORTS.get(probe.name, lambda: None)()
        assert result is not None, f"the committed H200 report has no {probe.name}"
        if probe.name in ("kernels", "calibration"):  # their results are not report fields as they are
            continue
        assert set(probe.figures(result)) <= set(roofline.Calibration.model_fields), probe.name
        assert set(probe.fields(result)) <= set(validate.ValidationReport.model_fields), probe.name
        section = probe.render(result, "##", "")
        assert not section or section[0].startswith("## ")
        if probe.name not in NOT_IN_COMMITTED_REPORTS:
            assert not section or section[0][3:] in validate.render_markdown(h200_report)


def test_run_validation_runs_the_probe_registry_and_calibrates_from_their_figures(h200_report, monkeypatch):
    """run_validation on a fake device whose measurements are the committed H200 report's:
    every registered probe runs in the loop, in registry order, its result lands in its report
    field, and the calibration is the fitted one with the probes' figures, as the GPU run wrote it."""
    from validate.checks import _occupancy
    from validate.probes import (
        _ceilings,
        _hostlink,
        _latency,
        _launch,
        _memory_effects,
        _persistence,
        _prediction,
        _references,
        _workingset,
    )
    from validate.run import _run
    from validate.suite import _suite

    r = h200_report
    session = type("FakeSession", (), {"index": 0, "device": type("D", (), {"pci_bus_id": "0000:00:00.0"})(),
                                       "timer": type("T", (), {"late": 0})()})()
    monkeypatch.setattr(_run, "open_session", lambda device: session)
    monkeypatch.setattr(_run, "query_device", lambda s: r.device)
    monkeypatch.setattr(_run, "open_clock_monitor", lambda pci: _clocks.ClockMonitor(None))
    monkeypatch.setattr(_ceilings, "measure_ceilings", lambda *a, **k: r.ceilings)
    monkeypatch.setattr(_occupancy, "check_occupancy", lambda *a, **k: r.occupancy_check)
    monkeypatch.setattr(_prediction, "run_prediction_check", lambda *a, **k: r.prediction)
    monkeypatch.setattr(_suite, "run_suite", lambda *a, **k: r.kernels)
    monkeypatch.setattr(_references, "measure_references", lambda *a, **k: r.references)
    for module, name, value in ((_launch, "measure_launch_overhead", r.launch), (_latency, "measure_latency_ladder", r.latency),
                                (_workingset, "measure_working_set", r.working_set),
                                (_hostlink, "measure_host_links", r.host_links),
                                (_persistence, "measure_persistence", r.persistence),
                                (_memory_effects, "measure_effects", r.effects),
                                # not in the committed report: measured nothing, the calibration stays the report's
                                (_memory_terms, "measure_memory_terms", r.memory_terms)):
        monkeypatch.setattr(module, name, lambda *a, value=value, **k: value)
    nsight = r.nsight_launch or validate.probes._nsight_launch.NsightLaunch(skipped="ncu is not on PATH")
    monkeypatch.setattr(validate.probes._nsight_launch, "measure_nsight_launch", lambda *a, **k: nsight)
    compute = r.compute or NOT_IN_COMMITTED_REPORTS["compute"]()
    monkeypatch.setattr(validate.probes._compute, "measure_compute", lambda *a, **k: compute)
    shared = r.shared_atomics or NOT_IN_COMMITTED_REPORTS["shared_atomics"]()
    monkeypatch.setattr(validate.probes._shared_atomics, "measure_shared_atomics", lambda *a, **k: shared)
    global_cas = r.global_cas or NOT_IN_COMMITTED_REPORTS["global_cas"]()
    monkeypatch.setattr(validate.probes._global_cas, "measure_global_cas", lambda *a, **k: global_cas)
    l2_writes = r.l2_writes or NOT_IN_COMMITTED_REPORTS["l2_writes"]()
    monkeypatch.setattr(validate.probes._kept_writes, "measure_l2_writes", lambda *a, **k: l2_writes)
    open_lines = r.open_lines or NOT_IN_COMMITTED_REPORTS["open_lines"]()
    monkeypatch.setattr(validate.probes._open_lines, "measure_open_lines", lambda *a, **k: open_lines)
    run = validate.run_validation(families=(), progress=lambda message: None)
    report = run.report
    assert list(report.step_seconds) == ["pci bus id", *(probe.step for probe in PROBES)]
    for probe in PROBES:
        assert probe.step in report.step_seconds
        if probe.name not in ("calibration", "families", *NOT_IN_COMMITTED_REPORTS):  # sources carry the date
            got = getattr(report, probe.name)
            if probe.name == "compute" and got is not None:  # the committed report predates the model's exponent
                got = got.model_copy(update={"model_phase_exponent": None, "model_phase_fmas": ()})
            assert got == getattr(r, probe.name), probe.name
    assert report.summary == r.summary and report.families is None
    assert report.measurement_errors == {}
    assert report.calibration is not None
    # the figures of probes the committed report predates are the synthetic results' own
    newer = {"phase_exponent"} | (set() if r.compute else set(validate.probes.ComputeProbe().figures(compute)))
    newer |= set() if r.shared_atomics else set(validate.probes.SharedAtomicsProbe().figures(shared))
    newer |= set() if r.global_cas else set(validate.probes.GlobalCasProbe().figures(global_cas))
    newer |= set() if r.l2_writes else set(validate.probes.L2WritesProbe().figures(l2_writes))
    newer |= set() if r.open_lines else set(validate.probes.OpenLinesProbe().figures(open_lines))
    values = {k: v for k, v in report.calibration.items() if k != "sources" and k not in newer}
    assert values == {k: v for k, v in r.calibration.items() if k != "sources" and k not in newer}
    assert set(report.calibration["sources"]) - newer == set(r.calibration["sources"]) - newer
    assert all(report.calibration[k] == v for k, (v, _) in validate.probes.ComputeProbe().figures(compute).items())
    if r.compute is not None:  # the run fits the sweep with the model as the packaged figure was fitted
        assert report.compute.model_phase_fmas == (64, 128, 192, 256)
        assert report.calibration["phase_exponent"] == pytest.approx(roofline.calibration("H200").phase_exponent,
                                                                     abs=0.02)
    text = validate.render_markdown(report)
    for probe in PROBES:
        section = probe.render(getattr(report, probe.name), "##", "")
        assert not section or section[0] in text


def test_the_block_ramp_is_the_sweeps_dispatch_interval(h200_report):
    """The launch probe's ramp goes to the copy sweep's fit as its dispatch interval (and the
    ramp term's), with how it was measured; the fit then leaves the interval alone."""
    launch = h200_report.launch
    seconds, how = validate.block_ramp_figure(launch)
    assert seconds == launch.block_ramp_seconds and "blocks per SM" in how
    base, fitted = sweep_base(roofline.gpu("H200"), 2.8e-6, 4.1e12, (seconds, how))
    assert base.block_dispatch_seconds == base.block_ramp_seconds == seconds
    assert how in base.sources["block_dispatch_seconds"]
    assert "block_dispatch_seconds" not in {p.name for p in fitted}
    unmeasured = launch.model_copy(update={"block_ramp_seconds": None})
    assert validate.block_ramp_figure(unmeasured) is None
    base, fitted = sweep_base(roofline.gpu("H200"), 2.8e-6, 4.1e12, None)
    assert base.block_dispatch_seconds == roofline.calibration("H200").block_dispatch_seconds
    assert "block_dispatch_seconds" in {p.name for p in fitted}
    with pytest.raises(TypeError, match="^result must be a validate.LaunchOverhead, not dict$"):
        validate.block_ramp_figure({"block_ramp_seconds": 1e-7})
