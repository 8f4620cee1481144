"""PMPP's image blur: a box filter with out-of-image pixels skipped."""

from __future__ import annotations

import numpy as np

from occupancy import Launch

from .._kernel import Kernel
from .._traffic import Access, Coords, traffic
from ._common import FLOAT_BYTES, blocks_for, check_block_2d, check_elements, check_grid, check_int

__all__ = ["blur"]


# Every one of the (2r+1)^2 taps is counted warp by warp over the boundary blocks: the
# cost grows as r^4 (1.5 s at r = 16 on a laptop core, 8 s at 32), so wider windows are refused.
MAX_RADIUS = 16


def _in_bounds(extent: int, radius: int) -> int:
    """Sum over positions of how many window offsets stay inside [0, extent).

    Each position's window has 2r+1 offsets less those past either end; summed over the
    positions, the clipped offsets at the low end are sum(max(0, r - p)) and as many at
    the high end, by symmetry.
    """
    k = min(radius, extent)
    return extent * (2 * radius + 1) - 2 * (k * radius - k * (k - 1) // 2)


def blur(
    width: int, height: int, *, radius: int = 1, block: tuple[int, int] = (16, 16)
) -> Kernel:
    """Box blur of a float32 image (PMPP ch.3 ``blurKernel``, float pixels).

    ::

        int col = blockIdx.x * blockDim.x + threadIdx.x;
        int row = blockIdx.y * blockDim.y + threadIdx.y;
        if (col < w && row < h) {
            float sum = 0.0f; int pixels = 0;
            for (int dy = -r; dy <= r; ++dy)
                for (int dx = -r; dx <= r; ++dx) {
                    int y = row + dy, x = col + dx;
                    if (y >= 0 && y < h && x >= 0 && x < w) { sum += in[y * w + x]; ++pixels; }
                }
            out[row * w + col] = sum / pixels;
        }

    Launch: ``grid = (ceil(w / bx), ceil(h / by))`` blocks of ``block = (bx, by)``.
    flops = one add per in-image window pixel plus one division per output
    (``(2r+1)^2 + 1`` inside the image); loads 4 bytes per in-image window pixel, stores
    ``4 w h``: about 0.25 flop/byte at any radius. DRAM: the input and output images once.

    Parameters
    ----------
    width, height : int
        Image size in pixels, >= 1.
    radius : int
        Window half-width r, 0 to 16 (window (2r+1) x (2r+1)).
    block : tuple of int
        blockDim (x, y), at most 1024 threads.

    Returns
    -------
    roofline.Kernel

    Examples
    --------
    >>> from roofline import models
    >>> models.blur(3, 3, radius=1).flops  # 4 corners x 4 + 4 edges x 6 + centre 9, + 9 divides
    58
    """
    w = check_int("width", width)
    h = check_int("height", height)
    r = check_int("radius", radius, 0, MAX_RADIUS)
    bx, by = check_block_2d(block)
    check_elements(f"width={w} x height={h}", w * h)
    adds = _in_bounds(w, r) * _in_bounds(h, r)

    def tap(dy: int, dx: int) -> Access:
        def guard(c: Coords) -> np.ndarray:
            y, x = c.y + dy, c.x + dx
            return (c.x < w) & (c.y < h) & (y >= 0) & (y < h) & (x >= 0) & (x < w)

        return Access(array="in", index=lambda c: (c.y + dy) * w + c.x + dx, guard=guard)

    accesses = [tap(dy, dx) for dy in range(-r, r + 1) for dx in range(-r, r + 1)]
    accesses.append(Access(array="out", index=lambda c: c.y * w + c.x, guard=lambda c: (c.x < w) & (c.y < h),
                           kind="store"))
    grid = (blocks_for(w, bx), blocks_for(h, by))
    check_grid(grid, (f"width={w}", f"height={h}"))
    return traffic(grid, (bx, by), accesses).kernel(
        name="blur",
        parameters={"width": w, "height": h, "radius": r, "block": [bx, by]},
        formula="out[row*w+col] = mean of in[y*w+x] over in-image |y-row|<=r, |x-col|<=r",
        precision="fp32",
        element_bytes=FLOAT_BYTES,
        flops=adds + w * h,
        shared_bytes=0,
        launch=Launch(grid=grid, block=(bx, by)),
    )
