"""Kernel: a kernel described once (work, bytes per level, launch, traffic), for every roofline function."""

from __future__ import annotations

import math
import numbers
import sys
from collections.abc import Mapping
from typing import Any, ClassVar, Protocol, runtime_checkable

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, computed_field, model_validator

from occupancy import Launch
from occupancy.common import CheckedModel, short_repr

from ._errors import RooflineError
from ._gpu import check_level
from ._precision import check_precision
from ._warps import CACHE_LINE_BYTES, SHARED_WAVEFRONT_BYTES

__all__ = ["Kernel", "KernelLike", "Traffic", "kernel_of"]

_LABEL_KEYS = ("variant", "radius", "tile", "offset", "stride")
#: The counts a Kernel reads from its traffic where it is not given them (`Kernel.count`).
_TRAFFIC_COUNTS = ("load_bytes", "store_bytes", "l2_partial_store_sectors")
#: A count (flops, bytes, events): ints stay ints.
Count = int | float
def _count(name: str, value: object) -> int | float:
    """A finite, non-negative count (ints stay ints)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number, not {type(value).__name__}")
    if isinstance(value, numbers.Integral):
        number: int | float = int(value)
        if abs(number) > sys.float_info.max:  # the models compute in floats: 10**400 would overflow there
            raise RooflineError(f"{name} is a {number.bit_length()}-bit integer; a count must be at most "
                                f"{sys.float_info.max:.3e}, the largest float")
    else:
        number = float(value)
        if not math.isfinite(number):
            raise RooflineError(f"{name}={number} must be finite and >= 0")
    if number < 0:
        raise RooflineError(f"{name}={number} must be finite and >= 0")
    return number


def _normalise(data: dict[str, Any]) -> dict[str, Any]:
    out = dict(data)
    out.pop("label", None)  # computed; present in a dumped kernel
    for name in _counts():
        if out.get(name) is not None:
            out[name] = _count(name, out[name])
    by_precision = out.get("flops_by_precision")
    if by_precision is not None:
        if not isinstance(by_precision, Mapping) or not by_precision:
            raise RooflineError(
                "flops_by_precision must be a non-empty mapping of precision to flops, e.g. {'fp16_tensor': 2e12}"
            )
        normal: dict[str, int | float] = {}
        for key, value in by_precision.items():
            p = check_precision(key)
            normal[p] = normal.get(p, 0) + _count(f"flops_by_precision[{key!r}]", value)
        out["flops_by_precision"] = normal
        total = sum(normal.values())
        if out.get("flops") is None:
            out["flops"] = total
        elif not math.isclose(out["flops"], total, rel_tol=1e-9, abs_tol=0.5):
            raise RooflineError(
                f"flops={out['flops']} disagrees with the sum of flops_by_precision ({total}); give one of them"
            )
    elif out.get("flops") is None:
        out.pop("flops", None)
    if out.get("precision") is not None:
        out["precision"] = check_precision(out["precision"])
    factor = out.get("branch_issue_factor")
    if factor is not None and factor < 1:
        raise RooflineError(f"branch_issue_factor={factor} must be >= 1 (1: every warp takes one path)")
    # Atomics that update no address at all are a slip (the atomics terms divide by these counts
    # and, given 0, charged nothing); None, not 0, is how a kernel says it does not know.
    for name, meaning in (("cas_contenders", "1: no two threads' loops share an address"),
                          ("atomic_addresses", "1: one counter"), ("shared_atomic_words", "1: one word"),
                          ("shared_cas_contenders", "1: each thread its own word")):
        value = out.get(name)
        if value is not None and value < 1:
            raise RooflineError(f"{name}={value} must be >= 1 ({meaning}) or None (not known)")
    load, store, requested = out.get("load_bytes"), out.get("store_bytes"), out.get("requested_bytes")
    if load is not None or store is not None:
        known = (load or 0) + (store or 0)
        if requested is None and load is not None and store is not None:
            out["requested_bytes"] = known
        elif requested is not None and (
            requested < known or (load is not None and store is not None and requested != known)
        ):
            raise RooflineError(
                f"requested_bytes={requested} disagrees with load_bytes={load} + store_bytes={store}"
            )
    launch = out.get("launch")
    if launch is not None and not isinstance(launch, (Launch, Mapping)):
        raise TypeError(f"launch must be an occupancy.Launch, not {type(launch).__name__}")
    ways = out.get("bank_conflict_ways")
    if ways is not None and (isinstance(ways, bool) or not isinstance(ways, numbers.Integral) or ways < 1):
        raise RooflineError(f"bank_conflict_ways={short_repr(ways)} must be an integer >= 1 (1: conflict free) or None")
    _check_parameters(out.get("parameters"))
    return out


def _check_parameters(parameters: object) -> None:
    """Model parameters are JSON-able: a NaN or infinity there would not survive the kernel's own JSON."""
    if not isinstance(parameters, Mapping):
        return  # None or a wrong type: pydantic's field check names it
    for key, value in parameters.items():
        values = value if isinstance(value, (list, tuple)) else (value,)
        for item in values:
            if isinstance(item, (float, np.floating)) and not math.isfinite(item):
                raise RooflineError(f"parameters[{short_repr(key)}]={item!r} must be finite")


