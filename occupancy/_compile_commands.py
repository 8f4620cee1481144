"""A file's own compile command, from a ``compile_commands.json`` (CMake, Bear, Meson).

The project's flags decide the registers (``-O``, ``-maxrregcount``, ``--use_fast_math``,
macros), so the file is compiled with them: everything but what names outputs, dependency
files or the architectures (given per call) is kept, and the command's architectures
are the default ones.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from ._errors import OccupancyError

__all__ = ["CompileCommand", "absolute_includes", "compile_command"]

# Options dropped with the argument that follows them (outputs, dependency files, the
# architectures, which are set per call), and dropped alone (the mode: nvcc -c, -cubin ...).
# -x stays: a .cpp file built as CUDA (-x cu) holds kernels only when compiled as such.
_WITH_VALUE = {"-o", "--output-file", "-MF", "-MT", "-MQ", "-gencode", "--generate-code", "-arch",
               "--gpu-architecture", "-code", "--gpu-code", "-ccbin", "--compiler-bindir",
               "--dependency-output", "-odir", "--output-directory"}
_ALONE = {"-c", "--compile", "-cubin", "--cubin", "-ptx", "--ptx", "-fatbin", "--fatbin", "-MD", "-MMD", "-M",
          "-MM", "-E", "-dw", "--device-w", "-lib", "-link", "--resource-usage",
          "-res-usage", "-keep", "--keep", "-dlink", "--device-link", "-MP"}
# The other inputs of a command that compiles and links several files at once
# (``nvcc a.cu b.cu main.cpp -o app``, as Makefiles do): only the file asked is compiled.
_INPUT = re.compile(r"\.(cu|c|cc|cpp|cxx|c\+\+|o|obj|a|so|lib|ptx|cubin|fatbin)$", re.I)
# Options whose value follows as the next argument and is kept as it is (``-include k.cu``).
_KEEP_VALUE = {"-I", "--include-path", "-isystem", "--system-include", "-include", "--pre-include", "-D",
               "--define-macro", "-U", "--undefine-macro", "-Xcompiler", "--compiler-options", "-Xptxas",
               "--ptxas-options", "-Xnvlink", "--nvlink-options", "-Xlinker", "--linker-options",
               "--options-file", "-optf", "-x", "--x", "-std", "--std", "-maxrregcount", "--maxrregcount"}


@dataclass(frozen=True)
class CompileCommand:
    """What a compile database says about one file: nvcc ``options`` (no outputs, no
    architectures), the ``directory`` it ran in and the ``architectures`` it built (``sm_XY``)."""

    file: str
    directory: str
    options: tuple[str, ...]
    architectures: tuple[str, ...]


def _architectures(arguments: list[str]) -> list[str]:
    """The SASS targets of ``-gencode arch=compute_XY,code=[sm_XY,...]``, ``-arch=sm_XY`` and
    ``--generate-code=...`` (for a ``compute_XY`` only, its ``sm_XY``)."""
    found: list[str] = []
    text = " ".join(arguments)
    for m in re.finditer(r"(?:-gencode|--generate-code)[= ]\S*?arch=compute_(\d+[af]?),code=(\S+)", text):
        codes = re.findall(r"sm_(\d+[af]?)", m[2]) or [m[1]]
        found.extend(f"sm_{c}" for c in codes)
    for m in re.finditer(r"(?:^|\s)(?:-arch|--gpu-architecture)[= ](?:sm|compute)_(\d+[af]?)", text):
        found.append(f"sm_{m[1]}")
    for m in re.finditer(r"(?:^|\s)--cuda-gpu-arch=sm_(\d+[af]?)", text):  # clang
        found.append(f"sm_{m[1]}")
    return list(dict.fromkeys(found))


def _options(arguments: list[str], source: Path, directory: Path) -> list[str]:
    out: list[str] = []
    skip = keep = False
    for arg in arguments[1:]:  # the first is the compiler
        if skip:
            skip = False
            continue
        if keep:
            keep = False
            out.append(arg)
            continue
        head = arg.split("=", 1)[0]
        if arg in _KEEP_VALUE:
            keep = True
            out.append(arg)
        elif arg in ("-dc", "--device-c"):
            out.append("-rdc=true")  # -dc is -c with relocatable device code: the mode stays, the -c goes
        elif arg in _WITH_VALUE:
            skip = True
        elif head in _WITH_VALUE or arg in _ALONE or head in {"-MF", "-MT", "-MQ"}:
            continue
        elif arg.startswith(("-MF", "-MT", "-MQ", "-o")) and not arg.startswith("-odir"):
            continue  # -MFfile, -ofile
        elif not arg.startswith("-") and ((directory / arg).resolve() == source or _INPUT.search(arg)):
            continue
        else:
            out.append(arg)
    return out


# Include-folder options, whose folder a caller gives relative to where it runs.
_INCLUDE_OPTIONS = ("-I", "--include-path", "-isystem", "--system-include")


def absolute_includes(options: list[str] | tuple[str, ...]) -> list[str]:
    """``options`` with each include folder made absolute from the current folder: a caller's
    own ``-Iinclude`` means its folder, not one under the compile command's ``directory``
    where nvcc runs.

    Examples
    --------
    >>> import os
    >>> absolute_includes(["-Iinc", "-I", "/abs", "-O3"]) == [f"-I{os.path.abspath('inc')}", "-I", "/abs", "-O3"]
    True
    """
    out: list[str] = []
    follows = False
    for option in options:
        if follows:
            out.append(os.path.abspath(option))
            follows = False
            continue
        name = next((n for n in _INCLUDE_OPTIONS if option.startswith(n)), None)
        if option in _INCLUDE_OPTIONS:
            follows = True
            out.append(option)
        elif name is not None:
            value = option[len(name):]
            sep = "=" if value.startswith("=") else ""
            out.append(f"{name}{sep}{os.path.abspath(value.removeprefix('='))}" if value.strip("=") else option)
        else:
            out.append(option)
    return out


def compile_command(path: str | os.PathLike[str], database: str | os.PathLike[str]) -> CompileCommand:
    """The compile command of ``path`` in the compile database ``database``.

    Raises
    ------
    OccupancyError
        When the database cannot be read or does not hold the file (the message lists a few
        of the files it holds).
    FileNotFoundError
        When the database does not exist.

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "k.cu").write_text("")
    >>> _ = (d / "cc.json").write_text(json.dumps([{"directory": str(d), "file": "k.cu",
    ...     "command": "nvcc -O3 -DN=4 -gencode arch=compute_90,code=sm_90 -c k.cu -o k.o"}]))
    >>> c = compile_command(d / "k.cu", d / "cc.json")
    >>> c.options, c.architectures
    (('-O3', '-DN=4'), ('sm_90',))
    """
    database = Path(database)
    if not database.is_file():
        raise FileNotFoundError(f"no such file: {os.fspath(database)!r} (compile_commands)")
    try:
        entries = json.loads(database.read_text("utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise OccupancyError(f"compile_commands={os.fspath(database)!r} is not a JSON compile database: {exc}") \
            from None
    if not isinstance(entries, list):
        raise OccupancyError(f"compile_commands={os.fspath(database)!r} is not a list of compile commands")
    source = Path(path).resolve()
    files = []
    for entry in entries:
        if not isinstance(entry, dict) or "file" not in entry:
            continue
        directory = Path(entry.get("directory") or database.parent)
        file = (directory / entry["file"]).resolve()
        files.append(os.fspath(file))
        if file != source:
            continue
        arguments = entry.get("arguments") or shlex.split(entry.get("command", ""))
        if not arguments:
            raise OccupancyError(f"compile_commands: the entry for {os.fspath(source)!r} has no command")
        return CompileCommand(os.fspath(source), os.fspath(directory),
                              tuple(_options(arguments, source, directory)), tuple(_architectures(arguments)))
    shown = ", ".join(files[:5]) + (f" and {len(files) - 5} more" if len(files) > 5 else "")
    raise OccupancyError(f"compile_commands={os.fspath(database)!r} holds no command for "
                         f"{os.fspath(source)!r}; it holds {shown or 'no file'}")
