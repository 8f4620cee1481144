"""`gpuroof resources`, `block-size`, `models`, kernel files in `occupancy`, GPU and architecture files.

The CLI is thin: each answer here is compared with the library call it stands for (whose own
figures are checked against ptxas, cuobjdump, NVIDIA's header and the driver elsewhere).
"""

from __future__ import annotations

import glob
import json
import shutil
import subprocess
from pathlib import Path

import pytest

import occupancy
import roofline
from gpuroof import main
from roofline import models

ROOT = Path(__file__).resolve().parents[1]
SAXPY3 = ROOT / "docs" / "examples" / "saxpy3.cu"

# Two kernels: one with launch bounds and a tile sized by a macro, one without either.
SOURCE = r"""
#ifndef TILE
#define TILE 256
#endif
extern "C" __global__ void __launch_bounds__(256, 2) staged(const float* x, float* y, int n) {
    __shared__ float tile[TILE];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    tile[threadIdx.x % TILE] = i < n ? x[i] : 0.0f;
    __syncthreads();
    if (i < n) y[i] = tile[(threadIdx.x + 1) % TILE];
}
extern "C" __global__ void scale(float* x, float a) { x[blockIdx.x * blockDim.x + threadIdx.x] *= a; }
"""

BROKEN = 'extern "C" __global__ void k(float* x) { x[0] = undefined_name; }\n'

CLUSTER = 'extern "C" __global__ void __cluster_dims__(2, 1, 1) pairs(float* x) { x[blockIdx.x] *= 2.0f; }\n'


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """The test sources, a custom architecture (JSON) and a custom GPU (TOML)."""
    folder = tmp_path_factory.mktemp("cli")
    (folder / "two.cu").write_text(SOURCE)
    (folder / "broken.cu").write_text(BROKEN)
    (folder / "cluster.cu").write_text(CLUSTER)
    # sm_90 with 16 resident blocks per SM instead of 32: small blocks hit the block limit sooner
    lab = {**occupancy.architecture("sm_90").model_dump(), "name": "lab_sm90", "max_blocks_per_sm": 16}
    (folder / "lab-arch.json").write_text(json.dumps(lab))
    (folder / "bad-arch.json").write_text(json.dumps({**lab, "max_warps_per_sm": 63}))
    (folder / "lab-gpu.toml").write_text(
        'name = "lab-gpu"\ncompute_capability = "9.0"\nsm_count = 66\nboost_clock_hz = 1.5e9\n'
        "dram_bytes_per_second = 1.0e12\n"
    )
    return folder


def _nvcc() -> str | None:
    return shutil.which("nvcc") or next(iter(sorted(glob.glob("/usr/local/cuda*/bin/nvcc"), reverse=True)), None)


@pytest.fixture(scope="module")
def binaries(files):
    """two.cu built by nvcc: a cubin for sm_86 and a fatbin with sm_80 and sm_90 SASS."""
    nvcc = _nvcc()
    if nvcc is None:
        pytest.skip("nvcc is not installed")
    cu = files / "two.cu"
    out = {"cubin": files / "two.cubin", "fatbin": files / "two.fatbin"}
    subprocess.run([nvcc, "-cubin", "-arch=sm_86", "-o", str(out["cubin"]), str(cu)], check=True, capture_output=True)
    subprocess.run([nvcc, "-fatbin", "-gencode", "arch=compute_80,code=sm_80", "-gencode",
                    "arch=compute_90,code=sm_90", "-o", str(out["fatbin"]), str(cu)], check=True, capture_output=True)
    return out


def _rows(capsys, *argv):
    code, out, err = run(capsys, "resources", *argv, "--json")
    assert code == 0, err
    return json.loads(out)


