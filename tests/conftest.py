"""Fixtures shared by the tests of the command line and of the docs, and a compile cache for all."""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist's own hook reads the groups
def pytest_collection_modifyitems(config, items):
    """Under pytest-xdist (``make test JOBS=2``, ``--dist loadgroup``) the tests of one file run
    on one worker: its module fixtures and the session's compile cache serve the whole file
    (spread test by test, each worker compiled the same files again: half as much CPU more).
    A test with a group of its own (``xdist_group``) keeps it: the compiled corpus's files share
    one worker."""
    for item in items:
        if item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::")[0]))


@pytest.fixture
def in_a_clone(tmp_path, monkeypatch) -> Path:
    """A scratch working folder that sees the repository's folders, as a clone's root does: the
    repository paths of the docs and `--help` examples resolve, and the files a command writes
    (``--plot saxpy3.png``, ``--out merged``) land in the scratch folder."""
    for folder in ("docs", "tests", "benchmarks", "validate"):
        (tmp_path / folder).symlink_to(ROOT / folder, target_is_directory=True)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _folder_state(folder: Path) -> tuple:
    """(name, size, mtime) of each entry of ``folder``: a header rewritten there changes it."""
    try:
        with os.scandir(folder) as entries:
            return tuple(sorted((e.name, e.stat().st_size, e.stat().st_mtime_ns) for e in entries))
    except OSError:
        return ()


@pytest.fixture(scope="session", autouse=True)
def compile_once_per_session():
    """Each nvcc and ptxas build the library asks for runs once per session: a second request
    with the same compiler, source (its bytes, and the state of its folder, the run folder and
    each ``-I`` folder, where its headers are), architecture and options gets the first build's
    result. Many tests compile the same file with the same flags (docs/examples/project_kernels.cu
    for sm_90 in a dozen tests, ~1 s each); the first still runs the compiler, and a failed build
    is never kept, so each error test runs it. Builds of other options are new builds."""
    from occupancy import _kernel_resources, _nvcc, _nvdisasm, _source_build

    real_nvcc, real_ptxas = _source_build.nvcc_compile, _kernel_resources.ptxas_compile
    built: dict[tuple, object] = {}

    def nvcc_key(path, arch, options, cwd, nvcc) -> tuple:
        source = Path(cwd or ".", path).resolve()
        folders = [source.parent, Path(cwd or ".").resolve()]
        for i, option in enumerate(options):
            if m := re.fullmatch(r"(?:-I|--include-path=?)(.*)", option):
                folder = m[1] or (options[i + 1] if i + 1 < len(options) else "")
                folders.append(Path(cwd or ".", folder).resolve())
        return ("nvcc", nvcc, str(source), hashlib.sha256(source.read_bytes()).hexdigest(),
                _nvcc.target_sm(arch), tuple(options), *(_folder_state(f) for f in folders))

    def nvcc_compile(path, arch, options=(), cwd=None, nvcc=None):
        try:
            key = nvcc_key(path, arch, tuple(options), cwd, nvcc or _nvcc.find_nvcc())
        except Exception:  # noqa: BLE001 - a missing file or odd arch: the real call says what is wrong
            return real_nvcc(path, arch, options, cwd=cwd, nvcc=nvcc)
        if key not in built:
            built[key] = real_nvcc(path, arch, options, cwd=cwd, nvcc=nvcc)
        return built[key]

    def ptxas_compile(ptx, arch, options=(), name="kernel.ptx", ptxas=None):
        try:
            key = ("ptxas", ptxas or _nvcc.find_ptxas(), ptx, _nvcc.target_sm(arch), tuple(options), name)
        except Exception:  # noqa: BLE001 - as above
            return real_ptxas(ptx, arch, options, name=name, ptxas=ptxas)
        if key not in built:
            built[key] = real_ptxas(ptx, arch, options, name=name, ptxas=ptxas)
        return built[key]

    # The SASS of a cubin the same way: the library keeps the last 64 (enough for one program),
    # the session reads the compiled corpus in several files with many cubins in between. The
    # way nvdisasm is found is part of the key (the function, which a test may replace, and the
    # paths it searches): a test that hides nvdisasm or plants a fake one reads afresh.
    real_sass = _kernel_resources.sass_summaries

    def sass_summaries(cubin, arch):
        key = ("sass", cubin, arch, _nvdisasm.nvdisasm_candidates,
               *(os.environ.get(v) for v in ("PATH", "CUDA_HOME", "CUDA_PATH")))
        if key not in built:
            built[key] = real_sass(cubin, arch)
        return built[key]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_source_build, "nvcc_compile", nvcc_compile)
        patch.setattr(_kernel_resources, "ptxas_compile", ptxas_compile)
        patch.setattr(_kernel_resources, "sass_summaries", sass_summaries)
        yield built


