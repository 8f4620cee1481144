"""Which demangler names the kernels: NVIDIA's cu++filt wherever the toolkit is, before GNU c++filt.

Found on an H200 machine (2026-11-26): cu++filt was in the toolkit's bin but not on PATH, and the
system's c++filt wrote template arguments as casts (``sgemm<(int)128>``), so no kernel named as
nvcc's users name it (``sgemm<128>``) matched.
"""

from __future__ import annotations

import os
import stat

import pytest

from occupancy import _names


@pytest.fixture(autouse=True)
def _uncached():
    _names._demangler.cache_clear()  # found once per process; each test sets up its own
    yield
    _names._demangler.cache_clear()


def _tool(folder, name, output):
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(f"#!/bin/sh\nwhile read line; do echo '{output}'; done\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


@pytest.mark.skipif(os.name != "posix", reason="shell-script stand-ins for the demanglers")
def test_the_toolkits_cu_filt_wins_over_gnu_c_filt_on_path(tmp_path, monkeypatch):
    gnu = _tool(tmp_path / "path", "c++filt", "void k<(int)128>()")
    nvidia = _tool(tmp_path / "cuda" / "bin", "cu++filt", "void k<128>()")
    monkeypatch.setenv("PATH", str(gnu.parent))
    monkeypatch.setenv("CUDA_HOME", str(tmp_path / "cuda"))
    monkeypatch.delenv("GPUROOF_CU++FILT", raising=False)
    assert _names._demangler() == str(nvidia)
    assert _names.demangle(["_Z1kILi128EEvv"]) == {"_Z1kILi128EEvv": "void k<128>()"}


@pytest.mark.skipif(os.name != "posix", reason="shell-script stand-ins for the demanglers")
def test_gnu_c_filt_is_the_last_resort(tmp_path, monkeypatch):
    gnu = _tool(tmp_path / "path", "c++filt", "void k<128>()")
    monkeypatch.setenv("PATH", str(gnu.parent))
    monkeypatch.delenv("CUDA_HOME", raising=False)
    monkeypatch.delenv("CUDA_PATH", raising=False)
    monkeypatch.setattr(_names, "_find", lambda tool: None)
    assert _names._demangler() == str(gnu)
