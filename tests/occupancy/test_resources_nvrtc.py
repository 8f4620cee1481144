"""The NVRTC fallback for a .cu file (no nvcc): CUDA's headers and the file's folder found with no
flags, nvcc's implicit macros (INFINITY, INT_MAX, M_PI) defined, and what only nvcc compiles (host
code, standard headers) refused in one line that names the line, the cause and the nvcc command."""

from __future__ import annotations

import re
import shutil
import struct
import subprocess

import pytest

import occupancy
from occupancy._nvrtc_hints import IMPLICIT_HEADER

nvrtc = pytest.importorskip("cuda.bindings.nvrtc", reason="cuda-python is not installed: pip install -e '.[compile]' in gpuroof's checkout")

WRITTEN_FOR_NVRTC = """\
#include "helper.cuh"
#include <cooperative_groups.h>
#include <cuda_fp16.h>
namespace cg = cooperative_groups;
extern "C" __global__ void row_max(const __half* x, float* out, int n) {
    cg::thread_block block = cg::this_thread_block();
    constexpr float lowest = -INFINITY;
    float m = lowest;
    for (int i = block.thread_rank(); i < n && i < INT_MAX; i += block.size()) m = fmaxf(m, __half2float(x[i]));
    out[block.thread_rank()] = m * SCALE + (float)M_PI;
}
"""


def _nvrtc_version() -> str:
    _, major, minor = nvrtc.nvrtcVersion()
    return f"NVRTC {major}.{minor}"


def test_a_file_written_for_nvrtc_compiles_with_no_flags(tmp_path):
    """CUDA's headers (cooperative groups need include/cccl with CUDA 13), the file's own folder
    and nvcc's implicit INFINITY/INT_MAX/M_PI: all there without -I or -D."""
    (tmp_path / "helper.cuh").write_text("#define SCALE 0.5f\n")
    cu = tmp_path / "row_max.cu"
    cu.write_text(WRITTEN_FOR_NVRTC)
    r = occupancy.kernel_resources(cu, arch="sm_90", compiler="nvrtc")
    assert r.kernel == "row_max" and r.compiler == _nvrtc_version()
    assert r.sources["registers_per_thread"].startswith("CUDA source (row_max.cu) via NVRTC")


@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler to read glibc's <math.h>, <limits.h>, <stdlib.h>")
def test_implicit_macros_have_the_values_nvcc_sees(tmp_path):
    """nvcc's implicit cuda_runtime.h brings the host's <math.h>, <limits.h> and <stdlib.h>: each
    macro of the pre-included header equals what the host compiler prints for it."""
    names = re.findall(r"#define (\w+) ", IMPLICIT_HEADER[1])
    program = tmp_path / "macros.c"
    program.write_text("#define _GNU_SOURCE\n#include <math.h>\n#include <limits.h>\n#include <stdlib.h>\n"
                       "#include <stdio.h>\nint main(void) {\n"
                       + "".join(f'  printf("{n} %.17Lg\\n", (long double)({n}));\n' for n in names) + "}\n")
    subprocess.run(["cc", str(program), "-o", str(tmp_path / "macros")], check=True, capture_output=True)
    host = dict(line.split() for line in subprocess.run([str(tmp_path / "macros")], capture_output=True,
                                                        text=True, check=True).stdout.splitlines())
    # the same macros through NVRTC with the pre-included header, as a __device__ array's initialiser
    compiled = occupancy._compile.compile_source(
        f"__device__ double values[] = {{{', '.join(f'(double)({n})' for n in names)}}};\n", "sm_90",
        [f"-include={IMPLICIT_HEADER[0]}"], headers=dict([IMPLICIT_HEADER]))
    initialiser = re.search(r"\.b8 values\[\d+\] = \{([^}]*)\}", compiled.ptx)[1]
    data = bytes(int(b) for b in initialiser.split(","))
    got = dict(zip(names, struct.unpack(f"<{len(data) // 8}d", data)))
    assert set(got) == set(names)
    for name in names:
        want = float(host[name])
        assert got[name] == pytest.approx(want, rel=1e-15) or (want != want and got[name] != got[name]), name


