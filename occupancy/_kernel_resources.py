"""kernel_resources: a kernel's registers, shared and local memory, barriers and bounds, offline."""

from __future__ import annotations

import contextvars
import os
import re
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import Any

from ._arch import ArchitectureLike, architecture
from ._compile import (
    CompileError,
    Compiled,
    CompilerNotFoundError,
    compile_ptx,
    compile_source,
    no_compiler_error,
    one_line_error,
    ptx_directives,
    ptx_setmaxnreg,
    ptxas_log,
)
from ._compile_commands import compile_command
from ._compile_inputs import checked_compile_inputs, compiler_tool
from ._cubin import ELF_MAGIC, cubin_kernels
from ._errors import OccupancyError
from ._fatbin import FatbinEntry, fatbin_entries
from ._frameworks import (
    cupy_input,
    cupy_name_expressions,
    is_cupy,
    is_numba,
    is_triton,
    numba_ptx,
    triton_cache_kernels,
    triton_kernel,
)
from ._input_kind import (
    FATBIN_BYTES,
    check_runs_on,
    host_fatbin,
    is_ptx,
    is_source_file,
    is_source_text,
    sm_number,
)
from ._names import demangle, match_kernel
from ._nvcc import find_ptxas, ptxas_compile
from ._nvrtc_hints import IMPLICIT_HEADER, nvrtc_failure, nvrtc_include_options, nvrtc_options
from ._progress import Progress, no_progress, step as progress_step
from ._resources import KernelResources
from ._sass import sass_summaries
from ._source_build import nvcc_file, required_nvcc, source_names
from .common import no_kernel_reason

__all__ = ["all_kernel_resources", "compile_text", "kernel_resources", "kernel_resources_by_architecture"]


# Whether `_resources` reads the SASS summary (nvdisasm): `all_kernel_resources`' ``sass=``, set
# for the length of its call, which runs whole on its caller's thread (a context variable, so
# that the threads of `kernel_resources_by_architecture` each have their own).
_WITH_SASS: contextvars.ContextVar[bool] = contextvars.ContextVar("occupancy_with_sass", default=True)


def _resources(
    cubin: bytes,
    origin: str,
    *,
    ptx: str | None = None,
    log: str | None = None,
    extra: Mapping[str, object] | None = None,
    compiler: str | None = None,
) -> dict[str, KernelResources]:
    """KernelResources of every kernel in a cubin, with what the PTX, ptxas log and SASS add."""
    arch, kernels = cubin_kernels(cubin, origin)
    names = demangle([fields["kernel"] for fields in kernels])
    sass = sass_summaries(cubin, arch) if kernels and _WITH_SASS.get() else None
    spills = ptxas_log(log) if log else {}
    directives = ptx_directives(ptx) if ptx else {}
    setmaxnreg = ptx_setmaxnreg(ptx) if ptx else {}
    out: dict[str, KernelResources] = {}
    for fields in kernels:
        name = fields["kernel"]
        sources = fields["sources"]
        if name in names:
            fields["demangled"] = names[name]
        if compiler is not None:
            fields["compiler"] = compiler
            sources["compiler"] = f"{origin}: the compiler that made it"
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
        if sass is not None and name in sass.functions:
            if sass.functions[name].setmaxnreg_registers:
                fields["warp_group_registers"] = sass.functions[name].setmaxnreg_registers
                sources["warp_group_registers"] = f"{sources['sass']}: USETMAXREG"
        elif name in setmaxnreg:
            fields["warp_group_registers"] = setmaxnreg[name]
            sources["warp_group_registers"] = "PTX setmaxnreg.inc/.dec"
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
        want = sm_number(arch)
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
                compiled = _assemble(text, arch, options, name=f"compute_{top}.ptx")
                out.update(_resources(compiled.cubin, f"{what} compute_{top} PTX, {compiled.tool} for "
                                      f"{architecture(arch).name}, cubin", ptx=text, log=compiled.log,
                                      compiler=compiled.tool))
            return out
    out = {}
    for e in chosen:
        out.update(_resources(e.data, f"{what} sm_{e.sm} cubin"))
    return out


