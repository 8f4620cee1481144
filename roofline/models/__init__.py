"""Models of the classic CUDA kernels."""

__all__: list[str] = []
