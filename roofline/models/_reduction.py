"""The four classic block reductions (PMPP ch.10, Cheng et al. ch.3): traffic and structure.

All four load one element per thread and write one partial sum per block, so their global
traffic and useful flops are the same; they differ in shared-memory wavefronts, bank
conflicts, barriers, divergent warps and shuffles, which `reduction_steps` counts exactly
by walking one block's warps through every level of the tree. The kernel `reduction` builds
carries the shared-memory wavefronts (in its L1 bytes), shared bytes, bank-conflict ways and
barriers per block to `roofline.predict`; its divergent warps and shuffles per block are in
`ReductionSteps`.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from occupancy import Launch

from .._errors import RooflineError
from .._kernel import Kernel
from .._traffic import Access, traffic
from .._warps import WARP_SIZE, bank_wavefronts
from ._common import FLOAT_BYTES, blocks_for, check_block_1d, check_int

__all__ = ["REDUCTION_VARIANTS", "ReductionSteps", "reduction", "reduction_steps"]

REDUCTION_VARIANTS = ("interleaved", "interleaved_compact", "sequential", "warp_shuffle")

_FORMULAS = {
    "interleaved": "s[tid] = i < n ? in[i] : 0; for stride = 1..block/2: if (tid % (2 * stride) == 0) "
                   "s[tid] += s[tid + stride]; out[blockIdx.x] = s[0];",
    "interleaved_compact": "s[tid] = i < n ? in[i] : 0; for stride = 1..block/2: index = 2 * stride * tid; "
                           "if (index < block) s[index] += s[index + stride]; out[blockIdx.x] = s[0];",
    "sequential": "s[tid] = i < n ? in[i] : 0; tree: s[tid] += s[tid + stride]; out[blockIdx.x] = s[0];",
    "warp_shuffle": "v = i < n ? in[i] : 0; v += __shfl_down_sync(~0u, v, 16..1); lane 0: warp_sums[warp] = v; "
                    "warp 0 shuffles the block/32 sums; out[blockIdx.x] = v;",
}

Variant = Literal["interleaved", "interleaved_compact", "sequential", "warp_shuffle"]


class ReductionSteps(BaseModel):
    """What one block of a reduction variant does besides its global loads and store.

    Counts are per block of ``block`` threads, every warp-instruction counted once.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    variant: str
    block: int = Field(description="Threads per block.")
    tree_levels: int = Field(description="Levels of the tree: log2(block).")
    barriers_per_block: int = Field(description="__syncthreads executed by the block.")
    shared_bytes_per_block: int = Field(description="Shared bytes loaded and stored by active lanes.")
    shared_wavefronts_per_block: int = Field(description="Shared-memory passes (bank conflicts included).")
    bank_conflict_ways: int = Field(description="Worst conflict degree of one shared access (1: none).")
    tree_warp_steps_per_block: int = Field(
        description="Warps that execute a level's add (at least one active lane), summed over the levels.")
    divergent_warp_steps_per_block: int = Field(
        description="Those of them with some but not all 32 lanes active (the branch diverges).")
    shuffles_per_block: int = Field(description="__shfl_down_sync warp-instructions.")

    @property
    def divergent_warp_fraction(self) -> float:
        """divergent_warp_steps / tree_warp_steps: the share of the tree's adds issued by a
        warp with idle lanes (0 when every active warp is full)."""
        steps = self.tree_warp_steps_per_block
        return self.divergent_warp_steps_per_block / steps if steps else 0.0


def _tree(variant: str, block: int) -> list[tuple[np.ndarray, np.ndarray, int]]:
    """Each tree level as (active mask, word the thread adds into, stride) over threadIdx.x."""
    tid = np.arange(block)
    levels = []
    for k in range(block.bit_length() - 1):
        if variant == "sequential":
            stride = block >> (k + 1)
            levels.append((tid < stride, tid, stride))
        elif variant == "interleaved":
            stride = 1 << k
            levels.append((tid % (2 * stride) == 0, tid, stride))
        else:  # interleaved_compact
            stride = 1 << k
            index = 2 * stride * tid
            levels.append((index < block, index, stride))
    return levels


