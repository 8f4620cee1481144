"""The global-CAS probe (validate.probes._global_cas) on the CPU: its figures from times worked
by hand, its kernels in the source, its figures as the calibration fields the atomics term reads."""

from __future__ import annotations

import json
import re

import pytest

import roofline
from roofline._predict.params import probes
from validate.device import kernel_source
from validate.probes import GlobalCasProbe, _doubled, _global_cas
from validate.probes._global_cas import KERNELS, GlobalCasTimes, derive_global_cas

# 512 and 1024 operations a thread; the lines launch: 264 blocks of 1024 threads; the adds: lane
# 0 of the 32 warps of 132 blocks of 1024 threads
ADDS = ("global_add_one_u32", "global_add_one_f32", "global_add_one_f64")
THREADS = {"global_cas_chain": 1, "global_cas_lines": 270_336, **{k: 4224 for k in ADDS}}
TIMES = GlobalCasTimes(iters=512, threads=THREADS, seconds={
    "global_cas_chain": (260e-6, 516e-6), "global_cas_lines": (1.2e-3, 2.4e-3),
    "global_add_one_u32": (1.7e-3, 3.3e-3), "global_add_one_f32": (4.0e-3, 8.0e-3),
    "global_add_one_f64": (5.0e-3, 9.0e-3)})

#: By hand: the chain's added 256 us over 512 CASes; 270,336 threads x 512 over the added 1.2 ms;
#: 4224 warps x 512 adds (2,162,688) over the added 1.6, 4.0 and 4.0 ms.
MEASURED = {"cas_round_trip_seconds": 500e-9, "cas_line_attempts_per_second": 138_412_032 / 1.2e-3,
            "atomic_one_address_u32_updates_per_second": 2_162_688 / 1.6e-3,
            "atomic_one_address_f32_updates_per_second": 2_162_688 / 4.0e-3,
            "atomic_one_address_f64_updates_per_second": 2_162_688 / 4.0e-3}
#: The probe's figures: the u32 rate is a check of the memory-terms probe's, not a figure of this one.
EXPECTED = {k: v for k, v in MEASURED.items() if k != "atomic_one_address_u32_updates_per_second"}


@pytest.mark.parametrize("name", sorted(MEASURED))
def test_the_figures_from_the_added_time(name):
    assert getattr(derive_global_cas(TIMES), name) == pytest.approx(MEASURED[name], rel=1e-12)


@pytest.mark.parametrize("kernel, name", [(k, n) for k, n, _ in KERNELS], ids=[k for k, _, _ in KERNELS])
def test_a_longer_launch_that_took_no_longer_measures_nothing(kernel, name):
    seconds = {**TIMES.seconds, kernel: (3e-4, 3e-4)}
    result = derive_global_cas(GlobalCasTimes(iters=512, threads=THREADS, seconds=seconds))
    assert getattr(result, name) is None
    other = next(n for _, n, _ in KERNELS if n != name)
    assert getattr(result, other) == pytest.approx(MEASURED[other])


def test_the_probe_gives_the_fields_the_term_reads_and_its_kernels_are_in_the_source():
    figures = GlobalCasProbe().figures(derive_global_cas(TIMES))
    assert set(figures) == set(EXPECTED) <= set(roofline.Calibration.model_fields)
    assert {name for name, probe in probes().items() if probe == "global_cas"} == set(EXPECTED)
    source = kernel_source("global_cas.cu")
    assert {k for k, _, _ in KERNELS} == set(re.findall(r'extern "C" __global__ void (\w+)\(', source))


def test_times_of_another_kind_are_refused():
    with pytest.raises(TypeError, match="GlobalCasTimes"):
        derive_global_cas({"iters": 512})


def test_main_prints_the_section_and_writes_the_figures(tmp_path, monkeypatch, capsys):
    info = type("Info", (), {"name": "NVIDIA H100 80GB HBM3"})()
    monkeypatch.setattr(_doubled, "open_session", lambda: object())
    monkeypatch.setattr(_doubled, "query_device", lambda session: info)
    monkeypatch.setattr(_global_cas, "measure_global_cas", lambda *a, **k: derive_global_cas(TIMES))
    out = tmp_path / "global_cas.json"
    assert _global_cas.main(out=out) == 0
    assert "## Global compare-and-swap and adds to one word" in capsys.readouterr().out
    written = json.loads(out.read_text())
    assert written["device"] == info.name
    assert written["figures"]["cas_round_trip_seconds"][0] == pytest.approx(EXPECTED["cas_round_trip_seconds"])


def test_the_u32_check_is_shown_beside_the_memory_terms_figure_it_checks_and_not_stored():
    result = derive_global_cas(TIMES)
    assert "atomic_one_address_updates_per_second" in roofline.Calibration.model_fields
    assert "atomic_one_address_u32_updates_per_second" not in GlobalCasProbe().figures(result)
    rows = "\n".join(GlobalCasProbe().render(result, "##", ""))
    assert "| global_add_one_u32 | 4224 | 1.35 G/s | 1700.0 us, 3300.0 us |" in rows


def test_a_report_of_the_cas_kernels_alone_still_gives_their_figures():
    """A result written before the adds were probed (two kernels) derives and renders."""
    old = GlobalCasTimes(iters=512, threads={k: THREADS[k] for k in ("global_cas_chain", "global_cas_lines")},
                         seconds={k: TIMES.seconds[k] for k in ("global_cas_chain", "global_cas_lines")})
    result = derive_global_cas(old)
    assert result.atomic_one_address_f32_updates_per_second is None
    assert set(GlobalCasProbe().figures(result)) == {"cas_round_trip_seconds", "cas_line_attempts_per_second"}


@pytest.mark.gpu
def test_the_probe_on_the_gpu(gpu_session, gpu_info):
    """Every kernel's longer launch takes longer, and the unsigned adds to one word come out near
    the memory-terms probe's packaged rate for this GPU where there is one (the same L2 slice
    applying the same REDG.E.ADD: within a factor of 2)."""
    result = _global_cas.measure_global_cas(gpu_session, gpu_info, quick=True)
    assert all(getattr(result, name) is not None for _, name, _ in KERNELS), result
    assert result.cas_round_trip_seconds < 10e-6
    from validate.user_kernel._measure import database_gpu

    record = database_gpu(gpu_info.name, None)
    packaged = roofline.calibration(record.name).atomic_one_address_updates_per_second if record else None
    if packaged:
        assert 0.5 < result.atomic_one_address_u32_updates_per_second / packaged < 2.0
