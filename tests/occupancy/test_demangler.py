"""Kernel names spelled one way whichever demangler a machine has.

Found on the H200 machine (2026-11-26): NVIDIA's cu++filt (CUDA 13) writes integer template
arguments as casts (``MatrixMulCUDA<(int)16>``, ``reduce4<float, (unsigned int)256>``) where the
GNU c++filt here writes ``MatrixMulCUDA<16>`` and ``reduce4<float, 256u>``, as nvcc's users name
them; 14 kernels of other projects then matched no name on the GPU machine only.
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


def _stand_in(folder, output):
    """A demangler that answers `output` to every symbol (cu++filt's spelling, say)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "cu++filt"
    path.write_text(f"#!/bin/sh\nwhile read line; do echo '{output}'; done\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


@pytest.mark.skipif(os.name != "posix", reason="a shell-script stand-in for the demangler")
@pytest.mark.parametrize(
    ("printed", "name"),
    [
        ("void MatrixMulCUDA<(int)16>(float*, float*, float*, int, int)",
         "void MatrixMulCUDA<16>(float*, float*, float*, int, int)"),
        ("void reduce6<float, (unsigned int)256, (bool)1>(float*, float*, unsigned int)",
         "void reduce6<float, 256u, true>(float*, float*, unsigned int)"),
        ("void k<(long)-5, (unsigned long long)8, (bool)0, (short)9>()", "void k<-5l, 8ull, false, (short)9>()"),
        ("void sgemm<128, 8u>(int)", "void sgemm<128, 8u>(int)"),  # already literals: unchanged
    ],
    ids=["int", "unsigned-and-bool", "long-and-others", "literals"],
)
def test_template_arguments_are_literals_whatever_the_demangler(printed, name, tmp_path, monkeypatch):
    tool = _stand_in(tmp_path / "bin", printed)
    monkeypatch.setenv("GPUROOF_CU++FILT", str(tool))
    assert _names._demangler() == str(tool)
    assert _names.demangle(["_Z1kv"]) == {"_Z1kv": name}
