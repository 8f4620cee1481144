"""Loading a user's kernel: telling what the code is (source, PTX, cubin, fatbin), compiling it
through the one NVRTC path, and finding the kernel by name."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import occupancy
from occupancy import CompileError

from ..device import CompileOptions, DeviceError, compile_cubin, cuda_errors, load_object_code
from ._options import CodeType

if TYPE_CHECKING:
    from cuda.core import Kernel

__all__ = ["Resolved", "kernel_names_in_source", "load_kernel", "resolve_code"]


class Resolved(NamedTuple):
    """What `resolve_code` made of the code: its type, its text or bytes, its name for messages,
    and the file it was read from (None for text or bytes handed in)."""

    kind: CodeType
    payload: str | bytes
    label: str
    path: Path | None = None


def resolve_code(code: object, code_type: str | None) -> Resolved:
    """Decide what ``code`` is; return (type, payload, name for messages, file)."""
    allowed = ("cuda", "ptx", "cubin", "fatbin")
    if isinstance(code, Path) or (isinstance(code, str) and "\n" not in code and len(code) < 4096
                                  and Path(code).suffix in (".cu", ".cuh", ".ptx", ".cubin", ".fatbin")):
        path = Path(code)
        if not path.is_file():
            raise ValueError(f"code={str(code)!r}: no such file")
        suffix = {".cu": "cuda", ".cuh": "cuda", ".ptx": "ptx", ".cubin": "cubin", ".fatbin": "fatbin"}.get(path.suffix)
        kind = code_type or suffix
        if kind is None:
            raise ValueError(f"code={str(code)!r}: say code_type= (one of {', '.join(allowed)}) for this suffix")
        payload = path.read_bytes() if kind in ("cubin", "fatbin") else path.read_text(encoding="utf-8")
        return Resolved(kind, payload, path.name, path)  # type: ignore[arg-type]
    if isinstance(code, (bytes, bytearray)):
        data = bytes(code)
        if code_type in ("cubin", "fatbin"):
            return Resolved(code_type, data, code_type)  # type: ignore[arg-type]
        if data[:4] == b"\x7fELF":
            return Resolved("cubin", data, "cubin")
        return Resolved(code_type or "fatbin", data, "binary")  # type: ignore[arg-type]
    if isinstance(code, str):
        if code_type:
            return Resolved(code_type, code, code_type)  # type: ignore[arg-type]
        if re.search(r"^\s*\.(version|entry|visible)\b", code, re.MULTILINE):
            return Resolved("ptx", code, "PTX")
        return Resolved("cuda", code, "source")
    raise TypeError(f"code must be CUDA source or PTX (str), a cubin/fatbin (bytes) or a path, "
                    f"not {type(code).__name__}")


def kernel_names_in_source(source: str) -> list[str]:
    """The ``__global__`` function names of CUDA source, for a hint when a name is not found."""
    return sorted(set(re.findall(r"__global__\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?void\s+(\w+)", source)))


def load_kernel(resolved: Resolved, name: str, *, arch: str, options: CompileOptions,
                compiler: str = "auto") -> tuple[Kernel, bytes | None]:
    """The kernel ``name`` of `resolve_code`'s answer, compiled for ``arch`` (source, PTX) or loaded,
    and the binary the driver loaded (the cubin nvcc or NVRTC built, or the user's cubin or fatbin;
    None where cuda.core does not hand it back), whose SASS the prediction reads.

    A CUDA C++ file is built as `occupancy.kernel_resources` builds it (``compiler``: "auto" is
    nvcc where one is found, with the file's host code and its project's headers, else NVRTC;
    "nvcc"; "nvrtc"); under "auto" a kernel nvcc's cubin lacks (a template instance the file
    never instantiates) is compiled by NVRTC from its name expression. Source text and PTX go
    through NVRTC.
    """
    kind, payload, label, path = resolved
    if kind == "cuda" and path is not None and compiler != "nvrtc":
        built = _nvcc_kernel(path, name, arch=arch, options=options, compiler=compiler)
        if built is not None:
            return built
    with cuda_errors(f"loading kernel {name!r} from {label}"):
        if kind in ("cuda", "ptx"):
            try:
                module = compile_cubin(payload, arch=arch, name=label, language="c++" if kind == "cuda" else "ptx",
                                       options=options, name_expressions=(name,) if kind == "cuda" else ())
            except Exception as exc:
                # the user's source or PTX is bad input (exit 2), not a missing GPU: one
                # CompileError carrying the compiler's log, as occupancy.kernel_resources raises
                if not (type(exc).__module__ or "").startswith("cuda."):
                    raise
                log = str(exc).replace("\x00", "").strip()
                if kind == "cuda" and "name expression" in log:
                    # NVRTC looks the kernel up by its name expression: an unknown name, not bad code
                    known = kernel_names_in_source(payload)
                    hint = f"; kernels in the source: {', '.join(known)}" if known else ""
                    raise ValueError(f"kernel={name!r} is not a kernel of {label}{hint}") from None
                raise CompileError(f"compiling {label} for {arch} failed", log) from None
        else:
            module = load_object_code(payload, kind)
    code = payload if kind in ("cubin", "fatbin") else getattr(module, "code", None)
    binary = bytes(code) if isinstance(code, (bytes, bytearray)) else None
    try:
        with cuda_errors(f"finding kernel {name!r} in {label}"):
            return module.get_kernel(name), binary
    except DeviceError as exc:
        known = kernel_names_in_source(payload) if kind == "cuda" else []
        hint = f"; kernels in the source: {', '.join(known)}" if known else ""
        raise DeviceError(f"{exc}{hint}") from None


def _nvcc_kernel(path: Path, name: str, *, arch: str, options: CompileOptions,
                 compiler: str) -> tuple[Kernel, bytes] | None:
    """The kernel ``name`` of the file ``path`` as nvcc builds it, and its cubin; None where no nvcc
    is found under "auto", or where its cubin lacks the kernel under "auto" (NVRTC's turn)."""
    built = occupancy.file_cubin(path, arch, options=options.nvcc_options(), compiler=compiler)
    if built is None:
        return None
    cubin, tool = built
    try:
        # the symbol the driver knows: a C++ kernel's mangled name, found from its name as written
        symbol = occupancy.kernel_resources(cubin, kernel=name, sass=False).kernel
    except occupancy.OccupancyError as exc:
        if compiler == "auto":
            return None
        raise ValueError(f"kernel={name!r} is not in {path.name} as {tool} builds it: {exc}") from None
    with cuda_errors(f"loading kernel {name!r} from {path.name} ({tool})"):
        return load_object_code(cubin, "cubin").get_kernel(symbol), cubin
