"""Matrix transposes and their copy bounds (Cheng, Grossman and McKercher ch.4 and ch.5).

The input ``in`` has ``ny = rows`` rows and ``nx = cols`` columns, row-major float32; the
output ``out`` (nx rows, ny columns) is its transpose. Thread coordinates are
``ix = blockIdx.x * blockDim.x + threadIdx.x`` (a column of ``in``) and
``iy = blockIdx.y * blockDim.y + threadIdx.y`` (a row of ``in``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from occupancy import Launch

from .._errors import RooflineError
from .._kernel import Kernel
from .._traffic import Access, Coords, traffic
from .._warps import WARP_SIZE
from ._common import (
    FLOAT_BYTES,
    SHARED_WAVEFRONT_BYTES,
    blocks_for,
    check_block_2d,
    check_elements,
    check_grid,
    check_int,
)
from ._traffic import SharedAccess, shared_traffic

__all__ = ["TRANSPOSE_VARIANTS", "transpose"]

_STATEMENTS = {
    "copy_row": "if (ix < nx && iy < ny) out[iy*nx + ix] = in[iy*nx + ix];",
    "copy_column": "if (ix < nx && iy < ny) out[ix*ny + iy] = in[ix*ny + iy];",
    "naive_row": "if (ix < nx && iy < ny) out[ix*ny + iy] = in[iy*nx + ix];",
    "naive_column": "if (ix < nx && iy < ny) out[iy*nx + ix] = in[ix*ny + iy];",
    "unroll4_row": (
        "ix = blockIdx.x*blockDim.x*4 + threadIdx.x; for j in 0..3: x = ix + j*blockDim.x; "
        "if (x < nx && iy < ny) out[x*ny + iy] = in[iy*nx + x];"
    ),
    "unroll4_column": (
        "ix = blockIdx.x*blockDim.x*4 + threadIdx.x; for j in 0..3: x = ix + j*blockDim.x; "
        "if (x < nx && iy < ny) out[iy*nx + x] = in[x*ny + iy];"
    ),
    "diagonal_row": (
        "bid = blockIdx.x + gridDim.x*blockIdx.y; by = bid % gridDim.y; "
        "bx = (bid / gridDim.y + by) % gridDim.x; ix = bx*blockDim.x + threadIdx.x; "
        "iy = by*blockDim.y + threadIdx.y; if (ix < nx && iy < ny) out[ix*ny + iy] = in[iy*nx + ix];"
    ),
    "diagonal_column": (
        "bid = blockIdx.x + gridDim.x*blockIdx.y; by = bid % gridDim.y; "
        "bx = (bid / gridDim.y + by) % gridDim.x; ix = bx*blockDim.x + threadIdx.x; "
        "iy = by*blockDim.y + threadIdx.y; if (ix < nx && iy < ny) out[iy*nx + ix] = in[ix*ny + iy];"
    ),
    "shared": (
        "tile[ty][tx] = in[iy*nx + ix] (if ix<nx && iy<ny); __syncthreads(); "
        "b = ty*bx + tx; r = b / by; c = b % by; "
        "out[(blockIdx.x*bx + r)*ny + blockIdx.y*by + c] = tile[c][r] (if in range)"
    ),
    "shared_padded": "as shared, with tile[by][bx + pad]",
}

TRANSPOSE_VARIANTS: tuple[str, ...] = tuple(_STATEMENTS)

# Static (__shared__) memory per block on every compute capability (CUDA C++ Programming
# Guide, Technical Specifications: 48 KB; only dynamic shared memory can opt in to more).
MAX_STATIC_SHARED_MEMORY = 48 * 1024


def _read_write(variant: str, nx: int, ny: int, j: int = 0, unroll: int = 1) -> list[Access]:
    """Load and store of the element-wise variants."""
    reads_rows = variant.endswith("_row")
    is_copy = variant.startswith("copy")

    def x_of(c: Coords) -> np.ndarray:
        return c.block_x * c.block_dim[0] * unroll + c.thread_x + j * c.block_dim[0]

    def inside(c: Coords) -> np.ndarray:
        return (x_of(c) < nx) & (c.y < ny)

    def row_major(c: Coords) -> np.ndarray:
        return c.y * nx + x_of(c)

    def column_major(c: Coords) -> np.ndarray:
        return x_of(c) * ny + c.y

    if is_copy:
        load = store = row_major if reads_rows else column_major
    elif reads_rows:
        load, store = row_major, column_major
    else:
        load, store = column_major, row_major
    return [Access(array="in", index=load, guard=inside), Access(array="out", index=store, guard=inside, kind="store")]


def _best_pad(bx: int, by: int) -> int:
    """Smallest padding (1 to 32 floats) with the fewest shared wavefronts for both tile accesses."""
    wavefronts = [
        shared_traffic((bx, by), _tile_accesses(bx, by, pad))[1] for pad in range(1, WARP_SIZE + 1)
    ]
    return 1 + wavefronts.index(min(wavefronts))


def _tile_accesses(bx: int, by: int, pad: int) -> list[SharedAccess]:
    pitch = bx + pad

    def store(tx: np.ndarray, ty: np.ndarray) -> np.ndarray:
        return (ty * pitch + tx) * FLOAT_BYTES

    def load(tx: np.ndarray, ty: np.ndarray) -> np.ndarray:
        linear = ty * bx + tx
        return ((linear % by) * pitch + linear // by) * FLOAT_BYTES

    return [SharedAccess(store), SharedAccess(load)]


def transpose(
    rows: int,
    cols: int | None = None,
    *,
    variant: str = "naive_row",
    block: tuple[int, int] = (16, 16),
    pad: int | None = None,
) -> Kernel:
    """Transpose a ``rows x cols`` float32 matrix (Cheng et al. ch.4 ``transpose.cu``, ch.5).

    Variants (``nx = cols``, ``ny = rows``; ``in`` is ny x nx, ``out`` nx x ny):

    * ``copy_row`` / ``copy_column``: the bounds, ``out[iy*nx+ix] = in[iy*nx+ix]`` and
      ``out[ix*ny+iy] = in[ix*ny+iy]``;
    * ``naive_row``: ``out[ix*ny+iy] = in[iy*nx+ix]`` (coalesced reads, strided writes);
      ``naive_column``: ``out[iy*nx+ix] = in[ix*ny+iy]`` (strided reads, coalesced writes);
    * ``unroll4_row`` / ``unroll4_column``: the same with each thread doing 4 elements
      ``blockDim.x`` apart, ``grid.x = ceil(nx / (4 bx))``, each element guarded on its own;
    * ``diagonal_row`` / ``diagonal_column``: the naive kernels with diagonal block order,
      ``bid = blockIdx.x + gridDim.x*blockIdx.y; blk_y = bid % gridDim.y;
      blk_x = (bid / gridDim.y + blk_y) % gridDim.x`` (Ruetsch and Micikevicius, "Optimizing
      Matrix Transpose in CUDA"; Cheng's square-grid form). A permutation of the blocks, so
      the byte counts equal the naive kernel's; only DRAM-partition timing differs;
    * ``shared`` / ``shared_padded``: a ``by x (bx + pad)`` float tile; a coalesced read
      ``tile[ty][tx] = in[iy*nx+ix]`` (if ``ix < nx && iy < ny``), ``__syncthreads()``, then
      with ``b = ty*bx + tx, r = b / by, c = b % by``:
      ``out[(blockIdx.x*bx + r)*ny + blockIdx.y*by + c] = tile[c][r]`` (if
      ``blockIdx.y*by + c < ny && blockIdx.x*bx + r < nx``): coalesced writes. ``shared``
      has pad 0; ``shared_padded`` takes `pad`, by default the smallest pad from 1 to 32
      with the fewest shared-memory wavefronts for the tile write and read together (1 for
      32 x 32 blocks, conflict free; 2 for 32 x 16 as in Cheng's ``transposeSmemPad``; a
      16-wide block spans two tile rows per warp, so no pad removes every conflict).

    Launch: ``grid = (ceil(nx / bx), ceil(ny / by))`` (x divided by 4 bx when unrolled),
    ``block = (bx, by)``; shared variants use ``by (bx + pad) 4`` bytes of static shared
    memory. 0 flops; each variant loads and stores ``4 nx ny`` bytes; DRAM moves both
    matrices once. ``l2_bytes`` shows the cost of the strided side: a 16-wide block touches a
    32-byte sector per 8 bytes used.

    Parameters
    ----------
    rows : int
        ny, rows of the input.
    cols : int, optional
        nx, columns of the input (default rows).
    variant : str
        One of `TRANSPOSE_VARIANTS`.
    block : tuple of int
        blockDim (x, y).
    pad : int, optional
        Tile padding in floats for ``shared_padded`` (>= 0).

    Returns
    -------
    roofline.Kernel

    Examples
    --------
    >>> from roofline import models
    >>> m = models.transpose(4096, variant="naive_column")
    >>> m.l2_bytes / m.count("requested_bytes")  # 16 sectors for 128 bytes read, coalesced writes
    2.5
    """
    ny, nx, variant, (bx, by), pad = _checked(rows, cols, variant, block, pad)
    parameters: dict = {"rows": ny, "cols": nx, "variant": variant, "block": [bx, by]}
    unrolled = variant.startswith("unroll4")
    grid = (blocks_for(nx, 4 * bx if unrolled else bx), blocks_for(ny, by))
    check_grid(grid, (f"cols={nx}", f"rows={ny}"))
    tile = _SharedTile()
    if unrolled:
        base = variant.replace("unroll4", "naive")
        accesses = [a for j in range(4) for a in _read_write(base, nx, ny, j, unroll=4)]
    elif variant.startswith("diagonal"):
        accesses = _read_write(variant.replace("diagonal", "naive"), nx, ny)
    elif variant.startswith("shared"):
        tile = _shared_tile(nx, ny, (bx, by), grid, 0 if variant == "shared" else pad)
        parameters["pad"] = tile.pad
        accesses = _tile_copy(nx, ny, (bx, by))
    else:
        accesses = _read_write(variant, nx, ny)
    counts = traffic(grid, (bx, by), accesses)
    return counts.kernel(
        name="transpose",
        parameters=parameters,
        formula=_STATEMENTS[variant],
        precision="fp32",
        element_bytes=FLOAT_BYTES,
        flops=0,
        l1_bytes=counts.l1_global_bytes + tile.l1_extra_bytes,
        shared_bytes=tile.shared_bytes,
        bank_conflict_ways=tile.bank_conflict_ways,
        launch=Launch(
            grid=grid,
            block=(bx, by),
            static_shared_memory=tile.static_shared_memory,
            elements_per_thread=4 if unrolled else 1,
        ),
    )


def _checked(
    rows: int, cols: int | None, variant: str, block: tuple[int, int], pad: int | None
) -> tuple[int, int, str, tuple[int, int], int | None]:
    """`transpose`'s arguments checked: ny, nx, the variant, blockDim (x, y) and the pad."""
    ny = check_int("rows", rows)
    nx = ny if cols is None else check_int("cols", cols)
    check_elements(f"rows={ny} x cols={nx}", nx * ny)
    if not isinstance(variant, str):
        raise TypeError(f"variant must be a str, got {type(variant).__name__}")
    if variant not in _STATEMENTS:
        raise RooflineError(
            f"variant={variant!r} is not a transpose variant; known: {', '.join(TRANSPOSE_VARIANTS)}"
        )
    bx, by = check_block_2d(block)
    if pad is not None:
        pad = check_int("pad", pad, 0)
    if pad is not None and variant != "shared_padded" and not (variant == "shared" and pad == 0):
        raise RooflineError(f"pad={pad} applies only to variant='shared_padded'")
    return ny, nx, variant, (bx, by), pad


@dataclass(frozen=True)
class _SharedTile:
    """A shared variant's tile: its padding (floats), its static shared memory and its traffic
    (bytes; a variant without a tile has none)."""

    pad: int = 0
    static_shared_memory: int = 0
    shared_bytes: int = 0
    l1_extra_bytes: int = 0
    bank_conflict_ways: int | None = None


def _shared_tile(nx: int, ny: int, block: tuple[int, int], grid: tuple[int, int], pad: int | None) -> _SharedTile:
    """The ``by x (bx + pad)`` float tile of the shared variants: `pad` None picks `_best_pad`."""
    bx, by = block
    pad = _best_pad(bx, by) if pad is None else pad
    tile_bytes = by * (bx + pad) * FLOAT_BYTES
    if tile_bytes > MAX_STATIC_SHARED_MEMORY:
        raise RooflineError(
            f"pad={pad} gives a {by} x {bx + pad} float tile of {tile_bytes} bytes; static "
            f"shared memory is at most {MAX_STATIC_SHARED_MEMORY} bytes per block"
        )
    block_bytes, wavefronts, ways = shared_traffic((bx, by), _tile_accesses(bx, by, pad))
    blocks = grid[0] * grid[1]
    return _SharedTile(pad=pad, static_shared_memory=tile_bytes, shared_bytes=blocks * block_bytes,
                       l1_extra_bytes=blocks * wavefronts * SHARED_WAVEFRONT_BYTES, bank_conflict_ways=ways)


def _tile_copy(nx: int, ny: int, block: tuple[int, int]) -> list[Access]:
    """The shared variants' global accesses: a coalesced read of ``in`` into the tile, and the
    coalesced write of ``out`` from it (element ``b = ty*bx + tx`` goes to row ``b / by``,
    column ``b % by`` of the block's output tile)."""
    bx, by = block

    def store_row(c: Coords) -> np.ndarray:
        return c.block_x * bx + (c.thread_y * bx + c.thread_x) // by

    def store_column(c: Coords) -> np.ndarray:
        return c.block_y * by + (c.thread_y * bx + c.thread_x) % by

    return [
        Access(array="in", index=lambda c: c.y * nx + c.x, guard=lambda c: (c.x < nx) & (c.y < ny)),
        Access(array="out", index=lambda c: store_row(c) * ny + store_column(c),
               guard=lambda c: (store_column(c) < ny) & (store_row(c) < nx), kind="store"),
    ]
