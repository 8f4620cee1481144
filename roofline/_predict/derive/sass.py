"""Warp instructions a launch issues, estimated from its SASS (for the instructions term)."""

from __future__ import annotations

import functools
from collections.abc import Callable

from occupancy import Launch, SassCounts, SassLoop, SassSummary

from ..._errors import RooflineError
from ..._kernel import Kernel, kernel_of
from .setting import launch_warps, outside_loops, sass_of
from ..rules import on

__all__ = ["barriers_from_instructions", "duplicate_warps", "instructions_from_sass", "loads_from_bytes",
           "loads_from_instructions", "loops_left_out", "shared_lines"]


def duplicate_warps(launch: Launch) -> float:
    """Warps of one block per distinct warp: how many run the same addresses together.

    A kernel that never reads a component of ``threadIdx`` (``SassSummary.thread_index_components``)
    gives the threads that differ only in it the same instructions on the same addresses: a
    PolyBench row kernel launched with 32 x 8 threads runs each warp eight times. Warps whose
    lanes see the same components read, in the same order, are one distinct warp.

    Returns
    -------
    float
        ``warps per block / distinct warps``, at least 1; 1 without the SASS's components.

    Examples
    --------
    >>> import occupancy
    >>> from roofline._predict.derive.sass import duplicate_warps
    >>> sass = occupancy.SassSummary(architecture="sm_90", disassembler="listing", global_loads_in_flight_per_thread=1,
    ...                              instructions=occupancy.SassCounts(total=4), thread_index_components=("x",))
    >>> resources = occupancy.KernelResources(kernel="row", architecture="sm_90", registers_per_thread=32, sass=sass)
    >>> duplicate_warps(occupancy.Launch(grid=4, block=(32, 8, 1), registers_per_thread=32, resources=resources))
    8.0
    >>> duplicate_warps(occupancy.Launch(grid=4, block=(256, 1, 1), registers_per_thread=32, resources=resources))
    1.0
    """
    sass = sass_of(launch)
    if sass is None or sass.thread_index_components is None:
        return 1.0
    return _duplicates(tuple(launch.block), frozenset(sass.thread_index_components))


