"""The memory-terms probe's figures from synthetic timings (no GPU)."""

import pytest

from pydantic import ValidationError

from validate.probes._memory_terms import (
    MemoryTermTimes,
    derive_memory_terms,
    memory_terms_calibration,
    render_memory_terms,
)

# Synthetic launches: 2e6 one-sector requests in 12.9 us (155 G/s), 7.84e6 sectors in 32 us
# (245 G/s), 1.35e5 aggregated updates in 106 us, 2.16e6 spread updates in 40 us, 1.68e7
# random bursts in 430 us at a 4.5 TB/s read stream.
TIMES = dict(lone_sector_seconds=12.9e-6, lone_sector_requests=2_000_000, full_line_seconds=32e-6,
             full_line_sectors=7_840_000, one_address_seconds=106e-6, one_address_updates=135_168,
             spread_seconds=40e-6, spread_updates=2_162_688, random_burst_seconds=430e-6,
             random_bursts=16_777_216)
READ_BYTES_PER_SECOND = 4.5e12


def _terms(**changes):
    return derive_memory_terms(MemoryTermTimes(**{**TIMES, **changes}), read_bytes_per_second=READ_BYTES_PER_SECOND)


def test_rates_are_the_work_over_the_time():
    t = _terms()
    assert t.l2_requests_per_second == pytest.approx(2e6 / 12.9e-6)
    assert t.l2_sectors_per_second == pytest.approx(7.84e6 / 32e-6)
    assert t.atomic_one_address_updates_per_second == pytest.approx(135_168 / 106e-6)
    assert t.atomic_spread_updates_per_second == pytest.approx(2_162_688 / 40e-6)
    assert t.dram_random_burst_bytes == pytest.approx(430e-6 * 4.5e12 / 16_777_216)


def test_a_random_burst_never_costs_less_than_its_64_bytes():
    assert _terms(random_burst_seconds=1e-6).dram_random_burst_bytes == 64


def test_the_figures_name_calibration_fields_and_the_section_shows_them():
    import roofline

    t = _terms()
    figures = memory_terms_calibration(t)
    assert set(figures) <= set(roofline.Calibration.model_fields)
    assert all(value > 0 and how for value, how in figures.values())
    section = render_memory_terms(t)
    assert section[0].startswith("## ") and "155 G/s" in "\n".join(section)


@pytest.mark.parametrize("field", sorted(TIMES), ids=sorted(TIMES))
def test_the_probe_times_refuse_a_time_or_count_of_zero(field):
    with pytest.raises(ValidationError, match=field):
        MemoryTermTimes(**{**TIMES, field: 0})


@pytest.mark.parametrize("field", ["lone_sector_seconds", "random_bursts"], ids=["a time", "a count"])
def test_the_probe_times_are_frozen_and_refuse_unknown_fields(field):
    times = MemoryTermTimes(**TIMES)
    with pytest.raises(ValidationError):
        times.__setattr__(field, 1)
    with pytest.raises(ValidationError, match="extra"):
        MemoryTermTimes(**TIMES, read_bytes_per_second=4.5e12)


def test_the_terms_keep_the_probe_times_and_the_read_bandwidth():
    t = _terms()
    assert {field: getattr(t, field) for field in TIMES} == TIMES
    assert t.read_bytes_per_second == READ_BYTES_PER_SECOND


@pytest.mark.parametrize("times", [TIMES, None, "times"], ids=["a dict", "None", "a string"])
def test_the_derivation_takes_the_record_only(times):
    with pytest.raises(TypeError, match="MemoryTermTimes"):
        derive_memory_terms(times, read_bytes_per_second=READ_BYTES_PER_SECOND)


# ------------------------------------------------------------- the L2 flush's written lines

@pytest.mark.parametrize(("dirty", "clean", "copy", "expected"), [
    # a 252 MB read at 4.1 TB/s, a copy at 4.0 TB/s: a written byte costs 2/copy - 1/read
    (69.5e-6, 61.7e-6, 125.0e-6, 7.8e-6 / (2 / (2 * 252e6 / 125.0e-6) - 1 / (252e6 / 61.7e-6))),
    (61.7e-6, 61.7e-6, 125.0e-6, 0.0),        # no extra time: nothing written back
    (55.0e-6, 61.7e-6, 125.0e-6, 0.0),        # faster after the flush (noise): never negative
    (900e-6, 61.7e-6, 125.0e-6, 63e6),        # never more than L2 holds
])
def test_the_flush_leaves_the_extra_time_over_a_written_bytes_cost(dirty, clean, copy, expected):
    from validate.probes._memory_terms import flush_dirty_bytes

    found = flush_dirty_bytes(read_bytes=252e6, dirty_seconds=dirty, clean_seconds=clean, copy_seconds=copy,
                              l2_bytes=63e6)
    assert found == pytest.approx(expected, rel=1e-9, abs=1e-6)


def test_the_flush_figure_is_a_calibration_field_and_the_section_shows_it():
    import roofline

    t = _terms().model_copy(update=dict(
        flush_read_bytes=252_000_000, flush_dirty_seconds=69.5e-6, flush_clean_seconds=61.7e-6,
        flush_copy_seconds=125e-6, flush_small_read_bytes=15_700_000, flush_small_dirty_seconds=9.31e-6,
        flush_small_clean_seconds=7.68e-6, flush_dirty_bytes=31.1e6))
    figures = memory_terms_calibration(t)
    assert "flush_dirty_bytes" in figures and figures["flush_dirty_bytes"][0] == 31.1e6
    assert set(figures) <= set(roofline.Calibration.model_fields)
    text = "\n".join(render_memory_terms(t))
    assert "31.1 MB" in text and "+1.63 us" in text
    # a report from before the flush probe has none of it
    assert "flush_dirty_bytes" not in memory_terms_calibration(_terms())


# ------------------------------------------------------------- stores to one address

@pytest.mark.parametrize(("one", "spread", "rate"), [
    (60e-6, 5e-6, 135_168 / 55e-6),   # the shared word adds 55 us to 135,168 warp stores
    (5e-6, 5e-6, None),               # it adds nothing: no queue seen, no figure
    (4e-6, 5e-6, None),               # faster (noise): no figure
])
def test_the_one_address_store_rate_is_the_warps_over_the_time_the_word_adds(one, spread, rate):
    from validate.probes._memory_terms import one_address_store_rate

    found = one_address_store_rate(warps=135_168, one_address_seconds=one, spread_seconds=spread)
    assert found == (None if rate is None else pytest.approx(rate))


def test_the_store_figure_is_a_calibration_field_and_the_section_shows_it():
    import roofline

    t = _terms().model_copy(update=dict(
        one_address_store_seconds=60e-6, spread_store_seconds=5e-6, store_warps=135_168,
        one_address_stores_per_second=135_168 / 55e-6))
    figures = memory_terms_calibration(t)
    assert figures["one_address_stores_per_second"][0] == pytest.approx(135_168 / 55e-6)
    assert "one_address_stores_per_second" in roofline.Calibration.model_fields
    assert "| stores to one address | 2.46 G/s |" in "\n".join(render_memory_terms(t))
    # a report from before the probe: no figure, no row
    old = _terms()
    assert "one_address_stores_per_second" not in memory_terms_calibration(old)
    assert "stores to one address |" not in "\n".join(render_memory_terms(old))


def test_the_terms_hold_their_probe_times_and_derive_again_to_themselves():
    t = _terms()
    assert isinstance(t, MemoryTermTimes)
    assert derive_memory_terms(t, read_bytes_per_second=READ_BYTES_PER_SECOND) == t
