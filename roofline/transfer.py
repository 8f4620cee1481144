"""Data movement: host <-> device transfer time over the GPU's host link, and L2 persistence.

`transfer_time` prices a copy (or a mapped read) of pinned, pageable, mapped or managed
memory: from the GPU's measured host-link fit where `gpuroof validate` has one (its
`LinkSegment` lines), else from the link's datasheet rate and the factors documented in
`roofline.transfer.transfer_time`. `l2_persistence` says how much of a working set an L2
access-policy window (`AccessPolicyWindow`) keeps resident (`L2Persistence`), and, given the
kernel's `WindowTraffic`, the time the window saves.

Examples
--------
>>> import roofline
>>> from roofline.transfer import transfer_time
>>> transfer_time(roofline.gpu("H200"), 1 << 30).seconds > 0
True
"""

from ._measured import LinkSegment
from ._transfer import (
    AccessPolicyWindow,
    L2Persistence,
    TransferTime,
    WindowTraffic,
    l2_persistence,
    transfer_time,
)

__all__ = [
    "AccessPolicyWindow",
    "L2Persistence",
    "LinkSegment",
    "TransferTime",
    "WindowTraffic",
    "l2_persistence",
    "transfer_time",
]