def _components(linear: int, dims: tuple[int, int, int], read: frozenset[str]) -> tuple[int, int, int]:
    """The (x, y, z) index of the ``linear``-th thread of a block (or block of a grid) of
    ``dims``, x fastest, with the components not ``read`` set to 0."""
    dx, dy, _ = dims
    return (linear % dx if "x" in read else 0, linear // dx % dy if "y" in read else 0,
            linear // (dx * dy) if "z" in read else 0)


@functools.lru_cache(maxsize=256)
def _duplicates(block: tuple[int, int, int], read: frozenset[str]) -> float:
    threads = block[0] * block[1] * block[2]
    warps = [tuple(_components(t, block, read) for t in range(w, min(w + 32, threads)))
             for w in range(0, threads, 32)]
    return len(warps) / len(set(warps))


def shared_lines(launch: Launch, resident_blocks: int) -> tuple[float, float]:
    """How many warps of a block, and how many blocks of a wave, load the same line in the same trip.

    A load of the hot loop that the loop strides (``"stride"`` in
    ``SassSummary.hot_loop_load_sources``: a line or more per trip) reaches a new line every
    trip; where no ``threadIdx`` component of some warps reaches its address, those warps
    load the same line in the same trip, and where no ``blockIdx`` component of some
    resident blocks does, so do those blocks. The first to ask misses; the others hit a line still on its
    way and wait as long. A load whose address a loaded value reaches (a gather) shares
    nothing that can be known.

    Parameters
    ----------
    launch : occupancy.Launch
        The launch, its resources carrying the SASS summary.
    resident_blocks : int
        Blocks resident on the GPU at once (a wave); the first ``min(resident, blocks)``
        blocks in launch order share a trip.

    Returns
    -------
    (float, float)
        Warps of a block per distinct line (at least `duplicate_warps`) and resident blocks
        per distinct line, the most over the loop's loads; (`duplicate_warps`, 1) without
        the SASS's sources.

    Examples
    --------
    >>> import occupancy
    >>> from roofline._predict.derive.sass import shared_lines
    >>> sass = occupancy.SassSummary(architecture="sm_90", disassembler="listing", global_loads_in_flight_per_thread=1,
    ...                              instructions=occupancy.SassCounts(total=4), thread_index_components=("x", "y"),
    ...                              hot_loop_load_sources=(("x", "ctaid.x", "loop", "stride"),))
    >>> resources = occupancy.KernelResources(kernel="mm", architecture="sm_90", registers_per_thread=32, sass=sass)
    >>> shared_lines(occupancy.Launch(grid=(16, 64), block=(32, 8, 1), registers_per_thread=32, resources=resources), 1056)
    (8.0, 64.0)
    """
    warps = duplicate_warps(launch)
    sass = sass_of(launch)
    if sass is None or not sass.hot_loop_load_sources:
        return warps, 1.0
    wave = min(max(1, int(resident_blocks)), launch.blocks)
    blocks = 1.0
    for sources in sass.hot_loop_load_sources:
        if "stride" not in sources or "data" in sources:
            continue
        read = frozenset(sources)
        warps = max(warps, _duplicates(tuple(launch.block), read & {"x", "y", "z"}))
        blocks = max(blocks, _blocks_sharing(tuple(launch.grid), wave,
                                             frozenset(c[len("ctaid."):] for c in read if c.startswith("ctaid."))))
    return warps, blocks


@functools.lru_cache(maxsize=256)
def _blocks_sharing(grid: tuple[int, int, int], wave: int, read: frozenset[str]) -> float:
    return wave / len({_components(b, grid, read) for b in range(wave)})


def instructions_from_sass(sass: SassSummary, kernel: Kernel, launch: Launch | None = None) -> float | None:
    """Warp instructions a launch issues, estimated from its SASS and the kernel's loads.

    Straight-line code issues its SASS once per thread. A kernel with loops runs its hot
    loop (``sass.hot_loop``) as often as its global loads are needed: the global loads each
    thread issues (``load_bytes`` over the threads and the loads' width) beyond those
    outside the loops, over the loop's own; the outermost loops with shared-memory accesses
    and no global loads run as often as the shared accesses left over need
    (``shared_bytes``, 4 bytes each; without them, where every such loop holds a barrier, as
    often as the kernel's ``barriers_per_block`` left over need: a tree's levels); those of
    shared atomics alone as often as the kernel's shared atomics left over need
    (``shared_atomics`` + ``shared_cas``, one ``ATOMS`` a lane and pass). Instructions outside
    every loop count once. Every thread is counted as taking the same path (no divergence, no
    early exit); the other
    loops (a remainder loop, a loop around the hot loop) are left out. The outermost loops
    of arithmetic alone (no global or shared access, some FP32/FP64 arithmetic) run as
    often as the kernel's ``flops`` left over need (an FFMA counts 2): loops on the two
    sides of a branch share the flops, which is each warp's count when every warp takes
    one side (`predict` scales it by ``kernel.branch_issue_factor``).

    Parameters
    ----------
    sass : occupancy.SassSummary
        ``KernelResources.sass`` of the kernel.
    kernel : Kernel
        Gives ``load_bytes`` (and ``launch`` when `launch` is None).
    launch : occupancy.Launch, optional
        The launch; default ``kernel.launch``.

    Returns
    -------
    float or None
        Warp instructions of the whole launch; None when a loop's trip count is tied to
        nothing the kernel gives (no ``load_bytes``, ``shared_bytes``, ``barriers_per_block``
        or ``flops`` for its loops, or loops with neither memory accesses nor arithmetic).

    Raises
    ------
    TypeError
        If `sass` is not an `occupancy.SassSummary` or `launch` not an `occupancy.Launch`.
    RooflineError
        If there is no launch.
    """
    kernel, launch = _checked(sass, kernel, launch)
    warps = launch_warps(launch)
    total = float(sass.instructions.total)
    if not sass.loops:
        return total * warps
    outer = [loop for loop in sass.loops if loop.depth == 1]
    instructions = float(outside_loops(sass))

    # the hot loop runs once per group of its global loads
    hot = sass.loops[sass.hot_loop] if sass.hot_loop is not None else None
    trips = 0.0
    if hot is not None and hot.instructions.global_loads:
        loads = loads_from_bytes(sass, kernel, launch)
        if loads is None:
            return None
        outside = sass.instructions.global_loads - sum(loop.instructions.global_loads for loop in outer)
        trips = max(0.0, loads - outside) / hot.instructions.global_loads
        instructions += trips * hot.instructions.total

    def elsewhere(count: Callable[[SassCounts], int]) -> float:
        # what the code outside every loop and the hot loop's trips already do of `count`
        return (count(sass.instructions) - sum(count(loop.instructions) for loop in outer)
                + (trips * count(hot.instructions) if hot is not None and trips else 0.0))

    shared_only, atomic_only, arithmetic = _loops_by_count(sass, kernel)
    # loops over shared memory alone run once per group of their shared accesses
    if shared_only:
        if kernel.shared_bytes:
            count, per_thread = _shared, float(kernel.shared_bytes) / launch.threads / 4.0
        elif kernel.barriers_per_block and all(loop.instructions.barriers for loop in shared_only) and on(
                "barrier_loop_trips"):
            # a tree whose levels sit in a loop (each level a barrier) runs as often as the kernel's
            # barriers left over need, whichever lanes each level's accesses keep
            count, per_thread = _barriers, float(kernel.barriers_per_block)
        else:
            return None
        instructions += _loop_instructions(shared_only, count, per_thread, elsewhere(count))
    if atomic_only:
        lanes = float(kernel.shared_atomics or 0) + float(kernel.shared_cas or 0)
        instructions += _loop_instructions(atomic_only, _atoms, lanes / launch.threads, elsewhere(_atoms))
    # loops of arithmetic alone (no memory access) run as often as the flops left over need
    if arithmetic:
        more = _arithmetic_loops(sass, kernel, launch, outer, arithmetic, trips * _all_flops(hot.instructions)
                                 if hot is not None and trips else 0.0)
        if more is None:
            return None
        instructions += more
    if not trips and not shared_only and not arithmetic and not atomic_only:
        return None  # loops whose trip count is tied to no access
    return instructions * warps


def _loops_by_count(sass: SassSummary, kernel: Kernel) -> tuple[list[SassLoop], list[SassLoop], list[SassLoop]]:
    """The outermost loops `instructions_from_sass` runs by a count of the kernel's, beside the hot
    loop: of shared-memory accesses alone, of shared atomics alone, of arithmetic alone."""
    outer = [loop for loop in sass.loops if loop.depth == 1]
    shared_only = [loop for loop in outer if not loop.instructions.global_loads and _shared(loop.instructions)]
    atomic_only = _shared_atomic_loops(sass, kernel, outer)
    arithmetic = [loop for loop in outer if not loop.instructions.global_loads and not _shared(loop.instructions)
                  and _all_flops(loop.instructions) and loop not in atomic_only]
    return shared_only, atomic_only, arithmetic


def loops_left_out(sass: SassSummary, kernel: Kernel) -> tuple[SassLoop, ...]:
    """The loops of work (shared-memory accesses or arithmetic, no global load) whose own trips
    `instructions_from_sass` does not count: neither the hot loop nor an outermost loop it runs by
    a count of the kernel's. A loop inside another runs once per trip of the one around it, and its
    own trips, which no count gives, are left out (an attention kernel's dot-product loops inside
    its load loop); the prediction says so."""
    counted = [sass.loops[sass.hot_loop]] if sass.hot_loop is not None else []
    for group in _loops_by_count(sass, kernel):
        counted += group
    return tuple(loop for loop in sass.loops if all(loop is not c for c in counted)
                 and not loop.instructions.global_loads
                 and (_shared(loop.instructions) or _all_flops(loop.instructions)))


def _checked(sass: SassSummary, kernel: Kernel, launch: Launch | None) -> tuple[Kernel, Launch]:
    """`instructions_from_sass`'s arguments checked: the kernel, and the launch (default its own)."""
    if not isinstance(sass, SassSummary):
        raise TypeError(f"sass must be an occupancy.SassSummary, not {type(sass).__name__}")
    kernel = kernel_of(kernel)
    launch = kernel.launch if launch is None else launch
    if launch is None:
        raise RooflineError(f"instructions_from_sass needs a launch: kernel {kernel.name!r} has none")
    if not isinstance(launch, Launch):
        raise TypeError(f"launch must be an occupancy.Launch, not {type(launch).__name__}")
    return kernel, launch


def loads_from_bytes(sass: SassSummary, kernel: Kernel, launch: Launch) -> float | None:
    """Global loads each thread issues: ``load_bytes`` over the threads and the loads' width.

    Without ``load_bytes``, the launch's ``elements_per_thread`` where it gives more than one
    (rule ``elements_as_loads``): the rounds a thread waits count one load an element
    (``ceil(elements / loads in flight)``), so the hot loop runs as often as those loads need,
    as it does for the same loads given as bytes. None without either.
    """
    if kernel.count("load_bytes") is not None:
        return float(kernel.count("load_bytes")) / launch.threads / float(sass.global_load_bytes or 4)
    if launch.elements_per_thread > 1 and on("elements_as_loads"):
        return float(launch.elements_per_thread)
    return None


def _barriers(counts: SassCounts) -> int:
    """Barriers (``BAR``) of one pass over `counts`."""
    return counts.barriers


def _shared(counts: SassCounts) -> int:
    """Shared-memory accesses of one pass over `counts`."""
    return counts.shared_loads + counts.shared_stores


def _atoms(counts: SassCounts) -> int:
    """Shared-memory atomics (``ATOMS``) of one pass over `counts`."""
    return counts.shared_atomics


def _shared_atomic_loops(sass: SassSummary, kernel: Kernel, outer: list[SassLoop]) -> list[SassLoop]:
    """The outermost loops of shared atomics alone (no global load, no shared load or store) where
    the kernel counts its shared atomics (``shared_atomics`` lanes, ``shared_cas`` successes): they
    run as often as those need (one ``ATOMS`` a lane and pass); none without the counts."""
    if not (kernel.shared_atomics or kernel.shared_cas) or not on("shared_atomic_loops"):
        return []
    return [loop for loop in outer if _atoms(loop.instructions) and not loop.instructions.global_loads
            and not _shared(loop.instructions)]


def _all_flops(counts: SassCounts) -> int:
    """FP32 and FP64 flops of one pass over `counts` (an FFMA or a DFMA counts 2)."""
    return 2 * counts.fp32_fma + counts.fp32_add + counts.fp32_mul + 2 * counts.fp64


def _arithmetic_loops(sass: SassSummary, kernel: Kernel, launch: Launch, outer: list[SassLoop],
                      arithmetic: list[SassLoop], hot_flops: float) -> float | None:
    """Warp instructions per warp of the outermost loops of arithmetic alone: they run as often as
    the kernel's flops left over (beyond the code outside them and the hot loop's `hot_flops`)
    need. None where the flops say nothing about them (another precision's, or tensor code)."""
    # FFMA, FADD, FMUL and DFMA count the flops: a kernel whose flops are another
    # precision's (tensor, half) says nothing about these loops' trips
    scalar = kernel.flops_by_precision is None and (kernel.precision or "fp32") in ("fp32", "fp64")
    if not kernel.flops or not scalar or any(loop.instructions.tensor for loop in arithmetic):
        return None
    elsewhere = (_all_flops(sass.instructions) - sum(_all_flops(loop.instructions) for loop in outer) + hot_flops)
    return _loop_instructions(arithmetic, _all_flops, float(kernel.flops) / launch.threads, elsewhere)


def _loop_instructions(loops: list[SassLoop], count: Callable[[SassCounts], int], per_thread: float,
                       elsewhere: float) -> float:
    """Instructions of `loops` that run as often as the `count` per thread left over beyond
    `elsewhere` needs (one trip of all of them does ``sum(count(loop))``)."""
    trips = max(0.0, per_thread - elsewhere) / sum(count(loop.instructions) for loop in loops)
    return trips * sum(loop.instructions.total for loop in loops)


def loads_from_instructions(sass: SassSummary, warp_instructions: float, launch: Launch, *,
                            flops_per_thread: float | None = None) -> tuple[float, float] | None:
    """Global loads per thread and hot-loop trips per warp, read from a launch's instruction count.

    The inverse of `instructions_from_sass`: where a profile counts the warp instructions a
    launch issued (Nsight's ``smsp__inst_executed.sum``) but not its global loads, each warp
    issued ``warp_instructions / warps``; the SASS outside the hot loop (``sass.hot_loop``)
    runs once, the hot loop as often as the rest needs. Its trips times its global loads,
    plus the loads outside it, are the loads a thread makes; the trips are how many times a
    thread waits for its loads (``global_loads_in_flight`` of the loop at a time).

    Parameters
    ----------
    sass : occupancy.SassSummary
        The SASS of the kernel that ran.
    warp_instructions : float
        Warp instructions the whole launch issued.
    launch : occupancy.Launch
        The launch (its blocks and threads per block).
    flops_per_thread : float, optional
        FP32 flops each thread did (an FFMA counts 2; Nsight's counts or your own). Where
        the hot loop holds loops of its own (a tiled GEMM's inner product), the instruction
        count alone cannot tell the hot loop's trips from the inner loops' repeats: with the
        flops the two are solved for together (`_nest_trips`).

    Returns
    -------
    tuple of float or None
        (global loads per thread, hot-loop trips per warp); None when the SASS has no hot
        loop with global loads (straight-line code: its own count is exact).

    Raises
    ------
    TypeError
        If an argument is not of its type.

    Examples
    --------
    >>> from occupancy import Launch, SassCounts, SassLoop, SassSummary
    >>> body = SassCounts(total=10, global_loads=2)
    >>> sass = SassSummary(architecture="sm_90", disassembler="x", instructions=SassCounts(total=30, global_loads=3),
    ...                    loops=(SassLoop(start_offset=0, end_offset=80, depth=1, instructions=body,
    ...                                    global_loads_in_flight=2),), hot_loop=0, global_loads_in_flight_per_thread=2)
    >>> loads_from_instructions(sass, 32 * 120.0, Launch(grid=1, block=1024))
    (21.0, 10.0)
    """
    if not isinstance(sass, SassSummary):
        raise TypeError(f"sass must be an occupancy.SassSummary, not {type(sass).__name__}")
    if not isinstance(launch, Launch):
        raise TypeError(f"launch must be an occupancy.Launch, not {type(launch).__name__}")
    if sass.hot_loop is None or not sass.loops[sass.hot_loop].instructions.global_loads:
        return None
    hot = sass.loops[sass.hot_loop].instructions
    warps = launch_warps(launch)
    per_warp = float(warp_instructions) / warps
    trips = max(0.0, per_warp - (sass.instructions.total - hot.total)) / hot.total
    nest = _nest_trips(sass, per_warp, flops_per_thread)
    if nest is not None:
        trips = nest
    loads = sass.instructions.global_loads - hot.global_loads + trips * hot.global_loads
    return loads, trips


def barriers_from_instructions(sass: SassSummary, warp_instructions: float | None, launch: Launch) -> float:
    """Barriers (``BAR``) each thread passes between its loads, from the SASS and the instruction count.

    A barrier outside every loop is passed once. A loop that holds barriers and no global
    loads or asynchronous copies (a tree reduction or scan whose block size is a runtime
    value keeps its levels in a loop) runs ``(instructions per warp - those outside the loops) / (the loops'
    instructions)`` times. The barriers of a loop that holds global loads or asynchronous
    copies (a tiled GEMM's two per tile) are not counted: each waits for the slowest warp's loads of
    the trip, which the hot loop's waits (the trips term) already count; where such a loop
    exists, the other barrier loops are counted once, as without an instruction count.

    Parameters
    ----------
    sass : occupancy.SassSummary
    warp_instructions : float or None
        Warp instructions the whole launch issued (Nsight's ``smsp__inst_executed.sum``).
    launch : occupancy.Launch

    Returns
    -------
    float
        Barriers per thread (each one the whole block passes).

    Examples
    --------
    >>> from occupancy import Launch, SassCounts, SassLoop, SassSummary
    >>> tree = SassLoop(start_offset=0, end_offset=144, depth=1, global_loads_in_flight=0,
    ...                 instructions=SassCounts(total=10, barriers=1, shared_loads=2, shared_stores=1))
    >>> sass = SassSummary(architecture="sm_90", disassembler="x", loops=(tree,), hot_loop=0,
    ...                    instructions=SassCounts(total=42, barriers=2, global_loads=1),
    ...                    global_loads_in_flight_per_thread=1)
    >>> barriers_from_instructions(sass, 4 * (32 + 7 * 10), Launch(grid=1, block=128))
    8.0
    """
    outer = [loop for loop in sass.loops if loop.depth == 1]
    barriers = float(sass.instructions.barriers - sum(loop.instructions.barriers for loop in outer))
    def loads(loop: SassLoop) -> int:
        return loop.instructions.global_loads + loop.instructions.async_copies

    holding = [loop for loop in outer if loop.instructions.barriers and not loads(loop)]
    if not holding:
        return barriers
    streaming = any(loads(loop) for loop in outer)
    if not warp_instructions or streaming:
        return barriers + sum(loop.instructions.barriers for loop in holding)
    per_warp = float(warp_instructions) / launch_warps(launch)
    outside = outside_loops(sass)
    trips = max(1.0, (per_warp - outside) / sum(loop.instructions.total for loop in outer))
    return barriers + trips * sum(loop.instructions.barriers for loop in holding)


def _flops(counts: SassCounts) -> int:
    """FP32 flops of one pass over `counts` (an FFMA counts 2)."""
    return 2 * counts.fp32_fma + counts.fp32_add + counts.fp32_mul


def _inner_loops(sass: SassSummary, index: int) -> list[SassLoop]:
    """The outermost loops nested inside loop `index` of `sass` (by their offsets)."""
    outer = sass.loops[index]
    inside = [loop for i, loop in enumerate(sass.loops) if i != index
              and outer.start_offset <= loop.start_offset and loop.end_offset <= outer.end_offset
              and loop.depth > outer.depth]
    return [loop for loop in inside if not any(
        other is not loop and other.start_offset <= loop.start_offset and loop.end_offset <= other.end_offset
        and other.depth < loop.depth for other in inside)]


def _nest_trips(sass: SassSummary, per_warp: float, flops_per_thread: float | None) -> float | None:
    """Trips of a hot loop that holds loops of its own, from two counts of the launch.

    A warp issues ``outside + T x a + U x b`` instructions and a thread does ``F_outside +
    T x f_a + U x f_b`` FP32 flops, where ``T`` is the hot loop's trips, ``U`` its inner
    loops' trips in all (sharing one count), ``a``/``f_a`` the hot loop's own body and
    ``b``/``f_b`` the inner loops': two equations for the two unknowns. None without inner
    loops, without the flops, or where the two bodies' flop densities do not tell them apart.
    """
    if flops_per_thread is None or sass.hot_loop is None or not on("nest_trips"):
        return None
    inner = _inner_loops(sass, sass.hot_loop)
    if not inner:
        return None
    hot = sass.loops[sass.hot_loop].instructions
    b = float(sum(loop.instructions.total for loop in inner))
    fb = float(sum(_flops(loop.instructions) for loop in inner))
    a = hot.total - b
    fa = _flops(hot) - fb
    left_instructions = per_warp - (sass.instructions.total - hot.total)
    left_flops = flops_per_thread - (_flops(sass.instructions) - _flops(hot))
    det = a * fb - b * fa
    if left_instructions <= 0 or left_flops <= 0 or abs(det) < 1e-9 * max(1.0, a * fb, b * fa):
        return None
    trips = (left_instructions * fb - b * left_flops) / det
    inner_trips = (a * left_flops - fa * left_instructions) / det
    if trips <= 0 or inner_trips < 0:
        return None
    return trips
