"""One small family (the four reductions, 2**20 elements) checked and timed on the GPU."""

import numpy as np
import pytest

from validate._families import REDUCTION_VARIANTS, family_specs, measure_families

pytestmark = pytest.mark.gpu


def test_reductions_verify_and_time(gpu_session, gpu_info):
    specs = family_specs(gpu_info.sm_count, quick=True)
    records = measure_families(gpu_session, gpu_info, specs, rng=np.random.default_rng(0))
    assert [r["label"] for r in records] == [f"reduction({v}, block=256)" for v in REDUCTION_VARIANTS]
    for record in records:
        assert "error" not in record, record
        assert record["relative_error"] < 1e-5
        assert 0 < record["measured_seconds"] < 1e-2
        assert record["registers_per_thread"] > 0
        assert record["static_shared_memory"] > 0
