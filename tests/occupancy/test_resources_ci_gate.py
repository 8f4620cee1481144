"""The regression gate (`gpuroof resources --baseline`) as docs/your-kernel.md's CI recipe runs
it: the recipe's two commands, as written, from a project's root with CMake's compile database
in build/ (paths relative to where gpuroof runs); and a gate that compares nothing fails."""

from __future__ import annotations

import contextlib
import io
import json
import re
import shlex
from pathlib import Path

import pytest

import occupancy
from gpuroof import main
from occupancy._nvcc import find_nvcc

DOCS = Path(__file__).resolve().parents[2] / "docs" / "your-kernel.md"
NVCC = find_nvcc()

# A project's kernel and the header its build finds through the database's own -I (relative to
# the database's `directory`, as CMake writes it).
SOFTMAX = r"""
#include "tile.h"
__global__ void __launch_bounds__(256) softmax_rows(const float* x, float* y, int n) {
    __shared__ float row[TILE];
    row[threadIdx.x % TILE] = x[blockIdx.x * n + threadIdx.x];
    __syncthreads();
    float m = row[0];
    for (int i = 1; i < TILE; ++i) m = fmaxf(m, row[i]);
    y[blockIdx.x * n + threadIdx.x] = __expf(row[threadIdx.x % TILE] - m);
}
"""


def _record(kernel: str, arch: str = "sm_90", registers: int = 32) -> dict:
    return {"arch": arch, "resources": {"kernel": kernel, "registers_per_thread": registers},
            "occupancy": {"occupancy": 1.0, "threads_per_block": 256, "limiters": ["warps"]}}


@pytest.mark.parametrize(("baseline", "current", "why"), [
    ([_record("old_kernel")], [_record("new_kernel")], "no kernel names matched"),
    ([], [_record("k")], "the baseline holds no kernel"),
    ([_record("k")], [], "this build holds no kernel"),
    ([_record("k", "sm_80")], [_record("k", "sm_90")], "no architecture matched (sm_80 against sm_90)"),
], ids=["other-names", "empty-baseline", "empty-build", "other-architecture"])
def test_a_gate_that_compares_nothing_fails_and_says_why(baseline, current, why):
    result = occupancy.compare_resources(baseline, current)
    assert result.compared == 0 and result.regressed
    assert why in str(result) and "0 kernel/architecture pairs compared" in str(result)


def test_a_gate_with_one_pair_in_common_passes():
    result = occupancy.compare_resources([_record("k"), _record("gone")], [_record("k"), _record("added")])
    assert result.compared == 1 and not result.regressed


def _recipe() -> tuple[list[str], list[str]]:
    """The gate's and the refresh's gpuroof command lines, as the docs' CI recipe writes them."""
    block = re.search(r"```yaml\n(.*?)```", DOCS.read_text(), flags=re.S)[1]
    text = re.sub(r"\\\n#?\s*", " ", block)  # continuation lines, also those of the commented refresh
    commands = [line.strip().lstrip("#").strip() for line in text.splitlines()
                if line.strip().lstrip("#").strip().startswith("gpuroof resources")]
    gate, refresh = (shlex.split(c)[1:] for c in commands)
    return gate, refresh


def _gpuroof(argv: list[str]) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(argv)
    return code, out.getvalue()


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    """A CMake-built project's root, the working folder: src/, include/, build/compile_commands.json."""
    if NVCC is None:
        pytest.skip("no nvcc")
    (tmp_path / "src").mkdir()
    (tmp_path / "include").mkdir()
    (tmp_path / "build").mkdir()
    (tmp_path / "ci").mkdir()
    (tmp_path / "src" / "softmax.cu").write_text(SOFTMAX)
    (tmp_path / "include" / "tile.h").write_text("#define TILE 128\n")
    (tmp_path / "build" / "compile_commands.json").write_text(json.dumps([{
        "directory": str(tmp_path / "build"),
        "command": f"{NVCC} -I../include -O3 --generate-code=arch=compute_90,code=[compute_90,sm_90] -x cu "
                   f"-c {tmp_path / 'src' / 'softmax.cu'} -o CMakeFiles/k.dir/src/softmax.cu.o",
        "file": str(tmp_path / "src" / "softmax.cu")}]))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_the_docs_ci_recipe_runs_as_written(project):
    gate, refresh = _recipe()
    assert refresh[-2:] == [">", "ci/resources-baseline.json"]
    code, out = _gpuroof(refresh[:-2])
    assert code == 0
    (project / "ci" / "resources-baseline.json").write_text(out)
    (row,) = json.loads(out)
    assert row["resources"]["static_shared_memory"] == 128 * 4  # TILE from the database's -I../include
    code, out = _gpuroof(gate)
    assert code == 0, out
    assert out.strip() == "1 kernel/architecture pairs compared: no regression"


