"""cuda-samples descriptions of the bitonic sorting networks."""

from __future__ import annotations

from roofline.memory import Access

from .._description import Describe, Description
from ._shapes import first_of, log2

__all__ = ["KERNELS"]

KERNELS: dict[str, Describe] = {}


# ----------------------------------------------------------------------------- sorting networks

_KEY_ARRAYS = ("key", "val")


def _bitonic_sort_shared(launch) -> Description:
    """bitonicSortShared: a block of 512 threads sorts 1024 keys (and values) in shared memory,
    each thread reading and writing elements t and t+512 of its block's 1024."""
    half = launch.block[0]

    def at(offset: int):
        return lambda c: c.block_x * 2 * half + c.thread_x + offset

    # Comparator steps: sizes 2, 4, .., L/2 take log2(size) strides each, the final merge
    # log2(L). Each step a warp loads and stores key and value at pos and pos + stride
    # (4 LDS, 4 STS): for stride >= 32 a warp's 32 positions are consecutive (1 wavefront),
    # below they span 64 words in runs of ``stride`` (2-way, 2 wavefronts). Plus the 4 stores
    # in and the 4 loads out.
    length = 2 * half
    lg = log2(length)
    strides = [1 << j for k in range(1, lg + 1) for j in range(k)]
    per_warp = 4 * sum(1 if st >= 32 else 2 for st in strides) * 2 + 8
    return Description(accesses=tuple(
        Access(array=f"{kind}_{a}", index=at(o), kind="load" if kind == "src" else "store")
        for kind in ("src", "dst") for a in _KEY_ARRAYS for o in (0, half)
    ), counts={
        "shared_wavefronts": launch.warps * per_warp,
        "barriers_per_block": len(strides) + 1,
    })


def _bitonic_merge_global(launch) -> Description:
    """bitonicMergeGlobal: comparator g compares (and writes back) keys and values at ``pos`` and
    ``pos + stride``, ``pos = g + (g // stride) * stride``.

    That map is not affine in the block index (blocks jump by a stride at each segment), so the
    pairs are renumbered: comparator g takes ``g`` and ``g + n/2``. Each warp still reads 32
    consecutive, 128-byte aligned elements per access (stride >= 1024), and the accesses still
    cover the whole array once each: the same sectors, in a different block order (exactly the
    source's map when stride = n/2).
    """
    n = first_of(launch)
    half = n // 2

    def at(offset: int):
        return lambda c: c.x + offset

    return Description(accesses=tuple(
        Access(array=f"{kind}_{a}", index=at(o), kind="load" if kind == "src" else "store")
        for kind in ("src", "dst") for a in _KEY_ARRAYS for o in (0, half)
    ))


KERNELS["sortingNetworks.bitonicSortShared"] = _bitonic_sort_shared
KERNELS["sortingNetworks.bitonicMergeGlobal"] = _bitonic_merge_global
