"""Probes of the time model's corpus-argued rules: a micro-kernel of ours per rule, timed once,
predicted with every rule on and with that rule off.

Nine rules of `roofline._predict.rules` rest on corpus kernels alone (kind ``corpus``). Each
has here two launches of `validate/kernels/rule_probes.cu`, one where the effect the rule
claims is present and one where it is absent. Each launch is timed by `validate.measure`
(L2 flushed, a short budget), and predicted offline from the same counts (the launch's
`roofline.memory.traffic` with the SASS read from the same source) twice: every rule on, and
the probe's rule off (`rules.disabled`). The rule earns a ``probe`` justification where it
brings the present launch's prediction closer to its time and leaves the absent one's alone;
otherwise it goes.

Run on a GPU: ``python3 -m validate.probes._rule_probes --out rule_probes.json`` (JSON lines,
one per launch, and a table of the errors on stderr); the exit code is the number of launches
that failed.
"""

from __future__ import annotations

import json
import math
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import occupancy
import roofline
from roofline import Kernel, ProfileCounts
from roofline.terms import disabled
from roofline.memory import Access

from ..device import Session, kernel_source, open_session
from ..user_kernel import MeasureOptions, measure

__all__ = ["RULE_PROBES", "RuleProbe", "main", "predictions", "probe_counts", "probe_resources"]

SOURCE = "rule_probes.cu"
ARCH = "sm_90"


@dataclass(frozen=True)
class RuleProbe:
    """One launch of a probe kernel: the rule it tests, whether the effect is present, and its counts.

    ``runs`` gives, from the kernel's SASS, how often each loop's body runs per warp (by the
    loop's index in ``SassSummary.loops``): the warp instructions are the SASS's counted that
    way, where the rule reads them. ``loads_per_warp`` is the global load instructions each
    warp issues, for the rules that read a profile's count of them. ``args`` are
    `validate.parse_kernel_args` specs.
    """

    rule: str
    variant: str
    present: bool
    kernel: str
    grid: tuple[int, ...]
    block: tuple[int, ...]
    args: tuple[str, ...]
    accesses: Callable[[], list[Access]]
    flops: float = 0.0
    dynamic_shared_memory: int = 0
    runs: dict[int, float] | None = None
    loads_per_warp: float | None = None
    #: the counts without the traffic's share of warps that run the loops (a user's hand count)
    no_loop_share: bool = False
    #: count the traffic block by block (a guard that follows the loop's iteration)
    exhaustive: bool = False
    #: the barriers a thread passes, as a description gives them (no instruction count)
    barriers_per_block: float | None = None


def _load(array: str, index: Callable, guard: Callable | None = None, loop: int = 1) -> Access:
    return Access(array=array, index=index, guard=guard, loop=loop)


def _store(array: str, index: Callable, guard: Callable | None = None, loop: int = 1) -> Access:
    return Access(array=array, index=index, guard=guard, kind="store", loop=loop)


