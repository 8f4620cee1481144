"""Occupancy-aware prediction: Little's law, waves, calibration and time cliffs."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import occupancy
import roofline
import roofline._calibration  # a private module: loaded by name (roofline loads its names lazily)
from roofline import models
from roofline.terms import achieved_bandwidth

H100 = "H100-SXM"
N = 1 << 26


def _launch(kernel, **update):
    return kernel.launch.model_copy(update=update)


@pytest.mark.parametrize("concurrency_bytes", [1e3, 1e10], ids=["little-law", "roof"])
def test_achieved_bandwidth_limits(concurrency_bytes):
    """Far below the bandwidth-delay product: C / latency; far above: the roof."""
    bw = achieved_bandwidth(concurrency_bytes, peak_bytes_per_second=3e12, latency_seconds=6e-7, knee_sharpness=4)
    little = concurrency_bytes / 6e-7
    assert bw <= min(3e12, little) * (1 + 1e-12)
    assert bw == pytest.approx(min(3e12, little), rel=1e-3)


@pytest.mark.parametrize("sharpness", [1.0, 2.0, 4.0, 16.0])
def test_achieved_bandwidth_monotone_and_below_both_lines(sharpness):
    c = np.logspace(2, 9, 400)
    bw = achieved_bandwidth(c, peak_bytes_per_second=3e12, latency_seconds=6e-7, knee_sharpness=sharpness)
    assert np.all(np.diff(bw) >= -1e-12 * bw[1:])  # never decreases (rounding aside)
    assert np.all(bw <= np.minimum(3e12, c / 6e-7) * (1 + 1e-12))
    # at the knee the soft minimum loses exactly 2**(1/p)
    knee = achieved_bandwidth(3e12 * 6e-7, peak_bytes_per_second=3e12, latency_seconds=6e-7, knee_sharpness=sharpness)
    assert knee == pytest.approx(3e12 / 2 ** (1 / sharpness))


@pytest.mark.parametrize(("dispatch", "expected"), [
    # the scheduler's rate below the memory's: it binds alone, not bent by the others
    (1e12, 1e12),
    # the three rates close together (the copy at 256 threads, one float each): the block
    # scheduler does not deepen the memory's knee
    (3.9e12, None),
    (math.inf, None),
], ids=["dispatch-binds", "dispatch-near", "no-dispatch"])
def test_dispatch_caps_the_soft_knee(dispatch, expected):
    """The dispatch rate is a plain cap on the soft minimum of Little's law and the roof."""
    little, roof, latency, p = 3.46e12, 4.1e12, 6e-7, 2.5
    bw = achieved_bandwidth(little * latency, peak_bytes_per_second=roof, latency_seconds=latency,
                            knee_sharpness=p, dispatch_bytes_per_second=dispatch)
    soft = (little ** -p + roof ** -p) ** (-1 / p)
    assert bw == pytest.approx(expected if expected is not None else soft, rel=1e-9)
    assert bw <= dispatch


def test_prediction_never_beats_the_roofline():
    for kernel in (models.copy(N), models.vector_add(N), models.triad(N)):
        p = roofline.predict(H100, kernel)
        assert p.seconds >= p.roofline_seconds
        assert p.achieved_bytes_per_second <= roofline.gpu(H100).memory_bandwidth


def test_occupancy_comes_from_the_occupancy_package():
    kernel = models.copy(N)
    launch = _launch(kernel, registers_per_thread=40, dynamic_shared_memory=30_000)
    p = roofline.predict(H100, kernel, launch)
    occ = occupancy.calculate("sm_90", threads_per_block=256, registers_per_thread=40, dynamic_shared_memory=30_000)
    assert (p.active_blocks_per_sm, p.active_warps_per_sm) == (occ.active_blocks_per_sm, occ.active_warps_per_sm)
    assert p.assumptions == ()


