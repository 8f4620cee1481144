"""`gpuroof predict`, `cliffs`, `roofline` and `plot` for your own kernel: loose counts, a kernel file.

Each answer is compared with the library call it stands for, built here independently.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

import occupancy
import roofline
from gpuroof import main
from roofline import models

ROOT = Path(__file__).resolve().parents[1]
SAXPY3 = ROOT / "docs" / "examples" / "saxpy3.cu"
N = 1 << 26
# saxpy3: out = a*x + y*z, 3 flops, 3 reads and 1 write of 4 bytes per element, 8 elements per thread
FLOPS, DRAM = 3 * N, 16 * N
LAUNCH = ["--grid", str(N // 2048), "--block", "256", "--elements-per-thread", "8"]
COUNTS = ["--flops", str(FLOPS), "--dram-bytes", str(DRAM)]


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def saxpy3():
    """What NVRTC gives saxpy3 for sm_90 (the H100's and H200's architecture)."""
    return occupancy.kernel_resources(SAXPY3, arch="sm_90")


def _launch(**fields):
    return occupancy.Launch(grid=N // 2048, block=256, elements_per_thread=8, **fields)


def _counts(name="kernel"):
    return roofline.Kernel(name=name, flops=FLOPS, dram_bytes=DRAM)


def test_predict_loose_counts_and_launch(capsys):
    code, out, err = run(capsys, "predict", *COUNTS, *LAUNCH, "--registers", "40", "--smem", "8192", "--json")
    assert code == 0, err
    data = json.loads(out)
    want = roofline.predict("H100-SXM", _counts(), _launch(registers_per_thread=40, static_shared_memory=8192))
    assert data["seconds"] == want.seconds and data["limiter"] == want.limiter
    assert data["active_blocks_per_sm"] == 6 == occupancy.calculate(
        "sm_90", threads_per_block=256, registers_per_thread=40, static_shared_memory=8192).active_blocks_per_sm


def test_predict_reads_registers_and_shared_memory_from_the_file(capsys, saxpy3):
    code, out, err = run(capsys, "predict", "--source", SAXPY3, "--kernel", "saxpy3", *COUNTS, *LAUNCH, "--json")
    assert code == 0, err
    data = json.loads(out)
    want = roofline.predict("H100-SXM", _counts("saxpy3"), _launch(resources=saxpy3))
    assert data["kernel"] == "saxpy3" and data["seconds"] == want.seconds
    assert data["resources"] == saxpy3.model_dump(mode="json")
    assert data["launch"]["registers_per_thread"] == saxpy3.registers_per_thread
    # the registers are known, not assumed; loads in flight come from the SASS where it was read
    in_flight = saxpy3.sass.global_loads_in_flight_per_thread if saxpy3.sass else None
    assert data["launch"]["loads_in_flight_per_thread"] == in_flight
    assert data["assumptions"][0] == (
        f"loads in flight per thread from the SASS ({in_flight} {saxpy3.sass.global_load_instruction} in flight)"
        if saxpy3.sass else "loads in flight per thread assumed = elements_per_thread (no SASS)")
    # with the SASS, the issue slots are estimated from it too (and said so)
    assert len(data["assumptions"]) == (2 if saxpy3.sass else 1)
    assert all("estimated from the SASS" in a for a in data["assumptions"][1:])


def test_predict_loose_registers_that_agree_with_the_file_are_fine(capsys, saxpy3):
    code, _, err = run(capsys, "predict", "--cubin", SAXPY3, *COUNTS, *LAUNCH,
                       "--registers", saxpy3.registers_per_thread, "--smem", saxpy3.static_shared_memory)
    assert code == 0, err


@pytest.mark.parametrize(("flag", "field", "value"), [("--registers", "registers_per_thread", 200),
                                                       ("--smem", "static_shared_memory", 4)])
def test_a_loose_resource_beside_the_file_is_a_what_if(capsys, saxpy3, flag, field, value):
    """--registers / --smem beside the kernel file: the file's code (its SASS kept) at that register
    count or static shared memory, as a cliff row moves it; the text and the JSON say so."""
    code, out, err = run(capsys, "predict", "--source", SAXPY3, *COUNTS, *LAUNCH, flag, value, "--json")
    assert code == 0, err
    data = json.loads(out)
    moved = saxpy3.model_copy(update={field: value})
    assert data["seconds"] == roofline.predict("H100-SXM", _counts("saxpy3"), _launch(resources=moved)).seconds
    assert data["resources"][field] == value and "what-if" in data["resources"]["sources"][field]
    assert data["resources"]["sass"] == (saxpy3.sass.model_dump(mode="json") if saxpy3.sass else None)
    code, out, _ = run(capsys, "predict", "--source", SAXPY3, *COUNTS, *LAUNCH, flag, value)
    own = getattr(saxpy3, field)
    assert code == 0 and f"(what-if {flag} {value}: the file's is {own})" in out


def test_predict_a_model_with_the_compiled_kernels_registers(capsys, saxpy3):
    code, out, err = run(capsys, "predict", "--model", "triad", "--param", f"n={N}", "--source", SAXPY3, "--json")
    assert code == 0, err
    model = models.triad(N)
    launch = occupancy.Launch(grid=model.launch.grid, block=model.launch.block, resources=saxpy3)
    data = json.loads(out)
    assert data["seconds"] == roofline.predict("H100-SXM", model, launch).seconds
    assert data["launch"]["max_threads_per_block"] == 256  # the kernel's launch bounds, not the model's none


def test_predict_on_a_gpu_file(capsys, tmp_path):
    path = tmp_path / "lab.toml"
    path.write_text('name = "lab-gpu"\ncompute_capability = "8.0"\nsm_count = 54\nboost_clock_hz = 1.4e9\n'
                    "dram_bytes_per_second = 0.8e12\n")
    code, out, err = run(capsys, "predict", "--gpu", path, *COUNTS, *LAUNCH, "--registers", "40", "--json")
    assert code == 0, err
    data = json.loads(out)
    want = roofline.predict(roofline.load_gpu(path), _counts(), _launch(registers_per_thread=40))
    assert data["gpu"] == "lab-gpu" and data["seconds"] == want.seconds


def test_predict_text_and_plot(capsys, tmp_path):
    plot = tmp_path / "r.png"
    code, out, _ = run(capsys, "predict", "--source", SAXPY3, *COUNTS, *LAUNCH, "--gpu", "H200", "--plot", plot)
    assert code == 0 and out.startswith(f"saxpy3 on H200: grid {N // 2048} x block 256")
    assert "resources             saxpy3 (sm_90)" in out and "roofline bound" in out
    assert plot.read_bytes().startswith(b"\x89PNG")


@pytest.mark.parametrize("counts", [
    {"atomics": 1024, "atomic_addresses": 1, "cas_contenders": 1024},
    {"barriers_per_block": 12, "load_phases_per_block": 3},
    {"branch_issue_factor": 2, "instructions": 1e6},
], ids=["cas-loop", "barrier-phases", "divergence"])
def test_predict_takes_any_other_count_as_the_library_does(capsys, counts):
    # the terms these feed (atomics, barriers, divergence) had no option: --count reaches them
    argv = [a for name, value in counts.items() for a in ("--count", f"{name}={value}")]
    code, out, err = run(capsys, "predict", "--flops", "1e6", "--dram-bytes", "4096", "--load-bytes", "4096",
                         "--grid", "4", "--block", "256", "--registers", "16", *argv, "--json")
    assert code == 0, err
    kernel = roofline.Kernel(name="kernel", flops=1e6, dram_bytes=4096, load_bytes=4096, **counts)
    launch = occupancy.Launch(grid=4, block=256, registers_per_thread=16)
    want = roofline.predict("H100-SXM", kernel, launch)
    plain = roofline.predict("H100-SXM", roofline.Kernel(name="kernel", flops=1e6, dram_bytes=4096, load_bytes=4096),
                             launch)
    assert json.loads(out)["seconds"] == want.seconds != plain.seconds


def test_predict_names_the_term_that_binds_beside_the_limiter(capsys):
    # a limiter is a kind (cache_bandwidth: L2, L1/shared or a CAS loop's serial updates): the
    # text line also names the term, as --json's binding does
    code, out, err = run(capsys, "predict", "--flops", "0", "--dram-bytes", "32", "--grid", "4", "--block", "256",
                         "--registers", "16", "--json")
    assert code == 0, err
    data = json.loads(out)
    code, out, err = run(capsys, "predict", "--flops", "0", "--dram-bytes", "32", "--grid", "4", "--block", "256",
                         "--registers", "16")
    line = next(line for line in out.splitlines() if line.strip().startswith("limiter"))
    assert line.split()[1:] == [data["limiter"], "(the", data["binding"], "term", "binds)"]
    # a memory term is said in words: "the dram term binds" read as a contradiction where DRAM moved
    # little and the loads' round trips bound
    code, out, _ = run(capsys, "predict", "--flops", "0", "--dram-bytes", "1e9", "--grid", "65536", "--block", "256",
                       "--registers", "16")
    line = next(line for line in out.splitlines() if line.strip().startswith("limiter"))
    assert code == 0 and "(the dram term binds: the DRAM bytes at the rate the blocks' loads in flight reach" in line
    assert "(a full wave's loads outstanding, Little's law)" in out


def _drawn_chart(monkeypatch):
    """The charts the command hands to `plot_roofline` (which still draws them)."""
    drawn = []
    plot = roofline.chart.plot_roofline

    def capture(chart, **options):
        drawn.append(chart)
        return plot(chart, **options)

    monkeypatch.setattr(roofline.chart, "plot_roofline", capture)
    return drawn


@pytest.mark.parametrize("command,seconds", [
    ("predict", lambda data: data["seconds"]),
    ("cliffs", lambda data: data["current"]["seconds"]),
], ids=["predict", "cliffs"])
def test_plot_shows_the_time_the_command_prints(capsys, monkeypatch, tmp_path, command, seconds):
    """The plot's time-model point is flops over the time printed, each level's bytes over it;
    the roofline bound is its own point, labelled as the bound."""
    drawn = _drawn_chart(monkeypatch)
    argv = [command, *COUNTS, *LAUNCH, "--registers", "40", "--json"]
    code, out, err = run(capsys, *argv, "--plot", tmp_path / "p.png")
    assert code == 0, err
    (chart,) = drawn
    printed = seconds(json.loads(out))
    model = [p for p in chart.points if p.origin == "model"]
    assert [p.level for p in model] == ["dram"]
    assert model[0].flops_per_second == pytest.approx(FLOPS / printed, rel=1e-12)
    (model_bandwidth,) = [b for b in chart.bandwidth_points if b.origin == "model"]
    assert model_bandwidth.bytes_per_second == pytest.approx(DRAM / printed, rel=1e-12)
    (bound,) = [p for p in chart.points if p.origin == "roofline"]
    analysis = roofline.analyze("H100-SXM", _counts())
    assert bound.flops_per_second == pytest.approx(analysis.attainable_flops_per_second)
    assert printed > analysis.time_lower_bound_seconds  # two different points, not one drawn twice
    # the text output prints the same time as the JSON
    code, text, _ = run(capsys, *argv[:-1], "--plot", tmp_path / "p.png")
    shown = f"{printed * 1e6:.2f} us"
    assert code == 0 and shown in text
    fig = roofline.chart.plot_roofline(chart)
    legend = {t.get_text() for t in fig.legends[0].get_texts()}
    assert {"roofline bound (filled, solid)", "time model (half-filled, dashed)"} <= legend
    assert not any(t.startswith("predicted") for t in legend)


def test_cliffs_of_your_kernel(capsys, saxpy3):
    code, out, err = run(capsys, "cliffs", "--source", SAXPY3, *COUNTS, *LAUNCH, "--json")
    assert code == 0, err
    data = json.loads(out)
    want = roofline.cliffs.time_cliffs("H100-SXM", _counts("saxpy3"), _launch(resources=saxpy3))
    assert data["current"]["seconds"] == want.current.seconds
    assert [(c["resource"], c["value"]) for c in data["cliffs"]] == [(c.resource, c.value) for c in want.cliffs]
    # __launch_bounds__(256) in the file: no block-size cliff beyond 256 threads
    assert max(c["value"] for c in data["cliffs"] if c["resource"] == "threads_per_block") <= 256
    code, out, _ = run(capsys, "cliffs", "--source", SAXPY3, *COUNTS, *LAUNCH)
    assert out.startswith("saxpy3 on H100-SXM: now") and "registers" in out


@pytest.mark.parametrize(
    "argv",
    [
        ["--flops", "1e9", "--dram-bytes", "4e9", "--l2-bytes", "8e9"],
        ["--flops", "1e9", "--bytes", "4e9", "--l2-bytes", "8e9"],
    ],
    ids=["dram-bytes", "bytes-alias"],
)
def test_roofline_loose_counts(capsys, argv):
    code, out, _ = run(capsys, "roofline", "--gpu", "A100", *argv, "--json")
    want = roofline.analyze("A100", roofline.Kernel(flops=1e9, dram_bytes=4e9, l2_bytes=8e9))
    assert code == 0 and json.loads(out) == want.model_dump(mode="json")


def test_roofline_of_a_kernel_file_names_it_and_shows_its_resources(capsys, saxpy3):
    code, out, _ = run(capsys, "roofline", "--source", SAXPY3, *COUNTS, "--json")
    data = json.loads(out)
    assert code == 0 and data["name"] == "saxpy3" and data["resources"] == saxpy3.model_dump(mode="json")
    code, out, _ = run(capsys, "roofline", "--source", SAXPY3, *COUNTS)
    assert out.splitlines()[1].split()[:2] == ["resources", "saxpy3"]


# C++ kernels, whose symbols are mangled: the output names them as people write them.
SCALE = r"""
template <int K> __global__ void scale(float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= K;
}
template __global__ void scale<2>(float*, int);
template __global__ void scale<3>(float*, int);
"""


def test_a_cpp_kernel_is_named_as_written_not_by_its_symbol(capsys, tmp_path):
    source = tmp_path / "scale.cu"
    source.write_text(SCALE)
    code, out, err = run(capsys, "predict", "--source", source, "--kernel", "scale<3>", *COUNTS, *LAUNCH, "--json")
    assert code == 0, err
    assert json.loads(out)["kernel"] == "scale<3>"  # --kernel's, as --name's help says
    code, out, err = run(capsys, "predict", "--source", source, "--kernel", "scale<3>", *COUNTS, *LAUNCH)
    assert code == 0, err
    assert out.startswith("scale<3> on H100-SXM")
    assert "void scale<3>(float*, int) (sm_90): " in out and "_Z" not in out
    source.write_text(SCALE.replace("template __global__ void scale<3>(float*, int);", ""))
    code, out, err = run(capsys, "roofline", "--source", source, *COUNTS, "--json")
    assert code == 0, err
    assert json.loads(out)["name"] == "void scale<2>(float*, int)"  # no --kernel: the file's one kernel


def test_plot_your_kernel(capsys, tmp_path):
    path = tmp_path / "chart.json"
    code, _, err = run(capsys, "plot", *COUNTS, "--name", "saxpy3", "-o", path)
    assert code == 0, err
    chart = roofline.chart.load_chart(path)
    assert {p.kernel for p in chart.points} == {"saxpy3"}


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["predict", "--model", "copy", "--param", "n=1024", "--flops", "1", "--dram-bytes", "1"],
         "--model copy and --flops, --dram-bytes both give the kernel's counts"),
        (["roofline", "--model", "copy", "--l2-bytes", "1"], "--model copy and --l2-bytes both"),
        (["cliffs", "--param", "n=4", *COUNTS, *LAUNCH], "--param applies to --model NAME only"),
        (["predict", "--flops", "1", *LAUNCH], "give your kernel's --dram-bytes (and --flops, default 0)"),
        (["predict", *COUNTS, "--block", "256"], "your kernel's launch needs --grid"),
        (["predict", *COUNTS], "needs --grid and --block"),
        (["predict", "--source", str(SAXPY3), "--kernel", "nope", *COUNTS, *LAUNCH], "kernel='nope' not found"),
        (["predict", *COUNTS, "--grid", "4", "--block", "2000"], "2000"),
        (["predict", *COUNTS, "--grid", "4x", "--block", "256"], "is not N"),
        (["predict", *COUNTS, *LAUNCH, "--gpu", "missing.toml"], "missing.toml"),
        (["predict", *COUNTS, *LAUNCH, "--kernel", "saxpy3"], "--kernel applies to a kernel file"),
        (["roofline", "--flops", "1", "--dram-bytes", "1", "--precision", "fp7"], "precision='fp7'"),
        (["predict", *COUNTS, *LAUNCH, "--count", "bogus=3"], "--count bogus: not a count of roofline.Kernel; one of"),
        (["predict", *COUNTS, *LAUNCH, "--count", "load_bytes=3"], "--count load_bytes: give it as --load-bytes"),
        (["predict", *COUNTS, *LAUNCH, "--count", "atomics=x"], "--count atomics='x' is not a number"),
        (["predict", *COUNTS, *LAUNCH, "--count", "atomics"], "--count 'atomics' must be NAME=VALUE"),
        (["predict", *COUNTS, *LAUNCH, "--count", "atomic_addresses=0"], "atomic_addresses=0 must be >= 1"),
        (["predict", "--model", "copy", "--count", "atomics=3"], "--model copy and --count both"),
    ],
    ids=["model-and-counts", "model-and-l2", "param-no-model", "no-dram", "no-grid", "no-launch",
         "unknown-kernel", "block-too-big", "bad-grid", "missing-gpu-file",
         "kernel-no-file", "bad-precision", "count-unknown", "count-has-option", "count-not-number",
         "count-no-value", "count-out-of-range", "count-and-model"],
)
def test_bad_input_is_one_line_and_exit_2(capsys, argv, message):
    code, out, err = run(capsys, *argv)
    assert code == 2, out
    assert message in err and len(err.strip().splitlines()) == 1, err


# A kernel we wrote, as PTX: what a --kernel-file of PTX holds.
EMPTY_PTX = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry empty()\n{\n ret;\n}\n"


@pytest.fixture
def no_compiler(monkeypatch):
    """No nvcc, no ptxas and no cuda-python (so no NVRTC and no nvJitLink)."""
    import builtins

    monkeypatch.setattr("occupancy._source_build.find_nvcc", lambda: None)
    monkeypatch.setattr("occupancy._kernel_resources.find_ptxas", lambda: None)
    real_import = builtins.__import__

    def no_cuda(name, *args, **kwargs):
        if name == "cuda" or name.startswith("cuda."):
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_cuda)


@pytest.mark.parametrize(
    "argv",
    [
        ["occupancy", "--arch", "sm_90", "--threads", "256"],
        ["block-size", "--gpu", "H100"],
        ["roofline", *COUNTS],
        ["plot", *COUNTS, "-o", "{tmp}/k.png"],
        ["predict", *COUNTS, *LAUNCH],
        ["cliffs", *COUNTS, *LAUNCH],
    ],
    ids=["occupancy", "block-size", "roofline", "plot", "predict", "cliffs"],
)
@pytest.mark.parametrize(("flag", "kind", "work", "tool", "library"), [
    ("--source", "cu", "compiling CUDA C++", "nvcc", "NVRTC"),
    ("--kernel-file", "ptx", "assembling PTX", "ptxas", "nvJitLink"),
], ids=["source-cu", "kernel-file-ptx"])
def test_a_kernel_file_without_a_compiler_is_one_line_naming_what_to_install(
        capsys, tmp_path, no_compiler, argv, flag, kind, work, tool, library):
    if kind == "cu":
        path = SAXPY3
    else:
        path = tmp_path / "empty.ptx"
        path.write_text(EMPTY_PTX)
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    code, out, err = run(capsys, *argv, flag, path)
    assert code == 2, out
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert err.startswith(f"gpuroof: error: {path.name}: {work} needs {tool} ")
    assert library in err and "pip install -e '.[compile]'" in err, err
    assert not (tmp_path / "k.png").exists()


def _doc_command_lines() -> list[tuple[str, list[str]]]:
    """Each ``$ gpuroof ...`` line of docs/your-kernel.md with the output lines shown under it."""
    text = (ROOT / "docs" / "your-kernel.md").read_text(encoding="utf-8")
    out = []
    for block in re.findall(r"```console\n(.*?)```", text, flags=re.S):
        lines = block.splitlines()
        for i, line in enumerate(lines):
            if line.startswith("$ gpuroof "):
                shown = []
                for following in lines[i + 1:]:
                    if following.startswith("$ "):
                        break
                    shown.append(following)
                out.append((line[2:], shown))
    return out


DOC_LINES = _doc_command_lines()
# Each line is also run in-process by tests/test_docs.py, which compares its whole output with the
# page. Here, the user's way (a fresh process, a fresh folder): by default only the line that
# writes a plot (its PNG is checked here alone); GPUROOF_TEST_FULL=1 (make test-full) runs every
# line so, since the others compile with nvcc twice over for nothing new in the default suite.
FULL = os.environ.get("GPUROOF_TEST_FULL") == "1"


def test_the_walkthrough_has_its_command_line():
    assert any(line.startswith("gpuroof cliffs --source docs/examples/saxpy3.cu") for line, _ in DOC_LINES)


@pytest.mark.parametrize(("line", "shown"), DOC_LINES, ids=[line.split()[1] for line, _ in DOC_LINES])
def test_the_walkthrough_command_line_runs_and_prints_what_the_doc_shows(tmp_path, line, shown):
    """Run as a user would from the repository (a `docs` link in a fresh folder keeps the plot out of it)."""
    argv = shlex.split(line)
    if not FULL and "--plot" not in argv:
        pytest.skip("run in-process by tests/test_docs.py; as a process under GPUROOF_TEST_FULL=1 (make test-full)")
    (tmp_path / "docs").symlink_to(ROOT / "docs")
    proc = subprocess.run([sys.executable, "-m", "gpuroof", *argv[1:]], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    printed = proc.stdout.splitlines()
    for expected in shown:
        if expected.strip() != "...":
            assert expected in printed, f"the doc shows {expected!r}; gpuroof printed:\n{proc.stdout}"
    if "--plot" in argv:
        assert (tmp_path / argv[argv.index("--plot") + 1]).read_bytes().startswith(b"\x89PNG")


def test_the_walkthrough_shows_the_kernel_file():
    text = (ROOT / "docs" / "your-kernel.md").read_text(encoding="utf-8")
    (block,) = re.findall(r"```cuda\n(.*?)```", text.split("## Kernel resources")[0], flags=re.S)
    source = SAXPY3.read_text(encoding="utf-8").splitlines()
    for line in block.splitlines():
        if line.strip() and line.strip() != "...":
            assert line in source, line


GRID_STRIDE = r'''
extern "C" __global__ void grid_stride_sum(const float* __restrict__ in, float* __restrict__ out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x, stride = gridDim.x * blockDim.x;
    float s = 0.f;
#pragma unroll 1
    for (; i < n; i += stride) s += in[i];
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
'''


def test_predict_takes_load_and_store_bytes_which_say_how_often_a_loop_runs(capsys, tmp_path):
    # 2**24 floats summed by 256 x 256 threads: 256 dependent loads a thread, which only the
    # load bytes tell the SASS's loop; --dram-bytes alone was one round trip a thread, 5x too fast
    path = tmp_path / "gs.cu"
    path.write_text(GRID_STRIDE)
    n, threads = 1 << 24, 256 * 256
    given = ["predict", "--gpu", "H200", "--source", path, "--flops", n, "--dram-bytes", 4 * n + 4 * threads,
             "--grid", 256, "--block", 256, "--json"]
    code, out, err = run(capsys, *given, "--load-bytes", 4 * n, "--store-bytes", 4 * threads)
    assert code == 0, err
    data = json.loads(out)
    r = occupancy.kernel_resources(path, arch="sm_90")
    want = roofline.predict("H200", roofline.Kernel(name="grid_stride_sum", flops=n, dram_bytes=4 * n + 4 * threads,
                                                    load_bytes=4 * n, store_bytes=4 * threads),
                            occupancy.Launch(grid=256, block=256, resources=r))
    assert data["seconds"] == want.seconds and data["limiter"] == want.limiter
    code, out, err = run(capsys, *given)
    bare = json.loads(out)
    if r.sass is not None:  # with the SASS the loop's 256 trips count; without it neither run knows them
        assert data["seconds"] > 3 * bare["seconds"]
        assert any("gives no load_bytes" in a for a in bare["assumptions"])
    code, _, err = run(capsys, "predict", "--model", "copy", "--load-bytes", "5")
    assert code == 2 and "--model copy and --load-bytes both" in err


def test_predict_from_source_says_what_the_sass_gave_and_refuses_without_it(capsys, tmp_path, monkeypatch):
    path = tmp_path / "gs.cu"
    path.write_text(GRID_STRIDE)
    n, threads = 1 << 24, 256 * 256
    given = ["predict", "--gpu", "H200", "--source", path, "--flops", n, "--dram-bytes", 4 * n + 4 * threads,
             "--load-bytes", 4 * n, "--grid", 256, "--block", 256, "--json"]
    r = occupancy.kernel_resources(path, arch="sm_90")
    code, out, err = run(capsys, *given)
    assert code == 0, err
    plain = json.loads(out)
    code, out, err = run(capsys, *given, "--from-source")
    if r.sass is None:  # no nvdisasm here: the flag refuses, naming why, rather than predict without it
        assert code == 2 and "--from-source needs the SASS" in err
        return
    assert code == 0, err
    data = json.loads(out)
    # the same prediction as the kernel file gives; the flag adds what the SASS said
    assert data["seconds"] == plain["seconds"] and "from_source" not in plain
    loop = r.sass.loops[r.sass.hot_loop]
    assert f"hot loop of {loop.instructions.total} instructions" in data["from_source"]
    assert f"{r.sass.global_loads_in_flight_per_thread} global loads in flight" in data["from_source"]
    code, _, err = run(capsys, "predict", "--from-source", "--flops", 1, "--dram-bytes", 4, "--grid", 1, "--block", 32)
    assert code == 2 and "--from-source predicts from your kernel's file" in err
    # a file whose SASS could not be read is an error, with the reason the resources give
    monkeypatch.setattr(occupancy, "kernel_resources",
                        lambda *a, **k: r.model_copy(update={"sass": None, "sources": {"sass": "no nvdisasm found"}}))
    code, _, err = run(capsys, *given, "--from-source")
    assert code == 2 and "--from-source needs the SASS" in err and "no nvdisasm found" in err
