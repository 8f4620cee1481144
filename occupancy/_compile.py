"""Offline compilation: CUDA C++ with NVRTC, PTX with nvJitLink (cuda-python, no GPU, no driver).

Both run ptxas with ``-v``; its log gives what the cubin does not keep (spill
stores and loads), and the PTX gives ``.minnctapersm``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import ModuleType

from ._arch import ArchitectureLike, architecture
from ._errors import OccupancyError
from ._install import install_extra
from .common import sequence

__all__ = [
    "CompileError", "Compiled", "CompilerNotFoundError", "compile_ptx", "compile_source", "no_compiler_error",
    "one_line_error", "option_strings", "ptx_directives", "ptx_setmaxnreg", "ptxas_log", "target_sm",
]

INSTALL_HINT = f"{install_extra('compile')}: cuda-bindings, nvidia-cuda-nvrtc, nvidia-nvjitlink"


class CompileError(OccupancyError):
    """NVRTC or nvJitLink refused the input; ``log`` holds the compiler's messages."""

    def __init__(self, message: str, log: str = "") -> None:
        super().__init__(f"{message}\n{log}".rstrip())
        self.log = log


class CompilerNotFoundError(OccupancyError, ImportError):
    """No compiler for the input: neither nvcc nor NVRTC for CUDA C++, neither ptxas nor
    nvJitLink for PTX. The message is one line naming what to install.

    An ``ImportError``, as a missing optional package is, and an `OccupancyError`, since the
    input is one this installation cannot read: the command line says it in one line (exit 2).
    """


@dataclass(frozen=True)
class Compiled:
    """What one compilation produced: the cubin, the PTX (when known) and the compiler log."""

    cubin: bytes
    ptx: str
    log: str
    tool: str


def target_sm(arch: ArchitectureLike) -> str:
    """``sm_XY`` (keeping an ``a``/``f`` suffix the user asked for) for ``-arch``."""
    if isinstance(arch, str) and re.fullmatch(r"sm_\d{2,3}[af]?", arch.strip()):
        return arch.strip()
    a = architecture(arch)
    # A custom architecture (occupancy.load_architecture) compiles for its compute capability's SM,
    # whatever its name.
    return f"sm_{a.major}{a.minor}"


def option_strings(options: object) -> list[str]:
    """The compiler options as a list of strings; anything else (None, one string) is a TypeError."""
    out = sequence("options", options, "a sequence of strings, e.g. ['-DN=4', '-std=c++17']")
    for option in out:
        if not isinstance(option, str):
            raise TypeError(f"options must be strings, got {option!r}")
    return out


def _check_options(options: Sequence[str]) -> list[str]:
    out = []
    for option in option_strings(options):
        if re.match(r"-{1,2}(arch|gpu-architecture)\b", option) or option.startswith("-arch"):
            raise OccupancyError(f"options={option!r}: give the architecture as arch=, not in options")
        out.append(option)
    return out


def _nvrtc() -> ModuleType:
    try:
        from cuda.bindings import nvrtc
    except ImportError as exc:
        raise CompilerNotFoundError(f"compiling CUDA C++ needs cuda-python's NVRTC ({exc}): {INSTALL_HINT}") from None
    return nvrtc


def _nvrtc_check(nvrtc: ModuleType, result: int, what: str) -> None:
    if int(result) != 0:
        _, text = nvrtc.nvrtcGetErrorString(result)
        raise OccupancyError(f"{what}: {text.decode() if isinstance(text, bytes) else text}")


def _written(size: int) -> bytearray:
    """A buffer NVRTC or nvJitLink writes into: mutable, never a ``bytes`` (``b" " * 1`` is
    CPython's one cached ``b" "``, and a one-byte empty log written into it turned every ``b" "``
    of the process into a NUL: a space sliced out of a decompressed cubin, print's separator)."""
    return bytearray(int(size))


def _log(nvrtc: ModuleType, program: object) -> str:
    _, size = nvrtc.nvrtcGetProgramLogSize(program)
    buffer = _written(size)
    nvrtc.nvrtcGetProgramLog(program, buffer)
    return bytes(buffer).rstrip(b"\0 ").decode("utf-8", "replace")


