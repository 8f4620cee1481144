"""NVRTC, the fallback when no nvcc is found: CUDA's headers on its include path, and its
failures on what only nvcc compiles (host code, the C++ standard library) said in one line."""

from __future__ import annotations

import functools
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path

from ._nvcc import nvcc_command

__all__ = ["nvrtc_failure", "nvrtc_include_options"]


@functools.cache
def _toolkit_includes() -> tuple[str, ...]:
    """The first CUDA include folder found (``$CUDA_HOME``, ``$CUDA_PATH``, /usr/local/cuda,
    NVIDIA's runtime wheel) and its ``cccl`` folder, which CUDA 13's cooperative groups need."""
    roots = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"]
    roots += [os.path.join(entry, sub) for entry in sys.path for sub in ("nvidia/cu13", "nvidia/cuda_runtime")]
    for root in filter(None, roots):
        include = Path(root) / "include"
        if (include / "cuda_runtime.h").is_file() or (include / "cooperative_groups.h").is_file():
            cccl = include / "cccl"
            return (os.fspath(include), *([os.fspath(cccl)] if cccl.is_dir() else []))
    return ()


def nvrtc_include_options() -> list[str]:
    """``-I`` options for CUDA's own headers (none when no toolkit or runtime wheel is found)."""
    return [f"-I{folder}" for folder in _toolkit_includes()]


# NVRTC's message -> what it means for the user.
_CAUSES = (
    (re.compile(r"host functions are not allowed|is not allowed in JIT mode|__host__ function"),
     "host code (NVRTC compiles device code only)"),
    (re.compile(r'(?:cannot|could not) open source file "([^"]+)"'), "header {0} is not on NVRTC's include path"),
    (re.compile(r"identifier \"(std::\w+|printf|assert|malloc)\" is undefined"), "{0} needs a standard header"),
)


def nvrtc_failure(log: str, name: str, arch: object, options: Sequence[str]) -> str:
    """One line for an NVRTC error log: the first error's file and line, its cause, and the
    nvcc command that compiles the file.

    Examples
    --------
    >>> print(nvrtc_failure('k.cu(3): catastrophic error: cannot open source file "stdio.h"', "k.cu", "sm_90", []))
    k.cu:3: NVRTC cannot compile it: header stdio.h is not on NVRTC's include path; nvcc compiles it (install the CUDA toolkit or nvidia-cuda-nvcc): nvcc -cubin -gencode arch=compute_90,code=sm_90 --resource-usage k.cu
    """
    where, cause = name, "an error"
    for line in log.splitlines():
        m = re.match(r"(.+?)\((\d+)\): (?:catastrophic )?error: (.*)", line)
        if not m:
            continue
        where, message = f"{Path(m[1]).name}:{m[2]}", m[3].strip()
        cause = message
        for pattern, text in _CAUSES:
            if found := pattern.search(message):
                cause = text.format(*found.groups())
                break
        break
    command = " ".join(nvcc_command(name, arch, options))
    return (f"{where}: NVRTC cannot compile it: {cause}; nvcc compiles it "
            f"(install the CUDA toolkit or nvidia-cuda-nvcc): {command}")
