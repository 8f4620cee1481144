"""What public projects' builds do that a single kernel file does not: relocatable device code
(``-rdc=true``, CMake's CUDA_SEPARABLE_COMPILATION, as every cuda-samples build uses), whose
figures are those of the device-linked image as nvlink prints them for the project's own
``nvcc -dlink`` (run here, not hard-coded); translation units with host code only."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

import occupancy
from occupancy._nvcc import find_nvcc, relocatable

SOURCE = Path(__file__).with_name("rdc_kernels.cu")
NVCC = find_nvcc()
# One architecture by default (the suite's CPU budget); all four under GPUROOF_TEST_FULL=1.
ARCHS = ("sm_80", "sm_90", "sm_100", "sm_120") if os.environ.get("GPUROOF_TEST_FULL") else ("sm_90",)

pytestmark = pytest.mark.skipif(NVCC is None, reason="no nvcc (PATH, CUDA_HOME, CUDA_PATH, nvidia-cuda-nvcc)")


def linked_printout(tmp: Path, arch: str) -> dict[str, dict[str, int]]:
    """kernel -> registers, barriers and stack as ``nvcc -dlink -Xnvlink -v`` prints them after
    ``nvcc -c -rdc=true``, the two steps of a separable-compilation build, and the static shared
    memory as ptxas prints it (nvlink's figure adds the 1 KiB reserved per block on sm_90 and
    later, which the kernel does not declare)."""
    obj = tmp / f"{arch}.o"
    compiled = subprocess.run([NVCC, "-c", "-rdc=true", f"-arch={arch}", "-Xptxas=-v", str(SOURCE), "-o", str(obj)],
                              check=True, capture_output=True, text=True)
    smem = {}
    for m in re.finditer(r"Compiling entry function '([^']+)'.*?\n(?:.*\n){0,2}?.*Used \d+ registers(.*)",
                         compiled.stdout + compiled.stderr):
        found = re.search(r"(\d+) bytes smem", m[2])
        smem[m[1]] = int(found[1]) if found else 0
    done = subprocess.run([NVCC, "-dlink", f"-arch={arch}", "-Xnvlink", "-v", str(obj), "-o", str(tmp / "d.o")],
                          check=True, capture_output=True, text=True)
    pattern = r"Function properties for '([^']+)':\s*\n.*?used (\d+) registers, used (\d+) barriers, (\d+) stack"
    return {m[1]: {"registers_per_thread": int(m[2]), "block_barriers": int(m[3]), "local_memory": int(m[4]),
                   "static_shared_memory": smem[m[1]]} for m in re.finditer(pattern, done.stdout + done.stderr)}


@pytest.mark.parametrize("arch", ARCHS)
def test_relocatable_code_has_the_device_linked_figures(tmp_path, arch):
    want = linked_printout(tmp_path, arch)
    found = occupancy.all_kernel_resources(SOURCE, arch=arch, options=["-rdc=true"])
    assert sorted(found) == sorted(want)
    for name, r in found.items():
        assert {field: getattr(r, field) for field in want[name]} == want[name], name
        # ptxas -v still gives each kernel's spills (nvcc --resource-usage prints none with -rdc)
        assert (r.spill_store_bytes, r.spill_load_bytes) == (0, 0), name
        assert "device-linked" in r.compiler and "device-linked" in r.sources["registers_per_thread"]


def test_compile_commands_with_separable_compilation(tmp_path):
    """A CMake entry with -rdc=true (CUDA_SEPARABLE_COMPILATION) is device-linked too: the call
    through the ABI costs registers the relocatable cubin does not show."""
    database = tmp_path / "compile_commands.json"
    database.write_text(json.dumps([{
        "directory": str(tmp_path), "file": str(SOURCE),
        "command": f"/usr/local/cuda/bin/nvcc -forward-unknown-to-host-compiler -std=c++17 "
                   f"--generate-code=arch=compute_90,code=[compute_90,sm_90] -x cu -rdc=true -c {SOURCE} "
                   f"-o CMakeFiles/k.dir/rdc_kernels.cu.o"}]))
    linked = occupancy.kernel_resources(SOURCE, kernel="calls_once", compile_commands=database)
    whole = occupancy.kernel_resources(SOURCE, kernel="calls_once", arch="sm_90")
    assert linked.registers_per_thread == linked_printout(tmp_path, "sm_90")["_Z10calls_oncePKfPfi"][
        "registers_per_thread"]
    assert linked.registers_per_thread != whole.registers_per_thread  # the case is real


@pytest.mark.parametrize(("options", "want"), [
    (["-rdc=true"], True), (["-rdc", "true"], True), (["--relocatable-device-code=true"], True),
    (["-dc"], True), (["--device-c"], True), (["-rdc=true", "-rdc=false"], False), (["-rdc=false"], False),
    (["-O3", "-lineinfo"], False), (["-rdc"], False),
])
def test_relocatable_options(options, want):
    assert relocatable(options) is want


@pytest.mark.parametrize(("json_out", "want"), [(True, "[]"), (False, "holds no kernel")])
def test_a_host_only_file_holds_no_kernel_and_is_no_error(capsys, tmp_path, json_out, want):
    """Like `nvcc --resource-usage`, which prints nothing for it: exit 0 (a gate over every
    file of a project must not fail on its host-only ones)."""
    from gpuroof import main

    host = tmp_path / "device_query.cu"
    host.write_text("#include <cstdio>\nint main() { int n = 0; cudaGetDeviceCount(&n); std::printf(\"%d\\n\", n); }\n")
    code = main(["resources", str(host), "--arch", "sm_90", *(["--json"] if json_out else [])])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert want in out
