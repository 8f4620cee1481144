"""Access descriptions of the corpus's cuda_samples kernels (see the package docstring)."""

from __future__ import annotations

import re

from roofline.memory import Access, Coords
from roofline.memory import bank_conflicts

from ._description import Describe, Description, tokens

__all__ = ["KERNELS"]

KERNELS: dict[str, Describe] = {}


# ----------------------------------------------------------------------------- shape helpers


def _n(launch) -> int:
    """The ``n=`` token of the shape."""
    return int(tokens(launch.shape)["n"])


def _side(launch) -> int:
    """The matrix side of a ``"1024^3 ..."`` or ``"1024x1024 ..."`` shape."""
    return int(re.match(r"(\d+)", launch.shape).group(1))


def _image(launch) -> tuple[int, int]:
    """Width and height of a ``"WxH"`` shape."""
    w, h = re.match(r"(\d+)x(\d+)", launch.shape).groups()
    return int(w), int(h)


def _first(launch) -> int:
    """The first number of the shape (keys, partial histograms, ...)."""
    return int(re.match(r"(\d+)", launch.shape).group(1))


def _mib(launch) -> int:
    """Bytes of a ``"64 MiB"`` shape."""
    return int(re.match(r"(\d+) MiB", launch.shape).group(1)) << 20


def _lane(c: Coords):
    return c.thread_x % 32


def _first_thread(c: Coords):
    return c.thread_x == 0


def _with_counts(describe, counts):
    """``describe``'s accesses with the counts ``counts(launch)``."""
    def described(launch) -> Description:
        return Description(accesses=describe(launch).accesses, counts=counts(launch))
    return described


def _log2(x: int) -> int:
    return x.bit_length() - 1


def _issued(words) -> int:
    """Wavefronts of one warp's 4-byte shared access at these word offsets (None: lane off).

    The compiled code predicates the shared accesses of the reduction trees rather than
    branching around them, so a warp whose lanes are all off still issues the instruction,
    and Nsight counts it as one wavefront."""
    return max(1, bank_conflicts([None if w is None else 4 * w for w in words]).wavefronts)


# ----------------------------------------------------------------------------- introduction


def _vector_add(launch) -> Description:
    """vectorAdd: thread i adds A[i] and B[i] into C[i]."""
    n = _n(launch)

    def inside(c: Coords):
        return c.x < n

    return Description(accesses=(
        Access(array="A", index=lambda c: c.x, guard=inside),
        Access(array="B", index=lambda c: c.x, guard=inside),
        Access(array="C", index=lambda c: c.x, guard=inside, kind="store"),
    ))


