"""The time model: one launch's predicted time composed from named terms.

The roofline is a bound. A kernel reaches the DRAM roof only when enough bytes are in
flight to cover the memory latency (Little's law: bandwidth = bytes in flight / latency),
and the bytes in flight are set by occupancy. `predict` checks the launch once (a
`Setting`), derives its quantities (`roofline._predict.derive`), evaluates every term on
them with its own parameters (one module each in ``roofline/_predict/terms``, the
parameters from `roofline._predict.params`) and composes them (`roofline._predict.compose`):
the memory and compute terms overlap, the overhead terms add, and the limiter is what the
term that binds names. ``roofline/_predict/__init__.py`` gives the reading order.
"""

from __future__ import annotations

import numpy as np

from pydantic import ConfigDict

from occupancy import Architecture, Launch
from occupancy import architecture as occupancy_architecture
from occupancy import calculate as occupancy_calculate
from occupancy.common import Displayed, integer, shown, si

from ._calibration import Calibration
from ._errors import RooflineError
from ._facts import calibration as _packaged_calibration
from ._facts import gpu as _lookup_gpu
from ._gpu import GPU
from ._kernel import Kernel, kernel_of
from ._locality import locality
from ._profile_counts import ProfileCounts
from ._predict import (
    Composition,
    DramTime,
    Limiter,
    Setting,
    Term,
    compose,
    derive,
    evaluate,
    parameters,
)
from ._predict.derive.setting import outside_loops, sass_of
from ._predict.rules import on
from ._precision import TENSOR_PRECISIONS

__all__ = ["DEFAULT_REGISTERS_PER_THREAD", "Prediction", "check_calibration", "launch_of", "occupancy_launch", "predict"]

_FROZEN = ConfigDict(frozen=True, extra="forbid")

#: Registers per thread assumed when a launch does not say (typical of simple kernels).
DEFAULT_REGISTERS_PER_THREAD = 32

class Prediction(Displayed):
    """Predicted time of one launch of a kernel, with its limiter and the model's inputs.

    Attributes
    ----------
    seconds : float
        Predicted kernel time, seconds (what CUDA events around the launch measure).
    achieved_bytes_per_second, achieved_flops_per_second : float
        DRAM bytes and FLOPs over `seconds`.
    limiter : str
        What the binding term says binds: ``dram_bandwidth`` (enough requests in flight,
        the roof binds), ``memory_latency`` (too few bytes in flight to cover the latency),
        ``block_scheduling`` (blocks start too slowly), ``tail`` (a partial last wave
        costs more than a fifth of the full waves' time), ``cache_bandwidth`` (L2 or
        L1/shared), ``compute`` (arithmetic roof), ``issue`` (too few independent FMAs in
        flight per scheduler, or too many instructions) or ``launch`` (fixed launch cost).
    binding : str
        The name of the term that binds (one of ``terms``).
    terms : tuple[Term, ...]
        Every term of the time model, with its seconds and the quantities it used: the
        memory and compute terms overlap (the time is their largest), the overhead terms
        add to it.
    roofline_seconds : float
        The plain roofline bound of the terms' work (`roofline_bound`: the flops at the
        datasheet's peak, the DRAM and L1 bytes and the L2 bytes L1 does not keep at the
        datasheet's bandwidths), seconds; never more than ``seconds``, by construction.
    active_blocks_per_sm, active_warps_per_sm : int
        Occupancy of the launch (from `occupancy.calculate`).
    waves : float
        Grid blocks over resident block slots of the whole GPU.
    bytes_in_flight : float
        Outstanding DRAM bytes across the GPU in a full wave.
    memory_seconds, compute_seconds, launch_seconds : float
        The terms the prediction combines; ``memory_seconds`` is the larger of
        ``dram_seconds`` (the Little's-law model) and ``cache_seconds`` (L2 and L1/shared
        bytes over those levels' bandwidths, when the kernel gives them).
    calibration : Calibration
        The parameters used; ``calibration.measured`` / ``.defaulted`` name their origin.
    assumptions : tuple[str, ...]
        Inputs the prediction had to assume (e.g. registers per thread not known).
    """

    model_config = _FROZEN

    seconds: float
    achieved_bytes_per_second: float
    achieved_flops_per_second: float
    limiter: Limiter
    roofline_seconds: float
    active_blocks_per_sm: int
    active_warps_per_sm: int
    waves: float
    bytes_in_flight: float
    memory_seconds: float
    dram_seconds: float
    cache_seconds: float
    compute_seconds: float
    launch_seconds: float
    calibration: Calibration
    assumptions: tuple[str, ...] = ()
    binding: str = ""
    terms: tuple[Term, ...] = ()

    headline = (
        shown("seconds", si("s"), label="time"), shown("limiter"),
        shown("active_blocks_per_sm", label="blocks_per_sm"), shown("waves", lambda w: f"{w:.3g}"),
        shown("roofline_seconds", si("s"), label="roofline_time"),
    )


