"""Reading Nsight Compute profiles: one frozen record per profiled kernel.

Two routes: the CSV that ``ncu --import X.ncu-rep --csv --page raw`` writes (any
``--print-units``), and the ``.ncu-rep`` file itself through NVIDIA's ``ncu_report``
module (Nsight Compute's ``extras/python``) when it can be imported. Both go through one
extraction, `_kernel`, over a function that looks a metric up by name.

What is counted, and how, follows the section files Nsight Compute ships
(``sections/SpeedOfLight_Hierarchical*RooflineChart.section``, 2025.3):

* vector flops: the per-cycle rates of predicated-on thread instructions of the SM
  sub-partitions, FADD + FMUL + 2 x FFMA (fp32), DADD + DMUL + 2 x DFMA (fp64),
  2 x HADD + 2 x HMUL + 4 x HFMA (fp16: packed half2 instructions), times the
  sub-partition clock (``smsp__cycles_elapsed.avg.per_second``);
* tensor flops: ``sm__ops_path_tensor_src_<type>`` per cycle, times the SM clock (Nsight
  counts operations, two per multiply-add: a 4096^3 bf16 product reads 1.374e11);
* bytes: DRAM ``dram__bytes``; L2 ``lts__lts2xbar_cycles_active`` x 32 (the L2 to SM
  return path); L1 ``l1tex__lsu_writeback_active_mem_lgds`` x 128 (global, local,
  distributed shared) on sm_90 and later, ``..._mem_lg`` before;
* the roofline charts give rates; counts are the rate times ``gpu__time_duration.sum``
  (on the profiles of tests/data/ncu this reproduces ``dram__bytes_read.sum +
  dram__bytes_write.sum`` to 5 digits).

Units are converted once, in `_unit_factor`: Nsight scales by powers of 1000 ("Kbyte" is
1000 bytes, "Ghz", "usecond", "Gbyte/second", "cycle/nsecond").
"""

from __future__ import annotations

import csv
import glob
import io
import math
import os
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from occupancy import SassSummary
from occupancy.common import as_path, base_name

from ._errors import RooflineError

__all__ = ["NCU_SECTIONS", "NcuKernel", "NcuProfile", "load_ncu", "short_kernel_name"]

_FROZEN = ConfigDict(frozen=True, extra="forbid")

#: The sections gpuroof reads, as ``--section`` arguments of ``ncu``.
NCU_SECTIONS: tuple[str, ...] = (
    "SpeedOfLight",
    "SpeedOfLight_HierarchicalDoubleRooflineChart",
    "SpeedOfLight_HierarchicalHalfRooflineChart",
    "SpeedOfLight_HierarchicalSingleRooflineChart",
    "SpeedOfLight_HierarchicalTensorRooflineChart",
    "MemoryWorkloadAnalysis",
    "LaunchStats",
    "Occupancy",
)

# ---------------------------------------------------------------------------------------
# units


_PREFIXES = {"": 1.0, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}
_TIMES = {
    "ns": 1e-9, "nsecond": 1e-9, "us": 1e-6, "usecond": 1e-6, "ms": 1e-3, "msecond": 1e-3,
    "s": 1.0, "second": 1.0,
}
# Per-time factors written out: 1 / 1e-9 is not exactly 1e9 in binary floating point.
_PER_TIME = {
    "ns": 1e9, "nsecond": 1e9, "us": 1e6, "usecond": 1e6, "ms": 1e3, "msecond": 1e3, "s": 1.0, "second": 1.0,
}
_COUNTS = (
    "byte", "hz", "cycle", "inst", "sector", "warp", "block", "thread", "register", "request",
    "cluster", "sm", "pass", "wavefront", "transaction", "flop",
)


def _unit_factor(unit: str) -> float:
    """The factor that takes a value printed with ``unit`` to SI base units (% to a fraction).

    Raises
    ------
    ValueError
        For a unit this reader does not know.

    Examples
    --------
    >>> _unit_factor("Kbyte"), _unit_factor("usecond"), _unit_factor("cycle/nsecond")
    (1000.0, 1e-06, 1000000000.0)
    """
    text = unit.strip()
    if not text:
        return 1.0
    if text == "%":
        return 0.01
    numerator, _, denominator = text.partition("/")
    factor = _numerator_factor(numerator.strip())
    if denominator:
        factor *= _denominator_factor(denominator.strip())
    return factor


def _numerator_factor(text: str) -> float:
    if text in _TIMES:
        return _TIMES[text]
    for base in _COUNTS:
        if text.lower().endswith(base):
            prefix = text[: len(text) - len(base)]
            if prefix.upper() in _PREFIXES:
                return _PREFIXES[prefix.upper()]
    raise ValueError(f"unit {text!r} is not known")


def _denominator_factor(text: str) -> float:
    """The factor for a unit's denominator, to multiply by (per nanosecond: 1e9)."""
    if text in _PER_TIME:
        return _PER_TIME[text]
    if any(text.lower() == base for base in _COUNTS):
        return 1.0
    raise ValueError(f"unit denominator {text!r} is not known")


# ---------------------------------------------------------------------------------------
# kernel names


def _strip_groups(text: str, opening: str, closing: str) -> str:
    """Drop every balanced ``opening ... closing`` group (template arguments, parameters)."""
    out, depth = [], 0
    for char in text:
        if char == opening:
            depth += 1
        elif char == closing and depth:
            depth -= 1
        elif depth == 0:
            out.append(char)
    return "".join(out)


