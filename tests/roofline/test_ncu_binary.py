"""`roofline.load_ncu(..., binary=)` on template kernels: each profiled kernel takes its instance in
the binary by its mangled, demangled or short name (roofline/_ncu_binary.py), a kernel the binary
lacks is said and predicted without SASS, and only a binary sharing no kernel is an error.

The program is tests/data/ncu/template_kernels.cu (bool and type template parameters, a namespace,
an anonymous namespace, a lambda's closure type), built here; its exports are the synthetic ones
of tests/data/ncu/template_exports.py with this build's registers (`template_build`).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import occupancy
import roofline
from occupancy import _nvcc
from roofline import RooflineError

ROOT = Path(__file__).parents[2]
USER = ROOT / "tests" / "data" / "ncu" / "user_kernels.raw.csv"

# Each launch's symbol, by kernel ID (the order of main() in template_kernels.cu), written from
# the source: C++ mangles column_sum<__nv_bfloat16, false> as ...I13__nv_bfloat16Lb0E...
BF16_FALSE = "_Z10column_sumI13__nv_bfloat16Lb0EEvPT_PKS1_iiiSt17integral_constantIbXT0_EE"
FLOAT_TRUE = "_Z10column_sumIfLb1EEvPT_PKS0_iiiSt17integral_constantIbXT0_EE"
APPLY_LAMBDA = "_ZN12gpuroof_test6detail5applyIZ4mainEUlfE_EEvPfiT_"
APPLY_SQUARE = "_ZN12gpuroof_test6detail5applyINS0_6SquareEEEvPfiT_"
ADD, SCALE = "_Z10add_kernelPfi", "scale_kernel"
TILE = "tile_copy"  # in an anonymous namespace: its symbol holds a hash of the file's name

HELD = "it holds column_sum<__nv_bfloat16, false>, column_sum<float, true>"
APPLY_TIE = "holds 2 instances of apply (gpuroof_test::detail::apply<gpuroof_test::detail::Square>, " \
            "gpuroof_test::detail::apply<main::{lambda(float)#1}>), 2 with the profile's registers"


def _symbol(build, name: str) -> str:
    return name if name != TILE else next(s for s in build.kernels if "tile_copy" in s)


@pytest.mark.parametrize("variant, expected, said", [
    ("mangled", [BF16_FALSE, FLOAT_TRUE, APPLY_LAMBDA, APPLY_SQUARE, TILE, ADD, SCALE, None],
     {7: f"holds no column_sum<float, false> ({HELD})"}),
    ("demangled", [BF16_FALSE, FLOAT_TRUE, APPLY_LAMBDA, APPLY_SQUARE, TILE, ADD, SCALE, None],
     {7: f"holds no column_sum<float, 0> ({HELD})"}),
    ("function", [BF16_FALSE, FLOAT_TRUE, None, None, TILE, ADD, SCALE],
     {0: "column_sum<__nv_bfloat16, false>, the one of 2 instances of column_sum whose registers",
      1: "column_sum<float, true>, the one of 2 instances of column_sum whose registers",
      2: APPLY_TIE, 3: APPLY_TIE}),
], ids=["mangled", "demangled", "function"])
def test_each_profiled_kernel_takes_its_template_instance(template_build, variant, expected, said):
    profile = roofline.load_ncu(template_build.exports[variant], binary=template_build.cubin)
    assert [k.id for k in profile.kernels] == list(range(len(expected)))
    for k, name in zip(profile.kernels, expected):
        if name is None:
            assert k.sass is None and k.sass_source.startswith("no SASS: template_kernels.cubin holds ")
        else:
            # the instance's own SASS: the two column_sum, and the two apply, differ in their code
            assert k.sass is not None and k.sass == template_build.kernels[_symbol(template_build, name)].sass
            assert k.sass_source.startswith("template_kernels.cubin (nvdisasm")
        assert said.get(k.id, "") in k.sass_source
    # the instances picked by their resources say so; those picked by name have nothing to say
    assert sum("equal the profile's" in k.sass_source for k in profile.kernels) == (2 if variant == "function" else 0)
    found = sum(name is not None for name in expected)
    assert profile.checks[-1].startswith(f"SASS for {found} of {len(expected)} kernels: ")


def test_a_kernel_the_binary_lacks_is_predicted_without_sass_and_its_note_says_what_the_binary_holds(template_build):
    report = roofline.profile_report(template_build.exports["demangled"], binary=template_build.cubin)
    assert len(report.kernels) == 8 and all(row.predicted_seconds for row in report.kernels)
    for row in report.kernels:
        sass_notes = [n for n in row.notes if "SASS" in n]
        assert len(sass_notes) == 1
        if row.kernel.id == 7:
            assert sass_notes[0] == (f"no SASS: template_kernels.cubin holds no column_sum<float, 0> ({HELD}): "
                                     "one global load round trip per thread assumed")
        else:
            assert sass_notes[0].startswith("SASS from template_kernels.cubin (nvdisasm")


def test_a_symbol_of_another_build_is_matched_by_its_demangled_name(template_build, tmp_path):
    """The anonymous namespace's symbol holds a hash of the file's name: the same source under
    another name gives tile_copy another symbol, which the export's then lacks."""
    renamed = tmp_path / "renamed_kernels.cu"
    shutil.copy(template_build.module.SOURCE, renamed)
    cubin = tmp_path / "renamed.cubin"
    cubin.write_bytes(_nvcc.nvcc_compile(renamed, "sm_90", template_build.module.OPTIONS).cubin)
    built = occupancy.all_kernel_resources(cubin, arch="sm_90")
    tile = next(s for s in built if "tile_copy" in s)
    exported = roofline.load_ncu(template_build.exports["mangled"]).kernels[4]
    assert exported.name == "tile_copy" and exported.mangled_name != tile  # the export's symbol is not there
    k = roofline.load_ncu(template_build.exports["mangled"], binary=cubin).kernels[4]
    assert k.sass is not None and k.sass == built[tile].sass


