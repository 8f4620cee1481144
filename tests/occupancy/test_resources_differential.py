"""kernel_resources against NVIDIA's own tools, field by field, offline.

The corpus (validate/kernels/*.cu, the occupancy probes and resources.cu: spills, launch
bounds, up to 16 barriers, 48 KiB of static shared memory, clusters, a non-inlined call,
constant memory, C++ names) is compiled once per session (conftest.resource_corpus) for
sm_50, sm_61, sm_70 (CUDA 12.9 NVRTC + ptxas wheels) and sm_75 ... sm_120 (nvcc). Oracles:
what ptxas -v printed while compiling, and cuobjdump --dump-resource-usage / -elf.
"""

from __future__ import annotations

import re
import subprocess

import pytest

import occupancy
from occupancy._cubin import EIATTR, nv_info_records

# One worker builds the session's compiled corpus and framework kernels (tests/occupancy/conftest.py)
# for all the tests that read them: `make test` runs pytest-xdist with --dist loadgroup.
pytestmark = pytest.mark.xdist_group("compiled_corpus")

ARCHS = ("sm_50", "sm_61", "sm_70", "sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_120")


def ptxas_entries(log: str) -> dict[str, dict[str, int]]:
    """Per kernel: registers, barriers, smem, stack frame, spills, as ptxas -v prints them."""
    frames: dict[str, tuple[int, int, int]] = {}
    out: dict[str, dict[str, int]] = {}
    current = function = None
    for line in log.splitlines():
        if m := re.search(r"Compiling entry function '([^']+)'", line):
            current = m[1]
        elif m := re.search(r"Function properties for (\S+)", line):
            function = m[1]
        elif m := re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", line):
            frames[function] = (int(m[1]), int(m[2]), int(m[3]))
        elif (m := re.search(r"Used (\d+) registers", line)) and current is not None:
            barriers = re.search(r"used (\d+) barriers", line)
            smem = re.search(r"(\d+) bytes smem", line)
            frame = frames.get(current, (0, 0, 0))
            out[current] = {
                "registers_per_thread": int(m[1]),
                "block_barriers": int(barriers[1]) if barriers else 0,
                "static_shared_memory": int(smem[1]) if smem else 0,
                "local_memory": frame[0],
                "spill_store_bytes": frame[1],
                "spill_load_bytes": frame[2],
            }
            current = None
    return out


def ptxas_user_constant(log: str) -> int | None:
    m = re.search(r"bytes gmem, (\d+) bytes cmem\[3\]", log)
    return int(m[1]) if m else None


def cuobjdump_usage(tool: str, path) -> tuple[dict[str, int], dict[str, dict[str, int]]]:
    text = subprocess.run([tool, "--dump-resource-usage", str(path)], capture_output=True, text=True,
                          check=True).stdout
    common: dict[str, int] = {}
    functions: dict[str, dict[str, int]] = {}
    current = None
    for line in text.splitlines():
        if line.strip() == "Common:":
            current = "__common__"
        elif m := re.match(r"\s*Function (\S+):", line):
            current = m[1]
        elif current is not None and ":" in line:
            values = {k: int(v) for k, v in re.findall(r"([A-Z]+(?:\[\d+\])?):(\d+)", line)}
            if current == "__common__":
                common.update(values)
            else:
                functions[current] = values
    return common, functions


# Launch bounds and clusters each corpus kernel declares in its source.
def declared(kernel: str, arch: str) -> dict[str, object]:
    bounds = {"spill_heavy": 1024, "spill_bounded": 512}
    m = re.fullmatch(r"bounds_(\d+)(?:_min\d+)?", kernel)
    clusters = {"cluster_pair": (2, 1, 1), "cluster_quad": (2, 2, 1)}
    return {
        "max_threads_per_block": int(m[1]) if m else bounds.get(kernel),
        "cluster_dims": clusters.get(kernel),
    }


def _arch_or_skip(corpus, arch):
    if arch in corpus.skipped:
        pytest.skip(f"{arch}: {corpus.skipped[arch]}")
    binaries = corpus.by_arch(arch)
    assert binaries, f"nothing compiled for {arch}"
    return binaries