def short_kernel_name(name: str) -> str:
    """A kernel's short name: no return type, namespaces, template arguments or parameters.

    Parameters
    ----------
    name : str
        As Nsight Compute prints it (demangled, or mangled with ``--print-kernel-base mangled``).

    Returns
    -------
    str

    Examples
    --------
    >>> short_kernel_name("void at::native::reduce_kernel<512, 1, at::native::R<float>>(T3)")
    'reduce_kernel'
    >>> short_kernel_name("void at::<unnamed>::vectorized_layer_norm_kernel<float, float>(int, T2)")
    'vectorized_layer_norm_kernel'
    >>> short_kernel_name("_ZN7pytorch5flash16flash_fwd_kernelI6TraitsEEvT_")
    'flash_fwd_kernel'
    """
    text = name.strip()
    if text.startswith("_Z"):
        return base_name(text)
    cleaned = text.replace("<unnamed>", "").replace("(anonymous namespace)", "")
    cleaned = _strip_groups(_strip_groups(cleaned, "<", ">"), "(", ")").strip()
    if cleaned.startswith("void "):
        cleaned = cleaned[5:]
    last = cleaned.split()[-1] if cleaned.split() else cleaned
    short = last.split("::")[-1]
    return short or text


# ---------------------------------------------------------------------------------------
# records


class NcuKernel(BaseModel):
    """One profiled kernel launch, in SI units (bytes, seconds, hertz, flops, fractions).

    ``flops`` holds operations by `roofline.PRECISIONS` name for every precision whose
    roofline section was collected (zeros included). A field the profile does not hold is
    None, and ``missing`` maps it to the ``ncu --section`` that would supply it.
    ``block_limits`` are Nsight's blocks per SM allowed by each resource (``registers``,
    ``shared_memory``, ``warps``, ``blocks``, ``barriers``).
    """

    model_config = _FROZEN

    id: int = Field(description="Nsight's launch ID in the profile.")
    name: str = Field(description="Short kernel name (short_kernel_name).")
    demangled_name: str = Field(description="The kernel's name as the profile prints it: demangled by default, "
                                            "mangled or the function's name alone with ncu --print-kernel-base.")
    mangled_name: str | None = Field(
        default=None, description="The kernel's symbol where the profile holds it: a .ncu-rep always, a CSV exported "
                                  "with --print-kernel-base mangled.")
    nvtx_range: str | None = Field(default=None, description="Enclosing NVTX ranges, outer/inner.")
    device_name: str | None = None
    arch: str | None = Field(default=None, description='Compute capability as "sm_90".')
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    cluster: tuple[int, int, int] | None = None
    registers_per_thread: int | None = None
    static_shared_memory: int | None = Field(default=None, description="Bytes per block.")
    dynamic_shared_memory: int | None = Field(default=None, description="Bytes per block.")
    driver_shared_memory: int | None = Field(default=None, description="Bytes the driver reserves per block.")
    shared_memory_config: int | None = Field(
        default=None, description="Bytes of shared memory per SM in the configuration the driver chose.")
    block_barriers: int | None = None
    instructions: float | None = Field(
        default=None, description="Warp instructions issued (smsp__inst_executed.sum); None when not collected.")
    sm_count: int | None = None
    duration_seconds: float | None = None
    sm_clock_hz: float | None = None
    memory_clock_hz: float | None = None
    flops: dict[str, float] = Field(default_factory=dict)
    dram_bytes: float | None = None
    l2_bytes: float | None = Field(default=None, description="L2 to SM bytes (Nsight's L2 roofline).")
    l1_bytes: float | None = Field(default=None, description="L1 load/store writeback bytes (Nsight's L1 roofline).")
    l1_wavefronts: float | None = Field(
        default=None, description="L1 data-pipe wavefronts of the LSU: global, local and shared accesses, each a pass "
                                  "of up to 128 bytes (l1tex__data_pipe_lsu_wavefronts.sum).")
    l1_hit_rate: float | None = Field(
        default=None, description="Share of global load sectors L1 hits (l1tex__t_sectors_pipe_lsu_mem_global_op_ld"
                                  "_lookup_hit.sum over l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum).")
    l2_hit_rate: float | None = Field(
        default=None, description="Share of the SMs' L2 read sectors L2 hits: 1 - dram__bytes_read.sum / (32 x "
                                  "lts__t_sectors_srcunit_tex_op_read.sum); without the read sectors, "
                                  "lts__t_sectors_srcunit_tex_lookup_hit.sum over lts__t_sectors_srcunit_tex.sum.")
    global_store_sectors: float | None = Field(
        default=None, description="Sectors global stores write (l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum).")
    global_store_requests: float | None = Field(
        default=None, description="Warp-level global store requests (l1tex__t_requests_pipe_lsu_mem_global_op_st.sum).")
    l2_sector_bytes: float | None = Field(
        default=None, description="SM<->L2 sector traffic, reads and writes (lts__t_sectors_srcunit_tex x 32).")
    l2_requests: float | None = Field(
        default=None, description="SM->L2 requests, reads and writes (lts__t_requests_srcunit_tex.sum).")
    global_atomic_instructions: float | None = Field(
        default=None, description="Warp-level global atomic and reduction instructions executed "
                                  "(smsp__sass_inst_executed_op_global_atom.sum + ..._global_red.sum).")
    achieved_occupancy: float | None = None
    theoretical_occupancy: float | None = None
    block_limits: dict[str, int] = Field(default_factory=dict)
    global_load_instructions: float | None = Field(
        default=None, description="Warp-level global load instructions executed (smsp__inst_executed_op_global_ld.sum).")
    sass: SassSummary | None = Field(
        default=None, description="The kernel's SASS summary (from the report's source page or a binary), as "
                                  "occupancy.kernel_resources gives it on the source path.")
    sass_source: str | None = Field(default=None, description="Where the SASS was read, or why there is none.")
    missing: dict[str, str] = Field(default_factory=dict)

    @property
    def label(self) -> str:
        """Short name with the innermost NVTX range, e.g. ``flash_fwd_kernel [attention]``."""
        if self.nvtx_range:
            return f"{self.name} [{self.nvtx_range.split('/')[-1]}]"
        return self.name

    @property
    def threads_per_block(self) -> int:
        """Threads in one block."""
        return self.block[0] * self.block[1] * self.block[2]

    @property
    def blocks(self) -> int:
        """Blocks in the grid."""
        return self.grid[0] * self.grid[1] * self.grid[2]

    @property
    def total_flops(self) -> float | None:
        """Flops over every precision collected (None when no roofline section was)."""
        return sum(self.flops.values()) if self.flops else None

    @property
    def precision(self) -> str | None:
        """The precision with the most flops (None without flops)."""
        busy = {p: f for p, f in self.flops.items() if f > 0}
        return max(busy, key=lambda p: busy[p]) if busy else None


