"""Occupancy-aware time prediction: Little's law for memory, latency x ILP for arithmetic.

The roofline is a bound. A kernel reaches the DRAM roof only when enough bytes are in
flight to cover the memory latency (Little's law: bandwidth = bytes in flight / latency),
and the bytes in flight are set by occupancy: resident warps x independent accesses per
warp x bytes per access. This module turns a `roofline.Kernel` and its `occupancy.Launch`
into a predicted time with the limiter named, using occupancy from the `occupancy` package.
"""

from __future__ import annotations

import functools
import math
import numbers
import tomllib
from importlib import resources
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ._errors import RooflineError
from ._gpu import GPU
from ._gpu import gpu as _lookup_gpu
from ._kernel import kernel_of
from ._roofline import analyze, compute_roof
from ._traffic import PAGE_BYTES

__all__ = [
    "Calibration",
    "Prediction",
    "TimeCliff",
    "TimeCliffs",
    "achieved_bandwidth",
    "calibration",
    "dram_equivalent_bytes",
    "dram_roof",
    "instructions_from_sass",
    "l2_bytes_with_l1_reuse",
    "load_calibration",
    "mixed_dram_bandwidth",
    "predict",
    "time_cliffs",
]

_FROZEN = ConfigDict(frozen=True, extra="forbid")
# A calibration's figures are finite: one infinite parameter makes every prediction NaN.
_FINITE = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

Limiter = Literal[
    "dram_bandwidth", "memory_latency", "block_scheduling", "cache_bandwidth", "compute", "issue", "tail", "launch"
]

#: Parameters of the calibration, in the order reports list them.
CALIBRATION_PARAMETERS = (
    "idle_latency_seconds",
    "sustained_bandwidth_fraction",
    "knee_sharpness",
    "sm_bandwidth_bytes_per_second",
    "block_dispatch_seconds",
    "launch_overhead_seconds",
    "fma_latency_cycles",
)

#: Measured figures a calibration may carry beside the model's parameters (None when not
#: measured on that GPU): the latency ladder, launch cost without the host, and the
#: working-set plateaus (`gpuroof validate`). The time model reads them by name.
CALIBRATION_FIGURES = (
    "l1_hit_latency_seconds",
    "l2_hit_latency_seconds",
    "l2_near_hit_latency_seconds",
    "l2_far_hit_latency_seconds",
    "dram_latency_seconds",
    "tlb_miss_penalty_seconds",
    "graph_kernel_seconds",
    "l1_read_bytes_per_second",
    "l2_read_bytes_per_second",
    "dram_read_bytes_per_second",
    "dram_burst_bytes",
    "dram_read_line_bytes",
    "dram_partial_write_line_bytes",
    "l2_partial_store_sectors_per_second",
    "tree_level_seconds",
    "tree_level_warp_seconds",
    "dram_page_visit_bytes",
)


class Calibration(BaseModel):
    """Per-GPU parameters of the prediction model, each with where it came from.

    Attributes
    ----------
    gpu : str
        Canonical GPU name the parameters belong to (or ``"generic"``).
    idle_latency_seconds : float
        Round trip of one block's independent loads in an unloaded memory system, from
        issue to the block's retirement, seconds.
    sustained_bandwidth_fraction : float
        Best DRAM bandwidth a streaming kernel reaches, as a fraction of the datasheet's.
    knee_sharpness : float
        Exponent ``p`` of the soft minimum of the three rates (latency-bound, block
        scheduling, DRAM roof); large values give the textbook hard corner.
    sm_bandwidth_bytes_per_second : float or None
        Rate at which one block's bytes stream through its SM, bytes/s; None means the
        SM's share of the L2 bandwidth (``gpu.l2_bandwidth / gpu.sm_count``).
    block_dispatch_seconds : float
        Shortest interval between two block launches on one SM, seconds.
    launch_overhead_seconds : float
        Fixed cost of one kernel launch as CUDA events see it, seconds.
    fma_latency_cycles : float
        Dependent-issue latency of an FP32 FMA, cycles.
    l1_hit_latency_seconds, l2_hit_latency_seconds, dram_latency_seconds : float or None
        Latency of one dependent load that hits L1, hits L2, or misses L2 (pointer chases
        of the latency ladder, each level established by construction), seconds.
    l2_near_hit_latency_seconds, l2_far_hit_latency_seconds : float or None
        The two modes of L2 hits where the near and far partitions are told apart, seconds.
    tlb_miss_penalty_seconds : float or None
        Extra latency of an L2 hit whose page misses the TLBs, seconds.
    graph_kernel_seconds : float or None
        Time per empty kernel launched back to back from a CUDA graph, seconds.
    l1_read_bytes_per_second, l2_read_bytes_per_second, dram_read_bytes_per_second : float or None
        Read-bandwidth plateaus of the working-set sweep (hierarchical ceilings), bytes/s.
    dram_burst_bytes : float or None
        Bytes the DRAM reads for a lone sector (64 on HBM3/HBM3e Hopper); None: 32.
    dram_read_line_bytes : float or None
        DRAM-equivalent bytes of a 128-byte line read alone (one burst and the row's cost).
    dram_partial_write_line_bytes : float or None
        DRAM-equivalent bytes of a line whose sectors are written in part (fill and write back).
    l2_partial_store_sectors_per_second : float or None
        Partial-sector writes per second L2 merges (the probe: one float per line, 32 lines
        per warp store, nothing for L1 to combine): `predict` takes the kernel's
        ``l2_partial_store_sectors`` at this rate as an L2 floor.
    tree_level_seconds, tree_level_warp_seconds : float or None
        Latency of one level of a block's tree (shared load, add, shared store, barrier):
        ``tree_level_seconds + warps of the block x tree_level_warp_seconds``.
    dram_page_visit_bytes : float or None
        DRAM-equivalent bytes of opening a DRAM page beyond those a stream opens (a
        column of a row-major matrix opens one per row): the kernel's
        ``dram_*_page_visits`` over ``bytes / 1024`` cost this much each.
    sources : dict[str, str]
        For every parameter, ``"measured: ..."`` or ``"default: ..."`` with its origin.
    """

    model_config = _FINITE

    gpu: str
    idle_latency_seconds: float = Field(gt=0)
    sustained_bandwidth_fraction: float = Field(gt=0, le=1)
    knee_sharpness: float = Field(gt=0)
    sm_bandwidth_bytes_per_second: float | None = Field(default=None, gt=0)
    block_dispatch_seconds: float = Field(ge=0)
    launch_overhead_seconds: float = Field(ge=0)
    fma_latency_cycles: float = Field(gt=0)
    l1_hit_latency_seconds: float | None = Field(default=None, gt=0)
    l2_hit_latency_seconds: float | None = Field(default=None, gt=0)
    l2_near_hit_latency_seconds: float | None = Field(default=None, gt=0)
    l2_far_hit_latency_seconds: float | None = Field(default=None, gt=0)
    dram_latency_seconds: float | None = Field(default=None, gt=0)
    tlb_miss_penalty_seconds: float | None = Field(default=None, ge=0)
    graph_kernel_seconds: float | None = Field(default=None, gt=0)
    l1_read_bytes_per_second: float | None = Field(default=None, gt=0)
    l2_read_bytes_per_second: float | None = Field(default=None, gt=0)
    dram_read_bytes_per_second: float | None = Field(default=None, gt=0)
    dram_burst_bytes: float | None = Field(default=None, ge=32, le=256)
    dram_read_line_bytes: float | None = Field(default=None, gt=0)
    dram_partial_write_line_bytes: float | None = Field(default=None, gt=0)
    l2_partial_store_sectors_per_second: float | None = Field(default=None, gt=0)
    tree_level_seconds: float | None = Field(default=None, gt=0)
    tree_level_warp_seconds: float | None = Field(default=None, ge=0)
    dram_page_visit_bytes: float | None = Field(default=None, ge=0)
    sources: dict[str, str]

    @property
    def measured(self) -> tuple[str, ...]:
        """Names of the parameters that were measured on a GPU (figures are None unless measured)."""
        return tuple(k for k in CALIBRATION_PARAMETERS if self.sources.get(k, "").startswith("measured"))

    @property
    def defaulted(self) -> tuple[str, ...]:
        """Names of the parameters that fell back to defaults."""
        return tuple(k for k in CALIBRATION_PARAMETERS if k not in self.measured)