# --- gpuroof resources -------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("archs", "want"),
    [
        (["--arch", "sm_80,sm_90"], ["sm_80", "sm_90"]),
        (["--arch", "sm_75", "--arch", "sm_120"], ["sm_75", "sm_120"]),
        (["--gpu", "H100", "--arch", "9.0"], ["sm_90"]),
        (["--gpu", "A100", "--gpu", "L4"], ["sm_80", "sm_89"]),
    ],
    ids=["comma", "repeated", "gpu-and-arch-once", "gpus"],
)
def test_resources_of_every_kernel_for_every_architecture(capsys, files, archs, want):
    rows = _rows(capsys, files / "two.cu", *archs)
    # architectures in the order given, each with every kernel (in the binary's symbol order)
    assert [row["arch"] for row in rows] == [arch for arch in want for _ in range(2)]
    assert {(row["arch"], row["resources"]["kernel"]) for row in rows} == {
        (arch, kernel) for arch in want for kernel in ("staged", "scale")
    }
    for row in rows:
        library = occupancy.all_kernel_resources(files / "two.cu", arch=row["arch"])[row["resources"]["kernel"]]
        assert row["resources"] == library.model_dump(mode="json")
        r = occupancy.KernelResources(**row["resources"])
        best = occupancy.max_potential_block_size(row["arch"], resources=r)
        assert row["best_block_size"]["block_size"] == best.block_size
        # without --threads the occupancy columns are at the best block size
        at_best = occupancy.calculate(row["arch"], threads_per_block=best.block_size, resources=r)
        assert row["occupancy"] == at_best.model_dump(mode="json")


def test_occupancy_past_the_launch_bounds_names_them_as_the_limiter(capsys, files):
    code, out, _ = run(capsys, "occupancy", "--source", files / "two.cu", "--kernel", "staged", "--arch", "sm_90",
                       "--threads", "512")
    assert code == 0  # zero blocks is an answer, said with why
    assert "limiters              launch bounds: max_threads_per_block=256 (counted as warps 0)" in out
    assert "cannot launch         threads_per_block=512 exceeds the kernel's max_threads_per_block=256" in out


def test_resources_gpu_gives_the_sm_count_of_the_best_grid(capsys, files):
    (row,) = _rows(capsys, files / "two.cu", "--gpu", "H100", "--kernel", "staged")
    assert row["best_block_size"]["sm_count"] == roofline.gpu("H100").sm_count == 132
    assert row["best_block_size"]["min_grid_size"] == 132 * row["best_block_size"]["active_blocks_per_sm"]


def test_resources_text_shows_the_limiter_and_why_a_block_cannot_launch(capsys, files):
    code, out, _ = run(capsys, "resources", files / "two.cu", "--arch", "sm_90", "--threads", "512")
    assert code == 0
    staged = next(line for line in out.splitlines() if line.startswith("staged"))
    scale = next(line for line in out.splitlines() if line.startswith("scale"))
    assert "cannot launch: threads_per_block=512 exceeds the kernel's max_threads_per_block=256" in staged
    assert scale.split()[-1] == "warps" and "at 512 threads" in out


# Two entries of hand-written PTX: `fixed` compiled for 128 threads (.reqntid, as Triton's
# num_warps fixes a block), `free` for any block size.
REQNTID_PTX = """.version 8.0
.target sm_90
.address_size 64
""" + "".join(f"""
.visible .entry {name}(.param .u64 p)
{directive}{{
    .reg .b64 %rd<3>;
    .reg .b32 %r<2>;
    ld.param.u64 %rd1, [p];
    cvta.to.global.u64 %rd2, %rd1;
    mov.u32 %r1, %tid.x;
    st.global.u32 [%rd2], %r1;
    ret;
}}
""" for name, directive in (("fixed", ".reqntid 128, 1, 1\n"), ("free", "")))


def test_threads_leave_a_kernel_of_one_block_size_at_its_own(capsys, tmp_path):
    ptx = tmp_path / "k.ptx"
    ptx.write_text(REQNTID_PTX)
    code, out, err = run(capsys, "resources", ptx, "--threads", "256")
    assert code == 0, err
    lines = out.splitlines()
    fixed = next(i for i, line in enumerate(lines) if line.startswith("fixed"))
    free = next(line for line in lines if line.startswith("free"))
    assert lines[fixed].split()[-4:-1] == ["128", "16", "100%"]  # threads, blocks per SM, occupancy
    assert "launched with 128 threads only" in lines[fixed + 1] and "--threads 256" in lines[fixed + 1]
    assert free.split()[-4:-1] == ["256", "8", "100%"]
    code, out, _ = run(capsys, "resources", ptx, "--threads", "256", "--json")
    launched = {r["resources"]["kernel"]: r["occupancy"]["launch"]["block"][0] for r in json.loads(out)}
    assert launched == {"fixed": 128, "free": 256}