class NcuProfile(BaseModel):
    """Every kernel of one Nsight Compute profile, in the profile's order."""

    model_config = _FROZEN

    path: str
    format: Literal["csv", "ncu-rep"]
    kernels: tuple[NcuKernel, ...]
    checks: tuple[str, ...] = Field(
        default=(), description="What load_ncu cross-checked and what it assumed (kernel IDs, units, a possible cut).")

    def matching(self, pattern: str) -> NcuProfile:
        """The kernels whose name, demangled name or NVTX range matches a regular expression.

        Raises
        ------
        RooflineError
            For an invalid expression, or one that matches no kernel (the message lists them).
        """
        if not isinstance(pattern, str):
            raise TypeError(f"pattern must be a str (a regular expression), not {type(pattern).__name__}")
        try:
            regex = re.compile(pattern)
        except re.error as exc:
            raise RooflineError(f"kernel pattern {pattern!r} is not a regular expression: {exc}") from None
        chosen = tuple(k for k in self.kernels
                       if regex.search(k.name) or regex.search(k.demangled_name) or regex.search(k.nvtx_range or ""))
        if not chosen:
            names = ", ".join(sorted({k.name for k in self.kernels}))
            raise RooflineError(f"kernel pattern {pattern!r} matches no kernel of {self.path}; kernels: {names}")
        return self.model_copy(update={"kernels": chosen})


# ---------------------------------------------------------------------------------------
# extraction, shared by both routes

Getter = Callable[[str], "tuple[str | float, str] | None"]

# Vector-unit flops per precision: (instruction, flops per thread instruction), Nsight's
# Hierarchical{Double,Single,Half}RooflineChart sections.
_VECTOR = {
    "fp64": ("SpeedOfLight_HierarchicalDoubleRooflineChart", (("dadd", 1), ("dmul", 1), ("dfma", 2))),
    "fp32": ("SpeedOfLight_HierarchicalSingleRooflineChart", (("fadd", 1), ("fmul", 1), ("ffma", 2))),
    "fp16": ("SpeedOfLight_HierarchicalHalfRooflineChart", (("hadd", 2), ("hmul", 2), ("hfma", 4))),
}
# Tensor operations per precision: alternative metric sets (the names differ between
# architectures; the first set present is used), HierarchicalTensorRooflineChart.
_TENSOR = {
    "fp64_tensor": (("sm__ops_path_tensor_src_fp64",),),
    "tf32_tensor": (("sm__ops_path_tensor_src_tf32_dst_fp32",),),
    "fp16_tensor": (("sm__ops_path_tensor_src_fp16",),
                    ("sm__ops_path_tensor_src_fp16_dst_fp16", "sm__ops_path_tensor_src_fp16_dst_fp32")),
    "bf16_tensor": (("sm__ops_path_tensor_src_bf16_dst_fp32",),),
    "fp8_tensor": (("sm__ops_path_tensor_src_fp8",),
                   ("sm__ops_path_tensor_src_fp8_sparsity_off", "sm__ops_path_tensor_src_fp8_sparsity_on")),
    "int8_tensor": (("sm__ops_path_tensor_src_int8",),),
}
_TENSOR_SECTION = "SpeedOfLight_HierarchicalTensorRooflineChart"
_LIMITS = {
    "registers": "launch__occupancy_limit_registers",
    "shared_memory": "launch__occupancy_limit_shared_mem",
    "warps": "launch__occupancy_limit_warps",
    "blocks": "launch__occupancy_limit_blocks",
    "barriers": "launch__occupancy_limit_barriers",
}
_NA = {"", "n/a", "N/A", "no data", "-", "nan"}


class _Reader:
    """Looks metrics up for one kernel and converts them, naming the file in errors."""

    def __init__(self, get: Getter, where: str) -> None:
        self._get = get
        self.where = where

    def has(self, name: str) -> bool:
        found = self._get(name)
        return found is not None and not (isinstance(found[0], str) and found[0].strip() in _NA)

    def number(self, name: str) -> float | None:
        found = self._get(name)
        if found is None:
            return None
        raw, unit = found
        if isinstance(raw, str):
            text = raw.strip()
            if text in _NA:
                return None
            try:
                value = float(text.replace(",", ""))
            except ValueError:
                raise RooflineError(f"{self.where}: {name}={raw!r} is not a number") from None
        else:
            value = float(raw)
        try:
            return value * _unit_factor(unit)
        except ValueError as exc:
            raise RooflineError(f"{self.where}: {name} has {exc}") from None

    def integer(self, name: str) -> int | None:
        value = self.number(name)
        return None if value is None else int(round(value))

    def text(self, name: str) -> str | None:
        found = self._get(name)
        if found is None:
            return None
        value = str(found[0]).strip()
        return None if value in _NA else value