@functools.cache
def _calibration_table() -> dict[str, dict[str, Any]]:
    text = resources.files("roofline").joinpath("data/calibration.toml").read_text("utf-8")
    return tomllib.loads(text)


def _make_calibration(name: str, entry: dict[str, Any]) -> Calibration:
    # TOML has no null: a parameter without a "value" is None (derived at prediction time)
    names = (*CALIBRATION_PARAMETERS, *CALIBRATION_FIGURES)
    unknown = sorted(set(entry) - set(names))
    if unknown:
        raise RooflineError(f"calibration for {name!r} has unknown entries {unknown}; known: {', '.join(names)}")
    values = {k: entry[k].get("value") for k in names if k in entry}
    sources = {k: entry[k]["source"] for k in names if k in entry}
    try:
        return Calibration(gpu=name, sources=sources, **values)
    except ValidationError as exc:
        raise RooflineError(f"calibration for {name!r} is invalid: {exc.errors()[0]['msg']}") from None


def calibration(gpu: GPU | str) -> Calibration:
    """Return the packaged calibration for `gpu`, falling back per parameter to generic defaults.

    Parameters
    ----------
    gpu : GPU or str
        A GPU record or a name `roofline.gpu` understands.

    Returns
    -------
    Calibration
        Its ``sources`` say, for each parameter, whether it was measured on that GPU model or
        is the generic default.

    Examples
    --------
    >>> import roofline
    >>> roofline.calibration("H100 SXM").idle_latency_seconds > 0
    True
    """
    record = _lookup_gpu(gpu)
    table = _calibration_table()
    merged = dict(table["generic"])
    merged.update(table.get(record.name, {}))
    return _make_calibration(record.name, merged)


# `predict` and `time_cliffs` take a `calibration` argument that shadows the function
_packaged_calibration = calibration


def load_calibration(path: str | Path) -> Calibration:
    """Load a calibration written by ``gpuroof validate`` (its ``calibration`` JSON object).

    Parameters
    ----------
    path : str or Path
        A JSON file holding a `Calibration`: ``calibration.json`` of ``gpuroof calibrate`` or
        ``gpuroof validate``, or the latter's ``report.json`` of one device (its ``calibration``).

    Raises
    ------
    RooflineError
        If the file does not hold a valid calibration (not JSON, truncated, not UTF-8,
        non-finite numbers, a field out of range); the message names the file.
    OSError
        If the file cannot be read.
    """
    from occupancy._files import as_path, read_json

    path = as_path(path, RooflineError)
    data = read_json(path, RooflineError)
    if isinstance(data, dict) and isinstance(data.get("reports"), list):
        # a report.json of schema 2: the reports of one or several devices
        if len(data["reports"]) != 1:
            raise RooflineError(
                f"path={str(path)!r} holds the reports of {len(data['reports'])} devices: give one device's "
                "calibration.json"
            )
        data = data["reports"][0]
    if isinstance(data, dict) and isinstance(data.get("calibration"), dict):
        data = data["calibration"]
    elif isinstance(data, dict) and isinstance(data.get("prediction"), dict) and isinstance(
        data["prediction"].get("calibration"), dict
    ):  # a `gpuroof validate` report.json keeps it in its prediction check
        data = data["prediction"]["calibration"]
    if not isinstance(data, dict):
        raise RooflineError(f"path={str(path)!r} must hold a calibration object")
    try:
        return Calibration.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err.get("loc", ())) or "calibration"
        raise RooflineError(f"path={str(path)!r} is not a calibration: {where}: {err['msg']}") from None


