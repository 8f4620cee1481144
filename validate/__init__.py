"""Live validation of the models on a real GPU (cuda-python)."""

from ._errors import DeviceError

__all__ = ["DeviceError"]
