"""Where the CUDA toolkit's executables are found (nvcc, ptxas, cu++filt), one search for all."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

__all__ = ["find_tool"]


def find_tool(tool: str) -> str | None:
    """``$GPUROOF_<TOOL>``, ``PATH``, ``$CUDA_HOME``/``$CUDA_PATH``, ``/usr/local/cuda``, NVIDIA's
    wheels (``nvidia/cuda_nvcc/bin``, ``nvidia/cu13/bin``), then cuda-pathfinder."""
    candidates: list[Path | str | None] = [os.environ.get(f"GPUROOF_{tool.upper()}"), shutil.which(tool)]
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(var):
            candidates.append(Path(os.environ[var]) / "bin" / tool)
    candidates.append(Path("/usr/local/cuda/bin") / tool)
    for entry in sys.path:
        for sub in ("nvidia/cuda_nvcc/bin", "nvidia/cu13/bin", "nvidia/cu12/bin"):
            candidates.append(Path(entry) / sub / tool)
    for candidate in candidates:
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return os.fspath(candidate)
    try:  # last, since it prefers a wheel's ptxas (CUDA 12.9's, say) to the toolkit of the nvcc above
        from cuda.pathfinder import find_nvidia_binary_utility
    except ImportError:
        return None
    try:
        return find_nvidia_binary_utility(tool)
    except Exception:  # noqa: BLE001 - an older pathfinder that does not know the tool
        return None
