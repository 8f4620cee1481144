"""Input checks of the occupancy functions: integer-ness and each number's range on an architecture.

`LaunchNumbers` holds the numbers of an `occupancy.Launch` that the rules read (scalars or
broadcastable arrays); `checked` checks them against one architecture and fills the
runtime's defaults, once, before `occupancy._rules.evaluate` runs.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass, fields, replace

import numpy as np
from numpy.typing import ArrayLike

from ._arch import MAX_BARRIERS_PER_BLOCK, Architecture
from ._errors import OccupancyError
from .common import check_range as _check_range
from .common import integer
from .common import short_repr

__all__ = ["GC_MODES", "LaunchNumbers", "check_range", "checked", "gc_mode", "integer", "integers"]

GC_MODES = ("off", "on", "strict")
"""The settings of partitioned global caching."""

Int = int | np.integer | np.ndarray


def integers(name: str, value: ArrayLike) -> np.ndarray:
    """``value`` as a numpy array of int32 or int64 (scalars become 0-d arrays); floats and
    bools are a TypeError.

    int32 and int64 arrays come back as they are (no copy); narrower integers are widened to
    int32, unsigned 32- and 64-bit ones to int64, so that the sum of two numbers within their
    ranges (at most 2**20) cannot wrap (int8 + int8)."""
    if isinstance(value, (str, bytes)):
        raise TypeError(f"{name} must hold integers, not {type(value).__name__}")
    try:
        arr = np.asarray(value)
    except (ValueError, OverflowError):
        raise TypeError(f"{name} must be an integer or a rectangular array of integers") from None
    if arr.dtype.kind == "b":
        raise TypeError(f"{name} must hold integers, not booleans")
    if arr.dtype.kind in "iu":
        if arr.dtype.kind == "u" and arr.size and int(arr.max()) > np.iinfo(np.int64).max:
            raise OccupancyError(f"{name}={int(arr.max())} is out of range (more than 63 bits)")
        if arr.dtype in (np.int32, np.int64):
            return arr
        return arr.astype(np.int32 if arr.dtype.itemsize < 4 else np.int64)
    if arr.dtype.kind == "O" and arr.size and all(
        isinstance(v, numbers.Integral) and not isinstance(v, (bool, np.bool_)) for v in arr.flat
    ):
        # Python ints past 64 bits: out of every range below, said with the value.
        big = max(arr.flat, key=abs)
        raise OccupancyError(f"{name}={big} is out of range (more than 63 bits)")
    raise TypeError(f"{name} must hold integers, not {arr.dtype}")


def check_range(
    name: str, value: Int, low: int, high: int | None, arch: Architecture | None = None, what: str = ""
) -> None:
    """Raise OccupancyError when a number or an array leaves ``[low, high]`` (empty arrays pass)."""
    _check_range(name, value, low, high, OccupancyError, what + (f" on {arch.name}" if arch is not None else ""))


def _top(value: Int) -> int | None:
    """Largest element of a number or an array (None for an empty array)."""
    arr = np.asarray(value)
    return int(arr.max()) if arr.size else None


def gc_mode(value: str | bool | None) -> str:
    """Normalise the partitioned-global-caching option."""
    if value is True:
        return "on"
    if value is False or value is None:
        return "off"
    if not isinstance(value, str):
        raise TypeError(f"partitioned_global_caching must be a str or bool, not {type(value).__name__}")
    if value.lower() in GC_MODES:
        return value.lower()
    raise OccupancyError(f"partitioned_global_caching={short_repr(value)} is not one of {', '.join(GC_MODES)}")


@dataclass(frozen=True)
class LaunchNumbers:
    """The numbers of one launch or of arrays of launches that the occupancy rules read.

    Which of `occupancy.Launch`'s numbers the rules read, by its names (``threads_per_block``
    is the product of its block), each an int or an int array; `Launch` holds each one's
    meaning, unit, default and CUDA limit. After `checked` every field is an int or an int
    array, ``max_dynamic_shared_memory`` holds the runtime's default where none was given,
    ``carveout`` -1 where there is no preference, and ``max_threads_per_block`` stays None
    when unset.
    """

    threads_per_block: Int
    registers_per_thread: Int
    static_shared_memory: Int
    dynamic_shared_memory: Int
    max_dynamic_shared_memory: Int | None
    carveout: Int | None
    block_barriers: Int
    max_threads_per_block: Int | None


def _check_optin(arch: Architecture, name: str, value: Int, static: Int) -> None:
    """Refuse dynamic shared memory over the opt-in limit, alone or with the static bytes."""
    optin = arch.max_shared_memory_per_block_optin
    check_range(name, value, 0, optin, arch, " bytes (the opt-in limit per block)")
    hi = _top(static + value)
    if hi is not None and hi > optin:
        raise OccupancyError(
            f"static_shared_memory + {name}={hi} exceeds the opt-in limit of {optin} bytes per block on {arch.name}"
        )


# Only the kernel attributes may be None (the runtime's default, no preference, no bound).
_OPTIONAL = frozenset({"max_dynamic_shared_memory", "carveout", "max_threads_per_block"})


def checked(arch: Architecture, launch: LaunchNumbers, *, arrays: bool) -> LaunchNumbers:
    """``launch`` checked against ``arch``, with the runtime's defaults filled in.

    Scalars must be integers; with ``arrays``, every field may be an array of integers and
    the arrays must broadcast together (``carveout`` may then hold -1 for no preference).

    Raises
    ------
    OccupancyError
        For a value out of its range on ``arch`` (the message names it and the limit), or
        arrays that do not broadcast.
    TypeError
        For a value that is not an integer (or an array of them).
    """
    conv = integers if arrays else integer
    given = {
        f.name: conv(f.name, getattr(launch, f.name))
        for f in fields(launch)
        if getattr(launch, f.name) is not None or f.name not in _OPTIONAL
    }
    if arrays:
        try:
            np.broadcast_shapes(*(np.shape(x) for x in given.values()))
        except ValueError:
            shapes = ", ".join(f"{k} {np.shape(x)}" for k, x in given.items() if np.ndim(x))
            raise OccupancyError(f"array shapes do not broadcast together: {shapes}") from None
    t, r = given["threads_per_block"], given["registers_per_thread"]
    s, d, b = given["static_shared_memory"], given["dynamic_shared_memory"], given["block_barriers"]
    check_range("threads_per_block", t, 1, arch.max_threads_per_block, arch)
    check_range("registers_per_thread", r, 0, arch.max_registers_per_thread, arch)
    check_range(
        "static_shared_memory", s, 0, arch.max_shared_memory_per_block, arch,
        " bytes of static shared memory per block",
    )
    check_range("block_barriers", b, 0, MAX_BARRIERS_PER_BLOCK, arch, " barriers per block")
    _check_optin(arch, "dynamic_shared_memory", d, s)
    m = given.get("max_dynamic_shared_memory")
    if m is None:
        # The runtime's default for cudaFuncAttributeMaxDynamicSharedMemorySize.
        m = arch.max_shared_memory_per_block - s
    else:
        _check_optin(arch, "max_dynamic_shared_memory", m, s)
    c = given.get("carveout")
    if c is None:
        c = -1
    elif arrays:
        check_range("carveout", c, -1, 100, arch, " percent (-1 means no preference)")
    else:
        check_range("carveout", c, 0, 100, arch, " percent")
    mt = given.get("max_threads_per_block")
    if mt is not None:
        check_range("max_threads_per_block", mt, 1, arch.max_threads_per_block, arch)
    out = replace(launch, **(given | {"max_dynamic_shared_memory": m, "carveout": c, "max_threads_per_block": mt}))
    if not arrays:
        return out
    # Every number is now within its range (at most 2**18 bytes): int32, the lookup tables' type,
    # halves the memory the rules stream through (an int32 array is taken as it is).
    return replace(out, **{f.name: _int32(getattr(out, f.name)) for f in fields(out)})


def _int32(value: Int | None) -> np.ndarray | None:
    """A checked array (or number) as int32; None stays None."""
    return None if value is None else np.asarray(value).astype(np.int32, copy=False)