def test_without_a_demangler_the_short_name_and_the_resources_decide(template_build, monkeypatch):
    monkeypatch.setattr("occupancy._kernel_resources.demangle", lambda symbols: {})
    monkeypatch.setattr("roofline._ncu_binary.demangle", lambda symbols: {})
    profile = roofline.load_ncu(template_build.exports["demangled"], binary=template_build.cubin)
    by_id = {k.id: k for k in profile.kernels}
    assert by_id[1].sass == template_build.kernels[FLOAT_TRUE].sass  # the only column_sum with 1024 B
    assert "column_sum<float, true>" not in by_id[1].sass_source  # no demangled name to show: the symbol
    assert f"{FLOAT_TRUE}, the one of 2 instances of column_sum whose registers" in by_id[1].sass_source
    assert by_id[2].sass is None and "2 instances of apply" in by_id[2].sass_source
    tile = template_build.kernels[_symbol(template_build, TILE)]
    assert by_id[4].sass == tile.sass and by_id[4].sass_source.endswith("by its short name alone: no demangler "
                                                                        "(cu++filt or c++filt) for the binary's names")
    assert by_id[6].sass == template_build.kernels[SCALE].sass and by_id[6].sass_source.endswith("sm_90)")  # its symbol


@pytest.mark.parametrize("export, binary, message", [
    (USER, "cubin", r"none of its kernels \(\(anonymous namespace\)::tile_copy<4>, add_kernel, "
                    r"column_sum<__nv_bfloat16, false>, .*scale_kernel\) is a profiled one "
                    r"\(block_sum, daxpy, poly, saxpy4, stencil5\)"),
    ("mangled", ROOT / "benchmarks" / "measure_kernels.cu",
     r"none of its kernels \(block_sum, daxpy, poly, saxpy4, stencil5\) is a profiled one "
     r"\(\(anonymous namespace\)::tile_copy<4>, add_kernel, column_sum<__nv_bfloat16, false>, "
     r"column_sum<float, false>"),
], ids=["user-profile-template-binary", "template-profile-user-binary"])
def test_a_binary_with_no_kernel_in_common_is_an_error(template_build, export, binary, message):
    export = template_build.exports.get(export, export)
    binary = template_build.cubin if binary == "cubin" else binary
    with pytest.raises(RooflineError, match=message):
        roofline.load_ncu(export, binary=binary)


