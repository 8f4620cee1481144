"""What a fresh install gets: the license the metadata names, and a `gpu` extra whose wheels are
the ones the code loads (NVRTC for validate's compiles, NVML's bindings for clocks and power)."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import pathlib
import re
import tomllib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def _names(requirements: list[str]) -> set[str]:
    """The distribution names of requirement strings ("cuda-core>=0.3" -> "cuda-core")."""
    return {re.match(r"[A-Za-z0-9._-]+", r).group(0).lower().replace("_", "-") for r in requirements}


def _wheel_files(distribution: str) -> set[pathlib.Path]:
    try:
        dist = importlib.metadata.distribution(distribution)
    except importlib.metadata.PackageNotFoundError:
        pytest.skip(f"{distribution} is not installed here (pip install -e '.[gpu]' in gpuroof's checkout)")
    return {pathlib.Path(dist.locate_file(f)).resolve() for f in dist.files or ()}


def test_the_license_file_is_the_one_the_metadata_names():
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert PROJECT["license"] == "Apache-2.0" and PROJECT["license-files"] == ["LICENSE"]
    # the full standard text: its title, all nine sections and its end, not a one-line notice
    assert re.search(r"Apache License\s+Version 2\.0, January 2004", text)
    for number, title in enumerate(["Definitions", "Grant of Copyright License", "Grant of Patent License",
                                    "Redistribution", "Submission of Contributions", "Trademarks",
                                    "Disclaimer of Warranty", "Limitation of Liability",
                                    "Accepting Warranty or Additional Liability"], start=1):
        assert f"{number}. {title}." in text, title
    assert "END OF TERMS AND CONDITIONS" in text


@pytest.mark.parametrize("needed", ["cuda-python", "cuda-core", "nvidia-cuda-nvrtc", "nvidia-ml-py"])
def test_the_gpu_extra_holds_what_validate_loads(needed):
    gpu = PROJECT["optional-dependencies"]["gpu"]
    assert needed in _names(gpu), f"the gpu extra misses {needed}: {gpu}"


def test_the_gpu_extra_takes_nvrtc_of_the_major_cuda_python_loads():
    """cuda-bindings 13 loads libnvrtc.so.13: an NVRTC 12 wheel beside it would not be found."""
    gpu = " ".join(PROJECT["optional-dependencies"]["gpu"])
    assert re.search(r"cuda-python>=13\b", gpu) and re.search(r"nvidia-cuda-nvrtc>=13\b", gpu)


def test_validate_compiles_with_nvrtc_from_the_wheel():
    """validate's one compile path (cuda.core's Program over cuda.bindings.nvrtc, found by
    cuda.pathfinder) loads the libnvrtc of the nvidia-cuda-nvrtc wheel: no CUDA toolkit needed."""
    maps = pathlib.Path("/proc/self/maps")
    if not maps.exists():
        pytest.skip("reads the loaded libraries from /proc/self/maps (Linux)")
    wheel = _wheel_files("nvidia-cuda-nvrtc")
    pytest.importorskip("cuda.core")
    from validate.device._compile import compile_cubin

    code = compile_cubin('extern "C" __global__ void k(float *x) { x[0] = 1.0f; }', arch="sm_90", name="k.cu")
    assert code is not None
    loaded = {pathlib.Path(line.split()[-1]).resolve() for line in maps.read_text().splitlines()
              if re.search(r"/libnvrtc\.so", line)}
    assert loaded and loaded <= wheel, f"libnvrtc loaded from {sorted(map(str, loaded))}, not the wheel"


def test_nvml_bindings_come_from_the_wheel():
    """validate's clock monitor imports pynvml: the module of the nvidia-ml-py wheel (not the
    deprecated pynvml package's copy), which opens the driver's libnvidia-ml at run time."""
    wheel = _wheel_files("nvidia-ml-py")
    import validate.device._clocks as clocks

    spec = importlib.util.find_spec("pynvml")
    assert spec is not None and pathlib.Path(spec.origin).resolve() in wheel
    assert "import pynvml" in pathlib.Path(clocks.__file__).read_text(encoding="utf-8")
