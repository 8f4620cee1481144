"""A corpus kernel's access description and the helpers that read a launch's shape."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from roofline.memory import Access

__all__ = ["COUNT_FIELDS", "Describe", "Description", "defines", "tokens"]

#: The kernel counts a description may give beside its accesses (a reader counts them off
#: the source): `roofline.Kernel` fields (global atomics, the addresses they update, the
#: barriers each thread passes) and ``shared_wavefronts``, the shared-memory wavefronts of the
#: whole launch (one per 128 bytes a warp access moves, times its bank-conflict ways), which
#: join the global accesses' wavefronts in ``l1_bytes``.
COUNT_FIELDS = ("atomics", "atomic_addresses", "barriers_per_block", "shared_wavefronts")

@dataclass(frozen=True)
class Description:
    """A kernel's global accesses in one launch, and the counts read off its source beside them.

    ``exhaustive`` asks `roofline.memory.traffic` to walk every block (patterns whose addresses are
    not affine in the block index, or whose guards are more than boundary checks).
    """

    accesses: tuple[Access, ...]
    counts: Mapping[str, float] = field(default_factory=dict)
    exhaustive: bool = False

    def __post_init__(self) -> None:
        unknown = sorted(set(self.counts) - set(COUNT_FIELDS))
        if unknown:
            raise ValueError(f"counts {unknown} are not among {COUNT_FIELDS}")


#: A kernel's description: a function of its launch (`corpus.CorpusLaunch`).
Describe = Callable[..., Description]

_TOKEN = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)=([^\s,]+)")


def tokens(shape: str) -> dict[str, str]:
    """The ``name=value`` tokens of a launch's shape, e.g. ``{"n": "512", "block": "32x8"}``."""
    return dict(_TOKEN.findall(shape))


def defines(build_defines: tuple[str, ...]) -> dict[str, int]:
    """The integer ``-DNAME=value`` build defines of a launch."""
    out = {}
    for d in build_defines:
        m = re.fullmatch(r"-D([A-Za-z_]\w*)=(-?\d+)", d)
        if m:
            out[m.group(1)] = int(m.group(2))
    return out

