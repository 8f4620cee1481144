"""Fixtures of the validate tests: a GPU session that skips, with the reason, when no GPU."""

from __future__ import annotations

import pytest

import validate
from validate.checks import _occupancy
from validate.device import _timing
from validate.probes import _ceilings
from validate.suite import _suite


@pytest.fixture(scope="session")
def gpu_session():
    """An open `validate.Session` on device 0; skips when cuda-python or a GPU is missing."""
    import validate

    try:
        return validate.open_session(0)
    except validate.DeviceError as exc:
        pytest.skip(f"no GPU for validate: {exc}")


@pytest.fixture(scope="session")
def gpu_info(gpu_session):
    """The `validate.DeviceInfo` of the session's device."""
    import validate

    return validate.query_device(gpu_session)


def _make_row(label, regime, predicted, measured, status="ok"):
    return _suite.KernelValidation(
        name=label, label=label, parameters={}, status=status, flops=1.0, dram_bytes=8.0,
        predicted_seconds=predicted, predicted_seconds_measured_ceilings=predicted, regime=regime,
        measured_seconds=measured if status == "ok" else None,
        ape_percent=_suite._ape(predicted, measured) if status == "ok" else None,
        ape_percent_measured_ceilings=_suite._ape(predicted, measured) if status == "ok" else None,
        error=None if status == "ok" else "boom",
    )



def _make_report(mismatches=()):
    timing = _timing.summarize([1e-3, 1.1e-3, 0.9e-3])
    info = validate.DeviceInfo(
        index=0, name="NVIDIA H200", compute_capability="9.0", arch="sm_90", sm_count=132, clock_hz=1.98e9,
        memory_clock_hz=3.2e9, memory_bus_width_bits=6016, memory_bandwidth=4.8e12, memory_size_bytes=150e9,
        l2_cache_bytes=62914560, max_persisting_l2_bytes=0, shared_memory_per_sm=233472,
        max_shared_memory_per_block=49152, max_shared_memory_per_block_optin=232448,
        reserved_shared_memory_per_block=1024, registers_per_sm=65536, max_registers_per_block=65536,
        max_threads_per_sm=2048, max_threads_per_block=1024, max_blocks_per_sm=32, warp_size=32,
    )
    ceiling = _ceilings.Ceiling(name="dram_copy", unit="bytes_per_second", measured=4.2e12, datasheet=4.8e12,
                               fraction_of_datasheet=0.875, target_fraction=0.85, meets_target=True,
                               work_per_launch=2e9, timing=timing, grid=(1056, 1, 1), block=(256, 1, 1))
    check = _occupancy.OccupancyCheck(architecture="sm_90", kernels=2, launches_checked=10_000, block_size_checks=10,
                                    mismatches=tuple(mismatches), registers_seen=(16, 32), static_shared_memory_seen=(0,),
                                    barriers_seen=(1,), seconds=1.0)
    rows = (_make_row("copy", "dram", 0.9e-3, 1e-3), _make_row("bad", "dram", 1e-3, 1e-3, status="compile_error"))
    return validate.ValidationReport(
        gpuroof_version="test", created_utc="2026-01-01T00:00:00Z", quick=False, runtime_seconds=60.0, seed=1,
        device=info, comparison=validate.DeviceComparison(database_gpu="H200", match="name"),
        ceilings=_ceilings.Ceilings(items=(ceiling,)), occupancy_check=check, kernels=rows,
        summary=_suite.summarize_predictions(rows),
    )




@pytest.fixture
def make_row():
    """Build a `KernelValidation` row: make_row(label, regime, predicted, measured, status="ok")."""
    return _make_row


@pytest.fixture
def make_report():
    """Build a small `ValidationReport` on an H200: make_report(mismatches=())."""
    return _make_report