def test_fewer_resident_warps_starve_a_copy():
    """Two warps per SM cannot cover the latency: the issue's 0.6 vs 3.9 TB/s effect."""
    kernel = models.copy(N)
    full = roofline.predict(H100, kernel, _launch(kernel, registers_per_thread=16))
    # 64 threads per block, one block per SM: two warps per SM
    starved_launch = _launch(
        kernel, block=64, grid=N // 64, registers_per_thread=16, dynamic_shared_memory=200_000,
        max_dynamic_shared_memory=200_000,
    )
    starved = roofline.predict(H100, kernel, starved_launch)
    assert starved.active_warps_per_sm == 2
    assert starved.limiter == "memory_latency"
    assert starved.achieved_bytes_per_second < 0.25 * full.achieved_bytes_per_second


def test_more_loads_in_flight_help_until_the_roof():
    kernel = models.copy(N)
    rates = []
    for elements in (1, 2, 4, 8, 16):
        launch = _launch(kernel, grid=(N // (256 * elements), 1, 1), elements_per_thread=elements, registers_per_thread=32)
        rates.append(roofline.predict(H100, kernel, launch).achieved_bytes_per_second)
    assert all(b >= a * (1 - 1e-9) for a, b in zip(rates, rates[1:]))
    cal = roofline.calibration(H100)
    assert rates[-1] <= roofline.gpu(H100).memory_bandwidth * cal.sustained_bandwidth_fraction


def test_tail_effect_of_a_partial_wave():
    """One block past a full wave adds a whole block lifetime (latency + block overhead)."""
    occ = occupancy.calculate("sm_90", threads_per_block=256, registers_per_thread=32)
    slots = occ.active_blocks_per_sm * roofline.gpu(H100).sm_count
    cal = roofline.calibration(H100).model_copy(update={"launch_overhead_seconds": 0.0})
    exact, more = models.copy(slots * 256 * 4), models.copy((slots + 1) * 256 * 4)
    a = roofline.predict(H100, exact, _launch(exact, grid=(slots, 1, 1), elements_per_thread=4, registers_per_thread=32),
                         calibration=cal)
    b = roofline.predict(H100, more, _launch(more, grid=(slots + 1, 1, 1), elements_per_thread=4, registers_per_thread=32),
                         calibration=cal)
    assert (a.waves, b.waves) == (1.0, pytest.approx(1 + 1 / slots))
    gpu = roofline.gpu(H100)
    sm_bandwidth = cal.sm_bandwidth_bytes_per_second or gpu.l2_bandwidth / gpu.sm_count
    lifetime = cal.idle_latency_seconds + 256 * 4 * 8 / sm_bandwidth
    assert b.memory_seconds - a.memory_seconds == pytest.approx(lifetime, rel=0.05)
    assert b.limiter == "tail"


def test_compute_side_issue_limit():
    """FMA latency x schedulers: one warp per scheduler with one chain is issue-limited."""
    kernel = models.matmul_tiled(4096, tile=32)
    p1 = roofline.predict(H100, kernel, fma_chains_per_thread=1)
    p8 = roofline.predict(H100, kernel, fma_chains_per_thread=8)
    assert p8.compute_seconds <= p1.compute_seconds
    # at the roof, on the busiest SM: the last round of blocks leaves some SMs one block short
    sms, blocks = roofline.gpu(H100).sm_count, kernel.launch.blocks
    busiest = -(-blocks // sms) * sms / blocks
    assert p8.compute_seconds == pytest.approx(busiest * kernel.flops / roofline.gpu(H100).peak_flops("fp32"))


def test_unlaunchable_launch_is_an_error():
    kernel = models.copy(N)
    # 1024 threads x 255 registers needs 4x the registers a block may hold: 0 blocks
    with pytest.raises(roofline.RooflineError, match="cannot run.*registers"):
        roofline.predict(H100, kernel, _launch(kernel, block=(1024, 1, 1), registers_per_thread=255))


@pytest.mark.parametrize(
    "bad,error", [(0, roofline.RooflineError), (-1, roofline.RooflineError), (2**31, roofline.RooflineError),
                  (1.5, TypeError), (True, TypeError)], ids=["0", "-1", "2**31", "float", "bool"])
def test_bad_loads_in_flight(bad, error):
    with pytest.raises(error, match="loads_in_flight_per_thread"):
        roofline.predict(H100, models.copy(N), loads_in_flight_per_thread=bad)


def test_calibration_sources_and_defaults():
    cal = roofline.calibration("h100 sxm")
    assert set(cal.measured) | set(cal.defaulted) == set(roofline._calibration.CALIBRATION_PARAMETERS)
    for name in cal.measured:
        assert cal.sources[name].startswith("measured")
    unknown = roofline.calibration("T4")
    assert unknown.measured == ()


def test_load_calibration_roundtrip(tmp_path):
    cal = roofline.calibration(H100).model_copy(update={"idle_latency_seconds": 7e-7})
    path = tmp_path / "report.json"
    path.write_text(json.dumps({"calibration": cal.model_dump()}))
    assert roofline.load_calibration(path) == cal
    path.write_text("{}")
    with pytest.raises(roofline.RooflineError, match="not a calibration"):
        roofline.load_calibration(path)


def test_time_cliffs_match_direct_predictions():
    kernel = models.vector_add(N)
    result = roofline.cliffs.time_cliffs(H100, kernel)
    assert result.cliffs
    for row in result.cliffs:
        if row.resource == "registers":
            launch = _launch(kernel, registers_per_thread=row.value)
            direct = roofline.predict(H100, kernel, launch)
            assert row.predicted_seconds == pytest.approx(direct.seconds)
            assert row.relative_time == pytest.approx(direct.seconds / result.current.seconds)
    worst = result.worst("registers")
    assert worst.active_blocks_per_sm == min(r.active_blocks_per_sm for r in result.cliffs if r.resource == "registers")


def test_the_cliff_below_comes_first_where_one_more_block_fits():
    """40 registers a thread hold 6 blocks of 256 an SM; 32 hold 8: the first register row is the
    cliff below (occupancy's gain), with more blocks and the time `predict` gives there."""
    kernel = models.copy(N)
    launch = kernel.launch.model_copy(update={"registers_per_thread": 40})
    rows = [r for r in roofline.cliffs.time_cliffs(H100, kernel, launch).cliffs if r.resource == "registers"]
    first = rows[0]
    assert first.value == 32 and first.active_blocks_per_sm == 8 and all(r.value > 32 for r in rows[1:])
    direct = roofline.predict(H100, kernel, launch.model_copy(update={"registers_per_thread": 32}))
    assert first.predicted_seconds == pytest.approx(direct.seconds)
    # at full occupancy there is no cliff below: the rows start above the current value
    full = roofline.cliffs.time_cliffs(H100, kernel, kernel.launch.model_copy(update={"registers_per_thread": 32}))
    assert all(r.value > 32 for r in full.cliffs if r.resource == "registers")


def test_register_cliffs_keep_the_kernel_s_sass():
    """A register threshold is the same code at another register count: its row keeps the SASS (a
    grid-stride loop of one load in flight), so a row at N blocks an SM predicts as the shared-memory
    row at N blocks does, and as `predict` with the resources at those registers."""
    loop = occupancy.SassLoop(start_offset=0x100, end_offset=0x180, depth=1,
                              instructions=occupancy.SassCounts(total=8, global_loads=1, fp32_fma=1, branches=1),
                              global_loads_in_flight=1, fewest_loads_in_flight=1)
    sass = occupancy.SassSummary(architecture="sm_90", disassembler="listing", loops=(loop,), hot_loop=0,
                                 instructions=occupancy.SassCounts(total=30, global_loads=1, global_stores=1),
                                 global_loads_in_flight_per_thread=1, global_load_bytes=4)
    resources = occupancy.KernelResources(kernel="k", architecture="sm_90", registers_per_thread=32, sass=sass)
    launch = occupancy.Launch(grid=1056, block=256, resources=resources)
    kernel = roofline.Kernel(name="k", flops=N, dram_bytes=4 * N, load_bytes=4 * N, precision="fp32", launch=launch)
    result = roofline.cliffs.time_cliffs(H100, kernel)
    by_blocks = {(r.resource, r.active_blocks_per_sm): r.predicted_seconds for r in result.cliffs}
    shared = {blocks: t for (resource, blocks), t in by_blocks.items() if resource == "shared_memory"}
    rows = [(blocks, t) for (resource, blocks), t in by_blocks.items() if resource == "registers" and blocks in shared]
    assert rows
    for blocks, seconds in rows:
        assert seconds == pytest.approx(shared[blocks], rel=1e-9)
    row = next(r for r in result.cliffs if r.resource == "registers")
    moved = launch.model_copy(update={"registers_per_thread": row.value, "resources": resources.model_copy(
        update={"registers_per_thread": row.value})})
    assert any(t.name == "trips" and t.seconds > 0 for t in roofline.predict(H100, kernel, moved).terms)
    assert row.predicted_seconds == pytest.approx(roofline.predict(H100, kernel, moved).seconds)


def test_fit_recovers_synthetic_parameters(predict_setting_once):
    """Points generated by `predict` itself are fitted back to the parameters that made them."""
    from validate.probes._prediction import SweepPoint, fit_calibration, predict_sweep_point

    gpu = roofline.gpu(H100)
    truth = roofline.calibration(gpu).model_copy(update={
        "idle_latency_seconds": 5e-7, "sm_bandwidth_bytes_per_second": 4e10, "block_dispatch_seconds": 8e-8,
        "knee_sharpness": 3.0, "launch_overhead_seconds": 1e-5,
    })
    # whole waves only (n is a multiple of every slot count), so the steady state is exact
    n = 132 * (1 << 18)
    points = []
    for block, elements, dynamic in [(256, 1, 0), (256, 2, 100_000), (256, 4, 50_000), (256, 1, 200_000),
                                     (64, 1, 0), (64, 4, 0), (1024, 2, 0), (1024, 4, 120_000)]:
        occ = occupancy.calculate("sm_90", threads_per_block=block, registers_per_thread=16,
                                  dynamic_shared_memory=dynamic, max_dynamic_shared_memory=max(dynamic, 48 * 1024))
        p = SweepPoint(block_size=block, elements_per_thread=elements, blocks_per_sm_limit=None,
                       dynamic_shared_memory=dynamic, registers_per_thread=16,
                       active_blocks_per_sm=occ.active_blocks_per_sm, runtime_active_blocks_per_sm=None,
                       measured_seconds=1.0, measured_bytes_per_second=1.0)
        predicted = predict_sweep_point(gpu, truth, p, n=n)
        points.append(p.model_copy(update={"measured_seconds": predicted.predicted_seconds,
                                           "measured_bytes_per_second": predicted.predicted_bytes_per_second}))
    fitted = fit_calibration(gpu, truth.model_copy(update={"knee_sharpness": 1.0}), points, n=n)
    # the fit searches continuously (Nelder-Mead after the grids): recovered to 1e-4, not bit for bit
    assert fitted.idle_latency_seconds == pytest.approx(5e-7, rel=1e-4)
    assert fitted.sm_bandwidth_bytes_per_second == pytest.approx(4e10, rel=1e-4)
    assert fitted.block_dispatch_seconds == pytest.approx(8e-8, rel=1e-4)
    assert fitted.knee_sharpness == pytest.approx(3.0, rel=1e-4)
    assert {"idle_latency_seconds", "knee_sharpness", "block_dispatch_seconds"} <= set(fitted.measured)


def test_cli_predict_and_cliffs(capsys):
    from gpuroof import main

    assert main(["predict", "--model", "copy", "--param", "n=16777216", "--block", "64", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["launch"]["block"] == [64, 1, 1]
    assert data["launch"]["grid"][0] == math.ceil((1 << 24) / 64)
    # 16 Mi floats in 64-thread blocks: many tiny blocks, so launching them is the limit
    assert data["limiter"] == "block_scheduling"
    assert main(["cliffs", "--model", "copy", "--param", "n=1048576", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["cliffs"]
    assert main(["predict", "--model", "copy", "--param", "n=1024", "--block", "1024", "--registers", "255"]) == 2
    assert "cannot run" in capsys.readouterr().err
    assert main(["predict", "--model", "copy", "--param", "n=1024", "--dynamic-smem", "999999"]) == 2
    assert "dynamic_shared_memory=999999" in capsys.readouterr().err


def test_small_blocks_are_limited_by_block_scheduling():
    """64-thread blocks of one element per thread: the SMs cannot launch blocks fast enough."""
    kernel = models.copy(N)
    launch = _launch(kernel, block=(64, 1, 1), grid=(N // 64, 1, 1), registers_per_thread=16)
    p = roofline.predict(H100, kernel, launch)
    cal = roofline.calibration(H100)
    dispatch_cap = roofline.gpu(H100).sm_count * 64 * 8 / cal.block_dispatch_seconds
    assert p.limiter == "block_scheduling"
    assert p.achieved_bytes_per_second <= dispatch_cap


def test_roofline_plot_draws_the_soft_knee():
    """The dotted knee meets the ridge at P / 2**(1/p) and never rises above either roof."""
    p = 3.0
    gpu = roofline.gpu(H100)
    fig = roofline.chart.plot_roofline(gpu, [models.vector_add(N)], knee_sharpness=p)
    (line,) = [ln for ln in fig.axes[0].get_lines() if ln.get_gid() == "knee:dram"]
    x, y = np.asarray(line.get_xdata()), np.asarray(line.get_ydata())
    peak, bw = gpu.peak_flops("fp32"), gpu.memory_bandwidth
    assert np.all(y <= np.minimum(peak, x * bw) * (1 + 1e-9))
    ridge = gpu.ridge_point("fp32")
    assert np.interp(np.log(ridge), np.log(x), y) == pytest.approx(peak / 2 ** (1 / p), rel=1e-3)
    with pytest.raises(roofline.RooflineError, match="knee_sharpness"):
        roofline.chart.plot_roofline(gpu, [models.vector_add(N)], knee_sharpness=0)


# ------------------------------------------------------------- the terms and their composition


@pytest.mark.parametrize("kernel", [models.copy(1 << 24), models.matmul_tiled(1024, tile=16),
                                    models.reduction(1 << 22, variant="sequential"), models.transpose(4096, 4096)],
                         ids=["copy", "matmul", "reduction", "transpose"])
@pytest.mark.parametrize("gpu", ["H200", "H100 SXM"])
def test_the_time_is_composed_from_its_named_terms(kernel, gpu):
    p = roofline.predict(gpu, kernel)
    names = [t.name for t in p.terms]
    assert names == ["dram", "l2", "l2_partial_stores", "l2_requests", "atomics", "shared_atomics", "l1_shared", "trips",
                     "arithmetic", "instructions", "launch", "ramp", "spread"]
    memory = max(t.seconds for t in p.terms if t.side == "memory")
    compute = max(t.seconds for t in p.terms if t.side == "compute")
    overlapped = roofline.terms.overlap(memory, compute, p.calibration.overlap_exponent)
    assert p.seconds == overlapped + sum(t.seconds for t in p.terms if t.side == "overhead")
    binding = next(t for t in p.terms if t.name == p.binding)
    assert binding.limiter == p.limiter
    overhead = [t.seconds for t in p.terms if t.side == "overhead"]
    assert p.launch_seconds == sum(overhead)
    assert binding.seconds == (max(memory, compute) if binding.side != "overhead" else max(overhead))
    assert p.dram_seconds == p.terms[0].seconds and p.bytes_in_flight == p.terms[0].inputs["bytes_in_flight"]


def test_a_new_term_takes_part_in_the_time_and_can_bind(monkeypatch):
    """A term added to those `evaluate` gives (a function of the derived quantities) takes part in
    the time and can bind (the next time model's way in)."""
    from roofline import _time_model
    from roofline._predict import evaluate

    def with_slow(derived, params):
        dram, terms = evaluate(derived, params)
        slow = roofline.terms.Term(name="slow", side="memory", seconds=1.0, limiter="memory_latency",
                             inputs={"blocks": float(derived.grid.blocks)})
        return dram, (*terms, slow)

    monkeypatch.setattr(_time_model, "evaluate", with_slow)
    p = roofline.predict("H200", models.copy(1 << 20))
    assert p.binding == "slow" and p.seconds == 1.0 + p.launch_seconds and p.limiter == "memory_latency"
    assert p.terms[-1].inputs == {"blocks": float(models.copy(1 << 20).launch.blocks)}


def test_the_tail_is_named_by_its_share_of_the_waves():
    from roofline._predict import TAIL_SHARE

    assert TAIL_SHARE == 0.2
    slots = occupancy.calculate("sm_90", threads_per_block=256, registers_per_thread=32).active_blocks_per_sm \
        * roofline.gpu(H100).sm_count
    for blocks in (slots, slots + 1, 2 * slots, 2 * slots + 1):
        k = models.copy(blocks * 256 * 4)
        dram = roofline.predict(H100, k, _launch(k, grid=(blocks, 1, 1), elements_per_thread=4,
                                                 registers_per_thread=32)).terms[0]
        tail = dram.seconds > (1 + TAIL_SHARE) * dram.inputs["full_wave_seconds"]
        assert (dram.limiter == "tail") == tail
        assert tail == (blocks == slots + 1)  # one block past one wave: a whole block life more


def test_locality_figures_say_where_they_come_from():
    for g in roofline.gpus():
        figures = roofline.memory.locality(g)
        assert figures.page_window_threads > 0 and figures.dram_page_bytes > 0
        measured = g.name == "H200"
        assert ("measured on the H200" in figures.source) == measured
        assert ("assumed" in figures.source) != measured
    with pytest.raises(roofline.RooflineError):
        roofline.memory.locality("no such GPU")



def _one_round_launch(loop_loads: int, barriers: int = 0, path: int | None = 20) -> occupancy.Launch:
    """256-thread blocks of a kernel whose SASS has 2 global loads, ``barriers`` barriers, 20
    instructions outside one loop of 16 FFMAs holding ``loop_loads`` of the loads, one path of
    ``path`` instructions through those 20."""
    loop = occupancy.SassLoop(start_offset=0, end_offset=80, depth=1, global_loads_in_flight=loop_loads,
                              instructions=occupancy.SassCounts(total=20, global_loads=loop_loads, fp32_fma=16))
    sass = occupancy.SassSummary(architecture="sm_90", disassembler="listing", global_loads_in_flight_per_thread=2,
                                 instructions=occupancy.SassCounts(total=40, global_loads=2, fp32_fma=16,
                                                                   barriers=barriers),
                                 loops=(loop,), hot_loop=0, longest_path_instructions=path)
    resources = occupancy.KernelResources(kernel="k", architecture="sm_90", registers_per_thread=32, sass=sass)
    return occupancy.Launch(grid=132 * 8 * 16, block=256, registers_per_thread=32, resources=resources)


@pytest.mark.parametrize(("loop_loads", "barriers", "path", "factor", "in_turn"), [
    (0, 0, 20, None, True),    # loads outside the loop, no barrier, one path: each thread loads once, then computes
    (2, 0, 20, None, False),   # the loads in the loop: in flight while it computes
    (0, 1, 20, None, False),   # a barrier: its phases are the block life's already
    (0, 0, 12, None, False),   # a branch side the listing holds and a warp may skip: its count is a bound
    (0, 0, 12, 1.0, True),     # ... unless the kernel says how many paths a warp takes
])
@pytest.mark.parametrize("gpu", ["H200", "H100 SXM"])
def test_a_block_life_takes_its_issue_only_where_each_thread_loads_once_then_computes(gpu, loop_loads, barriers, path,
                                                                                      factor, in_turn):
    launch = _one_round_launch(loop_loads, barriers, path)
    threads = launch.threads
    kernel = roofline.Kernel(name="k", flops=2.0 * 200 * threads, dram_bytes=8.0 * threads, branch_issue_factor=factor,
                             launch=launch)
    p = roofline.predict(gpu, kernel)
    dram = p.terms[0].inputs
    q = p.calibration.phase_exponent
    assert q is not None  # both packaged GPUs carry the overlap sweep's figure
    with roofline.terms.disabled({"phases_take_turns"}):
        alone = roofline.predict(gpu, kernel).terms[0].inputs["block_seconds"]
    if in_turn:
        issue = dram["exposed_issue_seconds"]
        assert dram["memory_life_seconds"] == pytest.approx(alone)
        assert dram["block_seconds"] == pytest.approx(roofline.terms.overlap(alone, issue, q))
        assert dram["block_seconds"] > alone and p.dram_seconds > p.compute_seconds / 4  # the sides comparable
    else:
        assert "exposed_issue_seconds" not in dram and dram["block_seconds"] == pytest.approx(alone)


@pytest.mark.parametrize("in_flight", [1, 2, 4])
def test_the_exposed_issue_is_one_rounds_issue_over_the_loads_in_flight(in_flight):
    launch = _one_round_launch(0).model_copy(update={"loads_in_flight_per_thread": in_flight})
    kernel = roofline.Kernel(name="k", flops=2.0 * 200 * launch.threads, dram_bytes=8.0 * launch.threads,
                             launch=launch)
    p = roofline.predict("H200", kernel)
    instructions = next(t.seconds for t in p.terms if t.name == "instructions")
    # 16 rounds of 8 resident blocks of 256 on every SM; a thread computes on its first element
    # while its other loads are on their way
    assert p.terms[0].inputs["exposed_issue_seconds"] == pytest.approx(instructions / 16 / in_flight)


def test_a_kernel_whose_blocks_wait_on_their_issue_names_issue():
    # 2000 flops a thread on one load in flight: the block's life is mostly its SM's issue
    launch = _one_round_launch(0).model_copy(update={"loads_in_flight_per_thread": 1})
    kernel = roofline.Kernel(name="k", flops=2000.0 * launch.threads, dram_bytes=8.0 * launch.threads, launch=launch)
    p = roofline.predict("H100 SXM", kernel)
    dram = p.terms[0].inputs
    assert dram["exposed_issue_seconds"] > dram["memory_life_seconds"]
    assert p.limiter == "issue"
    with roofline.terms.disabled({"phases_take_turns"}):
        assert roofline.predict("H100 SXM", kernel).seconds < p.seconds


def test_predict_says_where_the_phases_take_turns():
    launch = _one_round_launch(0)
    kernel = roofline.Kernel(name="k", flops=2.0 * 200 * launch.threads, dram_bytes=8.0 * launch.threads, launch=launch)
    notes = [a for a in roofline.predict("H200", kernel).assumptions if "phases_take_turns" in a]
    assert len(notes) == 1 and "no load in flight" in notes[0]
    with roofline.terms.disabled({"phases_take_turns"}):
        assert not any("phases_take_turns" in a for a in roofline.predict("H200", kernel).assumptions)


def test_without_a_phase_exponent_the_life_is_not_joined_nor_named_issue():
    # a GPU whose calibration lacks the overlap sweep's figure: the plain memory life, and no
    # limiter taken from the issue the life did not take in
    launch = _one_round_launch(0).model_copy(update={"loads_in_flight_per_thread": 1, "grid": (132 * 4, 1, 1)})
    kernel = roofline.Kernel(name="k", flops=2000.0 * launch.threads, dram_bytes=8.0 * launch.threads, launch=launch)
    bare = roofline.calibration("H100 SXM").model_copy(update={"phase_exponent": None})
    p = roofline.predict("H100 SXM", kernel, calibration=bare)
    with roofline.terms.disabled({"phases_take_turns"}):
        off = roofline.predict("H100 SXM", kernel, calibration=bare)
    assert "exposed_issue_seconds" not in p.terms[0].inputs and off.terms[0].limiter == "memory_latency"
    assert p.seconds == off.seconds and p.limiter == off.limiter and p.terms[0].limiter == off.terms[0].limiter