def _finite_positive(name: str, value: Any, *, allow_inf: bool = False) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a number, not {type(value).__name__}")
    try:
        figure = float(value)
    except OverflowError:
        figure = math.inf
    if not (figure > 0 and (allow_inf or math.isfinite(figure))):
        raise RooflineError(f"{name}={value!r} must be > 0{'' if allow_inf else ' and finite'}")
    return figure


def _finite_nonnegative(name: str, value: Any) -> float:
    if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_)) \
            and value == 0:
        return 0.0
    return _finite_positive(name, value)


def achieved_bandwidth(
    bytes_in_flight,
    *,
    peak_bytes_per_second,
    latency_seconds,
    knee_sharpness,
    dispatch_bytes_per_second=math.inf,
):
    """Bandwidth sustained with `bytes_in_flight` outstanding: Little's law under the roofs.

    Three rates bound a streaming kernel: Little's law (``bytes_in_flight / latency``), the
    rate at which blocks can be launched (``dispatch_bytes_per_second``) and the DRAM roof.
    The result is their soft minimum ``(sum of rate**-p) ** (-1/p)``: it follows the
    smallest rate far from the corners and bends below both where two meet, as loaded
    latency rises near the roof.

    Parameters
    ----------
    bytes_in_flight : float or array_like
        Bytes of outstanding memory requests across the GPU.
    peak_bytes_per_second : float
        Sustained bandwidth roof, bytes/s.
    latency_seconds : float
        Round-trip latency of the outstanding requests, seconds.
    knee_sharpness : float
        Exponent ``p`` of the soft minimum.
    dispatch_bytes_per_second : float
        Bytes/s the block scheduler can start (SMs x bytes per block / dispatch interval);
        infinite by default.

    Returns
    -------
    float or numpy.ndarray
        Achieved bandwidth, bytes/s.

    Examples
    --------
    >>> round(achieved_bandwidth(1e9, peak_bytes_per_second=3e12, latency_seconds=6e-7,
    ...                          knee_sharpness=4) / 3e12, 3)
    1.0
    """
    from ._roofline import _check_positive

    concurrency = _check_positive("bytes_in_flight", bytes_in_flight, allow_zero=True)
    peak = _finite_positive("peak_bytes_per_second", peak_bytes_per_second)
    latency = _finite_positive("latency_seconds", latency_seconds)
    p = _finite_positive("knee_sharpness", knee_sharpness)
    dispatch = _finite_positive("dispatch_bytes_per_second", dispatch_bytes_per_second, allow_inf=True)
    # A Little's-law rate past the float range is no limit at all: the soft minimum drops it.
    with np.errstate(over="ignore"):
        little = concurrency / latency
    rates = (little, np.broadcast_to(peak, concurrency.shape), np.broadcast_to(dispatch, concurrency.shape))
    # in log space, so that rates of very different size neither overflow nor underflow
    with np.errstate(divide="ignore"):
        logs = np.stack([-p * np.log(np.maximum(r, 1e-300)) for r in rates])
    result = np.exp(-np.logaddexp.reduce(logs, axis=0) / p)
    return float(result) if result.ndim == 0 else result


class Prediction(BaseModel):
    """Predicted time of one launch of a kernel, with its limiter and the model's inputs.

    Attributes
    ----------
    seconds : float
        Predicted kernel time, seconds (what CUDA events around the launch measure).
    achieved_bytes_per_second, achieved_flops_per_second : float
        DRAM bytes and FLOPs over `seconds`.
    limiter : str
        ``dram_bandwidth`` (enough requests in flight, the roof binds), ``memory_latency``
        (too few bytes in flight to cover the latency), ``compute`` (arithmetic roof),
        ``issue`` (too few independent FMAs in flight per scheduler), ``tail`` (a partial
        last wave costs more than a fifth of the time) or ``launch`` (fixed launch cost).
    roofline_seconds : float
        The plain roofline bound for comparison, seconds.
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


#: Registers per thread assumed when a launch does not say (typical of simple kernels).
DEFAULT_REGISTERS_PER_THREAD = 32


def _launch_of(kernel: Any, launch: Any, function: str) -> Any:
    """The launch to predict: `launch`, else the kernel's own; a clear error without one."""
    import occupancy

    launch = kernel.launch if launch is None else launch
    if launch is None:
        raise RooflineError(
            f"{function} needs a launch: kernel {kernel.name!r} has none; give the Kernel "
            "launch=occupancy.Launch(grid=..., block=..., registers_per_thread=...) or pass launch="
        )
    if not isinstance(launch, occupancy.Launch):
        raise TypeError(f"launch must be an occupancy.Launch, not {type(launch).__name__}")
    if kernel.dram_bytes is None:
        raise RooflineError(
            f"{function} needs dram_bytes: kernel {kernel.name!r} has none "
            "(roofline.traffic() counts them from the access pattern)"
        )
    return launch


def _assumptions(launch: Any, arch: Any) -> list[str]:
    """What the prediction of `launch` on `arch` assumes rather than knows."""
    import occupancy

    notes = []
    if launch.registers_per_thread is None:
        notes.append(
            f"registers_per_thread={DEFAULT_REGISTERS_PER_THREAD} assumed (not known before compiling)"
        )
    read_for = getattr(launch.resources, "architecture", None)
    if read_for is not None:
        try:
            read_for = occupancy.architecture(read_for).name
        except (ValueError, TypeError):
            pass
        if read_for != arch.name:
            notes.append(f"the kernel's resources were read for {read_for}, the GPU is {arch.name}")
    return notes


