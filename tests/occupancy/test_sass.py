"""The SASS summary (KernelResources.sass) against nvdisasm's own listing and the compiler's scoreboards.

Three oracles: the kernels' source (tests/occupancy/sass_kernels.cu: N independent loads
are N in flight, a chase is one, float4 is LDG.E.128), the listing nvdisasm prints (every
count is a grep of it, written apart from the parser), and the scoreboards the compiler
set in the instruction encoding (``nvdisasm -hex``; Volta and later keep, in bits 105-125
of each instruction, the scoreboard a variable-latency instruction releases and the
scoreboards it waits for, per Jia et al., "Dissecting the NVIDIA Volta GPU Architecture
via Microbenchmarking", 2018): the loads outstanding before the compiler makes a thread
wait for them must be those the register dataflow counts.

Handwritten listings test the dataflow rules without any tool; the rest needs nvcc and
nvdisasm (``pip install nvidia-cuda-nvdisasm``, in the test extra) and skips without.
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

import occupancy
from occupancy import _nvdisasm, _sass
from occupancy._fatbin import fatbin_entries

# One worker builds the session's compiled corpus and framework kernels (tests/occupancy/conftest.py)
# for all the tests that read them: `make test` runs pytest-xdist with --dist loadgroup.
pytestmark = pytest.mark.xdist_group("compiled_corpus")

HERE = Path(__file__).parent
DATA = HERE.parent / "data" / "sass"
SOURCE = HERE / "sass_kernels.cu"
# the architectures CUDA 13's nvcc and nvdisasm both handle
ARCHS = ("sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_120")
# The default suite compiles and reads four of them (those of the compiled corpus's sample,
# tests/occupancy/conftest.py): nvcc and nvdisasm are most of this file's CPU. GPUROOF_TEST_FULL=1
# (make test-full) all seven.
COMPILED = ARCHS if os.environ.get("GPUROOF_TEST_FULL") == "1" else ("sm_75", "sm_80", "sm_90", "sm_120")


# ------------------------------------------------------------------ handwritten listings


def listing(*lines: str, name: str = "k") -> str:
    """An nvdisasm-style listing of one function; ``L:`` lines are labels, the rest
    instructions at 16-byte steps."""
    out = [f"\t.section\t.text.{name},\"ax\",@progbits", f"{name}:"]
    offset = 0
    for line in lines:
        if line.endswith(":"):
            out.append(line)
        else:
            out.append(f"        /*{offset:04x}*/                   {line} ;")
            offset += 16
    return "\n".join(out)


def summary(*lines: str, arch: str = "sm_90") -> occupancy.SassSummary:
    parsed = _nvdisasm.parse_listing(listing(*lines), "nvdisasm test")
    return _sass.summarize(parsed.functions["k"], parsed.labels["k"], arch, parsed.tool)


A, B = "desc[UR4][R20.64]", "desc[UR4][R22.64]"
DATAFLOW = {
    # name: (lines, arch, loads in flight, bytes in flight)
    "three-independent": ([f"LDG.E R2, {A}", f"LDG.E R3, {B}", f"LDG.E R4, {A}", "FADD R5, R2, R3",
                           "FADD R5, R5, R4", f"STG.E {B}, R5", "EXIT"], "sm_90", 3, 12),
    "dependent-address": ([f"LDG.E R2, {A}", "IMAD.WIDE R6, R2, 0x4, R20", "LDG.E R7, desc[UR4][R6.64]",
                           f"STG.E {B}, R7", "EXIT"], "sm_90", 1, 4),
    "overwritten-register-waits": ([f"LDG.E R2, {A}", "MOV R2, RZ", f"LDG.E R3, {B}", "FADD R4, R2, R3",
                                    "EXIT"], "sm_90", 1, 4),
    # DADD reads the pair R2:R3, so the load into R3 is used there
    "fp64-pair": ([f"LDG.E R3, {A}", f"LDG.E R8, {B}", f"LDG.E R9, {A}", "DADD R4, R2, R6", f"LDG.E R12, {B}",
                   "FADD R0, R8, R9", "FADD R0, R0, R12", "EXIT"], "sm_90", 3, 12),
    # LDG.E.128 writes R4..R7: reading R7 waits for it
    "vector-width": ([f"LDG.E.128 R4, {A}", "FADD R0, R7, R7", f"LDG.E R8, {B}", "FADD R0, R0, R8", "EXIT"],
                     "sm_90", 1, 16),
    # before sm_80 an address prints as [R2] and is the pair R2:R3
    "sm75-implicit-64-bit-address": (["LDG.E.SYS R3, [R10]", "LDG.E.SYS R4, [R2]", "FADD R0, R4, R4", "EXIT"],
                                     "sm_75", 1, 4),
    "sm90-32-bit-register": (["LDG.E R3, desc[UR4][R10.64]", "LDS R4, [R2]", "FADD R0, R4, R3", "EXIT"],
                             "sm_90", 1, 4),
    "predicated-loads-count": ([f"@P0 LDG.E R2, {A}", f"@!P1 LDG.E R3, {B}", "FADD R4, R2, R3", "EXIT"],
                               "sm_90", 2, 8),
    "never-true-guard-ignored": ([f"@!PT LDG.E R2, {A}", f"LDG.E R3, {B}", "FADD R4, R3, R3", "EXIT"],
                                 "sm_90", 1, 4),
    "widths-add-up": ([f"LDG.E.64 R2, {A}", f"LDG.E.128 R4, {B}", f"LDG.E.U8 R8, {A}", "IADD3 R0, R2, R4, R8",
                       "EXIT"], "sm_90", 3, 25),
    # the load into R4 for the next iteration is still in flight when R6's is issued
    "hoisted-across-back-edge": (["L0:", f"LDG.E R6, {A}", "FADD R0, R0, R6", "FADD R1, R1, R4",
                                  f"LDG.E R4, {B}", "ISETP.NE.AND P0, PT, R0, RZ, PT", "@P0 BRA `(L0)", "EXIT"],
                                 "sm_90", 2, 8),
    "no-global-loads": (["LDS R2, [R3]", "FADD R2, R2, R2", "EXIT"], "sm_90", 0, 0),
}


@pytest.mark.parametrize("name", list(DATAFLOW), ids=list(DATAFLOW))
def test_dataflow_rules(name):
    lines, arch, in_flight, nbytes = DATAFLOW[name]
    s = summary(*lines, arch=arch)
    assert s.global_loads_in_flight_per_thread == in_flight
    assert s.global_load_bytes_in_flight_per_thread == nbytes
    assert (s.global_load_instruction is None) == (in_flight == 0)


CLASSES = [
    ("LDG.E R2, desc[UR4][R4.64]", "global_loads"), ("LD.E R2, [R4.64]", "global_loads"),
    ("STG.E desc[UR4][R4.64], R2", "global_stores"), ("ST.E [R4.64], R2", "global_stores"),
    ("LDL R2, [R1+0x10]", "local_loads"), ("STL [R1+0x10], R2", "local_stores"),
    ("LDS.U.128 R4, [R2]", "shared_loads"), ("LDSM.16.M88.4 R4, [R2]", "shared_loads"),
    ("STS [R2], R4", "shared_stores"), ("STSM.16.M88.4 [R2], R4", "shared_stores"),
    ("LDGSTS.E.BYPASS.128 [R2], desc[UR4][R4.64]", "async_copies"), ("UTMALDG.2D [UR8], [UR4]", "async_copies"),
    ("ATOMG.E.ADD.F32.FTZ.RN.STRONG.GPU PT, R2, desc[UR4][R4.64], R6", "atomics"),
    ("RED.E.ADD.STRONG.GPU desc[UR4][R4.64], R6", "atomics"), ("ATOMS.ADD R2, [R3], R4", "atomics"),
    ("ATOMS.CAS R5, [R6], R4, R5", "atomics"),
    ("BAR.SYNC.DEFER_BLOCKING 0x0", "barriers"), ("BAR.ARV 0x1, 0x40", "barriers"),
    ("SHFL.BFLY PT, R3, R2, 0x1, 0x1f", "shuffles"),
    ("FFMA R2, R3, R4, R5", "fp32_fma"), ("FFMA2 R2, R4.F32x2.HI_LO, R6.F32, R8", "fp32_fma"),
    ("FADD.FTZ R2, R3, R4", "fp32_add"), ("FMUL R2, R3, 0.5", "fp32_mul"),
    ("DFMA R2, R4, R6, R8", "fp64"), ("DSETP.GT.AND P0, PT, R2, R4, PT", "fp64"),
    ("HMMA.16816.F32 R4, R8, R12, R4", "tensor"), ("DMMA.8x8x4 R4, R8, R12, R4", "tensor"),
    ("HGMMA.64x128x16.F32 R24, gdesc[UR4], RZ, !UPT", "tensor"), ("IMMA.16832.S8.S8 R4, R8, R12, R4", "tensor"),
    ("@P0 BRA `(L0)", "branches"), ("BRX R2 -0x100", "branches"), ("@P0 JMP `(L0)", "branches"),
]


@pytest.mark.parametrize(("line", "field"), CLASSES, ids=[f"{f}:{line.split()[0]}" for line, f in CLASSES])
def test_each_opcode_counts_in_its_class(line, field):
    s = summary("L0:", line, "EXIT")
    counts = s.instructions.model_dump()
    assert counts.pop(field) == 1 and counts.pop("total") == 2
    # a shared atomic counts among the atomics and among the shared ones; a CAS among those too
    shared = line.startswith("ATOMS")
    assert (counts.pop("shared_atomics"), counts.pop("shared_cas")) == (shared, line.startswith("ATOMS.CAS"))
    assert not any(counts.values()), counts


THREAD_INDEX = {
    # name: (lines, the components read)
    "x-only": (["S2R R0, SR_TID.X", "S2R R1, SR_CTAID.X", "IMAD R0, R1, c[0x0][0x0], R0", "EXIT"], ("x",)),
    "y-and-z": (["S2R R0, SR_TID.Z", "S2R R2, SR_TID.Y", "IADD3 R0, R0, R2, RZ", "EXIT"], ("y", "z")),
    "none": (["S2R R1, SR_CTAID.X", "S2R R2, SR_LANEID", "EXIT"], ()),
    "warp-index": (["S2R R0, SR_TID.X", "S2R R3, SR_WARPID", "EXIT"], ("x", "y", "z")),
    "never-true-guard": (["S2R R0, SR_TID.X", "@!PT S2R R2, SR_TID.Y", "EXIT"], ("x",)),
}


@pytest.mark.parametrize("name", list(THREAD_INDEX), ids=list(THREAD_INDEX))
def test_the_thread_index_components_read(name):
    lines, read = THREAD_INDEX[name]
    assert summary(*lines).thread_index_components == read


C = "c[0x0][0x218]"
ONE_ADDRESS = {
    # name: (lines, global atomics, of which to one address)
    "a-counter-in-a-parameter": ([f"LDC.64 R6, {C}", "ATOMG.E.ADD.STRONG.GPU PT, R2, desc[UR4][R6.64], R3", "EXIT"],
                                 1, 1),
    "a-reduction-to-a-parameter": ([f"LDC.64 R6, {C}", "REDG.E.ADD.STRONG.GPU desc[UR4][R6.64], R3", "EXIT"], 1, 1),
    "a-uniform-parameter": ([f"ULDC.64 UR6, {C}", "IMAD.U32 R6, RZ, RZ, UR6", "MOV R7, UR7",
                             "RED.E.ADD.STRONG.GPU desc[UR4][R6.64], R3", "EXIT"], 1, 1),
    "indexed-by-the-thread": (["S2R R0, SR_TID.X", f"LDC.64 R6, {C}", "IMAD.WIDE R6, R0, 0x4, R6",
                               "REDG.E.ADD.STRONG.GPU desc[UR4][R6.64], R3", "EXIT"], 1, 0),
    "indexed-by-the-block": (["S2UR UR5, SR_CTAID.X", f"LDC.64 R6, {C}", "IMAD.WIDE R6, UR5, 0x4, R6",
                              "REDG.E.ADD.STRONG.GPU desc[UR4][R6.64], R3", "EXIT"], 1, 0),
    "indexed-by-a-loaded-value": ([f"LDG.E R0, {A}", f"LDC.64 R6, {C}", "IMAD.WIDE R6, R0, 0x4, R6",
                                   "ATOMG.E.ADD.STRONG.GPU PT, R2, desc[UR4][R6.64], R3", "EXIT"], 1, 0),
    "stepped-by-a-loop": ([f"LDC.64 R6, {C}", "L0:", "REDG.E.ADD.STRONG.GPU desc[UR4][R6.64], R3",
                           "IADD3 R6, P1, R6, 0x4, RZ", "@P0 BRA `(L0)", "EXIT"], 1, 0),
    "rewritten-before-use": (["S2R R0, SR_TID.X", "IMAD.WIDE R6, R0, 0x4, R6", f"LDC.64 R6, {C}",
                              "REDG.E.ADD.STRONG.GPU desc[UR4][R6.64], R3", "EXIT"], 1, 1),
    "a-guarded-rewrite-keeps-the-thread": ([f"LDC.64 R6, {C}", "S2R R0, SR_TID.X", "@P0 IMAD.WIDE R6, R0, 0x4, R6",
                                            "REDG.E.ADD.STRONG.GPU desc[UR4][R6.64], R3", "EXIT"], 1, 0),
    "shared-atomics-are-not-global": (["ATOMS.ADD R2, [R4], R3", "EXIT"], 0, 0),
}
ONE_ADDRESS_TYPE = {
    # name: (lines, SassSummary.global_atomics_one_address_type)
    "a-float-add": ([f"LDC.64 R6, {C}", "REDG.E.ADD.F32.FTZ.RN.STRONG.GPU desc[UR4][R6.64], R3", "EXIT"], "f32"),
    "a-double-add": ([f"LDC.64 R6, {C}", "REDG.E.ADD.F64.RN.STRONG.GPU desc[UR4][R6.64], R4", "EXIT"], "f64"),
    "a-returning-float-add": ([f"LDC.64 R6, {C}", "ATOMG.E.ADD.F32.FTZ.RN.STRONG.GPU PT, R2, desc[UR4][R6.64], R3",
                               "EXIT"], "f32"),
    "an-integer-add": ([f"LDC.64 R6, {C}", "REDG.E.ADD.STRONG.GPU desc[UR4][R6.64], R3", "EXIT"], "other"),
    "a-compare-and-swap": ([f"LDC.64 R6, {C}", "ATOMG.E.CAS.STRONG.GPU PT, R2, [R6], R4, R5", "EXIT"], "other"),
    "a-half-pair-add": ([f"LDC.64 R6, {C}", "REDG.E.ADD.F16x2.RN.STRONG.GPU desc[UR4][R6.64], R3", "EXIT"], "other"),
    "float-and-double": ([f"LDC.64 R6, {C}", "REDG.E.ADD.F32.FTZ.RN.STRONG.GPU desc[UR4][R6.64], R3",
                          "REDG.E.ADD.F64.RN.STRONG.GPU desc[UR4][R6.64], R4", "EXIT"], "other"),
    "a-float-max-is-not-an-add": ([f"LDC.64 R6, {C}", "REDG.E.MAX.F32.FTZ.RN.STRONG.GPU desc[UR4][R6.64], R3",
                                   "EXIT"], "other"),
    "a-float-add-by-the-thread": (["S2R R0, SR_TID.X", f"LDC.64 R6, {C}", "IMAD.WIDE R6, R0, 0x4, R6",
                                   "REDG.E.ADD.F32.FTZ.RN.STRONG.GPU desc[UR4][R6.64], R3", "EXIT"], None),
    "no-atomics": ([f"LDC.64 R6, {C}", "STG.E desc[UR4][R6.64], R3", "EXIT"], None),
}
FLAGS = {
    # name: (lines, global stores to one address)
    "a-flag-in-a-parameter": (["S2R R0, SR_TID.X", f"LDC.64 R6, {C}", "IMAD.WIDE R4, R0, 0x4, R6",
                               "STG.E desc[UR4][R4.64], R3", "STG.E desc[UR4][R6.64], RZ", "EXIT"], 1),
    "every-store-indexed": (["S2R R0, SR_TID.X", f"LDC.64 R6, {C}", "IMAD.WIDE R4, R0, 0x4, R6",
                             "STG.E desc[UR4][R4.64], R3", "EXIT"], 0),
    "shared-stores-are-not-global": (["STS [R4], R3", "EXIT"], 0),
}


P = "c[0x0][0x220]"
LOAD_SOURCES = {
    # name: (lines of a loop L0 and what comes before it, what reaches the hot loop's load)
    "a-pointer-stepped-a-word-at-a-time": ([f"LDC.64 R4, {P}", "L0:", "LDG.E R0, desc[UR4][R4.64]",
                                            "IADD3 R4, P1, R4, 0x4, RZ", "IADD3.X R5, RZ, R5, RZ, P1, !PT",
                                            "@P0 BRA `(L0)", "EXIT"], ("loop",)),
    "a-pointer-stepped-a-row-at-a-time": ([f"LDC.64 R4, {P}", "L0:", "LDG.E R0, desc[UR4][R4.64]",
                                           "IADD3 R4, P1, R4, 0x1000, RZ", "IADD3.X R5, RZ, R5, RZ, P1, !PT",
                                           "@P0 BRA `(L0)", "EXIT"], ("loop", "stride")),
    "stepped-through-a-copy": ([f"LDC.64 R4, {P}", "L0:", "LDG.E R0, desc[UR4][R4.64]",
                                "IADD3 R8, P1, R4, 0x200, RZ", "IADD3.X R9, RZ, R5, RZ, P1, !PT", "MOV R4, R8",
                                "IMAD.MOV.U32 R5, RZ, RZ, R9", "@P0 BRA `(L0)", "EXIT"], ("loop", "stride")),
    "a-counter-scaled-by-a-word": (["MOV R2, RZ", f"LDC.64 R6, {P}", "L0:", "IMAD.WIDE R4, R2, 0x4, R6",
                                    "LDG.E R0, desc[UR4][R4.64]", "IADD3 R2, R2, 0x1, RZ", "@P0 BRA `(L0)", "EXIT"],
                                   ("loop",)),
    "a-counter-scaled-by-a-run-time-pitch": (["MOV R2, RZ", "LDC R3, c[0x0][0x228]", f"LDC.64 R6, {P}", "L0:",
                                              "IMAD R8, R2, R3, RZ", "IMAD.WIDE R4, R8, 0x4, R6",
                                              "LDG.E R0, desc[UR4][R4.64]", "IADD3 R2, R2, 0x1, RZ",
                                              "@P0 BRA `(L0)", "EXIT"], ("loop", "stride")),
    "a-column-of-the-thread-and-block": (["S2R R1, SR_TID.Y", "S2UR UR5, SR_CTAID.X", "IMAD R1, R1, UR5, RZ",
                                          f"LDC.64 R6, {P}", "IMAD.WIDE R4, R1, 0x4, R6", "L0:",
                                          "LDG.E R0, desc[UR4][R4.64]", "@P0 BRA `(L0)", "EXIT"],
                                         ("y", "ctaid.x")),
    "a-gather": ([f"LDC.64 R6, {P}", "L0:", "LDG.E R1, desc[UR4][R6.64]", "IMAD.WIDE R4, R1, 0x4, R6",
                  "LDG.E R0, desc[UR4][R4.64]", "@P0 BRA `(L0)", "EXIT"], ("data",)),
}


@pytest.mark.parametrize("name", list(LOAD_SOURCES), ids=list(LOAD_SOURCES))
def test_what_reaches_the_address_of_a_hot_loop_load(name):
    lines, sources = LOAD_SOURCES[name]
    assert summary(*lines).hot_loop_load_sources[-1] == sources


TRIP_INDEX = {
    # name: (lines, the hot loop's (index_trips, trips_per_index))
    "a-counter-from-the-grid-index": (["S2R R0, SR_TID.X", "S2UR UR5, SR_CTAID.X", "ULDC UR4, c[0x0][0x0]",
                                       "UIMAD UR4, UR4, UR5, URZ", "IADD3 R2, R0, UR4, RZ", f"LDC.64 R6, {P}",
                                       "ULDC UR8, c[0x0][0x210]", "L0:", "IMAD.WIDE R4, R2, 0x4, R6",
                                       "LDG.E R0, desc[UR4][R4.64]", "VIADD R2, R2, 0x4",
                                       "ISETP.GE.AND P1, PT, R2, UR8, PT", "@!P1 BRA `(L0)", "EXIT"],
                                      ("global", 0.25)),
    "a-bound-from-the-thread-index": (["S2R R3, SR_TID.X", "MOV R2, RZ", f"LDC.64 R6, {P}", "L0:",
                                       "IMAD.WIDE R4, R2, 0x4, R6", "LDG.E R0, desc[UR4][R4.64]",
                                       "IADD3 R2, R2, 0x1, RZ", "ISETP.GE.AND P1, PT, R2, R3, PT",
                                       "@!P1 BRA `(L0)", "EXIT"], ("thread", 1.0)),
    "a-counter-from-the-block-index": (["S2UR UR5, SR_CTAID.X", "IMAD.U32 R2, RZ, RZ, UR5", f"LDC.64 R6, {P}",
                                        "L0:", "IMAD.WIDE R4, R2, 0x4, R6", "LDG.E R0, desc[UR4][R4.64]",
                                        "IADD3 R2, R2, 0x1, RZ", "ISETP.GE.AND P1, PT, R2, c[0x0][0x210], PT",
                                        "@!P1 BRA `(L0)", "EXIT"], ("block", 1.0)),
    "a-grid-stride-counter": (["S2R R2, SR_TID.X", "LDC R3, c[0x0][0x0]", f"LDC.64 R6, {P}", "L0:",
                               "IMAD.WIDE R4, R2, 0x4, R6", "LDG.E R0, desc[UR4][R4.64]", "IADD3 R2, R2, R3, RZ",
                               "ISETP.GE.AND P1, PT, R2, c[0x0][0x210], PT", "@!P1 BRA `(L0)", "EXIT"], (None, None)),
    "a-window-from-the-index": (["S2R R2, SR_TID.X", "IADD3 R3, R2, 0x10, RZ", f"LDC.64 R6, {P}", "L0:",
                                 "IMAD.WIDE R4, R2, 0x4, R6", "LDG.E R0, desc[UR4][R4.64]", "IADD3 R2, R2, 0x1, RZ",
                                 "ISETP.GE.AND P1, PT, R2, R3, PT", "@!P1 BRA `(L0)", "EXIT"], (None, None)),
    "a-bound-loaded-from-memory": (["S2R R2, SR_TID.X", f"LDC.64 R6, {P}", "LDG.E R3, desc[UR4][R6.64]", "L0:",
                                    "IMAD.WIDE R4, R2, 0x4, R6", "LDG.E R0, desc[UR4][R4.64]",
                                    "IADD3 R2, R2, 0x1, RZ", "ISETP.GE.AND P1, PT, R2, R3, PT", "@!P1 BRA `(L0)",
                                    "EXIT"], (None, None)),
    "the-values-compared-not-those-at-the-back-edge": (["S2R R3, SR_TID.X", "MOV R2, RZ", "ULDC UR8, c[0x0][0x210]",
                                                    f"LDC.64 R6, {P}", "L0:", "IMAD.WIDE R4, R2, 0x4, R6",
                                                    "LDG.E R0, desc[UR4][R4.64]", "IADD3 R2, R2, 0x1, RZ",
                                                    "ISETP.GE.AND P1, PT, R2, UR8, PT", "MOV R2, R3",
                                                    "@!P1 BRA `(L0)", "EXIT"], (None, None)),
}


LONE = {
    # name: (lines before a loop L0 (`LOOP`), SassSummary.lone_thread); then whole listings
    "the-grid-index-is-zero": (["S2R R0, SR_TID.X", "S2UR UR5, SR_CTAID.X", "ULDC UR4, c[0x0][0x0]",
                                "UIMAD UR4, UR4, UR5, URZ", "IADD3 R0, -R0, RZ, RZ",
                                "ISETP.NE.AND P0, PT, R0, UR4, PT", "@P0 EXIT"], "global"),
    "thread-zero-of-each-block": (["S2R R0, SR_TID.X", "ISETP.NE.AND P0, PT, R0, RZ, PT", "@P0 EXIT"], "thread"),
    "an-equal-test-negated": (["S2R R0, SR_TID.X", "ISETP.EQ.AND P0, PT, R0, 0x3, PT", "@!P0 EXIT"], "thread"),
    "a-bound-keeps-many": (["S2R R0, SR_TID.X", "ISETP.GE.AND P0, PT, R0, c[0x0][0x210], PT", "@P0 EXIT"], None),
    "an-exit-on-equal-keeps-the-rest": (["S2R R0, SR_TID.X", "ISETP.EQ.AND P0, PT, R0, RZ, PT", "@P0 EXIT"], None),
    "a-loaded-value": ([f"LDC.64 R6, {P}", "LDG.E R0, desc[UR4][R6.64]", "ISETP.NE.AND P0, PT, R0, RZ, PT",
                        "@P0 EXIT"], None),
}


LOOP = [f"LDC.64 R6, {P}", "L0:", "LDG.E R2, desc[UR4][R6.64]", "@P1 BRA `(L0)", "EXIT"]
LONE = {name: ([*lines, *LOOP], lone) for name, (lines, lone) in LONE.items()}
LONE |= {
    # name: (lines, SassSummary.lone_thread)
    "a-branch-over-the-loop": (["S2R R0, SR_TID.X", "ISETP.NE.AND P0, PT, R0, RZ, PT", "@P0 BRA `(L1)",
                                f"LDC.64 R6, {P}", "L0:", "LDG.E R2, desc[UR4][R6.64]", "@P1 BRA `(L0)", "L1:",
                                "BAR.SYNC.DEFER_BLOCKING 0x0", "EXIT"], "thread"),
    "a-branch-that-lands-before-the-loop": (["S2R R0, SR_TID.X", "ISETP.NE.AND P0, PT, R0, RZ, PT", "@P0 BRA `(L1)",
                                             "IADD3 R3, R3, 0x1, RZ", "L1:", f"LDC.64 R6, {P}", "L0:",
                                             "LDG.E R2, desc[UR4][R6.64]", "@P1 BRA `(L0)", "EXIT"], None),
    "an-exit-after-the-loop": ([f"LDC.64 R6, {P}", "L0:", "LDG.E R2, desc[UR4][R6.64]", "@P1 BRA `(L0)",
                                "S2R R0, SR_TID.X", "ISETP.NE.AND P0, PT, R0, RZ, PT", "@P0 EXIT", "EXIT"], None),
}


@pytest.mark.parametrize("name", list(LONE), ids=list(LONE))
def test_an_exit_or_a_branch_over_the_loop_that_keeps_one_thread(name):
    lines, lone = LONE[name]
    assert summary(*lines).lone_thread == lone


@pytest.mark.parametrize("name", list(TRIP_INDEX), ids=list(TRIP_INDEX))
def test_which_index_a_loops_trips_follow(name):
    lines, (follows, per_index) = TRIP_INDEX[name]
    s = summary(*lines)
    hot = s.loops[s.hot_loop]
    assert (hot.index_trips, hot.trips_per_index) == (follows, per_index)


def test_no_hot_loop_no_load_sources():
    assert summary(f"LDC.64 R6, {P}", "LDG.E R0, desc[UR4][R6.64]", "EXIT").hot_loop_load_sources == ()


@pytest.mark.parametrize("name", list(FLAGS), ids=list(FLAGS))
def test_stores_to_one_address(name):
    lines, one = FLAGS[name]
    assert summary(*lines).global_stores_one_address == one


@pytest.mark.parametrize("name", list(ONE_ADDRESS), ids=list(ONE_ADDRESS))
def test_atomics_to_one_address(name):
    lines, atomics, one = ONE_ADDRESS[name]
    s = summary(*lines)
    assert (s.global_atomics, s.global_atomics_one_address) == (atomics, one)


@pytest.mark.parametrize("name", list(ONE_ADDRESS_TYPE), ids=list(ONE_ADDRESS_TYPE))
def test_the_type_of_the_atomics_to_one_address(name):
    lines, kind = ONE_ADDRESS_TYPE[name]
    assert summary(*lines).global_atomics_one_address_type == kind


PATHS = {
    # name: (lines, instructions, longest path outside the loops)
    "straight": (["MOV R0, RZ", "FADD R0, R0, R0", "EXIT"], 3, 3),
    # if/else: the guarded branch, the longer side (3) and its jump over the other (2), the join (2)
    "if-else": (["@P0 BRA `(L1)", "FADD R0, R0, R0", "FADD R0, R0, R0", "FADD R0, R0, R0", "BRA `(L2)", "L1:",
                 "FMUL R0, R0, R0", "FMUL R0, R0, R0", "L2:", f"STG.E {A}, R0", "EXIT"], 9, 7),
    # an exit with no guard ends the path; a guarded one goes on; code no branch reaches is not
    # listed among what runs
    "early-exit": (["@P0 EXIT", "FADD R0, R0, R0", "EXIT", "FMUL R1, R1, R1"], 3, 3),
    # a loop is a step of none: the code around it, 2 + 2
    "loop": (["MOV R0, RZ", "L0:", "FADD R0, R0, R0", "FADD R0, R0, R0", "@P0 BRA `(L0)", f"STG.E {A}, R0",
              "EXIT"], 6, 3),
    # a branch into a loop's code goes on after the loop
    "skip-into-loop": (["@P1 BRA `(L0)", "MOV R1, RZ", "MOV R2, RZ", "L0:", "FADD R0, R0, R0", "@P0 BRA `(L0)",
                        "EXIT"], 6, 4),
    # a call adds its callee's path to its RET: 1 + 4 (+ the call) + 1; the callee listed after the exit
    "call": (["MOV R0, RZ", "CALL.REL.NOINC `(F0)", f"STG.E {A}, R0", "EXIT", "F0:", "FADD R0, R0, R0",
              "FADD R0, R0, R0", "FADD R0, R0, R0", "RET.REL.NODEC R2 `(k)"], 8, 8),
    # a division's slow path called on one side only: the longest path takes it
    "guarded-call": (["@P0 BRA `(L1)", "CALL.REL.NOINC `(F0)", "L1:", "EXIT", "F0:", "FADD R0, R0, R0",
                      "FADD R0, R0, R0", "RET.REL.NODEC R2 `(k)"], 6, 6),
    # a jump table: the targets are not in the listing
    "jump-table": (["BRX R4 -0x120", "FADD R0, R0, R0", "EXIT", "FMUL R0, R0, R0", "EXIT"], 5, None),
}


# The cold code the compiler lists after a function's exit (2026-12-08, a new user's trial of
# LeetCUDA): a diverged warp's shuffle fallback, reached by BRA.DIV and branching back into the
# function, read as a loop; a division's slow path, reached by a CALL.
COLD = {
    # name: (lines, instructions that run, loops)
    "shuffle-fallback": (["MOV R0, RZ", "L0:", "SHFL.BFLY PT, R1, R0, 0x1, 0x1f", "BRA.DIV UR4, `(L9)", "L1:",
                          "FADD R0, R0, R1", f"STG.E {A}, R0", "EXIT", "L9:", "WARPSYNC.COLLECTIVE R8, `(L8)",
                          "SHFL.BFLY P0, R1, R0, R9, R10", "L8:", "BRA `(L1)"], 6, 0),
    "division-slow-path": (["MOV R0, RZ", "CALL.REL.NOINC `($__internal_0_$__cuda_sm3x_div_rn_noftz_f32_slowpath)",
                            f"STG.E {A}, R0", "EXIT", "$__internal_0_$__cuda_sm3x_div_rn_noftz_f32_slowpath:",
                            "FADD R0, R0, R0", "FADD R0, R0, R0", "RET.REL.NODEC R2 `(k)"], 4, 0),
    # a uniform predicate in the branch's operands is its condition: the loop body runs
    "uniform-predicate": (["MOV R0, RZ", "BRA.U !UP0, `(L2)", "L1:", f"LDG.E R1, {A}", "FADD R0, R0, R1",
                           "BRA.U UP1, `(L1)", "L2:", f"STG.E {A}, R0", "EXIT"], 7, 1),
}


@pytest.mark.parametrize("name", list(COLD), ids=list(COLD))
def test_the_cold_code_after_the_exit_is_not_what_runs(name):
    lines, total, loops = COLD[name]
    s = summary(*lines)
    assert (s.instructions.total, len(s.loops)) == (total, loops)


@pytest.mark.parametrize("name", list(PATHS), ids=list(PATHS))
def test_the_longest_path_outside_the_loops(name):
    lines, total, path = PATHS[name]
    s = summary(*lines)
    assert (s.instructions.total, s.longest_path_instructions) == (total, path)


def test_padding_and_the_trap_are_not_counted():
    s = summary("MOV R0, RZ", "EXIT", "L9:", "BRA `(L9)", "NOP", "NOP")
    assert s.instructions.total == 2 and s.instructions.branches == 0 and s.loops == ()


def test_nested_loops_and_the_hot_loop():
    s = summary("MOV R0, RZ", "L0:", "MOV R1, RZ", "L1:", f"LDG.E R2, {A}", f"LDG.E R3, {B}", "FADD R4, R2, R3",
                "@P1 BRA `(L1)", "FFMA R5, R4, R4, R5", "@P0 BRA `(L0)", "L2:", "FADD R6, R6, R6", "@P2 BRA `(L2)",
                f"STG.E {A}, R5", "EXIT")
    assert [(loop.depth, loop.instructions.global_loads) for loop in s.loops] == [(1, 2), (2, 2), (1, 0)]
    assert s.hot_loop == 1 and s.global_loads_in_flight_per_thread == 2
    assert s.loops[0].instructions.branches == 2 and s.loops[0].instructions.fp32_fma == 1
    assert (s.loops[1].start_offset, s.loops[1].end_offset) == (0x20, 0x50)


@pytest.mark.parametrize(("own", "fewest"), [
    # the outer loop's own code: bursts of loads, each ended by the first wait for one of them
    ([f"LDG.E R2, {A}", "FADD R9, R2, R9", f"LDG.E R3, {A}", f"LDG.E R4, {B}", "FADD R9, R3, R4"], 1),
    ([f"LDG.E R3, {A}", f"LDG.E R4, {B}", "FADD R9, R3, R4", f"LDG.E R5, {A}", f"LDG.E R6, {B}",
      f"LDG.E R7, {A}", "FADD R9, R5, R9"], 2),   # a wait for the first of three ends a burst of three
    ([f"LDG.E R3, {A}", f"LDG.E R4, {B}"], 2),     # never waited for in the loop: one burst at its end
    (["FADD R9, R9, R9"], 0),                      # no loads of its own
])
def test_the_fewest_loads_a_loop_s_own_code_waits_for(own, fewest):
    # the inner loop's eight loads belong to it, not to the loop around it
    inner = [f"LDG.E R{10 + i}, {A if i % 2 else B}" for i in range(8)]
    s = summary("L0:", *own, "L1:", *inner, *[f"FADD R9, R{10 + i}, R9" for i in range(8)], "@P1 BRA `(L1)",
                "@P0 BRA `(L0)", "EXIT")
    assert [loop.depth for loop in s.loops] == [1, 2] and s.hot_loop == 1
    assert s.loops[0].fewest_loads_in_flight == fewest
    assert s.loops[1].fewest_loads_in_flight == 8  # its own eight, issued before the first wait


def test_without_global_loads_in_loops_the_kernel_is_walked():
    s = summary(f"LDG.E R2, {A}", f"LDG.E R3, {B}", "L0:", "FADD R2, R2, R2", "@P0 BRA `(L0)", "L1:",
                "FADD R3, R3, R3", "FADD R3, R3, R3", "@P0 BRA `(L1)", "EXIT")
    assert s.hot_loop == 1  # the deepest, then the largest
    assert s.global_loads_in_flight_per_thread == 2


def test_hand_counted_grid_stride_copy():
    """grid_stride_copy with EPT=8 for sm_90, as nvcc 13.0 built it (tests/data/sass).

    By hand, in the loop 0x00c0-0x0530: loads into R11 (0x0120), R6 (0x0280), R7 (0x02a0),
    R23 (0x02f0), R24 (0x0300); the STG at 0x0340 reads R11 (4 left); loads into R25
    (0x03a0), R22 (0x03c0), R26 (0x03e0): 7 outstanding when the STG at 0x0460 reads R6.
    Nothing in between names those registers, and the previous iteration's loads were all
    stored before the back edge: 7 in flight, 4 bytes each. The compiler's scoreboards say
    the same: the STG at 0x0340 waits for SB2 (R11's alone), the one at 0x0460 for SB5.
    """
    parsed = _nvdisasm.parse_listing((DATA / "grid_stride_copy_ept8_sm90.sass").read_text(), "nvdisasm 13.5.37")
    s = _sass.summarize(parsed.functions["grid_stride_copy"], parsed.labels["grid_stride_copy"], "sm_90",
                        parsed.tool)
    assert [(loop.start_offset, loop.end_offset) for loop in s.loops] == [(0x00C0, 0x0530)]
    assert s.loops[0].instructions.global_loads == 8 == s.loops[0].instructions.global_stores
    assert (s.global_loads_in_flight_per_thread, s.global_load_bytes, s.global_load_instruction) == (7, 4, "LDG.E")


# ------------------------------------------------------------------ real kernels


def _nvcc() -> str | None:
    return shutil.which("nvcc") or next(iter(sorted(glob.glob("/usr/local/cuda*/bin/nvcc"), reverse=True)), None)


@pytest.fixture(scope="module")
def nvdisasm() -> str:
    found = _nvdisasm.nvdisasm_candidates()
    if not found:
        pytest.skip(f"nvdisasm is not installed ({_nvdisasm.INSTALL_HINT})")
    return found[0]


@pytest.fixture(scope="module")
def cubins(nvdisasm, tmp_path_factory) -> dict[str, bytes]:
    """sass_kernels.cu for every architecture of COMPILED, from one nvcc call; another of ARCHS
    skips its test."""
    nvcc = _nvcc()
    if nvcc is None:
        pytest.skip("nvcc is not installed")
    out = tmp_path_factory.mktemp("sass") / "sass_kernels.fatbin"
    gencode = [f"-gencode=arch=compute_{a[3:]},code={a}" for a in COMPILED]
    subprocess.run([nvcc, "-fatbin", *gencode, "-o", str(out), str(SOURCE)], check=True, capture_output=True)
    return _Cubins({f"sm_{e.sm}": e.data for e in fatbin_entries(out.read_bytes()) if e.kind == "cubin"})


class _Cubins(dict):
    """The compiled cubins by architecture; an architecture of ARCHS sampled out of the default
    run skips the test that asks for it."""

    def __missing__(self, arch: str) -> bytes:
        if arch in ARCHS and arch not in COMPILED:
            pytest.skip(f"{arch}: sampled out of the default run (GPUROOF_TEST_FULL=1, make test-full, compiles it)")
        raise KeyError(arch)


@pytest.fixture(scope="module")
def grid_stride(nvdisasm) -> dict[int, bytes]:
    """families.cu's grid_stride_copy for sm_90 at each EPT the H200 measured, through NVRTC
    (as validate compiles it)."""
    from validate.device import _compile
    from occupancy._compile import compile_source

    source = _compile.kernel_source("families.cu")
    try:
        return {ept: compile_source(_compile.with_defines(source, {"EPT": ept}), "sm_90").cubin
                for ept in (1, 2, 4, 8, 16)}
    except ImportError as exc:
        pytest.skip(f"NVRTC is not installed: {exc}")


def hex_listing(tool: str, cubin: bytes, tmp_path: Path) -> str:
    path = tmp_path / "k.cubin"
    path.write_bytes(cubin)
    return subprocess.run([tool, "-c", "-hex", str(path)], capture_output=True, text=True, check=True).stdout


def listing_oracle(text: str, kernel: str, first: int = 0, last: int = 1 << 30) -> dict[str, int]:
    """Counts of opcode classes in one function's lines of a plain listing, by pattern."""
    section = text.split(f".section\t.text.{kernel},")[1].split("\t.section\t")[0]
    counts = dict.fromkeys(PATTERNS, 0)
    for m in re.finditer(r"/\*([0-9a-f]{4,})\*/\s+(@!?U?P\w+\s+)?([A-Z0-9_.]+)([^;]*);", section):
        if not first <= int(m[1], 16) <= last or m[3] == "NOP" or (m[2] or "").strip() == "@!PT":
            continue
        label = re.fullmatch(r"\s*`\((.+)\)\s*", m[4])
        if m[3] == "BRA" and not m[2] and label and re.search(rf"^{re.escape(label[1])}:\s*\n\s*/\*{m[1]}\*/",
                                                              section, re.M):
            continue  # the branch to itself ending every function
        counts["total"] += 1
        for field, pattern in PATTERNS.items():
            if field != "total" and re.fullmatch(pattern, m[3]):
                counts[field] += 1
    return counts


PATTERNS = {
    "total": r".*", "global_loads": r"LDG(\..*)?|LD(\..*)?", "global_stores": r"STG(\..*)?|ST(\..*)?",
    "shared_loads": r"LDS(M)?(\..*)?", "shared_stores": r"STS(M)?(\..*)?", "local_loads": r"LDL(\..*)?",
    "local_stores": r"STL(\..*)?", "barriers": r"BAR(\..*)?", "shuffles": r"SHFL(\..*)?", "fp32_fma": r"FFMA2?(\..*)?",
    "fp32_add": r"FADD2?(\..*)?", "fp32_mul": r"FMUL2?(\..*)?", "fp64": r"D(FMA|ADD|MUL|SETP|MNMX|SET)(\..*)?",
    "tensor": r"[A-Z]*MMA(\..*)?", "branches": r"(BRA|BRX|BRXU|JMP|JMX|JMXU)(\..*)?",
}


def scoreboard_in_flight(text: str, kernel: str, first: int = 0, last: int = 1 << 30, passes: int = 1) -> int:
    """Global loads outstanding at once, as the compiler's scoreboards let them be.

    Each LDG/LD names the scoreboard (0-5) it releases on completion (bits 110-112; 7 is
    none); an instruction waits, before it issues, for every scoreboard of its wait mask
    (bits 116-121), and DEPBAR.LE SBn, k waits until k operations are left on SBn.
    """
    section = text.split(f".section\t.text.{kernel},")[1].split("\t.section\t")[0]
    rows = re.findall(r"/\*([0-9a-f]{4,})\*/\s+([^;]*);\s+/\* 0x[0-9a-f]+ \*/\s*\n\s*/\* (0x[0-9a-f]+) \*/", section)
    pending: dict[int, list[int]] = {sb: [] for sb in range(7)}
    best = 0
    for walk in range(passes):
        for offset, instruction, high in rows:
            if not first <= int(offset, 16) <= last:
                continue
            control = int(high, 16) >> 41
            for sb in range(6):
                if control >> (11 + sb) & 1:
                    pending[sb].clear()
            if m := re.search(r"DEPBAR\.LE SB(\d), (0x[0-9a-f]+|\d+)", instruction):
                left = pending[int(m[1])]
                del left[: max(0, len(left) - int(m[2], 0))]
            words = instruction.split()
            opcode = words[1] if words[0].startswith("@") else words[0]
            if opcode.split(".")[0] in ("LDG", "LD") and not instruction.startswith("@!PT"):
                pending[control >> 5 & 7].append(int(offset, 16))
                if walk == passes - 1:
                    best = max(best, sum(len(v) for sb, v in pending.items() if sb < 6))
    return best


EXPECTED = {
    # kernel: (loads in flight, bytes per load, instruction), from the source
    "loads_1": (1, 4, "LDG.E"), "loads_2": (2, 4, "LDG.E"), "loads_4": (4, 4, "LDG.E"), "loads_8": (8, 4, "LDG.E"),
    "loop_loads_1": (1, 4, "LDG.E"), "loop_loads_2": (2, 4, "LDG.E"), "loop_loads_4": (4, 4, "LDG.E"),
    "loop_loads_8": (8, 4, "LDG.E"), "chase": (1, 4, "LDG.E"), "vector4": (1, 16, "LDG.E.128"),
    "fp64": (1, 8, "LDG.E.64"), "tree": (1, 4, "LDG.E"), "divergent": (1, 4, "LDG.E"),
}
CASES = [(arch, kernel) for arch in ARCHS for kernel in EXPECTED]


@pytest.mark.parametrize(("arch", "kernel"), CASES, ids=[f"{a}-{k}" for a, k in CASES])
def test_loads_in_flight_follow_from_the_source(cubins, arch, kernel):
    r = occupancy.kernel_resources(cubins[arch], kernel=kernel)
    assert r.sass is not None, r.sources["sass"]
    assert r.sass.architecture == arch and r.sources["sass"].startswith(f"cubin .text.{kernel}, disassembled by ")
    got = (r.sass.global_loads_in_flight_per_thread, r.sass.global_load_bytes, r.sass.global_load_instruction)
    assert got == EXPECTED[kernel]
    assert r.sass.thread_index_components == ("x",)  # every kernel there indexes with threadIdx.x alone
    if kernel.startswith("loop_"):
        assert r.sass.hot_loop is not None and r.sass.loops[r.sass.hot_loop].global_loads_in_flight == got[0]


@pytest.mark.parametrize("arch", ARCHS)
def test_counts_are_those_of_the_listing(cubins, nvdisasm, tmp_path, arch):
    path = tmp_path / "k.cubin"
    path.write_bytes(cubins[arch])
    text = subprocess.run([nvdisasm, "-c", str(path)], capture_output=True, text=True, check=True).stdout
    for kernel, r in occupancy.all_kernel_resources(cubins[arch]).items():
        got = r.sass.instructions.model_dump()
        assert {k: got[k] for k in PATTERNS} == listing_oracle(text, kernel), kernel
        for loop in r.sass.loops:
            got = loop.instructions.model_dump()
            assert {k: got[k] for k in PATTERNS} == listing_oracle(text, kernel, loop.start_offset, loop.end_offset)


def _scoreboards(r: occupancy.KernelResources, text: str) -> int:
    s = r.sass
    if s.hot_loop is not None and s.loops[s.hot_loop].instructions.global_loads:
        loop = s.loops[s.hot_loop]
        return scoreboard_in_flight(text, r.kernel, loop.start_offset, loop.end_offset, passes=2)
    return scoreboard_in_flight(text, r.kernel)


@pytest.mark.parametrize("arch", ARCHS)
def test_in_flight_equals_the_compilers_scoreboards(cubins, nvdisasm, tmp_path, arch):
    text = hex_listing(nvdisasm, cubins[arch], tmp_path)
    for kernel, r in occupancy.all_kernel_resources(cubins[arch]).items():
        assert r.sass.global_loads_in_flight_per_thread == _scoreboards(r, text), kernel


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_a_tree_of_barriers_in_a_loop(cubins, arch):
    s = occupancy.kernel_resources(cubins[arch], kernel="tree").sass
    assert len(s.loops) == 1 and s.hot_loop == 0
    body = s.loops[0].instructions
    # one tree level per iteration: s[t] += s[t + k]; __syncthreads()
    assert (body.shared_loads, body.shared_stores, body.fp32_add, body.barriers) == (2, 1, 1, 1)
    assert (s.instructions.barriers, s.instructions.shared_stores) == (2, 2)  # and the first store and barrier


@pytest.mark.parametrize("arch", ARCHS)
def test_a_counter_is_one_address_and_a_histogram_is_not(cubins, arch):
    counter = occupancy.kernel_resources(cubins[arch], kernel="counter").sass
    histogram = occupancy.kernel_resources(cubins[arch], kernel="histogram").sass
    assert counter.global_atomics >= 1 and counter.global_atomics_one_address == counter.global_atomics
    assert counter.global_atomics_one_address_type == "other"  # an int counter
    assert histogram.global_atomics_one_address_type is None
    assert histogram.global_atomics >= 1 and histogram.global_atomics_one_address == 0
    flag = occupancy.kernel_resources(cubins[arch], kernel="flag").sass
    assert (flag.instructions.global_stores, flag.global_stores_one_address) == (2, 1)
    assert counter.global_stores_one_address == histogram.global_stores_one_address == 0


# A reduction's last step, as float, double and unsigned: every thread adds its element to one total.
TOTALS = """
extern "C" __global__ void total_f32(const float* x, float* t, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) atomicAdd(t, x[i]); }
extern "C" __global__ void total_f64(const double* x, double* t, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) atomicAdd(t, x[i]); }
extern "C" __global__ void total_u32(const unsigned* x, unsigned* t, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) atomicAdd(t, x[i]); }
"""


def test_the_compilers_float_and_double_totals_are_typed(nvdisasm, tmp_path):
    nvcc = _nvcc()
    if nvcc is None:
        pytest.skip("nvcc is not installed")
    (tmp_path / "totals.cu").write_text(TOTALS)
    subprocess.run([nvcc, "-cubin", "-arch=sm_90", "-o", str(tmp_path / "totals.cubin"), str(tmp_path / "totals.cu")],
                   check=True, capture_output=True)
    cubin = (tmp_path / "totals.cubin").read_bytes()
    kinds = {k: occupancy.kernel_resources(cubin, kernel=f"total_{k}").sass for k in ("f32", "f64", "u32")}
    assert {k: (s.global_atomics_one_address, s.global_atomics_one_address_type) for k, s in kinds.items()} == {
        "f32": (1, "f32"), "f64": (1, "f64"), "u32": (1, "other")}


@pytest.mark.parametrize("arch", ARCHS)
def test_a_naive_matrix_product_strides_through_b_and_walks_along_a(cubins, arch):
    s = occupancy.kernel_resources(cubins[arch], kernel="matmul_rows").sass
    # b[k * n + j]: a new row every trip, its address from threadIdx.x and blockIdx.x alone;
    # a[i * n + k]: the next word, from threadIdx.y and blockIdx.y
    assert set(s.hot_loop_load_sources) == {("x", "ctaid.x", "loop", "stride"), ("y", "ctaid.y", "loop")}
    assert len(s.hot_loop_load_sources) == s.loops[s.hot_loop].instructions.global_loads


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize(("kernel", "follows"), [("triangle", "global"), ("lower", "global"), ("block_stride", None),
                                                 ("matmul_rows", None)])
def test_a_loop_whose_trips_follow_the_index(cubins, arch, kernel, follows):
    s = occupancy.kernel_resources(cubins[arch], kernel=kernel).sass
    hot = s.loops[s.hot_loop]
    assert hot.index_trips == follows
    # one trip per index value (j2++ / j++), or none at all
    assert hot.trips_per_index == (None if follows is None else pytest.approx(1.0))


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize(("kernel", "lone"), [("lone_walk", "global"), ("lone_then_sync", "thread"),
                                              ("triangle", None), ("flag", None)])
def test_a_kernel_whose_loops_one_thread_runs(cubins, arch, kernel, lone):
    assert occupancy.kernel_resources(cubins[arch], kernel=kernel).sass.lone_thread == lone


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_a_lane_divergent_branch(cubins, arch):
    s = occupancy.kernel_resources(cubins[arch], kernel="divergent").sass
    outer, inner = sorted(s.loops, key=lambda loop: loop.depth)
    assert (outer.depth, inner.depth) == (1, 2) and s.loops[s.hot_loop] == inner
    assert inner.instructions.fp32_fma >= 1 and inner.instructions.branches == 1  # its back edge
    # the outer body: its back edge, the branch around the odd lanes' side, the inner back edge
    assert outer.instructions.branches >= 3 and outer.instructions.global_loads == 0


def test_grid_stride_copy_as_the_compiler_built_it(grid_stride, nvdisasm, tmp_path):
    """What NVRTC 13.0 made of the H200's grid-stride copy (docs/prediction.md lists it):
    EPT=1 unrolled 4 times with its 4 loads in flight, the others with up to 7."""
    counts = {}
    for ept, cubin in grid_stride.items():
        r = occupancy.kernel_resources(cubin, kernel="grid_stride_copy")
        s = r.sass
        assert s is not None and s.architecture == "sm_90"
        counts[ept] = s.global_loads_in_flight_per_thread
        hot = s.loops[s.hot_loop]
        assert hot.instructions.global_loads >= ept and 1 <= counts[ept] <= hot.instructions.global_loads
        assert counts[ept] == _scoreboards(r, hex_listing(nvdisasm, cubin, tmp_path)), ept
    assert counts[8] == 7  # as counted by hand in test_hand_counted_grid_stride_copy
    print("grid_stride_copy loads in flight per EPT:", counts)


def test_the_corpus_reads_on_every_architecture(resource_corpus):
    """Every corpus kernel (validate/kernels, resources.cu) from sm_50 to sm_120: the SASS is
    read where an nvdisasm reads the architecture (CUDA 13's no longer reads sm_50-sm_72)
    and otherwise None with the reason."""
    read = set()
    for binary in resource_corpus.binaries:
        for kernel, r in occupancy.all_kernel_resources(binary.cubin).items():
            if r.sass is None:
                assert r.sources["sass"].startswith("not read: no nvdisasm read the cubin"), (binary.arch, kernel)
                assert int(binary.arch[3:]) < 75
                continue
            read.add(binary.arch)
            assert r.sass.architecture == binary.arch
            assert r.sass.instructions.total > 0 and r.sass.global_loads_in_flight_per_thread >= 0
    assert read >= {a for a in resource_corpus.archs if a not in resource_corpus.skipped and int(a[3:]) >= 75}


def test_the_corpus_agrees_with_the_scoreboards(resource_corpus, nvdisasm, tmp_path):
    """Every corpus kernel for sm_80 and sm_90: the count is the scoreboards' wherever fewer
    than 12 loads are in flight, and on 95% of the kernels in all. Where many loads are in
    flight the compiler may wait on a shared scoreboard an instruction before the first use
    (counted one higher here) or consume a load out of issue order (counted lower here):
    matmul_naive 16 vs 15 (sm_80), register_heavy 96 vs 94 (sm_90) with nvcc 13.0; on
    sm_120 spill_heavy is 19 vs 25."""
    rows = []
    for binary in resource_corpus.binaries:
        if binary.arch not in ("sm_80", "sm_90"):
            continue
        text = hex_listing(nvdisasm, binary.cubin, tmp_path)
        for kernel, r in occupancy.all_kernel_resources(binary.cubin).items():
            rows.append((binary.arch, kernel, r.sass.global_loads_in_flight_per_thread, _scoreboards(r, text)))
    differ = [row for row in rows if row[2] != row[3]]
    assert rows and len(differ) <= 0.05 * len(rows), differ
    assert all(min(row[2:]) >= 12 for row in differ), differ


def test_frameworks_kernels_have_their_sass(nvdisasm, triton_add, numba_scale_ptx):
    """A Triton kernel (its cubin) and a numba kernel (its PTX, assembled by ptxas or nvJitLink)."""
    compiled = triton_add
    r = occupancy.kernel_resources(compiled)
    assert r.sass is not None and r.sources["sass"].startswith("Triton cubin .text.add, disassembled by nvdisasm")
    # 1024 elements over 128 threads: 8 floats of x and 8 of y per thread, masked one by one
    # (the signature promises no alignment), all issued before the first add
    assert (r.sass.instructions.global_loads, r.sass.instructions.global_stores) == (16, 8)
    assert (r.sass.global_loads_in_flight_per_thread, r.sass.global_load_instruction) == (16, "LDG.E")
    assert r.sass.loops == ()

    ptx = numba_scale_ptx
    from numba import float32

    class DispatcherLike:  # numba-cuda's Dispatcher: compiled signatures and their PTX
        overloads = {(float32[:],): object()}

        def inspect_asm(self, signature=None):
            return {(float32[:],): ptx}

    r = occupancy.kernel_resources(DispatcherLike(), arch="sm_90")
    assert r.sass is not None and re.search(r"via (ptxas|nvJitLink), cubin", r.sources["sass"])
    assert r.sass.instructions.global_loads >= 1 and r.sass.instructions.global_stores >= 1


# ------------------------------------------------------------------ no nvdisasm, and the launch


@pytest.fixture
def no_nvdisasm(monkeypatch):
    monkeypatch.setattr(_nvdisasm, "nvdisasm_candidates", lambda: [])
    _sass.sass_summaries.cache_clear()
    yield
    _sass.sass_summaries.cache_clear()


def test_without_nvdisasm_the_summary_is_none_and_says_why(no_nvdisasm):
    src = 'extern "C" __global__ void k(const float* x, float* y) { y[threadIdx.x] = x[threadIdx.x]; }'
    try:
        r = occupancy.kernel_resources(src, arch="sm_90")
    except ImportError as exc:
        pytest.skip(f"NVRTC is not installed: {exc}")
    assert r.sass is None
    assert r.sources["sass"] == f"not read: nvdisasm not found ({_nvdisasm.INSTALL_HINT})"
    assert occupancy.Launch(grid=1, block=32, resources=r).loads_in_flight_per_thread is None


def _fake_nvdisasm(path: Path, body: str) -> str:
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return str(path)


def test_a_cubin_no_nvdisasm_reads(tmp_path, monkeypatch):
    fake = _fake_nvdisasm(tmp_path / "nvdisasm",
                          "echo 'nvdisasm fatal   : CUDA architecture \"SM70\" is deprecated' >&2\nexit 1\n")
    monkeypatch.setattr(_nvdisasm, "nvdisasm_candidates", lambda: [fake])
    with pytest.raises(_nvdisasm.NvdisasmError, match=r"no nvdisasm read the cubin: nvdisasm \(.*\): .*deprecated"):
        _nvdisasm.disassemble(b"\x7fELF")


def test_the_next_nvdisasm_is_tried(tmp_path, monkeypatch):
    """CUDA 13's nvdisasm refuses sm_50-sm_72: an older one found later reads them."""
    (tmp_path / "new").mkdir()
    (tmp_path / "old").mkdir()
    refuses = _fake_nvdisasm(tmp_path / "new" / "nvdisasm", "echo 'deprecated' >&2\nexit 1\n")
    stored = DATA / "grid_stride_copy_ept8_sm90.sass"
    reads = _fake_nvdisasm(tmp_path / "old" / "nvdisasm", f"""case "$1" in
  --version) echo 'Cuda compilation tools, release 12.9, V12.9.86' ;;
  *) cat '{stored}' ;;
esac
""")
    monkeypatch.setattr(_nvdisasm, "nvdisasm_candidates", lambda: [refuses, reads])
    listing = _nvdisasm.disassemble(b"\x7fELF")
    assert listing.tool == "nvdisasm 12.9.86" and "grid_stride_copy" in listing.functions


def test_where_nvdisasm_is_looked_for(tmp_path, monkeypatch):
    fake = _fake_nvdisasm(tmp_path / "nvdisasm", "exit 0\n")
    monkeypatch.setenv("PATH", f"{tmp_path}:/usr/bin:/bin")
    monkeypatch.delenv("CUDA_HOME", raising=False)
    monkeypatch.delenv("CUDA_PATH", raising=False)
    found = _nvdisasm.nvdisasm_candidates()
    wheels = _nvdisasm._nvidia_wheels()
    assert found[: len(wheels)] == wheels  # the pinned wheel first
    assert fake in found and found.index(fake) == len(wheels)  # then PATH
