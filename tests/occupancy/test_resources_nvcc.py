"""Resources of an ordinary project file (host code, standard and CUDA headers, cooperative
groups, templates, launch bounds, big static shared memory, spills) compiled by nvcc, against
what ``nvcc --resource-usage`` itself prints for the same file (run here, not hard-coded)."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

import occupancy
from occupancy._nvcc import find_nvcc, nvcc_version
from occupancy.common import install_extra

DATA = Path(__file__).resolve().parents[2] / "docs" / "examples"
SOURCE = DATA / "project_kernels.cu"  # shown in docs/your-kernel.md
# The default suite compares two architectures (sm_90, which the other tests here read, and sm_100,
# which the default sample of the compiled corpus leaves out; sm_80 and sm_120 are checked there and
# by docs/your-kernel.md's command); GPUROOF_TEST_FULL=1 (make test-full) compares all four.
ARCHS = ("sm_80", "sm_90", "sm_100", "sm_120")
COMPARED = ARCHS if os.environ.get("GPUROOF_TEST_FULL") == "1" else ("sm_90", "sm_100")
NVCC = find_nvcc()

pytestmark = pytest.mark.skipif(NVCC is None, reason="no nvcc (PATH, CUDA_HOME, CUDA_PATH, nvidia-cuda-nvcc)")


def nvcc_printout(path: Path, archs: tuple[str, ...], nvcc: str | None = None) -> dict[tuple[str, str], dict[str, int]]:
    """(kernel, sm_XY) -> registers, barriers, smem, stack frame and spills as nvcc prints them."""
    gencode = [f"-gencode=arch=compute_{a[3:]},code={a}" for a in archs]
    done = subprocess.run([nvcc or NVCC, "-c", "--resource-usage", *gencode, str(path), "-o", "/dev/null"],
                          capture_output=True, text=True, check=True)
    return printout(done.stdout + done.stderr)


def printout(log: str) -> dict[tuple[str, str], dict[str, int]]:
    out: dict[tuple[str, str], dict[str, int]] = {}
    entry = arch = function = None
    frame = (0, 0, 0)
    for line in log.splitlines():
        if m := re.search(r"Compiling entry function '([^']+)' for '(\w+)'", line):
            entry, arch, frame = m[1], m[2], (0, 0, 0)
        elif m := re.search(r"Function properties for (\S+)", line):
            function = m[1]
        elif (m := re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", line)) \
                and function == entry:
            frame = tuple(int(g) for g in m.groups())
        elif (m := re.search(r"Used (\d+) registers, used (\d+) barriers", line)) and entry:
            smem = re.search(r"(\d+) bytes smem", line)
            # a kernel that calls functions needs their frames too: the cumulative stack is what
            # the driver reserves (LOCAL_SIZE_BYTES)
            stack = re.search(r"(\d+) bytes cumulative stack size", line)
            out[entry, arch] = {"registers_per_thread": int(m[1]), "block_barriers": int(m[2]),
                                "static_shared_memory": int(smem[1]) if smem else 0,
                                "local_memory": max(frame[0], int(stack[1]) if stack else 0),
                                "spill_store_bytes": frame[1], "spill_load_bytes": frame[2]}
            entry = None
    return out


def nvcc12() -> str | None:
    """A CUDA 12.x nvcc: ``$GPUROOF_NVCC12``, else the newest /usr/local/cuda-12.*/bin/nvcc."""
    import glob
    import os

    given = os.environ.get("GPUROOF_NVCC12")
    if given:
        return given
    found = sorted(glob.glob("/usr/local/cuda-12.*/bin/nvcc"), key=lambda p: [int(x) for x in re.findall(r"\d+", p)])
    return found[-1] if found else None


# The CI's toolkit (CUDA 13), and CUDA 12.x where one is installed. NVIDIA's cu12 wheels cannot
# stand in: nvidia-cuda-nvcc-cu12 (12.0 to 12.9) ships ptxas and libnvvm but no nvcc (no cicc, no
# cudafe++); tests/occupancy/test_resources_cuda12.py checks CUDA 12.9's ptxas from the wheels.
TOOLKITS = {"ci-nvcc": NVCC, "cuda12-nvcc": nvcc12()}
NO_NVCC12 = ("no CUDA 12.x nvcc (GPUROOF_NVCC12, /usr/local/cuda-12.x): the cu12 wheels on PyPI "
             "(nvidia-cuda-nvcc-cu12 12.0-12.9) hold ptxas and libnvvm, no nvcc")


@pytest.fixture(scope="module")
def compiled_by():
    """toolkit -> (the file compiled once per architecture in parallel, nvcc's own printout)."""
    cache: dict[str, tuple[dict, dict]] = {}

    def get(toolkit: str) -> tuple[dict[str, dict[str, occupancy.KernelResources]], dict]:
        nvcc = TOOLKITS[toolkit]
        if nvcc is None:
            pytest.skip(NO_NVCC12)
        if toolkit not in cache:
            listed = subprocess.run([nvcc, "--list-gpu-arch"], capture_output=True, text=True).stdout.split()
            archs = tuple(a for a in COMPARED if f"compute_{a[3:]}" in listed)
            cache[toolkit] = (occupancy.kernel_resources_by_architecture(SOURCE, archs, compiler=nvcc),
                              nvcc_printout(SOURCE, archs, nvcc))
        return cache[toolkit]

    return get


@pytest.fixture(scope="module")
def oracle(compiled_by) -> dict[tuple[str, str], dict[str, int]]:
    return compiled_by("ci-nvcc")[1]


@pytest.fixture(scope="module")
def found(compiled_by) -> dict[str, dict[str, occupancy.KernelResources]]:
    """The file compiled once per architecture, in parallel, by the CI's nvcc."""
    return compiled_by("ci-nvcc")[0]


FIELDS = ("registers_per_thread", "static_shared_memory", "local_memory", "spill_store_bytes",
          "spill_load_bytes", "block_barriers")


@pytest.mark.parametrize("toolkit", TOOLKITS)
@pytest.mark.parametrize("arch", ARCHS)
def test_every_kernel_equals_nvcc_resource_usage(compiled_by, toolkit, arch):
    if arch not in COMPARED:
        pytest.skip(f"{arch}: sampled out of the default run (GPUROOF_TEST_FULL=1, make test-full, compares it)")
    found, oracle = compiled_by(toolkit)
    if arch not in found:
        pytest.skip(f"{TOOLKITS[toolkit]} does not target {arch} (CUDA 12.8 or later does)")
    kernels = found[arch]
    assert sorted(kernels) == sorted(k for k, a in oracle if a == arch)
    for name, r in kernels.items():
        got = {field: getattr(r, field) for field in FIELDS}
        assert got == oracle[name, arch], name
        assert r.compiler == f"nvcc {nvcc_version(TOOLKITS[toolkit])}"


def test_the_file_exercises_what_it_claims(found, oracle):
    """Spills, a stack frame, > 32 KiB of static shared memory, barriers: the cases are real."""
    r = found["sm_90"]
    assert r["_Z13spilling_loopPKfPfi"].spill_store_bytes > 0
    assert r["local_array"].local_memory == 256 and r["local_array"].spill_store_bytes == 0
    assert r["_ZN4gemm5tiledEPKfS1_Pfi"].static_shared_memory == 40960
    tiled = r["_ZN4gemm5tiledEPKfS1_Pfi"]
    assert (tiled.max_threads_per_block, tiled.min_blocks_per_sm) == (256, 2)


def test_names_are_demangled_and_kernel_takes_any_spelling(found):
    r = found["sm_90"]
    assert r["_Z12softmax_fp16ILi256EEvPK6__halfPS0_i"].demangled == \
        "void softmax_fp16<256>(__half const*, __half*, int)"
    assert r["local_array"].demangled is None
    names = list(r)
    demangled = {n: k.demangled for n, k in r.items()}
    from occupancy._names import match_kernel

    for spelling, symbol in (("softmax_fp16<256>", "_Z12softmax_fp16ILi256EEvPK6__halfPS0_i"),
                             ("softmax_fp16 < 128 >", "_Z12softmax_fp16ILi128EEvPK6__halfPS0_i"),
                             ("gemm::tiled", "_ZN4gemm5tiledEPKfS1_Pfi"),
                             ("tiled", "_ZN4gemm5tiledEPKfS1_Pfi"),
                             ("spill", "_Z13spilling_loopPKfPfi"),
                             ("grid_sum(float const*, float*, int)", "_Z8grid_sumPKfPfi"),
                             ("_Z8grid_sumPKfPfi", "_Z8grid_sumPKfPfi")):
        assert match_kernel(spelling, names, demangled) == symbol, spelling
    with pytest.raises(occupancy.OccupancyError, match=r"ambiguous(?=.*softmax_fp16<128>)(?=.*softmax_fp16<256>)"):
        match_kernel("softmax_fp16", names, demangled)
    with pytest.raises(occupancy.OccupancyError, match="not found"):
        match_kernel("nothing", names, demangled)


def test_ptx_is_assembled_as_a_whole_program_like_ptxas_v(tmp_path):
    """The PTX route gives what `ptxas -v` gives (not `ptxas -c`, nvJitLink's relocatable code)."""
    from occupancy._nvcc import find_ptxas

    ptx = tmp_path / "k.ptx"
    subprocess.run([NVCC, "-ptx", "-arch=sm_90", str(SOURCE), "-o", str(ptx)], check=True)
    done = subprocess.run([find_ptxas(), "-v", "-arch=sm_90", str(ptx), "-o", "/dev/null"],
                          capture_output=True, text=True, check=True)
    want = printout(done.stdout + done.stderr)
    found = occupancy.all_kernel_resources(ptx, arch="sm_90")
    assert {(name, "sm_90"): {f: getattr(r, f) for f in FIELDS} for name, r in found.items()} == want
    assert {r.compiler.split()[0] for r in found.values()} == {"ptxas"}


def test_a_missing_path_is_no_such_file():
    with pytest.raises(FileNotFoundError, match="no such file"):
        occupancy.kernel_resources(str(DATA / "missing.cu"), arch="sm_90")
    with pytest.raises(FileNotFoundError, match="no such file"):
        occupancy.kernel_resources("kernels/softmax", arch="sm_90")


def test_nvrtc_on_host_code_is_one_line_naming_the_nvcc_command():
    with pytest.raises(occupancy.CompileError) as info:
        occupancy.kernel_resources(SOURCE, arch="sm_90", compiler="nvrtc")
    message = str(info.value)
    assert "\n" not in message and "project_kernels.cu:4" in message and "cassert" in message
    assert "nvcc -cubin -gencode arch=compute_90,code=sm_90 --resource-usage" in message
    assert "catastrophic" in info.value.log


def test_compile_commands_reproduce_the_files_flags(tmp_path, oracle):
    """-DTILE=16 from the compile database shrinks gemm::tiled's shared memory four times."""
    database = tmp_path / "compile_commands.json"
    database.write_text(json.dumps([{
        "directory": str(tmp_path),
        "command": f"/usr/local/cuda/bin/nvcc -forward-unknown-to-host-compiler -DTILE=16 -O3 -std=c++17 "
                   f"--generate-code=arch=compute_90,code=[compute_90,sm_90] -x cu -c {SOURCE} "
                   f"-o CMakeFiles/k.dir/project_kernels.cu.o -MD -MT x.o -MF x.o.d",
        "file": str(SOURCE)}]))
    r = occupancy.kernel_resources(SOURCE, kernel="gemm::tiled", compile_commands=database)
    assert (r.architecture, r.static_shared_memory) == ("sm_90", 40960 // 4)
    assert r.compiler.startswith("nvcc ")


def gpuroof(capsys, *argv):
    from gpuroof import main

    code = main(["resources", *(str(a) for a in argv)])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def baseline(tmp_path_factory):
    """`gpuroof resources --json` of the file for sm_90: the gate's baseline."""
    import contextlib
    import io

    from gpuroof import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["resources", str(SOURCE), "--arch", "sm_90", "--threads", "256", "--json"]) == 0
    path = tmp_path_factory.mktemp("gate") / "baseline.json"
    path.write_text(out.getvalue())
    return path


def test_cli_json_keeps_both_names_and_the_compiler(baseline):
    rows = json.loads(baseline.read_text())
    by_kernel = {row["resources"]["kernel"]: row["resources"] for row in rows}
    assert by_kernel["_Z8grid_sumPKfPfi"]["demangled"] == "grid_sum(float const*, float*, int)"
    assert {r["compiler"] for r in by_kernel.values()} == {f"nvcc {nvcc_version(NVCC)}"}


def test_gate_passes_an_unchanged_build(capsys, baseline):
    code, out, err = gpuroof(capsys, SOURCE, "--arch", "sm_90", "--threads", "256", "--baseline", baseline)
    assert code == 0, err
    assert out.strip() == "6 kernel/architecture pairs compared: no regression"


def test_gate_fails_a_planted_regression(capsys, baseline):
    """-DLIVE=64: the spilling loop keeps 64 values live instead of 48 and spills more."""
    code, out, err = gpuroof(capsys, SOURCE, "--arch", "sm_90", "--threads", "256", "--baseline", baseline,
                             "-DLIVE=64", "--tolerance", "registers=0,spills=0,occupancy=0")
    assert code == 1, err
    assert re.search(r"REGRESSION  spilling_loop\(float const\*, float\*, int\) \(sm_90\): spills \d+ -> \d+", out)
    assert out.rstrip().endswith("regression(s)")


def test_gate_refuses_bad_input(capsys, baseline, tmp_path):
    (tmp_path / "bad.json").write_text('{"not": "a list"}')
    for argv in (("--baseline", tmp_path / "bad.json"), ("--baseline", tmp_path / "missing.json"),
                 ("--baseline", baseline, "--tolerance", "nope=1"), ("--tolerance", "registers=1")):
        code, _, err = gpuroof(capsys, SOURCE, "--arch", "sm_90", *argv)
        assert code == 2 and len(err.strip().splitlines()) == 1, (argv, err)


def test_cli_kernel_by_cxx_name_and_missing_file(capsys):
    code, out, _ = gpuroof(capsys, SOURCE, "--arch", "sm_90", "--kernel", "softmax_fp16<128>")
    assert code == 0 and "softmax_fp16<128>" in out and "softmax_fp16<256>" not in out
    code, _, err = gpuroof(capsys, DATA / "missing.cu", "--arch", "sm_90")
    assert code == 2 and "no such file" in err


def test_cli_without_a_compiler_names_what_to_install(capsys, monkeypatch):
    """No nvcc and no NVRTC: one line naming the compile extra, exit 2."""
    import builtins

    monkeypatch.setattr("occupancy._source_build.find_nvcc", lambda: None)
    real_import = builtins.__import__

    def no_cuda(name, *args, **kwargs):
        if name.startswith("cuda"):
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_cuda)
    code, _, err = gpuroof(capsys, SOURCE, "--arch", "sm_90")
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert install_extra("compile") in err and "nvcc" in err


