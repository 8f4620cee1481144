"""validate on a real GPU: device query, kernels against numpy, timing, ceilings, occupancy.

Marked ``gpu``; every test skips with the reason where there is no GPU or cuda-python.
"""

from __future__ import annotations

import numpy as np
import pytest

import validate
from validate.checks import _occupancy
from validate.device import _clocks, _compile
from validate.probes import _ceilings, _hostlink, _latency, _launch, _workingset
from roofline import models
from validate.suite._suite import PredictionInputs, _run_one

pytestmark = pytest.mark.gpu


def test_device_query_is_consistent(gpu_info):
    info = gpu_info
    major, minor = info.compute_capability.split(".")
    assert info.arch == f"sm_{major}{minor}"
    assert info.sm_count > 0 and info.clock_hz > 1e8
    assert info.max_threads_per_sm == info.warp_size * (info.max_threads_per_sm // info.warp_size)
    # bandwidth derived from the reported bus and memory clock (2 transfers per clock)
    assert info.memory_bandwidth == pytest.approx(2 * info.memory_clock_hz * info.memory_bus_width_bits / 8)


def test_device_matches_database_and_architecture(gpu_info):
    entry, comparison = validate.compare_device(gpu_info)
    assert entry is not None, "the lent GPU should be in the roofline database"
    assert entry.sm_count == gpu_info.sm_count
    assert comparison.architecture_differences == (), comparison.architecture_differences


# Small and non-square sizes: every model kernel must compute what the model describes.
SMALL = [
    models.copy(100_003),
    models.vector_add(100_003),
    models.triad(100_003, scalar=-1.5),
    models.offset_read(100_003, 11),
    models.offset_write(100_003, 13),
    models.strided_read(100_003, 3),
    models.strided_write(100_003, 5),
    models.aos(50_001),
    models.soa(50_001),
    models.reduction(100_003, block=128),
    models.blur(97, 61, radius=2),
    models.blur(64, 64, radius=0),
    models.matmul_naive(70, 50, 90),
    models.matmul_tiled(70, 50, 90, tile=16),
    models.matmul_tiled(65, 33, 97, tile=32),
    *[models.transpose(70, 100, variant=v, block=(16, 8)) for v in models.TRANSPOSE_VARIANTS],
    models.transpose(96, 64, variant="shared_padded", block=(32, 16)),
]


@pytest.mark.parametrize("model", SMALL, ids=[getattr(m, "label", m.name) for m in SMALL])
def test_kernel_matches_numpy(gpu_session, gpu_info, model):
    rng = np.random.default_rng(12345)
    row = _run_one(gpu_session, gpu_info, model, inputs=PredictionInputs(), quick=True, rng=rng)
    assert row.status == "ok", row.error
    assert row.measured_seconds > 0
    assert row.resources.registers_per_thread > 0
    assert row.resources.static_shared_memory == model.launch.static_shared_memory


def test_poison_detects_an_unwritten_output(gpu_session, gpu_info):
    # A copy launched with half the grid leaves half the output poisoned: the check must fail.
    model = models.copy(1 << 16)
    half = model.model_copy(update={"launch": model.launch.model_copy(update={"grid": (model.launch.grid[0] // 2, 1, 1)})})
    row = _run_one(gpu_session, gpu_info, half, inputs=PredictionInputs(), quick=True,
                   rng=np.random.default_rng(1))
    assert row.status == "verify_error"
    assert "unwritten" in row.error


def test_event_timer_measures_device_time(gpu_session, gpu_info):
    kernels = _compile.compile_kernels(_compile.kernel_source("ceilings.cu"), ["fma_fp32"], arch=gpu_info.arch)
    sink = gpu_session.allocate(4096)

    def launcher(iterations):
        return gpu_session.launcher(kernels["fma_fp32"], (gpu_info.sm_count, 1, 1), (256, 1, 1),
                                    (sink, np.int32(iterations), np.float32(0.9), np.float32(0.1),
                                     np.float32(1e38)))

    short = validate.benchmark(launcher(256), timer=gpu_session.timer, rules=validate.StopRules(repetitions=20))
    long = validate.benchmark(launcher(4096), timer=gpu_session.timer, rules=validate.StopRules(repetitions=20))
    assert short.repetitions == 20 and short.median_seconds > 0
    # 16x the work takes clearly longer (launch overhead keeps it below 16x)
    assert 4 < long.median_seconds / short.median_seconds < 20


def test_quick_ceilings_are_plausible(gpu_session, gpu_info):
    entry, _ = validate.compare_device(gpu_info)
    datasheet = {"dram": entry.memory_bandwidth, "fp32": entry.peak_flops("fp32")}
    ceilings = _ceilings.measure_ceilings(gpu_session, gpu_info, datasheet, quick=True)
    assert not ceilings.errors, ceilings.errors
    for name in ("dram_copy", "fp32_fma"):
        item = ceilings.get(name)
        assert 0.5 < item.fraction_of_datasheet < 1.05, (name, item.fraction_of_datasheet)


def test_occupancy_calculator_matches_driver_quick(gpu_session, gpu_info):
    check = _occupancy.check_occupancy(gpu_session, gpu_info, quick=True)
    assert not check.compile_errors, check.compile_errors
    assert check.launches_checked > 1000
    assert len(check.registers_seen) >= 4 and len(check.static_shared_memory_seen) >= 2
    assert check.mismatches == (), "\n".join(str(m) for m in check.mismatches[:50])


def test_offline_resources_equal_the_driver(gpu_session, gpu_info):
    """occupancy.kernel_resources read offline equals cuFuncGetAttribute for the same cubin, and
    occupancy.calculate(resources=...) equals cuOccupancyMaxActiveBlocksPerMultiprocessor."""
    check = validate.check_resources(gpu_session, gpu_info, quick=True, triton=False)
    assert check.kernels >= 40 and check.launches_checked > 500
    assert not check.compile_errors, check.compile_errors
    assert check.field_mismatches == (), check.field_mismatches[:10]
    assert check.launch_mismatches == (), check.launch_mismatches[:10]


# ---------------------------------------------------------------- the hierarchy (issue 12)


def test_tensor_ceiling_reaches_the_datasheet_on_hopper(gpu_session, gpu_info):
    if gpu_info.compute_capability != "9.0":
        pytest.skip(f"wgmma is sm_90a only; this GPU is sm_{gpu_info.arch[3:]}")
    from validate.probes._tensor import measure_tensor

    entry, _ = validate.compare_device(gpu_info)
    m = measure_tensor(gpu_session, gpu_info, "bf16_tensor", quick=True)
    # wgmma reached 92-97% of the dense datasheet rate on an H200 and an H100 (docs/results)
    assert m.work / m.timing.median_seconds > 0.8 * entry.peak_flops("bf16_tensor"), m.note
    assert "wgmma_bf16" in m.note


def test_latency_ladder_levels_are_ordered(gpu_session, gpu_info):
    ladder = _latency.measure_latency_ladder(gpu_session, gpu_info, quick=True)
    levels = ladder.levels
    assert not ladder.errors, ladder.errors
    assert levels.l1_hit_seconds < levels.l2_hit_seconds < levels.dram_seconds
    assert levels.dram_seconds > 1.2 * levels.l2_hit_seconds and "first touch" in levels.dram_proof


def test_working_set_plateaus_are_ordered(gpu_session, gpu_info):
    plateaus = _workingset.measure_working_set(gpu_session, gpu_info, quick=True).plateaus
    assert plateaus.l1_bytes_per_second > plateaus.l2_bytes_per_second > plateaus.dram_bytes_per_second


def test_launch_overhead_without_the_host_is_smaller(gpu_session):
    launch = _launch.measure_launch_overhead(gpu_session, quick=True)
    assert 0 < launch.graph_kernel_seconds < launch.queued_kernel_seconds < launch.event_pair_seconds
    # the ramp: a full first wave of empty blocks takes longer than one block per SM, by the slope's
    # worth for each further block (within the event timer's 32-64 ns steps)
    ramp = launch.ramp_kernel_seconds
    assert launch.ramp_blocks_per_sm[0] == 1 and len(ramp) >= 2 and ramp[-1] > ramp[0]
    assert launch.block_ramp_seconds * (len(ramp) - 1) == pytest.approx(ramp[-1] - ramp[0], abs=0.2e-6)
    # the spread: a kernel that touches memory takes longer than the empty one on the same grid, and
    # the slope over the SMs spans the difference between one SM and all of them (within the timer's steps)
    bodies = [t - e for t, e in zip(launch.spread_touch_seconds, launch.spread_empty_seconds)]
    assert launch.spread_sms[0] == 1 and len(bodies) >= 2 and min(bodies) > 0
    assert launch.first_round_seconds_per_sm * (launch.spread_sms[-1] - 1) == pytest.approx(
        bodies[-1] - bodies[0], abs=0.3e-6)


def test_one_sm_merges_partial_stores_faster_than_its_share(gpu_session, gpu_info):
    from validate.probes._memory_effects import measure_effects

    effects = measure_effects(gpu_session, gpu_info, dram_bytes_per_second=3e12, quick=True)
    alone, everyone = effects.sm_partial_store_sectors_per_second, effects.l2_partial_store_sectors_per_second
    # an SM alone does not share L2's merge rate with 131 others, and no port moves the whole GPU's rate
    assert everyone / gpu_info.sm_count < alone < everyone


def test_host_links_quick(gpu_session, gpu_info):
    links = _hostlink.measure_host_links(gpu_session, gpu_info, quick=True)
    assert not {k for k in links.errors if not k.startswith("managed ")}, links.errors
    pinned = links.fit("pinned", "h2d")
    assert pinned is not None and pinned.bytes_per_second > 1e9
    assert links.fit("pageable", "h2d").bytes_per_second < 1.5 * pinned.bytes_per_second


def test_clock_monitor_reads_the_device(gpu_session):
    monitor = _clocks.open_clock_monitor(str(gpu_session.device.pci_bus_id))
    if not monitor.available:
        pytest.skip("NVML (nvidia-ml-py) not available")
    sample = monitor.sample()
    assert sample.sm_clock_hz > 0 and monitor.max_sm_clock_hz >= sample.sm_clock_hz
