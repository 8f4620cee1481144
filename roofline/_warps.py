"""Per-warp counting of memory granules and shared-memory bank wavefronts, vectorised over warps.

Rows are warps, columns are lanes; a boolean mask marks the lanes that take part. Both
`roofline.memory` (one warp) and the kernel models (every warp of a launch) use these
functions, so the tables in the docs and the models' traffic counts cannot disagree.
"""

from __future__ import annotations

import numpy as np
from occupancy import SassSummary

from ._errors import RooflineError, finite_nonnegative, finite_positive

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
    "sass_loads_per_thread",
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

    Raises
    ------
    RooflineError
        ``load_bytes`` not a finite number >= 0, ``threads`` not >= 1, or
        ``load_width_bytes`` not a finite number > 0.
    """
    load = finite_nonnegative("load_bytes", load_bytes)
    if isinstance(threads, (bool, np.bool_)) or not isinstance(threads, (int, np.integer)):
        raise TypeError(f"threads must be an int, got {type(threads).__name__}")
    if not 1 <= threads <= _MOST_THREADS:
        raise RooflineError(f"threads={threads} must be >= 1 and <= 2**63")
    width = 4.0 if load_width_bytes is None else finite_positive("load_width_bytes", load_width_bytes)
    return max(1, round(load / float(threads) / width))


def sass_loads_per_thread(sass: SassSummary | None, *, load_bytes: float | None = None,
                          threads: int | None = None) -> int | None:
    """The global loads each thread of a launch makes, as its compiled SASS says: every global
    load of straight-line code (no loop, so each runs once), else `loads_per_thread` of the
    launch's counted ``load_bytes`` at the SASS's load width. The one count the source path,
    the profile path (where Nsight counted none) and `validate.measure` give the launch's
    ``elements_per_thread``.

    Returns
    -------
    int or None
        None without SASS, or for a SASS with loops and no ``load_bytes``.

    Raises
    ------
    RooflineError, TypeError
        As `loads_per_thread`, for a bad ``load_bytes`` or ``threads`` (needed with
        ``load_bytes``).
    """
    if sass is None:
        return None
    if not isinstance(sass, SassSummary):
        raise TypeError(f"sass must be an occupancy.SassSummary or None, not {type(sass).__name__}")
    if not sass.loops and sass.instructions.global_loads:
        return sass.instructions.global_loads
    if load_bytes is None:
        return None
    if threads is None:
        raise RooflineError("threads (the launch's threads) is needed to count loads from load_bytes")
    return loads_per_thread(load_bytes, threads, sass.global_load_bytes)


#: Past any launch (2**31 - 1 blocks of 1024 threads a grid dimension), and within a float.
_MOST_THREADS = 2**63

