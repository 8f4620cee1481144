"""One test per finding of the deep fuzz run (``FUZZ_EXAMPLES=1000``, issue 21: "the fuzz
suite's default and deep runs find nothing"): the shrunk input hypothesis reported, and
the one-line library error or finite answer it gets now."""

from __future__ import annotations

from pathlib import Path

import pytest

import roofline

ROOT = Path(__file__).resolve().parents[2]
PROFILE = ROOT / "tests/data/ncu/user_kernels.raw.csv"


@pytest.fixture(scope="module")
def profile():
    return roofline.profile_report(PROFILE)


@pytest.mark.parametrize("clock", [3.404721846330144e305, 1e300, 1.0000001e11])
def test_instruction_roofline_refuses_a_clock_whose_issue_rate_overflows(profile, clock):
    """sm_clock_hz=3.4e305: SMs x schedulers x clock overflowed to inf, and pydantic's
    ValidationError (not the library's error) escaped from building the ceiling."""
    with pytest.raises(roofline.RooflineError, match=r"^sm_clock_hz=.* exceeds the maximum of 1e\+11 Hz"):
        roofline.instruction_roofline(profile, sm_clock_hz=clock)


def test_instruction_roofline_at_the_largest_clock_is_finite(profile):
    ir = roofline.instruction_roofline(profile, sm_clock_hz=1e11)
    assert ir.issue_rate == pytest.approx(1e11 * 132 * 4)


def test_the_hang_log_names_only_a_call_still_running():
    """A deep run killed from outside left the log naming validate.measure_families (given a
    uint8 array) as a call with "no answer after 60 s", though that call had refused at once:
    the header of the last call started stayed after it answered."""
    import time

    import fuzzlib

    with fuzzlib.watchdog(5, "the call in flight"):
        assert "the call in flight" in fuzzlib.HANG_LOG.read_text()
    assert fuzzlib.HANG_LOG.read_text() == ""
    with pytest.raises(fuzzlib.Hang), fuzzlib.watchdog(0.05, "a slow call"):
        time.sleep(2)
    assert fuzzlib.HANG_LOG.read_text() == ""
