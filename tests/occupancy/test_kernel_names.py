"""`--kernel` (kernel=) finds a kernel by the names a user types: with scopes left out (CUB's
versioned inline namespace) and with enum template arguments spelled as in the source, on our
own kernels (tests/occupancy/names_kernels.cu). The symbols expected are the Itanium C++ ABI's
manglings of the instantiations the file declares (a literal template argument is
``L <type> <value> E``: ``sorter<Mode::Exact, DESC>`` is ``_Z6sorterIL4Mode4EL5Order1EEvPf``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import occupancy
from occupancy._enums import enumerators
from occupancy._nvcc import file_text
from occupancy._names import match_kernel, stable_symbol
from occupancy._nvcc import find_nvcc

SOURCE = Path(__file__).with_name("names_kernels.cu")
NVCC = find_nvcc()

REDUCE_FLOAT = "_ZN3lib14LIB_200_SM_9006detail13reduce_kernelIfLi4EEEvPKT_PS3_"
REDUCE_DOUBLE = "_ZN3lib14LIB_200_SM_9006detail13reduce_kernelIdLi4EEEvPKT_PS3_"
SCAN = "_ZN3lib14LIB_200_SM_90011scan_kernelIiEEvPKT_PS2_"
FAST_ASC = "_Z6sorterIL4Mode0EL5Order0EEvPf"
EXACT_DESC = "_Z6sorterIL4Mode4EL5Order1EEvPf"
FAST_DESC = "_Z6sorterIL4Mode0EL5Order1EEvPf"
KINDS = "_Z5kindsILN2ns4KindE2ELi3EEvPf"


@pytest.fixture(scope="module")
def kernels() -> tuple[list[str], dict[str, str | None]]:
    if NVCC is None:
        pytest.skip("no nvcc")
    found = occupancy.all_kernel_resources(SOURCE, arch="sm_90")
    if not all(r.demangled for r in found.values()):
        pytest.skip("no demangler (cu++filt or c++filt)")
    return list(found), {n: r.demangled for n, r in found.items()}


@pytest.mark.parametrize(("spelled", "symbol"), [
    ("lib::detail::reduce_kernel<float, 4>", REDUCE_FLOAT),
    ("lib::reduce_kernel<double,4>", REDUCE_DOUBLE),
    ("reduce_kernel<float, 4>", REDUCE_FLOAT),
    ("lib::LIB_200_SM_900::detail::reduce_kernel<double, 4>", REDUCE_DOUBLE),
    ("lib::scan_kernel", SCAN),
    ("lib::scan_kernel<int>", SCAN),
    ("sorter<Mode::Fast, ASC>", FAST_ASC),
    ("sorter<Mode::Exact,DESC>", EXACT_DESC),
    ("sorter<Mode::Fast, Order::DESC>", FAST_DESC),
    ("sorter<(Mode)4, (Order)1>", EXACT_DESC),
    ("kinds<ns::Kind::B, 3>", KINDS),
    ("kinds<Kind::B, 3>", KINDS),
    (EXACT_DESC, EXACT_DESC),
], ids=["inline-namespace-left-out", "scopes-left-out", "unqualified", "fully-qualified", "no-arguments",
        "template", "enum", "enum-scoped-and-unscoped", "unscoped-qualified", "as-demangled", "enum-in-namespace",
        "enum-namespace-left-out", "symbol"])
def test_a_kernel_is_found_as_a_user_spells_it(kernels, spelled, symbol):
    names, demangled = kernels
    assert match_kernel(spelled, names, demangled, lambda: enumerators(file_text(SOURCE, [], NVCC, None))) == symbol


@pytest.mark.parametrize(("spelled", "message"), [
    ("reduce_kernel", "is ambiguous"),
    ("detail::reduce_kernel", "is ambiguous"),
    ("sorter<Mode::Fast>", "not found"),
    ("sorter<Mode::Slow, ASC>", "not found"),
    ("other::scan_kernel", "not found"),
], ids=["two-instances", "two-instances-scoped", "too-few-arguments", "no-such-enumerator", "wrong-scope"])
def test_a_name_that_is_not_one_kernel_is_refused(kernels, spelled, message):
    names, demangled = kernels
    with pytest.raises(occupancy.OccupancyError, match=message):
        match_kernel(spelled, names, demangled, lambda: enumerators(file_text(SOURCE, [], NVCC, None)))


def test_the_source_is_read_only_for_an_enum_spelling(kernels):
    names, demangled = kernels

    def unread() -> tuple:
        raise AssertionError("the enumerators were read for a name that needs none")

    assert match_kernel("lib::scan_kernel<int>", names, demangled, unread) == SCAN
    assert match_kernel("sorter<(Mode)0, (Order)0>", names, demangled, unread) == FAST_ASC


@pytest.mark.parametrize(("source", "want"), [
    ("enum class Mode : int { Fast, Exact = 1 << 2, Late };", [("Mode", "Fast", 0), ("Mode", "Exact", 4),
                                                              ("Mode", "Late", 5)]),
    ("enum Order { ASC, DESC = ASC + 3, WIDE = 0x10u, OCT = 010 };", [("Order", "ASC", 0), ("Order", "DESC", 3),
                                                                    ("Order", "WIDE", 16), ("Order", "OCT", 8)]),
    ("typedef enum { A = -1, B } pair_t;", [("pair_t", "A", -1), ("pair_t", "B", 0)]),
    ("namespace ns { enum class Kind : unsigned char { /* one */ A = 1, B }; }", [("Kind", "A", 1), ("Kind", "B", 2)]),
    ("enum E { X = sizeof(int), Y, Z = 7 };", [("E", "Z", 7)]),
], ids=["scoped-shift", "unscoped-literals", "typedef", "namespace-comment", "unknown-initialiser"])
def test_enumerators_have_the_values_cpp_gives_them(source, want):
    assert [(e.enum, e.name, e.value) for e in enumerators(source)] == want


def test_cli_finds_an_enum_spelling(capsys):
    if NVCC is None:
        pytest.skip("no nvcc")
    from gpuroof import main

    code = main(["resources", str(SOURCE), "--arch", "sm_90", "--kernel", "sorter<Mode::Exact, DESC>", "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert [row["resources"]["kernel"] for row in json.loads(out)] == [EXACT_DESC]


# nvcc 13.0's symbols for `template <op_t op> __global__ void apply(...)` instantiated with `twice`
# of an anonymous namespace in /tmp/a/intern.cu and /tmp/b/intern.cu (other path hashes, other pids).
ANONYMOUS_A = ("_Z5applyIXadL_ZN44_INTERNAL_4bd60db3_9_intern_cu_22b67b62_864946_GLOBAL__N__4bd60db3_9_intern_cu"
               "_22b67b62_86495twiceEfEEEvPKfPfi")
ANONYMOUS_B = ("_Z5applyIXadL_ZN44_INTERNAL_b879caf7_9_intern_cu_6b3fe66d_879046_GLOBAL__N__b879caf7_9_intern_cu"
               "_6b3fe66d_87905twiceEfEEEvPKfPfi")


@pytest.mark.parametrize(("symbol", "stable"), [
    (ANONYMOUS_A, "_Z5applyIXadL_ZN19_INTERNAL_intern_cu21_GLOBAL__N__intern_cu5twiceEfEEEvPKfPfi"),
    (ANONYMOUS_B, "_Z5applyIXadL_ZN19_INTERNAL_intern_cu21_GLOBAL__N__intern_cu5twiceEfEEEvPKfPfi"),
    (REDUCE_FLOAT, REDUCE_FLOAT),
    ("_Z1kIXadL_ZN14_INTERNAL_abcdE5twiceEfEEvPf", "_Z1kIXadL_ZN14_INTERNAL_abcdE5twiceEfEEvPf"),
    ("_Z1kIXadL_ZN99_INTERNAL_ab_1_x_ab_1EEvPf", "_Z1kIXadL_ZN99_INTERNAL_ab_1_x_ab_1EEvPf"),
], ids=["anonymous-namespace", "another-path-and-pid", "no-internal-scope", "a-lookalike-name",
        "a-length-past-the-end"])
def test_stable_symbol_leaves_out_what_each_compile_changes(symbol, stable):
    assert stable_symbol(symbol) == stable


# A kernel named with a type alias of its source (llm.c's `norm_kernel4<floatX>`, 2026-12-08): the
# demangled name writes the type the alias stands for.
_ALIASED = {"_Z4normI13__nv_bfloat16EvPfPKT_": "void norm<__nv_bfloat16>(float*, __nv_bfloat16 const*)",
            "_Z4normIfEvPfPKT_": "void norm<float>(float*, float const*)",
            "_Z4biasI13__nv_bfloat16Lb0EEvPT_": "void bias<__nv_bfloat16, false>(__nv_bfloat16*)",
            "_Z4biasI13__nv_bfloat16Lb1EEvPT_": "void bias<__nv_bfloat16, true>(__nv_bfloat16*)"}


@pytest.mark.parametrize(("spelled", "symbol", "table"), [
    ("norm<floatX>", "_Z4normI13__nv_bfloat16EvPfPKT_", {"floatX": "__nv_bfloat16"}),
    ("bias<floatX, false>", "_Z4biasI13__nv_bfloat16Lb0EEvPT_", {"floatX": "__nv_bfloat16"}),
    ("norm<real_t>", "_Z4normI13__nv_bfloat16EvPfPKT_", {"real_t": "floatX", "floatX": "__nv_bfloat16"}),
    ("norm<acc_t>", "_Z4normIfEvPfPKT_", {"acc_t": "float", "floatX": "__nv_bfloat16"}),
], ids=["alias", "alias-and-literal", "alias-of-an-alias", "alias-to-a-builtin"])
def test_a_template_argument_spelled_with_a_type_alias(spelled, symbol, table):
    asked = []

    def aliases() -> dict[str, str]:
        asked.append(True)
        return table

    assert match_kernel(spelled, list(_ALIASED), _ALIASED, None, aliases) == symbol
    assert asked  # read only because the name as written matched nothing


def test_the_aliases_are_not_read_for_a_name_that_matches():
    def unread() -> dict[str, str]:
        raise AssertionError("the aliases were read")

    assert match_kernel("norm<float>", list(_ALIASED), _ALIASED, None, unread) == "_Z4normIfEvPfPKT_"


def test_kernel_resources_finds_an_instance_by_the_source_s_alias(tmp_path):
    if NVCC is None:
        pytest.skip("no nvcc")
    cu = tmp_path / "aliased.cu"
    cu.write_text("typedef float real_t;\nusing acc_t = double;\n"
                  "template <typename T> __global__ void fill(T* x) { x[threadIdx.x] = T(1); }\n"
                  "template __global__ void fill<real_t>(real_t*);\ntemplate __global__ void fill<acc_t>(acc_t*);\n")
    found = occupancy.kernel_resources(cu, arch="sm_90", kernel="fill<acc_t>")
    assert found.kernel == "_Z4fillIdEvPT_"