def compile_text(text: str, arch: ArchitectureLike | None, options: Sequence[str], name: str,
                  include: Path | None, ptxas: str | None = None,
                  name_expressions: Sequence[str] = ()) -> tuple[Compiled, str]:
    """PTX (assembled) or CUDA source text (NVRTC, with its template instances
    ``name_expressions``) compiled, and what the cubin was made from."""
    if is_ptx(text):
        if arch is None:
            m = re.search(r"^\s*\.target\s+(sm_\d+)", text, re.M)
            arch = m[1] if m else None
        if arch is None:
            raise OccupancyError("PTX without a .target sm_XX: give arch=")
        compiled = _assemble(text, arch, options, name=name, ptxas=ptxas)
        return compiled, f"PTX ({name}) via {compiled.tool.split()[0]}, cubin"
    if arch is None:
        raise OccupancyError("arch= is required to compile CUDA source, e.g. arch='sm_90'")
    implicit, header = IMPLICIT_HEADER
    opts = [*nvrtc_options(options), *([f"-I{include}"] if include is not None else []), *nvrtc_include_options(),
            f"-include={implicit}"]
    try:
        compiled = compile_source(text, arch, opts, name=name, headers={implicit: header},
                                  name_expressions=name_expressions)
    except CompilerNotFoundError:
        if include is None:  # a string of source, meant for NVRTC: nvcc would not take it
            raise
        # a file reaches NVRTC only when no nvcc was found: either one compiles it
        raise no_compiler_error(name, "compiling CUDA C++", "nvcc", "NVRTC") from None
    except CompileError as exc:
        if include is None:  # a string of source, meant for NVRTC: its whole log helps
            raise
        raise one_line_error(nvrtc_failure(exc.log, os.fspath(include / name), arch, options), exc.log) from None
    return compiled, f"CUDA source ({name}) via NVRTC, cubin"


def _text(text: str, arch: ArchitectureLike | None, options: Sequence[str], name: str, include: Path | None,
          ptxas: str | None = None, name_expressions: Sequence[str] = ()) -> dict[str, KernelResources]:
    compiled, what = compile_text(text, arch, options, name, include, ptxas, name_expressions)
    return _resources(compiled.cubin, what, ptx=text if is_ptx(text) else compiled.ptx, log=compiled.log,
                      compiler=compiled.tool)


def _assemble(ptx: str, arch: ArchitectureLike, options: Sequence[str], name: str,
              ptxas: str | None = None) -> Compiled:
    """PTX assembled as a whole program, as ``ptxas -v`` and the driver's JIT do: by ``ptxas``
    or the one found, else by nvJitLink (which assembles relocatable code, ``ptxas -c``: a
    kernel can get more registers than the driver would give it)."""
    if ptxas is not None or find_ptxas() is not None:
        return ptxas_compile(ptx, arch, options, name=name, ptxas=ptxas)
    try:
        return compile_ptx(ptx, arch, options, name=name)
    except CompilerNotFoundError:
        raise no_compiler_error(name, "assembling PTX", "ptxas", "nvJitLink") from None


def _source_file(path: Path, arch: ArchitectureLike | None, options: Sequence[str], compiler: str,
                 cwd: str | None) -> dict[str, KernelResources]:
    """A CUDA C++ file compiled by nvcc, as the project builds it; by NVRTC when there is no nvcc."""
    nvcc = required_nvcc(compiler)
    if nvcc is None:
        return _bytes(path.read_bytes(), arch, options, path.name, path.parent)
    compiled = nvcc_file(path, arch, options, cwd, nvcc)
    return _resources(compiled.cubin, f"CUDA source ({path.name}) via {compiled.tool}, cubin", ptx=compiled.ptx,
                      log=compiled.log, compiler=compiled.tool)