def launch_of(kernel: Kernel, launch: Launch | None, function: str) -> Launch:
    """The launch to predict: `launch`, else the kernel's own; a clear error without one."""
    launch = kernel.launch if launch is None else launch
    if launch is None:
        raise RooflineError(
            f"{function} needs a launch: kernel {kernel.name!r} has none; give the Kernel "
            "launch=occupancy.Launch(grid=..., block=..., registers_per_thread=...) or pass launch="
        )
    if not isinstance(launch, Launch):
        raise TypeError(f"launch must be an occupancy.Launch, not {type(launch).__name__}")
    if kernel.dram_bytes is None:
        raise RooflineError(
            f"{function} needs dram_bytes: kernel {kernel.name!r} has none "
            "(roofline.memory.traffic() counts them from the access pattern)"
        )
    return launch


def _assumptions(launch: Launch, arch: Architecture) -> list[str]:
    """What the prediction of `launch` on `arch` assumes rather than knows."""
    notes = []
    if launch.registers_per_thread is None:
        notes.append(
            f"registers_per_thread={DEFAULT_REGISTERS_PER_THREAD} assumed (not known before compiling)"
        )
    read_for = getattr(launch.resources, "architecture", None)
    if read_for is not None:
        try:
            read_for = occupancy_architecture(read_for).name
        except (ValueError, TypeError):
            pass
        if read_for != arch.name:
            notes.append(f"the kernel's resources were read for {read_for}, the GPU is {arch.name}")
    return notes


def _in_flight_note(launch: Launch) -> list[str]:
    """Where the launch's loads in flight come from, where the prediction depends on them."""
    if launch.elements_per_thread == 1:
        return []  # one access per thread: one round trip, however many are in flight
    sass = getattr(launch.resources, "sass", None)
    n = launch.loads_in_flight_per_thread
    if sass is not None and n is not None and n == sass.global_loads_in_flight_per_thread:
        return [f"loads in flight per thread from the SASS ({n} {sass.global_load_instruction} in flight)"]
    if n is None:
        why = "no SASS" if sass is None else "the SASS issues no global loads"
        return [f"loads in flight per thread assumed = elements_per_thread ({why})"]
    return []


def _loop_trips_note(kernel: Kernel, launch: Launch, measured: ProfileCounts | None) -> list[str]:
    """Where the SASS's hot loop loads global memory but nothing says how often it runs.

    The trips follow from the kernel's ``load_bytes`` (or a profile's, or its instructions);
    given none of them and one element per thread, the loop's loads are one round trip a
    thread, which for a grid-stride loop is many times too fast, so the prediction says so.
    """
    sass = getattr(launch.resources, "sass", None)
    if sass is None or sass.hot_loop is None or launch.elements_per_thread != 1 or measured is not None:
        return []
    if not sass.loops[sass.hot_loop].instructions.global_loads:
        return []
    if kernel.count("load_bytes") is not None or kernel.instructions is not None:
        return []
    return ["the SASS's hot loop loads global memory, but the kernel gives no load_bytes: its trips are not "
            "known, taken as one load per thread (give load_bytes, --load-bytes, or elements_per_thread)"]


