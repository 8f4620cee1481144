"""NVRTC, the fallback when no nvcc is found: CUDA's headers on its include path, what nvcc
includes implicitly, and its failures on what only nvcc compiles (host code, the C and C++
standard libraries) said in one line."""

from __future__ import annotations

import functools
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path

from ._nvcc import nvcc_command

__all__ = ["IMPLICIT_HEADER", "nvrtc_failure", "nvrtc_include_options", "nvrtc_options"]


def _pathfinder_includes() -> tuple[str, ...] | None:
    """CUDA's runtime headers and CCCL's as cuda-pathfinder finds them (NVIDIA's wheels first,
    then conda, ``$CUDA_PATH``/``$CUDA_HOME`` and the system toolkit); None without it."""
    try:
        from cuda.pathfinder import find_nvidia_header_directory
    except ImportError:
        return None
    found = []
    for library in ("cudart", "cccl"):
        try:
            folder = find_nvidia_header_directory(library)
        except Exception:  # noqa: BLE001 - an older pathfinder that lacks a library: the fallback searches
            return None
        if folder:
            found.append(folder)
    return tuple(dict.fromkeys(found)) if found else None


@functools.cache
def _toolkit_includes() -> tuple[str, ...]:
    """CUDA's include folder and its ``cccl`` folder, which CUDA 13's cooperative groups need:
    through cuda-pathfinder, else the first of ``$CUDA_HOME``, ``$CUDA_PATH``, /usr/local/cuda and
    NVIDIA's runtime wheel."""
    found = _pathfinder_includes()
    if found:
        return found
    roots = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"]
    roots += [os.path.join(entry, sub) for entry in sys.path for sub in ("nvidia/cu13", "nvidia/cuda_runtime")]
    for root in filter(None, roots):
        include = Path(root) / "include"
        if (include / "cuda_runtime.h").is_file() or (include / "cooperative_groups.h").is_file():
            cccl = include / "cccl"
            return (os.fspath(include), *([os.fspath(cccl)] if cccl.is_dir() else []))
    return ()


def nvrtc_include_options() -> list[str]:
    """``-I`` options for CUDA's own headers (none when no toolkit or runtime wheel is found)."""
    return [f"-I{folder}" for folder in _toolkit_includes()]


# nvcc includes cuda_runtime.h in every .cu file, and with it the host's <math.h>, <limits.h> and
# <stdlib.h>: kernels use INFINITY, INT_MAX or M_PI with no #include. NVRTC has none of these, so
# this header, pre-included (-include), gives their values; each is guarded, and libcu++'s own
# definitions (cuda/std/cmath) override them with a warning. NVRTC has no __builtin_huge_valf:
# the constants are bit casts, constant expressions as glibc's are.
_IMPLICIT_MACROS = (
    ("INFINITY", "__builtin_bit_cast(float, 0x7f800000u)"), ("NAN", "__builtin_bit_cast(float, 0x7fc00000u)"),
    ("HUGE_VALF", "__builtin_bit_cast(float, 0x7f800000u)"),
    ("HUGE_VAL", "__builtin_bit_cast(double, 0x7ff0000000000000ull)"),
    ("M_E", "2.7182818284590452354"), ("M_LOG2E", "1.4426950408889634074"), ("M_LOG10E", "0.43429448190325182765"),
    ("M_LN2", "0.69314718055994530942"), ("M_LN10", "2.30258509299404568402"), ("M_PI", "3.14159265358979323846"),
    ("M_PI_2", "1.57079632679489661923"), ("M_PI_4", "0.78539816339744830962"), ("M_1_PI", "0.31830988618379067154"),
    ("M_2_PI", "0.63661977236758134308"), ("M_2_SQRTPI", "1.12837916709551257390"),
    ("M_SQRT2", "1.41421356237309504880"), ("M_SQRT1_2", "0.70710678118654752440"),
    ("CHAR_BIT", "8"), ("SCHAR_MIN", "(-128)"), ("SCHAR_MAX", "127"), ("UCHAR_MAX", "255"), ("CHAR_MIN", "(-128)"),
    ("CHAR_MAX", "127"), ("SHRT_MIN", "(-32768)"), ("SHRT_MAX", "32767"), ("USHRT_MAX", "65535"),
    ("INT_MIN", "(-2147483647 - 1)"), ("INT_MAX", "2147483647"), ("UINT_MAX", "4294967295U"),
    ("LONG_MIN", "(-9223372036854775807L - 1)"), ("LONG_MAX", "9223372036854775807L"),
    ("ULONG_MAX", "18446744073709551615UL"), ("LLONG_MIN", "(-9223372036854775807LL - 1)"),
    ("LLONG_MAX", "9223372036854775807LL"), ("ULLONG_MAX", "18446744073709551615ULL"),
    ("RAND_MAX", "2147483647"), ("EXIT_SUCCESS", "0"), ("EXIT_FAILURE", "1"),
)
IMPLICIT_HEADER = ("gpuroof_nvcc_implicit.h", "// What nvcc's implicit cuda_runtime.h brings into every .cu file\n"
                   + "".join(f"#ifndef {name}\n#define {name} {value}\n#endif\n" for name, value in _IMPLICIT_MACROS))

