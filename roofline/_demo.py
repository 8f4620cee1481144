"""The kernels of `gpuroof demo`, with their compiled registers per thread.

The demo needs no GPU and no compiler, so the registers each kernel compiles to come from
packaged data (``data/demo_resources.toml``, written by scripts/demo_resources.py with the
compiler named in it) rather than an assumed 32: the occupancy the demo shows is the
compiled kernels'.
"""

from __future__ import annotations

import functools
import tomllib
from importlib import resources

from pydantic import BaseModel, ConfigDict, Field

from . import models
from ._facts import gpu as lookup_gpu
from ._gpu import DEFAULT_GPU, GPU
from ._kernel import Kernel
from .models._registry import MATRIX

__all__ = ["DemoResources", "demo_kernels", "demo_resources"]


class DemoResources(BaseModel):
    """The demo kernels' compiled resources, keyed by kernel label (``Kernel.label``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    file: str = Field(description="The CUDA source compiled (in this repository).")
    compiler: str = Field(description='Compiler and version, e.g. "NVRTC 13.0".')
    options: str
    functions: dict[str, str] = Field(description="Label to the kernel function compiled.")
    defines: dict[str, dict[str, int]] = Field(description="Label to the macros the model compiles with.")
    static_shared_memory: dict[str, int] = Field(description="Label to static shared memory, bytes.")
    registers_per_thread: dict[str, dict[str, int]] = Field(description="Label to architecture to registers.")


@functools.cache
def demo_resources() -> DemoResources:
    """The packaged compiled resources of the demo kernels (read once).

    Examples
    --------
    >>> import roofline
    >>> roofline.suite.demo_resources().registers_per_thread["copy"]["sm_90"] <= 32
    True
    """
    text = resources.files("roofline").joinpath("data/demo_resources.toml").read_text("utf-8")
    raw = tomllib.loads(text)
    kernels = raw["kernels"]
    return DemoResources(
        **raw["source"],
        functions={label: k["function"] for label, k in kernels.items()},
        defines={label: k["defines"] for label, k in kernels.items()},
        static_shared_memory={label: k["static_shared_memory"] for label, k in kernels.items()},
        registers_per_thread={label: k["registers_per_thread"] for label, k in kernels.items()},
    )


def demo_kernels(gpu: GPU | str = DEFAULT_GPU, *, compiled: bool = True) -> tuple[Kernel, ...]:
    """The kernels `gpuroof demo` analyses: `roofline.models.suite()` and the register-tiled SGEMM.

    Parameters
    ----------
    gpu : GPU or str
        The GPU whose architecture's compiled registers the launches get.
    compiled : bool
        False: the models as they are (registers per thread unknown).

    Raises
    ------
    RooflineError
        An unknown GPU.
    TypeError
        ``compiled`` that is not a bool.

    Returns
    -------
    tuple of Kernel
        With ``compiled``, each launch carries the registers per thread its kernel compiles
        to for the GPU's architecture (`demo_resources`); a kernel or architecture the table
        lacks keeps an unknown count (the suite then assumes one and says so).

    Examples
    --------
    >>> import roofline
    >>> sgemm = roofline.suite.demo_kernels("H100 SXM")[-1]
    >>> sgemm.name, sgemm.launch.registers_per_thread > 64
    ('matmul_register_tiled', True)
    """
    if not isinstance(compiled, bool):
        raise TypeError(f"compiled must be a bool, not {type(compiled).__name__}")
    arch = lookup_gpu(gpu).architecture.name  # a wrong GPU is refused before the models are built
    kernels = (*models.suite(), models.matmul_register_tiled(MATRIX))
    if not compiled:
        return kernels
    table = demo_resources().registers_per_thread
    out = []
    for kernel in kernels:
        registers = table.get(kernel.label, {}).get(arch)
        if registers is not None and kernel.launch is not None:
            launch = kernel.launch.model_copy(update={"registers_per_thread": registers})
            kernel = kernel.model_copy(update={"launch": launch})
        out.append(kernel)
    return tuple(out)
