"""Argument helpers shared by the subcommand modules.

JSON output, ``--param KEY=VALUE``, and the one resolver of every GPU, architecture and
kernel-file option: a name, or a ``.toml``/``.json`` file (`roofline.load_gpu`,
`occupancy.load_architecture`) wherever a name is taken; a kernel file (CUDA source, PTX,
cubin, fatbin, host object) through `occupancy.kernel_resources`.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shlex
from collections.abc import Callable, Iterator
from typing import NamedTuple

import occupancy
import roofline
from occupancy.common import FIGURE_FORMATS, check_figure_path, check_writable

from ._help import LazyHelp
from ._progress import progress_bar

__all__ = [
    "FIGURE_FORMATS",
    "KERNEL_FILE_COMPILERS",
    "FlagsOption",
    "Output",
    "ParamValue",
    "add_arch_option",
    "add_compiler_options",
    "add_gpu_option",
    "add_kernel_file_options",
    "add_output",
    "arch_help",
    "arch_option_words",
    "architecture",
    "check_outputs",
    "chosen_architecture",
    "compiler_options",
    "dims",
    "gpu",
    "gpu_help",
    "kernel_resources",
    "params",
    "print_json",
    "target_architecture",
]

# A ``--param`` value: a number, a flag, a word, or a comma-separated tuple of them.
ParamValue = bool | int | float | str | tuple["ParamValue", ...]

# A GPU or architecture given as a file rather than a name: one of these suffixes, or a path.
_FILE_SUFFIXES = (".toml", ".json")


def print_json(data: object) -> None:
    """Print `data` as indented JSON."""
    print(json.dumps(data, indent=2))


def _parse_value(text: str) -> ParamValue:
    """'12' -> 12, '1.5' -> 1.5, '16,16' -> (16, 16), 'true' -> True, otherwise the text."""
    lowered = text.lower()
    if lowered in {"true", "false"}:
        return lowered == "true"
    if "," in text:
        return tuple(_parse_value(part) for part in text.split(","))
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return text


def params(pairs: list[str] | None, *, option: str = "--param", form: str = "KEY=VALUE",
           example: str = "n=1048576") -> dict[str, ParamValue]:
    """``["n=1024", "block=16,16"]`` -> ``{"n": 1024, "block": (16, 16)}``: the pairs of a repeatable
    ``option`` (``--param``, ``--count``), named with its `form` and `example` where one is not a pair."""
    out = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise roofline.RooflineError(f"{option} {pair!r} must be {form}, e.g. {option} {example}")
        out[key.strip().replace("-", "_")] = _parse_value(value.strip())
    return out


def dims(text: str) -> tuple[int, ...]:
    """``"256"`` -> (256,), ``"16,16"`` or ``"16x16"`` -> (16, 16): an argparse ``type``."""
    try:
        return tuple(int(part) for part in text.replace("x", ",").split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not N, N,N or N,N,N") from None


def _names_file(spec: str) -> bool:
    return spec.lower().endswith(_FILE_SUFFIXES) or any(sep and sep in spec for sep in (os.sep, os.altsep))


def gpu(spec: str) -> roofline.GPU:
    """A GPU of the database by name, or one read from a ``.toml``/``.json`` file."""
    return roofline.load_gpu(spec) if _names_file(spec) else roofline.gpu(spec)


def _database_gpus(spec: str) -> tuple[roofline.GPU, ...]:
    """The database GPUs `spec` names (one, or a family such as ``A100``): a probe for a better message."""
    try:
        return (roofline.gpu(spec),)
    except roofline.RooflineError:
        return roofline.gpus(spec) if any(ch.isalnum() for ch in spec) else ()


def architecture(spec: str) -> occupancy.Architecture:
    """An architecture by name (``sm_90``, ``9.0``), or one read from a ``.toml``/``.json`` file."""
    if _names_file(spec):
        return occupancy.load_architecture(spec)
    try:
        return occupancy.architecture(spec)
    except occupancy.OccupancyError as exc:
        named = _database_gpus(spec)
        if not named:
            raise
        names = ", ".join(g.name for g in named)
        archs = " or ".join(sorted({g.architecture.name for g in named}))
        raise occupancy.OccupancyError(
            f"--arch {spec!r} names a GPU ({names}), not an architecture: give --gpu {spec!r} or --arch {archs}"
        ) from exc


def chosen_architecture(args: argparse.Namespace) -> occupancy.Architecture | None:
    """``--arch``, else ``--gpu``'s architecture, else None."""
    if getattr(args, "arch", None):
        return architecture(args.arch)
    if getattr(args, "gpu", None):
        return gpu(args.gpu).architecture
    return None


