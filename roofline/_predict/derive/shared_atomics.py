"""The shared-memory atomics of a launch (`SharedAtomics`): the kernel's own counts, else the
profile's executed shared atomics, else the SASS's ``ATOMS`` times the hot loop's trips.

The kernel's fields (``shared_atomics``, ``shared_cas`` and their words and contenders) come
first. Where it gives neither count, a profile's ``smsp__sass_inst_executed_op_shared_atom.sum``
counts every shared atomic a warp executed, each attempt of a compare-and-swap loop included:
they are lane updates and attempts, 32 lanes an instruction, split between plain atomics and
compare-and-swaps as the SASS lists them (``SassCounts.shared_cas`` of ``shared_atomics``; all
plain without it), and no retries are derived on top of them (one contender). Without a profile
count, the SASS's ``ATOMS`` outside every loop run once per warp, and the hot loop's as often
as the loop runs (`hot_loop_trips`), those of other loops not at all (their trips are not known); the
lanes are the threads. Every lane takes part (no
divergence); the words are not known, so the term takes them as spread over the banks. A SASS
summary stored without the split (its ``shared_atomics`` unset, as the corpus's are) of a kernel
without global atomics (``global_atomics`` 0) has only shared ones: its ``atomics``, all plain.
"""

from __future__ import annotations

from occupancy import SassCounts, SassSummary

from ..._warps import WARP_SIZE
from ..rules import on
from .hot_loop import hot_loop_trips, staying_warps
from .quantities import LoopAround, SharedAtomics
from .setting import Setting

__all__ = ["shared_atomics_of"]


def shared_atomics_of(setting: Setting, around: LoopAround | None) -> SharedAtomics:
    """The launch's shared atomics: the kernel's counts, else counted (`_counted`), else none."""
    kernel, launch = setting.kernel, setting.launch
    given = kernel.shared_atomics is not None or kernel.shared_cas is not None
    counted = None if given or not on("counted_shared_atomics") else _counted(setting, around)
    if counted is None:
        return SharedAtomics(updates=float(kernel.shared_atomics or 0), words=kernel.shared_atomic_words,
                             cas_successes=float(kernel.shared_cas or 0),
                             cas_contenders=max(1.0, float(kernel.shared_cas_contenders or 1)),
                             threads=launch.threads)
    lanes, cas_share = counted
    return SharedAtomics(updates=lanes * (1.0 - cas_share), words=kernel.shared_atomic_words,
                         cas_successes=lanes * cas_share, cas_contenders=1.0, threads=launch.threads)


def _counted(setting: Setting, around: LoopAround | None) -> tuple[float, float] | None:
    """(shared-atomic lanes of the launch, the compare-and-swaps' share of them) from the
    profile or the SASS; None where neither counts them."""
    sass, measured = setting.sass, setting.measured
    counts = None if sass is None else sass.instructions
    atoms = 0 if sass is None else _atoms(counts, sass)
    cas_share = counts.shared_cas / atoms if atoms else 0.0
    if measured is not None and measured.shared_atomic_instructions is not None:
        return float(measured.shared_atomic_instructions) * WARP_SIZE, cas_share
    if not atoms:
        return None
    launch = setting.launch
    outer = [loop for loop in sass.loops if loop.depth == 1]
    outside = atoms - sum(_atoms(loop.instructions, sass) for loop in outer)
    lanes = float(outside * launch.threads)
    hot = sass.loops[sass.hot_loop].instructions if sass.hot_loop is not None else None
    if hot is not None and _atoms(hot, sass):
        trips = hot_loop_trips(setting, around)
        if trips is None:
            return None  # the loop's atomics are most of them, and how often it runs is not known
        # trips are per warp that runs the loop: that share of the launch's threads
        lanes += trips * _atoms(hot, sass) * launch.threads * staying_warps(setting)
    return lanes, cas_share


def _atoms(counts: SassCounts, sass: SassSummary) -> int:
    """The ``ATOMS`` of `counts`: their count, else (a summary stored without it) the atomics of
    a kernel without global atomics."""
    if "shared_atomics" in counts.model_fields_set or sass.global_atomics != 0:
        return counts.shared_atomics
    return counts.atomics