# The C and C++ standard library headers: nvcc finds them through the host compiler; NVRTC has
# none (libcu++ has device versions as <cuda/std/...>).
_STANDARD = frozenset("""
assert complex ctype errno fenv float inttypes iso646 limits locale math setjmp signal stdalign stdarg
stdbool stddef stdint stdio stdlib string tgmath time uchar wchar wctype unistd malloc
algorithm any array atomic barrier bit bitset cassert cctype cerrno cfenv cfloat charconv chrono cinttypes
climits clocale cmath codecvt compare complex concepts condition_variable coroutine csetjmp csignal cstdarg
cstddef cstdint cstdio cstdlib cstring ctime cuchar cwchar cwctype deque exception execution expected filesystem
format forward_list fstream functional future initializer_list iomanip ios iosfwd iostream istream iterator
latch limits list locale map memory memory_resource mutex new numbers numeric optional ostream print queue
random ranges ratio regex scoped_allocator semaphore set shared_mutex source_location span sstream stack
stdexcept stop_token streambuf string string_view syncstream system_error thread tuple type_traits typeindex
typeinfo unordered_map unordered_set utility valarray variant vector version
""".split())


def _is_standard(header: str) -> bool:
    stem = header.removesuffix(".h") if header.endswith(".h") and "/" not in header else header
    return stem in _STANDARD or header.startswith(("bits/", "sys/"))


def _cause(message: str) -> str | None:
    """What an NVRTC error means for the user, for the errors only nvcc gets past; else None."""
    if re.search(r"host functions are not allowed|is not allowed in JIT mode", message):
        return "host code (NVRTC compiles device code only)"
    if m := re.search(r'(?:cannot|could not) open source file "([^"]+)"', message):
        if _is_standard(m[1]):
            return f"<{m[1]}> is a C/C++ standard library header, which NVRTC does not have"
        return (f'header "{m[1]}" was found neither in the file\'s folder nor in CUDA\'s include folders '
                "(give its folder with -I)")
    if m := re.search(r"identifier \"(std::\w+|printf|fprintf|assert|malloc|free|exit)\" is undefined", message):
        return f"{m[1]} needs a standard header, which NVRTC does not have"
    return None


def nvrtc_failure(log: str, name: str, arch: object, options: Sequence[str]) -> str:
    """One line for an NVRTC error log: the decisive error's file and line (host code or a
    standard header where there is one: its cause and the nvcc command that compiles the file;
    else the first error, in NVRTC's words, which nvcc would refuse too).

    Examples
    --------
    >>> print(nvrtc_failure('k.cu(3): catastrophic error: cannot open source file "stdio.h"', "k.cu", "sm_90", []))
    k.cu:3: NVRTC cannot compile it: <stdio.h> is a C/C++ standard library header, which NVRTC does not have; nvcc compiles it (install the CUDA toolkit or nvidia-cuda-nvcc): nvcc -cubin -gencode arch=compute_90,code=sm_90 --resource-usage k.cu
    """
    errors = [m for line in log.splitlines() if (m := re.match(r"(.+?)\((\d+)\): (?:catastrophic )?error: (.*)", line))]
    where, cause = name, None
    for m in errors:
        if (found := _cause(m[3])) is not None:
            where, cause = f"{Path(m[1]).name}:{m[2]}", found
            break
    if cause is None:
        # an error in the code itself, which nvcc would refuse too: NVRTC's own words, not advice
        # to install nvcc ("At end of source: error: expected a }" has no line of its own)
        if errors:
            where, first = f"{Path(errors[0][1]).name}:{errors[0][2]}", errors[0][3].strip()
        else:
            first = next((line.split("error:", 1)[1].strip() for line in log.splitlines() if "error:" in line),
                         "an error (the log holds no error line)")
        return f"{where}: NVRTC cannot compile it: {first}"
    command = " ".join(nvcc_command(name, arch, options))
    return (f"{where}: NVRTC cannot compile it: {cause}; nvcc compiles it "
            f"(install the CUDA toolkit or nvidia-cuda-nvcc): {command}")


def nvrtc_options(options: Sequence[str]) -> list[str]:
    """nvcc's options less those NVRTC does not take (-O, host-compiler options)."""
    out: list[str] = []
    skip = False
    for option in options:
        if skip:
            skip = False
        elif option in ("-Xcompiler", "--compiler-options", "-ccbin"):
            skip = True
        elif not re.match(r"-O\d?$|-Xcompiler=|--compiler-options=|-forward-unknown|--expt-", option):
            out.append(option)
    return out
