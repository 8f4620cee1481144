"""calculate / calculate_many: worked examples, errors, properties, public surface."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import occupancy
from occupancy import OccupancyError, common

K = 1024
ARCHS = occupancy.architectures()

# (id, arch, launch, active blocks, occupancy, limiters, source)
EXAMPLES = [
    ("bpg-128", "sm_70", dict(threads_per_block=128, registers_per_thread=37), 12, 0.75, ("registers",),
     "CUDA C++ Best Practices Guide, 'Calculating Occupancy': 128-thread blocks, 37 registers, CC 7.0 -> 12 blocks, 75%"),
    ("bpg-320", "sm_70", dict(threads_per_block=320, registers_per_thread=37), 4, 0.625, ("registers",),
     "same section: 320-thread blocks -> only four blocks per SM (63%)"),
    ("issue-32", "sm_80", dict(threads_per_block=512, registers_per_thread=32), 4, 1.0, ("warps", "registers"),
     "gpuroof issue: sm_80, 512 threads, 32 registers -> 100%"),
    ("issue-33", "sm_80", dict(threads_per_block=512, registers_per_thread=33), 3, 0.75, ("registers",),
     "gpuroof issue: 33 registers -> 75%"),
    ("a100-163k", "sm_80", dict(threads_per_block=256, registers_per_thread=32, dynamic_shared_memory=163 * K,
                                max_dynamic_shared_memory=163 * K), 1, 0.125, ("shared_memory",),
     "NVIDIA Ampere Tuning Guide: 164 KB/SM, up to 163 KB per block, 1 KB reserved per block"),
    ("a100-81k", "sm_80", dict(threads_per_block=256, registers_per_thread=32, dynamic_shared_memory=81 * K,
                               max_dynamic_shared_memory=163 * K), 2, 0.25, ("shared_memory",),
     "same figures: 2 x (81 KB + 1 KB reserved) = 164 KB fit"),
    ("a100-82k", "sm_80", dict(threads_per_block=256, registers_per_thread=32, dynamic_shared_memory=82 * K,
                               max_dynamic_shared_memory=163 * K), 1, 0.125, ("shared_memory",),
     "same figures: 2 x (82 KB + 1 KB) = 166 KB do not"),
    ("h100-227k", "sm_90", dict(threads_per_block=128, registers_per_thread=32, dynamic_shared_memory=227 * K,
                                max_dynamic_shared_memory=227 * K), 1, 4 / 64, ("shared_memory",),
     "NVIDIA Hopper Tuning Guide: up to 227 KB of shared memory per block"),
    ("turing-1024", "sm_75", dict(threads_per_block=1024, registers_per_thread=64), 1, 1.0, ("warps", "registers"),
     "Programming Guide Table 31: CC 7.5 has 1024 resident threads per SM"),
    ("turing-blocks", "sm_75", dict(threads_per_block=32, registers_per_thread=32), 16, 0.5, ("blocks",),
     "Programming Guide Table 31: CC 7.5 has 16 resident blocks per SM"),
    ("h100-barriers", "sm_90", dict(threads_per_block=32, registers_per_thread=0, block_barriers=3), 21,
     21 / 64, ("barriers",), "cuda_occupancy.h: CC 9.0 has 2 barriers per block slot, 64 // 3 = 21"),
    ("a100-barriers", "sm_80", dict(threads_per_block=32, registers_per_thread=0, block_barriers=16), 32,
     0.5, ("blocks",), "cuda_occupancy.h: barriers count against occupancy only from CC 9.0"),
    ("v100-carveout", "sm_70", dict(threads_per_block=64, registers_per_thread=16, static_shared_memory=9 * K,
                                    carveout=10), 1, 2 / 64, ("shared_memory",),
     "Volta Tuning Guide: carveouts 0/8/16/32/64/96 KB; 10% of 96 KB rounds up to 16 KB, holding one 9 KB block"),
]


@pytest.mark.parametrize("name,arch,launch,blocks,occ,limiters,source", EXAMPLES, ids=[e[0] for e in EXAMPLES])
def test_worked_examples(name, arch, launch, blocks, occ, limiters, source):
    r = occupancy.calculate(arch, **launch)
    assert r.active_blocks_per_sm == blocks, source
    assert r.occupancy == pytest.approx(occ)
    assert r.limiters == limiters
    assert r.active_warps_per_sm == blocks * r.warps_per_block
    assert r.active_threads_per_sm == blocks * launch["threads_per_block"]


def test_carveout_rounds_up_to_a_configuration():
    # sm_80 configurations are 0, 8, 16, 32, 64, 100, 132, 164 KB (Ampere Tuning Guide).
    for pct, config in [(None, 164), (0, 0), (1, 8), (20, 64), (39, 64), (40, 100), (60, 100), (61, 132), (100, 164)]:
        r = occupancy.calculate("sm_80", threads_per_block=32, registers_per_thread=8, carveout=pct)
        # 1 KB reserved per block: an empty carveout grows to the 8 KB configuration.
        assert r.shared_memory_config == max(config, 8) * K, pct


def test_zero_blocks_come_with_a_reason():
    r = occupancy.calculate("sm_80", threads_per_block=1024, registers_per_thread=65)
    assert r.active_blocks_per_sm == 0 and r.occupancy == 0 and "registers" in r.limiters
    assert "65536" in r.reason
    r = occupancy.calculate("sm_90", threads_per_block=256, registers_per_thread=32, dynamic_shared_memory=60_000)
    assert r.active_blocks_per_sm == 0 and r.limiters == ("shared_memory",)
    assert "max_dynamic_shared_memory=49152" in r.reason
    r = occupancy.calculate("sm_90", threads_per_block=256, registers_per_thread=32, max_threads_per_block=128)
    assert r.active_blocks_per_sm == 0 and "max_threads_per_block=128" in r.reason
    assert occupancy.calculate("sm_90", threads_per_block=64, registers_per_thread=32).reason is None


@pytest.mark.parametrize(
    "change,match",
    [
        ({"threads_per_block": 1056}, r"threads_per_block=1056 exceeds the maximum of 1024 on sm_90"),
        ({"threads_per_block": 0}, r"threads_per_block=0 is below the minimum of 1"),
        ({"registers_per_thread": 256}, r"registers_per_thread=256 exceeds the maximum of 255"),
        ({"registers_per_thread": -1}, r"registers_per_thread=-1"),
        ({"static_shared_memory": 49153}, r"static_shared_memory=49153 exceeds the maximum of 49152"),
        ({"dynamic_shared_memory": 232449}, r"dynamic_shared_memory=232449 exceeds the maximum of 232448"),
        ({"dynamic_shared_memory": 200_000, "static_shared_memory": 40_000}, r"exceeds the opt-in limit of 232448"),
        ({"max_dynamic_shared_memory": 240_000}, r"max_dynamic_shared_memory=240000"),
        ({"carveout": 101}, r"carveout=101 exceeds the maximum of 100"),
        ({"block_barriers": 17}, r"block_barriers=17 exceeds the maximum of 16"),
        ({"max_threads_per_block": 2048}, r"max_threads_per_block=2048"),
        ({"partitioned_global_caching": "maybe"}, r"partitioned_global_caching='maybe'"),
    ],
    ids=lambda x: next(iter(x)) if isinstance(x, dict) else None,
)
def test_bad_input_names_parameter_value_and_limit(change, match):
    launch = dict(threads_per_block=256, registers_per_thread=32) | change
    with pytest.raises(OccupancyError, match=match):
        occupancy.calculate("sm_90", **launch)
    with pytest.raises(OccupancyError, match=match.split("=")[0]):
        occupancy.calculate_many("sm_90", **{k: np.asarray([v]) if not isinstance(v, str) else v
                                            for k, v in launch.items()})


@pytest.mark.parametrize(
    "value", ["256", None, True, 256.0, 32.5, np.float64(256.0)],
    ids=["str", "none", "bool", "integral-float", "float", "numpy-float"],
)
def test_wrong_types_are_type_errors(value):
    """Issue 13: calculate(threads_per_block=256.0) was accepted though the docs say a
    wrong type raises TypeError; floats are refused in scalars and arrays alike."""
    with pytest.raises(TypeError, match="threads_per_block (must|is required)"):
        occupancy.calculate("sm_90", threads_per_block=value, registers_per_thread=32)
    with pytest.raises(TypeError, match="threads_per_block (must|is required)"):
        occupancy.calculate_many("sm_90", threads_per_block=np.asarray([value]), registers_per_thread=32)


def test_occupancy_error_is_value_error():
    assert issubclass(OccupancyError, ValueError)


@pytest.mark.parametrize("arch", ARCHS, ids=str)
def test_never_rises_with_registers_or_shared_memory(arch):
    threads = np.array([32, 64, 96, 128, 192, 256, 384, 512, 640, 768, 1024])[:, None]
    regs = np.arange(0, 256)[None, :]
    r = occupancy.calculate_many(arch, threads_per_block=threads, registers_per_thread=regs)
    assert (np.diff(r.active_blocks_per_sm, axis=1) <= 0).all()
    optin = arch.max_shared_memory_per_block_optin
    dyn = np.arange(0, optin + 1, 97)[None, :]
    for carve in (None, 0, 37, 100):
        r = occupancy.calculate_many(arch, threads_per_block=threads, registers_per_thread=24,
                                     dynamic_shared_memory=dyn, max_dynamic_shared_memory=optin,
                                     carveout=carve)
        assert (np.diff(r.active_blocks_per_sm, axis=1) <= 0).all()
        assert (r.active_blocks_per_sm <= arch.max_blocks_per_sm).all()
        assert (r.active_warps_per_sm <= arch.max_warps_per_sm).all()
        assert ((0 <= r.occupancy) & (r.occupancy <= 1)).all()
        assert (r.shared_memory_per_block % arch.shared_memory_allocation_unit == 0).all()


launch_strategy = st.fixed_dictionaries({
    "arch": st.sampled_from(ARCHS),
    "threads_per_block": st.integers(1, 1024),
    "registers_per_thread": st.integers(0, 255),
    "static_shared_memory": st.integers(0, 48 * K),
    "dyn_fraction": st.floats(0, 1),
    "opt_in": st.booleans(),
    "carveout": st.none() | st.integers(0, 100),
    "block_barriers": st.integers(0, 16),
})


@settings(max_examples=150, deadline=None)
@given(launch_strategy)
def test_calculate_many_equals_calculate(p):
    arch = p.pop("arch")
    optin = arch.max_shared_memory_per_block_optin - p["static_shared_memory"]
    p["max_dynamic_shared_memory"] = optin if p.pop("opt_in") else None
    p["dynamic_shared_memory"] = int(p.pop("dyn_fraction") * optin)
    one = occupancy.calculate(arch, **p)
    many = occupancy.calculate_many(arch, **{k: np.array([v]) if v is not None else None for k, v in p.items()})
    for field in ("active_blocks_per_sm", "active_warps_per_sm", "active_threads_per_sm", "warps_per_block",
                  "registers_per_block", "shared_memory_per_block", "shared_memory_config"):
        assert getattr(one, field) == int(getattr(many, field)[0]), field
    assert one.occupancy == float(many.occupancy[0])
    assert one.limiters == many.limiters_at(0)
    for name, limit in one.block_limits.items():
        assert (occupancy.UNLIMITED if limit is None else limit) == int(getattr(many, f"block_limit_{name}")[0])


def test_calculate_many_broadcasts():
    r = occupancy.calculate_many("sm_86", threads_per_block=np.array([128, 256])[:, None],
                                 registers_per_thread=np.arange(20, 30)[None, :], carveout=np.array([-1] * 10))
    assert r.shape == (2, 10) and r.occupancy.shape == (2, 10) and r.warps_per_block.shape == (2, 10)
    r = occupancy.calculate_many("sm_86", threads_per_block=np.array([128], dtype=np.uint16), registers_per_thread=32)
    assert r.active_blocks_per_sm.tolist() == [12]


@pytest.mark.parametrize("shape", [(0,), (0, 3), (2, 0)], ids=["0", "0x3", "2x0"])
def test_calculate_many_on_empty_arrays_returns_empty_arrays(shape):
    """Issue 13: empty arrays were refused ("threads_per_block=0 is below the minimum")."""
    r = occupancy.calculate_many("sm_90", threads_per_block=np.zeros(shape, dtype=int),
                                 registers_per_thread=np.zeros(shape, dtype=int))
    assert r.shape == shape and r.occupancy.size == 0


def test_array_sums_and_huge_unsigned_values_are_checked():
    """The opt-in check sees static + dynamic of arrays; a uint64 past int64 is out of range."""
    with pytest.raises(OccupancyError, match="opt-in limit"):
        occupancy.calculate_many("sm_90", threads_per_block=256, registers_per_thread=32,
                                 static_shared_memory=np.array([40_000], dtype=np.int32),
                                 dynamic_shared_memory=np.array([200_000], dtype=np.int32))
    with pytest.raises(OccupancyError, match="out of range"):
        occupancy.calculate_many("sm_90", threads_per_block=np.array([2**64 - 1], dtype=np.uint64),
                                 registers_per_thread=32)


def test_result_is_frozen():
    r = occupancy.calculate("sm_90", threads_per_block=256, registers_per_thread=40)
    with pytest.raises(ValueError):
        r.active_blocks_per_sm = 1


def test_public_surface_is_exactly_all():
    public = {n for n in dir(occupancy) if not n.startswith("_")}
    modules = {n for n in public if type(getattr(occupancy, n)).__name__ == "module"}
    assert sorted(occupancy.__all__) == occupancy.__all__
    assert set(occupancy.__all__) == public - modules


def test_common_is_the_shared_helpers_public_module():
    assert sorted(common.__all__) == common.__all__
    assert all(callable(getattr(common, name)) or name.isupper() for name in common.__all__)
    with pytest.raises(TypeError, match="n must be an integer, not float"):
        common.integer("n", 2.0)
    with pytest.raises(OccupancyError, match="n=9 exceeds the maximum of 8 blocks"):
        common.check_range("n", 9, 1, 8, OccupancyError, " blocks")


def test_every_name_in_all_resolves_in_a_fresh_interpreter():
    """The names are loaded lazily (PEP 562): each must resolve, and `occupancy.common` too."""
    code = "import occupancy, occupancy.common; [getattr(occupancy, n) for n in occupancy.__all__]; print('ok')"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "ok"
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        occupancy.nothing  # noqa: B018


def test_import_loads_neither_matplotlib_nor_cuda():
    code = (
        "import sys, occupancy; occupancy.calculate('sm_90', threads_per_block=256, registers_per_thread=40);"
        "bad = [m for m in sys.modules if m.split('.')[0] in ('matplotlib', 'cuda')];"
        "print(bad); sys.exit(1 if bad else 0)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
