"""Duck-typed adapters for kernels that frameworks have compiled: Triton, CuPy, numba.

None of the frameworks is imported: each adapter recognises an object by the
attributes it reads, so gpuroof depends on none of them.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ._errors import OccupancyError
from .common import read_json, read_text

__all__ = ["cupy_input", "cupy_name_expressions", "is_cupy", "is_numba", "is_triton", "numba_ptx", "triton_cache_kernels", "triton_kernel"]


def is_triton(obj: object) -> bool:
    """A Triton ``CompiledKernel``: ``metadata`` with ``num_warps`` and ``shared``."""
    metadata = getattr(obj, "metadata", None)
    return metadata is not None and hasattr(metadata, "num_warps") and hasattr(metadata, "shared")


def _get(metadata: Any, key: str, default: Any = None) -> Any:
    if isinstance(metadata, dict):
        return metadata.get(key, default)
    return getattr(metadata, key, default)


def _triton_arch(metadata: object) -> str | None:
    target = _get(metadata, "target")
    arch = target.get("arch") if isinstance(target, dict) else getattr(target, "arch", None)
    if isinstance(arch, int):
        return f"sm_{arch}"
    if isinstance(arch, str) and arch:
        return arch if arch.startswith("sm_") else f"sm_{arch.removeprefix('sm')}"
    return None


def triton_kernel(metadata: object, cubin: bytes | None, ptx: str | None, loaded: object = None,
                  origin: str = "Triton CompiledKernel") -> dict[str, object]:
    """What a Triton kernel says of itself: the binary (if any) and the launch it fixes.

    Returns a dict with ``cubin``, ``ptx``, ``arch`` and ``fields`` (KernelResources
    fields that come from the metadata, with ``sources``).
    """
    warps = int(_get(metadata, "num_warps"))
    warp_size = int(_get(metadata, "warp_size", 32) or 32)
    fields: dict[str, object] = {
        "kernel": str(_get(metadata, "name")),
        "threads_per_block": warps * warp_size,
        "dynamic_shared_memory": int(_get(metadata, "shared") or 0),
    }
    sources = {
        "threads_per_block": f"{origin} metadata.num_warps x warp_size",
        "dynamic_shared_memory": f"{origin} metadata.shared (launched as dynamic shared memory)",
    }
    ctas = int(_get(metadata, "num_ctas", 1) or 1)
    if ctas > 1:
        fields["cluster_dims"] = (ctas, 1, 1)
        sources["cluster_dims"] = f"{origin} metadata.num_ctas"
    if cubin is None and loaded is not None and getattr(loaded, "n_regs", None) is not None:
        # Only a kernel loaded on a GPU has these (read by Triton from cuFuncGetAttribute).
        fields["registers_per_thread"] = int(loaded.n_regs)
        sources["registers_per_thread"] = f"{origin} n_regs"
        # Triton divides CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES by 4 (backends/nvidia/driver.c).
        fields["local_memory"] = 4 * int(getattr(loaded, "n_spills", 0) or 0)
        sources["local_memory"] = f"{origin} n_spills x 4"
    fields["sources"] = sources
    return {"cubin": cubin, "ptx": ptx, "arch": _triton_arch(metadata), "fields": fields}


def triton_cache_kernels(folder: Path) -> list[dict[str, object]]:
    """Every compiled kernel under a Triton cache folder (``~/.triton/cache`` or one entry of it)."""
    out = []
    for meta_path in sorted(folder.rglob("*.json")):
        if meta_path.name.startswith("__grp__"):
            continue
        try:
            # The shared reader: a JSON too deep to parse or too large to read is skipped
            # like any other file that is not a kernel's metadata.
            metadata = read_json(meta_path, OccupancyError)
        except (OSError, OccupancyError):
            continue
        if not isinstance(metadata, dict) or "num_warps" not in metadata or "shared" not in metadata:
            continue
        stem = meta_path.with_suffix("")
        cubin_path, ptx_path = stem.with_suffix(".cubin"), stem.with_suffix(".ptx")
        cubin = cubin_path.read_bytes() if cubin_path.exists() else None
        ptx = read_text(ptx_path, OccupancyError) if ptx_path.exists() else None
        if cubin is None and ptx is None:
            continue
        out.append(triton_kernel(metadata, cubin, ptx, origin=f"Triton cache {meta_path.parent.name}"))
    if not out:
        raise OccupancyError(
            f"{os.fspath(folder)!r} holds no Triton kernel (a <name>.json with num_warps and shared "
            "beside a <name>.cubin or .ptx)"
        )
    return out


def is_cupy(obj: object) -> bool:
    """A CuPy ``RawKernel`` or ``RawModule``."""
    return type(obj).__module__.startswith("cupy") and hasattr(obj, "code") and hasattr(obj, "options")


def cupy_input(obj: object) -> tuple[str | bytes | Path, tuple[str, ...], str | None]:
    """(source or binary, NVRTC options, kernel name) of a CuPy RawKernel/RawModule.

    The kernel is compiled here, offline, from the code and options CuPy holds
    (or read from the file a RawModule was loaded from): CuPy itself compiles only
    on a GPU.
    """
    name = getattr(obj, "name", None)
    path = getattr(obj, "file_path", None) or getattr(obj, "cubin_path", None)
    options = tuple(str(o) for o in (getattr(obj, "options", ()) or ()))
    if path:
        return Path(path), options, name
    if not getattr(obj, "code", None):
        raise OccupancyError(f"{type(obj).__name__} holds neither code nor a file path")
    return obj.code, options, name


def cupy_name_expressions(obj: object) -> tuple[str, ...]:
    """The template instances a CuPy ``RawModule`` names (``name_expressions=``), or ()."""
    return tuple(str(e) for e in (getattr(obj, "name_expressions", None) or ()))


def is_numba(obj: object) -> bool:
    """A numba ``cuda.jit`` dispatcher."""
    return hasattr(obj, "inspect_asm") and hasattr(obj, "overloads")


_NUMBA_OFFLINE = ("numba.cuda.compile_ptx(fn.py_func, (float32[:], ...), cc=(9, 0)) compiles a "
                  "signature with no GPU; pass its PTX")
_NUMBA_NO_SIGNATURE = ("the numba dispatcher has compiled no signature yet: call it once, or give cuda.jit "
                       f"a signature (both need a GPU); {_NUMBA_OFFLINE}")


def numba_ptx(obj: object) -> dict[str, str]:
    """PTX of every signature a numba dispatcher has compiled (``inspect_asm``)."""
    if not getattr(obj, "overloads", None):
        # Asked first: numba-cuda's inspect_asm opens a CUDA context before it looks at
        # the signatures, so with no GPU an uncompiled dispatcher would fail in the driver.
        raise OccupancyError(_NUMBA_NO_SIGNATURE)
    try:
        asm = obj.inspect_asm()
    except Exception as exc:  # noqa: BLE001 - numba's driver errors share no importable base
        # numba-cuda reads the current device's compute capability to pick the PTX, so
        # without a GPU or driver even a compiled dispatcher cannot give its code.
        raise OccupancyError(
            f"the numba dispatcher could not give its PTX ({type(exc).__name__}: "
            f"{' '.join(str(exc).split())[:200]}); {_NUMBA_OFFLINE}"
        ) from exc
    if isinstance(asm, str):
        asm = {"": asm}
    if not asm:
        raise OccupancyError(_NUMBA_NO_SIGNATURE)
    return {str(signature): text for signature, text in asm.items()}