def target_architecture(args: argparse.Namespace,
                        resources: occupancy.KernelResources | None = None) -> occupancy.Architecture:
    """The architecture a command works on: ``--arch``, else ``--gpu``'s, else the binary's.

    Raises
    ------
    OccupancyError
        When none of them says.
    """
    chosen = chosen_architecture(args)
    if chosen is not None:
        return chosen
    if resources is not None:
        return occupancy.architecture(resources.architecture)
    raise occupancy.OccupancyError("give --arch (e.g. --arch sm_90) or --gpu (e.g. --gpu H100)")


def _text(prefix: str | Callable[[], str]) -> str:
    return prefix() if callable(prefix) else prefix


def arch_help(prefix: str | Callable[[], str]) -> LazyHelp:
    """Help text of an ``--arch`` option: `prefix`, then every architecture the tables know."""
    return LazyHelp(lambda: f"{_text(prefix)}: {', '.join(a.name for a in occupancy.architectures())} "
                            "(also 9.0, 90, sm_90a), or an architecture file (occupancy.load_architecture)")


def gpu_help(prefix: str | Callable[[], str]) -> LazyHelp:
    """Help text of a ``--gpu`` option: `prefix`, then every GPU of the database."""
    return LazyHelp(lambda: f"{_text(prefix)}: {', '.join(g.name for g in roofline.gpus())} (case, spaces and "
                            "aliases forgiven), or a GPU file (.toml or .json, roofline.load_gpu)")


def add_arch_option(p: argparse.ArgumentParser, prefix: str | Callable[[], str]) -> None:
    """``--arch NAME|FILE``."""
    p.add_argument("--arch", metavar="ARCH", help=arch_help(prefix))


def add_gpu_option(p: argparse.ArgumentParser, prefix: str | Callable[[], str], default: str | None = None) -> None:
    """``--gpu NAME|FILE``, `default` when not given."""
    p.add_argument("--gpu", metavar="GPU", help=gpu_help(prefix), default=default)


class FlagsOption(argparse.Action):
    """A repeatable option whose value is compiler flags (``--nvcc-options -O3``).

    argparse takes a word that starts with a dash for an option, so `gpuroof.main` joins such a
    value to its option (``--nvcc-options=-O3``) before parsing, as nvcc's own wrappers take
    it; ``takes_flags`` marks the options it does this for.
    """

    takes_flags = True

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: object,
                 option_string: str | None = None) -> None:
        setattr(namespace, self.dest, [*(getattr(namespace, self.dest, None) or []), values])


