"""What the prediction says where the SASS shows work the kernel's counts leave out (two new users'
trials, 2026-12-08): shared-memory reads with no L1/shared bytes, flops at a tensor rate with no
tensor-core instruction, loops of work whose trips no count gives."""

import pytest

import occupancy
import roofline
from occupancy import SassCounts, SassLoop, SassSummary

N = 1 << 24


def _sass(*, hot_shared: int = 0, tensor: int = 0, inner: SassCounts | None = None, local: int = 0,
          atomics: int = 0) -> SassSummary:
    """A load loop (two global loads a trip), with `hot_shared` shared loads in it, and `inner` a
    loop inside it (depth 2) where given."""
    hot = SassLoop(start_offset=0x100, end_offset=0x400, depth=1,
                   instructions=SassCounts(total=40 + (inner.total if inner else 0), global_loads=2,
                                           shared_loads=hot_shared + (inner.shared_loads if inner else 0),
                                           local_loads=local, local_stores=local,
                                           fp32_fma=4, branches=1),
                   global_loads_in_flight=2, fewest_loads_in_flight=2)
    loops = [hot]
    if inner is not None:
        loops.append(SassLoop(start_offset=0x200, end_offset=0x300, depth=2, instructions=inner,
                              global_loads_in_flight=0, fewest_loads_in_flight=0))
    return SassSummary(architecture="sm_90", disassembler="listing", loops=tuple(loops), hot_loop=0,
                       instructions=SassCounts(total=80 + hot.instructions.total, global_loads=3, global_stores=1,
                                               tensor=tensor),
                       global_loads_in_flight_per_thread=2, global_load_bytes=4, global_atomics=atomics,
                       global_atomics_one_address=atomics)


def _notes(sass: SassSummary, measured: roofline.ProfileCounts | None = None, **counts) -> tuple[str, ...]:
    resources = occupancy.KernelResources(kernel="k", architecture="sm_90", registers_per_thread=32, sass=sass)
    launch = occupancy.Launch(grid=1056, block=256, resources=resources)
    fields = dict(name="k", flops=N, dram_bytes=8 * N, load_bytes=8 * N, precision="fp32") | counts
    return roofline.predict("H100 SXM", roofline.Kernel(**fields, launch=launch), measured=measured).assumptions


SHARED = "reads shared memory"
TENSOR = "holds no tensor-core instruction"
LEFT_OUT = "counted once per pass of the code around"
LOCAL = "reads and writes local memory"
TENSOR_UNCOUNTED = "tensor-core instructions, but the flops are counted at fp32"
ATOMICS = "global atomics, 1 of them to one address, but the kernel gives no atomics"


@pytest.mark.parametrize(("sass", "counts", "said", "unsaid"), [
    (_sass(hot_shared=8), {}, [SHARED], [TENSOR, LEFT_OUT]),
    (_sass(hot_shared=8), {"l1_bytes": 1 << 30}, [], [SHARED]),
    (_sass(hot_shared=8), {"shared_bytes": 1 << 28}, [], [SHARED]),
    (_sass(), {"precision": "tf32_tensor"}, [TENSOR], [SHARED]),
    (_sass(tensor=16), {"precision": "tf32_tensor"}, [], [TENSOR]),
    (_sass(), {"precision": None, "flops_by_precision": {"fp16_tensor": N}}, [TENSOR], []),
    (_sass(inner=SassCounts(total=12, shared_loads=2, fp32_fma=4, branches=1)), {}, [LEFT_OUT], []),
    (_sass(inner=SassCounts(total=12, global_loads=1, branches=1)), {}, [], [LEFT_OUT]),
    (_sass(local=3), {}, [LOCAL], [SHARED]),
    (_sass(tensor=16), {}, [TENSOR_UNCOUNTED], [TENSOR]),
    (_sass(atomics=1), {}, [ATOMICS], []),
    (_sass(atomics=1), {"atomics": 1056 * 8, "atomic_addresses": 1}, [], [ATOMICS]),
    (_sass(), {}, [], [SHARED, TENSOR, LEFT_OUT, LOCAL, TENSOR_UNCOUNTED, ATOMICS]),
], ids=["shared-unread", "l1-bytes-given", "shared-bytes-given", "tensor-without-tensor-sass", "tensor-sass",
        "tensor-by-precision", "inner-loop-of-work", "inner-loop-of-loads", "local-memory", "tensor-sass-at-fp32",
        "atomics-uncounted", "atomics-counted", "nothing-to-say"])
def test_the_prediction_says_what_the_counts_leave_out(sass, counts, said, unsaid):
    notes = " | ".join(_notes(sass, **counts))
    assert all(s in notes for s in said), notes
    assert not any(u in notes for u in unsaid), notes


def test_a_profile_says_what_ran():
    """With a profile's counts (its L1 wavefronts, its instructions) there is nothing to warn of."""
    measured = roofline.ProfileCounts(duration_seconds=1e-3)
    notes = " | ".join(_notes(_sass(hot_shared=8), measured=measured, precision="tf32_tensor"))
    assert SHARED not in notes and TENSOR not in notes


@pytest.mark.parametrize(("load_bytes", "said"), [(10, True), (1056 * 256 - 1, True), (1056 * 256, False),
                                                  (8 * N, False)])
def test_a_load_count_below_a_byte_a_thread_is_said(load_bytes, said):
    notes = " | ".join(_notes(_sass(), load_bytes=load_bytes))
    assert ("less than a byte a thread" in notes) == said, notes
