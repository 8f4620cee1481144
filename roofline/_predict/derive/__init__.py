"""What the time model derives from a kernel, its launch and the GPU."""
