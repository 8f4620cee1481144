"""source_lines: the source lines of each kernel of a file, with the registers live at each."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from ._arch import ArchitectureLike
from ._compile import ptxas_log
from ._compile_inputs import checked_compile_inputs, compiler_tool
from ._cubin import ELF_MAGIC, cubin_kernels
from ._input_kind import is_source_file
from ._kernel_resources import compile_text
from ._source_build import nvcc_file, nvcc_for, source_names
from ._lines import KernelLines, line_listing
from ._names import demangle, match_kernel

__all__ = ["source_lines"]


def _line_cubin(obj: object, arch: ArchitectureLike | None, options: Sequence[str], compiler: str,
                cwd: str | None) -> tuple[bytes, str | None]:
    """The cubin of a source file, source text, PTX or cubin, built with line information
    (by the compile paths `kernel_resources` takes), and the compiler's log (None for a cubin)."""
    lineinfo = [*options, "-lineinfo"] if "-lineinfo" not in options else list(options)
    if isinstance(obj, (bytes, bytearray, memoryview)) and bytes(obj[:4]) == ELF_MAGIC:
        return bytes(obj), None
    name, include = "<source>", None
    if isinstance(obj, (str, os.PathLike)) and not (isinstance(obj, str) and "\n" in obj):
        path = Path(obj)
        if not path.is_file():
            raise FileNotFoundError(f"no such file: {os.fspath(path)!r}")
        nvcc = nvcc_for(compiler)
        if is_source_file(path) and nvcc is not None:
            compiled = nvcc_file(path, arch, lineinfo, cwd, nvcc)
            return compiled.cubin, compiled.log
        data = path.read_bytes()
        if data[:4] == ELF_MAGIC:
            return data, None
        obj, name, include = data.decode("utf-8", "replace"), path.name, path.parent
    if not isinstance(obj, str):
        raise TypeError(f"source_lines takes CUDA source, PTX or a cubin (a path or its contents), "
                        f"not {type(obj).__name__}")
    compiled = compile_text(obj, arch, lineinfo, name, include, compiler_tool(compiler, "ptxas"))[0]
    return compiled.cubin, compiled.log


def source_lines(
    source_or_binary: object,
    *,
    arch: ArchitectureLike | None = None,
    kernel: str | None = None,
    options: Sequence[str] = (),
    compiler: str = "auto",
    compile_commands: str | os.PathLike[str] | None = None,
    headers: bool = False,
) -> dict[str, KernelLines]:
    """Where the registers go: per source line of each kernel, the peak of live registers, the
    spills (the stores and reloads nvdisasm marks as ptxas's, on the lines whose values they
    hold) and the other local stores and loads (per-thread arrays), read with nvdisasm from a
    ``-lineinfo`` build.

    Parameters are those of :func:`kernel_resources`; a source file or PTX is compiled with
    ``-lineinfo`` added, a cubin is read as it is (it must hold line information). Code
    inlined from another file (a header) counts on the kernel's own line that calls it;
    ``headers=True`` gives that file's lines rows of their own.

    Returns
    -------
    dict
        Kernel symbol to :class:`KernelLines` (only ``kernel`` when given).

    Raises
    ------
    OccupancyError
        When the kernel is not found, the cubin has no line information, or no nvdisasm is
        installed (``pip install nvidia-cuda-nvdisasm``).

    Examples
    --------
    >>> import occupancy
    >>> src = '''
    ... extern "C" __global__ void k(float* x) {
    ...     x[threadIdx.x] *= 2.0f;
    ... }
    ... '''
    >>> k = occupancy.source_lines(src, arch="sm_90")["k"]
    >>> k.peak_live_registers <= k.registers_per_thread
    True
    """
    flags, cwd, arch = checked_compile_inputs(source_or_binary, arch, options, compiler, compile_commands)
    cubin, log = _line_cubin(source_or_binary, arch, flags, compiler, cwd)
    built, kernels = cubin_kernels(cubin, "cubin")
    registers = {str(k["kernel"]): int(k["registers_per_thread"]) for k in kernels}
    names = demangle(list(registers))
    if kernel is not None:
        chosen = match_kernel(kernel, list(registers), names,
                              *source_names(source_or_binary, options, compiler, compile_commands))
        registers = {chosen: registers[chosen]}
    spills = None if log is None else {k: v["spill_store_bytes"] + v["spill_load_bytes"]
                                       for k, v in ptxas_log(log).items()}
    return line_listing(cubin, registers, built, {k: names.get(k) for k in registers}, spill_bytes=spills,
                        headers=headers)