def add_compiler_options(p: argparse.ArgumentParser) -> None:
    """``-D``, ``-I``, ``--std``, ``--maxrregcount``, ``--lineinfo``, ``-O``, ``--use-fast-math``, ``-rdc``,
    ``-G``, ``-Xcompiler``, ``--nvcc-options``: passed to nvcc (NVRTC takes those it knows; nvJitLink for PTX)."""
    g = p.add_argument_group("compiling CUDA source (your nvcc, else NVRTC) or PTX (nvJitLink), offline")
    g.add_argument("-D", dest="defines", action="append", default=[], metavar="NAME[=VALUE]", help="define a macro")
    g.add_argument("-I", dest="includes", action="append", default=[], metavar="DIR",
                   help="include folder (the file's own folder is searched too)")
    g.add_argument("--std", default=None, metavar="STD", help="C++ dialect, e.g. c++17")
    g.add_argument("--maxrregcount", type=int, default=None, metavar="N", help="cap registers per thread")
    g.add_argument("--lineinfo", action="store_true", help="generate line information (-lineinfo)")
    g.add_argument("-O", dest="optimize", default=None, metavar="LEVEL", help="nvcc's optimisation level, e.g. -O3")
    g.add_argument("--use-fast-math", "--use_fast_math", dest="fast_math", action="store_true",
                   help="--use_fast_math")
    g.add_argument("-rdc", "--relocatable-device-code", dest="rdc", action="store_true",
                   help="relocatable device code (-rdc=true): ptxas allocates as for separate compilation")
    g.add_argument("-G", dest="device_debug", action="store_true", help="device debug code (-G)")
    g.add_argument("-Xcompiler", dest="host_options", action=FlagsOption, default=[], metavar="OPT",
                   help="host-compiler options, as -Xcompiler -fopenmp or -Xcompiler=-fopenmp")
    g.add_argument("--nvcc-options", dest="nvcc_options", action=FlagsOption, default=[], metavar="'OPTS'",
                   help="any other nvcc options, quoted, e.g. --nvcc-options '--expt-relaxed-constexpr -Xptxas -O2'")


#: How `occupancy.kernel_resources` compiles a kernel file with compiler="auto", as the commands
#: call it (occupancy/_kernel_resources.py `nvcc_for`, `_source_file`, `_assemble`): the nvcc that
#: occupancy/_tools.py `find_tool` finds, in its order, else NVRTC; PTX by the ptxas found the
#: same way, else nvJitLink. The one text of every command's --kernel-file help.
KERNEL_FILE_COMPILERS = (
    "CUDA source is compiled for the architecture by your nvcc when one is found ($GPUROOF_NVCC, PATH, "
    "$CUDA_HOME/$CUDA_PATH, /usr/local/cuda, NVIDIA's nvcc wheel), else by NVRTC; PTX is assembled by ptxas, "
    "else nvJitLink"
)


def add_kernel_file_options(p: argparse.ArgumentParser, *, what: str) -> None:
    """``--kernel-file/--source/--cubin FILE`` and ``--kernel NAME``, with the compiler options."""
    g = p.add_argument_group("your kernel, from a file (its registers, shared memory, barriers, launch bounds)")
    g.add_argument("--kernel-file", "--source", "--cubin", dest="kernel_file", default=None, metavar="FILE",
                   help=f"CUDA source (.cu), PTX, cubin, fatbin or host object (.o, .so) whose kernel {what}, "
                        f"read offline (no GPU): {KERNEL_FILE_COMPILERS}")
    g.add_argument("--kernel", default=None, metavar="NAME",
                   help="the kernel in the file (its symbol, or its C++ name when unambiguous); "
                        "needed when the file holds several")
    add_compiler_options(p)


def compiler_options(args: argparse.Namespace) -> list[str]:
    """The compiler options of ``-D``, ``-I``, ``--std``, ``--maxrregcount``, ``--lineinfo`` and the nvcc ones."""
    options = [f"-D{d}" for d in args.defines] + [f"-I{i}" for i in args.includes]
    if args.std:
        options.append(f"-std={args.std}")
    if args.maxrregcount is not None:
        options.append(f"--maxrregcount={args.maxrregcount}")
    if args.lineinfo:
        options.append("-lineinfo")
    if args.optimize is not None:
        options.append(f"-O{args.optimize}")
    options += ["--use_fast_math"] * args.fast_math + ["-rdc=true"] * args.rdc + ["-G"] * args.device_debug
    options += [f"-Xcompiler={o.removeprefix('=')}" for o in args.host_options]
    for text in args.nvcc_options:
        options += shlex.split(text)
    return options


