"""The variants of the cause probes (`validate/kernels/cause_probes.cu`): each launch, its data and
reference, and the description of its own source that its counts are built from.

Each cause of the time model's errors on unseen code has one kernel (two for the 2-byte column
sums, the shared atomics and the stored accumulator) and two to four variants that span the effect: sizes, block sizes,
contention. A variant's description is what a reader of the kernel's source gives the model, as
`corpus/traffic/` describes the corpus's kernels: the global accesses (`roofline.memory.Access`,
counted exactly by `roofline.memory.traffic`) and, beside them, the shared-memory wavefronts, the
barriers each thread passes and the global atomics with the addresses they update. Where the
count depends on how the hardware resolves contention (a compare-and-swap loop's retries), the
description counts the least the source implies: the rounds that the lanes of one warp sharing a
word need, none for contention between warps; a global loop's description gives its contenders
per address instead (``cas_contenders``), from which the model's atomics term derives the retries.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np
from roofline.memory import Access, Coords

__all__ = ["CAUSES", "CAUSE_VARIANTS", "CauseVariant"]

#: Elements of the streamed inputs (128 MiB of floats): launches of tens to hundreds of microseconds.
_ELEMENTS = 1 << 25
#: SMs of the H100 SXM and the H200: the single-wave probe launches one block on each.
_SMS = 132

#: The causes, with what each probe isolates.
CAUSES: dict[str, str] = {
    "thread_per_row": "a thread walks its own row: a warp load touches 32 lines, L1 serves the rest",
    "column_u16": "a column reduction of 2-byte loads: 64 bytes a warp load",
    "grid_stride": "a grid-stride loop with one load in flight per thread",
    "shared_atomics": "shared-memory CAS retry loops and plain shared atomics, contended or spread",
    "global_cas": "global compare-and-swap retry loops, contended by many or few threads a counter",
    "barrier_phases": "one wave whose load, tree-reduce and write phases are split by barriers",
    "row_twice": "a block a row, read twice (max, then exp-sum): rows whose concurrent set outgrows L2",
    "warp_per_row": "a warp a row with a shuffle reduction, at blocks of 32 and 64 threads",
    "stored_accumulator": "a sum kept in global memory, stored every trip (PolyBench's `tmp[i] +=`), "
                          "against the same walk summed in a register",
    "loops_reread": "three loops in turn over a block's row (a layer norm's passes), the second and third "
                    "re-reading what the first brought in, against three loops over three rows",
}

Arguments = tuple[list[object], dict[int, np.ndarray]]


@dataclass(frozen=True)
class CauseVariant:
    """One launch of a cause probe, with the description of its source.

    Attributes
    ----------
    cause : str
        A key of `CAUSES`.
    variant : str
        What this launch sets (``"cols=16"``, ``"bins=1"``, ...).
    kernel : str
        The kernel's name in ``cause_probes.cu``.
    grid, block : int
        Blocks and threads per block.
    arguments : callable
        ``arguments(rng) -> (args, expected)``: the argument list of `validate.measure` and the
        reference outputs by argument index.
    accesses : tuple of Access
        The kernel's global accesses in this launch.
    counts : mapping
        The counts read off the source beside them: ``shared_wavefronts`` (the launch's), and
        `roofline.Kernel` fields (``barriers_per_block``, ``load_phases_per_block``, ``atomics``,
        ``atomic_addresses``, ``cas_contenders``, ``shared_atomics``, ``shared_atomic_words``, ``shared_cas``,
        ``shared_cas_contenders``).
    flops : float
        The kernel's floating-point additions (and exponentials), total.
    tolerance : float
        Largest ``||out - ref|| / ||ref||`` of the output check.
    """

    cause: str
    variant: str
    kernel: str
    grid: int
    block: int
    arguments: Callable[[np.random.Generator], Arguments]
    accesses: tuple[Access, ...]
    counts: Mapping[str, float] = field(default_factory=dict)
    flops: float = 0.0
    tolerance: float = 1e-4

    @property
    def warps(self) -> int:
        """Warps of the launch."""
        return self.grid * -(-self.block // 32)


def _lane(c: Coords):
    return c.thread_x % 32


def _floats(rng: np.random.Generator, n: int) -> np.ndarray:
    return rng.uniform(-1.0, 1.0, n).astype(np.float32)


def _strided_warps(items: int, block: int) -> int:
    """Warp accesses of one block's ``for (b = threadIdx.x; b < items; b += blockDim.x)`` loop."""
    return sum(-(-min(block, items - start) // 32) for start in range(0, items, block))


# ----------------------------------------------------------------------------- (1) thread per row


def _thread_per_row(cols: int, *, rows: int | None = None, block: int = 256) -> CauseVariant:
    """``rows`` (default: 2^25 elements' worth) rows of ``cols`` floats, a thread a row."""
    rows = _ELEMENTS // cols if rows is None else rows
    elements = rows * cols

    def arguments(rng):
        a = _floats(rng, elements)
        return [a, f"f32[{rows}]", np.int32(rows), np.int32(cols)], {
            1: a.reshape(rows, cols).sum(axis=1, dtype=np.float64)}

    label = f"cols={cols}" if elements == _ELEMENTS and block == 256 else f"rows={rows} cols={cols} block={block}"
    return CauseVariant(
        "thread_per_row", label, "row_per_thread", -(-rows // block), block, arguments,
        (Access(array="a", index=lambda c: c.x * cols + c.loop, loop=cols, guard=lambda c: c.x < rows),
         Access(array="out", index=lambda c: c.x, kind="store", guard=lambda c: c.x < rows)),
        flops=elements)


# ----------------------------------------------------------------------------- (2) column sums


def _column_sums(rows: int, cols: int, element_bytes: int = 4) -> Callable[[np.random.Generator], Arguments]:
    """The arguments of a kernel ``(a, out, rows, cols)`` that sums each column of a random
    row-major matrix into ``out``, with the sums as the reference."""
    def arguments(rng):
        a = (rng.integers(0, 1024, rows * cols, dtype=np.uint16) if element_bytes == 2
             else _floats(rng, rows * cols))
        return [a, f"f32[{cols}]", np.int32(rows), np.int32(cols)], {
            1: a.reshape(rows, cols).sum(axis=0, dtype=np.float64)}

    return arguments


def _column(cols: int, element_bytes: int) -> CauseVariant:
    rows, block = _ELEMENTS // cols, 256
    kernel = "column_sum_u16" if element_bytes == 2 else "column_sum_f32"
    return CauseVariant(
        "column_u16", f"{8 * element_bytes}-bit rows={rows} cols={cols}", kernel, cols // block, block,
        _column_sums(rows, cols, element_bytes),
        (Access(array="a", index=lambda c: c.loop * cols + c.x, loop=rows, element_bytes=element_bytes),
         Access(array="out", index=lambda c: c.x, kind="store")),
        flops=rows * cols)


# ----------------------------------------------------------------------------- (3) grid-stride


def _grid_stride(grid: int) -> CauseVariant:
    block = 256
    stride = grid * block
    trips = _ELEMENTS // stride

    def arguments(rng):
        x = _floats(rng, _ELEMENTS)
        return [x, f"f32[{stride}]", np.int32(_ELEMENTS)], {
            1: x.reshape(trips, stride).sum(axis=0, dtype=np.float64)}

    return CauseVariant(
        "grid_stride", f"grid={grid} trips={trips}", "grid_stride_sum", grid, block, arguments,
        (Access(array="x", index=lambda c: c.x + c.loop * stride, loop=trips),
         Access(array="out", index=lambda c: c.x, kind="store")),
        flops=_ELEMENTS)


# ----------------------------------------------------------------------------- (4) shared atomics


def _shared_atomics(kernel: str, bins: int, iters: int) -> CauseVariant:
    """Per warp and trip: the CAS loop's load and its rounds (the lanes of the warp on one word,
    each round one CAS; a word's lanes are one bank's one word, a wavefront), or one atomic.
    Plus the zeroing and the copy-out of the bins, every warp with a lane in the loop.

    The shared atomics: every thread adds 1 ``iters`` times to its word ``(t + k) % bins`` of
    the block's ``bins``; in the CAS loop the block's threads on one word at once contend for
    it (all of them with one bin, none with at least as many bins as threads). The shared bytes
    loaded and stored besides the atomics: the bins zeroed and copied out, and in the CAS loop the
    first read of a word each success."""
    grid, block = 1056, 256
    cas = kernel == "shared_cas_count"
    rounds = 32 // min(bins, 32)
    per_trip = 1 + rounds if cas else 1
    warps_of_block = block // 32
    per_block = warps_of_block * iters * per_trip + 2 * _strided_warps(bins, block)
    updates = grid * block * iters
    atomics = ({"shared_cas": updates, "shared_cas_contenders": block // min(bins, block)} if cas
               else {"shared_atomics": updates})
    # the bins zeroed and copied out, 4 bytes each, and the CAS loop's first read of its word
    shared_bytes = grid * (2 * bins * 4 + (block * iters * 4 if cas else 0))

    def arguments(rng):
        del rng
        words = (np.arange(block)[:, None] + np.arange(iters)[None, :]) % bins
        per_block = np.bincount(words.ravel(), minlength=bins).astype(np.float64)
        return [f"u32[{grid * bins}]", np.int32(iters), np.int32(bins)], {0: np.tile(per_block, grid)}

    return CauseVariant(
        "shared_atomics", f"{'cas' if cas else 'add'} bins={bins} iters={iters}", kernel, grid, block, arguments,
        (Access(array="out", index=lambda c: c.block_x * bins + c.thread_x + c.loop * block,
                guard=lambda c: c.thread_x + c.loop * block < bins, kind="store", loop=-(-bins // block)),),
        counts={"shared_wavefronts": grid * per_block, "barriers_per_block": 2, "shared_atomic_words": bins,
                "shared_bytes": shared_bytes, **atomics},
        tolerance=0.0)


# ----------------------------------------------------------------------------- (5) global CAS


def _global_cas(addresses: int, grid: int, block: int, iters: int) -> CauseVariant:
    """Every thread's successful CAS a pass (``atomics``, lanes), on `addresses` counters, each
    contended by the threads that share it (``cas_contenders``: threads / addresses)."""
    threads = grid * block

    def arguments(rng):
        del rng
        per = np.bincount(np.arange(threads) % addresses, minlength=addresses).astype(np.float64)
        return [np.zeros(addresses, dtype=np.uint32), np.int32(addresses), np.int32(iters)], {0: per * iters}

    return CauseVariant(
        "global_cas", f"addresses={addresses} threads={threads} iters={iters}", "global_cas_count", grid, block,
        arguments,
        (Access(array="counters", index=lambda c: c.x % addresses, loop=iters),),
        counts={"atomics": threads * iters, "atomic_addresses": addresses, "cas_contenders": threads / addresses},
        tolerance=0.0)


# ----------------------------------------------------------------------------- (6) barrier phases


def _phases(per_thread: int, rounds: int) -> CauseVariant:
    """A round: each warp stores its sums, each tree level's two loads and a store (every warp
    issues them, predicated, as `corpus/traffic`'s trees count), each warp loads the total."""
    grid, block = _SMS, 1024
    levels = block.bit_length() - 1
    per_block = rounds * (block // 32) * (1 + 3 * levels + 1)
    chunk = per_thread * block
    n = grid * rounds * chunk

    def at(c: Coords):
        return c.block_x * rounds * chunk + c.loop * block + c.thread_x

    def arguments(rng):
        x = _floats(rng, n)
        sums = x.reshape(-1, chunk).sum(axis=1, dtype=np.float64)
        return [x, f"f32[{n}]", np.int32(per_thread), np.int32(rounds)], {1: np.repeat(sums, chunk)}

    return CauseVariant(
        "barrier_phases", f"per_thread={per_thread} rounds={rounds}", "phased_rounds", grid, block, arguments,
        (Access(array="x", index=at, loop=rounds * per_thread),
         Access(array="out", index=at, loop=rounds * per_thread, kind="store")),
        counts={"shared_wavefronts": grid * per_block, "barriers_per_block": rounds * (levels + 2),
                "load_phases_per_block": rounds},
        flops=n + grid * rounds * block)


# ----------------------------------------------------------------------------- (7) rows read twice


def _row_twice(cols: int) -> CauseVariant:
    """Two block reductions, each a store a warp (lane 0) and a load a warp; two barriers each."""
    rows, block = _ELEMENTS // cols, 1024
    trips = cols // block

    def arguments(rng):
        x = _floats(rng, _ELEMENTS).reshape(rows, cols)
        m = x.max(axis=1).astype(np.float64)
        lse = m + np.log(np.exp(x - m[:, None]).sum(axis=1, dtype=np.float64))
        return [x.reshape(-1), f"f32[{rows}]", np.int32(cols)], {1: lse}

    def at(c: Coords):
        return c.block_x * cols + c.thread_x + c.loop * block

    return CauseVariant(
        "row_twice", f"cols={cols} rows={rows}", "row_logsumexp", rows, block, arguments,
        # the maximum's loop, then the sum's: the second walks the row after the first ends
        (Access(array="x", index=at, loop=trips), Access(array="x", index=at, loop=trips, phase=1),
         Access(array="out", index=lambda c: c.block_x, guard=lambda c: c.thread_x == 0, kind="store")),
        counts={"shared_wavefronts": rows * 4 * (block // 32), "barriers_per_block": 4},
        flops=3 * _ELEMENTS)


# ----------------------------------------------------------------------------- (8) warp per row


def _warp_per_row(cols: int, block: int) -> CauseVariant:
    rows = _ELEMENTS // cols
    trips = cols // 32

    def row(c: Coords):
        return c.x // 32

    def arguments(rng):
        a = _floats(rng, _ELEMENTS)
        return [a, f"f32[{rows}]", np.int32(rows), np.int32(cols)], {
            1: a.reshape(rows, cols).sum(axis=1, dtype=np.float64)}

    return CauseVariant(
        "warp_per_row", f"block={block} cols={cols}", "warp_row_sum", rows * 32 // block, block, arguments,
        (Access(array="a", index=lambda c: row(c) * cols + c.loop * 32 + _lane(c), loop=trips),
         Access(array="out", index=row, guard=lambda c: _lane(c) == 0, kind="store")),
        flops=_ELEMENTS + 5 * rows * 32)


# ----------------------------------------------------------------------------- (9) stored accumulator


def _stored(cols: int, stored: bool) -> CauseVariant:
    """Thread c sums column c of ``2^25 / cols`` rows: into ``out[c]`` every trip (``stored``), or in
    a register with one load in flight (the control); both walk the rows one load at a time."""
    rows, block = _ELEMENTS // cols, 256
    store_loop = rows if stored else 1
    return CauseVariant(
        "stored_accumulator", f"{'stored' if stored else 'register'} rows={rows} cols={cols}",
        "column_sum_stored" if stored else "column_sum_register", -(-cols // block), block, _column_sums(rows, cols),
        (Access(array="a", index=lambda c: c.loop * cols + c.x, loop=rows, guard=lambda c: c.x < cols),
         Access(array="out", index=lambda c: c.x, kind="store", loop=store_loop, guard=lambda c: c.x < cols)),
        flops=rows * cols)


# ----------------------------------------------------------------------------- (10) loops that re-read


def _three_loops(spread: bool, cols: int = 8192, rows: int = 1056) -> CauseVariant:
    """A block of 256 a row of ``cols`` floats: a sum, a sum of squares about it, then the row
    scaled and written, each loop one load in flight a trip over the thread's own elements; the
    three loops read one row (``spread`` False: the second and third find it in L1 or L2) or three."""
    block = 256
    trips = cols // block
    rows_read = 3 if spread else 1

    def arguments(rng):
        x = _floats(rng, rows * rows_read * cols)
        r = x.reshape(rows, rows_read, cols).astype(np.float64)
        r0, r1, r2 = (r[:, min(i, rows_read - 1)].reshape(rows, trips, block) for i in range(3))
        s = r0.sum(axis=1)
        v = ((r1 - s[:, None, :]) ** 2).sum(axis=1)
        return [x, f"f32[{rows * cols}]", np.int32(cols), np.int32(int(spread))], {
            1: (r2 * v[:, None, :]).reshape(-1)}

    def row(k: int):
        return lambda c: (c.block_x * rows_read + (k if spread else 0)) * cols + c.thread_x + c.loop * block

    return CauseVariant(
        "loops_reread", f"{'three rows' if spread else 'one row'} cols={cols} rows={rows}", "row_three_loops",
        rows, block, arguments,
        (Access(array="x", index=row(0), loop=trips), Access(array="x", index=row(1), loop=trips, phase=1),
         Access(array="x", index=row(2), loop=trips, phase=2),
         Access(array="out", index=lambda c: c.block_x * cols + c.thread_x + c.loop * block, loop=trips, phase=2,
                kind="store")),
        flops=4 * rows * cols, tolerance=1e-3)


#: Every variant, cause by cause in the order of `CAUSES`.
CAUSE_VARIANTS: tuple[CauseVariant, ...] = (
    _thread_per_row(16), _thread_per_row(64), _thread_per_row(512),
    _column(65536, 2), _column(16384, 2), _column(65536, 4),
    _grid_stride(256), _grid_stride(1024), _grid_stride(4096),
    _shared_atomics("shared_cas_count", 1, 16), _shared_atomics("shared_cas_count", 1024, 128),
    _shared_atomics("shared_add_count", 1, 128), _shared_atomics("shared_add_count", 1024, 128),
    _global_cas(1, 8, 32, 1), _global_cas(32, 132, 256, 1), _global_cas(4096, 1056, 256, 1),
    _global_cas(65536, 1056, 256, 4),
    _phases(128, 1), _phases(16, 8), _phases(2, 64),
    _row_twice(4096), _row_twice(32768), _row_twice(262144),
    _warp_per_row(256, 32), _warp_per_row(256, 64), _warp_per_row(1024, 32), _warp_per_row(256, 256),
    _stored(16384, True), _stored(16384, False), _stored(_SMS * 256, True), _stored(_SMS * 256, False),
    _three_loops(False), _three_loops(True),
)
