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


# How Nsight Compute prints names: tests/data/ncu/torch_roofline.raw.csv (template parameters as T1 in
# the parameter list, const first, bools as 0/1, <unnamed>, [lambda(int) (instance 1)]); how binutils'
# c++filt prints the same symbols: what it printed here for tests/data/ncu/template_kernels.cu's kernels.
SAME_INSTANCE = [
    ("void column_sum<__nv_bfloat16, 0>(T1 *, const T1 *, int, int, int, std::integral_constant<bool, T2>)",
     "void column_sum<__nv_bfloat16, false>(__nv_bfloat16*, __nv_bfloat16 const*, int, int, int, "
     "std::integral_constant<bool, false>)"),
    ("void <unnamed>::tile_copy<4>(float *, const float *, int)",
     "void (anonymous namespace)::tile_copy<4>(float*, float const*, int)"),
    ("void gpuroof_test::detail::apply<main::[lambda(float) (instance 1)]>(float *, int, T1)",
     "void gpuroof_test::detail::apply<main::{lambda(float)#1}>(float*, int, main::{lambda(float)#1})"),
    ("void at::elementwise_kernel<128, 4, void at::gpu_kernel_impl_nocast<at::CUDAFunctor_add<c10::Half>>"
     "(at::TensorIteratorBase &, const T1 &)::[lambda(int) (instance 1)]>(int, T3)",
     "void at::elementwise_kernel<128, 4, void at::gpu_kernel_impl_nocast<at::CUDAFunctor_add<c10::Half> >"
     "(at::TensorIteratorBase&, at::CUDAFunctor_add<c10::Half> const&)::{lambda(int)#1}>(int, "
     "at::gpu_kernel_impl_nocast<at::CUDAFunctor_add<c10::Half> >(at::TensorIteratorBase&, "
     "at::CUDAFunctor_add<c10::Half> const&)::{lambda(int)#1})"),
    ("void reduce6<float, (unsigned int)256, (bool)1>(float*)", "void reduce6<float, 256u, true>(float*)"),
    ("add_kernel(float *, int)", "add_kernel(float*, int)"),
]


@pytest.mark.parametrize("nsight, cxxfilt", SAME_INSTANCE,
                         ids=["bool-and-type", "anonymous-namespace", "lambda", "lambda-in-a-template",
                              "cu++filt-casts", "no-template"])
def test_one_instance_has_one_key_whichever_printer_wrote_it(nsight, cxxfilt):
    assert _names.name_key(nsight) == _names.name_key(cxxfilt)


@pytest.mark.parametrize("a, b", [
    ("void column_sum<float, 0>(T1 *)", "void column_sum<float, true>(float*)"),
    ("void column_sum<float, 0>(T1 *)", "void column_sum<double, false>(double*)"),
    ("void ns::apply<main::[lambda(float) (instance 1)]>(float *, int, T1)",
     "void ns::apply<main::{lambda(float)#2}>(float*, int, main::{lambda(float)#2})"),
    ("void ns::apply<ns::Square>(float *, int, T1)", "void other::apply<ns::Square>(float*, int, ns::Square)"),
], ids=["bool", "type", "lambda-number", "namespace"])
def test_two_instances_have_two_keys(a, b):
    assert _names.name_key(a) != _names.name_key(b)
    assert _names.name_key(a, loose=True) != _names.name_key(b, loose=True)


def test_the_loose_key_leaves_out_where_const_stands():
    a, b = "void k<const at::Foo<int>*>(T1)", "void k<at::Foo<int> const*>(at::Foo<int> const*)"
    assert _names.name_key(a) != _names.name_key(b) and _names.name_key(a, loose=True) == _names.name_key(b, loose=True)


@pytest.mark.skipif(_names._demangler() is None, reason="no cu++filt or c++filt here")
def test_this_machine_s_demangler_agrees_with_nsight_s_spelling():
    """The symbols of tests/data/ncu/template_kernels.cu, demangled here, key as Nsight's names do."""
    symbols = {"_Z10column_sumI13__nv_bfloat16Lb0EEvPT_PKS1_iiiSt17integral_constantIbXT0_EE": SAME_INSTANCE[0][0],
               "_ZN12gpuroof_test6detail5applyIZ4mainEUlfE_EEvPfiT_": SAME_INSTANCE[2][0],
               "_ZN12_GLOBAL__N_19tile_copyILi4EEEvPfPKfi": SAME_INSTANCE[1][0]}
    found = _names.demangle(list(symbols))
    assert sorted(found) == sorted(symbols)
    for symbol, nsight in symbols.items():
        assert _names.name_key(found[symbol]) == _names.name_key(nsight), found[symbol]


@pytest.mark.parametrize("printed, name", [
    ("void (anonymous namespace)::tile_copy<4>(float*, float const*, int)", "(anonymous namespace)::tile_copy<4>"),
    ("void column_sum<float, (bool)1>(float*)", "column_sum<float, true>"),
    ("scale_kernel", "scale_kernel"),
], ids=["anonymous-namespace", "cast", "c-linkage"])
def test_instance_name(printed, name):
    assert _names.instance_name(printed) == name