def compile_source(source: str, arch: ArchitectureLike, options: Sequence[str] = (), name: str = "kernel.cu",
                   headers: Mapping[str, str] | None = None, name_expressions: Sequence[str] = ()) -> Compiled:
    """Compile CUDA C++ to a cubin for ``arch`` with NVRTC.

    ``headers`` maps include names to their text (NVRTC's in-memory headers, found by
    ``#include`` and ``-include`` before the include path). ``name_expressions`` are
    ``nvrtcAddNameExpression``'s (``"softmax<256>"``): the template instances to compile,
    as CuPy's ``RawModule(name_expressions=...)`` asks for them.

    Raises
    ------
    CompileError
        When NVRTC reports an error (the log is in the message and in ``.log``).
    CompilerNotFoundError
        When cuda-python or the NVRTC library is missing (an ``ImportError``).
    """
    nvrtc = _nvrtc()
    target = target_sm(arch)
    opts = [f"-arch={target}", "--ptxas-options=-v", *_check_options(options)]
    try:
        result, supported = nvrtc.nvrtcGetSupportedArchs()
    except RuntimeError as exc:  # cuda.bindings raises this when libnvrtc itself is missing
        raise CompilerNotFoundError(f"NVRTC library not found ({exc}): {INSTALL_HINT}") from None
    sm = int(re.sub(r"\D", "", target))
    if int(result) == 0 and sm not in supported:
        _, major, minor = nvrtc.nvrtcVersion()
        raise OccupancyError(
            f"arch={target} is not a target of the installed NVRTC {major}.{minor}; it compiles for "
            + ", ".join(f"sm_{a}" for a in supported)
            + " (NVRTC 12.x, nvidia-cuda-nvrtc-cu12 with cuda-bindings 12.x, still targets sm_50-sm_72)"
        )
    headers = dict(headers or {})
    result, program = nvrtc.nvrtcCreateProgram(source.encode(), name.encode(), len(headers),
                                               [t.encode() for t in headers.values()], [n.encode() for n in headers])
    _nvrtc_check(nvrtc, result, "nvrtcCreateProgram")
    try:
        for expression in name_expressions:
            (result,) = nvrtc.nvrtcAddNameExpression(program, expression.encode())
            _nvrtc_check(nvrtc, result, f"nvrtcAddNameExpression({expression!r})")
        (result,) = nvrtc.nvrtcCompileProgram(program, len(opts), [o.encode() for o in opts])
        log = _log(nvrtc, program)
        if int(result) != 0:
            raise CompileError(f"NVRTC could not compile {name} for {target} (options {opts[2:]})", log)
        result, size = nvrtc.nvrtcGetCUBINSize(program)
        _nvrtc_check(nvrtc, result, "nvrtcGetCUBINSize")
        cubin = _written(size)
        nvrtc.nvrtcGetCUBIN(program, cubin)
        result, size = nvrtc.nvrtcGetPTXSize(program)
        ptx = bytearray()
        if int(result) == 0:
            ptx = _written(size)
            nvrtc.nvrtcGetPTX(program, ptx)
    finally:
        nvrtc.nvrtcDestroyProgram(program)
    _, major, minor = nvrtc.nvrtcVersion()
    return Compiled(bytes(cubin), bytes(ptx).rstrip(b"\0").decode("utf-8", "replace"), log, f"NVRTC {major}.{minor}")


def compile_ptx(ptx: str, arch: ArchitectureLike, options: Sequence[str] = (), name: str = "kernel.ptx") -> Compiled:
    """Assemble PTX to a cubin for ``arch`` with nvJitLink (ptxas inside).

    ``options`` are nvJitLink options (``-maxrregcount=N``, ``-lineinfo``, ``-Xptxas=...``).

    Raises
    ------
    CompileError
        When nvJitLink reports an error.
    CompilerNotFoundError
        When cuda-python's nvJitLink bindings or library are missing (an ``ImportError``).
    """
    try:
        from cuda.bindings import nvjitlink
    except ImportError as exc:
        raise CompilerNotFoundError(f"assembling PTX needs cuda-python's nvJitLink ({exc}): {INSTALL_HINT}") from None
    target = target_sm(arch)
    opts = [f"-arch={target}", "-Xptxas=-v", *_check_options(options)]
    data = ptx.encode()
    try:
        handle = nvjitlink.create(len(opts), opts)
    except RuntimeError as exc:
        raise CompilerNotFoundError(f"nvJitLink library not found ({exc}): {INSTALL_HINT}") from None
    except nvjitlink.nvJitLinkError as exc:
        raise CompileError(f"nvJitLink refused the options {opts}: {exc}") from None

    def text(size_of: Callable[[int], int], get: Callable[[int, bytearray], object]) -> str:
        buffer = _written(size_of(handle))
        get(handle, buffer)
        return bytes(buffer).rstrip(b"\0").decode("utf-8", "replace")

    try:
        try:
            nvjitlink.add_data(handle, nvjitlink.InputType.PTX, data, len(data), name)
            nvjitlink.complete(handle)
        except nvjitlink.nvJitLinkError as exc:
            log = text(nvjitlink.get_error_log_size, nvjitlink.get_error_log)
            raise CompileError(f"nvJitLink could not assemble {name} for {target}: {exc}", log) from None
        cubin = _written(nvjitlink.get_linked_cubin_size(handle))
        nvjitlink.get_linked_cubin(handle, cubin)
        log = text(nvjitlink.get_info_log_size, nvjitlink.get_info_log)
    finally:
        nvjitlink.destroy(handle)
    major, minor = nvjitlink.version()
    return Compiled(bytes(cubin), ptx, log, f"nvJitLink {major}.{minor}")