def l2_bytes_with_l1_reuse(kernel: Any, launch: Any, occupancy_result: Any) -> float | None:
    """The kernel's L2 bytes when L1 keeps what a block loads (None when they are not known).

    When every resident block's load footprint (``l1_footprint_bytes_per_block``) fits in
    the L1 the launch's shared-memory configuration leaves (``occupancy_result.driver``), a
    block reads each sector from L2 once: its loads cost ``blocks x footprint`` bytes at L2
    (never more than without reuse); stores go to L2 as they are. Else, when two
    consecutive loop iterations of every resident block fit
    (``l1_window_bytes_per_block``), a block reads from L2 only what its iteration before
    did not load (``blocks x l1_stream_bytes_per_block``). Otherwise ``l2_bytes``.

    Parameters
    ----------
    kernel : Kernel
    launch : occupancy.Launch
        The launch (its block count).
    occupancy_result : occupancy.OccupancyResult
        The launch's occupancy (resident blocks, the driver's L1 share).

    Raises
    ------
    TypeError
        If an argument is not of its type.
    """
    import occupancy

    kernel = kernel_of(kernel)
    if not isinstance(launch, occupancy.Launch):
        raise TypeError(f"launch must be an occupancy.Launch, not {type(launch).__name__}")
    if not isinstance(occupancy_result, occupancy.OccupancyResult):
        raise TypeError(f"occupancy_result must be an occupancy.OccupancyResult, not {type(occupancy_result).__name__}")
    if kernel.l2_bytes is None:
        return None
    l2 = float(kernel.l2_bytes)
    footprint, stores = kernel.l1_footprint_bytes_per_block, kernel.l2_store_bytes
    driver = getattr(occupancy_result, "driver", None)
    l1 = getattr(driver, "l1_cache", None)
    if footprint is None or stores is None or not l1:
        return l2
    resident = occupancy_result.active_blocks_per_sm
    loads = max(0.0, l2 - float(stores))
    if resident * float(footprint) <= l1:
        return min(loads, launch.blocks * float(footprint)) + float(stores)
    stream, window = kernel.l1_stream_bytes_per_block, kernel.l1_window_bytes_per_block
    if stream is not None and window is not None and resident * float(window) <= l1:
        # the whole footprint does not fit, two loop iterations do: what the last
        # iteration loaded is still there (a row walked 4 bytes at a time, a shared column)
        return min(loads, launch.blocks * float(stream)) + float(stores)
    return l2


def _cache_seconds(record: GPU, kernel: Any, cal: Calibration, l2_bytes: float | None) -> float:
    """Time the L2 and L1 bytes take at those levels' bandwidths: L2 at its measured plateau
    where the calibration has it, L1 at its datasheet rate (which shared-memory wavefronts
    reach; global loads through L1 reach less); and the partial-sector writes L2 merges one
    by one, at the rate the calibration's probe measured."""
    l2_bandwidth = cal.l2_read_bytes_per_second or record.bandwidth("l2")
    seconds = [0.0]
    if l2_bytes:
        seconds.append(l2_bytes / l2_bandwidth)
    if kernel.l2_partial_store_sectors and cal.l2_partial_store_sectors_per_second:
        seconds.append(float(kernel.l2_partial_store_sectors) / cal.l2_partial_store_sectors_per_second)
    if kernel.l1_bytes:
        seconds.append(float(kernel.l1_bytes) / record.bandwidth("l1"))
    return max(seconds)


def _in_flight_note(launch: Any) -> list[str]:
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


def _queued_life(other_seconds: float, l1_seconds: float, blocks_per_sm: float) -> float:
    """A block's life when the blocks resident on an SM take turns at its L1 pipe.

    Mean-value analysis of a closed queue (Reiser & Lavenberg 1980): `blocks_per_sm` blocks
    each spend `other_seconds` away (latency, port, barriers) and `l1_seconds` in the pipe;
    a block arriving at the pipe finds the queue the others leave there. Exact for one
    block; as blocks are added the life tends to ``blocks x l1_seconds`` (the pipe binds).
    """
    if l1_seconds <= 0:
        return other_seconds
    queue, residence = 0.0, l1_seconds
    whole, part = divmod(max(1.0, blocks_per_sm), 1.0)
    for n in range(1, int(whole) + 1):
        residence = l1_seconds * (1.0 + queue)
        queue = n * residence / (other_seconds + residence)
    if part:  # a partial wave: between whole block counts
        nxt = l1_seconds * (1.0 + queue)
        residence += part * (nxt - residence)
    return other_seconds + residence


def _wave_memory_seconds(blocks, slots, bytes_per_block, bandwidth_of_blocks):
    full, rest = divmod(blocks, slots)
    seconds = 0.0
    if full:
        seconds += full * slots * bytes_per_block / bandwidth_of_blocks(slots)
    if rest:
        seconds += rest * bytes_per_block / bandwidth_of_blocks(rest)
    return seconds


