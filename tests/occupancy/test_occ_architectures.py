"""The packaged architecture data: complete, consistent, and as NVIDIA documents it."""

from __future__ import annotations

import json

import pytest

import occupancy
from occupancy import Architecture, OccupancyError

GUIDE = "CUDA C++ Programming Guide, Table 31 'Technical Specifications per Compute Capability'"
HEADER = "cuda_occupancy.h (CUDA 13.0)"
K = 1024

LISTED = ["5.0", "5.2", "5.3", "6.0", "6.1", "6.2", "7.0", "7.2", "7.5", "8.0", "8.6", "8.7",
          "8.9", "9.0", "10.0", "10.3", "11.0", "12.0", "12.1"]

# (cc, resident threads/SM, resident blocks/SM, shared memory/SM, max per block (opt-in)), from GUIDE;
# resident blocks per SM also from HEADER's cudaOccMaxBlocksPerMultiprocessor.
GOLDEN = [
    ("5.0", 2048, 32, 64 * K, 48 * K), ("5.2", 2048, 32, 96 * K, 48 * K),
    ("5.3", 2048, 32, 64 * K, 48 * K), ("6.0", 2048, 32, 64 * K, 48 * K),
    ("6.1", 2048, 32, 96 * K, 48 * K), ("6.2", 2048, 32, 64 * K, 48 * K),
    ("7.0", 2048, 32, 96 * K, 96 * K), ("7.2", 2048, 32, 96 * K, 96 * K),
    ("7.5", 1024, 16, 64 * K, 64 * K), ("8.0", 2048, 32, 164 * K, 163 * K),
    ("8.6", 1536, 16, 100 * K, 99 * K), ("8.7", 1536, 16, 164 * K, 163 * K),
    ("8.9", 1536, 24, 100 * K, 99 * K), ("9.0", 2048, 32, 228 * K, 227 * K),
    ("10.0", 2048, 32, 228 * K, 227 * K), ("10.3", 2048, 32, 228 * K, 227 * K),
    ("11.0", 1536, 24, 228 * K, 227 * K), ("12.0", 1536, 24, 100 * K, 99 * K),
    ("12.1", 1536, 24, 100 * K, 99 * K),
]


def test_every_listed_compute_capability_is_packaged():
    assert [a.compute_capability for a in occupancy.architectures()] == LISTED


@pytest.mark.parametrize("cc,threads,blocks,smem,optin", GOLDEN, ids=[g[0] for g in GOLDEN])
def test_guide_figures(cc, threads, blocks, smem, optin):
    a = occupancy.architecture(cc)
    assert (a.max_threads_per_sm, a.max_blocks_per_sm) == (threads, blocks)
    assert (a.shared_memory_per_sm, a.max_shared_memory_per_block_optin) == (smem, optin)
    assert a.max_threads_per_block == 1024 and a.max_registers_per_thread == 255  # GUIDE
    assert a.registers_per_sm == 64 * K  # GUIDE
    # GUIDE: 32 K registers per block on the Tegra parts 5.3 and 6.2, 64 K elsewhere.
    assert a.max_registers_per_block == (32 * K if cc in ("5.3", "6.2") else 64 * K)
    # Reserved shared memory per block: 1 KB from 8.0 (GUIDE, "Shared Memory" notes).
    assert a.reserved_shared_memory_per_block == (K if a.major >= 8 else 0)
    # HEADER: 256-byte shared-memory granularity up to 7.x, 128 from 8.x.
    assert a.shared_memory_allocation_unit == (256 if a.major < 8 else 128)
    # HEADER: GP100 has 2 sub-partitions, every other SM 4.
    assert a.sub_partitions == (2 if cc == "6.0" else 4)


@pytest.mark.parametrize("arch", occupancy.architectures(), ids=str)
def test_entries_are_consistent(arch):
    assert arch.source and "Programming Guide" in arch.source and "cuda_occupancy.h" in arch.source
    assert arch.max_warps_per_sm * arch.warp_size == arch.max_threads_per_sm
    assert arch.shared_memory_carveouts[-1] == arch.shared_memory_per_sm
    assert list(arch.shared_memory_carveouts) == sorted(arch.shared_memory_carveouts)
    assert (arch.max_shared_memory_per_block_optin + arch.reserved_shared_memory_per_block
            <= arch.shared_memory_per_sm)
    assert arch.name == f"sm_{arch.major}{arch.minor}"
    # Barriers count from Hopper on (HEADER: only computeMajor >= 9 applies them).
    assert arch.barriers_limit_occupancy == (arch.major >= 9)


@pytest.mark.parametrize(
    "spec", ["sm_90", "9.0", "90", "SM_90", "sm_90a", "compute_90", (9, 0)],
    ids=["sm_90", "9.0", "90", "upper", "90a", "compute_90", "tuple"],
)
def test_lookup_forms(spec):
    a = occupancy.architecture(spec)
    assert a.name == "sm_90" and occupancy.architecture(a) is a


@pytest.mark.parametrize("spec", ["sm_100", "10.0", "100", "sm_121", "12.1"], ids=str)
def test_three_digit_names(spec):
    assert occupancy.architecture(spec).compute_capability in ("10.0", "12.1")


def test_unknown_name_lists_known_ones():
    with pytest.raises(OccupancyError, match=r"arch='sm_91'.*known: sm_50.*sm_121"):
        occupancy.architecture("sm_91")


def test_wrong_type_is_type_error():
    with pytest.raises(TypeError):
        occupancy.architecture(9.0)


def test_custom_architecture_round_trips_through_json(tmp_path):
    base = occupancy.architecture("sm_90").model_dump()
    base.update(name="sm_99", compute_capability="9.9", max_blocks_per_sm=16)
    path = tmp_path / "arch.json"
    path.write_text(json.dumps(base))
    custom = occupancy.load_architecture(path)
    assert custom.name == "sm_99" and custom.major == 9 and custom.minor == 9
    r = occupancy.calculate(custom, threads_per_block=32, registers_per_thread=16)
    assert r.active_blocks_per_sm == 16 and r.limiters == ("blocks",)


@pytest.mark.parametrize(
    "change,match",
    [
        ({"max_warps_per_sm": 63}, "max_warps_per_sm"),
        ({"shared_memory_carveouts": [0, 8192]}, "largest carveout"),
        ({"max_shared_memory_per_block_optin": 233472}, "optin"),
        ({"shared_memory_allocation_unit": 100}, "power of two"),
        ({"unknown_field": 1}, "unknown_field"),
    ],
    ids=["warps", "carveouts", "optin", "unit", "extra"],
)
def test_inconsistent_custom_architecture_is_rejected(tmp_path, change, match):
    data = occupancy.architecture("sm_90").model_dump() | change
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    with pytest.raises(OccupancyError, match=match):
        occupancy.load_architecture(path)


def test_bad_json_is_occupancy_error(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text("{nope")
    with pytest.raises(OccupancyError, match="not valid JSON"):
        occupancy.load_architecture(path)


def test_architecture_is_frozen():
    with pytest.raises(ValueError):
        occupancy.architecture("sm_90").max_blocks_per_sm = 1
    assert isinstance(occupancy.architecture("sm_90"), Architecture)
