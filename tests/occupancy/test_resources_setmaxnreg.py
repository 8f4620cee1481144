"""A warp-specialised kernel that changes its register count with setmaxnreg: each warp group's
count beside the launch's, against what cuobjdump -sass and nvcc --resource-usage show for the
same file (run here, not hard-coded)."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

import occupancy
from occupancy._compile import ptx_setmaxnreg
from occupancy._nvcc import find_nvcc

SOURCE = Path(__file__).resolve().parents[2] / "docs" / "examples" / "warp_specialised.cu"
# setmaxnreg needs an architecture-specific target; the default run samples two of the three
# (GPUROOF_TEST_FULL=1 compiles all).
ARCHS = ("sm_90a", "sm_100a", "sm_120a") if os.environ.get("GPUROOF_TEST_FULL") == "1" else ("sm_90a", "sm_120a")
NVCC = find_nvcc()

pytestmark = pytest.mark.skipif(NVCC is None, reason="no nvcc (PATH, CUDA_HOME, CUDA_PATH, nvidia-cuda-nvcc)")


@pytest.fixture(scope="module")
def oracle(tmp_path_factory) -> dict[str, tuple[int, tuple[int, ...]]]:
    """sm_XYa -> (registers nvcc --resource-usage prints, the USETMAXREG counts cuobjdump -sass lists)."""
    from tests.occupancy.conftest import cuobjdump_path

    cuobjdump = cuobjdump_path()
    if cuobjdump is None:
        pytest.skip("no cuobjdump (pip install nvidia-cuda-cuobjdump)")
    fatbin = tmp_path_factory.mktemp("setmaxnreg") / "ws.fatbin"
    gencode = [f"-gencode=arch=compute_{a[3:]},code={a}" for a in (*ARCHS, "sm_90")]
    done = subprocess.run([NVCC, "-fatbin", "--resource-usage", *gencode, str(SOURCE), "-o", str(fatbin)],
                          capture_output=True, text=True, check=True)
    registers = dict(re.findall(r"for '(sm_\w+)'\s*\n(?:.*\n)*?.*Used (\d+) registers", done.stdout + done.stderr))
    listing = subprocess.run([cuobjdump, "-sass", str(fatbin)], capture_output=True, text=True, check=True).stdout
    out = {}
    for arch, body in re.findall(r"arch = (sm_\w+)\n(.*?)(?=arch = |\Z)", listing, re.S):
        counts = tuple(sorted({int(n, 16) for n in re.findall(r"USETMAXREG\.\S+ (?:UP\d+, )?(0x[0-9a-f]+)", body)}))
        out[arch] = (int(registers[arch]), counts)
    return out


@pytest.fixture(scope="module")
def found() -> dict[str, occupancy.KernelResources]:
    by_arch = occupancy.kernel_resources_by_architecture(SOURCE, [*ARCHS, "sm_90"], kernel="warp_specialised")
    return {arch: next(iter(k.values())) for arch, k in by_arch.items()}


@pytest.mark.parametrize("arch", ARCHS)
def test_warp_group_counts_beside_the_launch_count(found, oracle, arch):
    registers, counts = oracle[arch]
    r = found[arch]
    assert len(counts) == 2 and counts[0] < registers < counts[1]  # a producer's .dec, a consumer's .inc
    assert (r.registers_per_thread, r.warp_group_registers) == (registers, counts)
    assert r.sources["warp_group_registers"].endswith("USETMAXREG")


def test_occupancy_uses_the_launch_count(found):
    """The driver allocates registers_per_thread at launch: the warp groups' counts do not enter."""
    r = found["sm_90a"]
    plain = r.model_copy(update={"warp_group_registers": None})
    assert occupancy.calculate("sm_90", threads_per_block=384, resources=r).model_dump() == \
        occupancy.calculate("sm_90", threads_per_block=384, resources=plain).model_dump()


def test_without_an_arch_specific_target_the_kernel_keeps_one_count(found, oracle):
    assert found["sm_90"].warp_group_registers is None and oracle["sm_90"][1] == ()
    assert found["sm_90"].registers_per_thread == oracle["sm_90"][0]


def test_ptx_route_reads_the_same_counts(tmp_path, oracle):
    """From PTX: setmaxnreg's operands, and the SASS that ptxas makes of it."""
    ptx = tmp_path / "ws.ptx"
    subprocess.run([NVCC, "-ptx", "-arch=sm_90a", str(SOURCE), "-o", str(ptx)], check=True)
    assert list(ptx_setmaxnreg(ptx.read_text()).values()) == [oracle["sm_90a"][1]]
    r = occupancy.kernel_resources(ptx, arch="sm_90a")
    assert (r.registers_per_thread, r.warp_group_registers) == oracle["sm_90a"]


def test_cli_says_which_count_is_which(capsys, oracle):
    from gpuroof import main

    assert main(["resources", str(SOURCE), "--arch", "sm_90a", "--threads", "384"]) == 0
    out = capsys.readouterr().out
    low, high = oracle["sm_90a"][1]
    assert f"warp groups run with {low} (dec) and {high} (inc) registers per thread; " \
           f"regs ({oracle['sm_90a'][0]}) is the launch's count, the one occupancy uses" in out
    assert re.search(rf"warp_specialised\(float const\*, float\*, int\)\s+sm_90a\s+{oracle['sm_90a'][0]}\s", out)