def _dims(reader: _Reader, prefix: str, fallback: str | None) -> tuple[int, int, int] | None:
    values = [reader.integer(f"{prefix}_{axis}") for axis in "xyz"]
    if all(v is not None for v in values):
        return (values[0], values[1], values[2])  # type: ignore[return-value]
    text = reader.text(fallback) if fallback else None
    if text:
        numbers = [int(n) for n in re.findall(r"\d+", text.replace(",", ""))]
        if numbers:
            return tuple((numbers + [1, 1, 1])[:3])  # type: ignore[return-value]
    return None


def _vector_flops(reader: _Reader, ops: tuple[tuple[str, int], ...], clock: float, seconds: float) -> float | None:
    total = 0.0
    for op, weight in ops:
        rate = reader.number(f"smsp__sass_thread_inst_executed_op_{op}_pred_on.sum.per_cycle_elapsed")
        if rate is None:
            return None
        total += weight * rate
    return total * clock * seconds


def _tensor_flops(reader: _Reader, alternatives: tuple[tuple[str, ...], ...], clock: float,
                  seconds: float) -> float | None:
    for names in alternatives:
        rates = [reader.number(f"{n}.sum.per_cycle_elapsed") for n in names]
        if all(r is not None for r in rates):
            return sum(rates) * clock * seconds  # type: ignore[arg-type]
    return None


def _kernel(reader: _Reader, *, index: int, demangled: str, nvtx: str | None, missing_cc: str | None,
            mangled: str | None = None) -> NcuKernel:
    missing: dict[str, str] = {}
    fields: dict[str, object] = {}

    grid = _dims(reader, "launch__grid_dim", "Grid Size")
    block = _dims(reader, "launch__block_dim", "Block Size")
    if grid is None or block is None:
        raise RooflineError(f"{reader.where}: kernel {index} ({short_kernel_name(demangled)}) has no grid or block "
                            "size; is this an Nsight Compute profile?")
    cluster = _dims(reader, "launch__cluster_dim", None)
    fields["cluster"] = cluster if cluster and any(cluster) else None

    def put(field: str, value: object, section: str) -> None:
        fields[field] = value
        if value is None:
            missing[field] = section

    put("registers_per_thread", reader.integer("launch__registers_per_thread"), "LaunchStats")
    put("static_shared_memory", reader.integer("launch__shared_mem_per_block_static"), "LaunchStats")
    put("dynamic_shared_memory", reader.integer("launch__shared_mem_per_block_dynamic"), "LaunchStats")
    put("driver_shared_memory", reader.integer("launch__shared_mem_per_block_driver"), "LaunchStats")
    put("shared_memory_config", reader.integer("launch__shared_mem_config_size"), "LaunchStats")
    put("block_barriers", reader.integer("launch__barrier_count"), "LaunchStats")
    # not every section set collects it: absent is not a missing section the report names
    fields["instructions"] = reader.number("smsp__inst_executed.sum") or reader.number("inst_executed")
    fields["global_load_instructions"] = (reader.number("smsp__inst_executed_op_global_ld.sum")
                                          if reader.has("smsp__inst_executed_op_global_ld.sum")
                                          else reader.number("smsp__sass_inst_executed_op_global_ld.sum"))
    put("sm_count", reader.integer("launch__sm_count") or reader.integer("device__attribute_multiprocessor_count"),
        "LaunchStats")
    put("duration_seconds", reader.number("gpu__time_duration.sum"), "SpeedOfLight")
    put("sm_clock_hz", reader.number("sm__cycles_elapsed.avg.per_second"),
        "SpeedOfLight_HierarchicalSingleRooflineChart")
    put("memory_clock_hz", reader.number("dram__cycles_elapsed.avg.per_second"), "SpeedOfLight")
    put("theoretical_occupancy", reader.number("sm__maximum_warps_per_active_cycle_pct"), "Occupancy")
    put("achieved_occupancy", reader.number("sm__warps_active.avg.pct_of_peak_sustained_active"), "Occupancy")
    fields["block_limits"] = {k: v for k, m in _LIMITS.items() if (v := reader.integer(m)) is not None}
    if not fields["block_limits"]:
        missing["block_limits"] = "Occupancy"

    seconds = fields["duration_seconds"]
    smsp_clock = reader.number("smsp__cycles_elapsed.avg.per_second")
    sm_clock = fields["sm_clock_hz"]
    flops: dict[str, float] = {}
    for precision, (section, ops) in _VECTOR.items():
        value = _vector_flops(reader, ops, smsp_clock, seconds) if seconds and smsp_clock else None
        if value is None:
            missing[f"flops.{precision}"] = section
        else:
            flops[precision] = value
    for precision, alternatives in _TENSOR.items():
        value = _tensor_flops(reader, alternatives, sm_clock, seconds) if seconds and sm_clock else None
        if value is None:
            missing[f"flops.{precision}"] = _TENSOR_SECTION
        else:
            flops[precision] = value
    fields["flops"] = flops

    def moved(rate_metric: str, factor: float, section: str, field: str) -> None:
        rate = reader.number(rate_metric)
        put(field, rate * factor * seconds if rate is not None and seconds else None, section)

    read = reader.number("dram__bytes_read.sum")
    write = reader.number("dram__bytes_write.sum")
    if read is not None and write is not None:
        fields["dram_bytes"] = read + write
    else:
        moved("dram__bytes.sum.per_second", 1.0, "MemoryWorkloadAnalysis", "dram_bytes")
    moved("lts__lts2xbar_cycles_active.sum.per_second", 32.0, "SpeedOfLight_HierarchicalSingleRooflineChart",
          "l2_bytes")
    l1_metric = ("l1tex__lsu_writeback_active_mem_lgds.sum.per_second"
                 if reader.has("l1tex__lsu_writeback_active_mem_lgds.sum.per_second")
                 else "l1tex__lsu_writeback_active_mem_lg.sum.per_second")
    moved(l1_metric, 128.0, "SpeedOfLight_HierarchicalSingleRooflineChart", "l1_bytes")
    fields["l1_wavefronts"] = reader.number("l1tex__data_pipe_lsu_wavefronts.sum")
    sectors = reader.number("lts__t_sectors_srcunit_tex.sum")
    fields["l1_hit_rate"] = _share(reader.number("l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum"),
                                   reader.number("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"))
    # the loads' share: a kernel that stores as it reads (an accumulator written back every
    # trip) has L2 hits on its stores that its load rounds never see
    read_sectors = reader.number("lts__t_sectors_srcunit_tex_op_read.sum")
    fields["l2_hit_rate"] = (1.0 - min(1.0, read / (32.0 * read_sectors)) if read is not None and read_sectors
                             else _share(reader.number("lts__t_sectors_srcunit_tex_lookup_hit.sum"), sectors))
    fields["global_store_sectors"] = reader.number("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum")
    fields["global_store_requests"] = reader.number("l1tex__t_requests_pipe_lsu_mem_global_op_st.sum")
    fields["l2_sector_bytes"] = None if sectors is None else 32.0 * sectors
    fields["l2_requests"] = reader.number("lts__t_requests_srcunit_tex.sum")
    atomics = [reader.number(f"smsp__sass_inst_executed_op_global_{op}.sum") for op in ("atom", "red")]
    fields["global_atomic_instructions"] = None if all(a is None for a in atomics) else sum(a or 0.0 for a in atomics)

    arch = None
    major = reader.integer("device__attribute_compute_capability_major")
    minor = reader.integer("device__attribute_compute_capability_minor")
    if major is not None and minor is not None:
        arch = f"sm_{major}{minor}"
    elif missing_cc:
        match = re.fullmatch(r"(\d+)\.(\d+)", missing_cc.strip())
        arch = f"sm_{match.group(1)}{match.group(2)}" if match else None
    return NcuKernel(
        id=index, name=short_kernel_name(demangled), demangled_name=demangled, nvtx_range=nvtx,
        # --print-kernel-base mangled prints the symbol itself
        mangled_name=mangled or (demangled.strip() if demangled.strip().startswith("_Z") else None),
        device_name=reader.text("device__attribute_display_name"), arch=arch, grid=grid, block=block,
        missing=missing, **fields,
    )


