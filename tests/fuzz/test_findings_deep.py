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
        roofline.instructions.instruction_roofline(profile, sm_clock_hz=clock)


def test_instruction_roofline_at_the_largest_clock_is_finite(profile):
    ir = roofline.instructions.instruction_roofline(profile, sm_clock_hz=1e11)
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


def test_a_grid_of_boundary_blocks_is_walked_not_classed(monkeypatch):
    """`gpuroof predict --model matmul_tiled --param m=85 --param tile=1` ran for more than
    5 minutes (the CLI fuzz stalled on it): every block of that grid is a boundary block, so
    the fast count built 85**3 classes and compared each with every other. Where the classes
    are as many as the blocks, the block-by-block walk gives the same exact count."""
    import roofline._traffic.passes as traffic_module
    from roofline import models

    walked = []
    exhaustive = traffic_module.exhaustive_pass

    def spy(*args, **kwargs):
        walked.append(args[2] if len(args) > 2 else kwargs.get("unit"))
        return exhaustive(*args, **kwargs)

    fast = models.matmul_tiled(20, tile=1)
    monkeypatch.setattr(traffic_module, "exhaustive_pass", spy)
    assert models.matmul_tiled(20, tile=1) == fast
    assert walked, "the fast count classed a grid made only of boundary blocks"


@pytest.mark.parametrize("rows,threads,groups", [(1, 1, 1), (50, 3, 7), (200, 32, 1), (300, 5, 300), (0, 4, 1)])
def test_sectors_by_group_matches_a_group_by_group_count(rows, threads, groups):
    import numpy as np

    from roofline._traffic.passes import _sectors_by_group

    rng = np.random.default_rng(rows * 1000 + threads)
    group = rng.integers(-1, groups, size=(rows, 2))
    sectors = rng.integers(0, 40, size=(rows, threads))
    mask = rng.random((rows, threads)) < 0.6
    keys, bases = _sectors_by_group(group, sectors, mask)
    want = [np.unique(sectors[np.all(group == key, axis=1)][mask[np.all(group == key, axis=1)]])
            for key in np.unique(group, axis=0)]
    assert np.array_equal(keys, np.unique(group, axis=0))
    assert len(bases) == len(want) and all(np.array_equal(b, w) for b, w in zip(bases, want))


def test_a_fast_count_beyond_both_budgets_is_refused_up_front(monkeypatch):
    import roofline._traffic.passes as traffic_module
    from roofline import models

    monkeypatch.setattr(traffic_module, "EXHAUSTIVE_THREAD_BUDGET", 100)
    monkeypatch.setattr(traffic_module, "FAST_THREAD_BUDGET", 1000)
    with pytest.raises(roofline.RooflineError, match=r"^the fast count would evaluate \d+ threads .* its budget is 1000"):
        models.matmul_tiled(20, tile=1)


@pytest.mark.parametrize("kernel_id", ["inf", "1e400", "-inf", "nan", "1.5", "x"])
def test_an_ncu_export_with_a_kernel_id_that_is_no_integer(kernel_id, tmp_path):
    """`gpuroof ncu` on an export whose first ID read "inf": OverflowError ("cannot convert
    float infinity to integer") escaped as a traceback; "1.5" was read as kernel 1."""
    lines = PROFILE.read_text().splitlines(keepends=True)
    lines[2] = f'"{kernel_id}"' + lines[2][lines[2].index(","):]
    path = tmp_path / "cut.csv"
    path.write_text("".join(lines))
    with pytest.raises(roofline.RooflineError, match=rf"line \d+: kernel ID '{kernel_id}' is not an integer$"):
        roofline.load_ncu(path)


V100 = ROOT / "roofline/data/gpus/v100-sxm2.toml"


@pytest.mark.parametrize("link", ['{ kind = "pcie", generation = [3], lanes = 16 }',
                                  '{ kind = "pcie", generation = { a = 1 }, lanes = 16 }'], ids=["list", "table"])