@pytest.mark.parametrize(
    ("options", "field", "want"),
    [
        (["-D", "TILE=1024"], "static_shared_memory", 4096),
        ([], "static_shared_memory", 1024),
        (["--maxrregcount", "16"], "registers_per_thread", 16),
    ],
    ids=["define", "no-define", "maxrregcount"],
)
def test_compiler_options_reach_nvrtc(capsys, files, options, field, want):
    (row,) = _rows(capsys, files / "two.cu", "--arch", "sm_90", "--kernel", "staged", *options)
    if field == "registers_per_thread":
        assert row["resources"][field] <= want
    else:
        assert row["resources"][field] == want


@pytest.mark.parametrize("options", [
    ["--nvcc-options", "-DTILE=1024"],
    ["--nvcc-options=-DTILE=1024"],
    ["--nvcc-options", "-DTILE=1024 -O3"],
    ["-Xcompiler", "-Wall", "--nvcc-options", "-DTILE=1024"],
    ["-Xcompiler=-Wall", "-D", "TILE=1024"],
], ids=["dash-value", "joined", "several", "host-option-dash-value", "host-option-joined"])
def test_compiler_flag_values_may_start_with_a_dash(capsys, files, options):
    """As nvcc's own wrappers take them: `--nvcc-options -O3`, not only `--nvcc-options=-O3`."""
    (row,) = _rows(capsys, files / "two.cu", "--arch", "sm_90", "--kernel", "staged", *options)
    assert row["resources"]["static_shared_memory"] == 1024 * 4  # TILE floats


def test_a_flag_option_with_no_value_is_refused(capsys, files):
    code, _, err = run(capsys, "resources", files / "two.cu", "--arch", "sm_90", "--nvcc-options")
    assert code == 2 and "expected one argument" in err


def test_resources_of_a_cubin_take_its_own_architecture(capsys, binaries):
    rows = _rows(capsys, binaries["cubin"])
    assert {row["arch"] for row in rows} == {"sm_86"}
    assert {row["resources"]["kernel"] for row in rows} == {"staged", "scale"}


def test_resources_of_a_fatbin_pick_the_sass_the_driver_would_load(capsys, binaries):
    rows = _rows(capsys, binaries["fatbin"], "--arch", "sm_86", "--arch", "sm_90", "--kernel", "staged")
    # sm_86 runs the sm_80 SASS (same major, lower minor); occupancy is on sm_86's rules
    assert [(row["arch"], row["resources"]["architecture"]) for row in rows] == [("sm_86", "sm_80"), ("sm_90", "sm_90")]
    r = occupancy.KernelResources(**rows[0]["resources"])
    assert rows[0]["occupancy"]["active_blocks_per_sm"] == occupancy.calculate(
        "sm_86", block=rows[0]["occupancy"]["launch"]["block"], resources=r).active_blocks_per_sm


def test_resources_with_an_architecture_file(capsys, files):
    (row,) = _rows(capsys, files / "two.cu", "--arch", files / "lab-arch.json", "--kernel", "scale", "--threads", "64")
    lab = occupancy.load_architecture(files / "lab-arch.json")
    assert row["arch"] == "lab_sm90" and row["resources"]["architecture"] == "sm_90"  # compiled for its 9.0
    r = occupancy.KernelResources(**row["resources"])
    assert row["occupancy"]["active_blocks_per_sm"] == occupancy.calculate(lab, threads_per_block=64, resources=r).active_blocks_per_sm == 16
    assert occupancy.calculate("sm_90", threads_per_block=64, resources=r).active_blocks_per_sm == 32


# --- gpuroof block-size ------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("argv", "call"),
    [
        (["--arch", "sm_90", "--registers", "64"], dict(arch="sm_90", registers_per_thread=64)),
        (["--gpu", "H100", "--registers", "40", "--smem", "16384"],
         dict(arch="sm_90", registers_per_thread=40, static_shared_memory=16384, sm_count=132)),
        (["--arch", "sm_80", "--registers", "32", "--max-threads", "256", "--sm-count", "108", "--barriers", "2"],
         dict(arch="sm_80", registers_per_thread=32, max_threads_per_block=256, sm_count=108, block_barriers=2)),
        (["--arch", "sm_86", "--registers", "32", "--dynamic-smem", "40000", "--carveout", "50"],
         dict(arch="sm_86", registers_per_thread=32, dynamic_shared_memory=40000, carveout=50)),
        (["--gpu", "{files}/lab-gpu.toml", "--registers", "40"], dict(arch="sm_90", registers_per_thread=40, sm_count=66)),
    ],
    ids=["registers", "gpu", "bounds", "dynamic", "gpu-file"],
)
def test_block_size_from_loose_numbers(capsys, files, argv, call):
    code, out, err = run(capsys, "block-size", *[a.format(files=files) for a in argv], "--json")
    assert code == 0, err
    arch = call.pop("arch")
    want = occupancy.max_potential_block_size(arch, **call)
    assert json.loads(out) == {"arch": arch, **want.model_dump(mode="json")}


