"""The SASS reader pauses Python's cycle collector while it summarises a listing, and leaves it
as it found it: on, off, after an error, and with several summaries at once (the threads of
`kernel_resources_by_architecture`).
"""

from __future__ import annotations

import gc

import pytest

import occupancy
from occupancy._sass import _reader

LISTING = """
    Function : copy
    /*0000*/  LDG.E R2, desc[UR4][R2.64] ;
    /*0010*/  STG.E desc[UR4][R4.64], R2 ;
    /*0020*/  @!P0 BRA 0x0 ;
    /*0030*/  EXIT ;
"""


@pytest.fixture()
def collector():
    """gc as the test found it, restored whatever the test does."""
    was = gc.isenabled()
    yield
    if was:
        gc.enable()
    else:
        gc.disable()


@pytest.mark.parametrize("enabled", [True, False], ids=["on", "off"])
def test_the_collector_is_paused_during_the_summaries_and_left_as_found(collector, monkeypatch, enabled):
    seen = []
    summarize = _reader.summarize

    def watched(*args, **kwargs):
        seen.append(gc.isenabled())
        return summarize(*args, **kwargs)

    monkeypatch.setattr(_reader, "summarize", watched)
    gc.enable() if enabled else gc.disable()
    summary = occupancy.read_sass(LISTING, "sm_90")["copy"]
    assert summary.instructions.global_loads == 1  # the listing was read
    assert seen == [False]
    assert gc.isenabled() is enabled


def test_an_error_in_the_summaries_leaves_the_collector_on(collector, monkeypatch):
    def fails(*args, **kwargs):
        raise RuntimeError("a summary that fails")

    monkeypatch.setattr(_reader, "summarize", fails)
    gc.enable()
    with pytest.raises(RuntimeError, match="a summary that fails"):
        occupancy.read_sass(LISTING, "sm_90")
    assert gc.isenabled()


@pytest.mark.parametrize("order", ["first-out-first", "last-out-first"])
def test_overlapping_summaries_turn_it_on_when_the_last_ends(collector, order):
    gc.enable()
    first, second = _reader._collector_paused(), _reader._collector_paused()
    first.__enter__()
    second.__enter__()
    ending = [first, second] if order == "first-out-first" else [second, first]
    ending[0].__exit__(None, None, None)
    assert not gc.isenabled()  # the other one still runs
    ending[1].__exit__(None, None, None)
    assert gc.isenabled()
