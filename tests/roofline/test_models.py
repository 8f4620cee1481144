"""Kernel models: textbook ratios, a brute-force per-warp oracle, the suite and the registry."""

from __future__ import annotations

import doctest
import json
import math

import pytest

import roofline
from roofline import models
from roofline._errors import RooflineError
from roofline.memory import warp_transactions
from roofline.models import _elementwise, _matmul, _registry, _stencil, _transpose

# ---------------------------------------------------------------- textbook ratios

RATIOS = [
    # PMPP 4th ed. §5.1: the naive kernel does 2 flops per 8 bytes loaded: 0.25 FLOP/B.
    # The store adds 4 bytes per 2k flops, so allow a relative 1/(2k).
    ("matmul naive", lambda: models.matmul_naive(1024), 0.25, 1 / 2048),
    # PMPP §5.4: T x T tiles cut global loads by T: 0.25 T FLOP/B (16 x 16: 4 FLOP/B).
    ("matmul tiled 16", lambda: models.matmul_tiled(1024, tile=16), 4.0, 16 / 2048),
    ("matmul tiled 32", lambda: models.matmul_tiled(1024, tile=32), 8.0, 32 / 2048),
    ("matmul tiled 8 rect", lambda: models.matmul_tiled(512, 1024, 256, tile=8), 2.0, 8 / 2048),
    # PMPP ch.2 vector add: 1 add per two 4-byte loads and one store.
    ("vector add", lambda: models.vector_add(1 << 20), 1 / 12, 0),
    # STREAM triad (McCalpin): 2 flops per 3 words moved.
    ("triad", lambda: models.triad(1 << 20), 2 / 12, 0),
    # PMPP ch.3 blur: (2r+1)^2 adds + 1 divide per (2r+1)^2 loads + 1 store, away from edges.
    ("blur r=1", lambda: models.blur(2048, 2048, radius=1), 10 / 40, 2e-3),
    ("blur r=3", lambda: models.blur(2048, 2048, radius=3), 50 / 200, 6e-3),
    ("copy", lambda: models.copy(1000), 0.0, 0),
]


@pytest.mark.parametrize("build, expected, rel", [r[1:] for r in RATIOS], ids=[r[0] for r in RATIOS])
def test_textbook_arithmetic_intensity(build, expected, rel):
    assert build().arithmetic_intensity == pytest.approx(expected, rel=rel, abs=1e-12)


def test_tiling_multiplies_intensity_by_tile():
    naive = models.matmul_naive(2048).arithmetic_intensity
    for tile in (2, 4, 8, 16, 32):
        ratio = models.matmul_tiled(2048, tile=tile).arithmetic_intensity / naive
        assert ratio == pytest.approx(tile, rel=tile / 2048)


# Per-warp sector efficiency figures from Cheng et al., Professional CUDA C Programming.
def test_aos_is_half_as_efficient_as_soa():
    # ch.4 testInnerStruct / testInnerArray: gld_efficiency and gst_efficiency 50% vs 100%.
    aos, soa = models.aos(1 << 20), models.soa(1 << 20)
    assert aos.count("requested_bytes") == soa.count("requested_bytes")
    assert aos.count("requested_bytes") / aos.l2_bytes == pytest.approx(0.5)
    assert soa.count("requested_bytes") / soa.l2_bytes == pytest.approx(1.0)


def test_offset_11_loads_are_80_percent_sector_efficient():
    # ch.4 readOffset with L1 off (-dlcm=cg): offset 11 gives about 80% load efficiency.
    model = models.offset_read(1 << 20, 11)
    load_sectors = model.l2_bytes - model.count("store_bytes")  # stores are aligned: 100%
    assert model.count("load_bytes") / load_sectors == pytest.approx(0.8, rel=1e-4)
    aligned = models.offset_read(1 << 20, 32)
    assert aligned.l2_bytes == aligned.count("requested_bytes")