def _share(part: float | None, whole: float | None) -> float | None:
    """part / whole clipped to [0, 1]; None where either is missing or the whole is 0."""
    if part is None or not whole:
        return None
    return min(1.0, max(0.0, part / whole))


# ---------------------------------------------------------------------------------------
# the CSV route

_NVTX_PUSH_POP = "thread Domain:Push/Pop_Range"
_NVTX_START_END = "Id:Domain:Start/Stop_Range"


def _nvtx_names(cell: str, skip: int) -> list[str]:
    """Range names in one NVTX cell: each quoted ``domain:range:6 more fields`` entry."""
    names = []
    for entry in re.findall(r'"([^"]*)"', cell):
        parts = entry.split(":")
        if len(parts) >= skip + 7:
            names.append(":".join(parts[skip:-6]))
    return names


def _cells(line: str) -> list[str]:
    """One line as CSV cells (a line that is not CSV, program output, gives what csv makes of it)."""
    try:
        return next(csv.reader([line]), [])
    except csv.Error:
        return []


def _is_header(cells: list[str]) -> bool:
    names = {c.strip() for c in cells}
    return "ID" in names and "Kernel Name" in names


class _Table:
    """The rows of a raw-page export, each with the units its block declared, and what was checked."""

    def __init__(self) -> None:
        self.rows: list[tuple[dict[str, str], dict[str, str], int]] = []  # cells, units, line
        self.checks: list[str] = []
        self.header: list[str] = []


def _unit_of(units: dict[str, str] | None, name: str) -> str:
    return units.get(name, "") if units else ""


def _same_unit(a: str, b: str) -> bool:
    if a.strip() == b.strip():
        return True
    try:
        return _unit_factor(a) == _unit_factor(b) and bool(a.strip()) == bool(b.strip())
    except ValueError:
        return False