FAILURES = [
    ("stdio", "#include <cstdio>\n__global__ void k(float* x) { printf(\"%f\\n\", x[0]); }\n",
     "k.cu:1", "<cstdio> is a C/C++ standard library header"),
    ("bits", "__global__ void k(float* x) { x[0] = 1; }\n#include <bits/stdc++.h>\n",
     "k.cu:2", "<bits/stdc++.h> is a C/C++ standard library header"),
    ("host code", "__global__ void k(float* x) { x[0] = INFINITY; }\n\nint main() {\n  float* x;\n"
                  "  cudaMalloc(&x, 4);\n  k<<<1, 1>>>(x);\n}\n",
     "k.cu:3", "host code (NVRTC compiles device code only)"),
    ("project header", '#include "common/util.h"\n__global__ void k(float* x) { x[0] = 1; }\n',
     "k.cu:1", 'header "common/util.h" was found neither in the file\'s folder'),
]


@pytest.mark.parametrize(("source", "where", "cause"), [f[1:] for f in FAILURES], ids=[f[0] for f in FAILURES])
def test_what_only_nvcc_compiles_is_one_line(tmp_path, source, where, cause):
    cu = tmp_path / "k.cu"
    cu.write_text(source)
    with pytest.raises(occupancy.CompileError) as info:
        occupancy.kernel_resources(cu, arch="sm_90", compiler="nvrtc", options=["-DN=4"])
    message = str(info.value)
    assert "\n" not in message and "catastrophic" not in message
    assert message.startswith(f"{where}: NVRTC cannot compile it: {cause}"), message
    assert message.endswith(f"nvcc -cubin -gencode arch=compute_90,code=sm_90 --resource-usage -DN=4 {cu}")
    assert "error" in info.value.log  # NVRTC's own messages stay in .log


def test_cli_shows_the_one_line_not_nvrtcs_first_error(tmp_path, capsys):
    from gpuroof import main

    cu = tmp_path / "k.cu"
    cu.write_text(FAILURES[0][1])
    assert main(["resources", str(cu), "--arch", "sm_90", "--compiler", "nvrtc"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("gpuroof: error: k.cu:1: NVRTC cannot compile it: <cstdio>") and "catastrophic" not in err
    assert len(err.splitlines()) == 1 and err.endswith(f"--resource-usage {cu}")


def test_nvrtc_writes_into_buffers_of_its_own(monkeypatch):
    """NVRTC's log, cubin and PTX are written into mutable buffers, never into ``bytes``: an empty
    log is one byte, and ``b" " * 1`` is CPython's cached ``b" "``, which the write turned into a
    NUL for the whole process (seen on the lent GPU: spaces sliced from an LZ4 fatbin's cubin
    came out as NULs, and nvdisasm refused its ``.note.nv.tkinfo``)."""
    from occupancy import _compile

    handed: dict[str, object] = {}
    real = _compile._nvrtc()

    class Spy:
        def __getattr__(self, name):
            return getattr(real, name)

        def nvrtcGetProgramLog(self, program, buffer):  # noqa: N802 (NVRTC's name)
            handed["log"] = buffer
            return real.nvrtcGetProgramLog(program, buffer)

        def nvrtcGetCUBIN(self, program, buffer):  # noqa: N802
            handed["cubin"] = buffer
            return real.nvrtcGetCUBIN(program, buffer)

        def nvrtcGetPTX(self, program, buffer):  # noqa: N802
            handed["ptx"] = buffer
            return real.nvrtcGetPTX(program, buffer)

    monkeypatch.setattr(_compile, "_nvrtc", lambda: Spy())
    compiled = _compile.compile_source('extern "C" __global__ void k(float* x) { x[0] = 1.0f; }', "sm_90")
    assert set(handed) == {"log", "cubin", "ptx"}
    assert all(not memoryview(buffer).readonly for buffer in handed.values()), {k: type(v) for k, v in handed.items()}
    assert compiled.cubin[:4] == b"\x7fELF" and ".entry k" in compiled.ptx and b" " == bytes([32])


@pytest.mark.parametrize(("source", "said"), [
    ("__global__ void k(float* x) { x[0] = 1;\n", 'expected a "}"'),
    ("__global__ void k(float* x) { x[0] = undefined_thing; }\n", 'identifier "undefined_thing" is undefined'),
], ids=["missing-brace", "undefined"])
def test_an_error_in_the_code_is_nvrtc_s_own_words_not_advice_to_install_nvcc(tmp_path, source, said):
    """nvcc would refuse these too: the line names the error, not a toolkit to install."""
    cu = tmp_path / "k.cu"
    cu.write_text(source)
    with pytest.raises(occupancy.CompileError) as info:
        occupancy.kernel_resources(cu, arch="sm_90", compiler="nvrtc")
    message = str(info.value)
    assert "\n" not in message and said in message and "install" not in message, message
