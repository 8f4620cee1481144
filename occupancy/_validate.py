"""Input checks shared by the public functions: integer-ness and ranges."""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from ._arch import Architecture
from ._errors import OccupancyError
from ._rules import GC_MODES, MAX_BARRIERS_PER_BLOCK


def integer(name: str, value: Any) -> int:
    """``value`` as a Python int; anything but an integer (a float too) is a TypeError."""
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be an integer, not bool")
    if isinstance(value, numbers.Integral):
        return int(value)
    raise TypeError(f"{name} must be an integer, not {type(value).__name__}")


def integers(name: str, value: Any) -> np.ndarray:
    """``value`` as an integer numpy array (scalars become 0-d arrays)."""
    if isinstance(value, (str, bytes)):
        raise TypeError(f"{name} must hold integers, not {type(value).__name__}")
    try:
        arr = np.asarray(value)
    except (ValueError, OverflowError):
        raise TypeError(f"{name} must be an integer or a rectangular array of integers") from None
    if arr.dtype.kind == "b":
        raise TypeError(f"{name} must hold integers, not booleans")
    if arr.dtype.kind in "iu":
        # int64 throughout, so that sums of small dtypes cannot wrap (int8 + int8).
        if arr.dtype.kind == "u" and arr.size and int(arr.max()) > np.iinfo(np.int64).max:
            raise OccupancyError(f"{name}={int(arr.max())} is out of range (more than 63 bits)")
        return arr.astype(np.int64)
    if arr.dtype.kind == "O" and arr.size and all(
        isinstance(v, numbers.Integral) and not isinstance(v, (bool, np.bool_)) for v in arr.flat
    ):
        # Python ints past 64 bits: out of every range below, said with the value.
        big = max(arr.flat, key=abs)
        raise OccupancyError(f"{name}={big} is out of range (more than 63 bits)")
    raise TypeError(f"{name} must hold integers, not {arr.dtype}")


def _extremes(arr: np.ndarray) -> tuple[int, int] | None:
    if arr.size == 0:
        return None
    return int(arr.min()), int(arr.max())


def _top(value: Any) -> int | None:
    """Largest element of a scalar or array (None for an empty array)."""
    extremes = _extremes(np.asarray(value))
    return None if extremes is None else extremes[1]


def check_range(
    name: str, value: Any, low: int, high: int | None, arch: Architecture | None = None, what: str = ""
) -> None:
    """Raise OccupancyError when a scalar or array leaves ``[low, high]`` (empty arrays pass)."""
    extremes = _extremes(value) if isinstance(value, np.ndarray) else (value, value)
    if extremes is None:
        return
    lo, hi = extremes
    where = f" on {arch.name}" if arch is not None else ""
    if lo < low:
        raise OccupancyError(f"{name}={lo} is below the minimum of {low}")
    if high is not None and hi > high:
        raise OccupancyError(f"{name}={hi} exceeds the maximum of {high}{what}{where}")


def gc_mode(value: Any) -> str:
    """Normalise the partitioned-global-caching option."""
    if value is True:
        return "on"
    if value is False or value is None:
        return "off"
    if not isinstance(value, str):
        raise TypeError(f"partitioned_global_caching must be a str or bool, not {type(value).__name__}")
    if value.lower() in GC_MODES:
        return value.lower()
    raise OccupancyError(
        f"partitioned_global_caching={value!r} is not one of {', '.join(GC_MODES)}"
    )


def launch(
    arch: Architecture,
    *,
    threads_per_block: Any,
    registers_per_thread: Any,
    static_shared_memory: Any,
    dynamic_shared_memory: Any,
    max_dynamic_shared_memory: Any,
    carveout: Any,
    block_barriers: Any,
    max_threads_per_block: Any,
    arrays: bool,
) -> dict[str, Any]:
    """Validate one launch description (scalars, or arrays when ``arrays``)."""
    conv = integers if arrays else integer
    raw = {
        "threads_per_block": threads_per_block, "registers_per_thread": registers_per_thread,
        "static_shared_memory": static_shared_memory, "dynamic_shared_memory": dynamic_shared_memory,
        "block_barriers": block_barriers, "max_dynamic_shared_memory": max_dynamic_shared_memory,
        "carveout": carveout, "max_threads_per_block": max_threads_per_block,
    }
    # Only the attributes may be None (the runtime's default, no preference, no limit).
    optional = ("max_dynamic_shared_memory", "carveout", "max_threads_per_block")
    given = {k: conv(k, x) for k, x in raw.items() if x is not None or k not in optional}
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
    optin = arch.max_shared_memory_per_block_optin
    total = s + d
    check_range(
        "dynamic_shared_memory", d, 0, optin, arch, " bytes (the opt-in limit per block)"
    )
    hi = _top(total)
    if hi is not None and hi > optin:
        raise OccupancyError(
            f"static_shared_memory + dynamic_shared_memory={hi} exceeds the opt-in limit of "
            f"{optin} bytes per block on {arch.name}"
        )
    if max_dynamic_shared_memory is None:
        # The runtime's default for cudaFuncAttributeMaxDynamicSharedMemorySize.
        m = arch.max_shared_memory_per_block - s
    else:
        m = given["max_dynamic_shared_memory"]
        check_range(
            "max_dynamic_shared_memory", m, 0, optin, arch, " bytes (the opt-in limit per block)"
        )
        hi = _top(s + m)
        if hi is not None and hi > optin:
            raise OccupancyError(
                f"static_shared_memory + max_dynamic_shared_memory={hi} exceeds the opt-in "
                f"limit of {optin} bytes per block on {arch.name}"
            )
    if carveout is None:
        c = -1
    else:
        c = given["carveout"]
        if arrays:
            check_range("carveout", c, -1, 100, arch, " percent (-1 means no preference)")
        else:
            check_range("carveout", c, 0, 100, arch, " percent")
    mt = None
    if max_threads_per_block is not None:
        mt = given["max_threads_per_block"]
        check_range("max_threads_per_block", mt, 1, arch.max_threads_per_block, arch)
    return {"t": t, "r": r, "s": s, "d": d, "m": m, "c": c, "b": b, "mt": mt}