def _csv_rows(path: Path, text: str) -> _Table:
    """The table of a raw-page export, however it was re-written.

    Nsight writes every cell quoted, the "ID" and "Kernel Name" columns first and one
    units row; a file re-written by a spreadsheet or pandas may quote only where needed,
    reorder the columns, keep a subset of the rows, add an index column, or hold two
    exports one after the other (each with its header and units row). Columns are found
    by name in each block's header; a units row is the row whose ID and kernel name are
    empty. Two blocks that print one metric in different units are refused.
    """
    lines = text.splitlines()
    # A CSV printed while profiling (``ncu --csv ... > out.csv``) carries ==PROF== and the
    # program's own lines before the table; the table starts at the header naming "ID"
    # and "Kernel Name".
    start = next((i for i, line in enumerate(lines) if "ID" in line and "Kernel Name" in line
                  and _is_header(_cells(line))), None)
    if start is None:
        first = lines[0][:120] if lines else ""
        raise RooflineError(
            f"{path} is not an Nsight Compute CSV export (no \"ID\",\"Kernel Name\" header; first line: {first!r}); "
            "export one with: ncu --import PROFILE.ncu-rep --csv --page raw > PROFILE.csv")
    kept = [(n, line) for n, line in enumerate(lines[start:], start=start + 1) if not line.startswith("==")]
    # strict: a quoted cell left open at the end (a file cut inside it) is an error, not a short value
    reader = csv.reader(io.StringIO("\n".join(line for _, line in kept)), strict=True)
    table = _Table()
    header: list[str] = []
    units: dict[str, str] | None = None
    seen_units: dict[str, tuple[str, int]] = {}
    blocks = 0
    while True:
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            number = kept[min(reader.line_num, len(kept)) - 1][0]
            raise RooflineError(f"{path}: line {number} is not well-formed CSV ({exc}); "
                                "the file looks truncated or edited") from None
        number = kept[reader.line_num - 1][0] if reader.line_num - 1 < len(kept) else len(lines)
        if not row or (len(row) == len(header) and not any(cell.strip() for cell in row)):
            continue  # blank lines, and the empty rows a spreadsheet leaves
        if _is_header(row):
            header, units, blocks = [c.strip() for c in row], None, blocks + 1
            if "Metric Name" in header and "Metric Value" in header:
                raise RooflineError(
                    f"{path} is an Nsight Compute --page details export; gpuroof reads the raw page: "
                    "ncu --import PROFILE.ncu-rep --csv --page raw > PROFILE.csv")
            table.header = header
            continue
        if len(row) != len(header):
            raise RooflineError(
                f"{path}: line {number} has {len(row)} of the header's {len(header)} columns; "
                "the file looks truncated or edited")
        cells = dict(zip(header, row))
        if not cells["ID"].strip() and not cells["Kernel Name"].strip():
            units = cells
            for name, unit in cells.items():
                if name in ("ID", "Kernel Name"):
                    continue
                if name in seen_units and not _same_unit(seen_units[name][0], unit):
                    first, line = seen_units[name]
                    raise RooflineError(
                        f"{path} mixes units: {name} is in {first or 'no unit'!r} on line {line} and in "
                        f"{unit or 'no unit'!r} on line {number}; re-export the profile once with one "
                        "--print-units (ncu --import PROFILE.ncu-rep --csv --page raw --print-units base)")
                seen_units.setdefault(name, (unit, number))
            continue
        table.rows.append((cells, units or {}, number))
        if units is None and seen_units:
            raise RooflineError(
                f"{path}: the rows from line {number} have no units row, unlike those before; "
                "the file joins exports whose units cannot be told apart")
    if not table.rows:
        raise RooflineError(f"{path} holds no profiled kernel (a header and no rows)")
    if not seen_units:
        table.checks.append("no units row: every value read in base units (byte, second, hertz; "
                            "what --print-units base prints)")
    if blocks > 1:
        table.checks.append(f"{blocks} exports joined, in the same units")
    return table


def _load_csv(path: Path) -> NcuProfile:
    data = path.read_bytes()
    if not data.strip():
        raise RooflineError(f"{path} is empty")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise RooflineError(f"{path} is not a text file; give an ncu --csv --page raw export or a .ncu-rep") from None
    table = _csv_rows(path, text)
    _check_metric_names(path, table.header)
    kernels = []
    for cells, units, number in table.rows:
        def get(name: str, cells: dict[str, str] = cells, units: dict[str, str] = units) -> tuple[str, str] | None:
            value = cells.get(name)
            return None if value is None else (value, _unit_of(units, name))

        index_text = cells["ID"]
        try:
            figure = float(index_text.replace(",", ""))
        except ValueError:
            figure = math.nan
        # "inf" or "1e400" overflowed int() (OverflowError); "1.5" read as kernel 1.
        if not (math.isfinite(figure) and figure.is_integer()):
            raise RooflineError(f"{path}: line {number}: kernel ID {index_text!r} is not an integer")
        index = int(figure)
        nvtx = []
        for column, skip in ((_NVTX_PUSH_POP, 1), (_NVTX_START_END, 2)):
            for name, cell in cells.items():
                if name.startswith(column):
                    nvtx += _nvtx_names(cell, skip)
        kernels.append(_kernel(_Reader(get, str(path)), index=index, demangled=cells["Kernel Name"],
                               nvtx="/".join(nvtx) or None, missing_cc=cells.get("CC")))
    checks = table.checks + _cross_checks(path, kernels, ends_with_newline=text.endswith(("\n", "\r")))
    return NcuProfile(path=str(path), format="csv", kernels=tuple(kernels), checks=tuple(checks))


# Metrics every export of the sections gpuroof asks for holds, under Nsight Compute 2025.3's
# names; an export with none of them comes from a version that names them otherwise.
_CORE_METRICS = ("gpu__time_duration.sum", "launch__registers_per_thread", "launch__grid_size",
                 "launch__block_size", "sm__cycles_elapsed.avg.per_second", "dram__bytes.sum.per_second")


def _check_metric_names(path: Path, header: list[str]) -> None:
    metrics = [name for name in header if "__" in name]
    if metrics and not any(name in header for name in _CORE_METRICS):
        raise RooflineError(
            f"{path} holds {len(metrics)} metrics but none of those gpuroof reads "
            f"({', '.join(_CORE_METRICS[:3])}, ...): "
            "an export of another Nsight Compute version, which names them otherwise (gpuroof reads the names of "
            "Nsight Compute 2025.3, whose sections NCU_SECTIONS lists)")


def _ranges(ids: list[int]) -> str:
    out, start = [], None
    for i, n in enumerate(ids):
        if start is None:
            start = n
        if i + 1 == len(ids) or ids[i + 1] != n + 1:
            out.append(str(start) if start == n else f"{start}-{n}")
            start = None
    return ", ".join(out)