def _shared(words: np.ndarray, active: np.ndarray) -> tuple[int, int, int]:
    """Bytes, wavefronts and worst ways of one shared instruction over the block's warps."""
    warps = len(words) // WARP_SIZE
    address = (FLOAT_BYTES * words).reshape(warps, WARP_SIZE)
    mask = active.reshape(warps, WARP_SIZE)
    wavefronts, ways = bank_wavefronts(address, mask, FLOAT_BYTES)
    return FLOAT_BYTES * int(active.sum()), int(wavefronts.sum()), int(ways.max())


def _check_variant(variant: object) -> str:
    if not isinstance(variant, str) or variant not in REDUCTION_VARIANTS:
        shown = repr(variant) if isinstance(variant, str) else type(variant).__name__
        raise RooflineError(f"variant={shown} is not a reduction variant; known: {', '.join(REDUCTION_VARIANTS)}")
    return str(variant)


def _check_block(block: object) -> int:
    block = check_block_1d(block)
    if block < WARP_SIZE or block & (block - 1):
        raise RooflineError(f"block={block} must be a power of two from 32 to 1024")
    return block


def reduction_steps(block: int = 256, variant: Variant = "sequential") -> ReductionSteps:
    """Shared traffic, bank conflicts, barriers, divergence and shuffles of one block.

    Parameters
    ----------
    block : int
        Threads per block, a power of two from 32 to 1024.
    variant : str
        "interleaved", "interleaved_compact", "sequential" or "warp_shuffle" (the
        kernels are in `reduction`'s docstring).

    Returns
    -------
    ReductionSteps

    Raises
    ------
    RooflineError
        For an unknown variant or a block that is not a power of two from 32 to 1024.

    Examples
    --------
    >>> from roofline import models
    >>> models.reduction_steps(256, "interleaved_compact").bank_conflict_ways
    8
    >>> models.reduction_steps(256, "warp_shuffle").barriers_per_block
    1
    """
    variant = _check_variant(variant)
    block = _check_block(block)
    tid = np.arange(block)
    full = np.ones(block, dtype=bool)
    levels = block.bit_length() - 1
    if variant == "warp_shuffle":
        # Lane 0 of each warp stores its warp's sum; after the one barrier, warp 0's lanes
        # below block/32 read them back. Shuffle levels: 5 in every warp, then log2(block/32).
        warps = block // WARP_SIZE
        first_lane = tid % WARP_SIZE == 0
        store = _shared(tid // WARP_SIZE, first_lane)
        load = _shared(np.where(tid < WARP_SIZE, tid, 0), tid < warps)
        return ReductionSteps(
            variant=variant, block=block, tree_levels=levels, barriers_per_block=1,
            shared_bytes_per_block=store[0] + load[0], shared_wavefronts_per_block=store[1] + load[1],
            bank_conflict_ways=max(store[2], load[2]), tree_warp_steps_per_block=5 * warps + (levels - 5),
            divergent_warp_steps_per_block=0, shuffles_per_block=5 * warps + (levels - 5))
    parts = [_shared(tid, full)]  # s[tid] = in[i]
    steps = divergent = 0
    for active, index, stride in _tree(variant, block):
        safe = np.where(active, index, 0)
        parts += [_shared(safe, active), _shared(safe + stride, active), _shared(safe, active)]
        lanes = active.reshape(-1, WARP_SIZE).sum(axis=1)
        steps += int((lanes > 0).sum())
        divergent += int(((lanes > 0) & (lanes < WARP_SIZE)).sum())
    parts.append(_shared(np.zeros(block, dtype=np.int64), tid == 0))  # out = s[0]
    return ReductionSteps(
        variant=variant, block=block, tree_levels=levels, barriers_per_block=1 + levels,
        shared_bytes_per_block=sum(p[0] for p in parts), shared_wavefronts_per_block=sum(p[1] for p in parts),
        bank_conflict_ways=max(p[2] for p in parts), tree_warp_steps_per_block=steps,
        divergent_warp_steps_per_block=divergent, shuffles_per_block=0)


def reduction(n: int, *, block: int = 256, variant: Variant = "sequential") -> Kernel:
    """Block tree reduction, one partial sum per block: the four classic variants.

    Every variant starts ``v = (i < n) ? in[i] : 0.0f`` with ``i = blockIdx.x * block +
    threadIdx.x`` and ends with thread 0 writing ``out[blockIdx.x]``. In between
    (``s`` is ``__shared__ float s[block]``, filled with ``v`` and a ``__syncthreads``)::

        sequential (PMPP ch.10, the default):
            for (stride = block / 2; stride > 0; stride >>= 1) {
                if (tid < stride) s[tid] += s[tid + stride];  __syncthreads(); }
        interleaved (Cheng ch.3 reduceNeighbored; divergent warps):
            for (stride = 1; stride < block; stride *= 2) {
                if (tid % (2 * stride) == 0) s[tid] += s[tid + stride];  __syncthreads(); }
        interleaved_compact (reduceNeighboredLess; bank conflicts):
            for (stride = 1; stride < block; stride *= 2) {
                index = 2 * stride * tid;
                if (index < block) s[index] += s[index + stride];  __syncthreads(); }
        warp_shuffle (no s; warp_sums[block / 32] instead):
            for (offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(~0u, v, offset);
            if (lane == 0) warp_sums[warp] = v;  __syncthreads();
            if (warp == 0) { v = lane < block / 32 ? warp_sums[lane] : 0;
                             for (offset = block / 64; offset > 0; offset >>= 1) v += __shfl_down_sync(...); }

    Launch: ``grid = ceil(n / block)`` blocks of ``block`` threads, static shared memory
    ``4 * block`` bytes (``block / 8`` for warp_shuffle). flops = ``n - grid`` useful
    additions in every variant; loads ``4 n``, stores ``4 grid``. ``shared_bytes``,
    ``bank_conflict_ways`` and the wavefronts in ``l1_bytes`` come from `reduction_steps`,
    which also gives barriers, divergent warps and shuffles per block.

    Parameters
    ----------
    n : int
        Elements, >= 1.
    block : int
        Threads per block, a power of two from 32 to 1024.
    variant : str
        One of `REDUCTION_VARIANTS`.

    Returns
    -------
    roofline.Kernel
        ``parameters`` hold ``n``, ``block`` and, when it is not "sequential", ``variant``.

    Examples
    --------
    >>> from roofline import models
    >>> models.reduction(1024, block=256).count("store_bytes")  # four partial sums
    16
    >>> models.reduction(1024, block=256, variant="interleaved_compact").label
    'reduction(variant=interleaved_compact)'
    """
    n = check_int("n", n)
    block = _check_block(block)
    steps = reduction_steps(block, variant)
    grid = blocks_for(n, block)
    counts = traffic(
        grid,
        block,
        [
            Access(array="in", index=lambda c: c.x, guard=lambda c: c.x < n, kind="load"),
            Access(array="out", index=lambda c: c.block_x, guard=lambda c: c.thread_x == 0, kind="store"),
        ],
    )
    parameters: dict[str, object] = {"n": n, "block": block}
    if steps.variant != "sequential":
        parameters["variant"] = steps.variant
    shared_words = block // WARP_SIZE if steps.variant == "warp_shuffle" else block
    return counts.kernel(
        name="reduction",
        parameters=parameters,
        formula=_FORMULAS[steps.variant],
        precision="fp32",
        element_bytes=FLOAT_BYTES,
        flops=n - grid,
        shared_wavefronts=grid * steps.shared_wavefronts_per_block,
        shared_bytes=grid * steps.shared_bytes_per_block,
        bank_conflict_ways=steps.bank_conflict_ways,
        barriers_per_block=steps.barriers_per_block,
        launch=Launch(grid=grid, block=block, static_shared_memory=FLOAT_BYTES * shared_words),
    )
