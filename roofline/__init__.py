"""Roofline models, the GPU database and plots."""

__all__: list[str] = []
