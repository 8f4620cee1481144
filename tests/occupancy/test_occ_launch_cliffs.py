"""max_potential_block_size, available_dynamic_shared_memory and cliffs, checked with calculate."""

from __future__ import annotations

import itertools

import pytest

import occupancy
from occupancy import OccupancyError

K = 1024


def test_max_potential_block_size_prefers_the_largest_of_equal_occupancies():
    r = occupancy.max_potential_block_size("sm_90", registers_per_thread=32, sm_count=132)
    assert (r.block_size, r.active_blocks_per_sm, r.min_grid_size, r.occupancy) == (1024, 2, 264, 1.0)


def test_max_potential_block_size_with_block_dependent_shared_memory():
    # One float per thread plus 4 KiB: the winner must beat every other warp multiple.
    smem = lambda n: 4 * n + 4096  # noqa: E731
    r = occupancy.max_potential_block_size("sm_86", registers_per_thread=72, dynamic_shared_memory=smem)
    best = max(
        (occupancy.calculate("sm_86", threads_per_block=n, registers_per_thread=72,
                             dynamic_shared_memory=smem(n)).active_threads_per_sm, n)
        for n in range(32, 1025, 32)
    )
    assert (r.active_blocks_per_sm * r.block_size, r.block_size) == best
    assert r.min_grid_size == r.active_blocks_per_sm  # sm_count None counts one SM


def test_max_potential_block_size_respects_launch_bounds_and_reports_no_fit():
    r = occupancy.max_potential_block_size("sm_80", registers_per_thread=255, max_threads_per_block=100)
    assert r.block_size <= 100
    r = occupancy.max_potential_block_size("sm_80", registers_per_thread=8, dynamic_shared_memory=lambda n: 10**6)
    assert (r.block_size, r.min_grid_size) == (0, 0)


CASES = list(itertools.product(
    ["sm_61", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90", "sm_120"], [64, 256], [1, 2, 3, 5], [None, 0, 50],
))


@pytest.mark.parametrize("arch,threads,blocks,carveout", CASES, ids=lambda x: str(x))
def test_available_dynamic_shared_memory_really_fits(arch, threads, blocks, carveout):
    a = occupancy.architecture(arch)
    kw = dict(registers_per_thread=32, static_shared_memory=2000, threads_per_block=threads,
              max_dynamic_shared_memory=a.max_shared_memory_per_block_optin - 2000, carveout=carveout)
    fit = occupancy.calculate(arch, **kw).active_blocks_per_sm
    if blocks > fit:
        with pytest.raises(OccupancyError, match=f"num_blocks={blocks}"):
            occupancy.available_dynamic_shared_memory(arch, num_blocks=blocks, **kw)
        return
    exact = occupancy.available_dynamic_shared_memory(arch, num_blocks=blocks, **kw)
    assert occupancy.calculate(arch, **kw, dynamic_shared_memory=exact).active_blocks_per_sm >= blocks
    if exact < kw["max_dynamic_shared_memory"]:
        assert occupancy.calculate(arch, **kw, dynamic_shared_memory=exact + 1).active_blocks_per_sm < blocks
    driver = occupancy.available_dynamic_shared_memory(arch, num_blocks=blocks, **kw, match_driver=True)
    if carveout is None and a.reserved_shared_memory_per_block and blocks > 1:
        # The driver forgets the reserved 1 KiB per block: n requested blocks give n - 1.
        got = occupancy.calculate(arch, **kw, dynamic_shared_memory=driver).active_blocks_per_sm
        assert got == blocks - 1
        assert driver > exact


def test_cliffs_example_from_the_issue():
    c = occupancy.cliffs("sm_80", threads_per_block=512, registers_per_thread=32)
    assert c.registers.headroom == 0 and c.registers.occupancy == 1.0
    assert c.registers.thresholds[0].value == 33 and c.registers.thresholds[0].occupancy == 0.75


@pytest.mark.parametrize(
    "arch,launch",
    [
        ("sm_80", dict(threads_per_block=256, registers_per_thread=40, dynamic_shared_memory=20_000)),
        ("sm_90", dict(threads_per_block=128, registers_per_thread=64, static_shared_memory=8192, block_barriers=4)),
        ("sm_75", dict(threads_per_block=96, registers_per_thread=100, carveout=20)),
        ("sm_61", dict(threads_per_block=320, registers_per_thread=24, static_shared_memory=12_000)),
    ],
    ids=["sm_80", "sm_90", "sm_75", "sm_61"],
)
def test_cliff_headroom_and_gain_agree_with_calculate(arch, launch):
    c = occupancy.cliffs(arch, **launch)
    now = occupancy.calculate(arch, **launch).active_blocks_per_sm
    a = occupancy.architecture(arch)
    optin = a.max_shared_memory_per_block_optin
    static = launch.get("static_shared_memory", 0)

    def blocks(resource, value):
        kw = dict(launch)
        if resource == "shared_memory":
            kw.update(dynamic_shared_memory=value - static, max_dynamic_shared_memory=optin - static)
        else:
            kw[{"registers": "registers_per_thread", "threads_per_block": "threads_per_block",
                "barriers": "block_barriers"}[resource]] = value
        return occupancy.calculate(arch, **kw).active_blocks_per_sm

    for rc in (c.registers, c.shared_memory, c.threads_per_block, c.barriers):
        assert rc.active_blocks_per_sm == now
        if rc.headroom is not None:
            assert blocks(rc.resource, rc.value + rc.headroom) == now
            assert blocks(rc.resource, rc.value + rc.headroom + 1) < now
        else:
            assert blocks(rc.resource, rc.maximum) == now
        if rc.gain is not None:
            assert blocks(rc.resource, rc.value - rc.gain) > now
            if rc.gain > 1:
                assert blocks(rc.resource, rc.value - rc.gain + 1) <= now
        for t in rc.thresholds:
            assert blocks(rc.resource, t.value) == t.active_blocks_per_sm
