"""Synthetic raw-page exports of ``template_kernels.cu`` (tests of ``binary=`` with template kernels).

``python tests/data/ncu/template_exports.py`` builds ``template_kernels.cu`` for sm_90 with the
nvcc gpuroof finds and writes, in the columns gpuroof reads of ``user_kernels.raw.csv`` (each
row the saxpy4 launch's figures, under the name, registers and static shared memory of one
launch of the program, in its launch order):

* ``templates.mangled.csv``: the names as ``--print-kernel-base mangled`` prints them (the
  symbols), and a ninth launch of ``column_sum<float, false>``, an instance the program lacks;
* ``templates.demangled.csv``: as Nsight Compute demangles them by default (template
  parameters as ``T1`` in the parameter list, bools as 0 and 1, ``<unnamed>``,
  ``[lambda(float) (instance 1)]``, and ``gpuroof_test::apply`` for
  ``gpuroof_test::detail::apply``: the names Nsight Compute 2025.3 printed for this program on
  an H100, 2026-12-06), with the same missing instance;
* ``templates.function.csv``: the function names alone (``--print-kernel-base function``).

The registers and static shared memory are the build's, the registers as Nsight reports them
(no fewer than 16 a thread, as on that H100): nvcc 13.0.88 made the files committed
(another nvcc may differ, and tests/roofline/test_ncu_binary.py writes its build's figures with
`write_exports`). ``scripts/device_ncu_templates.sh`` takes a real profile of the program.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))
sys.path.insert(0, str(HERE))

import occupancy  # noqa: E402
from occupancy import _nvcc  # noqa: E402
from roofline._ncu_binary import NSIGHT_FEWEST_REGISTERS  # noqa: E402  (Nsight reports no fewer registers)
from rewrite_exports import _project, _read_columns, _text  # noqa: E402

SOURCE = HERE / "template_kernels.cu"
OPTIONS = ("-std=c++17", "--extended-lambda")

#: The program's launches in order, and the instance it lacks: (symbol, Nsight's demangled
#: name, function name). The anonymous namespace's symbol holds a hash of the file's name.
LAUNCHES: tuple[tuple[str, str, str], ...] = (
    ("_Z10column_sumI13__nv_bfloat16Lb0EEvPT_PKS1_iiiSt17integral_constantIbXT0_EE",
     "void column_sum<__nv_bfloat16, 0>(T1 *, const T1 *, int, int, int, std::integral_constant<bool, T2>)",
     "column_sum"),
    ("_Z10column_sumIfLb1EEvPT_PKS0_iiiSt17integral_constantIbXT0_EE",
     "void column_sum<float, 1>(T1 *, const T1 *, int, int, int, std::integral_constant<bool, T2>)",
     "column_sum"),
    ("_ZN12gpuroof_test6detail5applyIZ4mainEUlfE_EEvPfiT_",
     "void gpuroof_test::apply<main::[lambda(float) (instance 1)]>(float *, int, T1)",
     "apply"),
    ("_ZN12gpuroof_test6detail5applyINS0_6SquareEEEvPfiT_",
     "void gpuroof_test::apply<gpuroof_test::Square>(float *, int, T1)",
     "apply"),
    ("_ZN52_GLOBAL__N__811c98d5_19_template_kernels_cu_b35a8b929tile_copyILi4EEEvPfPKfi",
     "void <unnamed>::tile_copy<4>(float *, const float *, int)",
     "tile_copy"),
    ("_Z10add_kernelPfi", "add_kernel(float *, int)", "add_kernel"),
    ("scale_kernel", "scale_kernel", "scale_kernel"),
)
MISSING = ("_Z10column_sumIfLb0EEvPT_PKS0_iiiSt17integral_constantIbXT0_EE",
           "void column_sum<float, 0>(T1 *, const T1 *, int, int, int, std::integral_constant<bool, T2>)",
           "column_sum")
VARIANTS = {"mangled": 0, "demangled": 1, "function": 2}


def _unhashed(symbol: str) -> str:
    return re.sub(r"_GLOBAL__N__[0-9a-f]{8}_", "_GLOBAL__N__", symbol)


def write_exports(folder: Path, resources: Mapping[str, tuple[int, int]]) -> dict[str, Path]:
    """The three exports in `folder`; ``resources`` maps each symbol to its (registers, static
    shared memory in bytes); the missing instance takes the first launch's."""
    user = HERE / "user_kernels.raw.csv"
    header, units, body = _project(user, _read_columns(user))
    column = {name: header.index(name) for name in
              ("ID", "Kernel Name", "launch__registers_per_thread", "launch__shared_mem_per_block_static")}
    # an anonymous namespace's symbol holds a hash of the path nvcc was given: match it without
    by_key = {_unhashed(symbol): figures for symbol, figures in resources.items()}
    out = {}
    for variant, which in VARIANTS.items():
        launches = LAUNCHES if variant == "function" else (*LAUNCHES, MISSING)
        rows = [header, units]
        for index, names in enumerate(launches):
            row = list(body[0])
            registers, shared = by_key.get(_unhashed(names[0]), by_key[_unhashed(LAUNCHES[0][0])])
            row[column["ID"]] = str(index)
            row[column["Kernel Name"]] = names[which]
            row[column["launch__registers_per_thread"]] = str(max(registers, NSIGHT_FEWEST_REGISTERS))
            row[column["launch__shared_mem_per_block_static"]] = str(shared)
            rows.append(row)
        out[variant] = folder / f"templates.{variant}.csv"
        out[variant].write_text(_text(rows))
    return out


def main() -> None:
    cubin = _nvcc.nvcc_compile(SOURCE, "sm_90", OPTIONS).cubin
    built = occupancy.all_kernel_resources(cubin, arch="sm_90")
    write_exports(HERE, {name: (r.registers_per_thread, r.static_shared_memory) for name, r in built.items()})


if __name__ == "__main__":
    main()
