"""Differential tests against NVIDIA's cuda_occupancy.h (the CUDA toolkit's own calculator).

The oracle is fed the device properties from our architecture data; its internal
per-compute-capability rules are NVIDIA's. Configurations are random but seeded, and
cover every architecture, opt-in shared memory, carveouts, barriers, kernels whose
launch exceeds their attribute, and partitioned global caching.
"""

from __future__ import annotations

import numpy as np
import pytest

import occupancy
from occupancy import LIMITERS, UNLIMITED

ARCHS = occupancy.architectures()
PER_ARCH = 1100  # x 19 architectures = 20,900 launches, plus the "edge" grid below
INT_MAX = 2**31 - 1
BITS = {"warps": 1, "registers": 2, "shared_memory": 4, "blocks": 8, "barriers": 16}
GC = {"off": 0, "on": 1, "strict": 2}


def random_launches(arch, rng, n):
    """Random launches, biased towards the values where rules change."""
    optin = arch.max_shared_memory_per_block_optin
    threads = np.where(
        rng.random(n) < 0.5, rng.integers(1, 33, n) * 32, rng.integers(1, 1025, n)
    )
    regs = np.where(rng.random(n) < 0.6, rng.integers(0, 97, n), rng.integers(0, 256, n))
    static = np.where(
        rng.random(n) < 0.5, 0, rng.integers(0, arch.max_shared_memory_per_block + 1, n)
    )
    opt_in = rng.random(n) < 0.4
    default_max = arch.max_shared_memory_per_block - static
    max_dyn = np.where(opt_in, rng.integers(default_max, optin - static + 1), default_max)
    frac = rng.random(n)
    dyn = np.where(
        frac < 0.25,
        0,
        np.where(
            frac < 0.9,
            (rng.random(n) * (max_dyn + 1)).astype(np.int64),
            rng.integers(0, optin - static + 1),  # may exceed the attribute: 0 blocks
        ),
    )
    dyn = np.minimum(dyn, optin - static)
    carveout = np.where(rng.random(n) < 0.3, -1, rng.integers(0, 101, n))
    barriers = np.where(rng.random(n) < 0.5, 1, rng.integers(0, 17, n))
    return dict(
        threads_per_block=threads, registers_per_thread=regs, static_shared_memory=static,
        dynamic_shared_memory=dyn, max_dynamic_shared_memory=max_dyn, carveout=carveout,
        block_barriers=barriers,
    )


def oracle_lines(oracle, arch, cfg, gc="off", op="C", extra=None, fn_max_threads=None):
    props = " ".join(map(str, oracle.props(arch)))
    n = len(cfg["registers_per_thread"])
    lines = []
    for i in range(n):
        attrs = [
            arch.max_threads_per_block if fn_max_threads is None else fn_max_threads[i],
            cfg["registers_per_thread"][i], cfg["static_shared_memory"][i], GC[gc],
            cfg["max_dynamic_shared_memory"][i], cfg["block_barriers"][i], cfg["carveout"][i],
        ]
        tail = extra(i) if extra else [cfg["threads_per_block"][i], cfg["dynamic_shared_memory"][i]]
        lines.append(f"{op} {props} {' '.join(str(int(a)) for a in attrs)} {' '.join(str(int(x)) for x in tail)}")
    return lines


