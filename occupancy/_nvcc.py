"""Compiling CUDA C++ with the user's own nvcc (device code only, one architecture per call),
and PTX with ptxas as a whole program.

nvcc is the reference: NVRTC's front end emits different PTX for the same source and
options (register counts differ by a few), refuses host code and searches no include
folder. So a source file is compiled as the project builds it, ``nvcc -cubin -gencode
arch=compute_XY,code=sm_XY --resource-usage``, and its cubin is read like any other;
the resource-usage log gives what the cubin does not keep (spill bytes).

Relocatable device code (``-rdc=true``, ``-dc``; CMake's ``CUDA_SEPARABLE_COMPILATION``) is
device-linked as the project's build links it (``nvcc -dlink``): nvlink sets a kernel's final
registers and stack from its call graph (a kernel calling a non-inlined function: 24 registers
in the relocatable cubin, 53 after the link), and nvcc prints no resource usage for it.

PTX is assembled by ``ptxas -v`` as a whole program, as nvcc and the driver's JIT do:
nvJitLink assembles it as relocatable code (``ptxas -c``), which can give a kernel more
registers (an SGEMM: 238 instead of 167).
"""

from __future__ import annotations

import functools
import os
import re
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

from ._compile import CompileError, Compiled, target_sm
from ._tools import find_tool

__all__ = ["file_text", "find_nvcc", "find_ptxas", "nvcc_command", "nvcc_compile", "nvcc_preprocess",
           "nvcc_version", "ptxas_compile", "relocatable"]


@functools.cache
def find_nvcc() -> str | None:
    """The nvcc to compile with (``$GPUROOF_NVCC``, ``PATH``, ``$CUDA_HOME``/``$CUDA_PATH``,
    ``/usr/local/cuda``, NVIDIA's nvcc wheel); None when there is none.

    Examples
    --------
    >>> find_nvcc() is None or find_nvcc().endswith("nvcc")
    True
    """
    return find_tool("nvcc")


@functools.cache
def find_ptxas() -> str | None:
    """The ptxas to assemble PTX with, found as nvcc is; None when there is none."""
    return find_tool("ptxas")


