"""What the wheel installs: the library and all its data, no corpus, and a prediction from a
kernel's source that runs from it.

The wheel is built offline from a copy of the checkout (``pip wheel --no-build-isolation
--no-index``, with this environment's setuptools) and installed with ``--no-deps --no-index``
into a fresh virtual environment that borrows this one's dependencies (numpy, pydantic, the
NVIDIA compiler wheels) through a ``.pth`` line, so no index is reached. The commands then run
from a scratch folder, where only the installed copy of the packages can be imported.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tomllib
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
LIBRARY = ("gpuroof", "occupancy", "roofline", "validate")
#: What the wheel may install, in bytes (its files: the bytecode pip compiles comes on top).
MAX_INSTALLED_BYTES = 3_000_000

# saxpy3 (docs/examples/saxpy3.cu) predicted from its source: its resources compiled from the
# file, its global accesses described for `roofline.memory.traffic` (two float4 loads of x, y and z
# per thread, eight coalesced float stores per thread from the shared tile).
FROM_SOURCE = """
import json, occupancy, roofline

n, block = 1 << 24, 256
tile = 8 * block
resources = occupancy.kernel_resources("saxpy3.cu", arch="sm_90", kernel="saxpy3")
loads = [roofline.memory.Access(array=a, index=lambda c, k=k: (c.block_x * tile + c.thread_x * 8) // 4 + k,
                         element_bytes=16) for a in "xyz" for k in (0, 1)]
stores = [roofline.memory.Access(array="out", index=lambda c, k=k: c.block_x * tile + k * block + c.thread_x,
                          kind="store") for k in range(8)]
t = roofline.memory.traffic(n // tile, block, loads + stores)
kernel = t.kernel(name="saxpy3", flops=3 * n, launch=occupancy.Launch(grid=n // tile, block=block,
                                                                      resources=resources))
p = roofline.predict("H100-SXM", kernel)
print(json.dumps({"roofline": roofline.__file__, "dram_bytes": t.dram_bytes, "seconds": p.seconds,
                  "registers": resources.registers_per_thread}))
"""


def _build_requirement() -> tuple[str, tuple[int, ...]]:
    """The build backend's distribution and the lowest version pyproject's build-system asks for."""
    (requirement,) = PYPROJECT["build-system"]["requires"]
    name, version = re.fullmatch(r"([A-Za-z0-9_.-]+)>=([0-9.]+)", requirement).groups()
    return name, tuple(int(part) for part in version.split("."))


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", text)[:3])


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The wheel of a copy of the checkout (corpus/ included, for the package list to leave out)."""
    name, lowest = _build_requirement()
    try:
        have = importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        have = "0"
    if _version(have) < lowest:
        pytest.skip(f"building the wheel offline needs {name}>={'.'.join(map(str, lowest))} here (the test "
                    f"extra's; {have} is installed): pip install '{name}>={'.'.join(map(str, lowest))}'")
    source = tmp_path_factory.mktemp("source")
    for item in ("pyproject.toml", "README.md", "LICENSE", *LIBRARY, "corpus"):
        path = ROOT / item
        if path.is_dir():
            shutil.copytree(path, source / item, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(path, source / item)
    out = tmp_path_factory.mktemp("dist")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
                    "--quiet", "--wheel-dir", str(out), str(source)], check=True, cwd=source)
    (built,) = out.glob("gpuroof-*.whl")
    return built


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> Path:
    """A virtual environment holding the wheel alone, this environment's site-packages behind it."""
    env = tmp_path_factory.mktemp("venv")
    venv.EnvBuilder(with_pip=False, symlinks=os.name != "nt").create(env)
    python = env / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index",
                    "--no-compile", "--quiet", str(wheel)], check=True)
    purelib = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                  check=True, capture_output=True, text=True).stdout.strip())
    # plain path lines: this environment's .pth files (its editable install of the checkout) stay unread
    borrowed = dict.fromkeys(sysconfig.get_paths()[key] for key in ("purelib", "platlib"))
    (purelib / "_borrowed_dependencies.pth").write_text("".join(f"{p}\n" for p in borrowed), encoding="utf-8")
    return env


def _run(env: Path, *argv: str, cwd: Path) -> subprocess.CompletedProcess:
    """Run in ``cwd`` with the venv's PATH first and no PYTHONPATH (nothing of the checkout)."""
    bin_dir = env / ("Scripts" if os.name == "nt" else "bin")
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    clean["PATH"] = f"{bin_dir}{os.pathsep}{clean.get('PATH', '')}"
    return subprocess.run([str(bin_dir / argv[0]), *argv[1:]], cwd=cwd, env=clean, capture_output=True,
                          text=True, timeout=120)


def _library_files(root: Path) -> set[str]:
    """Every file of the library's packages under ``root`` (their code and data), as wheel paths."""
    return {path.relative_to(root).as_posix() for package in LIBRARY for path in (root / package).rglob("*")
            if path.is_file() and "__pycache__" not in path.parts}


def test_the_wheel_holds_the_library_and_its_data_and_no_corpus(wheel):
    with zipfile.ZipFile(wheel) as archive:
        entries = archive.infolist()
    names = {e.filename for e in entries if ".dist-info/" not in e.filename}
    assert names == _library_files(ROOT)
    assert not any(name.split("/")[0] == "corpus" for name in names)
    installed_bytes = sum(e.file_size for e in entries)
    assert installed_bytes <= MAX_INSTALLED_BYTES, f"the wheel installs {installed_bytes / 1e6:.1f} MB"


def test_a_kernel_is_predicted_from_its_source_with_the_installed_wheel(installed, tmp_path):
    shutil.copy2(ROOT / "docs/examples/saxpy3.cu", tmp_path / "saxpy3.cu")
    (tmp_path / "from_source.py").write_text(FROM_SOURCE, encoding="utf-8")
    done = _run(installed, "python", "from_source.py", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    shown = json.loads(done.stdout)
    assert Path(shown["roofline"]).is_relative_to(installed)
    # four float arrays of 2**24 elements, each moved once
    assert shown["dram_bytes"] == 4 * 4 * (1 << 24)
    assert shown["registers"] > 0 and shown["seconds"] > 0
    cli = _run(installed, "gpuroof", "predict", "--gpu", "H100-SXM", "--kernel-file", "saxpy3.cu", "--kernel",
               "saxpy3", "--grid", "8192", "--block", "256", "--flops", str(3 << 24),
               "--dram-bytes", str(shown["dram_bytes"]), "--json", cwd=tmp_path)
    assert cli.returncode == 0, cli.stderr
    predicted = json.loads(cli.stdout)
    assert predicted["resources"]["registers_per_thread"] == shown["registers"] and predicted["seconds"] > 0


def test_the_installed_corpus_command_says_where_the_corpus_lives(installed, tmp_path):
    done = _run(installed, "gpuroof", "corpus", "--gpu", "h200", cwd=tmp_path)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines() == [
        "gpuroof: error: the corpus lives in the gpuroof repository checkout (its corpus/ folder), not in the "
        "installed package: run gpuroof corpus from a checkout, or give --corpus DIR"]
