"""The registry of the time model's rules (`roofline._predict.rules`): every switch in the code is a
registered rule and every rule has a switch; turning a rule off changes the prediction of a kernel
that exercises it; with nothing turned off the predictions are the model's."""

from __future__ import annotations

import ast
from collections.abc import Callable
from pathlib import Path

import occupancy
import pytest
from occupancy import SassCounts, SassLoop, SassSummary

import roofline
from roofline import Kernel, RooflineError, models
from roofline._predict.rules import RULES, disabled, on

ROOT = Path(roofline.__file__).resolve().parent
DATA = Path(__file__).resolve().parents[1] / "data" / "ncu"


def _switches() -> tuple[set[str], set[str]]:
    """The names ``on("...")`` reads across the package, and the prefixes of ``on(f"...{}")``."""
    names, prefixes = set(), set()
    for path in ROOT.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "on" and node.args:
                arg = node.args[0]
                if isinstance(arg, ast.Constant):
                    names.add(arg.value)
                elif isinstance(arg, ast.JoinedStr) and isinstance(arg.values[0], ast.Constant):
                    prefixes.add(arg.values[0].value)
    return names, prefixes


def test_every_switch_is_a_rule_and_every_rule_has_a_switch():
    names, prefixes = _switches()
    assert names <= RULES.keys(), names - RULES.keys()
    assert prefixes == {"term_"}
    terms = {f"term_{t.name}" for t in roofline.predict("H200", models.copy(1 << 20)).terms}
    assert {n for n in RULES if n.startswith("term_")} == terms
    assert {n for n in RULES if not n.startswith("term_")} == names


def test_every_rule_says_where_it_lives_and_why():
    for rule in RULES.values():
        module, _, function = rule.where.partition(":")
        path = ROOT.joinpath(*module.split(".")).with_suffix(".py")
        assert path.is_file(), rule
        assert f"def {function}(" in path.read_text(), rule
        assert rule.kind in ("probe", "derivation", "corpus") and rule.evidence and rule.off


def test_an_unknown_rule_is_refused_and_the_switch_is_restored():
    with pytest.raises(RooflineError, match="not rules"):
        with disabled({"no_such_rule"}):
            pass
    with disabled({"term_launch"}):
        assert not on("term_launch") and on("term_ramp")
    assert on("term_launch")


def _sass(*, loops: tuple[SassLoop, ...] = (), total: int = 30, loads: int = 3, **fields) -> SassSummary:
    return SassSummary(architecture="sm_90", disassembler="listing", global_loads_in_flight_per_thread=2,
                       instructions=SassCounts(total=total, global_loads=loads, **fields.pop("counts", {})),
                       loops=loops, hot_loop=0 if loops else None, **fields)


def _loop(total: int = 10, loads: int = 2, **fields) -> SassLoop:
    counts = fields.pop("counts", {})
    return SassLoop(start_offset=0, end_offset=80, depth=1, global_loads_in_flight=2,
                    instructions=SassCounts(total=total, global_loads=loads, **counts), **fields)


def _launch(sass: SassSummary | None, grid=(264, 1, 1), block=(256, 1, 1)) -> occupancy.Launch:
    resources = None if sass is None else occupancy.KernelResources(
        kernel="k", architecture="sm_90", registers_per_thread=32, sass=sass)
    return occupancy.Launch(grid=grid, block=block, registers_per_thread=32, resources=resources)


def _predict(kernel: Kernel, *, measured: roofline.ProfileCounts | None = None, after_l2_flush: bool = False,
             calibration: roofline.Calibration | None = None,
             fma_chains_per_thread: int = 1) -> Callable[[], tuple[float, str]]:
    def run() -> tuple[float, str]:
        p = roofline.predict("H200", kernel, measured=measured, after_l2_flush=after_l2_flush,
                             calibration=calibration, fma_chains_per_thread=fma_chains_per_thread)
        return p.seconds, p.limiter
    return run


def _suite(label: str, after_l2_flush: bool = False) -> Callable[[], tuple[float, str]]:
    kernel = next(m for m in models.suite() if m.label == label)
    return _predict(kernel, after_l2_flush=after_l2_flush)


def _looped(sass: SassSummary, grid=(264, 1, 1), block=(256, 1, 1), **fields) -> Kernel:
    """A kernel with a hot loop of global loads, its instructions and bytes given."""
    base = dict(name="looped", flops=0.0, dram_bytes=64e6, l2_bytes=256e6, l1_bytes=1024e6,
                instructions=264 * 8 * 2000.0, launch=_launch(sass, grid, block))
    return Kernel(**{**base, **fields})