def _bytes(data: bytes, arch: ArchitectureLike | None, options: Sequence[str], name: str, include: Path | None,
           ptxas: str | None = None) -> dict[str, KernelResources]:
    if data[:4] == ELF_MAGIC:
        if data[18:20] == (190).to_bytes(2, "little"):  # e_machine EM_CUDA
            out = _resources(data, "cubin")
            built = next(iter(out.values())).architecture if out else None
            if built is not None:
                check_runs_on(built, arch, f"cubin {name}")
            return out
        return _pick(fatbin_entries(host_fatbin(data, name)), arch, options, f"{name} .nv_fatbin")
    if data[:4] == FATBIN_BYTES:
        return _pick(fatbin_entries(data), arch, options, f"fatbin {name}")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise OccupancyError(f"{name}: neither a cubin, a fatbin, PTX nor CUDA source") from None
    return _text(text, arch, options, name, include, ptxas)


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
            check_runs_on(r.architecture, arch, f"Triton kernel {r.kernel}")
        return {name: _triton_optin(r) for name, r in out.items()}
    if "registers_per_thread" not in fields:
        if info["ptx"] is None:
            raise OccupancyError(f"Triton kernel {fields['kernel']!r} has neither a cubin nor PTX")
        target = arch or info["arch"]
        compiled = _assemble(info["ptx"], target, (), name=f"{fields['kernel']}.ptx")
        return _resources(compiled.cubin, f"Triton PTX via {compiled.tool.split()[0]}, cubin", ptx=info["ptx"],
                          log=compiled.log, extra=fields, compiler=compiled.tool)
    sources = fields.pop("sources")
    sources.update(kernel="Triton metadata.name", architecture="Triton metadata.target")
    built = info["arch"] or (architecture(arch).name if arch is not None else None)
    if built is None:
        raise OccupancyError("the Triton kernel does not name its target: give arch=")
    check_runs_on(built, arch, f"Triton kernel {fields['kernel']}")
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


def _collect(obj: object, arch: ArchitectureLike | None, options: Sequence[str], compiler: str = "auto",
             cwd: str | None = None) -> dict[str, KernelResources]:
    if isinstance(obj, KernelResources):
        check_runs_on(obj.architecture, arch, f"KernelResources of {obj.kernel}")
        return {obj.kernel: obj}
    if is_triton(obj):
        return _triton(obj, arch)
    if is_cupy(obj):
        source, cupy_options, _ = cupy_input(obj)
        expressions = cupy_name_expressions(obj)
        if expressions and isinstance(source, str):
            # A RawModule's templates are compiled only for the instances it names,
            # which CuPy hands to NVRTC; without them NVRTC compiles no kernel at all.
            return _text(source, arch, [*cupy_options, *options], "<source>", None, name_expressions=expressions)
        return _collect(source, arch, [*cupy_options, *options])
    if is_numba(obj):
        out: dict[str, KernelResources] = {}
        for signature, ptx in numba_ptx(obj).items():
            out.update(_text(ptx, arch, options, f"numba {signature}", None))
        return out
    if isinstance(obj, (bytes, bytearray, memoryview)):
        return _bytes(bytes(obj), arch, options, "<bytes>", None, compiler_tool(compiler, "ptxas"))
    if isinstance(obj, str) and is_source_text(obj):
        return _text(obj, arch, options, "<source>", None, compiler_tool(compiler, "ptxas"))
    if isinstance(obj, (str, os.PathLike)):
        path = Path(obj)
        if path.is_dir():
            out = {}
            for info in triton_cache_kernels(path):
                for name, r in _triton_info(info, arch).items():
                    out[name if name not in out else f"{name}@{len(out)}"] = r
            return out
        if not path.is_file():
            raise FileNotFoundError(f"no such file: {os.fspath(path)!r}")
        if is_source_file(path):
            return _source_file(path, arch, options, compiler, cwd)
        return _bytes(path.read_bytes(), arch, options, path.name, path.parent, compiler_tool(compiler, "ptxas"))
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
    compiler: str = "auto",
    compile_commands: str | os.PathLike[str] | None = None,
    sass: bool = True,
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
    options, cwd, arch = checked_compile_inputs(source_or_binary, arch, options, compiler, compile_commands)
    if not isinstance(sass, bool):
        raise TypeError(f"sass must be True or False, not {type(sass).__name__}")
    token = _WITH_SASS.set(sass)
    try:
        return _collect(source_or_binary, arch, options, compiler, cwd)
    finally:
        _WITH_SASS.reset(token)