def test_block_size_from_a_kernel_file(capsys, files):
    code, out, _ = run(capsys, "block-size", "--source", files / "two.cu", "--kernel", "staged", "--gpu", "H200")
    r = occupancy.kernel_resources(files / "two.cu", arch="sm_90", kernel="staged")
    want = occupancy.max_potential_block_size("sm_90", resources=r, sm_count=132)
    assert code == 0 and want.block_size <= 256  # the launch bounds cap the search
    assert f"best block size {want.block_size} threads" in out and f"{want.min_grid_size} blocks fill 132 SMs" in out
    assert out.startswith("staged (sm_90)")


# --- gpuroof occupancy with a kernel file -------------------------------------------------------

def test_occupancy_of_a_kernel_file_equals_the_library(capsys, files):
    code, out, _ = run(capsys, "occupancy", "--source", files / "two.cu", "--kernel", "staged", "--arch", "sm_80",
                       "--threads", "256", "--json")
    r = occupancy.kernel_resources(files / "two.cu", arch="sm_80", kernel="staged")
    data = json.loads(out)
    assert code == 0 and data["resources"] == r.model_dump(mode="json")
    assert data["result"] == json.loads(occupancy.calculate("sm_80", threads_per_block=256, resources=r).model_dump_json())
    assert data["cliffs"] == json.loads(occupancy.cliffs("sm_80", threads_per_block=256, resources=r).model_dump_json())


def test_occupancy_gpu_chooses_the_architecture(capsys, files):
    code, out, _ = run(capsys, "occupancy", "--cubin", files / "two.cu", "--kernel", "scale", "--gpu", "A100",
                       "--threads", "128")
    assert code == 0 and out.startswith("scale (sm_80)") and "\nsm_80: 128 threads" in out
    assert "cluster_size" not in out  # the A100 has no GPC layout and no clusters: no cluster axis


def test_occupancy_of_a_kernel_with_cluster_dims_counts_its_clusters(capsys, files):
    code, out, err = run(capsys, "occupancy", "--source", files / "cluster.cu", "--gpu", "H200", "--threads", "128",
                         "--json")
    assert code == 0, err
    r = occupancy.kernel_resources(files / "cluster.cu", arch="sm_90")
    want = occupancy.max_active_clusters(roofline.gpc_layout("H200"), cluster_size=(2, 1, 1), threads_per_block=128, resources=r)
    data = json.loads(out)
    assert r.cluster_dims == (2, 1, 1) and data["clusters"]["active_clusters"] == want.active_clusters
    assert data["cliffs"]["cluster_size"]["value"] == 2


def test_occupancy_with_an_architecture_file(capsys, files):
    base = ["occupancy", "--threads", "64", "--registers", "16", "--json"]
    code, out, _ = run(capsys, *base, "--arch", files / "lab-arch.json")
    assert code == 0 and json.loads(out)["result"]["active_blocks_per_sm"] == 16
    code, out, _ = run(capsys, *base, "--arch", "sm_90")
    assert json.loads(out)["result"]["active_blocks_per_sm"] == 32


# --- gpuroof models ----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def catalog():
    """`models.catalog()` once for the tests below (it builds every model's example: ~2 s of CPU);
    while they run, `describe` (frozen, one per name) hands `gpuroof models` the same
    descriptions instead of building every example again."""
    import functools

    from roofline.models import _catalog

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_catalog, "describe", functools.cache(_catalog.describe))
        patch.setattr(models, "describe", _catalog.describe)
        yield models.catalog()


def test_models_lists_every_model_with_its_formula(capsys, catalog):
    code, out, _ = run(capsys, "models")
    assert code == 0
    for info in catalog:
        assert f"{info.name}  " in out or f"{info.name} " in out
        assert info.formula in out
    code, out, _ = run(capsys, "models", "--json")
    assert [m["name"] for m in json.loads(out)] == list(models.names())


def test_models_describes_one_and_its_example_runs(capsys):
    code, out, _ = run(capsys, "models", "transpose")
    info = models.describe("transpose")
    assert code == 0 and all(formula in out for formula in info.variants.values())
    assert "one of copy_row" in out and "rows       int              required" in out
    example = out.split("example: gpuroof ")[1].split()
    code, out, err = run(capsys, *example, "--json")
    assert code == 0, err
    assert json.loads(out)["kernel"] == "transpose"


