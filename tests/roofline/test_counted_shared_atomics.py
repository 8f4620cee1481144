"""Where the kernel gives no shared atomics, the shared_atomics term reads them off the profile
(Nsight's executed shared atomics, 32 lanes an instruction, retries included) or the SASS (its
``ATOMS`` times the hot loop's trips and the threads): `roofline._predict.derive.shared_atomics`,
the derivation in docs/prediction.md ('Shared-memory atomics')."""

from __future__ import annotations

import pytest

import occupancy
import roofline
from occupancy import SassCounts, SassLoop, SassSummary
from roofline._predict.derive.sass import instructions_from_sass
from roofline._predict.rules import disabled

#: 264 blocks of 256 threads; the hot loop's global loads give its trips.
THREADS = 264 * 256
RATED = roofline.calibration("H200").model_copy(update={
    f"sm_shared_{n}_per_second": 1e9 for n in ("atomic_one_word_updates", "atomic_spread_updates",
                                               "cas_one_word_attempts", "cas_spread_attempts")})


def _sass(atomics: int = 0, cas: int = 0, loop_atomics: int = 0, loop_loads: int = 2) -> SassSummary:
    """One global load and ``atomics - loop_atomics`` ATOMS outside a hot loop of ``loop_loads``
    global loads and ``loop_atomics`` ATOMS; ``cas`` of the ATOMS are ATOMS.CAS."""
    loop = SassLoop(start_offset=0, end_offset=80, depth=1, global_loads_in_flight=2,
                    instructions=SassCounts(total=10, global_loads=loop_loads, atomics=loop_atomics,
                                            shared_atomics=loop_atomics))
    return SassSummary(architecture="sm_90", disassembler="listing", global_loads_in_flight_per_thread=2,
                       instructions=SassCounts(total=30, global_loads=1 + loop_loads, atomics=atomics,
                                               shared_atomics=atomics, shared_cas=cas),
                       loops=(loop,), hot_loop=0)


def _kernel(sass: SassSummary | None, **fields) -> roofline.Kernel:
    resources = None if sass is None else occupancy.KernelResources(
        kernel="k", architecture="sm_90", registers_per_thread=32, sass=sass)
    launch = occupancy.Launch(grid=264, block=256, registers_per_thread=32, resources=resources)
    return roofline.Kernel(name="k", flops=0.0, dram_bytes=1e6, launch=launch, **fields)


def _counted(kernel: roofline.Kernel, instructions: float | None = None) -> tuple[float, float, float]:
    measured = None if instructions is None else roofline.ProfileCounts(shared_atomic_instructions=instructions)
    p = roofline.predict("H200", kernel, measured=measured, calibration=RATED)
    term = next(t for t in p.terms if t.name == "shared_atomics")
    return term.inputs["shared_atomic_updates"], term.inputs["shared_cas_attempts"], term.seconds


#: a thread loads 1 + 2 x 10 floats: the hot loop runs 10 trips
LOAD_BYTES = THREADS * 4 * 21
CASES = [
    # the profile's 1000 instructions, 32 lanes each, all plain without the SASS
    ("profile", _kernel(None), 1000.0, (32_000.0, 0.0)),
    # the SASS lists 4 ATOMS, 1 a CAS: a quarter of the lanes are CAS attempts, no retries on top
    ("profile split by the SASS", _kernel(_sass(atomics=4, cas=1)), 1000.0, (24_000.0, 8_000.0)),
    # the kernel's own count comes first
    ("described", _kernel(_sass(atomics=4), shared_atomics=5), 1000.0, (5.0, 0.0)),
    # the SASS: 1 ATOMS outside the loop, 1 in it, 10 trips: 11 a thread
    ("SASS x trips", _kernel(_sass(atomics=2, loop_atomics=1), load_bytes=LOAD_BYTES), None, (THREADS * 11.0, 0.0)),
    # the same, every ATOMS a CAS: the attempts of one success each
    ("SASS CAS", _kernel(_sass(atomics=2, cas=2, loop_atomics=1), load_bytes=LOAD_BYTES), None,
     (0.0, THREADS * 11.0)),
    # no load count: the loop's trips, and so its atomics, are not known
    ("SASS, trips unknown", _kernel(_sass(atomics=2, loop_atomics=1)), None, (0.0, 0.0)),
    # neither profile nor SASS
    ("nothing", _kernel(None), None, (0.0, 0.0)),
]