def kernel_resources_by_architecture(
    source_or_binary: object,
    archs: Sequence[ArchitectureLike] | str = (),
    *,
    kernel: str | None = None,
    options: Sequence[str] = (),
    compiler: str = "auto",
    compile_commands: str | os.PathLike[str] | None = None,
    progress: Progress = no_progress,
    sass: bool = True,
) -> dict[str, dict[str, KernelResources]]:
    """Every kernel's resources for several architectures, compiled in parallel.

    Parameters are those of :func:`kernel_resources`; ``archs`` defaults to the compile
    command's architectures (``compile_commands=``), else the binary's own. ``progress``
    receives one message per architecture compiled (an `occupancy.common.ProgressStep`).

    Returns
    -------
    dict
        Architecture name (``"sm_90"``, or the binary's own) to the kernels' resources by symbol;
        with ``kernel=``, only that kernel.

    Examples
    --------
    >>> import occupancy
    >>> src = 'extern "C" __global__ void scale(float* x) { x[threadIdx.x] *= 2.0f; }'
    >>> found = occupancy.kernel_resources_by_architecture(src, ["sm_80", "sm_90"])
    >>> sorted(found), [r.architecture for r in found["sm_90"].values()]
    (['sm_80', 'sm_90'], ['sm_90'])
    """
    if not isinstance(archs, (str, list, tuple)):
        raise TypeError(f"archs must be a list of architectures such as ['sm_80', 'sm_90'], "
                        f"not {type(archs).__name__}")
    targets: list[ArchitectureLike | None] = [archs] if isinstance(archs, str) else list(archs)
    if not targets and compile_commands is not None:
        targets = list(compile_command(source_or_binary, compile_commands).architectures)
    targets = targets or [None]
    spelled = source_names(source_or_binary, options, compiler, compile_commands)

    def one(arch: ArchitectureLike | None) -> dict[str, KernelResources]:
        found = all_kernel_resources(source_or_binary, arch=arch, options=options, compiler=compiler,
                                     compile_commands=compile_commands, sass=sass)
        if kernel is None:
            return found
        name = match_kernel(kernel, list(found), {n: r.demangled for n, r in found.items()}, *spelled)
        return {name: found[name]}

    # nvcc runs as a process and NVRTC releases the GIL: one thread per architecture.
    names = ["the binary's architecture" if a is None else str(getattr(a, "name", a)) for a in targets]
    progress_step(progress, f"compiling for {', '.join(names)}", 0, len(targets))
    with ThreadPoolExecutor(max_workers=min(8, len(targets))) as pool:
        futures = [pool.submit(one, arch) for arch in targets]
        for done, future in enumerate(as_completed(futures), start=1):
            progress_step(progress, f"compiled {done} of {len(targets)} architectures", done, len(targets))
        results = [future.result() for future in futures]
    out: dict[str, dict[str, KernelResources]] = {}
    for arch, found in zip(targets, results):
        if isinstance(arch, str) and re.fullmatch(r"sm_\d+[af]", arch.strip()):
            key = arch.strip()  # an architecture-specific target keeps its suffix
        else:
            key = architecture(arch).name if arch is not None else next(
                (r.architecture for r in found.values()), "?")
        out[key] = found
    return out