@pytest.mark.parametrize(
    "variant, load_efficiency, store_efficiency",
    [
        # ch.4 transpose kernels, 16 x 16 blocks: strided side 25% (8 of 32 bytes used).
        ("copy_row", 1.0, 1.0),
        ("copy_column", 0.25, 0.25),
        ("naive_row", 1.0, 0.25),
        ("naive_column", 0.25, 1.0),
        ("unroll4_row", 1.0, 0.25),
        ("unroll4_column", 0.25, 1.0),
        ("diagonal_row", 1.0, 0.25),
        ("diagonal_column", 0.25, 1.0),
    ],
)
def test_transpose_sector_efficiency(variant, load_efficiency, store_efficiency):
    model = models.transpose(1024, variant=variant)
    expected = model.count("load_bytes") / load_efficiency + model.count("store_bytes") / store_efficiency
    assert model.l2_bytes == pytest.approx(expected)
    assert model.count("requested_bytes") == 8 * 1024 * 1024


@pytest.mark.parametrize(
    "block, pad, ways",
    [
        # Cheng ch.5 transposeSmem (32 x 16 block): reading a tile column is a 16-way
        # conflict; transposeSmemPad with IPAD = 2 removes it.
        ((32, 16), None, 16),
        ((32, 16), 2, 1),
        # 32 x 32 tile: 32-way, padding by one float is conflict free (Cheng ch.5, Fig 5-13).
        ((32, 32), None, 32),
        ((32, 32), 1, 1),
    ],
)
def test_shared_transpose_bank_conflicts(block, pad, ways):
    variant = "shared" if pad is None else "shared_padded"
    model = models.transpose(256, variant=variant, block=block, pad=pad)
    assert model.bank_conflict_ways == ways
    assert model.launch.static_shared_memory == block[1] * (block[0] + (pad or 0)) * 4
    assert model.l2_bytes == model.count("requested_bytes")  # both sides coalesced


def test_default_pad_is_conflict_free_when_possible():
    assert models.transpose(256, variant="shared_padded", block=(32, 32)).parameters["pad"] == 1
    assert models.transpose(256, variant="shared_padded", block=(32, 16)).parameters["pad"] == 2


def test_strided_reads_move_whole_sectors():
    for stride, sectors_per_warp in ((1, 4), (2, 8), (4, 16), (8, 32), (16, 32)):
        model = models.strided_read(1 << 16, stride)
        load_l2 = model.l2_bytes - model.count("store_bytes")
        assert load_l2 / (model.count("load_bytes") / 128) == sectors_per_warp * 32
    assert models.strided_read(1 << 16, 8).dram_bytes == (1 << 13) * 32 + (1 << 13) * 4


def test_reduction_counts():
    model = models.reduction(1000, block=256)
    assert model.flops == 1000 - 4  # n - 1 adds overall, minus the 3 left for a second pass
    assert (model.count("load_bytes"), model.count("store_bytes")) == (4000, 16)
    assert model.launch.static_shared_memory == 1024
    with pytest.raises(RooflineError, match="power of two"):
        models.reduction(1000, block=96)


def test_blur_flops_count_in_image_pixels_only():
    # 3 x 3 image, r = 1: corners see 4 pixels, edges 6, the centre 9; plus 9 divides.
    assert models.blur(3, 3, radius=1).flops == 4 * 4 + 4 * 6 + 9 + 9
    assert models.blur(1, 1, radius=5).count("load_bytes") == 4


# ---------------------------------------------------------------- brute-force oracle


def _brute(grid, block, thread_slots):
    """Walk every warp of the grid; thread_slots(bx, by, tx, ty) -> [(address|None, op)].

    Uses roofline.memory.warp_transactions (uncached: 32-byte sectors) per warp-instruction,
    independent of the models' block-class shortcut.
    """
    load = store = l2 = 0
    threads = [(tx, ty) for ty in range(block[1]) for tx in range(block[0])]
    for by in range(grid[1]):
        for bx in range(grid[0]):
            for w in range(0, len(threads), 32):
                lanes = [thread_slots(bx, by, tx, ty) for tx, ty in threads[w : w + 32]]
                for slot in range(len(lanes[0])):
                    addresses = [lane[slot][0] for lane in lanes]
                    op = lanes[0][slot][1]
                    active = sum(a is not None for a in addresses)
                    if op == "load":
                        load += 4 * active
                    else:
                        store += 4 * active
                    if active:
                        l2 += 32 * warp_transactions(addresses, cached=False).sectors
    return load, store, l2