def test_corpus_spans_the_architectures(resource_corpus):
    assert resource_corpus.archs == ARCHS
    archs = sorted({b.arch for b in resource_corpus.binaries}, key=lambda a: int(a[3:]))
    if len(archs) < 6:
        pytest.skip(f"only {archs} compiled: {resource_corpus.skipped}")
    assert int(archs[0][3:]) <= 50 and int(archs[-1][3:]) >= 120, archs
    for arch in archs:
        kernels = {k for b in resource_corpus.by_arch(arch) for k in occupancy.all_kernel_resources(b.cubin)}
        assert len(kernels) >= 40, (arch, len(kernels))


@pytest.mark.parametrize("arch", ARCHS)
def test_resources_equal_ptxas_v(resource_corpus, arch):
    mismatches, compared = [], 0
    for b in _arch_or_skip(resource_corpus, arch):
        ours = occupancy.all_kernel_resources(b.cubin)
        theirs = ptxas_entries(b.ptxas_log)
        assert set(ours) == set(theirs), (b.source, sorted(set(ours) ^ set(theirs)))
        for name, r in ours.items():
            assert r.architecture == arch
            for field in ("registers_per_thread", "block_barriers", "static_shared_memory", "local_memory"):
                compared += 1
                if getattr(r, field) != theirs[name][field]:
                    mismatches.append((b.source, name, field, getattr(r, field), theirs[name][field]))
            for field, value in declared(name, arch).items():
                compared += 1
                if getattr(r, field) != value:
                    mismatches.append((b.source, name, field, getattr(r, field), value))
        user = ptxas_user_constant(b.ptxas_log)
        if user is not None:
            assert {r.constant_memory for r in ours.values()} == {user}
    assert not mismatches, mismatches
    assert compared >= 40 * 6


@pytest.mark.parametrize("arch", ARCHS)
def test_resources_equal_cuobjdump(resource_corpus, arch, tmp_path):
    tool = resource_corpus.cuobjdump
    if tool is None:
        pytest.skip("cuobjdump is not installed (pip install nvidia-cuda-cuobjdump)")
    mismatches = []
    for b in _arch_or_skip(resource_corpus, arch):
        path = tmp_path / f"{b.source}.{arch}.cubin"
        path.write_bytes(b.cubin)
        common, functions = cuobjdump_usage(tool, path)
        reserved = 1024 if b".nv.shared.reserved" in b.cubin else 0
        for name, r in occupancy.all_kernel_resources(b.cubin).items():
            f = functions[name]
            # With the reserved section (CUDA 13, sm_90+), a kernel's shared memory section and so
            # cuobjdump's SHARED count the 1 KiB the driver reserves per block, when it has one.
            shared = f["SHARED"] - reserved if f["SHARED"] else 0
            expected = {
                "registers_per_thread": f["REG"],
                "local_memory": f["STACK"] + f["LOCAL"],
                "static_shared_memory": shared,
                "constant_memory": common.get("CONSTANT[3]", 0),
            }
            for field, value in expected.items():
                if getattr(r, field) != value:
                    mismatches.append((b.source, name, field, getattr(r, field), value))
    assert not mismatches, mismatches


def test_eiattr_codes_are_cuobjdumps_names(resource_corpus, tmp_path):
    tool = resource_corpus.cuobjdump
    if tool is None:
        pytest.skip("cuobjdump is not installed (pip install nvidia-cuda-cuobjdump)")
    from elftools.elf.elffile import ELFFile

    names = {code: name for name, code in EIATTR.items()}
    seen = set()
    picked = [b for b in resource_corpus.binaries if b.source == "resources.cu"]
    for b in picked:
        path = tmp_path / f"{b.arch}.cubin"
        path.write_bytes(b.cubin)
        dump = subprocess.run([tool, "-elf", str(path)], capture_output=True, text=True, check=True).stdout
        blocks = re.split(r"\n(?=\.[a-z])", dump)
        printed = {}
        for block in blocks:
            head = block.split("\n", 1)[0].strip()
            if head.startswith(".nv.info"):
                printed[head] = re.findall(r"Attribute:\s*(\S+)", block)
        with open(path, "rb") as handle:
            elf = ELFFile(handle)
            for section in elf.iter_sections():
                if not section.name.startswith(".nv.info") or section.name not in printed:
                    continue
                ours = [attr for _, attr, _ in nv_info_records(section.data())]
                theirs = [n for n in printed[section.name]]
                # cuobjdump prints "unknown" for codes it has no name for; align on the record order
                assert len(ours) == len(theirs) or len(theirs) == 0, (b.arch, section.name)
                for code, name in zip(ours, theirs):
                    if code in names:
                        seen.add(code)
                        assert names[code] == name, (b.arch, section.name, code, name)
    assert {EIATTR["EIATTR_REGCOUNT"], EIATTR["EIATTR_NUM_BARRIERS"], EIATTR["EIATTR_MAX_THREADS"],
            EIATTR["EIATTR_FRAME_SIZE"]} <= seen


