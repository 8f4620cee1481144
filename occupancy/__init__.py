"""Exact CUDA occupancy calculator (compute capability 5.0-12.x), no GPU needed."""

__all__: list[str] = []
