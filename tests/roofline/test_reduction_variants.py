"""The four classic reductions: counts of models.reduction_steps against a brute-force walk.

The oracle below executes each variant's loop (as written in models.reduction's docstring
and validate/kernels/families.cu) thread by thread in plain Python, and counts bank
conflicts the textbook way: 32 banks of 4-byte words, a warp-instruction costs as many
passes as the most distinct words any bank must serve (PMPP ch.5; CUDA Programming Guide,
"Shared Memory" of compute capability 5.x and later).
"""

import math

import pytest

from roofline import RooflineError, models

BLOCKS = (32, 64, 128, 256, 512, 1024)
VARIANTS = models.REDUCTION_VARIANTS


def _instruction(block, word_of):
    """(bytes, wavefronts, ways) of one shared warp-instruction; word_of(tid) -> word or None."""
    total_bytes = wavefronts = worst = 0
    for warp in range(block // 32):
        banks = {}
        for lane in range(32):
            word = word_of(warp * 32 + lane)
            if word is not None:
                total_bytes += 4
                banks.setdefault(word % 32, set()).add(word)
        ways = max((len(words) for words in banks.values()), default=0)
        wavefronts += ways
        worst = max(worst, ways)
    return total_bytes, wavefronts, worst


def _tree_index(variant, block, level, tid):
    """The word thread tid adds into at a level, and the stride; None when the thread idles."""
    if variant == "sequential":
        stride = block >> (level + 1)
        return (tid if tid < stride else None), stride
    stride = 1 << level
    if variant == "interleaved":
        return (tid if tid % (2 * stride) == 0 else None), stride
    index = 2 * stride * tid
    return (index if index < block else None), stride


def _brute_force(variant, block):
    levels = int(math.log2(block))
    parts, steps, divergent = [], 0, 0
    if variant == "warp_shuffle":
        warps = block // 32
        parts.append(_instruction(block, lambda t: t // 32 if t % 32 == 0 else None))
        parts.append(_instruction(block, lambda t: t if t < warps else None))
        shuffles = 5 * warps + int(math.log2(warps))
        barriers, steps = 1, shuffles
    else:
        parts.append(_instruction(block, lambda t: t))
        for level in range(levels):
            def at(t, shift=0, level=level):
                index, stride = _tree_index(variant, block, level, t)
                return None if index is None else index + shift * stride
            parts += [_instruction(block, at), _instruction(block, lambda t: at(t, 1)), _instruction(block, at)]
            for warp in range(block // 32):
                lanes = sum(at(warp * 32 + lane) is not None for lane in range(32))
                steps += lanes > 0
                divergent += 0 < lanes < 32
        parts.append(_instruction(block, lambda t: 0 if t == 0 else None))
        shuffles, barriers = 0, 1 + levels
    return {
        "tree_levels": levels, "barriers_per_block": barriers,
        "shared_bytes_per_block": sum(p[0] for p in parts),
        "shared_wavefronts_per_block": sum(p[1] for p in parts),
        "bank_conflict_ways": max(p[2] for p in parts),
        "tree_warp_steps_per_block": steps, "divergent_warp_steps_per_block": divergent,
        "shuffles_per_block": shuffles,
    }


CASES = [(v, b) for v in VARIANTS for b in BLOCKS]


@pytest.mark.parametrize(("variant", "block"), CASES, ids=[f"{v}-{b}" for v, b in CASES])
def test_steps_match_brute_force(variant, block):
    steps = models.reduction_steps(block, variant)
    expected = _brute_force(variant, block)
    assert {k: getattr(steps, k) for k in expected} == expected


# Textbook facts, independent of the walk above (Cheng et al. ch.3; Harris, "Optimizing
# Parallel Reduction in CUDA"): the interleaved tree's active warps all diverge, the
# compact one has conflicts of degree min(2 * stride, lanes active), sequential has neither.
@pytest.mark.parametrize(
    ("variant", "ways", "all_divergent"),
    [("interleaved", 1, True), ("interleaved_compact", 32, False), ("sequential", 1, False),
     ("warp_shuffle", 1, False)],
    ids=VARIANTS,
)
def test_textbook_properties_at_1024(variant, ways, all_divergent):
    steps = models.reduction_steps(1024, variant)
    assert steps.bank_conflict_ways == ways
    assert (steps.divergent_warp_fraction == 1.0) is all_divergent


@pytest.mark.parametrize("n", [1, 31, 1000, 4096, 100_003], ids=lambda n: f"n={n}")
@pytest.mark.parametrize("variant", VARIANTS)
def test_global_counts_are_the_same_for_every_variant(variant, n):
    block = 128
    model = models.reduction(n, block=block, variant=variant)
    grid = -(-n // block)
    steps = models.reduction_steps(block, variant)
    assert model.flops == n - grid
    assert (model.count("load_bytes"), model.count("store_bytes")) == (4 * n, 4 * grid)
    # loads: the sectors of 4n bytes; stores: one 4-byte word per block, grid words apart by 4 bytes
    assert model.dram_bytes == 32 * -(-4 * n // 32) + 32 * -(-4 * grid // 32)
    assert model.shared_bytes == grid * steps.shared_bytes_per_block
    # L1 passes: one 128-byte line per warp load (32 aligned floats), one per block's store
    assert model.l1_bytes == 128 * (-(-n // 32) + grid) + grid * steps.shared_wavefronts_per_block * 128
    shared_words = block // 32 if variant == "warp_shuffle" else block
    assert model.launch.static_shared_memory == 4 * shared_words
    assert ("variant" in model.parameters) is (variant != "sequential")


def test_default_is_the_sequential_tree():
    assert models.reduction(5000) == models.reduction(5000, block=256, variant="sequential")


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [({"variant": "tree"}, "variant='tree' is not a reduction variant; known: interleaved"),
     ({"block": 96}, "block=96 must be a power of two"), ({"block": 16}, "block=16 must be a power of two")],
    ids=["variant", "block-96", "block-16"],
)
def test_bad_input(kwargs, match):
    with pytest.raises(RooflineError, match=match):
        models.reduction(1000, **kwargs)