@pytest.fixture(scope="session")
def template_build(tmp_path_factory):
    """tests/data/ncu/template_kernels.cu built for sm_90 by the nvcc gpuroof finds, as
    tests/data/ncu/template_exports.py builds it: ``cubin`` (its path), ``kernels`` (each
    kernel's resources by symbol) and ``exports`` (the synthetic exports with this build's
    registers, by variant). Skipped where no nvcc is found."""
    import importlib.util
    from types import SimpleNamespace

    import occupancy
    from occupancy import _nvcc

    if _nvcc.find_nvcc() is None:
        pytest.skip("no nvcc to build tests/data/ncu/template_kernels.cu (pip install nvidia-cuda-nvcc)")
    spec = importlib.util.spec_from_file_location("template_exports", ROOT / "tests/data/ncu/template_exports.py")
    exports = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(exports)
    folder = tmp_path_factory.mktemp("template_build")
    cubin = folder / "template_kernels.cubin"
    cubin.write_bytes(_nvcc.nvcc_compile(exports.SOURCE, "sm_90", exports.OPTIONS).cubin)
    kernels = occupancy.all_kernel_resources(cubin, arch="sm_90")
    written = exports.write_exports(folder, {n: (r.registers_per_thread, r.static_shared_memory)
                                             for n, r in kernels.items()})
    return SimpleNamespace(cubin=cubin, kernels=kernels, exports=written, module=exports)


@pytest.fixture
def predict_setting_once(monkeypatch):
    """`roofline.predict`'s calibration-free steps run once per launch object: a calibration fit
    predicts the same (kernel, launch) objects for hundreds of calibrations, and the launch's
    checks, occupancy and derived quantities (about half of each call) are the same each time.
    Keyed by the objects' identity (the memo holds them, so no id is reused) and by the other
    arguments; a call that raises is not kept. The calibration's parameters likewise, for the
    last calibration (one fit evaluation predicts every launch at one calibration)."""
    from roofline import _time_model

    real_setting, real_derive, real_parameters = _time_model._setting, _time_model.derive, _time_model.parameters
    settings: dict[tuple, tuple] = {}
    derived: dict[int, tuple] = {}
    last: list = [None, None, None]

    def setting(record, kernel, launch, loads, chains, flushed, measured):
        key = (id(record), id(kernel), id(launch), loads, chains, flushed, id(measured))
        if key not in settings:
            settings[key] = (record, kernel, launch, measured, real_setting(record, kernel, launch, loads, chains,
                                                                            flushed, measured))
        made, assumptions = settings[key][-1]
        return made, list(assumptions)

    def derive(made):
        if id(made) not in derived:
            derived[id(made)] = (made, real_derive(made))
        return derived[id(made)][1]

    def parameters(cal, record):
        if last[0] is not cal or last[1] is not record:
            last[:] = [cal, record, real_parameters(cal, record)]
        return last[2]

    monkeypatch.setattr(_time_model, "_setting", setting)
    monkeypatch.setattr(_time_model, "derive", derive)
    monkeypatch.setattr(_time_model, "parameters", parameters)