def _hot_loop_in_flight_note(kernel: Kernel, launch: Launch, given: int | None,
                             measured: ProfileCounts | None) -> list[str]:
    """Where the launch says a thread's loads in flight and the SASS's hot loop, whose trips are
    known (load bytes, elements, instructions or a profile), keeps another number: its trips wait
    for the loop's own, and the launch's figure counts only the loads outside it."""
    sass = sass_of(launch)
    if sass is None or sass.hot_loop is None or given is None:
        return []
    hot = sass.loops[sass.hot_loop]
    own = (hot.global_loads_in_flight, sass.global_loads_in_flight_per_thread)
    if not hot.instructions.global_loads or given in own:
        return []
    known = (kernel.count("load_bytes") is not None or launch.elements_per_thread > 1
             or kernel.instructions is not None or measured is not None)
    if not known:
        return []
    n = hot.global_loads_in_flight
    return [f"the SASS's hot loop keeps {n} load{'' if n == 1 else 's'} in flight a trip, which its trips wait "
            f"for: loads_in_flight_per_thread={given} counts the loads outside it"]


def _unread_sass_note(launch: Launch) -> list[str]:
    """Where the launch's resources come from a binary whose SASS was not read (no nvdisasm, or
    none that reads it): the rules that read the SASS (instructions, hot loop, branches) do not
    apply, and the text output would not say so otherwise."""
    resources = launch.resources
    why = None if resources is None or resources.sass is not None else resources.sources.get("sass")
    if not why or not why.startswith("not read"):
        return []
    return [f"the kernel's SASS was {why}; without it no instruction estimate, hot loop or branch paths"]


def _per_thread_count_note(kernel: Kernel, launch: Launch) -> list[str]:
    """Where ``load_bytes`` is less than a byte a thread: a count of one thread's (or one block's)
    loads where the launch's are meant, which would make a loop's trips and its waits vanish."""
    load = kernel.count("load_bytes")
    if not load or load >= launch.threads:
        return []
    return [f"load_bytes={load:g} is less than a byte a thread of the launch's {launch.threads} threads: "
            "the count is the whole launch's (every thread's loads added), not one thread's"]


def _unseen_work_notes(kernel: Kernel, launch: Launch, measured: ProfileCounts | None) -> list[str]:
    """Where the SASS shows work the kernel's counts leave out, and the prediction would not say so:
    a hot loop that reads shared memory with no L1/shared bytes counted (the L1 term is then 0),
    a hot loop that uses local memory, flops at a tensor-core rate from a SASS with no
    tensor-core instruction (and the reverse), and global atomics with no atomics count."""
    sass = sass_of(launch)
    if sass is None or measured is not None:
        return []  # a profile counts the L1 wavefronts and says what ran
    notes = []
    hot = sass.loops[sass.hot_loop] if sass.hot_loop is not None else None
    if hot is not None and hot.instructions.shared_loads and kernel.l1_bytes is None and kernel.shared_bytes is None:
        notes.append(f"the SASS's hot loop reads shared memory ({hot.instructions.shared_loads} shared loads a trip), "
                     "but the kernel gives no l1_bytes: the L1/shared term leaves those reads out (give l1_bytes, "
                     "--l1-bytes: 128 bytes a warp's conflict-free 4-byte shared load)")
    local = (hot.instructions.local_loads, hot.instructions.local_stores) if hot is not None else (0, 0)
    if any(local):
        notes.append(f"the SASS's hot loop reads and writes local memory ({local[0]} local loads, {local[1]} local "
                     "stores a trip: a thread's array indexed at run time, or spilled registers): that traffic "
                     "goes through L1 (and L2 where L1 does not hold it), and is in the prediction only as far "
                     "as the kernel's l1_bytes / l2_bytes count it")
    precisions = set(kernel.flops_by_precision or ()) | {kernel.precision or "fp32"}
    tensor = sorted(p for p in precisions if p in TENSOR_PRECISIONS)
    if tensor and kernel.flops and not sass.instructions.tensor:
        notes.append(f"the flops are counted at {', '.join(tensor)}, but the SASS holds no tensor-core instruction: "
                     "the kernel's arithmetic runs on the FP32/FP64 units, below that rate")
    if not tensor and kernel.flops and sass.instructions.tensor:
        notes.append(f"the SASS holds {sass.instructions.tensor} tensor-core instructions, but the flops are counted "
                     f"at {', '.join(sorted(precisions))}: give the precision they run at (fp16_tensor, "
                     "bf16_tensor, tf32_tensor, ..., --precision)")
    if sass.global_atomics and kernel.atomics is None:
        one = f", {sass.global_atomics_one_address} of them to one address" if sass.global_atomics_one_address else ""
        notes.append(f"the SASS holds {sass.global_atomics} global atomics{one}, but the kernel gives no atomics "
                     "count: the atomics term leaves them out (give atomics= and atomic_addresses=, --count "
                     "atomics=N --count atomic_addresses=M)")
    return notes


