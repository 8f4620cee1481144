"""cuda-samples descriptions of the kernels built on atomics: the histograms and the warp-aggregated filter."""

from __future__ import annotations

from roofline.memory import Access, Coords

from .._description import Describe, Description
from ._shapes import first_of, first_thread, lane_of, log2, mib_of, n_of, with_counts

__all__ = ["KERNELS"]

KERNELS: dict[str, Describe] = {}


# ----------------------------------------------------------------------------- histograms


def _grid_stride(array: str, count: int, stride: int, element_bytes: int = 4) -> tuple[Access, ...]:
    """A grid-stride loop ``for (i = x; i < count; i += stride) load array[i]``: the full trips
    (every thread) and the last, partial one (threads below the remainder)."""
    full = count // stride
    out = []
    if full:
        out.append(Access(array=array, index=lambda c: c.x + c.loop * stride, loop=full,
                          element_bytes=element_bytes))
    if count % stride:
        out.append(Access(array=array, index=lambda c: c.x + full * stride,
                          guard=lambda c: c.x + full * stride < count, element_bytes=element_bytes))
    return tuple(out)


def _histogram256(launch) -> Description:
    """histogram256: 240 blocks of 192 threads read the data as words in a grid-stride loop (bins
    in shared memory), then each block writes its 256-bin partial histogram."""
    words = mib_of(launch) // 4
    threads = launch.threads_per_block
    stride = launch.grid[0] * threads
    bins = 256
    return Description(accesses=(
        *_grid_stride("data", words, stride),
        *(Access(array="partial", index=lambda c, s=s: c.block_x * bins + c.thread_x + s,
                 guard=lambda c, s=s: c.thread_x + s < bins, kind="store")
          for s in range(0, bins, threads)),
    ))


def _histogram64(launch) -> Description:
    """histogram64: blocks of 64 threads read the data as uint4 in a grid-stride loop, then each
    block writes its 64-bin partial histogram."""
    quads = mib_of(launch) // 16
    stride = launch.grid[0] * launch.threads_per_block
    return Description(accesses=(
        *_grid_stride("data", quads, stride, element_bytes=16),
        Access(array="partial", index=lambda c: c.block_x * 64 + c.thread_x,
               guard=lambda c: c.thread_x < 64, kind="store"),
    ))


def _merge_histogram256(launch) -> Description:
    """mergeHistogram256: block b sums bin b over the partial histograms (thread t takes partials
    t, t+256, ...: a stride of 256 words between lanes), thread 0 writes the total."""
    count = first_of(launch)
    threads = launch.threads_per_block
    bins = 256
    return Description(accesses=(
        Access(array="partial", index=lambda c: c.block_x + (c.thread_x + c.loop * threads) * bins,
               guard=lambda c: c.thread_x + c.loop * threads < count, loop=-(-count // threads)),
        Access(array="histogram", index=lambda c: c.block_x, guard=first_thread, kind="store"),
    ))


#: Expected wavefronts of a shared atomic of 32 lanes on uniformly random bytes into one warp's
#: 256-word histogram (8 words a bank; the largest bank's distinct words): 3.15.
_RANDOM_BYTE_ATOMIC = 3.15


def _histogram256_counts(launch) -> dict:
    """histogram256: each thread zeroes 256 x 6 / 192 = 8 words; each word of data is 4 shared
    atomics of its warp (one per byte: ``_RANDOM_BYTE_ATOMIC`` wavefronts, 1 for the launch
    whose data is one value); then threads t < 256 (t and t + 192 < 256) sum a bin over the 6
    warp histograms (6 conflict-free loads each, per warp with such threads)."""
    words = mib_of(launch) // 4
    warps = launch.warps
    ways = 1.0 if "one value" in launch.shape else _RANDOM_BYTE_ATOMIC
    sums = launch.blocks * 6 * sum(-(-min(32, max(0, 256 - s - 32 * w)) // 32)
                                     for s in range(0, 256, 192) for w in range(6))
    return {"shared_wavefronts": warps * 8 + 4 * -(-words // 32) * ways + sums,
            "barriers_per_block": 2}


def _merge_counts(launch) -> dict:
    """mergeHistogram256: a 256-word tree (every warp issues each step's two loads and store,
    predicated), after the store of each thread's sum; a final load (thread 0)."""
    b = launch.threads_per_block
    steps = log2(b)
    return {"shared_wavefronts": launch.warps * (1 + 3 * steps + 1), "barriers_per_block": steps}


KERNELS["histogram256"] = with_counts(_histogram256, _histogram256_counts)
KERNELS["histogram256.merge"] = with_counts(_merge_histogram256, _merge_counts)
KERNELS["histogram64"] = _histogram64


# ----------------------------------------------------------------------------- warp-aggregated atomics


def _filter_arr(launch) -> Description:
    """filter_arr: thread i reads src[i] (grid-stride); a warp's positive elements take slots from
    one atomicAdd on the counter and are written to consecutive slots of dst.

    Which elements are kept and where a warp's slots start depend on the data and on the order
    of the warps' atomics. Stand-in for the random input, half of it kept: a warp keeps its even
    lanes and writes 16 consecutive words, its start one word further from a 16-word boundary per
    warp (random starts fall evenly over a sector's 8 words: (16 + 7) / 8 sectors a warp on
    average), so dst spans 17/16 of the kept elements. One atomic per warp, all on one counter.
    """
    n = n_of(launch)
    stride = launch.grid[0] * launch.threads_per_block
    warps = -(-min(n, stride) // 32) * -(-n // stride)  # every warp with an element keeps one
    trips = -(-n // stride)

    def src(c: Coords):
        return c.x + c.loop * stride

    def slot(c: Coords):
        warp = (c.x + c.loop * stride) // 32
        return warp * 17 + lane_of(c) // 2

    return Description(
        accesses=(
            Access(array="src", index=src, guard=lambda c: src(c) < n, loop=trips),
            Access(array="dst", index=slot, guard=lambda c: (src(c) < n) & (lane_of(c) % 2 == 0),
                   loop=trips, kind="store"),
        ),
        counts={"atomics": warps, "atomic_addresses": 1},
    )


KERNELS["warpAggregatedAtomics.filter_arr"] = _filter_arr
