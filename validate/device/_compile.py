"""Compiling CUDA C with NVRTC (through cuda.core) and reading the compiled kernel's resources."""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Mapping, Sequence
from importlib import resources
from typing import Any, ClassVar, Literal, TYPE_CHECKING

from occupancy import KernelResources
from occupancy.common import CheckedModel
from pydantic import ConfigDict, Field
from roofline import RooflineError

from ._checks import check_count
from ._driver import cuda_errors, cuda_modules, require_driver

if TYPE_CHECKING:
    from cuda.core import Kernel, ObjectCode

__all__ = [
    "CompileOptions",
    "compile_cubin",
    "compile_kernels",
    "kernel_resources",
    "kernel_source",
    "load_object_code",
    "with_defines",
]


def kernel_source(filename: str) -> str:
    """Return the text of a packaged CUDA source file (``validate/kernels/<filename>``).

    Raises
    ------
    roofline.RooflineError
        For a name that is not one of the packaged files (the message lists them).

    Examples
    --------
    >>> "extern \\"C\\" __global__ void copy" in kernel_source("suite.cu")
    True
    """
    if not isinstance(filename, str):
        raise TypeError(f"filename must be a str, not {type(filename).__name__}")
    known = _kernel_files()
    if filename not in known:
        raise RooflineError(f"filename={filename!r} is not a packaged kernel source; known: {', '.join(known)}")
    return _read_kernel(filename)


@functools.cache
def _kernel_files() -> tuple[str, ...]:
    folder = resources.files("validate").joinpath("kernels")
    return tuple(sorted(p.name for p in folder.iterdir() if p.name.endswith(".cu")))


@functools.cache
def _read_kernel(filename: str) -> str:
    return resources.files("validate").joinpath("kernels", filename).read_text(encoding="utf-8")


def with_defines(source: str, defines: Mapping[str, int | str] | None = None) -> str:
    """Prefix ``source`` with one ``#define NAME VALUE`` line per entry, in sorted order.

    Parameters
    ----------
    source : str
        CUDA C source.
    defines : mapping, optional
        Macro names (C identifiers) to integer or string values.

    Returns
    -------
    str

    Raises
    ------
    roofline.RooflineError
        For a name that is not a C identifier, or a value of more than one line.
    TypeError
        For a source, name or value of the wrong type.

    Examples
    --------
    >>> with_defines("x", {"TILE": 32}).splitlines()[0]
    '#define TILE 32'
    """
    if not isinstance(source, str):
        raise TypeError(f"source must be a str, not {type(source).__name__}")
    if defines is not None and not isinstance(defines, Mapping):
        raise TypeError(f"defines must be a mapping of name to value, not {type(defines).__name__}")
    lines = []
    for name in defines or {}:
        if not isinstance(name, str):
            raise TypeError(f"define names must be str, not {type(name).__name__}")
    for name in sorted(defines or {}):
        if not name.isidentifier() or not name.isascii():
            raise RooflineError(f"define name {name!r} is not a C identifier")
        value = defines[name]
        if isinstance(value, bool) or not isinstance(value, (int, str)):
            raise TypeError(f"defines[{name!r}] must be an int or a str, not {type(value).__name__}")
        if isinstance(value, str) and ("\n" in value or "\r" in value):
            raise RooflineError(f"defines[{name!r}]={value!r} spans lines; a #define value must be one line")
        lines.append(f"#define {name} {value}")
    return "\n".join([*lines, source]) if lines else source


_CACHE: dict[tuple[str, tuple[str, ...], str, int | None], dict[str, Kernel]] = {}
_ARCH = re.compile(r"sm_[0-9]{2,3}[af]?")
#: Registers per thread a kernel can use on every architecture since sm_35 (``maxrregcount``).
_MAX_REGISTERS = 255