#: Instructions outside the loops beyond the longest path, at the least and as a share of them,
#: for `_branch_sides_note` to speak: a bounds check or an early exit lists a few beyond it.
BRANCH_SIDES_NOTE = (16, 0.1)
#: ... and the instructions term's share of the predicted time: below it the count moves little
#: (a memory-bound kernel's tail code).
BRANCH_SIDES_NOTE_SHARE = 0.5


def _branch_sides_note(kernel: Kernel, launch: Launch, measured: ProfileCounts | None) -> list[str]:
    """Where the SASS's code outside its loops lists both sides of branches that hold much of it
    and the kernel does not say how its warps take them (``branch_issue_factor``).

    The listing is what a warp split over the sides issues, the longest path what a warp that
    takes one side issues at most (docs/prediction.md, "Branches in straight-line SASS"): the two
    can be far apart, and only the kernel's author knows which its warps do.
    """
    sass = sass_of(launch)
    if (sass is None or sass.longest_path_instructions is None or measured is not None
            or kernel.branch_issue_factor is not None or kernel.instructions is not None):
        return []
    listed = outside_loops(sass)
    extra = listed - sass.longest_path_instructions
    least, share = BRANCH_SIDES_NOTE
    if extra < least or extra < share * listed:
        return []
    return [f"the SASS outside its loops lists {listed} instructions, one path through them "
            f"{sass.longest_path_instructions}: the instructions counted as listed (give branch_issue_factor: "
            "--count branch_issue_factor=1 if each warp takes one side of its branches, 2 if each is split in two)"]


def check_calibration(cal: Calibration, record: GPU) -> None:
    """A calibration belongs to one GPU (or is the generic one): refuse it for another."""
    if not isinstance(cal, Calibration):
        raise TypeError(f"calibration must be a roofline.Calibration, not {type(cal).__name__}")
    if cal.gpu in ("generic", record.name):
        return
    try:
        measured_on = _lookup_gpu(cal.gpu).name
    except RooflineError:
        measured_on = cal.gpu
    if measured_on != record.name:
        raise RooflineError(
            f"calibration is for gpu={cal.gpu!r}, not {record.name!r}: predict for {cal.gpu!r}, "
            f"or use a calibration measured on {record.name!r}"
        )


def occupancy_launch(launch: Launch) -> Launch:
    """The launch's numbers for `occupancy`: registers assumed where unknown, and resources read
    for another architecture used as they are (the prediction's assumptions note it) rather than refused."""
    # a copy is checked like a new launch: skip the one that would change nothing
    loose = launch if launch.resources is None else launch.model_copy(update={"resources": None})
    return loose.assuming_registers(DEFAULT_REGISTERS_PER_THREAD)


