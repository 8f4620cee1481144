"""The families part of `gpuroof validate` on the GPU, quick: every family's small launches
checked against numpy and timed, then predicted on the CPU."""

import numpy as np
import pytest

import validate
from validate.suite._families import family_specs

pytestmark = pytest.mark.gpu


def test_every_family_verifies_times_and_is_predicted(gpu_session, gpu_info):
    lines = []
    records = validate.measure_families(gpu_session, gpu_info, quick=True, rng=np.random.default_rng(0),
                                        progress=lines.append)
    specs = family_specs(gpu_info.sm_count, quick=True)
    assert [r.label for r in records] == [s.label for s in specs]
    for record in records:
        assert record.error is None, (record.label, record.error)
        assert record.relative_error < 1e-4 and 0 < record.measured_seconds < 0.1, record.label
        assert record.registers_per_thread > 0 and record.origin == "families"
    assert {r.family for r in records} == set(validate.FAMILIES)
    assert lines[-1].startswith(f"families: {len(records)} launches")
    entry, _ = validate.compare_device(gpu_info)
    if entry is None:
        pytest.skip(f"{gpu_info.name} has no database entry to predict for")
    report = validate.family_report(list(records), entry)
    assert report.overall.launches == len(records)
    assert all(r.error is None and r.predict_seconds > 0 for r in report.rows)


def test_suite_measurements_are_reused(gpu_session, gpu_info):
    """A family launch the suite measured is taken from the suite's row, not run again."""
    from roofline import models

    model = models.strided_read(1 << 20, 8)
    rows = validate.suite._suite.run_suite(gpu_session, gpu_info, [model], inputs=validate.suite._suite.PredictionInputs(),
                                           quick=True, rng=np.random.default_rng(1))
    assert rows[0].status == "ok"
    lines = []
    records = validate.measure_families(gpu_session, gpu_info, quick=True, families=["strided_read"], suite_rows=rows,
                                        rng=np.random.default_rng(1), progress=lines.append)
    by_label = {r.label: r for r in records}
    assert by_label["strided_read(stride=8)"].origin == "suite"
    assert by_label["strided_read(stride=8)"].measured_seconds == rows[0].measured_seconds
    assert by_label["strided_read(stride=1)"].origin == "families"
    assert not any("strided_read(stride=8)" in line for line in lines[:-1])