def compile_kernels(
    source: str,
    names: Sequence[str],
    *,
    arch: str,
    max_register_count: int | None = None,
    name: str = "gpuroof",
) -> dict[str, Kernel]:
    """Compile ``source`` to a cubin for ``arch`` with NVRTC and load the named kernels.

    Parameters
    ----------
    source : str
        CUDA C++ with ``extern "C"`` kernels (no includes needed).
    names : sequence of str
        Kernel function names to load.
    arch : str
        Target, e.g. ``"sm_90"`` (the device's own architecture).
    max_register_count : int, optional
        ``-maxrregcount`` for every kernel of the program.
    name : str
        Program name shown in compiler messages.

    Returns
    -------
    dict
        Kernel name to loaded ``cuda.core.Kernel``.

    Raises
    ------
    DeviceError
        No usable driver or GPU (checked before NVRTC runs), compilation failed (the NVRTC
        log is in the message) or a name is missing.
    roofline.RooflineError
        For an `arch` that is not ``sm_NN`` (or ``sm_NNa``/``sm_NNf``), no names or a name
        that is not a C identifier, a NUL byte in `source` or `name`, or
        `max_register_count` outside 1 to 255.
    TypeError
        For an argument of the wrong type.
    """
    if not isinstance(source, str) or not isinstance(arch, str) or not isinstance(name, str):
        raise TypeError("source, arch and name must be str")
    if not isinstance(names, (list, tuple)) or not all(isinstance(n, str) for n in names):
        raise TypeError(f"names must be a sequence of kernel names (str), not {type(names).__name__}")
    if max_register_count is not None and (isinstance(max_register_count, bool) or not isinstance(max_register_count, int)):
        raise TypeError(f"max_register_count must be an int, not {type(max_register_count).__name__}")
    if not _ARCH.fullmatch(arch):
        raise RooflineError(f"arch={arch!r} is not a CUDA architecture such as 'sm_90'")
    if not names:
        raise RooflineError("names is empty; give the kernels to load")
    for kernel in names:
        if not (kernel.isidentifier() and kernel.isascii()):
            raise RooflineError(f"kernel name {kernel!r} is not a C identifier (kernels are extern \"C\")")
    if "\x00" in source or "\x00" in name:
        raise RooflineError("source and name must not hold NUL bytes")
    if max_register_count is not None and not 1 <= max_register_count <= _MAX_REGISTERS:
        raise RooflineError(f"max_register_count={max_register_count} must be from 1 to {_MAX_REGISTERS}")
    key = (source, tuple(names), arch, max_register_count)
    if key in _CACHE:
        return _CACHE[key]
    # Before NVRTC and cuda.core: loading kernels needs the driver, and cuda.core's own
    # failure to load it leaves a lock held that hangs the process (see require_driver).
    require_driver()
    with cuda_errors(f"compiling {name} for {arch}"):
        module = compile_cubin(source, arch=arch, name=name,
                               options=CompileOptions(max_register_count=max_register_count))
        kernels = {kernel: module.get_kernel(kernel) for kernel in names}
    _CACHE[key] = kernels
    return kernels


class CompileOptions(CheckedModel):
    """The NVRTC options of a user's source: ``-std``, ``-D``, ``-I`` and ``-maxrregcount``.

    Normalised once: macros become (name, value) text pairs in the order given, folders text.

    Attributes
    ----------
    std : str or None
        C++ dialect; None is ``"c++17"`` (C++ only).
    defines : tuple of (str, str)
        ``-D`` macros; a mapping of name to value, or (name, value) pairs, is taken (each written as text).
    include_paths : tuple of str
        ``-I`` folders (C++ only); a sequence of paths is taken, a lone str is not.
    max_register_count : int or None
        ``-maxrregcount``, 1 to 255.

    Examples
    --------
    >>> CompileOptions(defines={"N": 4}, include_paths=["inc"]).defines
    (('N', '4'),)
    """

    model_config = ConfigDict(frozen=True, extra="forbid")
    error: ClassVar[type[Exception]] = RooflineError

    std: str | None = Field(default=None, description="C++ dialect; None: c++17.")
    defines: tuple[tuple[str, str], ...] = Field(default=(), description="-D macros as (name, value).")
    include_paths: tuple[str, ...] = Field(default=(), description="-I folders.")
    max_register_count: int | None = Field(default=None, description="-maxrregcount, 1 to 255.")

    @classmethod
    def normalise(cls, data: dict[str, Any]) -> dict[str, Any]:
        """Macros and folders as text; the register cap checked."""
        out = dict(data)
        defines = out.get("defines")
        pairs = defines.items() if isinstance(defines, Mapping) else () if defines is None else defines
        if not isinstance(pairs, (list, tuple, type({}.items()))) or not all(
                isinstance(pair, (list, tuple)) and len(pair) == 2 for pair in pairs):
            raise TypeError(f"defines must be a mapping of macro names to values (or their pairs), "
                            f"not {type(defines).__name__}")
        out["defines"] = tuple((str(k), str(v)) for k, v in pairs)
        paths = out.get("include_paths", ())
        if isinstance(paths, (str, bytes)) or not isinstance(paths, (list, tuple)):
            raise TypeError(f"include_paths must be a sequence of folders, not {type(paths).__name__}")
        for path in paths:
            if not isinstance(path, (str, os.PathLike)):
                raise TypeError(f"include_paths must hold folders (str or path), not {type(path).__name__}")
        out["include_paths"] = tuple(str(p) for p in paths)
        if out.get("std") is not None and not isinstance(out["std"], str):
            raise TypeError(f"std must be a str such as 'c++17', not {type(out['std']).__name__}")
        if out.get("max_register_count") is not None:
            out["max_register_count"] = check_count("max_register_count", out["max_register_count"], 1,
                                                    _MAX_REGISTERS)
        return out

    def nvcc_options(self) -> list[str]:
        """The same options as nvcc's flags, for a file nvcc builds (`occupancy.file_cubin`).

        >>> CompileOptions(defines={"N": 4, "FAST": ""}, max_register_count=64).nvcc_options()
        ['-DN=4', '-DFAST', '-maxrregcount=64']
        """
        flags = [f"-std={self.std}"] if self.std else []
        flags += [f"-D{name}={value}" if value else f"-D{name}" for name, value in self.defines]
        flags += [f"-I{folder}" for folder in self.include_paths]
        if self.max_register_count is not None:
            flags.append(f"-maxrregcount={self.max_register_count}")
        return flags