@functools.cache
def nvcc_version(tool: str) -> str:
    """``"13.0"`` from ``nvcc --version`` or ``ptxas --version`` ("... release 13.0, V13.0.88")."""
    try:
        text = subprocess.run([tool, "--version"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise CompileError(f"{tool} --version failed: {exc}") from None
    m = re.search(r"release (\d+\.\d+)", text)
    return m[1] if m else "?"


def _found(path: str | None, tool: str) -> str:
    """``path``, the ``tool`` to run; FileNotFoundError naming where it was looked for when None."""
    if path is None:
        raise FileNotFoundError(f"no {tool} found (PATH, CUDA_HOME, CUDA_PATH, /usr/local/cuda, nvidia-cuda-nvcc)")
    return path


def ptxas_compile(ptx: str, arch: object, options: Sequence[str] = (), name: str = "kernel.ptx",
                  ptxas: str | None = None) -> Compiled:
    """Assemble PTX for ``arch`` with ``ptxas -v`` as a whole program, as nvcc does.

    ``options`` are nvJitLink's spelling (``-maxrregcount=N``, ``-lineinfo``, ``-Xptxas=...``)
    or ptxas's. ``ptxas`` is the one to run (another toolkit's); None finds one.

    Raises
    ------
    CompileError
        When ptxas reports an error.
    FileNotFoundError
        When no ptxas is found.
    """
    ptxas = _found(ptxas or find_ptxas(), "ptxas")
    opts = []
    for option in options:
        opts.extend(option.removeprefix("-Xptxas=").split(",") if option.startswith("-Xptxas=") else [option])
    with tempfile.TemporaryDirectory(prefix="gpuroof-ptxas-") as tmp:
        source, cubin = Path(tmp) / "in.ptx", Path(tmp) / "out.cubin"
        source.write_text(ptx, "utf-8")
        command = [ptxas, "-v", f"-arch={target_sm(arch)}", *opts, os.fspath(source), "-o", os.fspath(cubin)]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=600)
        except subprocess.TimeoutExpired:
            raise CompileError(f"ptxas did not finish assembling {name} in 600 s") from None
        log = done.stdout + done.stderr
        if done.returncode != 0:
            raise CompileError(f"ptxas could not assemble {name} for {target_sm(arch)}", log.replace(
                os.fspath(source), name))
        return Compiled(cubin.read_bytes(), ptx, log, f"ptxas {nvcc_version(ptxas)}")


def relocatable(options: Sequence[str]) -> bool:
    """Whether nvcc ``options`` ask for relocatable device code (the last word wins, as in nvcc).

    Examples
    --------
    >>> relocatable(["-O3", "-rdc=true"]), relocatable(["-rdc", "true", "-rdc=false"]), relocatable(["-dc"])
    (True, False, True)
    """
    found = False
    for i, option in enumerate(options):
        name, _, value = option.partition("=")
        if name in ("-rdc", "--relocatable-device-code"):
            value = value or (options[i + 1] if i + 1 < len(options) else "")
            found = value.lower() == "true"
        elif option in ("-dc", "--device-c"):
            found = True
    return found


def nvcc_command(path: str | os.PathLike[str], arch: object, options: Sequence[str] = (),
                 nvcc: str = "nvcc") -> list[str]:
    """The nvcc command line that compiles ``path``'s device code for ``arch`` with its resource usage.

    Examples
    --------
    >>> " ".join(nvcc_command("k.cu", "sm_90", ["-O3"]))
    'nvcc -cubin -gencode arch=compute_90,code=sm_90 --resource-usage -O3 k.cu'
    """
    sm = target_sm(arch)
    digits = sm.removeprefix("sm_")
    # With relocatable code nvcc prints no resource usage ("the final resource allocation is
    # not done"); ptxas -v still gives each function's stack frame and spills.
    verbose = ["-Xptxas=-v"] if relocatable(options) else []
    return [nvcc, "-cubin", "-gencode", f"arch=compute_{digits},code={sm}", "--resource-usage", *verbose,
            *options, os.fspath(path)]


def nvcc_compile(path: str | os.PathLike[str], arch: object, options: Sequence[str] = (),
                 cwd: str | os.PathLike[str] | None = None, nvcc: str | None = None) -> Compiled:
    """Compile the device code of the CUDA C++ file ``path`` for ``arch`` with nvcc.

    ``options`` are nvcc's (``-I``, ``-D``, ``-std=c++17``, ``-O3``, ``--use_fast_math``,
    ``-maxrregcount=N``, ``-lineinfo``, ``-rdc=true``, ``-G``, ``-Xcompiler ...``); host code
    and every header the project's build finds compile as they do there. ``cwd`` is the
    folder nvcc runs in (a compile command's ``directory``: relative paths in ``options`` are
    relative to it, ``path`` to the current folder); ``nvcc`` the one to run (another
    toolkit's, e.g. CUDA 12.8's); None finds one.

    Raises
    ------
    CompileError
        When nvcc reports an error (its messages are in ``.log``).
    FileNotFoundError
        When no nvcc is found.
    """
    nvcc = _found(nvcc or find_nvcc(), "nvcc")
    source = Path(path).resolve()  # the caller's path, from where the caller is: nvcc runs in cwd
    with tempfile.TemporaryDirectory(prefix="gpuroof-nvcc-") as tmp:
        cubin = Path(tmp) / "out.cubin"
        # -keep leaves the PTX behind, for .minnctapersm, which the cubin does not keep.
        command = [*nvcc_command(source, arch, options, nvcc), "-o", os.fspath(cubin), "-keep", "-keep-dir", tmp]
        try:
            # errors="replace": nvcc echoes a source line holding bytes that are not UTF-8.
            done = subprocess.run(command, capture_output=True, text=True, errors="replace", cwd=cwd, timeout=600)
        except subprocess.TimeoutExpired:
            raise CompileError(f"nvcc did not finish compiling {source} in 600 s") from None
        log = done.stdout + done.stderr
        if done.returncode != 0:
            shown = " ".join(nvcc_command(path, arch, options))
            raise CompileError(f"nvcc could not compile {source} for {target_sm(arch)} ({shown})", log)
        ptx_files = sorted(Path(tmp).glob("*.ptx"))
        ptx = "\n".join(p.read_text("utf-8", "replace") for p in ptx_files)
        tool = f"nvcc {nvcc_version(nvcc)}"
        if relocatable(options):
            linked, link_log = _device_link(nvcc, cubin, arch, cwd)
            if linked is not None:
                cubin, tool = linked, f"{tool}, device-linked"
            log += link_log
        return Compiled(cubin.read_bytes(), ptx, log, tool)


def nvcc_preprocess(path: str | os.PathLike[str], options: Sequence[str] = (),
                    cwd: str | os.PathLike[str] | None = None, nvcc: str | None = None) -> str:
    """The CUDA C++ file ``path`` preprocessed by nvcc (``nvcc -E``) with ``options``, as
    `nvcc_compile` builds it: the file with every header it includes.

    Raises
    ------
    CompileError
        When nvcc cannot preprocess it.
    FileNotFoundError
        When no nvcc is found.
    """
    nvcc = _found(nvcc or find_nvcc(), "nvcc")
    source = Path(path).resolve()
    try:
        done = subprocess.run([nvcc, "-E", "-x", "cu", *options, os.fspath(source)], capture_output=True, text=True,
                              errors="replace", cwd=cwd, timeout=600)
    except subprocess.TimeoutExpired:
        raise CompileError(f"nvcc did not finish preprocessing {source} in 600 s") from None
    if done.returncode != 0:
        raise CompileError(f"nvcc could not preprocess {source}", done.stderr)
    return done.stdout


def _device_link(nvcc: str, cubin: Path, arch: object, cwd: str | os.PathLike[str] | None) -> tuple[Path | None, str]:
    """The relocatable ``cubin`` device-linked alone (``nvcc -dlink -cubin``, with the device
    runtime, as the project's link step does), and the link's log; None when it does not link
    (a function defined in another file): the relocatable cubin's figures then stand."""
    linked = cubin.with_name("linked.cubin")
    command = [nvcc, "-dlink", "-cubin", f"-arch={target_sm(arch)}", os.fspath(cubin), "-o", os.fspath(linked)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, cwd=cwd, timeout=600)
    except subprocess.TimeoutExpired:
        return None, "nvcc -dlink did not finish in 600 s: the relocatable cubin's figures stand\n"
    if done.returncode != 0 or not linked.is_file():
        return None, (done.stdout + done.stderr + "nvcc -dlink failed: the relocatable cubin's figures "
                      "stand (nvlink sets the final registers)\n")
    return linked, done.stdout + done.stderr


def file_text(path: Path, options: Sequence[str], nvcc: str | None, cwd: str | None) -> str:
    """A CUDA C++ file with the headers it includes (preprocessed by ``nvcc`` with ``options``, in
    ``cwd``), or the file alone where there is no nvcc or it cannot preprocess the file ("" where
    the file cannot be read): the text its enumerators and type aliases are read from."""
    if nvcc is not None:
        try:
            return nvcc_preprocess(path, options, cwd, nvcc)
        except (CompileError, OSError):
            pass
    try:
        return path.read_text("utf-8")
    except (OSError, UnicodeDecodeError):
        return ""
