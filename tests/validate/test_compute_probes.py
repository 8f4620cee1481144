"""The compute-side probes' parameters from synthetic times (CPU): each figure comes back from
times made with it."""

import pytest

import roofline
from validate.probes import _compute
from validate.probes._compute import compute_calibration, derive_compute, fit_overlap_exponent, fit_trip_line


@pytest.fixture(scope="module", autouse=True)
def overlap_fitted_once():
    """`fit_overlap` (a search of 301 exponents, seconds of CPU) runs once per sweep: the tests
    below derive the same synthetic overlap sweep beside different trip walks."""
    real, fitted = _compute.fit_overlap, {}

    def fit_overlap(points, memory_seconds):
        key = (tuple(sorted(points.items())), memory_seconds)
        if key not in fitted:
            fitted[key] = real(points, memory_seconds)
        return fitted[key]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_compute, "fit_overlap", fit_overlap)
        yield


def _overlap_points(memory, fma, p):
    return {f: (memory ** p + (f * fma) ** p) ** (1 / p) if f else memory for f in (0, 4, 8, 16, 32, 64, 128, 256)}


@pytest.mark.parametrize("p", [1.5, 2.31, 4.0])
def test_overlap_exponent_comes_back(p):
    assert fit_overlap_exponent(_overlap_points(1e-4, 2e-6, p), 1e-4, 2e-6) == pytest.approx(p, abs=0.02)


def test_overlap_without_points_near_the_ridge_is_a_plain_maximum():
    # every point compute-bound by far more than 4x: nothing to fit
    assert fit_overlap_exponent({64: 1.0, 128: 2.0}, 1e-6, 1e-2) == 16.0


@pytest.mark.parametrize(("latency", "rate"), [(4.2e-7, 2.76e10), (6e-7, 1e11)])
def test_trip_line_comes_back(latency, rate):
    points = {b: latency + b / rate for b in (1024, 2048, 4096, 8192)}
    got_latency, got_rate = fit_trip_line(points)
    assert got_latency == pytest.approx(latency) and got_rate == pytest.approx(rate)


def test_flat_trip_line_has_no_bytes_term():
    assert fit_trip_line({1024: 5e-7, 8192: 4.9e-7}) == (pytest.approx(4.9e-7), None)


def test_derived_figures_make_a_valid_calibration():
    e = derive_compute(trip_points={1024: 4.5e-7, 8192: 7.2e-7}, overlap_points=_overlap_points(1e-4, 2e-6, 2.0),
                       overlap_elements=1 << 25, fma_chain_seconds=2.02e-9, clock_hz=1.98e9, tensor_rate_fraction=0.92)
    assert e.memory_seconds == 1e-4
    assert e.fma_seconds == pytest.approx(2e-6, rel=0.01)  # the compute-bound end's slope
    assert e.overlap_exponent == pytest.approx(2.0, abs=0.05)
    assert e.fma_latency_cycles == pytest.approx(4.0, rel=0.01)
    entries = compute_calibration(e)
    cal = roofline.calibration("H200").model_copy(update={k: v for k, (v, _) in entries.items()})
    roofline.Calibration.model_validate(cal.model_dump())
    assert cal.tensor_rate_fraction == 0.92 and cal.fma_latency_cycles == pytest.approx(4.0, rel=0.01)
    # the one-block walk's rate is used, its latency and the overlap sweep reported only
    # (compute_calibration says why)
    assert cal.trip_bytes_per_second == pytest.approx(e.trip_bytes_per_second)
    assert not {"trip_latency_seconds", "overlap_exponent"} & set(entries)


def test_a_flat_walk_leaves_the_rate_to_the_copy_sweep():
    e = derive_compute(trip_points={4096: 3.6e-7, 32768: 3.55e-7}, overlap_points=_overlap_points(1e-4, 2e-6, 2.0),
                       overlap_elements=1 << 25, fma_chain_seconds=2.02e-9, clock_hz=1.98e9)
    entries = compute_calibration(e)
    assert not {"trip_latency_seconds", "trip_bytes_per_second"} & set(entries)


@pytest.fixture(scope="module")
def sweep_resources():
    """The overlap sweep's resources as NVRTC and nvdisasm read them for sm_90 (skips without them)."""
    import occupancy
    from validate.device import kernel_source
    try:
        return occupancy.all_kernel_resources(kernel_source("compute.cu"), arch="sm_90", sass=True)["overlap_sweep"]
    except (occupancy.OccupancyError, OSError) as e:  # no NVRTC or nvdisasm here
        pytest.skip(f"the overlap sweep's SASS is not readable here: {e}")


@pytest.mark.parametrize("p", [1.3, 1.93, 3.0])
@pytest.mark.parametrize("gpu", ["H200", "H100 SXM"])
def test_the_model_exponent_comes_back_from_times_the_model_made(gpu, p, sweep_resources):
    from validate.probes._compute import OVERLAP_FMAS, model_phase_exponent, overlap_sweep_kernel
    elements = 1 << 25
    made = roofline.calibration(gpu).model_copy(update={"phase_exponent": p})
    points = {f: roofline.predict(gpu, overlap_sweep_kernel(f, elements, sweep_resources), calibration=made).seconds
              for f in OVERLAP_FMAS}
    points[16] *= 3.0  # a remainder-loop point is not fitted: spoiling it changes nothing
    got, fmas = model_phase_exponent(gpu, roofline.calibration(gpu), sweep_resources, points, elements)
    assert got == pytest.approx(p, abs=0.01)
    body = sweep_resources.sass.loops[sweep_resources.sass.hot_loop].instructions.fp32_fma
    assert fmas and all(f % body == 0 for f in fmas) and 16 not in fmas


def test_the_model_exponent_is_a_calibration_entry():
    e = derive_compute(trip_points={1024: 4.5e-7, 8192: 7.2e-7}, overlap_points=_overlap_points(1e-4, 2e-6, 2.0),
                       overlap_elements=1 << 25, fma_chain_seconds=2.02e-9, clock_hz=1.98e9)
    assert "phase_exponent" not in compute_calibration(e)  # not fitted with the model: nothing to use
    fitted = e.model_copy(update={"model_phase_exponent": 1.93, "model_phase_fmas": (64, 128)})
    value, source = compute_calibration(fitted)["phase_exponent"]
    assert value == 1.93 and "64, 128 FMAs" in source
    assert any("1.93" in line for line in _compute.render_compute(fitted))