def test_lines_put_the_spills_on_the_loop_that_holds_them(found):
    """Checked by hand against the source: the spill bytes of the spilling loop's lines add up
    to ptxas's spill stores and loads, and the loops (not the prologue) hold them."""
    (k,) = occupancy.source_lines(SOURCE, arch="sm_90", kernel="spilling_loop").values()
    resources = found["sm_90"]["_Z13spilling_loopPKfPfi"]
    if not k.spills_told:
        pytest.skip(f"{k.tool} marks no spill instruction (nvdisasm 13.x and later do)")
    assert sum(r.spill_store_bytes for r in k.lines) == resources.spill_store_bytes
    assert sum(r.spill_load_bytes for r in k.lines) == resources.spill_load_bytes
    text = SOURCE.read_text().splitlines()
    heavy = max(k.lines, key=lambda r: r.spill_store_bytes + r.spill_load_bytes)
    assert "for (int" in text[heavy.line - 1]
    assert k.registers_per_thread == resources.registers_per_thread
    assert 0 < k.peak_live_registers <= k.registers_per_thread
    assert all(Path(r.file).name == SOURCE.name for r in k.lines if r.spill_stores)


def test_cli_lines_json(capsys):
    code, out, err = gpuroof(capsys, SOURCE, "--arch", "sm_90", "--kernel", "local_array", "--lines", "--json")
    assert code == 0, err
    (k,) = json.loads(out)
    assert k["kernel"] == "local_array" and any(r["local_stores"] for r in k["lines"])