def _copy_slots(n, B):
    def slots(bx, by, tx, ty):
        i = bx * B + tx
        a = 4 * i if i < n else None
        return [(a, "load"), (a, "store")]

    return slots


def _offset_slots(n, B, off, write):
    def slots(bx, by, tx, ty):
        i = bx * B + tx
        ok = i + off < n
        shifted, plain = (4 * (i + off), 4 * i) if ok else (None, None)
        if write:
            return [(plain, "load"), (plain, "load"), (shifted, "store")]
        return [(shifted, "load"), (shifted, "load"), (plain, "store")]

    return slots


def _strided_slots(m, B, stride, write):
    def slots(bx, by, tx, ty):
        i = bx * B + tx
        far, near = (4 * i * stride, 4 * i) if i < m else (None, None)
        return [(near, "load"), (far, "store")] if write else [(far, "load"), (near, "store")]

    return slots


def _aos_slots(n, B):
    def slots(bx, by, tx, ty):
        i = bx * B + tx
        ok = i < n
        x, y = (8 * i, 8 * i + 4) if ok else (None, None)
        return [(x, "load"), (y, "load"), (x, "store"), (y, "store")]

    return slots


def _reduction_slots(n, B):
    def slots(bx, by, tx, ty):
        i = bx * B + tx
        return [(4 * i if i < n else None, "load"), (4 * bx if tx == 0 else None, "store")]

    return slots


def _blur_slots(w, h, r, bxd, byd):
    def slots(bx, by, tx, ty):
        col, row = bx * bxd + tx, by * byd + ty
        inside = col < w and row < h
        out = []
        for dy in range(-r, r + 1):
            for dx in range(-r, r + 1):
                y, x = row + dy, col + dx
                ok = inside and 0 <= y < h and 0 <= x < w
                out.append((4 * (y * w + x) if ok else None, "load"))
        out.append((4 * (row * w + col) if inside else None, "store"))
        return out

    return slots


def _naive_mm_slots(m, k, n, bxd, byd):
    def slots(bx, by, tx, ty):
        row, col = by * byd + ty, bx * bxd + tx
        ok = row < m and col < n
        out = []
        for p in range(k):
            out.append((4 * (row * k + p) if ok else None, "load"))
            out.append((4 * (p * n + col) if ok else None, "load"))
        out.append((4 * (row * n + col) if ok else None, "store"))
        return out

    return slots