def _rows(free: bool) -> RuleProbe:
    rows, cols = 65536, 256
    return RuleProbe("warp_customers", "no_barrier" if free else "barrier_per_trip", free,
                     "rows_free" if free else "rows_synced", (rows // 256,), (256,),
                     (f"f32[{rows * cols}]=ones", f"f32[{rows}]", f"i32={cols}"),
                     lambda: [_load("a", lambda c: c.x * cols + c.loop, loop=cols), _store("y", lambda c: c.x)])


def _triangle(by_index: bool) -> RuleProbe:
    n = 31 * 64  # a triangle small enough to count its traffic block by block
    trips = n if by_index else n // 2
    guard = (lambda c: c.x + c.loop < n) if by_index else None
    return RuleProbe("triangle_work", "trips_by_index" if by_index else "trips_even", by_index,
                     "trips_by_index" if by_index else "trips_even", (n // 64,), (64,),
                     (f"f32[{2 * n}]=ones", f"f32[{n}]", f"i32={trips}"),
                     lambda: [_load("a", lambda c: c.x + c.loop, guard, loop=trips), _store("y", lambda c: c.x)],
                     exhaustive=by_index)


def _tree(barriers: bool) -> RuleProbe:
    blocks, threads = 16384, 1024
    n = blocks * threads
    loads = [_load("a", lambda c: c.x)]
    if barriers:
        stores = [_store("y", lambda c: c.block_x, lambda c: c.thread_x == 0)]
        runs = {0: 10.0}  # log2(1024) levels
    else:
        stores = [_store("y", lambda c: c.x // 32, lambda c: c.thread_x % 32 == 0)]
        runs = {0: 5.0}  # log2(32) shuffle steps
    outputs = blocks if barriers else n // 32
    return RuleProbe("sass_barriers", "tree_of_barriers" if barriers else "shuffles", barriers,
                     "tree_barriers" if barriers else "tree_shuffles", (blocks,), (threads,),
                     (f"f32[{n}]=ones", f"f32[{outputs}]"), lambda: loads + stores,
                     dynamic_shared_memory=4 * threads if barriers else 0, runs=runs)


def _tree_levels(modulo: bool) -> RuleProbe:
    """A tree whose levels are a loop, counted from its barriers (no instruction count): the
    interleaved form issues most (present), the halving form moves its bytes (absent)."""
    blocks, threads = 16384, 256
    n = blocks * threads
    accesses = [_load("a", lambda c: c.x), _store("y", lambda c: c.block_x, lambda c: c.thread_x == 0)]
    return RuleProbe("barrier_loop_trips", "interleaved_tree" if modulo else "halving_tree", modulo,
                     "tree_modulo" if modulo else "tree_barriers", (blocks,), (threads,),
                     (f"f32[{n}]=ones", f"f32[{blocks}]"), lambda: accesses, dynamic_shared_memory=4 * threads,
                     barriers_per_block=1.0 + math.log2(threads))


def _passes(short: bool) -> RuleProbe:
    blocks, threads, words = 1056, 256, 64 * 256
    passes, length = (64, 256) if short else (1, words)
    trips = length // threads

    def accesses() -> list[Access]:
        # a block's `passes` vectors lie one after the other: element (block, pass, j) at block * words + ...
        loads = _load("a", lambda c: c.block_x * words + (c.loop // trips) * length + (c.loop % trips) * threads
                      + c.thread_x, loop=passes * trips)
        return [loads, _store("y", lambda c: c.block_x * passes + c.loop, lambda c: c.thread_x == 0, loop=passes)]

    return RuleProbe("enclosing_passes", "short_vectors" if short else "one_long_vector", short, "vector_passes",
                     (blocks,), (threads,), (f"f32[{blocks * words}]=ones", f"f32[{blocks * passes}]",
                                             f"i32={passes}", f"i32={length}"), accesses,
                     runs={0: float(passes), 1: float(passes * trips), 2: 8.0 * passes},
                     loads_per_warp=float(passes * trips))


def _lone(lone: bool) -> RuleProbe:
    trips, blocks = 256, 132
    guard = (lambda c: c.x == 0) if lone else (lambda c: c.thread_x % 32 == 0)
    out = 1 if lone else blocks * 8
    return RuleProbe("lone_thread", "thread_0_of_grid" if lone else "lane_0_of_every_warp", lone,
                     "loop_lone" if lone else "loop_every_warp", (blocks,), (256,),
                     (f"f32[{32 * trips}]=ones", f"f32[{out}]", f"i32={trips}"),
                     lambda: [_load("a", lambda c: c.loop * 32, guard, loop=trips),
                              _store("y", (lambda c: c.x * 0) if lone else (lambda c: c.x // 32), guard)],
                     no_loop_share=True)


def _early_exit(exits: bool) -> RuleProbe:
    trips, blocks, stay = 256, 132, 32
    threads = blocks * stay
    block = 256 if exits else stay
    guard = lambda c: c.thread_x < stay  # noqa: E731
    return RuleProbe("early_exit_share", "7_of_8_warps_leave" if exits else "no_warp_leaves", exits, "early_exit",
                     (blocks,), (block,), (f"f32[{trips * threads}]=ones", f"f32[{threads}]", f"i32={trips}",
                                           f"i32={stay}"),
                     lambda: [_load("a", lambda c: c.loop * threads + c.block_x * stay + c.thread_x, guard, loop=trips),
                              _store("y", lambda c: c.block_x * stay + c.thread_x, guard)])


def _nest(inner_loop: bool) -> RuleProbe:
    blocks, threads, trips, inner = 528, 256, 64, 16
    n = blocks * threads
    args = (f"f32[{trips * n}]=ones", f"f32[{n}]", f"i32={trips}") + ((f"i32={inner}",) if inner_loop else ())
    return RuleProbe("nest_trips", "inner_loop" if inner_loop else "unrolled", inner_loop,
                     "nest_inner_loop" if inner_loop else "nest_unrolled", (blocks,), (threads,), args,
                     lambda: [_load("a", lambda c: c.loop * n + c.x, loop=trips), _store("y", lambda c: c.x)],
                     flops=2.0 * inner * trips * n,
                     runs={0: float(trips), 1: float(trips * inner)} if inner_loop else {0: float(trips)})


def _warps(same: bool) -> RuleProbe:
    blocks, trips = 528, 128
    n = blocks * 32 if same else blocks * 256
    if same:
        index = lambda c: c.block_x * 32 + c.thread_x  # noqa: E731
    else:
        index = lambda c: (c.block_x * 8 + c.thread_y) * 32 + c.thread_x  # noqa: E731
    return RuleProbe("duplicate_warps", "warps_read_one_line" if same else "warps_read_own_lines", same,
                     "warps_same_line" if same else "warps_own_lines", (blocks,), (32, 8),
                     (f"f32[{trips * n}]=ones", f"f32[{n}]", f"i32={trips}", f"i32={n}"),
                     lambda: [_load("a", lambda c: c.loop * n + index(c), loop=trips), _store("y", index)])


def _blocks(same: bool) -> RuleProbe:
    gx, gy, threads, trips = 33, 32, 128, 256
    n = gx * threads if same else gx * gy * threads
    if same:
        index = lambda c: c.block_x * threads + c.thread_x  # noqa: E731
        out = lambda c: c.block_y * n + c.block_x * threads + c.thread_x  # noqa: E731
    else:
        index = out = lambda c: (c.block_y * gx + c.block_x) * threads + c.thread_x  # noqa: E731
    return RuleProbe("blocks_sharing_a_line", "column_reads_one_line" if same else "blocks_read_own_lines", same,
                     "blocks_same_line" if same else "blocks_own_lines", (gx, gy), (threads,),
                     (f"f32[{trips * n}]=ones", f"f32[{gy * gx * threads}]", f"i32={trips}", f"i32={n}"),
                     lambda: [_load("a", lambda c: c.loop * n + index(c), loop=trips), _store("y", out)])


def _resident(blocks: int, threads: int, cols: int) -> RuleProbe:
    """A thread per row of two arrays (GESUMMV's walk): two iterations of a block are 64 bytes a
    thread (a sector of each array); the occupancy's blocks of them overflow L1, the grid's fewer
    do not. The effect is present where the grid puts fewer blocks on an SM than the occupancy
    allows (32 blocks of 64 threads, 4 of 512); the full grid is the control."""
    rows = blocks * threads
    sms, threads_per_sm = 132, 2048  # the H100 SXM's and H200's SMs; sm_90's threads an SM

    def accesses() -> list[Access]:
        return [_load(a, lambda c: c.x * cols + c.loop, loop=cols) for a in ("a", "b")] + [_store("y", lambda c: c.x)]

    full = rows >= sms * threads_per_sm
    return RuleProbe("l1_resident_blocks", f"{-(-blocks // sms)}_of_{threads}_threads_a_sm", not full, "rows_pair",
                     (blocks,), (threads,), (f"f32[{rows * cols}]=ones", f"f32[{rows * cols}]=ones", f"f32[{rows}]",
                                             f"i32={cols}"), accesses)


def _beside(passes: int) -> RuleProbe:
    """A load loop of 8 one-load trips into a tile, then a store loop of `passes` trips with no
    global load (`load_then_store`): the profile's instructions hold both loops' trips, its
    loads only the load loop's. One pass is the control: its instructions agree with the loads."""
    blocks, threads, trips = 132, 256, 8
    n = blocks * trips * threads

    def accesses() -> list[Access]:
        return [_load("a", lambda c: c.block_x * trips * threads + c.loop * threads + c.thread_x, loop=trips),
                _store("y", lambda c: c.block_x * trips * threads + (c.loop % trips) * threads + c.thread_x,
                       loop=passes)]

    return RuleProbe("counted_load_trips", f"store_loop_of_{passes}_trip{'s' if passes > 1 else ''}", passes > 1, "load_then_store",
                     (blocks,), (threads,), (f"f32[{n}]=ones", f"f32[{n}]", f"i32={trips}", f"i32={passes}"),
                     accesses, runs={0: float(trips), 1: float(passes)}, loads_per_warp=float(trips))


#: Every probe launch: two per corpus-argued rule, the effect present first; then the probes of
#: derivations (a present launch or more, and a control).
RULE_PROBES: tuple[RuleProbe, ...] = tuple(
    probe for make in (_rows, _triangle, _tree, _tree_levels, _passes, _lone, _early_exit, _nest, _warps, _blocks)
    for probe in (make(True), make(False))) + (
    _resident(132, 64, 2048), _resident(1056, 64, 256), _resident(132, 512, 256), _resident(4224, 64, 64),
    _beside(8), _beside(32), _beside(1))


def probe_resources(probe: RuleProbe, arch: str = ARCH) -> occupancy.KernelResources:
    """The probe kernel's registers and SASS, compiled from `SOURCE` (NVRTC) and read with nvdisasm."""
    return occupancy.kernel_resources(kernel_source(SOURCE), arch=arch, kernel=probe.kernel)


def _issued_per_warp(sass: occupancy.SassSummary, runs: dict[int, float]) -> float:
    """Warp instructions one warp issues: the SASS outside every loop once, each loop's own body
    (without the loops inside it) as often as `runs` says."""
    loops = sass.loops

    def inside(outer: occupancy.SassLoop, loop: occupancy.SassLoop) -> bool:
        return loop is not outer and outer.start_offset <= loop.start_offset and loop.end_offset <= outer.end_offset

    issued = float(sass.instructions.total - sum(loop.instructions.total for loop in loops if loop.depth == 1))
    for i, loop in enumerate(loops):
        children = [c for c in loops if inside(loop, c) and c.depth == loop.depth + 1]
        issued += runs.get(i, 0.0) * (loop.instructions.total - sum(c.instructions.total for c in children))
    return issued


def probe_counts(probe: RuleProbe, resources: occupancy.KernelResources) -> tuple[Kernel, ProfileCounts | None]:
    """The probe launch's counts: its traffic (`roofline.memory.traffic`), flops and launch with the
    compiled resources; the warp instructions where `RuleProbe.runs` gives them; and the global load
    instructions, as a profile would count them, where `RuleProbe.loads_per_warp` does."""
    traffic = roofline.memory.traffic(probe.grid, probe.block, probe.accesses(), exhaustive=probe.exhaustive)
    if probe.no_loop_share:
        traffic = traffic.model_copy(update={"loop_warp_share": None})
    launch = occupancy.Launch(grid=probe.grid, block=probe.block, registers_per_thread=resources.registers_per_thread,
                              static_shared_memory=resources.static_shared_memory,
                              dynamic_shared_memory=probe.dynamic_shared_memory, resources=resources)
    warps = launch.blocks * -(-launch.threads_per_block // 32)
    fields: dict[str, object] = {"name": probe.kernel, "flops": probe.flops, "launch": launch}
    if probe.flops:
        fields["precision"] = "fp32"
    if probe.runs is not None and resources.sass is not None:
        fields["instructions"] = warps * _issued_per_warp(resources.sass, probe.runs)
    if probe.barriers_per_block is not None:
        fields["barriers_per_block"] = probe.barriers_per_block
    measured = None if probe.loads_per_warp is None else ProfileCounts(
        global_load_instructions=warps * probe.loads_per_warp)
    return traffic.kernel(**fields), measured


def predictions(probe: RuleProbe, gpu: str | roofline.GPU, resources: occupancy.KernelResources) -> tuple[float, float]:
    """(every rule on, the probe's rule off): `roofline.predict`'s seconds for the launch after
    validate's L2 flush."""
    kernel, measured = probe_counts(probe, resources)

    def predict() -> float:
        return roofline.predict(gpu, kernel, after_l2_flush=True, measured=measured).seconds

    on = predict()
    with disabled({probe.rule}):
        off = predict()
    return on, off


def _measure_one(probe: RuleProbe, gpu: str, session: Session, budget_seconds: float) -> dict[str, object]:
    resources = probe_resources(probe)
    kernel, _ = probe_counts(probe, resources)
    launch = occupancy.Launch(grid=probe.grid, block=probe.block, dynamic_shared_memory=probe.dynamic_shared_memory)
    options = MeasureOptions(gpu=gpu, l2="flush", budget_seconds=budget_seconds, seed=0)
    m = measure(kernel_source(SOURCE), probe.kernel, launch=launch, args=list(probe.args), options=options,
                         counts=kernel, session=session)
    on, off = predictions(probe, gpu, resources)
    return {"rule": probe.rule, "variant": probe.variant, "present": probe.present, "kernel": probe.kernel,
            "measured_seconds": m.seconds, "predicted_on": on, "predicted_off": off,
            "error_on": on / m.seconds - 1.0, "error_off": off / m.seconds - 1.0, "device": m.device,
            "sm_clock_hz": None if m.clocks is None else m.clocks.sm_clock_hz}


def _table(rows: Sequence[dict[str, object]]) -> str:
    lines = [f"{'rule':22s} {'variant':24s} {'effect':7s} {'measured us':>11s} {'on us':>9s} {'off us':>9s} "
             f"{'err on':>7s} {'err off':>7s}"]
    for r in rows:
        if "error" in r:
            lines.append(f"{r['rule']:22s} {r['variant']:24s} FAILED: {r['error']}")
            continue
        lines.append(f"{r['rule']:22s} {r['variant']:24s} {'present' if r['present'] else 'absent':7s} "
                     f"{r['measured_seconds'] * 1e6:11.1f} {r['predicted_on'] * 1e6:9.1f} {r['predicted_off'] * 1e6:9.1f} "
                     f"{r['error_on']:+7.1%} {r['error_off']:+7.1%}")
    return "\n".join(lines)


def main(*, out: str | Path, gpu: str = "H100 SXM", rules: Sequence[str] = (), budget_seconds: float = 0.3) -> int:
    """Measure every probe launch on the GPU, writing one JSON line per launch to ``out``.

    Parameters
    ----------
    out : str or Path
        The JSON-lines file.
    gpu : str
        The database GPU of the predictions.
    rules : sequence of str
        Only these rules' probes; all when empty.
    budget_seconds : float
        Timing budget of each launch, seconds.

    Returns
    -------
    int
        The number of launches that failed.
    """
    session = open_session()
    rows: list[dict[str, object]] = []
    probes = [p for p in RULE_PROBES if not rules or p.rule in rules]
    start = time.perf_counter()
    with open(out, "w", encoding="utf-8") as lines:
        for i, probe in enumerate(probes, 1):
            try:
                row = _measure_one(probe, gpu, session, budget_seconds)
            except Exception as exc:  # one failing launch is reported and the others go on
                traceback.print_exc(file=sys.stderr)
                row = {"rule": probe.rule, "variant": probe.variant, "error": f"{type(exc).__name__}: {exc}"}
            rows.append(row)
            lines.write(json.dumps(row) + "\n")
            lines.flush()
            print(f"[{i}/{len(probes)} {time.perf_counter() - start:5.1f} s] {probe.rule} {probe.variant}: "
                  + (row["error"] if "error" in row else f"{row['measured_seconds'] * 1e6:.1f} us"),
                  file=sys.stderr, flush=True)
    print(_table(rows), file=sys.stderr)
    return sum("error" in r for r in rows)

