"""The memory-space table."""

from __future__ import annotations

import doctest

import pytest

import roofline._spaces
from roofline._errors import RooflineError
from roofline._spaces import memory_space, memory_spaces

# CUDA C Best Practices Guide, Table 1 "Salient Features of Device Memory":
# (name, location, access, lifetime, host access)
TABLE = [
    ("register", "on-chip", "read/write", "thread", False),
    ("local", "off-chip", "read/write", "thread", False),
    ("shared", "on-chip", "read/write", "block", False),
    ("constant", "off-chip", "read-only", "host allocation", True),
    ("texture", "off-chip", "read-only", "host allocation", True),
    ("global", "off-chip", "read/write", "host allocation", True),
]


@pytest.mark.parametrize("name, location, access, lifetime, host", TABLE, ids=[t[0] for t in TABLE])
def test_best_practices_table(name, location, access, lifetime, host):
    space = memory_space(name)
    assert (space.location, space.access, space.lifetime, space.host_access) == (
        location, access, lifetime, host
    )
    # The table marks on-chip spaces as not cached ("n/a") and the off-chip ones as cached.
    assert (space.cached == "n/a") == (location == "on-chip")


def test_every_entry_has_sources_and_ordered_latency():
    spaces = memory_spaces()
    assert [s.name for s in spaces] == [t[0] for t in TABLE]
    for space in spaces:
        assert space.source and space.latency_source
        assert 0 < space.latency_cycles[0] <= space.latency_cycles[1]
    # Cheng et al. ch.5: shared memory is roughly 20-30x lower latency than global memory.
    assert memory_space("shared").latency_cycles[1] < memory_space("global").latency_cycles[0]
    assert memory_space("register").latency_cycles[1] < memory_space("shared").latency_cycles[0]


def test_frozen_and_cached():
    assert memory_spaces() is memory_spaces()
    with pytest.raises(Exception):
        memory_spaces()[0].name = "x"  # type: ignore[misc]


def test_unknown_name_lists_the_known_ones():
    with pytest.raises(RooflineError, match="known: register, local, shared"):
        memory_space("l1")


def test_doctests():
    assert doctest.testmod(roofline._spaces).failed == 0