class Traffic(BaseModel):
    """Global-memory traffic of a launch: requested, L2 sector and compulsory DRAM bytes.

    Attributes
    ----------
    load_bytes, store_bytes : int
        Requested: active lanes x ``element_bytes``, every execution counted.
    l2_load_bytes, l2_store_bytes : int
        32 bytes per distinct sector of every warp-wide execution (the SM <-> L2 traffic
        when L1 keeps nothing between instructions).
    dram_load_bytes, dram_store_bytes : int
        32 bytes per distinct sector of each array read (written) anywhere in the launch:
        the compulsory traffic, a lower bound when reused data does not stay in L2.
    dram_bytes_by_array : dict of str to int
        ``dram_bytes`` of each array, reads plus writes.
    l2_partial_store_sectors : int
        Sectors a warp writes only in part (fewer than 32 bytes) over its stores to one
        array in one loop iteration together (L1 combines a warp's own stores to a sector,
        as the two field stores of an array of structs; pieces that other warps write are
        counted apart): each reaches L2 as a partial write that L2 merges into the line.
    l1_wavefronts : int
        128-byte lines each warp-wide access touches, summed over every execution: the L1
        passes global accesses take (one line per pass; a coalesced float access is one,
        a column of a row-major matrix one per lane).
    dram_load_bursts : int
        Distinct 64-byte DRAM bursts read (the DRAM reads both sectors of a burst).
    dram_load_lines, dram_store_lines : int
        Distinct 128-byte lines read and written.
    dram_store_written_bytes : int
        Distinct bytes written (the written sectors hold ``32 x sectors`` bytes).
    l1_footprint_bytes_per_block : int or None
        32 bytes per distinct sector a block in the middle of the grid loads, over all its
        loads and loop iterations: what L1 must hold for the block to read each sector from
        L2 once (None when the block's accesses are too many to list).
    l1_stream_bytes_per_block : int or None
        32 bytes per sector the middle block loads in a loop iteration and did not load in
        the iteration before, summed over the iterations (its first iteration whole): what
        it reads from L2 when L1 keeps just the last iteration's sectors (a row of A that a
        naive matmul walks 4 bytes at a time; None without a loop).
    l1_window_bytes_per_block : int or None
        The most distinct sectors (x 32 bytes) two consecutive iterations of that block
        load: what L1 must hold for ``l1_stream_bytes_per_block`` to hold.
    l2_open_bytes_per_block : int or None
        The most 128-byte lines (x 128 bytes) that two consecutive iterations of that block
        both load: the lines it holds open across an iteration (a thread's row walked 4 bytes
        at a time holds one line of each array), which L2 must keep for the next iteration's
        sectors to hit once L1 lets them go.
    dram_load_page_visits, dram_store_page_visits : int or None
        DRAM pages (`Locality.dram_page_bytes`) opened to read (write) the launch's bytes: in a window
        of consecutive blocks in launch order (`Locality.page_window_threads`, starting at
        a multiple of its size) in the middle of the grid, the distinct (array, page) pairs
        read (written), each loop iteration counting the pages of the bursts it reaches
        first; scaled to the launch's blocks. A stream opens each page
        once (``bytes / dram_page_bytes``); a column of a row-major matrix opens one per row
        (None when the window's accesses are too many to list).
    load_requests : int or None
        Warp-wide executions of the loads with at least one lane active (Nsight's
        ``l1tex__t_requests_pipe_lsu_mem_global_op_ld``): the loads a warp issues, however
        few of its lanes take part (None: not counted).
    loop_warp_share : float or None
        The share of the launched warps that run the kernel's loops: over the accesses in a
        loop, the most warp executions with a lane active per iteration, over the warps
        launched (1 when every warp runs every iteration; one warp a block for a loop only
        thread 0 runs; the average over the longest for lanes that leave a triangle one by
        one). None without an access in a loop.
    blocks : int or None
        The blocks of the launch the traffic was counted on: the per-block figures are per
        block of it (a grid-stride loop counted as the flat grid it walks has more blocks
        than it launches). None: the launch's own.
    dram_store_partial_sectors : int
        Sectors the launch writes only in part (L2 fills them from DRAM first): all written
        sectors when an array's written bytes fill at most half of them (assumed evenly
        spread), else the fewest sectors that can leave the missing bytes.
    dram_store_loaded_partial_sectors : int
        Of those, the ones in sectors the launch also loads (an array's share of its written
        sectors that it loads too): L2 holds them whole when the store merges in, so they need
        no fill (rule ``loaded_sector_fill``; taken as loaded before they are written).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _drop_computed(cls, data: object) -> object:
        # a dumped Traffic (inside a kernel's JSON) carries its computed totals
        if isinstance(data, Mapping):
            return {k: v for k, v in data.items() if k not in cls.model_computed_fields}
        return data

    load_bytes: int
    store_bytes: int
    l2_load_bytes: int
    l2_store_bytes: int
    dram_load_bytes: int
    dram_store_bytes: int
    dram_bytes_by_array: dict[str, int]
    l2_partial_store_sectors: int = 0
    l1_wavefronts: int = 0
    dram_load_bursts: int = 0
    dram_load_lines: int = 0
    dram_store_lines: int = 0
    dram_store_written_bytes: int = 0
    dram_store_partial_sectors: int = 0
    dram_store_loaded_partial_sectors: int = 0
    l1_footprint_bytes_per_block: int | None = None
    l1_stream_bytes_per_block: int | None = None
    l1_window_bytes_per_block: int | None = None
    l2_open_bytes_per_block: int | None = None
    dram_load_page_visits: int | None = None
    dram_store_page_visits: int | None = None
    blocks: int | None = None
    load_requests: int | None = None
    loop_warp_share: float | None = None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def requested_bytes(self) -> int:
        """load_bytes + store_bytes."""
        return self.load_bytes + self.store_bytes

    @computed_field  # type: ignore[prop-decorator]
    @property
    def l1_global_bytes(self) -> int:
        """128 x l1_wavefronts: the L1 data-path bytes global accesses occupy (a pass
        moves up to one 128-byte line, however few of its bytes a warp wants)."""
        return CACHE_LINE_BYTES * self.l1_wavefronts

    @computed_field  # type: ignore[prop-decorator]
    @property
    def l2_bytes(self) -> int:
        """l2_load_bytes + l2_store_bytes."""
        return self.l2_load_bytes + self.l2_store_bytes

    @computed_field  # type: ignore[prop-decorator]
    @property
    def dram_bytes(self) -> int:
        """dram_load_bytes + dram_store_bytes."""
        return self.dram_load_bytes + self.dram_store_bytes

    def kernel(self, *, shared_wavefronts: float = 0, **fields: object) -> Kernel:
        """A `roofline.Kernel` with this traffic and `fields` (``name``, ``flops``, ``launch``, ...).

        ``shared_wavefronts``, the launch's shared-memory passes, join the global accesses'
        L1 passes in ``l1_bytes`` (`SHARED_WAVEFRONT_BYTES` each).

        The traffic is the kernel's ``traffic``: the requested bytes and the footprint
        (`Kernel.count` reads ``load_bytes``, ``store_bytes``, ``requested_bytes`` and
        ``l2_partial_store_sectors`` from it). The kernel's bytes per level start from
        here (``l1_bytes`` = ``l1_global_bytes``, ``l2_bytes``, ``dram_bytes``). A field
        given here replaces the one of the same name (e.g. ``store_bytes`` where the kernel
        stores other than the traffic counted).

        Raises
        ------
        RooflineError
            If ``shared_wavefronts`` is not a finite number >= 0, or a field is bad (`Kernel`'s checks).

        Examples
        --------
        >>> import roofline
        >>> t = roofline.memory.traffic(4, 256, [roofline.memory.Access(array="x", index=lambda c: c.x)])
        >>> k = t.kernel(name="read", flops=0)
        >>> k.dram_bytes, k.count("load_bytes"), k.load_bytes
        (4096, 4096, None)
        """
        # a negative count would quietly take shared passes off the global accesses' L1 bytes
        if (isinstance(shared_wavefronts, bool) or not isinstance(shared_wavefronts, numbers.Real)
                or not math.isfinite(shared_wavefronts) or shared_wavefronts < 0):
            raise RooflineError(f"shared_wavefronts={short_repr(shared_wavefronts)} must be a finite number >= 0 "
                                "(the launch's shared-memory passes, 128 bytes each)")
        levels = {"l1_bytes": self.l1_global_bytes + SHARED_WAVEFRONT_BYTES * shared_wavefronts,
                  "l2_bytes": self.l2_bytes, "dram_bytes": self.dram_bytes}
        return Kernel(**{**levels, "traffic": self, **fields})


class Kernel(CheckedModel):
    """What one kernel does: its work, the bytes it moves at each level, and its launch.

    One description for every roofline function and for the built-in models
    (`roofline.models` return this type): the work, the bytes moved at each level, the
    launch, and the traffic they were counted from (`Traffic.kernel` builds one). Every
    count is optional except where a function needs it; a count must be finite and >= 0.
    What a profile measured beyond these (its duration, hit rates, wavefronts, achieved
    occupancy) is not part of the kernel: it is a `roofline.ProfileCounts`, which
    `roofline.NcuKernel` holds and `predict` takes as ``measured=``.

    ==========================  ==========================================================
    function                    needs
    ==========================  ==========================================================
    `analyze`, `roofline_chart`,  ``dram_bytes``; ``flops`` (0 by default: a pure copy);
    `plot_roofline`, suite        ``l2_bytes`` and ``l1_bytes`` add the cache roofs
    `predict`, `time_cliffs`      the above plus a ``launch`` (or ``launch=``); registers
                                  per thread unknown are assumed 32 (and said so)
    the suite's occupancy         ``launch``
    ==========================  ==========================================================

    Attributes
    ----------
    name : str
        Display name (the model function's for built-in models).
    flops : int or float
        Useful floating-point operations (an FMA counts 2; integer ops for int8), total.
    flops_by_precision : dict or None
        Flops per precision (``{"fp16_tensor": ..., "fp32": ...}``) when the kernel mixes
        them; ``flops`` is then their sum. The compute time is the longest of
        ``flops_p / peak_p``: each precision's units bound the kernel on their own.
    precision : str or None
        The precision of the arithmetic (``"fp32"`` when neither this nor
        ``flops_by_precision`` says).
    load_bytes, store_bytes, requested_bytes : int or None
        Global bytes the code asks for: active lanes x access size, every access counted
        (``requested_bytes = load_bytes + store_bytes``; it may be given alone), as given;
        None where ``traffic`` counted them (read both through `count`).
    l2_bytes : int or None
        SM <-> L2 traffic: the 32-byte sectors of every warp-wide access.
    l1_bytes : int or None
        L1/shared data-path bytes (requested global bytes plus shared-memory wavefronts).
    dram_bytes : int or None
        DRAM traffic, bytes (compulsory: each sector once, unless the kernel says more).
    shared_bytes : int or None
        Shared-memory bytes accessed.
    instructions : int or None
        Warp instructions issued, total (SASS; a divergent branch issues both sides).
    l2_requests : int or None
        SM -> L2 requests (each covers the 1-4 sectors of one 128-byte line that a warp's
        access touches; Nsight's ``lts__t_requests_srcunit_tex``); None: the traffic's
        count where `roofline.memory.traffic` built the kernel (a warp access's distinct lines).
    l2_partial_store_sectors : int or None
        The 32-byte sectors global stores write only in part, which L2 merges one by one,
        as given; None: the traffic's count where `roofline.memory.traffic` built the
        kernel (`count` reads either).
    atomics : int or None
        Warp-level global atomic and reduction instructions executed (``ATOMG``/``RED``).
    atomic_addresses : int or None
        Distinct addresses those atomics update (1: one counter; None: not known, taken
        as spread over L2).
    cas_contenders : float or None
        Threads whose compare-and-swap retry loops update each of the ``atomic_addresses``
        at once (the loop's threads over its addresses, >= 1); ``atomics`` then counts the
        loops' successful updates, one per thread and pass. Each update then takes a round
        of its address's remaining contenders' attempts (the ``atomics`` term). None: the
        atomics are not such a loop, or its contention is not known.
    one_address_stores : int or None
        Warp store instructions to one address every warp shares (a flag each warp sets):
        L2 applies them one after the other.
    shared_atomics : int or None
        Lane updates of plain shared-memory atomics (``ATOMS.ADD`` and the like: one per
        active lane of each instruction), total.
    shared_atomic_words : int or None
        Distinct shared-memory words one block's shared atomics (plain and compare-and-swap)
        hit: 1 when every lane updates one word, 32 or more when a warp's lanes spread over
        the banks (None: taken as spread).
    shared_cas : int or None
        Successful shared-memory compare-and-swap updates of retry loops (``ATOMS.CAS``: one
        per loop a thread completes), total; the failed attempts follow from
        ``shared_cas_contenders``.
    shared_cas_contenders : int or None
        Threads that contend for one shared word at once in those loops (1: each thread its
        own word; None: taken as 1).
    barriers_per_block : int or None
        ``__syncthreads()`` each thread of a block passes (the levels of a tree).
    load_phases_per_block : int or None
        Stretches between barriers in which a block's threads load global memory (a loop
        whose trips load, then reduce and write behind barriers: one per trip). A barrier
        lets no load of the next stretch start before every warp has its loads of this
        one, so each stretch waits a round trip of its own. None: not known (the loads'
        rounds alone).
    branch_issue_factor : float or None
        Paths a warp runs through the kernel's branches, per warp (>= 1): 1 when every
        warp takes one side (warp-uniform branches), 2 when every warp runs both sides of a
        two-way branch. `roofline.divergence.branch_divergence` counts it from the side
        each thread takes. `predict` multiplies the arithmetic time by it, and of the
        instructions it estimates from SASS those of the loops; the code outside the loops,
        whose listing holds every side, issues at most ``factor x`` its longest path
        (``SassSummary.longest_path_instructions``), at most the listing (rule
        ``branch_sides_in_sass``). None: not known (the arithmetic once, the listing as it
        is). A measured ``instructions`` count already has it.
    bank_conflict_ways : int or None
        Worst shared-memory conflict degree (1: conflict free), for labels: `predict` times
        shared memory from its wavefronts in ``l1_bytes`` (``Traffic.kernel(shared_wavefronts=...)``,
        `roofline.memory.bank_conflicts` gives a warp access's), not from this.
    element_bytes : int or None
        Bytes per data element (informational).
    launch : occupancy.Launch or None
        How the kernel is launched (grid, block, resources, elements per thread).
    traffic : Traffic or None
        The global-memory traffic `roofline.memory.traffic` counted, with the footprint details
        `predict` reads beyond the bytes per level (the written share of the DRAM bytes,
        bursts, lines, partial sectors, the L1 footprint of a block, DRAM pages opened);
        None for a kernel given by its counts alone.
    parameters : dict
        Parameters of a model (JSON-able), for labels and for rebuilding it.
    formula : str
        What each thread does, C-like.

    Examples
    --------
    >>> import occupancy, roofline
    >>> n = 1 << 24
    >>> saxpy = roofline.Kernel(name="saxpy", flops=2 * n, dram_bytes=12 * n,
    ...                         launch=occupancy.Launch(grid=n // 256, block=256, registers_per_thread=40))
    >>> roofline.analyze("H100 SXM", saxpy).bound_level
    'dram'
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(default="kernel", description="Display name.")
    flops: Count = Field(default=0, description="Floating-point operations, total.")
    flops_by_precision: dict[str, int | float] | None = Field(default=None, description="Flops per precision.")
    precision: str | None = Field(default=None, description="Precision of the arithmetic.")
    load_bytes: Count | None = Field(default=None, description="Global bytes loaded.")
    store_bytes: Count | None = Field(default=None, description="Global bytes stored.")
    requested_bytes: Count | None = Field(default=None, description="load_bytes + store_bytes.")
    l1_bytes: Count | None = Field(default=None, description="L1/shared data-path bytes.")
    l2_bytes: Count | None = Field(default=None, description="SM <-> L2 sector bytes.")
    dram_bytes: Count | None = Field(default=None, description="DRAM bytes.")
    shared_bytes: Count | None = Field(default=None, description="Shared-memory bytes.")
    instructions: Count | None = Field(default=None, description="Warp instructions issued.")
    l2_requests: Count | None = Field(default=None, description="SM -> L2 requests (one per line a warp access touches).")
    l2_partial_store_sectors: Count | None = Field(
        default=None, description="Sectors global stores write in part (L2 merges them one by one).")
    atomics: Count | None = Field(default=None, description="Warp-level global atomic instructions executed.")
    atomic_addresses: Count | None = Field(default=None, description="Distinct addresses the atomics update.")
    cas_contenders: Count | None = Field(
        default=None, description="Threads whose CAS retry loops update each atomic address at once.")
    one_address_stores: Count | None = Field(default=None, description="Warp stores to one shared address.")
    shared_atomics: Count | None = Field(default=None, description="Lane updates of plain shared-memory atomics.")
    shared_atomic_words: Count | None = Field(default=None, description="Shared words a block's shared atomics hit.")
    shared_cas: Count | None = Field(default=None, description="Successful shared compare-and-swap updates.")
    shared_cas_contenders: Count | None = Field(default=None, description="Threads contending for one shared word.")
    barriers_per_block: Count | None = Field(default=None, description="Barriers each thread passes.")
    load_phases_per_block: Count | None = Field(
        default=None, description="Stretches between barriers in which the block loads global memory.")
    branch_issue_factor: Count | None = Field(default=None, description="Paths per warp through branches.")
    bank_conflict_ways: int | None = Field(default=None, description="Worst bank conflict degree.")
    element_bytes: int | None = Field(default=None, description="Bytes per data element.")
    launch: Launch | None = Field(default=None, description="The launch (occupancy.Launch).")
    traffic: Traffic | None = Field(default=None, description="The traffic counted (roofline.memory.traffic).")
    parameters: dict[str, Any] = Field(default_factory=dict, description="Model parameters, JSON-able.")
    formula: str = Field(default="", description="What each thread does, C-like.")

    error: ClassVar[type[Exception]] = RooflineError

    @classmethod
    def normalise(cls, data: dict[str, Any]) -> dict[str, Any]:
        return _normalise(data)

    def copy_fields(self, update: Mapping[str, Any]) -> dict[str, Any]:
        """The fields a copy (`model_copy(update=...)`) starts from.

        Totals that follow from updated parts are recomputed (``requested_bytes`` from
        ``load_bytes`` and ``store_bytes``, ``flops`` from ``flops_by_precision``) unless
        the update gives them too.

        Examples
        --------
        >>> from roofline import models
        >>> models.copy(1024).model_copy(update={"store_bytes": 0}).count("requested_bytes")
        4096
        """
        data = super().copy_fields(update)
        if {"load_bytes", "store_bytes"} & set(update) and "requested_bytes" not in update:
            data.pop("requested_bytes")
        if "flops_by_precision" in update and "flops" not in update:
            data.pop("flops")
        return data

    @computed_field  # type: ignore[prop-decorator]
    @property
    def label(self) -> str:
        """Name plus the parameters that select a variant, e.g. ``transpose(variant=shared)``."""
        keys = [k for k in _LABEL_KEYS if k in self.parameters]
        if not keys:
            return self.name
        return f"{self.name}({', '.join(f'{k}={self.parameters[k]}' for k in keys)})"

    def count(self, name: str) -> int | float | None:
        """The kernel's count `name` (a count field: ``"load_bytes"``, ``"dram_bytes"``, ...):
        the value given, else the one its ``traffic`` counted, else None.

        The traffic holds ``load_bytes``, ``store_bytes`` and ``l2_partial_store_sectors``;
        ``requested_bytes`` not given is ``load_bytes + store_bytes`` where both are known,
        so a store given on a counted kernel counts in its requested bytes.

        Examples
        --------
        >>> from roofline import models
        >>> m = models.copy(1024)
        >>> m.count("load_bytes"), m.count("requested_bytes")
        (4096, 8192)
        >>> m.model_copy(update={"store_bytes": 0}).count("requested_bytes")
        4096
        """
        if name not in _counts():
            raise RooflineError(
                f"name={short_repr(name)} is not a count of a Kernel; the counts are {', '.join(_counts())}")
        given = getattr(self, name)
        if given is not None:
            return given
        if name == "requested_bytes":
            load, store = self.count("load_bytes"), self.count("store_bytes")
            return None if load is None or store is None else load + store
        if name in _TRAFFIC_COUNTS and self.traffic is not None:
            return getattr(self.traffic, name)
        return None

    @property
    def arithmetic_intensity(self) -> float | None:
        """flops / requested_bytes, flop/byte: the textbook compute-to-global-access ratio
        (PMPP); None when the kernel does not give its requested bytes."""
        requested = self.count("requested_bytes")
        if requested is None:
            return None
        return self.flops / requested if requested else math.inf

    @property
    def dram_arithmetic_intensity(self) -> float | None:
        """flops / dram_bytes, flop/byte; None when the kernel does not give its DRAM bytes."""
        if self.dram_bytes is None:
            return None
        return self.flops / self.dram_bytes if self.dram_bytes else math.inf

    def bytes_at(self, level: str) -> float | None:
        """Bytes moved at `level` ("dram", "l2", "l1"), or None when not given."""
        return {"dram": self.dram_bytes, "l2": self.l2_bytes, "l1": self.l1_bytes}[check_level(level)]


@runtime_checkable
class KernelLike(Protocol):
    """What `kernel_of` takes besides a `Kernel`: an object with a kernel's flops and DRAM
    bytes (its other attributes named as Kernel's fields are taken too)."""

    flops: float
    dram_bytes: float | None


def _counts() -> tuple[str, ...]:
    """The Kernel's counts: its fields that hold a number of flops, bytes or events."""
    return tuple(name for name, field in Kernel.model_fields.items() if field.annotation in (Count, Count | None))


def kernel_of(kernel: Kernel | KernelLike) -> Kernel:
    """`kernel` as a `Kernel`: a Kernel itself, or any object with ``flops`` and ``dram_bytes``
    (its attributes named as Kernel's fields are taken, None ones left out).

    Raises
    ------
    TypeError
        If `kernel` is not a Kernel and has no ``flops`` and ``dram_bytes``.
    """
    if isinstance(kernel, Kernel):
        return kernel
    if not (hasattr(kernel, "flops") and hasattr(kernel, "dram_bytes")):
        raise TypeError(
            "kernel must be a roofline.Kernel (or an object with flops and dram_bytes), "
            f"not {type(kernel).__name__}"
        )
    fields = {k: getattr(kernel, k) for k in Kernel.model_fields if getattr(kernel, k, None) is not None}
    fields["name"] = str(fields.get("name", "kernel"))
    return Kernel(**fields)