def test_a_baseline_of_another_file_fails_the_gate(project, capsys):
    baseline = project / "ci" / "other.json"
    baseline.write_text(json.dumps([_record("_Z5otherPf")]))
    code, out = _gpuroof(["resources", "src/softmax.cu", "--compile-commands", "build/compile_commands.json",
                          "--baseline", str(baseline)])
    assert code == 1
    assert "no kernel names matched" in out


def test_the_callers_include_folder_is_its_own(project):
    """-I typed by the caller is relative to where it runs, though nvcc runs in build/."""
    (project / "mine").mkdir()
    source = project / "src" / "alt.cu"
    source.write_text(SOFTMAX.replace('"tile.h"', '"own_tile.h"'))
    (project / "mine" / "own_tile.h").write_text("#define TILE 64\n")
    database = json.loads((project / "build" / "compile_commands.json").read_text())
    database.append({**database[0], "file": str(source), "command": database[0]["command"].replace(
        str(project / "src" / "softmax.cu"), str(source))})
    (project / "build" / "compile_commands.json").write_text(json.dumps(database))
    r = occupancy.kernel_resources("src/alt.cu", compile_commands="build/compile_commands.json", options=["-Imine"])
    assert r.static_shared_memory == 64 * 4


# A kernel template instantiated with a `static __device__` function: nvcc names the function's
# scope _INTERNAL_<path hash>_<n>_<file>_<hash>_<pid>, so each compile gives the kernel another symbol.
STATIC_OP = r"""
static __device__ float twice(float x) { return 2.0f * x; }
typedef float (*op_t)(float);
template <op_t op> __global__ void apply(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = op(x[i]);
}
template __global__ void apply<twice>(const float*, float*, int);
"""
# STATIC_OP's kernel from two compiles (nvcc 13.0, pids 12703 and 12716), and as a pid one digit
# longer would name it; a kernel of a function with external linkage has no such scope.
_INTERNAL_A = "_Z5applyIXadL_ZN49_INTERNAL_1c374c27_12_static_op_cu_e3d01f5c_127035twiceEfEEEvPKfPfi"
_INTERNAL_B = "_Z5applyIXadL_ZN50_INTERNAL_1c374c27_12_static_op_cu_e3d01f5c_1043215twiceEfEEEvPKfPfi"
_EXTERNAL = "_Z5applyIXadL_Z5twicefEEvPKfPfi"


def test_a_kernel_named_by_its_compile_is_gated_as_one_kernel():
    result = occupancy.compare_resources([_record(_INTERNAL_A, registers=32)], [_record(_INTERNAL_B, registers=40)])
    assert result.compared == 1 and result.regressed
    (change,) = result.changes
    assert (change.field, change.baseline, change.current, change.kernel) == ("registers", 32, 40, _INTERNAL_B)
    unchanged = occupancy.compare_resources([_record(_INTERNAL_A)], [_record(_INTERNAL_B)])
    assert unchanged.compared == 1 and not unchanged.changes
    other = occupancy.compare_resources([_record(_INTERNAL_A)], [_record(_EXTERNAL)])
    assert other.compared == 0  # a symbol with no internal scope is another kernel


def test_rebuilding_a_kernel_of_a_static_function_passes_the_gate(tmp_path, monkeypatch):
    if NVCC is None:
        pytest.skip("no nvcc")
    monkeypatch.chdir(tmp_path)
    Path("ops.cu").write_text(STATIC_OP)
    code, out = _gpuroof(["resources", "ops.cu", "--arch", "sm_90", "--threads", "256", "--json", "-q"])
    assert code == 0
    Path("baseline.json").write_text(out)
    assert "_INTERNAL_" in json.loads(out)[0]["resources"]["kernel"]
    code, out = _gpuroof(["resources", "ops.cu", "--arch", "sm_90", "--threads", "256", "-q",
                          "--baseline", "baseline.json"])
    assert (code, out.strip()) == (0, "1 kernel/architecture pairs compared: no regression")