def test_model_catalog_covers_every_model(catalog):
    for info in catalog:
        built = models.get(info.name, **info.example)
        assert built.formula == info.formula and info.summary
        required = {p.name for p in info.parameters if p.required}
        assert required <= set(info.example)
        assert all(p.description for p in info.parameters), info.name


# --- errors: one line, exit 2 ---------------------------------------------------------------------

@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["resources", "{files}/two.cu"], "--arch is required to compile CUDA source, e.g. --arch sm_90"),
        (["resources", "{files}/missing.cu", "--arch", "sm_90"], "no such file"),
        (["resources", "{files}/two.cu", "--arch", "sm_90", "--kernel", "nope"], "kernel='nope' not found"),
        (["resources", "{files}/two.cu", "--arch", "sm_99"], "arch='sm_99' is not a known architecture"),
        (["resources", "{files}/two.cu", "--arch", "H100"], "names a GPU (H100-SXM), not an architecture"),
        (["resources", "{files}/broken.cu", "--arch", "sm_90"], "undefined_name"),
        (["resources", "{files}/two.cu", "--arch", "{files}/bad-arch.json"], "bad-arch.json"),
        (["resources", "{files}/two.cu", "--arch", "{files}/missing.json"], "missing.json"),
        (["resources", "{files}/two.cu", "--gpu", "H999"], "unknown GPU 'H999'"),
        (["resources", "{files}/two.cu", "--arch", "sm_90", "--threads", "0"], "threads_per_block=0 is below the minimum"),
        (["block-size", "--arch", "sm_90"], "give --registers N, or the kernel's file"),
        (["block-size", "--registers", "32"], "give --arch"),
        (["block-size", "--arch", "sm_90", "--registers", "300"], "registers_per_thread=300"),
        (["block-size", "--gpu", "{files}/missing.toml", "--registers", "32"], "missing.toml"),
        (["occupancy", "--arch", "sm_90", "--threads", "256", "--kernel", "staged"], "--kernel applies to a kernel file"),
        (["occupancy", "--arch", "sm_90", "--threads", "256", "-D", "X=1", "--registers", "8"], "-D applies to a kernel file"),
        (["occupancy", "--arch", "sm_90", "--threads", "256", "--source", "{files}/two.cu"], "choose one with kernel= (--kernel on the command line)"),
        (["occupancy", "--arch", "sm_90", "--threads", "256", "--source", "{files}/two.cu", "--kernel", "staged",
          "--registers", "200"], "registers_per_thread=200 disagrees with resources.registers_per_thread"),
        (["occupancy", "--arch", "sm_90", "--threads", "256"], "give --registers N"),
        (["occupancy", "--threads", "256", "--registers", "32"], "give --arch"),
        (["models", "nope"], "invalid choice: 'nope'"),
        (["occupancy", "--arch", "sm_90", "--threads", "128", "--source", "{files}/cluster.cu"],
         "kernel 'pairs' is compiled for clusters of (2, 1, 1) blocks (__cluster_dims__): give --gpu"),
    ],
    ids=["source-no-arch", "missing-file", "unknown-kernel", "unknown-arch", "gpu-as-arch", "compile-error",
         "bad-arch-file", "missing-arch-file", "unknown-gpu", "threads-zero", "block-no-registers", "block-no-arch",
         "block-registers", "missing-gpu-file", "kernel-no-file", "define-no-file", "ambiguous", "disagree",
         "occ-no-registers", "occ-no-arch", "unknown-model", "cluster-no-gpu"],
)
def test_bad_input_is_one_line_and_exit_2(capsys, files, argv, message):
    code, out, err = run(capsys, *[a.format(files=files) for a in argv])
    assert code == 2, out
    assert message in err and len(err.strip().splitlines()) == 1, err


def test_a_file_of_kernel_templates_alone_says_to_instantiate_them(capsys, tmp_path):
    cu = tmp_path / "templates.cu"
    cu.write_text("template <int N> __global__ void k(float* x) { x[threadIdx.x] = N; }\n")
    code, out, _ = run(capsys, "resources", cu, "--arch", "sm_90")
    assert code == 0 and "holds no kernel" in out and "compile only where instantiated" in out
    assert "template __global__ void k<256>(...)" in out