@pytest.mark.parametrize("kernel, instructions, expected", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_the_counts_the_term_reads(kernel, instructions, expected):
    updates, attempts, seconds = _counted(kernel, instructions)
    assert (updates, attempts) == pytest.approx(expected, rel=1e-12)
    assert (seconds > 0) == any(expected)


@pytest.mark.parametrize("kernel, instructions", [c[1:3] for c in CASES if any(c[3]) and c[0] != "described"],
                         ids=[c[0] for c in CASES if any(c[3]) and c[0] != "described"])
def test_with_the_rule_off_only_the_description_counts(kernel, instructions):
    with disabled({"counted_shared_atomics"}):
        assert _counted(kernel, instructions) == (0.0, 0.0, 0.0)


def _stored(global_atomics: int | None) -> SassSummary:
    """`_sass(atomics=2, loop_atomics=1)` as a summary stored before ``SassCounts`` split out the
    ``ATOMS`` (the corpus's JSON): the shared counts unset."""
    stored = _sass(atomics=2, loop_atomics=1).model_dump(exclude={"instructions": {"shared_atomics", "shared_cas"},
                                                                  "loops": {0: {"instructions": {"shared_atomics",
                                                                                                 "shared_cas"}}}})
    return SassSummary.model_validate({**stored, "global_atomics": global_atomics})


@pytest.mark.parametrize("global_atomics, lanes", [
    (0, THREADS * 11.0),  # no global atomics: the 2 atomics are shared ones, as the split would count
    (2, 0.0),             # global atomics: which atomics are shared is not known
    (None, 0.0),          # not read
], ids=["no global atomics", "global atomics", "unknown"])
def test_a_summary_stored_without_the_split(global_atomics, lanes):
    sass = _stored(global_atomics)
    assert "shared_atomics" not in sass.instructions.model_fields_set
    assert _counted(_kernel(sass, load_bytes=LOAD_BYTES))[:2] == pytest.approx((lanes, 0.0))


def _atomic_loops(*bodies: tuple[int, int], outside: int = 8) -> SassSummary:
    """``outside`` instructions around loops of shared atomics alone, each (instructions, ATOMS)."""
    loops = tuple(SassLoop(start_offset=100 * i, end_offset=100 * i + 80, depth=1, global_loads_in_flight=0,
                           instructions=SassCounts(total=total, atomics=atoms, shared_atomics=atoms))
                  for i, (total, atoms) in enumerate(bodies))
    return SassSummary(architecture="sm_90", disassembler="listing", global_loads_in_flight_per_thread=0,
                       instructions=SassCounts(total=outside + sum(t for t, _ in bodies),
                                               atomics=sum(a for _, a in bodies),
                                               shared_atomics=sum(a for _, a in bodies)),
                       loops=loops, hot_loop=0)


WARPS = THREADS // 32


@pytest.mark.parametrize("sass, fields, per_warp", [
    # 128 atomics a thread, one a trip: 128 trips of 12, and 8 outside
    (_atomic_loops((12, 1)), dict(shared_atomics=THREADS * 128), 8 + 128 * 12),
    # unrolled 4 times with a remainder loop of 1: the two share the trips, 128 / 5 of 48 + 14
    (_atomic_loops((48, 4), (14, 1)), dict(shared_atomics=THREADS * 128), 8 + 128 / 5 * (48 + 14)),
    # CAS successes count as their ATOMS
    (_atomic_loops((12, 1)), dict(shared_cas=THREADS * 16), 8 + 16 * 12),
], ids=["one loop", "unrolled and remainder", "CAS"])
def test_loops_of_shared_atomics_run_as_often_as_the_atomics_need(sass, fields, per_warp):
    kernel = _kernel(sass, **fields)
    assert instructions_from_sass(sass, kernel) == pytest.approx(per_warp * WARPS, rel=1e-12)
    # without the rule, or without the kernel's count, the loops are tied to nothing
    with disabled({"shared_atomic_loops"}):
        assert instructions_from_sass(sass, kernel) is None
    assert instructions_from_sass(sass, _kernel(sass)) is None
