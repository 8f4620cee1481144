"""Per-warp counting of memory granules and shared-memory bank wavefronts, vectorised over warps.

Rows are warps, columns are lanes; a boolean mask marks the lanes that take part. Both
`roofline.memory` (one warp) and the kernel models (every warp of a launch) use these
functions, so the tables in the docs and the models' traffic counts cannot disagree.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "BANK_BYTES",
    "CACHE_LINE_BYTES",
    "SECTOR_BYTES",
    "SHARED_MEMORY_BANKS",
    "SHARED_WAVEFRONT_BYTES",
    "WARP_SIZE",
    "bank_wavefronts",
    "distinct_per_row",
    "lanes_per_phase",
    "loads_per_thread",
]

WARP_SIZE = 32
SECTOR_BYTES = 32
CACHE_LINE_BYTES = 128
SHARED_MEMORY_BANKS = 32
BANK_BYTES = 4
#: Bytes one shared-memory pass (wavefront) serves: a word from each bank.
SHARED_WAVEFRONT_BYTES = SHARED_MEMORY_BANKS * BANK_BYTES

_SENTINEL = np.iinfo(np.int64).max


def distinct_per_row(keys: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """Number of distinct values among the valid entries of each row.

    Parameters
    ----------
    keys : numpy.ndarray
        Integer array of shape (rows, lanes).
    valid : numpy.ndarray
        Boolean array of the same shape; invalid entries are ignored.

    Returns
    -------
    numpy.ndarray
        int64 array of shape (rows,).
    """
    k = np.sort(np.where(valid, keys, _SENTINEL), axis=1)
    first = np.ones(k.shape, dtype=bool)
    first[:, 1:] = k[:, 1:] != k[:, :-1]
    return np.count_nonzero(first & (k != _SENTINEL), axis=1).astype(np.int64)


def lanes_per_phase(access_bytes: int) -> int:
    """Lanes whose shared-memory accesses are served together (one phase).

    A 4-byte (or narrower) access is served for the whole warp at once; 8-byte accesses
    per half-warp and 16-byte accesses per quarter-warp, so that one phase never asks
    for more than 128 bytes, the width of the 32 banks.
    """
    return WARP_SIZE * BANK_BYTES // max(access_bytes, BANK_BYTES)


def bank_wavefronts(
    byte_addresses: np.ndarray, valid: np.ndarray, access_bytes: int
) -> tuple[np.ndarray, np.ndarray]:
    """Shared-memory wavefronts and the worst conflict degree of each warp's access.

    Rule: 32 banks of 4 bytes, word ``w = address // 4`` lives in bank ``w % 32``.
    Within one phase (see `lanes_per_phase`) the hardware needs as many passes as the
    largest number of *distinct* words any single bank must deliver; lanes reading the
    same word share it (broadcast). An access wider than 4 bytes covers
    ``access_bytes // 4`` consecutive words.

    Parameters
    ----------
    byte_addresses, valid : numpy.ndarray
        Shape (warps, 32): byte addresses into shared memory and active lanes.
    access_bytes : int
        1, 2, 4, 8 or 16.

    Returns
    -------
    tuple of numpy.ndarray
        ``(wavefronts, ways)``, each of shape (warps,): total passes over all phases and
        the largest per-phase conflict degree (0 for a warp with no active lane).
    """
    rows, lanes = byte_addresses.shape
    per_phase = lanes_per_phase(access_bytes)
    words_per_lane = max(access_bytes // BANK_BYTES, 1)
    phases = -(-lanes // per_phase)
    width = phases * per_phase
    addr = np.zeros((rows, width), dtype=np.int64)
    ok = np.zeros((rows, width), dtype=bool)
    addr[:, :lanes] = byte_addresses
    ok[:, :lanes] = valid
    first_word = addr // BANK_BYTES
    words = first_word[:, :, None] + np.arange(words_per_lane)[None, None, :]
    words = words.reshape(rows * phases, per_phase * words_per_lane)
    ok_words = np.repeat(ok, words_per_lane, axis=1).reshape(rows * phases, -1)
    k = np.sort(np.where(ok_words, words, _SENTINEL), axis=1)
    first = np.ones(k.shape, dtype=bool)
    first[:, 1:] = k[:, 1:] != k[:, :-1]
    unique = first & (k != _SENTINEL)
    counts = np.zeros((rows * phases, SHARED_MEMORY_BANKS), dtype=np.int64)
    row_index = np.broadcast_to(np.arange(rows * phases)[:, None], k.shape)
    np.add.at(counts, (row_index[unique], k[unique] % SHARED_MEMORY_BANKS), 1)
    ways_per_phase = counts.max(axis=1).reshape(rows, phases)
    return ways_per_phase.sum(axis=1), ways_per_phase.max(axis=1)


def loads_per_thread(load_bytes: float, threads: int, load_width_bytes: float | None = None) -> int:
    """The global loads each thread makes, as the hot loop's trips count them: ``load_bytes``
    (a launch's counted load bytes) over the threads and the width of one load (the SASS's
    ``global_load_bytes``; None: 4 bytes), at least 1.

    >>> loads_per_thread(128 * 2**20, 65536)
    512
    """
    width = float(load_width_bytes or 4)
    return max(1, round(float(load_bytes) / threads / width))
