"""The instruction roofline (Ding & Williams, "An Instruction Roofline Model for GPUs",
PMBS 2019): warp instructions per second against warp instructions per memory transaction.

Integer- and address-heavy kernels have no honest place on a FLOP roofline: their work is
instructions, not flops. Here a kernel is a point per memory level at
``(warp instructions / transactions at that level, warp instructions / second)``; a
transaction is a 32-byte sector (Ding & Williams count L1 and L2 sectors and DRAM sectors
alike). The ceilings are the warp-instruction issue rate, ``SMs x schedulers x SM clock``
(one warp instruction per scheduler per cycle), and one diagonal per level, its bandwidth
in sectors per second (``y = x x transactions/s``).

A profiled kernel's warp instructions are Nsight's ``smsp__inst_executed.sum`` (the
``InstructionStats`` and ``SpeedOfLight`` sections), else the SASS's estimate
(`instructions_from_sass`); its sectors are its bytes at each level over 32 (DRAM bytes,
the SM<->L2 sectors where collected else the L2 roofline bytes, the L1 roofline bytes).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from ._adapters import counted_kernel, measured_launch
from ._chart import roofline_chart
from ._errors import RooflineError
from ._facts import gpu as lookup_gpu
from ._kernel import Kernel
from ._profile import ProfileKernel, ProfileReport
from ._predict import instructions_from_sass
from ._predict.terms._term import finite_positive

__all__ = ["InstructionCeiling", "InstructionPoint", "InstructionRoofline", "instruction_roofline"]

_FROZEN = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

#: Bytes of one memory transaction (a sector) at every level.
SECTOR_BYTES = 32
#: The largest SM clock an issue ceiling is drawn at, Hz: far above any GPU's, and low enough
#: that SMs x schedulers x clock stays finite (a clock of 1e305 Hz overflowed to inf).
MAX_SM_CLOCK_HZ = 1e11


class InstructionCeiling(BaseModel):
    """The issue rate (warp instructions/s) or one level's sectors per second."""

    model_config = _FROZEN

    name: str = Field(description='"issue", or the memory level ("dram", "l2", "l1").')
    kind: str = Field(description='"issue" or "memory".')
    value: float = Field(gt=0, description="Warp instructions/s (issue) or transactions/s (memory).")
    formula: str = ""


class InstructionPoint(BaseModel):
    """One kernel at one memory level on the instruction roofline (measured)."""

    model_config = _FROZEN

    kernel: str
    level: str
    instructions_per_transaction: float = Field(gt=0, description="Warp instructions per 32-byte transaction.")
    instructions_per_second: float = Field(gt=0, description="Warp instructions per second.")
    source: str = Field(default="", description="Where the instruction count came from.")


class InstructionRoofline(BaseModel):
    """Everything the instruction-roofline panel draws."""

    model_config = _FROZEN

    gpu: str
    ceilings: tuple[InstructionCeiling, ...]
    points: tuple[InstructionPoint, ...] = ()

    @property
    def issue_rate(self) -> float:
        """Warp instructions per second at the issue ceiling."""
        return next(c.value for c in self.ceilings if c.kind == "issue")


def _warp_instructions(row: ProfileKernel) -> tuple[float | None, str]:
    k = row.kernel
    if k.measured.instructions:
        return float(k.measured.instructions), "Nsight's smsp__inst_executed.sum"
    if k.sass is not None:
        launch = measured_launch(k.grid, k.block, registers_per_thread=k.registers_per_thread)
        counts = Kernel(name=k.name, flops=float(row.flops or 0.0), dram_bytes=float(k.dram_bytes or 0.0))
        estimate = instructions_from_sass(k.sass, counted_kernel(counts, launch), launch)
        if estimate:
            return estimate, "estimated from the SASS"
    return None, ""


def instruction_roofline(report: ProfileReport, *, sm_clock_hz: float | None = None) -> InstructionRoofline:
    """The instruction roofline of a `profile_report`: the GPU's ceilings and each kernel's points.

    Parameters
    ----------
    report : ProfileReport
        From `profile_report`.
    sm_clock_hz : float, optional
        The SM clock of the issue ceiling, Hz; default the profile's (the median of its
        kernels' SM clocks), else the datasheet's boost clock.

    Returns
    -------
    InstructionRoofline

    Raises
    ------
    RooflineError
        An `sm_clock_hz` that is not a positive number up to `MAX_SM_CLOCK_HZ` (100 GHz).

    Examples
    --------
    >>> import roofline
    >>> ir = roofline.instructions.instruction_roofline(roofline.profile_report("tests/data/ncu/user_kernels.raw.csv"))
    >>> round(ir.issue_rate / 1e9), sorted({p.level for p in ir.points})
    (1019, ['dram', 'l1', 'l2'])
    """
    if not isinstance(report, ProfileReport):
        raise TypeError(f"report must be a ProfileReport (from profile_report), not {type(report).__name__}")
    if sm_clock_hz is not None:
        sm_clock_hz = finite_positive("sm_clock_hz", sm_clock_hz)
        if sm_clock_hz > MAX_SM_CLOCK_HZ:
            raise RooflineError(f"sm_clock_hz={sm_clock_hz!r} exceeds the maximum of {MAX_SM_CLOCK_HZ:g} Hz (100 GHz)")
    device = lookup_gpu(report.gpu)
    clocks = sorted(r.kernel.measured.sm_clock_hz for r in report.kernels if r.kernel.measured.sm_clock_hz)
    clock = sm_clock_hz or (clocks[len(clocks) // 2] if clocks else device.boost_clock_hz)
    schedulers = device.sm_count * device.architecture.sub_partitions
    ceilings = [InstructionCeiling(
        name="issue", kind="issue", value=schedulers * clock,
        formula=f"{device.sm_count} SMs x {device.architecture.sub_partitions} schedulers x {clock / 1e6:.0f} MHz")]
    memory = {c.name: c for c in roofline_chart(device, ()).ceilings
              if c.kind == "memory" and c.origin == "theoretical"}
    for level in ("l1", "l2", "dram"):
        if level in memory:
            ceilings.append(InstructionCeiling(
                name=level, kind="memory", value=memory[level].value / SECTOR_BYTES,
                formula=f"{memory[level].value / 1e9:,.0f} GB/s / {SECTOR_BYTES} B"))
    points = []
    for row in report.kernels:
        k = row.kernel
        instructions, source = _warp_instructions(row)
        seconds = k.measured.duration_seconds
        if not instructions or not seconds:
            continue
        l2 = k.measured.l2_sector_bytes or k.l2_bytes
        for level, nbytes in (("l1", k.l1_bytes), ("l2", l2), ("dram", k.dram_bytes)):
            if nbytes:
                points.append(InstructionPoint(
                    kernel=row.label, level=level, instructions_per_transaction=instructions / (nbytes / SECTOR_BYTES),
                    instructions_per_second=instructions / seconds, source=source))
    return InstructionRoofline(gpu=device.name, ceilings=tuple(ceilings), points=tuple(points))