_FUNCTION = re.compile(r"Function properties for (\S+)")
_SPILLS = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")


def ptxas_log(log: str) -> dict[str, dict[str, int]]:
    """Stack frame and spill bytes of each function from a ``ptxas -v`` log.

    Examples
    --------
    >>> ptxas_log("ptxas info    : Function properties for k\\n"
    ...           "    8 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads")
    {'k': {'stack_frame': 8, 'spill_store_bytes': 4, 'spill_load_bytes': 4}}
    """
    out: dict[str, dict[str, int]] = {}
    current = None
    for line in log.splitlines():
        if m := _FUNCTION.search(line):
            current = m[1]
        elif current is not None and (m := _SPILLS.search(line)):
            out[current] = {"stack_frame": int(m[1]), "spill_store_bytes": int(m[2]),
                            "spill_load_bytes": int(m[3])}
            current = None
    return out


_ENTRY = re.compile(r"\.entry\s+([\w$.]+)\s*\(")
_DIRECTIVE = re.compile(r"\.(maxntid|reqntid|minnctapersm|maxnreg|reqnctapercluster|maxclusterrank)\s+([\d\s,]+)")


def ptx_directives(ptx: str) -> dict[str, dict[str, tuple[int, ...]]]:
    """The performance-tuning directives of each ``.entry`` in PTX.

    Examples
    --------
    >>> ptx_directives(".visible .entry k(\\n .param .u64 p\\n)\\n.maxntid 128, 1, 1\\n"
    ...                ".minnctapersm 4\\n{\\n ret;\\n}")
    {'k': {'maxntid': (128, 1, 1), 'minnctapersm': (4,)}}
    """
    out: dict[str, dict[str, tuple[int, ...]]] = {}
    for m in _ENTRY.finditer(ptx):
        close = ptx.find(")", m.end())
        brace = ptx.find("{", close)
        head = ptx[close:brace if brace >= 0 else len(ptx)]
        out[m[1]] = {d[1]: tuple(int(x) for x in re.findall(r"\d+", d[2])) for d in _DIRECTIVE.finditer(head)}
    return out


_FUNCTION_START = re.compile(r"^\s*(?:\.visible\s+|\.weak\s+|\.extern\s+)*\.(?:entry|func)\b", re.M)
_SETMAXNREG = re.compile(r"setmaxnreg\.(?:inc|dec)\.sync\.aligned\.u32\s+(\d+)")


def ptx_setmaxnreg(ptx: str) -> dict[str, tuple[int, ...]]:
    """The register counts each ``.entry``'s warp groups switch to with ``setmaxnreg``, in
    increasing order (entries that use none are left out).

    Examples
    --------
    >>> ptx_setmaxnreg(".visible .entry k(\n)\n{\n setmaxnreg.dec.sync.aligned.u32 40;\n"
    ...                " setmaxnreg.inc.sync.aligned.u32 232;\n ret;\n}")
    {'k': (40, 232)}
    """
    starts = [m.start() for m in _FUNCTION_START.finditer(ptx)] + [len(ptx)]
    out: dict[str, tuple[int, ...]] = {}
    for begin, end in zip(starts, starts[1:]):
        entry = _ENTRY.search(ptx, begin, end)
        counts = sorted({int(n) for n in _SETMAXNREG.findall(ptx, begin, end)})
        if entry is not None and counts:
            out[entry[1]] = tuple(counts)
    return out


def no_compiler_error(name: str, work: str, tool: str, library: str) -> CompilerNotFoundError:
    """No compiler at all for `name`: neither the toolkit's `tool` nor cuda-python's `library`."""
    return CompilerNotFoundError(f"{name}: {work} needs {tool} (the CUDA toolkit, or CUDA_HOME) or {library}: "
                                 f"{install_extra('compile')}")


def one_line_error(message: str, log: str) -> CompileError:
    """A CompileError whose message is one line; the compiler's whole log stays in ``.log``."""
    error = CompileError(message)
    error.log = log
    return error
