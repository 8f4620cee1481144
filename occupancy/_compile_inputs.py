"""What a caller asks ``kernel_resources`` and its siblings to compile with: the compiler
(``compiler=``: "auto", "nvcc", "nvrtc" or an nvcc/ptxas path), the options, and the compile
command of a ``compile_commands.json`` that a source file's options and folder come from."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from ._arch import ArchitectureLike, architecture
from ._compile import option_strings
from ._compile_commands import CompileCommand, absolute_includes, compile_command
from ._errors import OccupancyError

__all__ = ["COMPILERS", "checked_compile_inputs", "command_options", "compiler_tool"]

# compiler= for CUDA C++ source: "auto" is nvcc for a file when one is found, else NVRTC; or the
# path of an nvcc or ptxas executable (another toolkit's).
COMPILERS = ("auto", "nvcc", "nvrtc")


def compiler_tool(compiler: str, name: str) -> str | None:
    """The ``name`` executable (``nvcc``, ``ptxas``) that ``compiler=PATH`` names: the path itself,
    or its sibling in the same folder; None for "auto", "nvcc" and "nvrtc"."""
    if compiler in COMPILERS:
        return None
    path = Path(compiler)
    tool = path if path.name.startswith(name) else path.with_name(name)
    if not tool.is_file():
        raise OccupancyError(f"compiler={os.fspath(compiler)!r}: no {name} beside it ({os.fspath(tool)})")
    return os.fspath(tool)


def checked_compile_inputs(source: object, arch: ArchitectureLike | None, options: Sequence[str], compiler: str,
                  compile_commands: str | os.PathLike[str] | None,
                  ) -> tuple[tuple[str, ...], str | None, ArchitectureLike | None]:
    """(options, folder, arch) with the compile command's options first, its folder, and its
    architecture when ``arch`` is None; ``compiler`` and ``options`` checked."""
    options = option_strings(options)
    if not isinstance(compiler, (str, os.PathLike)):
        raise TypeError(f"compiler must be one of {', '.join(COMPILERS)} or an nvcc/ptxas path, "
                        f"not {type(compiler).__name__}")
    compiler = os.fspath(compiler)
    if compiler not in COMPILERS and not (os.path.isfile(compiler) and os.access(compiler, os.X_OK)
                                          and Path(compiler).name.startswith(("nvcc", "ptxas"))):
        raise OccupancyError(f"compiler={compiler!r} is not one of {', '.join(COMPILERS)} nor the path of an "
                             "nvcc or ptxas executable")
    options, cwd, command = command_options(source, options, compile_commands)
    if command is not None:
        if arch is None:
            if len(command.architectures) != 1:
                raise OccupancyError(f"{command.file} is built for {', '.join(command.architectures) or 'no '}"
                                     " architecture: give arch=")
            arch = command.architectures[0]
    if arch is not None:
        architecture(arch)  # an unknown name fails here, listing the known ones
    return tuple(options), cwd, arch


def command_options(source: object, options: Sequence[str], compile_commands: str | os.PathLike[str] | None,
                     ) -> tuple[tuple[str, ...], str | None, CompileCommand | None]:
    """(options, folder, command): the compile command's options before ``options`` (their
    include folders made absolute, for nvcc runs in the command's folder) and its folder;
    ``options`` as given, and None, without ``compile_commands``."""
    if compile_commands is None:
        return tuple(options), None, None
    if not isinstance(source, (str, os.PathLike)) or not Path(source).is_file():
        raise OccupancyError("compile_commands= applies to a source file: give its path")
    command = compile_command(source, compile_commands)
    return (*command.options, *absolute_includes(options)), command.directory, command
