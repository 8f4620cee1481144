"""Shared-memory traffic of one block: bytes, wavefronts and the worst bank conflict.

Global-memory traffic is `roofline.memory.traffic` (roofline/_traffic.py); shared memory is
counted here for the models that stage data in it, one full block at a time.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .._warps import WARP_SIZE, bank_wavefronts

__all__ = ["SharedAccess", "shared_traffic"]


@dataclass(frozen=True)
class SharedAccess:
    """One shared-memory instruction of a full block (every lane active)."""

    addresses: Callable[[np.ndarray, np.ndarray], np.ndarray]  # (tx, ty) -> byte address
    weight: int = 1
    access_bytes: int = 4


def _threads(block: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """threadIdx.x and threadIdx.y of a block's threads in linear (x-first) order."""
    linear = np.arange(block[0] * block[1])
    return linear % block[0], linear // block[0]


def _warps(values: np.ndarray, fill: object) -> np.ndarray:
    """Reshape (classes, threads) into (classes * warps, 32), padding the last warp."""
    classes, threads = values.shape
    warps = -(-threads // WARP_SIZE)
    padded = np.full((classes, warps * WARP_SIZE), fill, dtype=values.dtype)
    padded[:, :threads] = values
    return padded.reshape(classes * warps, WARP_SIZE)


def shared_traffic(
    block: tuple[int, int], accesses: list[SharedAccess]
) -> tuple[int, int, int]:
    """Shared-memory bytes, wavefronts and worst conflict degree of one full block.

    Returns
    -------
    tuple of int
        ``(bytes, wavefronts, ways)`` for one block executing every access once per weight.
    """
    tx, ty = _threads(block)
    total_bytes = total_wavefronts = worst = 0
    for access in accesses:
        address = np.broadcast_to(access.addresses(tx, ty), tx.shape).astype(np.int64)
        wavefronts, ways = bank_wavefronts(
            _warps(address[None, :], 0),
            _warps(np.ones((1, tx.size), dtype=bool), False),
            access.access_bytes,
        )
        total_bytes += tx.size * access.access_bytes * access.weight
        total_wavefronts += int(wavefronts.sum()) * access.weight
        worst = max(worst, int(ways.max()))
    return total_bytes, total_wavefronts, worst