def _tiled_mm_slots(m, k, n, t):
    def slots(bx, by, tx, ty):
        row, col = by * t + ty, bx * t + tx
        out = []
        for ph in range(-(-k // t)):
            a_ok = row < m and ph * t + tx < k
            b_ok = ph * t + ty < k and col < n
            out.append((4 * (row * k + ph * t + tx) if a_ok else None, "load"))
            out.append((4 * ((ph * t + ty) * n + col) if b_ok else None, "load"))
        out.append((4 * (row * n + col) if row < m and col < n else None, "store"))
        return out

    return slots


def _transpose_slots(variant, nx, ny, bxd, byd, gx, gy):
    def slots(bx, by, tx, ty):
        if variant.startswith("diagonal"):
            bid = bx + gx * by
            by_, bx_ = bid % gy, 0
            bx_ = (bid // gy + by_) % gx
            bx, by = bx_, by_
        unroll = 4 if variant.startswith("unroll4") else 1
        out = []
        for j in range(unroll):
            x = bx * bxd * unroll + tx + j * bxd
            y = by * byd + ty
            ok = x < nx and y < ny
            row, col = 4 * (y * nx + x), 4 * (x * ny + y)
            reads_rows = variant.endswith("_row")
            if variant.startswith("copy"):
                load = store = row if reads_rows else col
            else:
                load, store = (row, col) if reads_rows else (col, row)
            out += [(load if ok else None, "load"), (store if ok else None, "store")]
        return out

    return slots


def _shared_transpose_slots(nx, ny, bxd, byd):
    def slots(bx, by, tx, ty):
        x, y = bx * bxd + tx, by * byd + ty
        b = ty * bxd + tx
        out_col, out_row = by * byd + b % byd, bx * bxd + b // byd
        store_ok = out_col < ny and out_row < nx
        return [
            (4 * (y * nx + x) if x < nx and y < ny else None, "load"),
            (4 * (out_row * ny + out_col) if store_ok else None, "store"),
        ]

    return slots


def _cases():
    c = -(-1000 // 3)
    yield "copy", models.copy(1000, block=96), (11, 1), (96, 1), _copy_slots(1000, 96)
    yield "offset_read", models.offset_read(1000, 11, block=64), (16, 1), (64, 1), _offset_slots(1000, 64, 11, False)
    yield "offset_write", models.offset_write(1000, 5, block=64), (16, 1), (64, 1), _offset_slots(1000, 64, 5, True)
    yield "strided_read", models.strided_read(1000, 3, block=64), (-(-c // 64), 1), (64, 1), _strided_slots(c, 64, 3, False)
    yield "strided_write", models.strided_write(1000, 3, block=64), (-(-c // 64), 1), (64, 1), _strided_slots(c, 64, 3, True)
    yield "aos", models.aos(333, block=64), (6, 1), (64, 1), _aos_slots(333, 64)
    yield "reduction", models.reduction(1000, block=64), (16, 1), (64, 1), _reduction_slots(1000, 64)
    yield "blur", models.blur(37, 23, radius=2, block=(8, 4)), (5, 6), (8, 4), _blur_slots(37, 23, 2, 8, 4)
    yield "matmul_naive", models.matmul_naive(19, 13, 11, block=(8, 4)), (2, 5), (8, 4), _naive_mm_slots(19, 13, 11, 8, 4)
    yield "matmul_tiled4", models.matmul_tiled(19, 13, 11, tile=4), (3, 5), (4, 4), _tiled_mm_slots(19, 13, 11, 4)
    yield "matmul_tiled8", models.matmul_tiled(19, 37, 11, tile=8), (2, 3), (8, 8), _tiled_mm_slots(19, 37, 11, 8)
    for variant in _transpose.TRANSPOSE_VARIANTS[:-2]:
        gx = -(-37 // (32 if variant.startswith("unroll4") else 8))
        yield (
            f"transpose_{variant}",
            models.transpose(29, 37, variant=variant, block=(8, 4)),
            (gx, 8),
            (8, 4),
            _transpose_slots(variant, 37, 29, 8, 4, gx, 8),
        )
    yield "transpose_shared", models.transpose(29, 37, variant="shared", block=(8, 4)), (5, 8), (8, 4), _shared_transpose_slots(37, 29, 8, 4)


CASES = list(_cases())


@pytest.mark.parametrize("model, grid, block, slots", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_traffic_matches_brute_force(model, grid, block, slots):
    assert model.launch.grid[:2] == grid and model.launch.block[:2] == block
    load, store, l2 = _brute(grid, block, slots)
    assert (model.count("load_bytes"), model.count("store_bytes"), model.l2_bytes) == (load, store, l2)


def test_large_grids_match_brute_force_on_classes():
    # The class shortcut must hold beyond its 8-block period: 21 x 19 blocks.
    model = models.transpose(75, 163, variant="naive_column", block=(8, 4))
    assert (model.count("load_bytes"), model.count("store_bytes"), model.l2_bytes) == _brute(
        (21, 19), (8, 4), _transpose_slots("naive_column", 163, 75, 8, 4, 21, 19)
    )


# ---------------------------------------------------------------- launch, suite, registry


def test_launch_geometry():
    assert models.matmul_tiled(1000, 300, 70, tile=16).launch.grid == (5, 63, 1)
    assert models.matmul_tiled(64, tile=16).launch.static_shared_memory == 2 * 16 * 16 * 4
    assert models.transpose(100, 200, variant="unroll4_row").launch.grid == (4, 7, 1)
    launch = models.blur(100, 50).launch
    assert (launch.threads_per_block, launch.blocks, launch.threads) == (256, 28, 7168)


def test_suite_fills_a_large_gpu():
    suite = models.suite()
    labels = [m.label for m in suite]
    for required in (
        "copy", "vector_add", "triad", "blur(radius=1)", "blur(radius=3)", "matmul_naive",
        "matmul_tiled(tile=16)", "matmul_tiled(tile=32)", "transpose(variant=naive_row)",
        "transpose(variant=naive_column)", "transpose(variant=shared)",
        "transpose(variant=shared_padded)", "offset_read(offset=11)",
        "strided_read(stride=2)", "strided_read(stride=8)", "aos", "soa", "reduction",
    ):
        assert required in labels
    h100_l2 = 50 * 2**20  # H100 SXM whitepaper: 50 MB L2
    for model in suite:
        if model.arithmetic_intensity < 1:  # the memory-bound ones
            assert model.dram_bytes > 2 * h100_l2, model.label


@pytest.mark.parametrize("model", models.suite(), ids=lambda m: m.label)
def test_suite_round_trips_through_get_and_json(model):
    again = models.get(model.name, **json.loads(json.dumps(model.parameters)))
    assert again == model
    dumped = json.loads(model.model_dump_json())
    assert roofline.Kernel.model_validate(dumped).count("requested_bytes") == model.count("requested_bytes") > 0
    assert model.dram_bytes <= model.l2_bytes or model.name in ("matmul_naive",)
    assert model.launch.threads_per_block <= 1024


def test_get_errors_name_the_choices():
    with pytest.raises(RooflineError, match="did you mean matmul_tiled"):
        models.get("matmul_tile")
    with pytest.raises(RooflineError, match="parameters: m, k, n, tile"):
        models.get("matmul_tiled", m=64, radius=1)
    with pytest.raises(TypeError):
        models.get(3)


@pytest.mark.parametrize(
    "call, error",
    [
        (lambda: models.copy(0), RooflineError),
        (lambda: models.copy(10, block=2048), RooflineError),
        (lambda: models.copy(10.5), TypeError),
        (lambda: models.offset_read(10, 10), RooflineError),
        (lambda: models.matmul_tiled(64, tile=33), RooflineError),
        (lambda: models.blur(10, 10, block=(64, 32)), RooflineError),
        (lambda: models.transpose(64, variant="fast"), RooflineError),
        (lambda: models.transpose(64, variant="naive_row", pad=1), RooflineError),
        (lambda: models.blur(10, 10, radius=-1), RooflineError),
    ],
    ids=["n=0", "block 2048", "float n", "offset=n", "tile 33", "block 2048 2d",
         "unknown variant", "pad on naive", "negative radius"],
)
def test_bad_arguments(call, error):
    with pytest.raises(error):
        call()


def test_names_and_all():
    assert models.names() == tuple(sorted(models.names()))
    for name in models.names():
        assert callable(getattr(models, name))
    public = {n for n in vars(models) if not n.startswith("_")} - {"annotations"}
    assert set(models.__all__) == public
    assert models.__all__ == sorted(models.__all__)


def test_intensities_are_infinite_without_bytes():
    model = models.copy(8).model_copy(update={"load_bytes": 0, "store_bytes": 0, "dram_bytes": 0})
    assert math.isinf(model.arithmetic_intensity) and math.isinf(model.dram_arithmetic_intensity)


def test_doctests():
    for module in (models, _elementwise, _matmul, _registry, _stencil, _transpose):
        assert doctest.testmod(module, optionflags=doctest.ELLIPSIS).failed == 0