def _cross_checks(path: Path, kernels: list[NcuKernel], *, ends_with_newline: bool) -> list[str]:
    """What the kernel IDs say: duplicates refused; gaps, a start past 0 and a possible cut stated.

    Nsight numbers the profiled launches 0, 1, 2, ... in a report; an export of the whole
    report holds them all, in order. A CSV carries no kernel count, so a file cut after a
    whole row reads as a shorter profile: the last line says so when the file does not
    end with the line break Nsight writes, and otherwise the count is checked against the
    ``.ncu-rep`` beside the file when one is there and ``ncu_report`` imports.
    """
    seen: dict[int, int] = {}
    for position, k in enumerate(kernels):
        if k.id in seen:
            raise RooflineError(f"{path}: kernel ID {k.id} appears twice (rows {seen[k.id] + 1} and {position + 1}): "
                                "two exports of different profiles joined? keep one")
        seen[k.id] = position
    ids = sorted(seen)
    checks = []
    holes = sorted(set(range(ids[0], ids[-1] + 1)) - set(ids))
    if ids[0] != 0 or holes:
        checks.append(f"kernel IDs {_ranges(ids)}: a subset of the profile's launches"
                      + (f" ({len(holes)} missing between them)" if holes else ""))
    else:
        checks.append(f"kernel IDs 0-{ids[-1]} without a gap")
    if [k.id for k in kernels] != sorted(seen):
        checks.append("rows not in kernel ID order (kept in the file's order)")
    if not ends_with_newline:
        checks.append(f"the file does not end with a line break, as Nsight's exports do: it may be cut after "
                      f"kernel ID {kernels[-1].id}")
    if path.suffix == ".ncu-rep":
        return checks  # the report itself: every launch it holds
    report = path.with_suffix(".ncu-rep")
    counted = _report_count(report) if report.is_file() else None
    if counted is not None:
        if counted > len(kernels) and not holes and ids[0] == 0:
            raise RooflineError(f"{path} holds {len(kernels)} kernels, {report.name} beside it {counted}: "
                                f"the CSV is cut after kernel ID {ids[-1]}; export it again")
        checks.append(f"{len(kernels)} of the {counted} kernels of {report.name}")
    elif ends_with_newline:
        checks.append("a CSV export holds no kernel count: a file cut after a whole row would read as a "
                      "shorter profile (keep the .ncu-rep beside it to have the count checked)")
    return checks


def _report_count(report: Path) -> int | None:
    """Kernels in a ``.ncu-rep``, where NVIDIA's ``ncu_report`` reads it (else None)."""
    module = _ncu_report_module()
    if module is None:
        return None
    try:
        context = module.load_report(str(report))
        return sum(context.range_by_idx(r).num_actions() for r in range(context.num_ranges()))
    except Exception:  # noqa: BLE001 - ncu_report raises its own types; no count is no check
        return None


# ---------------------------------------------------------------------------------------
# the .ncu-rep route


def _ncu_report_module() -> ModuleType:
    """Import NVIDIA's ``ncu_report``, looking in the Nsight Compute installations found."""
    try:
        import ncu_report  # type: ignore[import-not-found]

        return ncu_report
    except ImportError:
        pass
    import importlib
    import sys

    places = []
    ncu = shutil.which("ncu")
    if ncu:
        places.append(Path(ncu).resolve().parent / "extras" / "python")
    places += [Path(p) for p in sorted(glob.glob("/opt/nvidia/nsight-compute/*/extras/python"), reverse=True)]
    places += [Path(p) for p in sorted(glob.glob("/usr/local/cuda*/nsight-compute*/extras/python"), reverse=True)]
    for place in places:
        if (place / "ncu_report.py").is_file():
            sys.path.append(str(place))
            try:
                return importlib.import_module("ncu_report")
            except ImportError:
                sys.path.remove(str(place))
    return None


def _report_unit(name: str) -> str:
    """The base unit ``ncu_report`` gives a metric gpuroof reads in (what ``--print-units base`` prints)."""
    if name.startswith("gpu__time_duration"):
        return "ns"
    if "pct" in name:
        return "%"
    return ""


def _mangled_name(action: Any, module: ModuleType) -> str | None:
    """The kernel's symbol as the report keeps it; None where this ncu_report cannot say."""
    try:
        return action.name(module.IAction.NameBase_MANGLED) or None
    except Exception:  # noqa: BLE001 - ncu_report raises its own types
        return None


def _load_report(path: Path) -> NcuProfile:
    module = _ncu_report_module()
    if module is None:
        raise RooflineError(
            f"reading {path} needs NVIDIA's ncu_report module (Nsight Compute's extras/python, not found "
            "on PYTHONPATH or next to ncu); or export it: ncu --import PROFILE.ncu-rep --csv --page raw > PROFILE.csv")
    try:
        context = module.load_report(str(path))
    except Exception as exc:  # noqa: BLE001 - ncu_report raises its own types
        raise RooflineError(f"{path} could not be read by the ncu_report module found ({exc}); a report written by "
                            "another Nsight Compute version reads with that version's ncu, or export it there: "
                            "ncu --import PROFILE.ncu-rep --csv --page raw > PROFILE.csv") from None
    kernels = []
    for r in range(context.num_ranges()):
        profiled = context.range_by_idx(r)
        for a in range(profiled.num_actions()):
            action = profiled.action_by_idx(a)
            names = set(action.metric_names())

            def get(name: str, action: Any = action, names: set[str] = names) -> tuple[str | float, str] | None:
                if name not in names:
                    return None
                # IMetric.unit() crashed the interpreter (ncu_report of Nsight Compute 2025.3.1,
                # Python 3.12); values come in base units, which are fixed per metric.
                return action.metric_by_name(name).value(), _report_unit(name)

            nvtx = []
            try:
                state = action.nvtx_state()
                for domain_id in state.domains():
                    domain = state.domain_by_id(domain_id)
                    nvtx += list(domain.push_pop_ranges()) + list(domain.start_end_ranges())
            except Exception:  # noqa: BLE001 - profiles taken without --nvtx have no state
                nvtx = []
            kernel_id = get("ID")
            kernels.append(_kernel(_Reader(get, str(path)),
                                   index=len(kernels) if kernel_id is None else int(kernel_id[0]),
                                   demangled=action.name(module.IAction.NameBase_DEMANGLED),
                                   mangled=_mangled_name(action, module),
                                   nvtx="/".join(nvtx) or None, missing_cc=None))
    if not kernels:
        raise RooflineError(f"{path} holds no profiled kernel")
    checks = _cross_checks(path, kernels, ends_with_newline=True)
    return NcuProfile(path=str(path), format="ncu-rep", kernels=tuple(kernels), checks=tuple(checks))