def compile_cubin(
    code: str,
    *,
    arch: str,
    name: str,
    language: Literal["c++", "ptx"] = "c++",
    options: CompileOptions | None = None,
    name_expressions: Sequence[str] = (),
) -> ObjectCode:
    """The one NVRTC compile of validate: CUDA C++ or PTX to a loaded cubin, through cuda.core.

    Parameters
    ----------
    code : str
        CUDA C++ source or PTX text.
    arch : str
        Target, ``"sm_90"``.
    name : str
        Program name shown in compiler messages.
    language : {"c++", "ptx"}
    options : CompileOptions, optional
        ``-std``, ``-D``, ``-I`` (C++ only) and ``-maxrregcount``.
    name_expressions : sequence of str
        C++ names to look up (``"k<float>"``) after compiling.

    Returns
    -------
    cuda.core.ObjectCode

    Raises
    ------
    Exception
        Whatever cuda.core raises (``NVRTCError`` with the log): callers translate it, as
        a bad user source (`occupancy.CompileError`) or a device failure (`DeviceError`).
    """
    core = cuda_modules().core
    flags = CompileOptions() if options is None else options
    nvrtc: dict[str, object] = {"arch": arch, "name": name}
    if language == "c++":
        nvrtc["std"] = flags.std or "c++17"
        if flags.defines:
            nvrtc["define_macro"] = list(flags.defines)
        if flags.include_paths:
            nvrtc["include_path"] = list(flags.include_paths)
    if flags.max_register_count is not None:
        nvrtc["max_register_count"] = flags.max_register_count
    program = core.Program(code, language, core.ProgramOptions(**nvrtc))
    try:
        if name_expressions:
            return program.compile("cubin", name_expressions=tuple(name_expressions))
        return program.compile("cubin")
    finally:
        # closed here: cuda.core 1.2's finalizer raised (ignored, but printed) on a
        # program left to the garbage collector after a failed compile
        program.close()


def load_object_code(payload: bytes, kind: Literal["cubin", "fatbin"]) -> ObjectCode:
    """A cubin or fatbin loaded through cuda.core (errors are the caller's to translate)."""
    core = cuda_modules().core
    return core.ObjectCode.from_cubin(payload) if kind == "cubin" else core.ObjectCode.from_fatbin(payload)


def kernel_resources(kernel: Kernel, name: str | None = None) -> KernelResources:
    """What the driver says of a loaded kernel (``cuFuncGetAttribute``), as an
    `occupancy.KernelResources`.

    ``max_threads_per_block`` is the driver's ``MAX_THREADS_PER_BLOCK``: the launch
    bounds, further limited by the registers the kernel uses. Barriers, spills and
    ``min_blocks_per_sm`` are not attributes of a loaded function (None).

    Parameters
    ----------
    kernel : cuda.core.Kernel
        A loaded kernel.
    name : str, optional
        Its name, for messages (the driver does not keep it).

    Returns
    -------
    occupancy.KernelResources
    """
    attribute = "cuFuncGetAttribute(CU_FUNC_ATTRIBUTE_{})".format
    with cuda_errors("reading kernel attributes"):
        a = kernel.attributes
        fields: dict[str, object] = dict(
            registers_per_thread=int(a.num_regs),
            static_shared_memory=int(a.shared_size_bytes),
            local_memory=int(a.local_size_bytes),
            constant_memory=int(a.const_size_bytes),
            max_threads_per_block=int(a.max_threads_per_block),
        )
        binary_version = int(a.binary_version)
        cluster = tuple(int(getattr(a, f"required_cluster_{d}", 0) or 0) for d in ("width", "height", "depth"))
    sources = {
        "registers_per_thread": attribute("NUM_REGS"),
        "static_shared_memory": attribute("SHARED_SIZE_BYTES"),
        "local_memory": attribute("LOCAL_SIZE_BYTES"),
        "constant_memory": attribute("CONST_SIZE_BYTES"),
        "max_threads_per_block": attribute("MAX_THREADS_PER_BLOCK"),
        "architecture": attribute("BINARY_VERSION"),
    }
    if all(cluster):
        fields["cluster_dims"] = cluster
        sources["cluster_dims"] = attribute("REQUIRED_CLUSTER_WIDTH/HEIGHT/DEPTH")
    return KernelResources(
        kernel=name or getattr(kernel, "name", None) or "kernel",
        architecture=f"sm_{binary_version}",
        sources=sources,
        **fields,
    )
