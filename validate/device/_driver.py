"""The one place where cuda-python is imported and its errors become `DeviceError`.

cuda.core raises its own exception types (``CUDAError``, ``NVRTCError``) and the
low-level ``cuda.bindings`` calls return ``(CUresult, *values)`` tuples instead of
raising. Everything in this package goes through `cuda_modules`, `driver_call`
and `cuda_errors`, so a user sees one exception type with one kind of message.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any

from occupancy.common import install_extra

from ._errors import DeviceError

__all__ = ["CudaModules", "cuda_errors", "cuda_modules", "driver_call", "first_sentence", "require_driver"]

INSTALL_HINT = f"install cuda-python: {install_extra('gpu')}"

#: Why the driver could not start in this process (None: it has not failed). Once set,
#: `require_driver` (which every session opens through) and `driver_call` raise it again
#: without calling cuda-python: the driver keeps a failed ``cuInit`` for the life of the
#: process anyway, and after cuda.core's failed start-up (see `require_driver`) the next
#: driver call blocks forever.
_FAILED: str | None = None


def _fail(message: str) -> DeviceError:
    """Record that the driver cannot start in this process; the error to raise."""
    global _FAILED
    _FAILED = message
    return DeviceError(message)


class CudaModules:
    """The imported cuda-python modules (``cuda.core`` and ``cuda.bindings.driver``)."""

    def __init__(self, core: ModuleType, driver: ModuleType, core_version: str, bindings_version: str) -> None:
        self.core = core
        self.driver = driver
        self.core_version = core_version
        self.bindings_version = bindings_version


def cuda_modules() -> CudaModules:
    """Import cuda-python lazily.

    Returns
    -------
    CudaModules
        ``core`` is ``cuda.core``; ``driver`` is ``cuda.bindings.driver``.

    Raises
    ------
    DeviceError
        When cuda-python (cuda-core, cuda-bindings) is not installed.
    """
    try:
        import cuda.bindings
        import cuda.core as core
        from cuda.bindings import driver
    except ImportError as exc:
        raise DeviceError(f"cuda-python is not available ({exc}); {INSTALL_HINT}") from None
    return CudaModules(
        core,
        driver,
        getattr(core, "__version__", "unknown"),
        getattr(cuda.bindings, "__version__", "unknown"),
    )


def _error_name(driver: ModuleType, code: object) -> str:
    try:
        err, name = driver.cuGetErrorName(code)
        if name:
            return name.decode() if isinstance(name, bytes) else str(name)
    except Exception:  # noqa: BLE001 - naming the error must never hide it
        pass
    return str(code)


def driver_call(function: Callable[..., object], *args: object) -> Any:
    """Call a ``cuda.bindings.driver`` function and check its ``CUresult``.

    Parameters
    ----------
    function : callable
        A driver API function, e.g. ``driver.cuMemcpyHtoD``.
    *args
        Its arguments.

    Returns
    -------
    object
        None for calls that return only a status, the value for one value, else a tuple.

    Raises
    ------
    DeviceError
        When the call returns anything but ``CUDA_SUCCESS``.
    """
    if _FAILED is not None:
        raise DeviceError(_FAILED)
    driver = cuda_modules().driver
    result = function(*args)
    if not isinstance(result, tuple):
        result = (result,)
    status, values = result[0], result[1:]
    if int(status) != 0:
        name = getattr(function, "__name__", "driver call")
        raise DeviceError(f"{name} failed: {_error_name(driver, status)} ({int(status)})")
    if not values:
        return None
    return values[0] if len(values) == 1 else values


@contextlib.contextmanager
def cuda_errors(what: str) -> Iterator[None]:
    """Translate cuda.core and cuda.bindings exceptions raised inside the block.

    Parameters
    ----------
    what : str
        What was being done, for the message (``"compiling copy"``).

    Raises
    ------
    DeviceError
        Carrying ``what`` and the original message (NVRTC logs included).
    """
    try:
        yield
    except DeviceError:
        raise
    except SystemError as exc:
        # cuda.bindings' driver loader failing inside a lock (see require_driver): the lock
        # stays held, so no driver call may follow in this process.
        # The SystemError chains the loader's own error (no libcuda: DynamicLibNotFoundError).
        cause = exc.__cause__ or exc.__context__ or exc
        raise _fail(f"no usable CUDA GPU: {first_sentence(cause)} "
                    f"(the driver failed to start while {what})") from None
    except Exception as exc:
        module = type(exc).__module__ or ""
        if module.startswith("cuda.") or type(exc).__name__ in ("CUDAError", "NVRTCError"):
            message = str(exc).replace("\x00", "").strip()
            raise DeviceError(f"{what}: {message}") from exc
        raise


def require_driver() -> None:
    """Initialise the CUDA driver (``cuInit``), or raise DeviceError when it cannot be.

    Call it before any cuda.core call that loads code or creates a context. With cuda.core
    1.2 and cuda.bindings 13.5 on a machine without the NVIDIA driver, ``ObjectCode.get_kernel``
    fails to load libcuda and then, on its error path, calls back into cuda.bindings' driver
    loader while that error is still set: the loader's lock is entered but never left
    (``SystemError: <built-in method __enter__ of _thread.lock ...> returned a result with
    an exception set``), and the next driver call of the process waits on the lock forever.
    ``cuInit`` through cuda.bindings reports the missing library cleanly. Its failure (or
    that SystemError, met inside `cuda_errors`) is kept: later calls and `driver_call`
    raise the same error at once and never call the driver again in this process.

    Raises
    ------
    DeviceError
        No cuda-python, no NVIDIA driver, or no GPU (the driver's error name in the message).
    """
    if _FAILED is not None:
        raise DeviceError(_FAILED)
    driver = cuda_modules().driver
    try:
        driver_call(driver.cuInit, 0)
    except DeviceError as exc:
        raise _fail(f"no usable CUDA GPU: {exc}") from None
    except Exception as exc:  # noqa: BLE001 - cuda.pathfinder could not load libcuda: no usable GPU
        raise _fail(f"no usable CUDA GPU: {first_sentence(exc)}") from None


def first_sentence(exc: BaseException) -> str:
    """The first sentence of an exception's message, for a one-line error."""
    if type(exc).__name__ == "DynamicLibNotFoundError" and "driver" in str(exc):
        return "the NVIDIA driver (libcuda) is not installed"
    text = " ".join(str(exc).replace("\x00", " ").split()) or type(exc).__name__
    return text.split(". ")[0].rstrip(".")