def predict(
    gpu: GPU | str,
    kernel: Kernel,
    launch: Launch | None = None,
    *,
    calibration: Calibration | None = None,
    loads_in_flight_per_thread: int | None = None,
    fma_chains_per_thread: int = 1,
    after_l2_flush: bool = False,
    measured: ProfileCounts | None = None,
) -> Prediction:
    """Predict the time of `kernel` launched as `launch` on `gpu`.

    The launch's quantities are derived once (occupancy, waves, bytes and requests per level,
    loads in flight, issue slots, the hot loop's rounds); every term of the time model (DRAM by
    Little's law under the roof and the block scheduler, L2, L1/shared, atomics, the hot loop's
    waits, the arithmetic and the instructions at their issue rates, the launch overhead, ramp
    and spread) is computed from them with its measured parameters, and composed: the memory
    and compute terms overlap, the overhead terms add (`Prediction.terms`), and the limiter is
    what the term that binds names. docs/prediction.md describes each term.

    Parameters
    ----------
    gpu : GPU or str
        The GPU.
    kernel : Kernel
        A `roofline.Kernel` (a built-in model or your own): needs ``dram_bytes`` and a
        ``launch`` (or `launch`); uses ``flops`` and their precision, and ``l2_bytes`` and
        ``l1_bytes`` when given.
    launch : occupancy.Launch, optional
        Launch to predict instead of ``kernel.launch`` (grid, block, registers per thread,
        shared memory, elements per thread, loads in flight). Registers per thread that
        it does not know are assumed to be 32 (``Prediction.assumptions`` says so).
    calibration : Calibration, optional
        Model parameters; default `roofline.calibration(gpu)`.
    loads_in_flight_per_thread : int, optional
        Independent accesses a thread keeps outstanding; default the launch's
        ``loads_in_flight_per_thread``, else ``elements_per_thread``.
    fma_chains_per_thread : int
        Independent FMA dependency chains per thread (instruction-level parallelism).
    after_l2_flush : bool
        The launch is timed right after validate's L2 flush (a memset of 4x L2, as
        ``gpuroof measure``, the families that fit in L2 and the corpus are): L2 starts full
        of written lines, and the DRAM term writes back those the kernel's traffic displaces
        (``calibration.flush_dirty_bytes``), and of the written bytes a ``traffic`` counts, those
        L2 still holds at the kernel's end are written back after it (rule ``l2_keeps_writes``).
        False: L2 starts clean (what Nsight Compute's
        cache flush leaves) or holds the kernel's own lines (back-to-back launches).
    measured : ProfileCounts, optional
        What a profile of this launch measured (`NcuKernel.measured`): its hit rates set the
        misses the load rounds wait on, its warp-level global loads tell the hot loop's trips
        from the passes of a loop around it, its achieved occupancy the warps that stay in a
        short grid's loop. None: taken from the kernel's bytes and traffic.

    Returns
    -------
    Prediction

    Raises
    ------
    RooflineError
        If the kernel has no launch or no ``dram_bytes``, the launch cannot run (zero
        resident blocks), or an argument is out of range.
    OccupancyError
        If the launch breaks a limit of the GPU's architecture (e.g. shared memory).

    Examples
    --------
    >>> import roofline
    >>> p = roofline.predict("H100 SXM", roofline.models.copy(2**26))
    >>> p.limiter, p.seconds > p.roofline_seconds
    ('dram_bandwidth', True)
    """
    record = _lookup_gpu(gpu)
    cal = calibration if calibration is not None else _packaged_calibration(record)
    check_calibration(cal, record)
    setting, assumptions = _setting(record, kernel, launch, loads_in_flight_per_thread, fma_chains_per_thread,
                                    after_l2_flush, measured)
    params = parameters(cal, record)
    dram, terms = evaluate(derive(setting), params)
    composed = compose(terms, params.overlap_exponent if on("overlap_exponent") else None)
    instructions = next((t.seconds for t in terms if t.name == "instructions"), 0.0)
    if instructions >= BRANCH_SIDES_NOTE_SHARE * composed.seconds:  # where the count could move the time
        assumptions = assumptions + _branch_sides_note(setting.kernel, setting.launch, setting.measured)
    return _prediction(setting, cal, dram, terms, composed, assumptions)


