"""What a kernel's SASS summary holds: `SassCounts`, `SassLoop` and `SassSummary`, the models
`summarize` returns.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = ["AddressSource", "SassCounts", "SassLoop", "SassSummary"]


_FROZEN = ConfigDict(frozen=True, extra="forbid", defer_build=True)


#: What reaches an address, by where it comes from (`address_sources`).
AddressSource = Literal["x", "y", "z", "ctaid.x", "ctaid.y", "ctaid.z", "lane", "data", "loop", "stride"]


class SassCounts(BaseModel):
    """Instructions of one class in a kernel or a loop body, as the SASS lists them.

    Each instruction counts once, predicated or not (the listing, not the execution).
    NOP padding and the branch-to-self that ends every function (a trap never reached)
    are not counted.

    Attributes
    ----------
    total : int
        All instructions.
    global_loads, global_stores : int
        ``LDG``/``STG``, and generic ``LD``/``ST`` (in practice global memory).
    local_loads, local_stores : int
        ``LDL``/``STL``: spills and stack.
    shared_loads, shared_stores : int
        ``LDS``/``LDSM`` and ``STS``/``STSM``.
    async_copies : int
        Global to shared copies: ``LDGSTS`` (cp.async), ``UBLKCP`` and ``UTMALDG`` (TMA).
    atomics : int
        ``ATOM``/``ATOMG``/``ATOMS``/``RED``/``REDG``.
    shared_atomics : int
        ``ATOMS``, the shared-memory ones among ``atomics``.
    shared_cas : int
        ``ATOMS.CAS``/``ATOMS.CAST``, the compare-and-swaps among ``shared_atomics``.
    barriers : int
        ``BAR`` (``__syncthreads`` and named barriers).
    shuffles : int
        ``SHFL``.
    fp32_fma, fp32_add, fp32_mul : int
        ``FFMA``, ``FADD``, ``FMUL`` (and Blackwell's paired ``FFMA2``/``FADD2``/``FMUL2``).
    fp64 : int
        ``DFMA``/``DADD``/``DMUL``/``DSETP``/``DMNMX``/``DSET``.
    tensor : int
        Matrix instructions: every opcode ending in ``MMA`` (``HMMA``, ``IMMA``, ``DMMA``,
        ``HGMMA``, ``QMMA``, ...).
    branches : int
        ``BRA``/``BRX``/``JMP``/``JMX``.
    """

    model_config = _FROZEN

    total: int = Field(default=0, ge=0)
    global_loads: int = Field(default=0, ge=0)
    global_stores: int = Field(default=0, ge=0)
    local_loads: int = Field(default=0, ge=0)
    local_stores: int = Field(default=0, ge=0)
    shared_loads: int = Field(default=0, ge=0)
    shared_stores: int = Field(default=0, ge=0)
    async_copies: int = Field(default=0, ge=0)
    atomics: int = Field(default=0, ge=0)
    shared_atomics: int = Field(default=0, ge=0)
    shared_cas: int = Field(default=0, ge=0)
    barriers: int = Field(default=0, ge=0)
    shuffles: int = Field(default=0, ge=0)
    fp32_fma: int = Field(default=0, ge=0)
    fp32_add: int = Field(default=0, ge=0)
    fp32_mul: int = Field(default=0, ge=0)
    fp64: int = Field(default=0, ge=0)
    tensor: int = Field(default=0, ge=0)
    branches: int = Field(default=0, ge=0)


class SassLoop(BaseModel):
    """One loop of the SASS: a backward branch and the instructions it repeats.

    Attributes
    ----------
    start_offset, end_offset : int
        Bytes from the function's start of the loop's first instruction (the branch
        target) and of its backward branch (the last one, where several branch back).
    depth : int
        1 for an outermost loop, 2 for a loop inside it, ...
    instructions : SassCounts
        The instructions from ``start_offset`` to ``end_offset``, nested loops included.
    global_loads_in_flight : int
        The most global loads a thread has outstanding at once in the steady state of this
        loop (0 when it issues none).
    fewest_loads_in_flight : int
        The fewest global loads a thread has outstanding when it first waits for one after
        issuing some, over the loop's own code (the loops inside it left out): the smallest
        burst its straight code issues, such as the one-trip piece of the remainder the
        compiler wrote around an unrolled inner loop (0 when its own code issues none).
    index_trips : {"global", "thread", "block"} or None
        Which index the loop's trip count follows (`_trip_index`), where the compare that
        ends it sets a counter that steps by a constant against a bound, and exactly one of
        the two is a linear function of the thread's index: ``"global"`` for
        ``blockIdx.x x blockDim.x + threadIdx.x`` (``for (j = i; j < n; j++)`` with ``i``
        the thread's column: a triangle over the grid), ``"thread"`` for ``threadIdx.x``
        alone, ``"block"`` for ``blockIdx.x`` alone. None where the trips are the same for
        every thread (or no such compare is found: a grid-stride loop, whose trips differ
        by at most one, steps by a run-time value).
    trips_per_index : float or None
        How many trips the count moves per unit of that index (the index's coefficient over
        the counter's step: 1 for ``j++``, 0.25 for a loop the compiler unrolled four
        times); None with ``index_trips``.
    """

    model_config = _FROZEN

    start_offset: int = Field(ge=0)
    end_offset: int = Field(ge=0)
    depth: int = Field(ge=1)
    instructions: SassCounts
    global_loads_in_flight: int = Field(ge=0)
    fewest_loads_in_flight: int = Field(default=0, ge=0)
    index_trips: Literal["global", "thread", "block"] | None = None
    trips_per_index: float | None = Field(default=None, gt=0)


class SassSummary(BaseModel):
    """A kernel's SASS in figures: instruction counts, loops, global loads in flight.

    Read by `occupancy.kernel_resources` (``KernelResources.sass``) with NVIDIA's
    nvdisasm; `occupancy.Launch` takes its loads in flight when the caller gives none.

    Attributes
    ----------
    architecture : str
        The SASS architecture it was read for, e.g. ``"sm_90"``.
    disassembler : str
        The tool and its version, e.g. ``"nvdisasm 13.5.37"``.
    instructions : SassCounts
        The whole kernel.
    loops : tuple of SassLoop
        Every loop, in address order.
    hot_loop : int or None
        Index in ``loops`` of the steady-state loop, a static guess: the deepest loop that
        issues global loads (ties: the most global loads, then the first), else the
        deepest loop (ties: the most instructions); None without loops.
    global_loads_in_flight_per_thread : int
        The most global loads (``LDG``, ``LD``) a thread keeps outstanding at once, counted
        in the hot loop when it issues global loads, else over the whole kernel: loads
        issued before an instruction uses (or overwrites) the register of any of them.
        Predicated loads count. 0 when the kernel issues none.
    global_load_bytes : int or None
        Width of those loads, bytes (``LDG.E.128`` = 16); the widest when they differ.
    global_load_bytes_in_flight_per_thread : int
        Their widths added up, bytes.
    global_load_instruction : str or None
        The opcode of those loads with its width, without cache hints
        (``"LDG.E.128"``; the widest when they differ).
    setmaxnreg_registers : tuple of int
        The registers per thread that warp groups switch to (``USETMAXREG``, PTX
        ``setmaxnreg``: ``DEALLOC``/``.dec`` below the launch's count, ``TRY_ALLOC``/``.inc``
        above it), in increasing order; empty when the kernel keeps its launch's count.
    thread_index_components : tuple of str or None
        The components of ``threadIdx`` the kernel reads (``S2R`` of ``SR_TID.X``, ``.Y``,
        ``.Z``), a subset of ``("x", "y", "z")``; all three where it reads its warp's index
        (``SR_WARPID``). Threads of a block that differ only in a component it never reads
        run the same instructions on the same addresses (`duplicate_warps`). None where the
        summary does not say (one made before this field).
    global_atomics : int or None
        Global atomic and reduction instructions (``ATOMG``, ``RED``, ``REDG``, ``ATOM`` on a
        generic address). None where the summary does not say.
    global_atomics_one_address : int or None
        Of those, the ones whose address is the same for every thread, block and loop trip:
        register dataflow finds it built from constants and kernel parameters alone (no
        thread or block index, no loaded value, no register a loop steps). A counter every
        warp adds to. None where the summary does not say.
    global_atomics_one_address_type : {"f32", "f64", "other"} or None
        The operation of those: ``"f32"`` where every one is a float add (``REDG.E.ADD.F32``,
        an ``atomicAdd`` of a ``float``), ``"f64"`` where every one is a double add, ``"other"``
        for integer adds, compare-and-swaps, exchanges and mixes. The word's L2 slice applies
        float adds at their own rate (the global-CAS probe). None without one-address atomics,
        and where the summary does not say.
    global_stores_one_address : int or None
        Global stores (``STG``, ``ST``) to one address by the same test: a flag every warp
        sets (``*done = true``). None where the summary does not say.
    hot_loop_load_sources : tuple of tuple of str or None
        For each global load of the hot loop, in program order, what reaches its address
        (register dataflow, as for the one-address facts): the ``threadIdx`` components
        (``"x"``, ``"y"``, ``"z"``), the ``blockIdx`` components (``"ctaid.x"``, ...), the
        lane index (``"lane"``), a loaded value or another special register (``"data"``),
        a register the loop carries (``"loop"``: a counter or a pointer), and ``"stride"``
        where the loop moves the address by a line (128 bytes) or more per trip, or by a
        step known only at run time. A load the loop strides whose address no ``threadIdx``
        component of some warps (or no ``blockIdx`` component of some blocks) reaches is
        the same new line for those warps (blocks) in the same trip (`roofline` counts them
        as waiting for one miss). Empty without a hot loop with global loads; None where the
        summary does not say.
    lone_thread : {"global", "thread"} or None
        Where an ``EXIT`` before the hot loop, or a branch over it, lets only the thread whose
        index equals a value run it (``if (i == 0) { for ... }``, register dataflow: an exit
        or branch on ``!=`` of values the index reaches linearly in ``threadIdx.x``, nothing
        loaded): ``"global"`` for the grid's index (one thread of the grid runs the loop),
        ``"thread"`` for ``threadIdx.x`` alone (one per block). None otherwise, and where the
        summary does not say.
    longest_path_instructions : int or None
        Instructions on the longest path through the code outside every loop (a loop a step
        of none): where ``instructions`` lists both sides of each branch there, what a warp
        that takes one side of each issues at most (an ``EXIT``/``RET`` without a guard ends a
        path; a guarded branch goes on or jumps; a ``CALL`` adds its callee's path). None where
        the code jumps through a register (a ``switch``'s jump table, ``BRX``) and where the
        summary does not say.
    """

    model_config = _FROZEN

    architecture: str
    disassembler: str
    instructions: SassCounts
    loops: tuple[SassLoop, ...] = ()
    hot_loop: int | None = Field(default=None, ge=0)
    global_loads_in_flight_per_thread: int = Field(ge=0)
    global_load_bytes: int | None = Field(default=None, gt=0)
    global_load_bytes_in_flight_per_thread: int = Field(default=0, ge=0)
    global_load_instruction: str | None = None
    setmaxnreg_registers: tuple[int, ...] = ()
    thread_index_components: tuple[Literal["x", "y", "z"], ...] | None = None
    global_atomics: int | None = Field(default=None, ge=0)
    global_atomics_one_address: int | None = Field(default=None, ge=0)
    global_atomics_one_address_type: Literal["f32", "f64", "other"] | None = None
    global_stores_one_address: int | None = Field(default=None, ge=0)
    hot_loop_load_sources: tuple[tuple[AddressSource, ...], ...] | None = None
    lone_thread: Literal["global", "thread"] | None = None
    longest_path_instructions: int | None = Field(default=None, ge=0)

    @model_validator(mode="after")
    def _check_hot_loop(self) -> SassSummary:
        if self.hot_loop is not None and self.hot_loop >= len(self.loops):
            raise ValueError(f"hot_loop={self.hot_loop} is not an index of the {len(self.loops)} loops")
        return self

    def __str__(self) -> str:
        where = (f"loop {self.loops[self.hot_loop].start_offset:#06x}-{self.loops[self.hot_loop].end_offset:#06x}"
                 if self.hot_loop is not None else "straight-line code")
        loads = (f"{self.global_loads_in_flight_per_thread} {self.global_load_instruction} in flight per thread"
                 if self.global_loads_in_flight_per_thread else "no global loads")
        return (f"{self.architecture} SASS: {self.instructions.total} instructions, {len(self.loops)} loops; "
                f"{loads} ({where})")