def instructions_from_sass(sass: Any, kernel: Any, launch: Any = None) -> float | None:
    """Warp instructions a launch issues, estimated from its SASS and the kernel's loads.

    Straight-line code issues its SASS once per thread. A kernel with loops runs its hot
    loop (``sass.hot_loop``) as often as its global loads are needed: the global loads each
    thread issues (``load_bytes`` over the threads and the loads' width) beyond those
    outside the loops, over the loop's own; the outermost loops with shared-memory accesses
    and no global loads run as often as the shared accesses left over need
    (``shared_bytes``, 4 bytes each). Instructions outside every loop count once. Every
    thread is counted as taking the same path (no divergence, no early exit); the other
    loops (a remainder loop, a loop around the hot loop) are left out. The outermost loops
    of arithmetic alone (no global or shared access, some FP32/FP64 arithmetic) run as
    often as the kernel's ``flops`` left over need (an FFMA counts 2): loops on the two
    sides of a branch share the flops, which is each warp's count when every warp takes
    one side (`predict` scales it by ``kernel.branch_issue_factor``).

    Parameters
    ----------
    sass : occupancy.SassSummary
        ``KernelResources.sass`` of the kernel.
    kernel : Kernel
        Gives ``load_bytes`` (and ``launch`` when `launch` is None).
    launch : occupancy.Launch, optional
        The launch; default ``kernel.launch``.

    Returns
    -------
    float or None
        Warp instructions of the whole launch; None when a loop's trip count is tied to
        nothing the kernel gives (no ``load_bytes``, ``shared_bytes`` or ``flops`` for
        its loops, or loops with neither memory accesses nor arithmetic).

    Raises
    ------
    TypeError
        If `sass` is not an `occupancy.SassSummary` or `launch` not an `occupancy.Launch`.
    RooflineError
        If there is no launch.
    """
    import occupancy

    if not isinstance(sass, occupancy.SassSummary):
        raise TypeError(f"sass must be an occupancy.SassSummary, not {type(sass).__name__}")
    kernel = kernel_of(kernel)
    launch = kernel.launch if launch is None else launch
    if launch is None:
        raise RooflineError(f"instructions_from_sass needs a launch: kernel {kernel.name!r} has none")
    if not isinstance(launch, occupancy.Launch):
        raise TypeError(f"launch must be an occupancy.Launch, not {type(launch).__name__}")
    warps = launch.blocks * math.ceil(launch.threads_per_block / 32)
    total = float(sass.instructions.total)
    if not sass.loops:
        return total * warps
    outer = [loop for loop in sass.loops if loop.depth == 1]
    instructions = total - sum(loop.instructions.total for loop in outer)  # outside every loop

    def shared(counts: Any) -> int:
        return counts.shared_loads + counts.shared_stores

    # the hot loop runs once per group of its global loads
    hot = sass.loops[sass.hot_loop] if sass.hot_loop is not None else None
    trips = 0.0
    if hot is not None and hot.instructions.global_loads:
        if kernel.load_bytes is None:
            return None
        outside = sass.instructions.global_loads - sum(loop.instructions.global_loads for loop in outer)
        loads = float(kernel.load_bytes) / launch.threads / float(sass.global_load_bytes or 4)
        trips = max(0.0, loads - outside) / hot.instructions.global_loads
        instructions += trips * hot.instructions.total
    # loops over shared memory alone run once per group of their shared accesses
    shared_only = [loop for loop in outer if not loop.instructions.global_loads and shared(loop.instructions)]
    if shared_only:
        if not kernel.shared_bytes:
            return None
        elsewhere = (shared(sass.instructions) - sum(shared(loop.instructions) for loop in outer)
                     + (trips * shared(hot.instructions) if hot is not None and trips else 0.0))
        accesses = float(kernel.shared_bytes) / launch.threads / 4.0
        shared_trips = max(0.0, accesses - elsewhere) / sum(shared(loop.instructions) for loop in shared_only)
        instructions += shared_trips * sum(loop.instructions.total for loop in shared_only)
    # loops of arithmetic alone (no memory access) run as often as the flops left over need
    def flops(counts: Any) -> int:
        return 2 * counts.fp32_fma + counts.fp32_add + counts.fp32_mul + 2 * counts.fp64

    arithmetic = [loop for loop in outer if not loop.instructions.global_loads and not shared(loop.instructions)
                  and flops(loop.instructions)]
    if arithmetic:
        # FFMA, FADD, FMUL and DFMA count the flops: a kernel whose flops are another
        # precision's (tensor, half) says nothing about these loops' trips
        scalar = kernel.flops_by_precision is None and (kernel.precision or "fp32") in ("fp32", "fp64")
        if not kernel.flops or not scalar or any(loop.instructions.tensor for loop in arithmetic):
            return None
        elsewhere = (flops(sass.instructions) - sum(flops(loop.instructions) for loop in outer)
                     + (trips * flops(hot.instructions) if hot is not None and trips else 0.0))
        per_thread = float(kernel.flops) / launch.threads
        arithmetic_trips = max(0.0, per_thread - elsewhere) / sum(flops(loop.instructions) for loop in arithmetic)
        instructions += arithmetic_trips * sum(loop.instructions.total for loop in arithmetic)
    if not trips and not shared_only and not arithmetic:
        return None  # loops whose trip count is tied to no access
    return instructions * warps


def dram_equivalent_bytes(kernel: Any, calibration: Calibration) -> float:
    """Bytes the DRAM spends on `kernel`'s traffic, counting how it moves them.

    ``dram_bytes`` counts 32-byte sectors. Where the kernel gives its footprint (built by
    `roofline.traffic`) and the calibration the DRAM's granularity, the read side costs at
    least ``64 x bursts`` (a DRAM that reads 64-byte bursts fetches both sectors of one)
    and ``dram_read_line_bytes`` per line read; the write side adds a 32-byte fill for each
    sector written in part and costs at least ``dram_partial_write_line_bytes`` per line
    holding one. Each side's DRAM pages opened beyond a stream's (``dram_*_page_visits``
    over ``bytes / PAGE_BYTES``) add ``dram_page_visit_bytes`` each.

    Parameters
    ----------
    kernel : Kernel
    calibration : Calibration

    Returns
    -------
    float
        Bytes; ``kernel.dram_bytes`` when the kernel does not give its footprint.

    Raises
    ------
    RooflineError
        If the kernel has no ``dram_bytes``.

    Examples
    --------
    >>> import roofline
    >>> k = roofline.models.strided_read(1 << 20, 32)
    >>> cal = roofline.calibration("H200")
    >>> roofline.dram_equivalent_bytes(k, cal) > k.dram_bytes  # one sector per 64-byte burst
    True
    """
    kernel = kernel_of(kernel)
    if not isinstance(calibration, Calibration):
        raise TypeError(f"calibration must be a roofline.Calibration, not {type(calibration).__name__}")
    load, write = _dram_sides(kernel, calibration)
    return load + (write or 0.0)


