"""An open GPU: the cuda.core device, one stream, buffers and copies (all CUDA calls here
or in `_compile`, errors translated by `_driver`)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, ParamSpec, TypeVar

import numpy as np
from occupancy.common import integer

from ._driver import cuda_errors, cuda_modules, driver_call, first_sentence, require_driver
from ._errors import DeviceError
from ._timers import HostTimer, QueuedEventTimer

if TYPE_CHECKING:
    from cuda.core import Buffer, Kernel

__all__ = ["Session", "check_session", "open_session", "takes_session"]

P = ParamSpec("P")
R = TypeVar("R")

# IEEE quiet NaN, the poison written over outputs before a checked launch.
POISON_WORD = 0x7FC00000


class Session:
    """One device, made current, with a stream, its timers and an L2-flush buffer.

    ``timer`` queues a spin kernel ahead of its start event (`QueuedEventTimer`), so the
    timings hold the GPU's time and not the host's Python launch path; ``host_timer`` times
    work the host does itself on its clock, after the stream has drained (`HostTimer`).
    """

    def __init__(self, index: int) -> None:
        index = integer("index", index)
        # cuInit first, through the one gate that remembers a failure: cuda.core's own
        # start-up without a driver leaves a lock held and the next driver call hangs.
        require_driver()
        self.cuda = cuda_modules()
        core = self.cuda.core
        with cuda_errors("opening the CUDA device"):
            try:
                count = len(core.Device.get_all_devices())
            except Exception as exc:  # noqa: BLE001 - any failure here means "no GPU"
                raise DeviceError(f"no usable CUDA GPU: {first_sentence(exc)}") from None
            if count == 0:
                raise DeviceError("no CUDA GPU found")
            if not 0 <= index < count:
                raise DeviceError(f"device={index} does not exist; devices are 0..{count - 1}")
            self.device = core.Device(index)
            self.device.set_current()
            self.stream = self.device.create_stream()
            cc = self.device.compute_capability
            self.arch = f"sm_{int(cc.major)}{int(cc.minor)}"
        self.index = index
        self.timer = QueuedEventTimer(self.stream, self.arch)
        self.host_timer = HostTimer(before=self.synchronize)
        self._flush_buffer: Buffer | None = None
        self._flush_bytes = 0
        self._keep: list[object] = []

    # memory ---------------------------------------------------------------
    def allocate(self, nbytes: int) -> Buffer:
        """Allocate ``nbytes`` of device memory (a cuda.core Buffer)."""
        with cuda_errors(f"allocating {nbytes} bytes"):
            return self.device.allocate(max(int(nbytes), 4), stream=self.stream)

    def upload(self, array: np.ndarray) -> Buffer:
        """Copy a host array to a new device buffer."""
        host = np.ascontiguousarray(array)
        buffer = self.allocate(host.nbytes)
        self.stream.sync()
        driver_call(self.cuda.driver.cuMemcpyHtoD, int(buffer.handle), host.ctypes.data, host.nbytes)
        return buffer

    def download(self, buffer: Buffer, shape: tuple[int, ...], dtype: np.typing.DTypeLike) -> np.ndarray:
        """Copy a device buffer back into a new host array of ``shape`` and ``dtype``."""
        out = np.empty(shape, dtype=dtype)
        self.stream.sync()
        driver_call(self.cuda.driver.cuMemcpyDtoH, out.ctypes.data, int(buffer.handle), out.nbytes)
        return out

    def fill(self, buffer: Buffer, word: int, nbytes: int) -> None:
        """Set the first ``nbytes`` of a buffer to a 32-bit ``word``, on the stream."""
        driver_call(self.cuda.driver.cuMemsetD32Async, int(buffer.handle), word, nbytes // 4, self.stream.handle)

    def poison(self, buffer: Buffer, nbytes: int) -> None:
        """Fill a buffer with quiet NaNs so that unwritten outputs show."""
        self.fill(buffer, POISON_WORD, nbytes)

    def flush_l2(self) -> None:
        """Overwrite a buffer of 4x the L2 size, evicting whatever the last launch cached."""
        if self._flush_buffer is None:
            l2 = int(self.device.properties.l2_cache_size) or (64 << 20)
            self._flush_bytes = 4 * l2
            self._flush_buffer = self.allocate(self._flush_bytes)
        self.fill(self._flush_buffer, 0, self._flush_bytes)

    # launching --------------------------------------------------------------
    def launcher(
        self, kernel: Kernel, grid: tuple[int, ...], block: tuple[int, ...], args: tuple[object, ...], shared: int = 0
    ) -> Callable[[], None]:
        """Return a function that enqueues one launch of ``kernel`` on the stream."""
        core = self.cuda.core
        with cuda_errors("building a launch configuration"):
            config = core.LaunchConfig(grid=tuple(grid), block=tuple(block), shmem_size=int(shared))

        def run() -> None:
            with cuda_errors("launching a kernel"):
                core.launch(self.stream, config, kernel, *args)

        return run

    def synchronize(self) -> None:
        """Wait for the stream; a kernel fault surfaces here as a DeviceError."""
        with cuda_errors("waiting for the GPU"):
            self.stream.sync()

    def set_kernel_attribute(self, kernel: Kernel, name: str, value: int) -> None:
        """Set a function attribute (``MAX_DYNAMIC_SHARED_SIZE_BYTES``, ``PREFERRED_SHARED_MEMORY_CARVEOUT``).

        cuda.core reads kernel attributes but does not set them; this goes through
        ``cuKernelSetAttribute`` on the kernel handle, for this device.
        """
        driver = self.cuda.driver
        attribute = getattr(driver.CUfunction_attribute, f"CU_FUNC_ATTRIBUTE_{name}")
        driver_call(driver.cuKernelSetAttribute, attribute, int(value), kernel.handle, self.device.device_id)


def check_session(session: object, name: str = "session") -> Session:
    """``session`` if it is an open `Session`; anything else is a TypeError naming ``name``."""
    if not isinstance(session, Session):
        raise TypeError(f"{name} must be an open validate.Session (validate.open_session(device)), "
                        f"not {type(session).__name__}")
    return session


def takes_session(function: Callable[P, R]) -> Callable[P, R]:
    """Check a function's ``session`` (its first argument) with `check_session` before it runs.

    Every public function that needs a GPU session carries this decorator, so one that is
    given something else says so in one line before it compiles or touches the driver.
    """

    @functools.wraps(function)
    def checked(*args: P.args, **kwargs: P.kwargs) -> R:
        check_session(args[0] if args else kwargs.get("session"))
        return function(*args, **kwargs)

    return checked


def open_session(index: int = 0) -> Session:
    """Open device ``index``.

    Raises
    ------
    DeviceError
        No cuda-python, no driver, no GPU, or no device of that index. A driver that failed
        to start once in this process is not called again: the same error, at once.
    TypeError
        For an index that is not an integer.
    """
    return Session(index)