def _with_sass(profile: NcuProfile, file: Path, binary: str | os.PathLike[str] | None) -> NcuProfile:
    """Each kernel with its SASS (`roofline._ncu_sass`): from `binary`, else the report's source page;
    the profile's checks say where it came from, or why there is none, once."""
    profile = _read_sass(profile, file, binary)
    sources = sorted({k.sass_source for k in profile.kernels if k.sass_source})
    with_sass = sum(1 for k in profile.kernels if k.sass is not None)
    line = f"SASS for {with_sass} of {len(profile.kernels)} kernels: " + "; ".join(sources)
    return profile.model_copy(update={"checks": (*profile.checks, line)})


def _read_sass(profile: NcuProfile, file: Path, binary: str | os.PathLike[str] | None) -> NcuProfile:
    from ._ncu_binary import binary_sass
    from ._ncu_sass import report_sass

    kernels = profile.kernels
    if binary is not None:
        found = binary_sass(as_path(binary, RooflineError, "binary"), kernels, short_kernel_name)
        updated = [k.model_copy(update={"sass": sass, "sass_source": why}) for k, (sass, why) in zip(kernels, found)]
        return profile.model_copy(update={"kernels": tuple(updated)})
    report = file if file.suffix == ".ncu-rep" else file.with_suffix(".ncu-rep")
    if not report.is_file():
        why = (f"no SASS: no {report.name} beside the export to read its source page from; "
               "name the program (binary=, gpuroof ncu --binary APP)")
        return profile.model_copy(update={"kernels": tuple(k.model_copy(update={"sass_source": why}) for k in kernels)})
    sass, why = report_sass(report, {k.id: k.arch for k in kernels})
    updated = [k.model_copy(update={"sass": None if sass is None else sass.get(k.id), "sass_source": why})
               for k in kernels]
    return profile.model_copy(update={"kernels": tuple(updated)})


def load_ncu(path: str | os.PathLike[str], *, binary: str | os.PathLike[str] | None = None) -> NcuProfile:
    """Read an Nsight Compute profile: one `NcuKernel` per profiled launch.

    Parameters
    ----------
    path : str or path
        The CSV that ``ncu --import PROFILE.ncu-rep --csv --page raw`` prints (any
        ``--print-units``; ==PROF== lines and program output before the table are skipped),
        or a ``.ncu-rep`` file, read through NVIDIA's ``ncu_report`` module when it can be
        imported. Collect the sections in `NCU_SECTIONS`; without one, the fields it supplies
        are None and listed in each kernel's ``missing``.
    binary : str or path, optional
        The program (executable, shared library, fatbin or cubin) whose kernels were
        profiled: each kernel's SASS is read from it (`occupancy.all_kernel_resources`),
        the function found by its mangled, demangled or short name (template instances
        told apart by their registers and static shared memory where the short name is all
        the profile holds; docs/measure.md). A kernel the binary lacks has no SASS and its
        ``sass_source`` names what the binary holds. Without it, the SASS comes from the report's source page (the ``.ncu-rep`` given,
        or the one of the same name beside a CSV; ``ncu`` on PATH prints it). Each
        kernel's ``sass_source`` says where its SASS came from, or why it has none.

    Returns
    -------
    NcuProfile

    A CSV re-written by hand, a spreadsheet or pandas reads the same: any quoting, the
    columns in any order or a subset of them, an index column, a subset of the rows in any
    order, two exports joined (each with its header and units row). ``NcuProfile.checks``
    says what was cross-checked and assumed: whether the kernel IDs run from 0 without a gap
    (else a subset), and whether the file may be cut. A CSV holds no kernel count, so a file
    cut after a whole row cannot be told from a shorter profile; it is caught when the
    ``.ncu-rep`` of the same name lies beside it (and ``ncu_report`` imports), and named
    when the file does not end with Nsight's final line break.

    Raises
    ------
    RooflineError
        A missing or empty file, a file that is not an Nsight Compute raw-page export (a
        details-page export, another tool's CSV), a CSV cut inside a row or shorter than the
        ``.ncu-rep`` beside it, one that mixes units (the metric and both units named) or
        repeats a kernel ID, an export of another Nsight Compute version (none of the metric
        names gpuroof reads), an unknown unit, or a ``.ncu-rep`` without ``ncu_report`` (or
        that its ``ncu_report`` cannot read), or a ``binary`` that holds none of the
        profiled kernels; the message names the file.

    Examples
    --------
    >>> import roofline
    >>> profile = roofline.load_ncu("tests/data/ncu/torch_roofline.raw.csv")
    >>> k = profile.kernels[0]
    >>> k.name, k.nvtx_range, k.grid, k.registers_per_thread
    ('nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT', 'matmul_bf16', (2, 66, 1), 168)
    >>> round(k.flops["bf16_tensor"] / 2 / 4096**3, 3)
    1.0
    """

    file = as_path(path, RooflineError)
    if not file.is_file():
        raise RooflineError(f"path={str(file)!r}: no such file")
    profile = _load_report(file) if file.suffix == ".ncu-rep" else _load_csv(file)
    return _with_sass(profile, file, binary)