def _dram_sides(kernel: Any, calibration: Calibration) -> tuple[float, float | None]:
    """`dram_equivalent_bytes` as (read, written); written is None when the kernel does not
    say which of its bytes are written (its ``dram_bytes`` are then the read side)."""
    if kernel.dram_bytes is None:
        raise RooflineError(f"kernel {kernel.name!r} has no dram_bytes (roofline.traffic() counts them)")
    total = float(kernel.dram_bytes)
    store = kernel.dram_store_bytes
    if store is None:
        return total, None
    store = min(float(store), total)
    load = total - store
    page = calibration.dram_page_visit_bytes or 0.0

    def opened(visits: Any, nbytes: float) -> float:
        # pages opened beyond the ones a stream of the same bytes opens, at their cost
        return page * max(0.0, float(visits) - nbytes / PAGE_BYTES) if page and visits is not None else 0.0

    if load > 0:
        if (calibration.dram_burst_bytes or 32) > 32 and kernel.dram_load_bursts is not None:
            load = max(load, float(kernel.dram_load_bursts) * calibration.dram_burst_bytes)
        load += opened(kernel.dram_load_page_visits, load)
        if calibration.dram_read_line_bytes and kernel.dram_load_lines:
            load = max(load, float(kernel.dram_load_lines) * calibration.dram_read_line_bytes)
    partial = float(kernel.dram_store_partial_sectors or 0)
    write = store + 32.0 * partial + opened(kernel.dram_store_page_visits, store)
    if partial and calibration.dram_partial_write_line_bytes and kernel.dram_store_lines:
        write = max(write, min(float(kernel.dram_store_lines), partial) * calibration.dram_partial_write_line_bytes)
    return load, write


def dram_roof(gpu: GPU | str, calibration: Calibration, read_bytes: float, write_bytes: float | None) -> float:
    """DRAM bytes per second a kernel reaches at best with this mix of reads and writes.

    The copy (half read, half written) reaches ``memory_bandwidth x
    sustained_bandwidth_fraction``; a pure read stream reaches the calibration's measured
    ``dram_read_bytes_per_second`` (the bus never turns around for writes). A written byte
    then costs what makes the copy come out: ``2 / copy - 1 / read`` seconds per byte.

    Parameters
    ----------
    gpu : GPU or str
    calibration : Calibration
    read_bytes, write_bytes : float
        DRAM-equivalent bytes read and written (`dram_equivalent_bytes`' two sides);
        `write_bytes` None when unknown (the copy's rate is returned).

    Returns
    -------
    float
        Bytes per second.

    Examples
    --------
    >>> import roofline
    >>> cal = roofline.calibration("H200")
    >>> copy = roofline.dram_roof("H200", cal, 1.0, 1.0)
    >>> roofline.dram_roof("H200", cal, 1.0, 0.0) > copy > roofline.dram_roof("H200", cal, 0.0, 1.0)
    True
    """
    record = _lookup_gpu(gpu)
    if not isinstance(calibration, Calibration):
        raise TypeError(f"calibration must be a roofline.Calibration, not {type(calibration).__name__}")
    copy = record.memory_bandwidth * calibration.sustained_bandwidth_fraction
    return mixed_dram_bandwidth(read_bytes, write_bytes, copy_bytes_per_second=copy,
                                read_bytes_per_second=calibration.dram_read_bytes_per_second)


def mixed_dram_bandwidth(read_bytes: float, write_bytes: float | None, *, copy_bytes_per_second: float,
                         read_bytes_per_second: float | None) -> float:
    """`dram_roof`'s rule on plain figures: bytes per second of this read/write mix.

    A read byte takes ``1 / read_bytes_per_second``, a written byte ``2 / copy - 1 / read``
    (the copy, half of each, comes out at `copy_bytes_per_second`). The copy's rate when
    `write_bytes` is None, the read rate is unknown, or it does not exceed the copy's.

    Examples
    --------
    >>> from roofline import mixed_dram_bandwidth
    >>> round(mixed_dram_bandwidth(0.0, 1.0, copy_bytes_per_second=4e12, read_bytes_per_second=5e12) / 1e12, 3)
    3.333
    """
    copy = _finite_positive("copy_bytes_per_second", copy_bytes_per_second)
    read = None if read_bytes_per_second is None else _finite_positive("read_bytes_per_second", read_bytes_per_second)
    read_bytes = _finite_nonnegative("read_bytes", read_bytes)
    write_bytes = None if write_bytes is None else _finite_nonnegative("write_bytes", write_bytes)
    if write_bytes is None or read is None or read_bytes + write_bytes <= 0:
        return copy
    per_written = 2.0 / copy - 1.0 / read
    if per_written <= 0:
        return copy
    return (read_bytes + write_bytes) / (read_bytes / read + write_bytes * per_written)


def _check_calibration(cal: Any, record: GPU) -> None:
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