# The library's hints that name its ``arch=`` keyword ("give arch=", "e.g. arch='sm_90'"),
# which a command line gives as ``--arch sm_90``.
_ARCH_KEYWORD = re.compile(r"(?<![\w-])arch=(?:'([^']*)')?(?![\w'])")
_ARCH_HINT = re.compile(r"(?:give |e\.g\. |^)arch=(?:'[^']*')?(?![\w'])")


@contextlib.contextmanager
def arch_option_words() -> Iterator[None]:
    """Say the library's ``arch=`` hints as the command line's option: "arch= is required to
    compile CUDA source, e.g. arch='sm_90'" is raised as "--arch is required to compile CUDA
    source, e.g. --arch sm_90"; any other error goes on as it is."""
    try:
        yield
    except occupancy.OccupancyError as exc:
        text = str(exc)
        if not _ARCH_HINT.search(text):
            raise
        cli = _ARCH_KEYWORD.sub(lambda m: f"--arch {m[1]}" if m[1] else "--arch", text)
        raise occupancy.OccupancyError(cli) from None


def kernel_resources(args: argparse.Namespace,
                     arch: occupancy.Architecture | None) -> occupancy.KernelResources | None:
    """The resources of ``--kernel`` in ``--kernel-file`` for `arch` (None when no file is given).

    Raises
    ------
    OccupancyError
        ``--kernel`` or a compiler option without a file, or what `occupancy.kernel_resources` raises.
    """
    if args.kernel_file is None:
        given = [flag for flag, value in (("--kernel", args.kernel), ("-D", args.defines), ("-I", args.includes),
                                          ("--std", args.std), ("--maxrregcount", args.maxrregcount),
                                          ("--lineinfo", args.lineinfo)) if value]
        if given:
            raise occupancy.OccupancyError(
                f"{given[0]} applies to a kernel file: give --source/--cubin FILE too"
            )
        return None
    with progress_bar(args) as bar, arch_option_words():  # nvcc or NVRTC: seconds for a real kernel file
        bar(f"compiling {args.kernel_file}" + (f" for {arch.name}" if arch is not None else ""))
        return occupancy.kernel_resources(args.kernel_file, arch=arch, kernel=args.kernel,
                                          options=compiler_options(args))


class Output(NamedTuple):
    """An option naming what a command writes: a file (of one of `formats`, when given) or a folder."""

    option: str
    dest: str
    folder: bool
    formats: tuple[str, ...]


def add_output(p: argparse.ArgumentParser, *flags: str, folder: bool = False, formats: tuple[str, ...] = (),
               **kwargs: object) -> argparse.Action:
    """Add an option naming a file (or, with `folder`, a folder) the command writes.

    Every output option is declared here, so that `gpuroof.main` checks them all, once,
    before the command's work starts (`check_outputs`): a path that cannot be written, or a
    file whose suffix is not one of `formats` (`FIGURE_FORMATS` for a figure), is one error
    naming the option, not a failure after the whole analysis.
    """
    action = p.add_argument(*flags, **kwargs)
    known = p.get_default("outputs") or ()
    # main calls check_outputs (found here, as it finds `func`) before the command's handler
    p.set_defaults(outputs=(*known, Output(action.option_strings[-1], action.dest, folder, tuple(formats))),
                   check_outputs=check_outputs)
    return action


def check_outputs(args: argparse.Namespace) -> None:
    """Refuse, before any work, every output the command line names that cannot be written.

    Raises
    ------
    roofline.RooflineError
        A file suffix not among the option's formats.
    OSError
        A path that cannot be written: one line naming the option, the path and the cause.
    """
    for out in getattr(args, "outputs", ()):
        value = getattr(args, out.dest, None)
        if value is None:
            continue
        if out.formats:
            check_figure_path(value, roofline.RooflineError, out.option, out.formats)
        check_writable(value, roofline.RooflineError, folder=out.folder, name=out.option)
