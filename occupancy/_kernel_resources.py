"""kernel_resources: a kernel's registers, shared and local memory, barriers and bounds, offline."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ._arch import ArchitectureLike, architecture
from ._compile import compile_ptx, compile_source, ptx_directives, ptxas_log
from ._cubin import ELF_MAGIC, cubin_kernels
from ._errors import OccupancyError
from ._fatbin import FATBIN_MAGIC, FatbinEntry, fatbin_entries
from ._frameworks import (
    cupy_input,
    is_cupy,
    is_numba,
    is_triton,
    numba_ptx,
    triton_cache_kernels,
    triton_kernel,
)
from ._resources import KernelResources
from ._sass import sass_summaries

__all__ = ["all_kernel_resources", "kernel_resources"]

_FATBIN_BYTES = FATBIN_MAGIC.to_bytes(4, "little")


def _sm(arch: ArchitectureLike) -> int:
    a = architecture(arch)
    return a.major * 10 + a.minor


def _check_runs_on(built: str, arch: ArchitectureLike | None, what: str) -> None:
    """SASS runs on its own major version at the same or a later minor."""
    if arch is None:
        return
    have, want = int(built.removeprefix("sm_").rstrip("af")), _sm(arch)
    if have // 10 != want // 10 or have % 10 > want % 10:
        raise OccupancyError(
            f"{what} holds SASS for {built}, which does not run on arch={architecture(arch).name}"
        )


def _resources(
    cubin: bytes,
    origin: str,
    *,
    ptx: str | None = None,
    log: str | None = None,
    extra: Mapping[str, object] | None = None,
) -> dict[str, KernelResources]:
    """KernelResources of every kernel in a cubin, with what the PTX, ptxas log and SASS add."""
    arch, kernels = cubin_kernels(cubin, origin)
    sass = sass_summaries(cubin, arch) if kernels else None
    spills = ptxas_log(log) if log else {}
    directives = ptx_directives(ptx) if ptx else {}
    out: dict[str, KernelResources] = {}
    for fields in kernels:
        name = fields["kernel"]
        sources = fields["sources"]
        if name in spills:
            fields["spill_store_bytes"] = spills[name]["spill_store_bytes"]
            fields["spill_load_bytes"] = spills[name]["spill_load_bytes"]
            sources["spill_store_bytes"] = sources["spill_load_bytes"] = "ptxas -v log (spill stores/loads)"
        blocks = directives.get(name, {}).get("minnctapersm")
        if blocks:
            fields["min_blocks_per_sm"] = blocks[0]
            sources["min_blocks_per_sm"] = "PTX .minnctapersm"
        if sass is not None:
            summary = sass.functions.get(name)
            if summary is not None:
                fields["sass"] = summary
                sources["sass"] = f"{origin} .text.{name}, disassembled by {summary.disassembler}"
            else:
                sources["sass"] = f"not read: {sass.reason or f'no .text.{name} in the listing'}"
        if extra:
            for key, value in extra.items():
                if key == "sources":
                    sources.update(value)
                elif key != "kernel":
                    fields[key] = value
        out[name] = KernelResources(**fields)
    return out


def _pick(entries: list[FatbinEntry], arch: ArchitectureLike | None, options: Sequence[str], what: str) -> dict[str, KernelResources]:
    """The SASS the driver would load for ``arch``: an exact cubin, else a compatible one, else JIT of PTX."""
    cubins = [e for e in entries if e.kind == "cubin"]
    ptxs = [e for e in entries if e.kind == "ptx"]
    listing = ", ".join(f"{e.kind} sm_{e.sm}" for e in entries) or "nothing"
    if arch is None:
        sms = sorted({e.sm for e in cubins})
        if len(sms) != 1:
            raise OccupancyError(f"{what} holds {listing}: give arch= to choose")
        chosen = cubins
    else:
        want = _sm(arch)
        chosen = [e for e in cubins if e.sm == want]
        if not chosen:
            runs = [e for e in cubins if e.sm // 10 == want // 10 and e.sm % 10 <= want % 10]
            best = max((e.sm for e in runs), default=None)
            chosen = [e for e in runs if e.sm == best]
        if not chosen:
            older = [e for e in ptxs if e.sm <= want]
            if not older:
                raise OccupancyError(
                    f"{what} holds {listing}: nothing that runs on {architecture(arch).name}"
                )
            top = max(e.sm for e in older)
            out: dict[str, KernelResources] = {}
            for e in (e for e in older if e.sm == top):
                text = e.data.decode("utf-8", "replace")
                compiled = compile_ptx(text, arch, options, name=f"compute_{top}.ptx")
                out.update(_resources(compiled.cubin, f"{what} compute_{top} PTX, nvJitLink for "
                                      f"{architecture(arch).name}, cubin", ptx=text, log=compiled.log))
            return out
    out = {}
    for e in chosen:
        out.update(_resources(e.data, f"{what} sm_{e.sm} cubin"))
    return out


def _host_fatbins(data: bytes, name: str) -> bytes:
    """The ``.nv_fatbin`` section of a host object, executable or shared library."""
    import io

    from elftools.common.exceptions import ELFError
    from elftools.elf.elffile import ELFFile

    # pyelftools reads headers and sections lazily: a damaged image fails at any step.
    try:
        elf = ELFFile(io.BytesIO(data))
        section = elf.get_section_by_name(".nv_fatbin") or elf.get_section_by_name("__nv_relfatbin")
        if section is None:
            raise OccupancyError(
                f"{name}: ELF image for {elf.header['e_machine']} with no .nv_fatbin section: no device code"
            )
        return section.data()
    except ELFError as exc:
        raise OccupancyError(f"{name}: not a readable ELF image: {exc}") from None


def _is_ptx(text: str) -> bool:
    return bool(re.search(r"^\s*\.version\s+\d", text, re.M) and re.search(r"^\s*\.target\s+\w", text, re.M))


def _text(text: str, arch: ArchitectureLike | None, options: Sequence[str], name: str, include: Path | None) -> dict[str, KernelResources]:
    if _is_ptx(text):
        if arch is None:
            m = re.search(r"^\s*\.target\s+(sm_\d+)", text, re.M)
            arch = m[1] if m else None
        if arch is None:
            raise OccupancyError("PTX without a .target sm_XX: give arch=")
        compiled = compile_ptx(text, arch, options, name=name)
        return _resources(compiled.cubin, f"PTX ({name}) via nvJitLink, cubin", ptx=text, log=compiled.log)
    if arch is None:
        raise OccupancyError("arch= is required to compile CUDA source, e.g. arch='sm_90'")
    opts = [*options, f"-I{include}"] if include is not None else list(options)
    compiled = compile_source(text, arch, opts, name=name)
    return _resources(compiled.cubin, f"CUDA source ({name}) via NVRTC, cubin", ptx=compiled.ptx, log=compiled.log)


def _bytes(data: bytes, arch: ArchitectureLike | None, options: Sequence[str], name: str, include: Path | None) -> dict[str, KernelResources]:
    if data[:4] == ELF_MAGIC:
        if data[18:20] == (190).to_bytes(2, "little"):  # e_machine EM_CUDA
            out = _resources(data, "cubin")
            built = next(iter(out.values())).architecture if out else None
            if built is not None:
                _check_runs_on(built, arch, f"cubin {name}")
            return out
        return _pick(fatbin_entries(_host_fatbins(data, name)), arch, options, f"{name} .nv_fatbin")
    if data[:4] == _FATBIN_BYTES:
        return _pick(fatbin_entries(data), arch, options, f"fatbin {name}")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise OccupancyError(f"{name}: neither a cubin, a fatbin, PTX nor CUDA source") from None
    return _text(text, arch, options, name, include)


def _triton(obj: object, arch: ArchitectureLike | None) -> dict[str, KernelResources]:
    asm = getattr(obj, "asm", None) or {}
    cubin = asm.get("cubin")
    info = triton_kernel(obj.metadata, cubin, asm.get("ptx"), loaded=obj)
    return _triton_info(info, arch)


def _triton_info(info: dict[str, Any], arch: ArchitectureLike | None) -> dict[str, KernelResources]:
    fields = info["fields"]
    if info["cubin"] is not None:
        out = _resources(info["cubin"], "Triton cubin", ptx=info["ptx"], extra=fields)
        for r in out.values():
            _check_runs_on(r.architecture, arch, f"Triton kernel {r.kernel}")
        return {name: _triton_optin(r) for name, r in out.items()}
    if "registers_per_thread" not in fields:
        if info["ptx"] is None:
            raise OccupancyError(f"Triton kernel {fields['kernel']!r} has neither a cubin nor PTX")
        target = arch or info["arch"]
        compiled = compile_ptx(info["ptx"], target, name=f"{fields['kernel']}.ptx")
        return _resources(compiled.cubin, "Triton PTX via nvJitLink, cubin", ptx=info["ptx"],
                          log=compiled.log, extra=fields)
    sources = fields.pop("sources")
    sources.update(kernel="Triton metadata.name", architecture="Triton metadata.target")
    built = info["arch"] or (architecture(arch).name if arch is not None else None)
    if built is None:
        raise OccupancyError("the Triton kernel does not name its target: give arch=")
    _check_runs_on(built, arch, f"Triton kernel {fields['kernel']}")
    r = KernelResources(architecture=built, sources=sources, **fields)
    return {r.kernel: _triton_optin(r)}


def _triton_optin(r: KernelResources) -> KernelResources:
    """Triton's launcher raises MAX_DYNAMIC_SHARED_SIZE_BYTES to the opt-in limit less the
    static shared memory when a kernel needs more than 48 KiB (backends/nvidia/driver.c)."""
    arch = architecture(r.architecture)
    if (r.dynamic_shared_memory or 0) <= arch.max_shared_memory_per_block:
        return r
    limit = arch.max_shared_memory_per_block_optin - r.static_shared_memory
    sources = {**r.sources, "max_dynamic_shared_memory":
               "Triton's launcher: the opt-in limit less static shared memory (shared > 48 KiB)"}
    return r.model_copy(update={"max_dynamic_shared_memory": limit, "sources": sources})


def _collect(obj: object, arch: ArchitectureLike | None, options: Sequence[str]) -> dict[str, KernelResources]:
    if isinstance(obj, KernelResources):
        _check_runs_on(obj.architecture, arch, f"KernelResources of {obj.kernel}")
        return {obj.kernel: obj}
    if is_triton(obj):
        return _triton(obj, arch)
    if is_cupy(obj):
        source, cupy_options, _ = cupy_input(obj)
        return _collect(source, arch, [*cupy_options, *options])
    if is_numba(obj):
        out: dict[str, KernelResources] = {}
        for signature, ptx in numba_ptx(obj).items():
            out.update(_text(ptx, arch, options, f"numba {signature}", None))
        return out
    if isinstance(obj, (bytes, bytearray, memoryview)):
        return _bytes(bytes(obj), arch, options, "<bytes>", None)
    if isinstance(obj, str) and ("\n" in obj or len(obj) > 4096):
        return _text(obj, arch, options, "<source>", None)
    if isinstance(obj, (str, os.PathLike)):
        path = Path(obj)
        if path.is_dir():
            out = {}
            for info in triton_cache_kernels(path):
                for name, r in _triton_info(info, arch).items():
                    out[name if name not in out else f"{name}@{len(out)}"] = r
            return out
        if not path.is_file():
            if isinstance(obj, str) and not re.search(r"\.(cu|cuh|ptx|cubin|fatbin|o|so|json)$", obj):
                return _text(obj, arch, options, "<source>", None)
            raise FileNotFoundError(f"no such file: {os.fspath(path)!r}")
        return _bytes(path.read_bytes(), arch, options, path.name, path.parent)
    raise TypeError(
        "kernel_resources takes CUDA source, PTX, a cubin or fatbin (bytes or path), a Triton "
        "compiled kernel or cache folder, a CuPy RawKernel/RawModule or a numba dispatcher, "
        f"not {type(obj).__name__}"
    )


def all_kernel_resources(
    source_or_binary: object,
    *,
    arch: ArchitectureLike | None = None,
    options: Sequence[str] = (),
) -> dict[str, KernelResources]:
    """Resources of every kernel in a source file, PTX, cubin, fatbin or framework kernel.

    Parameters are those of :func:`kernel_resources`.

    Returns
    -------
    dict
        Kernel symbol name (mangled for C++ kernels) to :class:`KernelResources`, in the
        binary's symbol order.

    Examples
    --------
    >>> import occupancy
    >>> src = '''
    ... extern "C" __global__ void scale(float* x) { x[threadIdx.x] *= 2.0f; }
    ... extern "C" __global__ void __launch_bounds__(128) twice(float* x) { x[threadIdx.x] += x[threadIdx.x]; }
    ... '''
    >>> found = occupancy.all_kernel_resources(src, arch="sm_90")
    >>> sorted(found), found["twice"].max_threads_per_block
    (['scale', 'twice'], 128)
    """
    if isinstance(options, (str, bytes)):
        raise TypeError("options must be a sequence of strings, e.g. ['-DN=4', '-std=c++17']")
    if arch is not None:
        architecture(arch)  # an unknown name fails here, listing the known ones
    return _collect(source_or_binary, arch, tuple(options))


def _base_name(symbol: str) -> str:
    """The unqualified function name of an Itanium-mangled symbol (``_Z5saxpyifPKfPf`` -> saxpy)."""
    m = re.match(r"_Z(N)?", symbol)
    if not m:
        return symbol
    i, names = m.end(), []
    while True:
        while i < len(symbol) and symbol[i] in "KVrL":  # cv-qualifiers, internal linkage
            i += 1
        d = re.match(r"\d+", symbol[i:])
        if not d:
            break
        n = int(d[0])
        start = i + len(d[0])
        names.append(symbol[start : start + n])
        i = start + n
        if not m[1] or (i < len(symbol) and symbol[i] in "EI"):
            break
    return names[-1] if names else symbol


def kernel_resources(
    source_or_binary: object,
    *,
    arch: ArchitectureLike | None = None,
    kernel: str | None = None,
    options: Sequence[str] = (),
) -> KernelResources:
    """Registers, shared and local memory, barriers and launch bounds of one compiled kernel.

    No GPU and no driver are needed: binaries are read with pyelftools, CUDA C++ is
    compiled with NVRTC and PTX assembled with nvJitLink (cuda-python, ``pip install
    'gpuroof[compile]'``) for any architecture they support.

    Parameters
    ----------
    source_or_binary
        One of: CUDA C++ source (a string or a ``.cu`` path); PTX (a string or path);
        a cubin or fatbin (bytes or a path; also a host object, executable or shared
        library with a ``.nv_fatbin`` section); a Triton compiled kernel or a Triton
        cache folder; a CuPy ``RawKernel``/``RawModule``; a numba ``cuda.jit``
        dispatcher that has compiled; a :class:`KernelResources`.
    arch : str, tuple or Architecture, optional
        The architecture, e.g. ``"sm_90"``. Required to compile CUDA source. For a fatbin
        it picks the SASS the driver would load (an exact match, else the newest of the
        same major version at a lower minor, else PTX assembled for ``arch``). For a
        cubin it must be one the cubin runs on. PTX defaults to its ``.target``.
    kernel : str, optional
        The kernel's name: its symbol, or for C++ kernels the unqualified function name
        if that is unambiguous. Needed when the input holds several kernels.
    options : sequence of str, optional
        Compiler options: NVRTC's for source (``-DN=4``, ``-Iinclude``, ``-std=c++17``,
        ``--maxrregcount=64``, ``-lineinfo``), nvJitLink's for PTX (``-maxrregcount=64``).
        A source file's own folder is on the include path.

    Returns
    -------
    KernelResources
        ``sources`` says where each figure was read.

    Raises
    ------
    OccupancyError
        When the kernel is not found or is ambiguous (the message lists the kernels),
        the input holds nothing for ``arch``, or compilation fails (a
        :class:`~occupancy.CompileError`, carrying the compiler log).
    ImportError
        When compiling needs cuda-python, NVRTC or nvJitLink and they are missing.
    TypeError
        For inputs of another kind.

    See Also
    --------
    all_kernel_resources : every kernel of the input, by name.

    Examples
    --------
    >>> import occupancy
    >>> src = '''
    ... extern "C" __global__ void __launch_bounds__(256, 2)
    ... saxpy(float a, const float* x, const float* y, float* out, int n) {
    ...     __shared__ float tile[2048];
    ...     int i = blockIdx.x * blockDim.x + threadIdx.x;
    ...     tile[threadIdx.x] = i < n ? a * x[i] + y[i] : 0.0f;
    ...     __syncthreads();
    ...     if (i < n) out[i] = tile[(threadIdx.x + 1) % blockDim.x];
    ... }
    ... '''
    >>> r = occupancy.kernel_resources(src, arch="sm_90")
    >>> r.static_shared_memory, r.max_threads_per_block, r.min_blocks_per_sm, r.block_barriers
    (8192, 256, 2, 1)
    >>> r.sources["registers_per_thread"]
    'CUDA source (<source>) via NVRTC, cubin .nv.info EIATTR_REGCOUNT'
    """
    found = all_kernel_resources(source_or_binary, arch=arch, options=options)
    names = list(found)
    if kernel is None:
        if len(found) == 1:
            return found[names[0]]
        raise OccupancyError(
            f"the input holds {len(found)} kernels; choose one with kernel=: " + ", ".join(names)
            if found else "the input holds no kernel (no __global__ function was compiled)"
        )
    if kernel in found:
        return found[kernel]
    matches = [n for n in names if _base_name(n) == kernel]
    if len(matches) == 1:
        return found[matches[0]]
    if matches:
        raise OccupancyError(f"kernel={kernel!r} is ambiguous: " + ", ".join(matches))
    raise OccupancyError(f"kernel={kernel!r} not found; the input holds " + (", ".join(names) or "no kernel"))