def _nvrtc_version() -> str:
    from cuda.bindings import nvrtc

    _, major, minor = nvrtc.nvrtcVersion()
    return f"{major}.{minor}"


def _ptxas() -> str | None:
    import glob
    import shutil

    return shutil.which("ptxas") or next(iter(sorted(glob.glob("/usr/local/cuda*/bin/ptxas"), reverse=True)), None)


@pytest.mark.parametrize("arch", ["sm_75", "sm_90"])
def test_nvrtc_source_equals_ptxas_and_nvcc(resource_corpus, arch, tmp_path):
    """Source through NVRTC: every field equals what the standalone ptxas -v says of NVRTC's own
    PTX; the fields that do not depend on register allocation equal nvcc's cubin. (NVRTC's and
    nvcc's front ends emit different PTX for the same source, so registers may differ.)"""
    pytest.importorskip("cuda.bindings.nvrtc", reason="cuda-python is not installed: pip install -e '.[compile]' in gpuroof's checkout")
    from occupancy._compile import compile_source, ptx_directives

    binaries = _arch_or_skip(resource_corpus, arch)
    ptxas = _ptxas()
    if ptxas is None:
        pytest.skip("ptxas is not installed")
    version = _nvrtc_version()
    ptxas_version = subprocess.run([ptxas, "--version"], capture_output=True, text=True).stdout
    if f"release {version}," not in ptxas_version:
        pytest.skip(f"NVRTC {version} and ptxas differ in version ({ptxas_version.splitlines()[-1]})")
    mismatches = []
    stable = ("static_shared_memory", "block_barriers", "max_threads_per_block", "cluster_dims", "constant_memory")
    for b in (b for b in binaries if b.source in ("suite.cu", "resources.cu")):
        source = resource_corpus.source(b.source)
        nvrtc = occupancy.all_kernel_resources(source, arch=arch, options=["-std=c++17"])
        nvcc = occupancy.all_kernel_resources(b.cubin)
        assert set(nvrtc) == set(nvcc), b.source
        compiled = compile_source(source, arch, ["-std=c++17"])
        ptx = tmp_path / f"{b.source}.ptx"
        ptx.write_text(compiled.ptx, encoding="utf-8")
        log = subprocess.run([ptxas, "-v", f"-arch={arch}", "-o", str(tmp_path / "out.cubin"), str(ptx)],
                             capture_output=True, text=True, check=True)
        theirs = ptxas_entries(log.stdout + log.stderr)
        directives = ptx_directives(compiled.ptx)
        for name, r in nvrtc.items():
            for field, value in theirs[name].items():
                if getattr(r, field) != value:
                    mismatches.append((b.source, name, field, getattr(r, field), value, "ptxas -v"))
            for field in stable:
                if getattr(r, field) != getattr(nvcc[name], field):
                    mismatches.append((b.source, name, field, getattr(r, field), getattr(nvcc[name], field), "nvcc"))
            blocks = directives[name].get("minnctapersm")
            if r.min_blocks_per_sm != (blocks[0] if blocks else None):
                mismatches.append((b.source, name, "min_blocks_per_sm", r.min_blocks_per_sm, blocks))
            bounds = re.fullmatch(r"bounds_\d+_min(\d+)", name)
            if bounds:
                assert r.min_blocks_per_sm == int(bounds[1]), name
    assert not mismatches, mismatches