def launches():
    rng = np.random.default_rng(20240607)
    cases = []
    for arch in ARCHS:
        modes = ("off", "on", "strict") if arch.partitioned_global_caching else ("off",)
        for gc in modes:
            cases.append((arch, gc, random_launches(arch, rng, PER_ARCH // len(modes))))
    return cases


CASES = launches()


def test_oracle_covers_every_architecture_with_20000_launches():
    assert {a.name for a, _, _ in CASES} == {a.name for a in ARCHS}
    assert sum(len(c["threads_per_block"]) for _, _, c in CASES) >= 20_000


def test_calculate_matches_cuda_occupancy_h(oracle):
    """Blocks, every block limit, limiters and allocations equal the header's."""
    lines, ours = [], []
    for arch, gc, cfg in CASES:
        lines += oracle_lines(oracle, arch, cfg, gc)
        ours.append(occupancy.calculate_many(arch, **cfg, partitioned_global_caching=gc))
    rows = np.array(oracle.run(lines), dtype=np.int64)
    assert (rows[:, 0] == 0).all(), "the header reported an error on a valid launch"
    got = {
        k: np.concatenate([getattr(o, k) for o in ours]).astype(np.int64)
        for k in (
            "active_blocks_per_sm", "block_limit_registers", "block_limit_shared_memory",
            "block_limit_warps", "block_limit_blocks", "block_limit_barriers",
            "registers_per_block", "shared_memory_per_block", "limiter_mask",
        )
    }
    want = {
        "active_blocks_per_sm": rows[:, 1],
        "block_limit_registers": rows[:, 3],
        "block_limit_shared_memory": rows[:, 4],
        "block_limit_warps": rows[:, 5],
        "block_limit_blocks": rows[:, 6],
        "block_limit_barriers": rows[:, 7],
        "registers_per_block": rows[:, 8],
        "shared_memory_per_block": rows[:, 9],
    }
    assert UNLIMITED == INT_MAX
    for key, expected in want.items():
        bad = np.flatnonzero(got[key] != expected)
        assert bad.size == 0, f"{key}: {bad.size} mismatches, first at line {lines[bad[0]]!r}: ours {got[key][bad[0]]}, header {expected[bad[0]]}"
    # Limiters: every resource whose limit equals the active blocks. The header sets
    # the same bits, except that it keeps the other bits when barriers alone bind.
    active = rows[:, 1]
    limits = [rows[:, 5], rows[:, 3], rows[:, 4], rows[:, 6], rows[:, 7]]
    expected_mask = sum((lim == active).astype(np.int64) << i for i, lim in enumerate(limits))
    assert (got["limiter_mask"] == expected_mask).all()
    header_mask = rows[:, 2] & 0x1F
    barriers_alone = (rows[:, 7] < np.minimum.reduce(limits[:4]))
    assert (header_mask[~barriers_alone] == expected_mask[~barriers_alone]).all()
    assert (expected_mask[barriers_alone] == BITS["barriers"]).all()
    assert barriers_alone.any() and (active == 0).any() and (rows[:, 7] < INT_MAX).any()


def test_calculate_limiters_cover_all_names(oracle):
    seen = set()
    for arch, gc, cfg in CASES[:40]:
        r = occupancy.calculate_many(arch, **cfg, partitioned_global_caching=gc)
        for mask in np.unique(r.limiter_mask):
            seen.update(n for i, n in enumerate(LIMITERS) if mask >> i & 1)
    assert seen == set(LIMITERS)


def test_max_potential_block_size_matches_header(oracle):
    rng = np.random.default_rng(7)
    lines, ours = [], []
    for arch in ARCHS:
        cfg = random_launches(arch, rng, 110)
        n = len(cfg["registers_per_thread"])
        per_thread = np.where(rng.random(n) < 0.5, 0, rng.integers(0, 65, n))
        const = np.minimum(cfg["dynamic_shared_memory"], cfg["max_dynamic_shared_memory"])
        const = np.where(per_thread > 0, const // 4, const)
        fn_max = np.where(rng.random(n) < 0.7, arch.max_threads_per_block, rng.integers(1, 1025, n))
        lines += oracle_lines(
            oracle, arch, cfg, op="P", extra=lambda i: [per_thread[i], const[i]], fn_max_threads=fn_max
        )
        for i in range(n):
            a, b = int(per_thread[i]), int(const[i])
            r = occupancy.max_potential_block_size(
                arch,
                registers_per_thread=int(cfg["registers_per_thread"][i]),
                static_shared_memory=int(cfg["static_shared_memory"][i]),
                dynamic_shared_memory=(lambda bs, a=a, b=b: a * bs + b) if a else b,
                max_dynamic_shared_memory=int(cfg["max_dynamic_shared_memory"][i]),
                max_threads_per_block=int(fn_max[i]),
                carveout=None if cfg["carveout"][i] < 0 else int(cfg["carveout"][i]),
                block_barriers=int(cfg["block_barriers"][i]),
                sm_count=132,
            )
            ours.append((0, r.min_grid_size, r.block_size))
    assert ours == [tuple(row) for row in oracle.run(lines)]


def test_available_dynamic_shared_memory_matches_header(oracle):
    rng = np.random.default_rng(11)
    lines, ours = [], []
    for arch in ARCHS:
        cfg = random_launches(arch, rng, 110)
        n = len(cfg["registers_per_thread"])
        fit = occupancy.calculate_many(arch, **{**cfg, "dynamic_shared_memory": 0}).active_blocks_per_sm
        num = np.maximum(1, (rng.random(n) * (fit + 2)).astype(np.int64))  # some ask too many
        lines += oracle_lines(
            oracle, arch, cfg, op="A", extra=lambda i: [num[i], cfg["threads_per_block"][i]]
        )
        for i in range(n):
            kw = dict(
                registers_per_thread=int(cfg["registers_per_thread"][i]),
                static_shared_memory=int(cfg["static_shared_memory"][i]),
                max_dynamic_shared_memory=int(cfg["max_dynamic_shared_memory"][i]),
                num_blocks=int(num[i]),
                threads_per_block=int(cfg["threads_per_block"][i]),
                carveout=None if cfg["carveout"][i] < 0 else int(cfg["carveout"][i]),
                block_barriers=int(cfg["block_barriers"][i]),
            )
            if num[i] > arch.max_blocks_per_sm:
                ours.append(None)
                continue
            try:
                ours.append((0, occupancy.available_dynamic_shared_memory(arch, **kw, match_driver=True)))
            except occupancy.OccupancyError:
                ours.append((1,))  # CUDA_OCC_ERROR_INVALID_INPUT
    rows = oracle.run(lines)
    compared = 0
    for mine, row in zip(ours, rows):
        if mine is None:
            continue
        compared += 1
        assert mine == tuple(row[: len(mine)])
    assert compared > 1500