def predict(
    gpu: GPU | str,
    kernel: Any,
    launch: Any = None,
    *,
    calibration: Calibration | None = None,
    loads_in_flight_per_thread: int | None = None,
    fma_chains_per_thread: int = 1,
) -> Prediction:
    """Predict the time of `kernel` launched as `launch` on `gpu`.

    Memory side: each resident thread keeps ``loads_in_flight_per_thread`` of its
    ``elements_per_thread`` accesses outstanding (all of them by default: independent,
    unrolled accesses). A block lives ``rounds x latency + bytes per block / SM bandwidth``
    (+ its tree levels, + its L1 passes, ``l1_bytes`` per block at 128 bytes per SM clock,
    queued behind the other resident blocks' by a mean-value analysis of the SM's pipe), so
    a full wave sustains ``resident blocks x bytes per block / block lifetime`` (Little's
    law); `achieved_bandwidth` takes the soft minimum of that, the block-dispatch rate and
    the DRAM roof of the kernel's mix of reads and writes (`dram_roof`); the bytes are
    `dram_equivalent_bytes`. Grids smaller than one wave or with a partial last wave run that wave at
    its own, lower concurrency. L2 and L1/shared bytes, when the kernel gives them, bound
    the memory time from below at those levels' bandwidths.
    Compute side: ``flops / (peak x min(1, warps per scheduler x fma_chains / FMA latency))``,
    times ``kernel.branch_issue_factor`` (a divergent warp runs both sides of a branch), and
    at least the kernel's warp instructions at one per scheduler and cycle (``instructions``,
    else estimated from the launch's SASS by `instructions_from_sass`).
    The prediction is the larger side plus the launch overhead.

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
    import occupancy

    record = _lookup_gpu(gpu)
    cal = calibration if calibration is not None else _packaged_calibration(record)
    _check_calibration(cal, record)
    kernel = kernel_of(kernel)
    launch = _launch_of(kernel, launch, "predict")
    assumptions = _assumptions(launch, record.architecture)
    keywords = launch.occupancy_keywords(assumed_registers_per_thread=DEFAULT_REGISTERS_PER_THREAD)
    occ = occupancy.calculate(record.architecture, **keywords)
    if occ.active_blocks_per_sm == 0:
        raise RooflineError(f"launch cannot run on {record.name}: {occ.reason}")

    elements = launch.elements_per_thread
    if loads_in_flight_per_thread is None:
        loads_in_flight_per_thread = launch.loads_in_flight_per_thread
        assumptions += _in_flight_note(launch)
    in_flight = elements if loads_in_flight_per_thread is None else loads_in_flight_per_thread
    for name, value in (("loads_in_flight_per_thread", in_flight), ("fma_chains_per_thread", fma_chains_per_thread)):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise TypeError(f"{name} must be an integer, not {type(value).__name__}")
        if not 1 <= value <= 2**31 - 1:
            raise RooflineError(f"{name}={value!r} must be an integer from 1 to 2147483647")
    rounds = math.ceil(elements / min(int(in_flight), elements))

    blocks = launch.blocks
    slots = occ.active_blocks_per_sm * record.sm_count
    read_bytes, written_bytes = _dram_sides(kernel, cal)
    dram_bytes = read_bytes + (written_bytes or 0.0)
    bytes_per_block = dram_bytes / blocks
    peak_bw = dram_roof(record, cal, read_bytes, written_bytes)
    latency = cal.idle_latency_seconds
    sm_bandwidth = cal.sm_bandwidth_bytes_per_second or record.l2_bandwidth / record.sm_count
    # a block lives for its loads' round trips, the time its own bytes take to pass
    # through the SM's port and its own L1 passes through the L1 (one 128-byte line per
    # clock), and the levels of its tree (each a barrier the whole block
    # waits at); Little's law then turns resident bytes into bandwidth
    barriers = float(kernel.barriers_per_block or 0)
    level_seconds = (cal.tree_level_seconds or 0.0) + (cal.tree_level_warp_seconds or 0.0) * math.ceil(
        launch.threads_per_block / 32)
    tree_seconds = barriers * level_seconds if barriers and cal.tree_level_seconds else 0.0
    if barriers and not cal.tree_level_seconds:
        assumptions.append("barriers cost no time: the calibration has no tree_level_seconds")
    l1_seconds = (float(kernel.l1_bytes) / blocks / (record.bandwidth("l1") / record.sm_count)
                  if kernel.l1_bytes else 0.0)
    block_seconds = rounds * latency + bytes_per_block / sm_bandwidth + l1_seconds + tree_seconds

    def rates(resident_blocks: int) -> tuple[float, float, float]:
        life = _queued_life(block_seconds - l1_seconds, l1_seconds, resident_blocks / record.sm_count)
        in_flight_rate = resident_blocks * bytes_per_block / life
        dispatch = (
            min(resident_blocks, record.sm_count) * bytes_per_block / cal.block_dispatch_seconds
            if cal.block_dispatch_seconds > 0 else math.inf
        )
        return in_flight_rate, dispatch, peak_bw

    def bandwidth_of_blocks(resident_blocks: int) -> float:
        in_flight_rate, dispatch, _ = rates(resident_blocks)
        return achieved_bandwidth(in_flight_rate * latency, peak_bytes_per_second=peak_bw, latency_seconds=latency,
                                  knee_sharpness=cal.knee_sharpness, dispatch_bytes_per_second=dispatch)

    dram_seconds = _wave_memory_seconds(blocks, slots, bytes_per_block, bandwidth_of_blocks) if dram_bytes else 0.0
    full_wave_seconds = dram_bytes / bandwidth_of_blocks(min(blocks, slots)) if dram_bytes else 0.0
    cache_seconds = _cache_seconds(record, kernel, cal, l2_bytes_with_l1_reuse(kernel, launch, occ))
    memory_seconds = max(dram_seconds, cache_seconds)

    _, peak_flops = compute_roof(record, kernel)
    flops = float(kernel.flops)
    warps_per_scheduler = occ.active_warps_per_sm / record.architecture.sub_partitions
    issue_efficiency = min(1.0, warps_per_scheduler * fma_chains_per_thread / cal.fma_latency_cycles)
    # a divergent warp runs each side of its branches with the other lanes idle
    paths = float(kernel.branch_issue_factor or 1.0)
    compute_seconds = paths * flops / (peak_flops * issue_efficiency) if flops else 0.0
    instructions = kernel.instructions
    sass = getattr(launch.resources, "sass", None)
    if instructions is None and sass is not None:
        instructions = instructions_from_sass(sass, kernel, launch)
        if instructions is not None:
            instructions *= paths
            assumptions.append(f"{instructions / launch.blocks:.0f} warp instructions per block, estimated from "
                               "the SASS (the hot loop runs once per group of its global loads"
                               + (f"; x{paths:g} paths per warp through divergent branches" if paths > 1 else "")
                               + ")")
    if instructions:
        # every warp instruction takes an issue slot of its scheduler (one per cycle); a
        # divergent branch's two sides are both issued, which the count includes
        # (one instruction per scheduler and cycle at best: independent instructions of one
        # warp issue back to back, so the warps' count does not lower this rate)
        schedulers = record.sm_count * record.architecture.sub_partitions
        compute_seconds = max(compute_seconds, float(instructions) / (schedulers * record.boost_clock_hz))

    launch_seconds = cal.launch_overhead_seconds
    seconds = max(memory_seconds, compute_seconds) + launch_seconds
    roofline_seconds = analyze(record, kernel).time_lower_bound_seconds

    if launch_seconds >= max(memory_seconds, compute_seconds):
        limiter: Limiter = "launch"
    elif compute_seconds > memory_seconds:
        # the arithmetic roof binds only when nothing (dependencies, issue slots) slows it
        limiter = "compute" if math.isclose(compute_seconds, paths * flops / peak_flops) else "issue"
    elif cache_seconds > dram_seconds:
        limiter = "cache_bandwidth"
    elif dram_seconds > 1.2 * full_wave_seconds:
        limiter = "tail"
    else:
        in_flight_rate, dispatch, roof = rates(min(blocks, slots))
        smallest = min(in_flight_rate, dispatch, roof)
        limiter = ("dram_bandwidth" if smallest == roof
                   else "block_scheduling" if smallest == dispatch else "memory_latency")

    return Prediction(
        seconds=seconds,
        achieved_bytes_per_second=dram_bytes / seconds,
        achieved_flops_per_second=flops / seconds,
        limiter=limiter,
        roofline_seconds=roofline_seconds,
        active_blocks_per_sm=occ.active_blocks_per_sm,
        active_warps_per_sm=occ.active_warps_per_sm,
        waves=blocks / slots,
        bytes_in_flight=min(blocks, slots) * bytes_per_block / rounds,
        dram_seconds=dram_seconds,
        cache_seconds=cache_seconds,
        memory_seconds=memory_seconds,
        compute_seconds=compute_seconds,
        launch_seconds=launch_seconds,
        calibration=cal,
        assumptions=tuple(assumptions),
    )


class TimeCliff(BaseModel):
    """Predicted time of the launch with one resource moved to an occupancy threshold.

    Attributes
    ----------
    resource : str
        ``registers`` (per thread), ``shared_memory`` (bytes per block) or
        ``threads_per_block`` (the grid shrinks or grows to keep the same threads).
    value : int
        The resource's value at the threshold (the first value with the new occupancy).
    active_blocks_per_sm, active_warps_per_sm : int
        Occupancy from that value on.
    predicted_seconds : float
        Predicted time there, seconds.
    relative_time : float
        ``predicted_seconds`` over the current configuration's prediction.
    limiter : str
        The prediction's limiter there.
    """

    model_config = _FROZEN

    resource: Literal["registers", "shared_memory", "threads_per_block"]
    value: int
    active_blocks_per_sm: int
    active_warps_per_sm: int
    predicted_seconds: float
    relative_time: float
    limiter: Limiter


class TimeCliffs(BaseModel):
    """The current prediction and the predicted time at every occupancy cliff."""

    model_config = _FROZEN

    gpu: str
    kernel: str
    current: Prediction
    cliffs: tuple[TimeCliff, ...]

    def worst(self, resource: str) -> TimeCliff | None:
        """The cliff of `resource` with the largest predicted slowdown (None if none)."""
        if not isinstance(resource, str):
            raise TypeError(f"resource must be a str, not {type(resource).__name__}")
        rows = [c for c in self.cliffs if c.resource == resource]
        return max(rows, key=lambda c: c.relative_time, default=None)


def time_cliffs(gpu: GPU | str, kernel: Any, launch: Any = None, *, calibration: Calibration | None = None) -> TimeCliffs:
    """Predict the time at every occupancy threshold of registers, shared memory and block size.

    The thresholds come from `occupancy.cliffs`; each is re-predicted with `predict`, the
    other resources held fixed. Moving the block size keeps the total thread count (the
    grid is re-sized), so the same work is done.

    Parameters
    ----------
    gpu : GPU or str
        The GPU.
    kernel : Kernel
        A `roofline.Kernel`, with what `predict` needs (``dram_bytes``, a launch).
    launch : occupancy.Launch, optional
        Launch instead of ``kernel.launch``.
    calibration : Calibration, optional
        Model parameters; default `roofline.calibration(gpu)`.

    Returns
    -------
    TimeCliffs

    Raises
    ------
    RooflineError
        As `predict`.

    Examples
    --------
    >>> import roofline
    >>> tc = roofline.time_cliffs("H100 SXM", roofline.models.copy(2**26))
    >>> tc.worst("registers").relative_time > 1
    True
    """
    import occupancy

    record = _lookup_gpu(gpu)
    cal = calibration if calibration is not None else _packaged_calibration(record)
    kernel = kernel_of(kernel)
    launch = _launch_of(kernel, launch, "time_cliffs")
    current = predict(record, kernel, launch, calibration=cal)
    keywords = launch.occupancy_keywords(assumed_registers_per_thread=DEFAULT_REGISTERS_PER_THREAD)
    found = occupancy.cliffs(record.architecture, **keywords)
    # occupancy.cliffs sweeps shared memory as if the kernel opted in to all of it
    default_dynamic = record.architecture.max_shared_memory_per_block - launch.static_shared_memory
    allowed_dynamic = default_dynamic if launch.max_dynamic_shared_memory is None else launch.max_dynamic_shared_memory
    rows: list[TimeCliff] = []
    threads = launch.threads
    for resource in ("registers", "shared_memory", "threads_per_block"):
        for threshold in getattr(found, resource).thresholds:
            if threshold.active_blocks_per_sm == 0:
                continue
            if resource == "registers":
                changed = launch.model_copy(update={"registers_per_thread": threshold.value})
            elif resource == "shared_memory":
                dynamic = max(0, threshold.value - launch.static_shared_memory)
                update: dict[str, Any] = {"dynamic_shared_memory": dynamic}
                if dynamic > allowed_dynamic:
                    update["max_dynamic_shared_memory"] = dynamic
                changed = launch.model_copy(update=update)
            else:
                block = threshold.value
                changed = launch.model_copy(update={"block": block, "grid": math.ceil(threads / block)})
            try:
                moved = predict(record, kernel, changed, calibration=cal)
            except (RooflineError, ValueError):
                continue
            rows.append(
                TimeCliff(
                    resource=resource,
                    value=threshold.value,
                    active_blocks_per_sm=moved.active_blocks_per_sm,
                    active_warps_per_sm=moved.active_warps_per_sm,
                    predicted_seconds=moved.seconds,
                    relative_time=moved.seconds / current.seconds,
                    limiter=moved.limiter,
                )
            )
    return TimeCliffs(gpu=record.name, kernel=str(getattr(kernel, "name", "kernel")), current=current,
                      cliffs=tuple(rows))