def kernel_resources(
    source_or_binary: object,
    *,
    arch: ArchitectureLike | None = None,
    kernel: str | None = None,
    options: Sequence[str] = (),
    compiler: str = "auto",
    compile_commands: str | os.PathLike[str] | None = None,
    sass: bool = True,
) -> KernelResources:
    """Registers, shared and local memory, barriers and launch bounds of one compiled kernel.

    No GPU and no driver are needed: binaries are read with pyelftools. A CUDA C++ file
    is compiled by the user's own nvcc (device code only, ``--resource-usage``; host code
    and every header the build finds compile as they do there), or by NVRTC when no nvcc
    is found; CUDA C++ given as a string is compiled by NVRTC. PTX is assembled with
    nvJitLink (cuda-python, gpuroof's ``compile`` extra: `occupancy.common.install_extra`). ``compiler`` on the
    result says which compiler and version made the figures.

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
        The kernel: its symbol, its demangled name, a C++ name expression without the
        parameters (``softmax<256>``, ``ns::k``) or a prefix only one kernel has. Needed
        when the input holds several kernels.
    options : sequence of str, optional
        Compiler options: nvcc's for a source file (``-DN=4``, ``-Iinclude``, ``-std=c++17``,
        ``-O3``, ``--use_fast_math``, ``-maxrregcount=64``, ``-lineinfo``, ``-rdc=true``,
        ``-G``, ``-Xcompiler ...``; NVRTC is given those it takes), nvJitLink's for PTX
        (``-maxrregcount=64``). A source file's own folder is on the include path. With
        ``-rdc=true`` (relocatable device code) the cubin is device-linked as the build links
        it (``nvcc -dlink``), so registers and stack are nvlink's final figures.
    compiler : {"auto", "nvcc", "nvrtc"} or path
        For a CUDA C++ file: ``"auto"`` uses nvcc when one is found (``$GPUROOF_NVCC``,
        ``PATH``, ``$CUDA_HOME``, ``$CUDA_PATH``, /usr/local/cuda, NVIDIA's nvcc wheel,
        cuda-pathfinder), else NVRTC. The path of an nvcc (``/usr/local/cuda-12.8/bin/nvcc``)
        compiles a file with that toolkit, and PTX with the ptxas beside it; the path of a
        ptxas assembles PTX with it.
    compile_commands : path, optional
        A ``compile_commands.json`` (CMake, Bear): the file is compiled with its own
        command's options, in its folder, for its architecture unless ``arch`` is given.
    sass : bool
        Read the SASS summary (``KernelResources.sass``: loops, global loads in flight,
        which the time model takes) with nvdisasm. False leaves it None and runs no
        nvdisasm: on a heavy file the summary costs as much as a third of the compile
        (ggml's CUB argsort for sm_90: 6 CPU-seconds beside nvcc's 15).

    Returns
    -------
    KernelResources
        ``sources`` says where each figure was read.

    Raises
    ------
    OccupancyError
        When the kernel is not found or is ambiguous (the message lists the kernels),
        the input holds nothing for ``arch``, or compilation fails (a
        :class:`~occupancy.CompileError`: one line, with the compiler's log in ``.log``).
    FileNotFoundError
        When a path does not exist.
    CompilerNotFoundError
        When compiling needs nvcc or NVRTC (ptxas or nvJitLink for PTX) and none is installed
        (an ``ImportError`` and an `OccupancyError`).
    TypeError
        For inputs of another kind.

    See Also
    --------
    all_kernel_resources : every kernel of the input, by name.
    kernel_resources_by_architecture : every kernel for several architectures at once.

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
    found = all_kernel_resources(source_or_binary, arch=arch, options=options, compiler=compiler,
                                 compile_commands=compile_commands, sass=sass)
    names = list(found)
    if kernel is None:
        if len(found) == 1:
            return found[names[0]]
        # the names as the source spells them (a C++ kernel demangled), the symbol beside it, as
        # a kernel that is not found lists them; kernel= takes either (--kernel on the command line)
        labels = [f"{r.demangled} ({n})" if r.demangled and r.demangled != n else n for n, r in found.items()]
        raise OccupancyError(
            f"the input holds {len(found)} kernels; choose one with kernel= (--kernel on the command line): "
            + "; ".join(labels)
            if found else f"the input holds no kernel ({no_kernel_reason(source_or_binary)})"
        )
    return found[match_kernel(kernel, names, {n: r.demangled for n, r in found.items()},
                              *source_names(source_or_binary, options, compiler, compile_commands))]