def test_a_report_s_mangled_names_find_the_instances(template_build, tmp_path, monkeypatch):
    """The .ncu-rep route: ncu_report gives each kernel's mangled name beside its demangled one."""
    printed = roofline.load_ncu(template_build.exports["demangled"]).kernels
    symbols = [BF16_FALSE, FLOAT_TRUE, APPLY_LAMBDA, APPLY_SQUARE, _symbol(template_build, TILE), ADD, SCALE,
               "_Z10column_sumIfLb0EEvPT_PKS0_iiiSt17integral_constantIbXT0_EE"]

    class Action:
        def __init__(self, k):
            self.metrics = {"device__attribute_compute_capability_major": 9,
                            "device__attribute_compute_capability_minor": 0,
                            "launch__registers_per_thread": k.registers_per_thread,
                            "launch__shared_mem_per_block_static": k.static_shared_memory,
                            **{f"launch__grid_dim_{a}": n for a, n in zip("xyz", k.grid)},
                            **{f"launch__block_dim_{a}": n for a, n in zip("xyz", k.block)}}
            self.names = {Module.IAction.NameBase_DEMANGLED: k.demangled_name,
                          Module.IAction.NameBase_MANGLED: symbols[k.id]}

        def metric_names(self):
            return list(self.metrics)

        def metric_by_name(self, name):
            value = self.metrics[name]
            return type("Metric", (), {"value": lambda self: value})()

        def name(self, base):
            return self.names[base]

        def nvtx_state(self):
            raise RuntimeError("no NVTX")

    class Module:
        IAction = type("IAction", (), {"NameBase_DEMANGLED": 0, "NameBase_MANGLED": 1})

        @staticmethod
        def load_report(path):
            actions = [Action(k) for k in printed]
            profiled = type("Range", (), {"num_actions": lambda self: len(actions),
                                          "action_by_idx": lambda self, i: actions[i]})()
            return type("Context", (), {"num_ranges": lambda self: 1, "range_by_idx": lambda self, i: profiled})()

    monkeypatch.setattr("roofline._ncu_report.ncu_report_module", lambda: Module)
    monkeypatch.setattr("roofline._ncu_report.report_count", lambda report: None)
    report = tmp_path / "templates.ncu-rep"
    report.write_bytes(b"\0")
    profile = roofline.load_ncu(report, binary=template_build.cubin)
    assert [k.mangled_name for k in profile.kernels] == symbols
    for k in profile.kernels[:7]:
        assert k.sass is not None and k.sass == template_build.kernels[k.mangled_name].sass
    assert profile.kernels[7].sass is None and "holds no column_sum<float, false>" in profile.kernels[7].sass_source


def test_the_committed_exports_are_the_generator_s(template_build):
    """tests/data/ncu/templates.*.csv are template_exports.py's output for the build whose registers
    they record (nvcc 13.0.88's); another nvcc's registers are the only difference allowed."""
    committed = {v: ROOT / "tests" / "data" / "ncu" / f"templates.{v}.csv" for v in template_build.exports}
    recorded = {k.demangled_name: k.registers_per_thread for k in roofline.load_ncu(committed["mangled"]).kernels}
    built = {s: max(r.registers_per_thread, template_build.module.NSIGHT_FEWEST_REGISTERS)
             for s, r in template_build.kernels.items()}
    if any(recorded[s] != n for s, n in built.items() if s in recorded):
        pytest.skip(f"this nvcc's registers ({built}) are not those the committed exports record ({recorded})")
    for variant, path in committed.items():
        assert path.read_text() == template_build.exports[variant].read_text(), variant


# Real exports of tests/data/ncu/template_kernels.cu: `bash scripts/device_ncu_templates.sh` on an
# NVIDIA H100 80GB HBM3 (Nsight Compute 2025.3.1, driver 580.159.04, nvcc 13.0), 2026-12-06.
REAL = {v: ROOT / "tests" / "data" / "ncu" / f"templates.h100.{v}.csv" for v in ("demangled", "function")}


@pytest.mark.parametrize("variant, expected", [
    # Nsight prints gpuroof_test::detail::apply<gpuroof_test::detail::Square> as
    # gpuroof_test::apply<gpuroof_test::Square>: matched without the namespaces
    ("demangled", [BF16_FALSE, FLOAT_TRUE, APPLY_LAMBDA, APPLY_SQUARE, TILE, ADD, SCALE]),
    # the two apply instances have the same resources (8 registers, profiled as 16): a tie
    ("function", [BF16_FALSE, FLOAT_TRUE, None, None, TILE, ADD, SCALE]),
], ids=["demangled", "function"])
def test_a_real_nsight_export_takes_each_kernel_s_instance(template_build, variant, expected):
    profile = roofline.load_ncu(REAL[variant], binary=template_build.cubin)
    assert [k.registers_per_thread for k in profile.kernels] == [32, 32, 16, 16, 16, 16, 16]
    for k, name in zip(profile.kernels, expected):
        if name is None:
            assert k.sass is None and "2 with the profile's registers (16)" in k.sass_source
        else:
            assert k.sass == template_build.kernels[_symbol(template_build, name)].sass, k.sass_source
