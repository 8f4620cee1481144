"""What the cuda-samples descriptions read off a launch's shape, and the helpers they share (with the
other projects' descriptions)."""

from __future__ import annotations

import re

from roofline.memory import Coords
from roofline.memory import bank_conflicts

from .._description import Description, tokens

__all__ = [
    "first_of", "first_thread", "image_of", "issued_wavefronts", "lane_of", "log2", "mib_of", "n_of", "side_of",
    "tree_steps", "tree_wavefronts", "with_counts",
]

# ----------------------------------------------------------------------------- shape helpers


def n_of(launch) -> int:
    """The ``n=`` token of the shape."""
    return int(tokens(launch.shape)["n"])


def side_of(launch) -> int:
    """The matrix side of a ``"1024^3 ..."`` or ``"1024x1024 ..."`` shape."""
    return int(re.match(r"(\d+)", launch.shape).group(1))


def image_of(launch) -> tuple[int, int]:
    """Width and height of a ``"WxH"`` shape."""
    w, h = re.match(r"(\d+)x(\d+)", launch.shape).groups()
    return int(w), int(h)


def first_of(launch) -> int:
    """The first number of the shape (keys, partial histograms, ...)."""
    return int(re.match(r"(\d+)", launch.shape).group(1))


def mib_of(launch) -> int:
    """Bytes of a ``"64 MiB"`` shape."""
    return int(re.match(r"(\d+) MiB", launch.shape).group(1)) << 20


def lane_of(c: Coords):
    return c.thread_x % 32


def first_thread(c: Coords):
    return c.thread_x == 0


def with_counts(describe, counts):
    """``describe``'s accesses with the counts ``counts(launch)``."""
    def described(launch) -> Description:
        return Description(accesses=describe(launch).accesses, counts=counts(launch))
    return described


def log2(x: int) -> int:
    return x.bit_length() - 1


def issued_wavefronts(words) -> int:
    """Wavefronts of one warp's 4-byte shared access at these word offsets (None: lane off).

    The compiled code predicates the shared accesses of the reduction trees rather than
    branching around them, so a warp whose lanes are all off still issues the instruction,
    and Nsight counts it as one wavefront."""
    return max(1, bank_conflicts([None if w is None else 4 * w for w in words]).wavefronts)


def tree_wavefronts(b: int, pairs, loads: int, steps=None) -> int:
    """Shared wavefronts of one block's reduction tree: every warp issues each step's accesses
    (predicated, see `issued_wavefronts`); ``pairs(s, tid)`` gives the word a thread updates in step ``s``
    (None when off), which also loads the word ``s`` above it (``loads`` of the two are LDS);
    ``steps``: the values of ``s`` (default every power of two below ``b``)."""
    total = 0
    for s in tree_steps(b) if steps is None else steps:
        for w in range(b // 32):
            at = [pairs(s, t) for t in range(32 * w, 32 * w + 32)]
            above = [None if a is None else a + s for a in at]
            # LDS(s) + STS
            total += (loads - 1) * issued_wavefronts(at) + issued_wavefronts(above) + issued_wavefronts(at)
    return total


def tree_steps(b: int):
    return [1 << k for k in range(log2(b))]