def _matrix_mul(launch) -> Description:
    """matrixMul: a block of BSxBS threads walks A's block row and B's block column tile by tile
    (one element of each per thread per tile), then writes its element of C."""
    n, bs = _side(launch), launch.block[0]
    return Description(accesses=(
        Access(array="A", index=lambda c: c.y * n + c.loop * bs + c.thread_x, loop=n // bs),
        Access(array="B", index=lambda c: (c.loop * bs + c.thread_y) * n + c.x, loop=n // bs),
        Access(array="C", index=lambda c: c.y * n + c.x, kind="store"),
    ), counts={
        # per warp and tile: 2 stores (As, Bs; 32 consecutive words), BS loads of Bs[k][tx]
        # (one wavefront: at most 32 distinct consecutive words) and BS/4 LDS.128 of the As row
        # (the row is vectorised; a 16-byte load serves a half-warp per wavefront: 2 each)
        "shared_wavefronts": launch.warps * (n // bs) * (2 + bs + 2 * (bs // 4)),
        "barriers_per_block": 2 * (n // bs),
    })


KERNELS["vectorAdd"] = _vector_add
KERNELS["matrixMul.16"] = _matrix_mul
KERNELS["matrixMul.32"] = _matrix_mul


# ----------------------------------------------------------------------------- domain specific


def _black_scholes(launch) -> Description:
    """BlackScholes: thread i prices options 2i and 2i+1 (float2 loads of price, strike and
    years; float2 stores of call and put), for i < n/2."""
    half = _n(launch) // 2

    def inside(c: Coords):
        return c.x < half

    def at(c: Coords):
        return c.x

    return Description(accesses=(
        *(Access(array=a, index=at, guard=inside, element_bytes=8) for a in ("price", "strike", "years")),
        *(Access(array=a, index=at, guard=inside, element_bytes=8, kind="store") for a in ("call", "put")),
    ))


KERNELS["BlackScholes"] = _black_scholes


# ----------------------------------------------------------------------------- convolutionSeparable

_STEPS = 8  # result steps per thread (and one halo step each side, which covers the radius of 8)
_RADIUS = 8  # the filter's radius (17 taps)


def _separable(launch, along_rows: bool) -> Description:
    """One pass of the separable convolution along rows (`along_rows`: a 16x4 block, 8 segments
    of 16 pixels) or columns (a 16x8 block, 8 segments of 8 rows): each thread one pixel per
    segment, loading them plus a halo segment on each side (halos outside the image skipped)."""
    w, h = _image(launch)
    step_size = launch.block[0] if along_rows else launch.block[1]  # 16 along a row, 8 down a column
    extent = w if along_rows else h

    def base(c: Coords):
        return (c.block_x * _STEPS - 1) * step_size + c.thread_x if along_rows else \
            (c.block_y * _STEPS - 1) * step_size + c.thread_y

    def at(c: Coords, step):
        return c.y * w + base(c) + step * step_size if along_rows else (base(c) + step * step_size) * w + c.x

    def main(c: Coords):
        return at(c, c.loop + 1)

    return Description(accesses=(
        Access(array="src", index=main, loop=_STEPS),
        Access(array="src", index=lambda c: at(c, 0), guard=lambda c: base(c) >= 0),
        Access(array="src", index=lambda c: at(c, _STEPS + 1),
               guard=lambda c: extent - base(c) > (_STEPS + 1) * step_size),
        Access(array="dst", index=main, loop=_STEPS, kind="store"),
    ), counts={
        # every shared access is 2-way: along rows a warp is two rows of the tile, 160 words apart
        # (same banks); down columns the tile is stored by columns (81 words per x) and a warp is
        # 16 x by 2 y, x * 81 + y putting two lanes in one bank. Each thread stores its 10 pixels
        # and loads the (8 - 1) x step + 2 x radius + 1 distinct taps its 8 outputs need (129
        # along rows, 73 down columns; the compiler loads each once).
        "shared_wavefronts": launch.warps * 2 * ((_STEPS + 2) + ((_STEPS - 1) * step_size + 2 * _RADIUS + 1)),
        "barriers_per_block": 1,
    })


def _convolution_rows(launch) -> Description:
    """convolutionRows (`_separable` along rows)."""
    return _separable(launch, along_rows=True)


def _convolution_columns(launch) -> Description:
    """convolutionColumns (`_separable` down columns)."""
    return _separable(launch, along_rows=False)


KERNELS["convolutionSeparable.rows"] = _convolution_rows
KERNELS["convolutionSeparable.columns"] = _convolution_columns


# ----------------------------------------------------------------------------- tensor-core GEMMs


def _wmma_gemm(launch, k_step: int) -> Description:
    """simple_wmma_gemm: each warp computes a 16x16 tile of D = A*B + C (A row-major, B stored by
    columns, both of n x n), stepping k by ``k_step``.

    The compiled fragment loads are 4-byte loads in the mma.sync register layout: each load
    instruction reads 8 rows (of A, or columns of B) x 16 bytes: lane l takes row ``l/4`` (or
    that row + 8) and the ``l%4``-th 4-byte word of its 16-byte piece. fp16 (k_step 16): a word is
    two halves, 4 words per row; tf32 (k_step 8): one float each. C and D move in 8-byte pairs,
    8 rows x 32 bytes per instruction, 4 instructions per warp.
    """
    n = _side(launch)
    per_word = 2 if k_step == 16 else 1  # elements of A/B per 4-byte word
    row_words = n // per_word           # words per row of A (and per column of B)

    def warp_m(c: Coords):
        return c.x // 32

    def warp_n(c: Coords):
        return c.y

    def group(c: Coords):
        return _lane(c) // 4

    def quad(c: Coords):
        return c.thread_x % 4

    def fragment(rows, j: int):
        """4-byte words of rows x k: instruction j takes rows +8*(j%2) and words +4*(j//2) (fp16)
        or +4 floats (tf32): 8 rows x 4 consecutive words."""
        def index(c: Coords):
            row = rows(c) * 16 + group(c) + 8 * (j % 2)
            word = c.loop * (k_step // per_word) + quad(c) + 4 * (j // 2)
            return row * row_words + word
        return index

    def tile(j: int):
        """8-byte pairs of the 16x16 float tile of C or D: rows +8*(j%2), columns +8*(j//2)."""
        def index(c: Coords):
            row = warp_m(c) * 16 + group(c) + 8 * (j % 2)
            column = warp_n(c) * 16 + 8 * (j // 2) + 2 * quad(c)
            return (row * n + column) // 2
        return index

    loop = n // k_step
    return Description(accesses=(
        *(Access(array="a", index=fragment(warp_m, j), loop=loop) for j in range(4)),
        *(Access(array="b", index=fragment(warp_n, j), loop=loop) for j in range(4)),
        *(Access(array="c", index=tile(j), element_bytes=8) for j in range(4)),
        *(Access(array="d", index=tile(j), element_bytes=8, kind="store") for j in range(4)),
    ))


KERNELS["cudaTensorCoreGemm.simple_wmma_gemm"] = lambda launch: _wmma_gemm(launch, 16)
KERNELS["tf32TensorCoreGemm.simple_wmma_tf32gemm"] = lambda launch: _wmma_gemm(launch, 8)


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
    words = _mib(launch) // 4
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
    quads = _mib(launch) // 16
    stride = launch.grid[0] * launch.threads_per_block
    return Description(accesses=(
        *_grid_stride("data", quads, stride, element_bytes=16),
        Access(array="partial", index=lambda c: c.block_x * 64 + c.thread_x,
               guard=lambda c: c.thread_x < 64, kind="store"),
    ))


def _merge_histogram256(launch) -> Description:
    """mergeHistogram256: block b sums bin b over the partial histograms (thread t takes partials
    t, t+256, ...: a stride of 256 words between lanes), thread 0 writes the total."""
    count = _first(launch)
    threads = launch.threads_per_block
    bins = 256
    return Description(accesses=(
        Access(array="partial", index=lambda c: c.block_x + (c.thread_x + c.loop * threads) * bins,
               guard=lambda c: c.thread_x + c.loop * threads < count, loop=-(-count // threads)),
        Access(array="histogram", index=lambda c: c.block_x, guard=_first_thread, kind="store"),
    ))


#: Expected wavefronts of a shared atomic of 32 lanes on uniformly random bytes into one warp's
#: 256-word histogram (8 words a bank; the largest bank's distinct words): 3.15.
_RANDOM_BYTE_ATOMIC = 3.15


def _histogram256_counts(launch) -> dict:
    """histogram256: each thread zeroes 256 x 6 / 192 = 8 words; each word of data is 4 shared
    atomics of its warp (one per byte: ``_RANDOM_BYTE_ATOMIC`` wavefronts, 1 for the launch
    whose data is one value); then threads t < 256 (t and t + 192 < 256) sum a bin over the 6
    warp histograms (6 conflict-free loads each, per warp with such threads)."""
    words = _mib(launch) // 4
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
    steps = _log2(b)
    return {"shared_wavefronts": launch.warps * (1 + 3 * steps + 1), "barriers_per_block": steps}


KERNELS["histogram256"] = _with_counts(_histogram256, _histogram256_counts)
KERNELS["histogram256.merge"] = _with_counts(_merge_histogram256, _merge_counts)
KERNELS["histogram64"] = _histogram64


# ----------------------------------------------------------------------------- reduction


def _reduce_one(launch) -> Description:
    """reduce0/1/2: thread i loads element i; thread 0 writes the block's sum."""
    n = _n(launch)
    return Description(accesses=(
        Access(array="in", index=lambda c: c.x, guard=lambda c: c.x < n),
        Access(array="out", index=lambda c: c.block_x, guard=_first_thread, kind="store"),
    ))


def _reduce_two(launch) -> Description:
    """reduce3/4/5: a block covers 2 x blockDim elements, each thread loading one from each half;
    thread 0 writes the block's sum."""
    n, b = _n(launch), launch.block[0]

    def first(c: Coords):
        return c.block_x * 2 * b + c.thread_x

    return Description(accesses=(
        Access(array="in", index=first, guard=lambda c: first(c) < n),
        Access(array="in", index=lambda c: first(c) + b, guard=lambda c: first(c) + b < n),
        Access(array="out", index=lambda c: c.block_x, guard=_first_thread, kind="store"),
    ))


def _reduce6(launch) -> Description:
    """reduce6: a grid-stride loop over pairs of blockDim elements (stride 2 x blockDim x
    gridDim), each thread loading one of each pair; thread 0 writes the block's sum."""
    n, b, g = _n(launch), launch.block[0], launch.grid[0]
    stride = 2 * b * g

    def first(c: Coords):
        return c.block_x * 2 * b + c.thread_x + c.loop * stride

    loop = -(-n // stride)
    return Description(accesses=(
        Access(array="in", index=first, guard=lambda c: first(c) < n, loop=loop),
        Access(array="in", index=lambda c: first(c) + b, guard=lambda c: first(c) + b < n, loop=loop),
        Access(array="out", index=lambda c: c.block_x, guard=_first_thread, kind="store"),
    ))


def _tree_wavefronts(b: int, pairs, loads: int) -> int:
    """Shared wavefronts of one block's reduction tree: every warp issues each step's accesses
    (predicated, see `_issued`); ``pairs(s, tid)`` gives the word a thread updates in step ``s``
    (None when off), which also loads the word ``s`` above it (``loads`` of the two are LDS)."""
    total = 0
    for s in _tree_steps(b):
        for w in range(b // 32):
            at = [pairs(s, t) for t in range(32 * w, 32 * w + 32)]
            above = [None if a is None else a + s for a in at]
            total += (loads - 1) * _issued(at) + _issued(above) + _issued(at)  # LDS(s) + STS
    return total


def _tree_steps(b: int):
    return [1 << k for k in range(_log2(b))]


def _with_tree(describe, kind: str):
    """reduce0-3: the block stores its values (one STS a warp), then log2(B) steps (a barrier
    each, after the first one): reduce0 updates word tid when tid % 2s == 0, reduce1 word
    2s x tid (stride-2s lanes: bank conflicts), reduce2/3 word tid for tid < s; reduce0-2 load
    both words, reduce3 keeps its own sum in a register (one LDS). reduce0-2 end with thread 0's
    load of word 0 (issued by every warp)."""
    def described(launch) -> Description:
        b = launch.block[0]
        pairs = {
            "0": lambda s, t: t if t % (2 * s) == 0 else None,
            "1": lambda s, t: 2 * s * t if 2 * s * t < b else None,
            "2": lambda s, t: t if t < s else None,
            "3": lambda s, t: t if t < s else None,
        }[kind]
        per_block = (b // 32) + _tree_wavefronts(b, pairs, 1 if kind == "3" else 2)
        if kind != "3":
            per_block += b // 32
        d = describe(launch)
        return Description(accesses=d.accesses, counts={
            "shared_wavefronts": launch.blocks * per_block,
            "barriers_per_block": 1 + _log2(b),
        })
    return described


def _with_unrolled(describe, looped: bool):
    """reduce4/5/6: the block stores its sums (one STS a warp), halves them down to 64 words
    (for s = B/2 .. 64: one LDS and one STS a warp, predicated, a barrier each: a loop in
    reduce4, unrolled with fixed barriers for s = 256, 128, 64 in reduce5/6), then warp 0 loads
    word tid + 32 and finishes with 5 shuffles (not shared accesses)."""
    def described(launch) -> Description:
        b = launch.block[0]
        warps = b // 32
        steps = max(_log2(b) - 6, 0)
        per_block = warps + 2 * warps * steps + 1
        d = describe(launch)
        return Description(accesses=d.accesses, counts={
            "shared_wavefronts": launch.blocks * per_block,
            "barriers_per_block": 1 + steps if looped else 4,
        })
    return described


for _k in ("0", "1", "2"):
    KERNELS[f"reduction.reduce{_k}"] = _with_tree(_reduce_one, _k)
KERNELS["reduction.reduce3"] = _with_tree(_reduce_two, "3")
KERNELS["reduction.reduce4"] = _with_unrolled(_reduce_two, True)
KERNELS["reduction.reduce5"] = _with_unrolled(_reduce_two, False)
KERNELS["reduction.reduce6"] = _with_unrolled(_reduce6, False)


# ----------------------------------------------------------------------------- scalarProd

def _scalar_prod(launch) -> Description:
    """scalarProd: block b takes vectors b, b + gridDim, ...; for each, thread t reads elements
    t + blockDim j of A and B (its accumulators t + blockDim i, each striding by 1024 through the
    vector: the block reads each element once, a warp 32 consecutive ones), thread 0 writes the product.

    The order of j (the source's two nested loops) does not change the count, so they are one
    loop here. The vector loop and the element loop cannot be one affine loop, so the shorter of
    the two is spelt out access by access.
    """
    vectors, elements = map(int, re.match(r"(\d+) vectors x (\d+)", launch.shape).groups())
    grid, b = launch.grid[0], launch.block[0]
    trips = -(-vectors // grid)            # vector-loop trips of block 0
    pieces = -(-elements // b)             # blockDim-long pieces of a vector

    def vector(c: Coords, v):
        return c.block_x + v * grid

    def element(c: Coords, j):
        return j * b + c.thread_x

    def access(array: str, v, j, loop: int) -> Access:
        return Access(array=array, loop=loop,
                      index=lambda c: vector(c, v(c)) * elements + element(c, j(c)),
                      guard=lambda c: (vector(c, v(c)) < vectors) & (element(c, j(c)) < elements))

    accesses = []
    if trips <= pieces:  # a loop over the pieces of each vector
        for v in range(trips):
            accesses += [access(a, lambda c, v=v: v, lambda c: c.loop, pieces) for a in ("A", "B")]
    else:                # a loop over the vectors, per piece
        for j in range(pieces):
            accesses += [access(a, lambda c: c.loop, lambda c, j=j: j, trips) for a in ("A", "B")]
    accesses.append(Access(array="C", index=lambda c: vector(c, c.loop), loop=trips, kind="store",
                           guard=lambda c: _first_thread(c) & (vector(c, c.loop) < vectors)))
    return Description(accesses=tuple(accesses))


KERNELS["scalarProd"] = _scalar_prod


# ----------------------------------------------------------------------------- scans


def _scan_exclusive_shared(launch) -> Description:
    """scanExclusiveShared: thread i reads and writes uint4 i (the scan is in shared memory)."""
    return Description(accesses=(
        Access(array="src", index=lambda c: c.x, element_bytes=16),
        Access(array="dst", index=lambda c: c.x, element_bytes=16, kind="store"),
    ))


def _uniform_update(launch) -> Description:
    """uniformUpdate: thread 0 reads its block's offset; every thread adds it to its uint4."""
    return Description(accesses=(
        Access(array="buffer", index=lambda c: c.block_x, guard=_first_thread),
        Access(array="data", index=lambda c: c.x, element_bytes=16),
        Access(array="data", index=lambda c: c.x, element_bytes=16, kind="store"),
    ))


def _shfl_scan(launch) -> Description:
    """shfl_scan_test: thread i reads and writes element i; the block's last thread also writes
    the block's sum to the partial sums."""
    b = launch.block[0]
    return Description(accesses=(
        Access(array="data", index=lambda c: c.x),
        Access(array="data", index=lambda c: c.x, kind="store"),
        Access(array="partial", index=lambda c: c.block_x, guard=lambda c: c.thread_x == b - 1, kind="store"),
    ))


def _scan_counts(launch) -> dict:
    """scanExclusiveShared (arrays of 1024: a 256-word scan of the threads' uint4 sums): each
    thread stores a zero and its sum (2 STS), then per offset 1 .. 128 loads two words, and
    after a second barrier stores one; a final load. All conflict-free (consecutive words)."""
    steps = _log2(launch.threads_per_block)
    return {"shared_wavefronts": launch.warps * (2 + steps + 2 * steps + 1),
            "barriers_per_block": 2 * steps}


def _uniform_counts(launch) -> dict:
    """uniformUpdate: thread 0 stores the block's offset; every warp loads it (a broadcast)."""
    return {"shared_wavefronts": launch.blocks + launch.warps, "barriers_per_block": 1}


KERNELS["scan.exclusiveShared"] = _with_counts(_scan_exclusive_shared, _scan_counts)
KERNELS["scan.uniformUpdate"] = _with_counts(_uniform_update, _uniform_counts)
KERNELS["shfl_scan"] = _shfl_scan


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
    lg = _log2(length)
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
    n = _first(launch)
    half = n // 2

    def at(offset: int):
        return lambda c: c.x + offset

    return Description(accesses=tuple(
        Access(array=f"{kind}_{a}", index=at(o), kind="load" if kind == "src" else "store")
        for kind in ("src", "dst") for a in _KEY_ARRAYS for o in (0, half)
    ))


KERNELS["sortingNetworks.bitonicSortShared"] = _bitonic_sort_shared
KERNELS["sortingNetworks.bitonicMergeGlobal"] = _bitonic_merge_global


# ----------------------------------------------------------------------------- transpose

_TILE = 32  # a block moves a 32x32 tile with 32x16 threads: two rows per thread


def _tile_row(c: Coords, block):
    """Row of the tile (of the block index ``block``) this thread handles in loop trip c.loop."""
    return block * _TILE + c.thread_y + c.loop * (_TILE // 2)


def _row_major(block_col, block_row, width):
    """Element (row, column) of a row-major matrix of ``width`` columns, thread-x along the row."""
    return lambda c: _tile_row(c, block_row(c)) * width + block_col(c) * _TILE + c.thread_x


def _bx(c: Coords):
    return c.block_x


def _by(c: Coords):
    return c.block_y


def _transpose_copy(launch) -> Description:
    """copy / copySharedMem: each thread copies two elements of its tile, rows ty and ty+16."""
    n = _side(launch)
    at = _row_major(_bx, _by, n)
    return Description(accesses=(
        Access(array="idata", index=at, loop=2),
        Access(array="odata", index=at, loop=2, kind="store"),
    ))


def _transpose_tiled(launch) -> Description:
    """transposeCoalesced / NoBankConflicts / CoarseGrained: tile (bx, by) is read by rows and,
    through shared memory, written by rows as tile (by, bx) of the output."""
    n = _side(launch)
    return Description(accesses=(
        Access(array="idata", index=_row_major(_bx, _by, n), loop=2),
        Access(array="odata", index=_row_major(_by, _bx, n), loop=2, kind="store"),
    ))


def _transpose_diagonal(launch) -> Description:
    """transposeDiagonal: as transposeCoalesced, but block (bx, by) takes the tile
    ((bx + by) mod gridDim.x, bx) (square matrices).

    That reordering is a bijection of blocks onto tiles and not affine in the block index; the
    counts do not depend on which block takes which tile, so the tiles are described in the plain
    order (the same accesses, in another block order).
    """
    return _transpose_tiled(launch)


def _transpose_fine(launch) -> Description:
    """transposeFineGrained: reads its tile by rows and writes the transposed tile in place
    (the same positions of the output as it read)."""
    return _transpose_copy(launch)


def _transpose_naive(launch) -> Description:
    """transposeNaive: reads element (row, col) by rows and writes it to (col, row): a warp's
    32 stores land in 32 different rows."""
    n = _side(launch)

    def out(c: Coords):
        return (c.block_x * _TILE + c.thread_x) * n + _tile_row(c, c.block_y)

    return Description(accesses=(
        Access(array="idata", index=_row_major(_bx, _by, n), loop=2),
        Access(array="odata", index=out, loop=2, kind="store"),
    ))


def _through_tile(describe, column_ways: int):
    """A tiled kernel: each warp stores two rows of the 32x32 tile (conflict-free) and, after
    one barrier, loads two rows or columns of it: a column of the unpadded tile is 32 words in
    one bank (32 wavefronts), of the padded (33-word rows) tile or a row, one."""
    def described(launch) -> Description:
        d = describe(launch)
        return Description(accesses=d.accesses, counts={
            "shared_wavefronts": launch.warps * 2 * (1 + column_ways),
            "barriers_per_block": 1,
        })
    return described


KERNELS["transpose.copy"] = _transpose_copy
KERNELS["transpose.copySharedMem"] = _through_tile(_transpose_copy, 1)
KERNELS["transpose.transposeCoalesced"] = _through_tile(_transpose_tiled, 32)
KERNELS["transpose.transposeNoBankConflicts"] = _through_tile(_transpose_tiled, 1)
KERNELS["transpose.transposeCoarseGrained"] = _through_tile(_transpose_tiled, 1)
KERNELS["transpose.transposeDiagonal"] = _through_tile(_transpose_diagonal, 1)
KERNELS["transpose.transposeFineGrained"] = _through_tile(_transpose_fine, 1)
KERNELS["transpose.transposeNaive"] = _transpose_naive


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
    n = _n(launch)
    stride = launch.grid[0] * launch.threads_per_block
    warps = -(-min(n, stride) // 32) * -(-n // stride)  # every warp with an element keeps one
    trips = -(-n // stride)

    def src(c: Coords):
        return c.x + c.loop * stride

    def slot(c: Coords):
        warp = (c.x + c.loop * stride) // 32
        return warp * 17 + _lane(c) // 2

    return Description(
        accesses=(
            Access(array="src", index=src, guard=lambda c: src(c) < n, loop=trips),
            Access(array="dst", index=slot, guard=lambda c: (src(c) < n) & (_lane(c) % 2 == 0),
                   loop=trips, kind="store"),
        ),
        counts={"atomics": warps, "atomic_addresses": 1},
    )


KERNELS["warpAggregatedAtomics.filter_arr"] = _filter_arr