def _setting(record: GPU, kernel: Kernel, launch: Launch | None, loads_in_flight_per_thread: int | None,
             fma_chains_per_thread: int, after_l2_flush: bool,
             measured: ProfileCounts | None) -> tuple[Setting, list[str]]:
    """`predict`'s arguments checked, as the `Setting` `derive` reads, and what they assume."""
    kernel = kernel_of(kernel)
    launch = launch_of(kernel, launch, "predict")
    assumptions = _assumptions(launch, record.architecture)
    occ = occupancy_calculate(record.architecture, occupancy_launch(launch))
    if occ.active_blocks_per_sm == 0:
        raise RooflineError(f"launch cannot run on {record.name}: {occ.reason}")
    if loads_in_flight_per_thread is None:
        loads_in_flight_per_thread = launch.loads_in_flight_per_thread
        assumptions += _in_flight_note(launch)
    assumptions += (_loop_trips_note(kernel, launch, measured)
                    + _hot_loop_in_flight_note(kernel, launch, loads_in_flight_per_thread, measured)
                    + _unread_sass_note(launch) + _unseen_work_notes(kernel, launch, measured)
                    + _per_thread_count_note(kernel, launch))
    in_flight = launch.elements_per_thread if loads_in_flight_per_thread is None else loads_in_flight_per_thread
    for name, value in (("loads_in_flight_per_thread", in_flight), ("fma_chains_per_thread", fma_chains_per_thread)):
        if not 1 <= integer(name, value) <= 2**31 - 1:
            raise RooflineError(f"{name}={value!r} must be an integer from 1 to 2147483647")
    if not isinstance(after_l2_flush, (bool, np.bool_)):
        raise TypeError(f"after_l2_flush must be a bool, not {type(after_l2_flush).__name__}")
    if measured is not None and not isinstance(measured, ProfileCounts):
        raise TypeError(f"measured must be a roofline.ProfileCounts (NcuKernel.measured), not {type(measured).__name__}")
    setting = Setting(gpu=record, kernel=kernel, launch=launch, occupancy=occ, locality=locality(record),
                      loads_in_flight_per_thread=int(in_flight), fma_chains_per_thread=int(fma_chains_per_thread),
                      after_l2_flush=bool(after_l2_flush), measured=measured)
    return setting, assumptions


def _prediction(setting: Setting, cal: Calibration, dram: DramTime, terms: tuple[Term, ...],
                composed: Composition, assumptions: list[str]) -> Prediction:
    """The `Prediction` of `setting` from its terms and their composition."""
    seconds, binding = composed.seconds, composed.binding
    return Prediction(
        seconds=seconds,
        achieved_bytes_per_second=dram.equivalent_bytes / seconds,
        achieved_flops_per_second=float(setting.kernel.flops) / seconds,
        limiter=binding.limiter,
        roofline_seconds=composed.roofline_seconds,
        active_blocks_per_sm=setting.occupancy.active_blocks_per_sm,
        active_warps_per_sm=setting.occupancy.active_warps_per_sm,
        waves=setting.launch.blocks / setting.slots,
        bytes_in_flight=dram.bytes_in_flight,
        dram_seconds=dram.term.seconds,
        cache_seconds=max([0.0] + [t.seconds for t in terms if t.side == "memory" and t is not dram.term]),
        memory_seconds=composed.memory_seconds,
        compute_seconds=composed.compute_seconds,
        launch_seconds=composed.overhead_seconds,
        calibration=cal,
        assumptions=tuple(assumptions) + tuple(note for t in terms for note in t.notes),
        binding=binding.name,
        terms=terms,
    )
