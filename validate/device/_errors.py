"""Errors raised by the validation package."""

from __future__ import annotations

__all__ = ["DeviceError"]


class DeviceError(RuntimeError):
    """A GPU, driver or cuda-python failure (no device, no cuda-python, a CUDA error)."""