def test_load_gpu_with_an_unhashable_pcie_generation(link, tmp_path):
    """A TOML whose host link generation was a list: TypeError "unhashable type: 'list'"
    escaped from the model's validator instead of the field check's RooflineError."""
    path = tmp_path / "gpu.toml"
    path.write_text(V100.read_text().replace('host_link = { kind = "pcie", generation = 3, lanes = 16 }',
                                             f"host_link = {link}", 1))
    with pytest.raises(roofline.RooflineError, match=r"host_link"):
        roofline.load_gpu(path)


def test_load_gpu_names_a_key_holding_a_newline_on_one_line(tmp_path):
    """A JSON GPU with a field "host_link.l\\nes": the message spanned two lines."""
    import json

    data = json.loads(roofline.gpu("H200").model_dump_json())
    data["host_link"] = {**data["host_link"], "l\nes": 16}
    path = tmp_path / "gpu.json"
    path.write_text(json.dumps(data))
    with pytest.raises(roofline.RooflineError) as caught:
        roofline.load_gpu(path)
    assert "\n" not in str(caught.value) and "'l\\nes'" in str(caught.value)


def test_family_model_with_an_array_argument_is_one_line():
    import numpy as np

    import validate

    with pytest.raises(roofline.RooflineError, match=r"^arguments of copy must be JSON values, got .*array") as caught:
        validate.family_model("copy", {"n": np.zeros((2, 3), dtype=np.uint8)})
    assert "\n" not in str(caught.value)


def test_profile_report_with_a_kernel_that_is_no_pattern_is_a_deliberate_type_error(profile):
    """Seen in a deep run as "not a library error": a run whose source changed under it
    (linecache read the edited file); kept to show the refusal is the deliberate one."""
    import fuzzlib

    with pytest.raises(TypeError, match=r"^pattern must be a str") as caught:
        roofline.profile_report(roofline.load_ncu(PROFILE), kernel=0)
    assert fuzzlib.deliberate(caught.value)


@pytest.mark.parametrize("check,name", [("occupancy._clusters:_policy", "scheduling_policy")])
def test_an_array_for_a_named_choice_is_one_line(check, name):
    """max_potential_cluster_size(scheduling_policy=<a 2-D uint8 array>): the message held
    the array's repr over two lines."""
    import importlib

    import numpy as np

    import occupancy

    module, _, function = check.partition(":")
    with pytest.raises(occupancy.OccupancyError, match=rf"^{name}=array\(.* is not one of") as caught:
        getattr(importlib.import_module(module), function)(np.zeros((2, 3), dtype=np.uint8))
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize("field, value", [("flops", 10**400), ("dram_bytes", 10**5000), ("instructions", -(10**400))],
                         ids=["flops-1e400", "bytes-5000-digits", "negative"])
def test_a_count_beyond_the_largest_float_is_the_librarys_error(field, value):
    """roofline.Kernel(flops=10**400): the int was kept, and the bound's float(flops) raised
    OverflowError (not the library's error) from every model that used the kernel."""
    with pytest.raises(roofline.RooflineError, match=rf"^{field} is a \d+-bit integer; a count must be at most"):
        roofline.Kernel(name="k", **{"dram_bytes": 1, field: value})
    assert roofline.Kernel(name="k", flops=10**300, dram_bytes=1).flops == 10**300


def test_nvcc_echoing_a_line_that_is_not_utf8_is_a_compile_error(tmp_path):
    """A source line with a Latin-1 byte that nvcc echoes in its error: UnicodeDecodeError escaped
    from reading nvcc's output."""
    import occupancy
    from occupancy._nvcc import find_nvcc

    if find_nvcc() is None:
        pytest.skip("no nvcc")
    source = tmp_path / "latin1.cu"
    source.write_bytes(b'__global__ void k(int* y) { int x = "caf\xe9"; y[0] = x; }\n')
    with pytest.raises(occupancy.OccupancyError) as caught:
        occupancy.kernel_resources_by_architecture(source, ["sm_90"], compiler="nvcc")
    assert "caf" in str(caught.value) or "error" in str(caught.value).lower()
