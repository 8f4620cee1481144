"""A CUDA C++ file built as its project builds it: the nvcc that builds it (`nvcc_for`), the
build (`nvcc_file`, and `file_cubin`, the cubin alone, which `validate.measure` loads), and the
names its preprocessed text spells (`source_names`: enumerators and type aliases, for a kernel
named as the source writes it). `kernel_resources` reads the resources of what these build."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NamedTuple

from ._arch import ArchitectureLike
from ._compile import CompileError, Compiled, one_line_error, option_strings
from ._compile_inputs import checked_compile_inputs, command_options, compiler_tool
from ._enums import Enumerator, enumerators, type_aliases
from ._errors import OccupancyError
from ._input_kind import is_source_file, is_source_text
from ._nvcc import file_text, find_nvcc, nvcc_compile

__all__ = ["SourceNames", "file_cubin", "nvcc_file", "nvcc_for", "required_nvcc", "source_names"]


def nvcc_for(compiler: str) -> str | None:
    """The nvcc that compiles a CUDA C++ file for ``compiler=``: the one it names, else the one
    found (None for "nvrtc", or when there is none)."""
    return compiler_tool(compiler, "nvcc") or (find_nvcc() if compiler != "nvrtc" else None)


def required_nvcc(compiler: str) -> str | None:
    """`nvcc_for`, refusing ``compiler="nvcc"`` where none is found: None means NVRTC's turn."""
    nvcc = nvcc_for(compiler)
    if nvcc is None and compiler == "nvcc":
        raise OccupancyError("compiler='nvcc' but no nvcc was found (PATH, CUDA_HOME, CUDA_PATH, "
                             "/usr/local/cuda, nvidia-cuda-nvcc)")
    return nvcc


class SourceNames(NamedTuple):
    """What a kernel's name may spell as its source does, each read once when first asked for (by
    `match_kernel`, for a name with template arguments it does not find as written): the source's
    enumerators (``sorter<Mode::Fast>``) and its type aliases (``norm<floatX>``)."""

    enumerators: Callable[[], tuple[Enumerator, ...]]
    aliases: Callable[[], dict[str, str]]


def source_names(obj: object, options: Sequence[str], compiler: str,
                 compile_commands: str | os.PathLike[str] | None) -> SourceNames:
    """The enumerators and type aliases of the source ``obj`` (a CUDA C++ file with its headers,
    preprocessed once as it compiles, or source text); a binary has none."""

    @functools.cache
    def text() -> str:
        if isinstance(obj, str) and is_source_text(obj):
            return obj
        if isinstance(obj, (str, os.PathLike)) and Path(obj).is_file() and is_source_file(Path(obj)):
            flags, cwd = command_options(obj, option_strings(options), compile_commands)[:2]
            return file_text(Path(obj), flags, nvcc_for(compiler), cwd)
        return ""

    return SourceNames(functools.cache(lambda: enumerators(text())), functools.cache(lambda: type_aliases(text())))


def file_cubin(path: str | os.PathLike[str], arch: ArchitectureLike, *, options: Sequence[str] = (),
               compiler: str = "auto") -> tuple[bytes, str] | None:
    """The cubin of the CUDA C++ file ``path`` for ``arch`` as `kernel_resources` builds it: nvcc,
    with the file's host code and every header its project's build finds, and ``options``
    (nvcc's: ``-I``, ``-D``, ``-std=``, ``-maxrregcount=``).

    Returns
    -------
    (bytes, str) or None
        The cubin and the tool that built it (``"nvcc 13.0.48"``); None where ``compiler`` is
        ``"auto"`` and no nvcc is found, or is ``"nvrtc"``: the caller compiles the text itself.

    Raises
    ------
    CompileError
        nvcc's errors, one line naming them (the whole log in ``.log``).
    OccupancyError
        ``compiler="nvcc"`` and no nvcc found, or a ``compiler`` that is neither of the names
        of `COMPILERS` nor an nvcc path.

    Examples
    --------
    >>> import occupancy
    >>> cubin, tool = occupancy.file_cubin("app/kernels.cu", "sm_90", options=["-Iapp/include"])  # doctest: +SKIP
    >>> cubin[:4], tool.split()[0]  # doctest: +SKIP
    (b'\\x7fELF', 'nvcc')
    """
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a CUDA C++ file's path (str or os.PathLike), not {type(path).__name__}")
    if not Path(path).is_file():
        raise FileNotFoundError(f"no such file: {os.fspath(path)!r}")
    if not is_source_file(Path(path)):
        raise OccupancyError(f"path={os.fspath(path)!r} is not CUDA C++ source (.cu, .cuh, .cpp, ...): "
                             "a binary's kernels are read by kernel_resources")
    options, cwd, _ = checked_compile_inputs(path, arch, options, compiler, None)
    nvcc = required_nvcc(compiler)
    if nvcc is None:
        return None
    compiled = nvcc_file(Path(path), arch, options, cwd, nvcc)
    return compiled.cubin, compiled.tool


def nvcc_file(path: Path, arch: ArchitectureLike | None, options: Sequence[str], cwd: str | None,
               nvcc: str | None = None) -> Compiled:
    """A CUDA C++ file compiled by nvcc for `arch`; a failure is one line naming the errors."""
    if arch is None:
        raise OccupancyError("arch= is required to compile CUDA source, e.g. arch='sm_90'")
    try:
        return nvcc_compile(path, arch, options, cwd=cwd, nvcc=nvcc)
    except CompileError as exc:
        errors = list(dict.fromkeys(line.strip() for line in exc.log.splitlines() if "error" in line))
        errors = errors or exc.log.splitlines()[-1:]
        raise one_line_error(f"{exc.args[0].splitlines()[0]}: {'; '.join(errors[:3])}",
                        exc.log) from None
