"""Input checks shared by the public functions: integer-ness and ranges."""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from ._arch import Architecture
from ._errors import OccupancyError
from ._rules import GC_MODES, MAX_BARRIERS_PER_BLOCK


def integer(name: str, value: Any) -> int:
    """``value`` as a Python int; floats must be integral."""
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be an integer, not bool")
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        if float(value).is_integer():
            return int(value)
        raise OccupancyError(f"{name}={value!r} is not an integer")
    raise TypeError(f"{name} must be an integer, not {type(value).__name__}")


def integers(name: str, value: Any) -> np.ndarray:
    """``value`` as an integer numpy array (scalars become 0-d arrays)."""
    arr = np.asarray(value)
    if arr.dtype.kind == "b":
        raise TypeError(f"{name} must hold integers, not booleans")
    if arr.dtype.kind in "iu":
        return arr
    if arr.dtype.kind == "f":
        bad = ~np.isfinite(arr) | (arr != np.round(arr))
        if bad.any():
            raise OccupancyError(f"{name}={arr[bad].flat[0]!r} is not an integer")
        return arr.astype(np.int64)
    raise TypeError(f"{name} must hold integers, not {arr.dtype}")


def _extremes(arr: np.ndarray) -> tuple[int, int]:
    if arr.size == 0:
        return 0, 0
    return int(arr.min()), int(arr.max())


def check_range(
    name: str, value: Any, low: int, high: int | None, arch: Architecture | None = None, what: str = ""
) -> None:
    """Raise OccupancyError when a scalar or array leaves ``[low, high]``."""
    lo, hi = _extremes(np.asarray(value)) if isinstance(value, np.ndarray) else (value, value)
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
    if isinstance(value, str) and value.lower() in GC_MODES:
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
    t = conv("threads_per_block", threads_per_block)
    r = conv("registers_per_thread", registers_per_thread)
    s = conv("static_shared_memory", static_shared_memory)
    d = conv("dynamic_shared_memory", dynamic_shared_memory)
    b = conv("block_barriers", block_barriers)
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
    _, hi = _extremes(np.asarray(total))
    if hi > optin:
        raise OccupancyError(
            f"static_shared_memory + dynamic_shared_memory={hi} exceeds the opt-in limit of "
            f"{optin} bytes per block on {arch.name}"
        )
    if max_dynamic_shared_memory is None:
        # The runtime's default for cudaFuncAttributeMaxDynamicSharedMemorySize.
        m = arch.max_shared_memory_per_block - s
    else:
        m = conv("max_dynamic_shared_memory", max_dynamic_shared_memory)
        check_range(
            "max_dynamic_shared_memory", m, 0, optin, arch, " bytes (the opt-in limit per block)"
        )
        _, hi = _extremes(np.asarray(s + m))
        if hi > optin:
            raise OccupancyError(
                f"static_shared_memory + max_dynamic_shared_memory={hi} exceeds the opt-in "
                f"limit of {optin} bytes per block on {arch.name}"
            )
    if carveout is None:
        c = -1
    else:
        c = conv("carveout", carveout)
        if arrays:
            check_range("carveout", c, -1, 100, arch, " percent (-1 means no preference)")
        else:
            check_range("carveout", c, 0, 100, arch, " percent")
    mt = None
    if max_threads_per_block is not None:
        mt = conv("max_threads_per_block", max_threads_per_block)
        check_range("max_threads_per_block", mt, 1, arch.max_threads_per_block, arch)
    return {"t": t, "r": r, "s": s, "d": d, "m": m, "c": c, "b": b, "mt": mt}
