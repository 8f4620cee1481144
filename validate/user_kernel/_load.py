"""Loading a user's kernel: telling what the code is (source, PTX, cubin, fatbin), compiling it
through the one NVRTC path, and finding the kernel by name."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from occupancy import CompileError

from ..device import CompileOptions, DeviceError, compile_cubin, cuda_errors, load_object_code
from ._options import CodeType

if TYPE_CHECKING:
    from cuda.core import Kernel

__all__ = ["kernel_names_in_source", "load_kernel", "resolve_code"]


def resolve_code(code: object, code_type: str | None) -> tuple[CodeType, str | bytes, str]:
    """Decide what ``code`` is; return (type, payload, name for messages)."""
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
        return kind, payload, path.name  # type: ignore[return-value]
    if isinstance(code, (bytes, bytearray)):
        data = bytes(code)
        if code_type in ("cubin", "fatbin"):
            return code_type, data, code_type  # type: ignore[return-value]
        if data[:4] == b"\x7fELF":
            return "cubin", data, "cubin"
        return (code_type or "fatbin"), data, "binary"  # type: ignore[return-value]
    if isinstance(code, str):
        if code_type:
            return code_type, code, code_type  # type: ignore[return-value]
        if re.search(r"^\s*\.(version|entry|visible)\b", code, re.MULTILINE):
            return "ptx", code, "PTX"
        return "cuda", code, "source"
    raise TypeError(f"code must be CUDA source or PTX (str), a cubin/fatbin (bytes) or a path, "
                    f"not {type(code).__name__}")


def kernel_names_in_source(source: str) -> list[str]:
    """The ``__global__`` function names of CUDA source, for a hint when a name is not found."""
    return sorted(set(re.findall(r"__global__\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?void\s+(\w+)", source)))


def load_kernel(resolved: tuple[str, str | bytes, str], name: str, *, arch: str,
                options: CompileOptions) -> tuple[Kernel, bytes | None]:
    """The kernel ``name`` of `resolve_code`'s answer, compiled for ``arch`` (source, PTX) or loaded,
    and the binary the driver loaded (the cubin NVRTC built, or the user's cubin or fatbin; None
    where cuda.core does not hand it back), whose SASS the prediction reads."""
    kind, payload, label = resolved
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