_HOT = _sass(loops=(_loop(),))


def _rows_read_twice(rows: int = 128, cols: int = 1 << 18) -> Kernel:
    """A block of 1024 reads its row of ``cols`` floats in one loop, then again in a second."""
    def at(c):
        return c.block_x * cols + c.thread_x + c.loop * 1024

    trips = cols // 1024
    t = roofline.memory.traffic(rows, 1024, [roofline.memory.Access(array="x", index=at, loop=trips),
                                             roofline.memory.Access(array="x", index=at, loop=trips, phase=1)])
    return t.kernel(name="rows", flops=0.0, launch=occupancy.Launch(grid=rows, block=1024, registers_per_thread=14))


def _strided_update(n: int = 1 << 23, stride: int = 2) -> Kernel:
    """Thread i adds one to ``x[i * stride]``: a load and a store of every other float."""
    def at(c):
        return (c.block_x * 256 + c.thread_x) * stride

    t = roofline.memory.traffic(n // 256, 256, [roofline.memory.Access(array="x", index=at),
                                                roofline.memory.Access(array="x", index=at, kind="store")])
    return t.kernel(name="strided_update", flops=float(n), precision="fp32",
                    launch=occupancy.Launch(grid=n // 256, block=256, registers_per_thread=16))


def _rows_per_thread(blocks: int = 16, cols: int = 256) -> Kernel:
    """Each of 64 threads a block walks its own row of two matrices (GESUMMV's pattern), 16 blocks
    on the 132 SMs: one block an SM, where the occupancy would allow 32 of 64 threads."""
    def at(c):
        return (c.block_x * 64 + c.thread_x) * cols + c.loop

    t = roofline.memory.traffic(blocks, 64, [roofline.memory.Access(array="a", index=at, loop=cols),
                                             roofline.memory.Access(array="b", index=at, loop=cols),
                                             roofline.memory.Access(array="y", index=lambda c: c.x, kind="store")])
    return t.kernel(name="rows_per_thread", flops=4.0 * blocks * 64 * cols, precision="fp32",
                    launch=occupancy.Launch(grid=blocks, block=64, registers_per_thread=24))


_ROWS = _rows_per_thread()
_ONE_WAVE = (132, 1, 1)
_MB = 1e6

_SHARED_ATOMICS = roofline.calibration("H200").model_copy(update={
    "sm_shared_atomic_one_word_updates_per_second": 16e9, "sm_shared_atomic_spread_updates_per_second": 16e9,
    "sm_shared_cas_one_word_attempts_per_second": 1e9, "sm_shared_cas_spread_attempts_per_second": 2.5e9,
    "shared_cas_round_trip_seconds": 5e-8})

#: (rule, what predicts a kernel that exercises it). A rule's effect is (seconds, limiter).
CASES: list[tuple[str, Callable[[], tuple[float, str]]]] = [
    ("term_dram", _suite("copy")),
    ("term_launch", _suite("copy")),
    ("term_ramp", _suite("copy")),
    ("term_spread", _suite("copy")),
    ("sm_port", _suite("copy")),
    ("dram_knee", _suite("copy")),
    ("l1_queue", _suite("copy")),
    ("warp_customers", _suite("copy")),
    ("dram_l1_passes", _suite("copy")),
    ("wave_tail", _suite("copy")),
    ("read_write_roof", _suite("vector_add")),
    ("flush_writeback", _suite("copy", after_l2_flush=True)),
    # a copy of 2 x 16 MiB after the flush: its written lines all stay in the H200's 60 MB L2
    ("l2_keeps_writes", _predict(models.copy(1 << 22), after_l2_flush=True)),
    # a copy of 2 x 64 MB: of its 64 MB written, L2 would keep 31.5 MB (its share of the last
    # 60 MiB); the probe's figure holds it to 29 MB
    ("l2_written_cap", _predict(models.copy(1 << 24), after_l2_flush=True,
                                calibration=roofline.calibration("H200").model_copy(
                                    update={"l2_kept_written_bytes": 29e6}))),
    # one block an SM keeps its 128 KiB of rows in L1; 32 of them, as the occupancy allows, would not
    # (the L1 passes bind this small kernel: the rule shows in the l2 term's seconds)
    ("l1_resident_blocks", lambda: next((t.seconds, t.limiter) for t in roofline.predict("H200", _ROWS).terms
                                        if t.name == "l2")),
    ("dram_granularity", _suite("offset_read(offset=11)")),
    ("dram_partial_write_fill", _suite("offset_read(offset=11)")),
    # every other float of 64 MB read, then written: each sector written in part was loaded first
    ("loaded_sector_fill", _predict(_strided_update())),
    ("term_l2_partial_stores", _suite("transpose(variant=naive_row)")),
    ("term_l1_shared", _suite("matmul_naive")),
    ("busiest_sm", _suite("matmul_naive")),
    ("l1_reuse", _suite("blur(radius=1)")),
    # 16 blocks of 64 rows an SM: two iterations' sectors (8 KB a block) fit the L1, their lines
    # (16 KB a block) do not
    ("l1_open_lines", _predict(_rows_per_thread(blocks=2112, cols=128))),
    # every row resident (32 blocks of 64 an SM): 69 MB of open lines, past the H200's onset
    ("l2_open_lines", _predict(_rows_per_thread(blocks=4224, cols=64))),
    # 128 rows of 1 MiB resident at once outgrow the H200's 60 MiB L2: the second pass rereads DRAM
    ("l2_capacity_rereads", _predict(_rows_read_twice())),
    ("barrier_wait", _suite("reduction")),
    # reduce0's tree: 9 barriers a block, one before its loop of 28 instructions, 8 levels in it;
    # no shared bytes given: the barriers give the loop's trips and 16384 blocks issue 122M
    ("barrier_loop_trips", _predict(_looped(
        _sass(total=59, loads=1, counts={"barriers": 2, "shared_loads": 3, "shared_stores": 2},
              loops=(_loop(total=28, loads=0, counts={"barriers": 1, "shared_loads": 2, "shared_stores": 1}),)),
        grid=(16384, 1, 1), instructions=None, barriers_per_block=9, dram_bytes=16.8e6, l2_bytes=16.8e6,
        l1_bytes=16.8e6, load_bytes=16.8e6))),
    # one wave of a block per SM, 64 load phases split by barriers: their round trips floor the time
    ("load_phases", _predict(Kernel(flops=0.0, dram_bytes=1 * _MB, barriers_per_block=128, load_phases_per_block=64,
                                    launch=_launch(None, _ONE_WAVE, (1024, 1, 1))))),
    ("block_dispatch", _suite("aos")),
    ("term_l2", _predict(Kernel(flops=0.0, dram_bytes=1 * _MB, l2_bytes=4000 * _MB, launch=_launch(None)))),
    ("term_l2_requests", _predict(Kernel(flops=0.0, dram_bytes=1 * _MB, l2_requests=1e10, launch=_launch(None)))),
    ("term_atomics", _predict(Kernel(flops=0.0, dram_bytes=1 * _MB, atomics=1e9, launch=_launch(None)))),
    ("atomic_contention", _predict(Kernel(flops=0.0, dram_bytes=1 * _MB, atomics=1e7, atomic_addresses=1,
                                          launch=_launch(None)))),
    ("cas_contention", _predict(Kernel(flops=0.0, dram_bytes=1 * _MB, atomics=1e5, atomic_addresses=1,
                                       cas_contenders=64, launch=_launch(None)))),
    # the packaged calibrations have no shared-atomic rates yet: test figures of their order
    ("term_shared_atomics", _predict(Kernel(flops=0.0, dram_bytes=1 * _MB, shared_atomics=1e10, launch=_launch(None)),
                                     calibration=_SHARED_ATOMICS)),
    ("shared_cas_retries", _predict(Kernel(flops=0.0, dram_bytes=1 * _MB, shared_cas=1e8, shared_atomic_words=1,
                                           shared_cas_contenders=256, launch=_launch(None)),
                                    calibration=_SHARED_ATOMICS)),
    # a loop of 40 instructions and one ATOMS, 1000 shared atomics a thread: 1000 trips' instructions
    ("shared_atomic_loops", _predict(Kernel(flops=0.0, dram_bytes=1 * _MB, shared_atomics=264 * 256 * 1000.0,
                                            launch=_launch(_sass(loops=(_loop(total=40, loads=0, counts={
                                                "atomics": 1, "shared_atomics": 1}),), loads=0, counts={
                                                "atomics": 1, "shared_atomics": 1}))),
                                     calibration=_SHARED_ATOMICS)),
    ("counted_shared_atomics", _predict(Kernel(flops=0.0, dram_bytes=1 * _MB, launch=_launch(None)),
                                        measured=roofline.ProfileCounts(shared_atomic_instructions=1e9),
                                        calibration=_SHARED_ATOMICS)),
    ("term_arithmetic", _predict(Kernel(flops=1e13, dram_bytes=1 * _MB, launch=_launch(None)))),
    # the packaged calibrations have no overlap exponent (the plain maximum): one that has
    ("overlap_exponent", _predict(
        Kernel(flops=4e10, dram_bytes=1000 * _MB, launch=_launch(None)),
        calibration=roofline.calibration("H200").model_copy(update={"overlap_exponent": 2.0}))),
    # one load a thread outside any loop, no barrier, one path: a warp computes with no load in flight
    ("phases_take_turns", _predict(Kernel(flops=264 * 256 * 400.0, dram_bytes=264 * 256 * 8.0,
                                          launch=_launch(_sass(longest_path_instructions=30))))),
    ("issue_efficiency", _predict(Kernel(flops=1e11, dram_bytes=1 * _MB, launch=_launch(None)))),
    # one warp with enough chains to issue every cycle: one scheduler of four issues
    ("schedulers_in_use", _predict(Kernel(flops=1e10, dram_bytes=1 * _MB, launch=_launch(None, 1, 32)),
                                   fma_chains_per_thread=64)),
    ("tensor_rate_fraction", _predict(Kernel(flops=1e14, precision="fp16_tensor", dram_bytes=1 * _MB,
                                             launch=_launch(None)))),
    ("term_instructions", _predict(Kernel(flops=0.0, dram_bytes=1 * _MB, instructions=1e10, launch=_launch(None)))),
    # a full wave of 132 x 2 blocks of 1024 threads and one block more: its own wave adds half the time
    ("tail_limiter", _predict(Kernel(flops=0.0, dram_bytes=10 * _MB, launch=_launch(None, 132 * 2 + 1, 1024)))),
    ("term_trips", _predict(_looped(_HOT, dram_bytes=0.0))),
    ("dram_hot_loop_waits", _predict(_looped(_HOT))),
    # loose counts, no L2 bytes: the threads ask for 4 GB, DRAM moves 64 MB of them (the rest hit L2)
    ("requested_bytes_at_l2", _predict(_looped(_HOT, l2_bytes=None, l1_bytes=None, load_bytes=4e9,
                                               store_bytes=0.0))),
    ("trip_port_bytes", _predict(_looped(_HOT))),
    ("sass_instruction_estimate", _predict(_looped(_sass(loops=(_loop(total=2000),), total=2020), dram_bytes=1 * _MB,
                                                   instructions=None, load_bytes=264 * 256 * 4 * 2000.0))),
    # a loop of one load a trip described by its elements alone (no load_bytes): 256 trips at the
    # hot loop's latency (the grid-stride probe's gs_sum)
    ("elements_as_loads", _predict(Kernel(flops=0.0, dram_bytes=264 * 256 * 256 * 4.0, launch=occupancy.Launch(
        grid=(264, 1, 1), block=(256, 1, 1), registers_per_thread=32, elements_per_thread=256,
        resources=_launch(_sass(loops=(_loop(total=8, loads=1),), loads=1)).resources)))),
    # straight-line code of 600 instructions a warp, both sides of a branch that splits every warp:
    # issued once, however many paths (the branch-paths probe's branch_lanes)
    ("branch_sides_in_sass", _predict(Kernel(flops=264 * 256 * 528.0, dram_bytes=1 * _MB, branch_issue_factor=2.0,
                                             launch=_launch(_sass(total=600, loads=0), grid=(264 * 64, 1, 1))),
                                      fma_chains_per_thread=8)),
    ("duplicate_warps", _predict(_looped(_sass(loops=(_loop(),), thread_index_components=("x",)),
                                         block=(32, 8, 1)))),
    ("blocks_sharing_a_line", _predict(_looped(_sass(loops=(_loop(),), thread_index_components=("x",),
                                                     hot_loop_load_sources=(("x", "stride"),)), grid=_ONE_WAVE,
                                               dram_bytes=1 * _MB))),
    ("atomic_counter", _predict(Kernel(flops=0.0, dram_bytes=1 * _MB, atomics=1e7, launch=_launch(
        _sass(global_atomics=1, global_atomics_one_address=1))))),
    # float adds to one counter at a rate a third of the integer adds' (a rate of the test's own)
    ("float_atomics", _predict(Kernel(flops=0.0, dram_bytes=1 * _MB, atomics=1e7, launch=_launch(
        _sass(global_atomics=1, global_atomics_one_address=1, global_atomics_one_address_type="f32"))),
        calibration=roofline.calibration("H200").model_copy(update={
            "atomic_one_address_f32_updates_per_second":
                roofline.calibration("H200").atomic_one_address_updates_per_second / 3}))),
    ("sass_barriers", _predict(Kernel(flops=0.0, dram_bytes=64 * _MB, instructions=264 * 8 * 2000.0, launch=_launch(
        _sass(loops=(_loop(loads=0, counts={"barriers": 1, "shared_loads": 2}),), counts={"barriers": 1}))))),
    # a load loop (10 instructions, 2 loads) beside a store loop of 30 with none: 2000 instructions a
    # warp read as the load loop's alone are 195 trips, where the 40 loads a warp counted are 19.5
    ("counted_load_trips", _predict(_looped(_sass(loops=(_loop(), SassLoop(
        start_offset=100, end_offset=300, depth=1, global_loads_in_flight=0, instructions=SassCounts(total=30))),
        total=60), grid=_ONE_WAVE), measured=roofline.ProfileCounts(global_load_instructions=_ONE_WAVE[0] * 8 * 40.0))),
    ("lone_thread", _predict(_looped(_sass(loops=(_loop(),), lone_thread="global"), grid=_ONE_WAVE))),
    ("early_exit_share", _predict(_looped(_HOT, grid=_ONE_WAVE),
                                  measured=roofline.ProfileCounts(achieved_occupancy=0.05))),
    ("triangle_work", _predict(_looped(_sass(loops=(_loop(index_trips="global", trips_per_index=1.0),)),
                                       grid=_ONE_WAVE))),
    # a hot loop of 20 own instructions (8 FFMA) around an inner loop of 20 (16 FFMA): 50 trips and 150
    # inner ones issue 20 + 50 x 20 + 150 x 20 instructions per warp, where the count alone reads 100 trips
    ("nest_trips", _predict(_looped(_sass(loops=(
        SassLoop(start_offset=0, end_offset=200, depth=1, global_loads_in_flight=2,
                 instructions=SassCounts(total=40, global_loads=2, fp32_fma=24)),
        SassLoop(start_offset=40, end_offset=120, depth=2, global_loads_in_flight=0,
                 instructions=SassCounts(total=20, fp32_fma=16))), total=60, counts={"fp32_fma": 24}),
        instructions=264 * 8 * 4020.0, flops=264 * 256 * (50 * 16 + 150 * 32) * 1.0, l2_bytes=64 * _MB,
        l1_bytes=64 * _MB))),
]

#: Rules whose effect needs a profiled kernel's counts or a measured loop nest that no small
#: synthetic kernel here reproduces: `benchmarks/rule_ablation.py` shows them on the corpus.
ABLATION_ONLY = {"enclosing_passes", "profile_hit_rates", "profile_l1_wavefronts", "profile_partial_stores",
                 "profile_one_address_stores", "profile_clock"}


def test_every_rule_is_exercised_here_or_by_the_ablation():
    assert {rule for rule, _ in CASES} | ABLATION_ONLY == RULES.keys()
    assert not {rule for rule, _ in CASES} & ABLATION_ONLY


@pytest.mark.parametrize("rule, run", CASES, ids=[rule for rule, _ in CASES])
def test_turning_a_rule_off_changes_a_kernel_that_exercises_it(rule, run):
    on_result = run()
    with disabled({rule}):
        off = run()
    assert off != on_result
    # turned back on, the prediction is the model's again
    assert run() == on_result


@pytest.mark.parametrize("rule, run", CASES[:1] + CASES[-4:], ids=[r for r, _ in CASES[:1] + CASES[-4:]])
def test_with_nothing_disabled_the_predictions_are_the_models(rule, run):
    before = run()
    with disabled(()):
        assert run() == before


def test_the_rules_table_of_docs_prediction_is_the_registry():
    """docs/prediction.md's table of rules is the registry, row for row, in its order."""
    from pathlib import Path

    text = (Path(__file__).parents[2] / "docs" / "prediction.md").read_text()
    rows = [line for line in text.splitlines() if line.startswith("| `") and line.count(" | ") == 4
            and line.split(" | ")[2] in ("probe", "derivation", "corpus", "**corpus** !")]
    assert rows == [f"| `{r.name}` | `{r.where}` | {r.kind} | {r.evidence} | {r.off} |" for r in RULES.values()]


def test_the_rules_count_of_docs_prediction_is_the_registrys():
    """The sentence that counts the rules by kind says what the registry holds (it had gone stale)."""
    import re
    from collections import Counter

    text = " ".join((Path(__file__).parents[2] / "docs" / "prediction.md").read_text().split())
    total, probe, derivation = (int(n) for n in re.search(r"(\d+) rules: (\d+) probe, (\d+) derivation", text).groups())
    kinds = Counter(r.kind for r in RULES.values())
    assert (total, probe, derivation) == (len(RULES), kinds["probe"], kinds["derivation"])