CALLS = r"""
__device__ __noinline__ float table_sum(const float* x, int k) {
    float t[24];
    for (int i = 0; i < 24; ++i) t[i] = x[i * k];
    float s = 0.0f;
    for (int i = 0; i < 24; ++i) s += t[(i * k) % 24];
    return s;
}
__global__ void calls_a_function(const float* x, float* y, int k) {
    y[threadIdx.x] = table_sum(x + threadIdx.x, k);
}
"""


def test_a_kernel_that_calls_a_function_reserves_the_callees_stack(tmp_path):
    """Built with -G (nothing inlined), the kernel's own frame is 0 bytes and the function it
    calls holds its array on the stack: local memory is ptxas's cumulative stack size, what the
    driver reserves per thread (before: the kernel's own frame, 0, where the driver's JIT gave
    56 B for another project's kernels of this shape)."""
    source = tmp_path / "calls.cu"
    source.write_text(CALLS)
    done = subprocess.run([NVCC, "-c", "-G", "--resource-usage", "-arch=sm_90", str(source), "-o", "/dev/null"],
                          capture_output=True, text=True, check=True)
    log = done.stdout + done.stderr
    assert re.search(r"\n\s*0 bytes stack frame", log.split("calls_a_function", 1)[1])  # the kernel's own frame
    want = printout(log)[next(iter(printout(log)))]
    got = occupancy.kernel_resources(source, arch="sm_90", kernel="calls_a_function", options=["-G"])
    assert want["local_memory"] >= 96 and got.local_memory == want["local_memory"]
    assert "EIATTR_MIN_STACK_SIZE" in got.sources["local_memory"]
