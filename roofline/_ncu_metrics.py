"""The one adapter from Nsight Compute's metrics to typed records: `read_kernel`.

Both routes of `roofline.load_ncu` (the raw-page CSV, the ``.ncu-rep`` through
``ncu_report``) and the corpus's stored metrics hand a function that looks a metric up by
name (`Getter`) to `read_kernel`, which makes one `NcuKernel`: its launch, its roofline
figures (flops, bytes per level) and the counts it measured (`roofline.ProfileCounts`).
No mapping of metric names travels past this module.

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

Each count is read from every metric name that holds it, the full sections' name first and
the default sections' (``ncu`` without ``--set`` or ``--section``: LaunchStats, Occupancy,
SpeedOfLight, WorkloadDistribution) next, by exact conversions only (`ALTERNATIVES` names each
with its source). Counts that none holds stay None; `roofline.profile_report` names them with
the fallback the prediction used.

Units are converted once, in `unit_factor`: Nsight scales by powers of 1000 ("Kbyte" is
1000 bytes, "Ghz", "usecond", "Gbyte/second", "cycle/nsecond").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from ._errors import RooflineError
from ._ncu_records import NcuKernel, short_kernel_name
from ._profile_counts import ProfileCounts

__all__ = ["ALTERNATIVES", "Getter", "Reader", "kernel_from_metrics", "read_kernel", "unit_factor"]


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

# What an unknown unit's message lists: the reader's whole vocabulary, from the tables above.
_KNOWN_UNITS = (f"known: a count ({', '.join(_COUNTS)}) with an optional prefix "
                f"({', '.join(p for p in _PREFIXES if p)}), a time ({', '.join(_TIMES)}), "
                "either over a time or a count, or %")


def unit_factor(unit: str) -> float:
    """The factor that takes a value printed with ``unit`` to SI base units (% to a fraction).

    Raises
    ------
    ValueError
        For a unit this reader does not know.

    Examples
    --------
    >>> unit_factor("Kbyte"), unit_factor("usecond"), unit_factor("cycle/nsecond")
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
    raise ValueError(f"unit {text!r} is not known; {_KNOWN_UNITS}")


def _denominator_factor(text: str) -> float:
    """The factor for a unit's denominator, to multiply by (per nanosecond: 1e9)."""
    if text in _PER_TIME:
        return _PER_TIME[text]
    if any(text.lower() == base for base in _COUNTS):
        return 1.0
    raise ValueError(f"unit denominator {text!r} is not known; {_KNOWN_UNITS}")


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

#: Per count read beyond its first metric name: the alternatives, in the order tried, each
#: with its source (the exports of tests/data/ncu that show the two forms agree).
ALTERNATIVES: dict[str, tuple[tuple[str, str], ...]] = {
    "sm_clock_hz": (
        ("sm__cycles_elapsed.avg.per_second", "the hierarchical roofline charts' SM clock"),
        ("gpc__cycles_elapsed.avg.per_second", "SpeedOfLight's 'SM Frequency' (the GPC clock domain holds the SMs; "
         "within 3e-5 of sm__cycles_elapsed.avg.per_second in user_kernels.raw.csv and templates.h100.*.csv)"),
    ),
    "dram_bytes": (
        ("dram__bytes_read.sum + dram__bytes_write.sum", "the counters gpuroof profile adds"),
        ("dram__bytes.sum.per_second x gpu__time_duration.sum", "the roofline charts' and MemoryWorkloadAnalysis' rate"),
        ("dram__cycles_active.sum.pct_of_peak_sustained_elapsed x device__attribute_global_memory_bus_width / 4 x "
         "dram__cycles_elapsed.avg.per_second x gpu__time_duration.sum",
         "SpeedOfLight's DRAM throughput breakdown: the peak, dram__bytes.sum.peak_sustained, is the bus width in "
         "bytes twice per DRAM cycle (1504 and 1280 bytes per cycle for 6016 and 5120 bits in suite.raw_base.csv "
         "and templates.h100.*.csv); reproduces dram__bytes_read.sum + dram__bytes_write.sum within 3e-4 on the "
         "launches of suite.raw_base.csv, the printed percentage's digits"),
    ),
    "instructions": (
        ("smsp__inst_executed.sum", "the counters gpuroof profile adds"),
        ("inst_executed", "InstructionStats"),
        ("sm__inst_executed.sum.pct_of_peak_sustained_elapsed x device__attribute_num_schedulers_per_multiprocessor x "
         "launch__sm_count x the SM clock x gpu__time_duration.sum",
         "SpeedOfLight's SM breakdown: the peak is one warp instruction per scheduler per cycle; reproduces "
         "inst_executed within 1e-6 on user_kernels.raw.csv (printed to 6 digits), 1 % on the 2-digit exports"),
    ),
    "l1_wavefronts": (
        ("l1tex__data_pipe_lsu_wavefronts.sum", "the counters gpuroof profile adds"),
        ("l1tex__data_pipe_lsu_wavefronts.sum.pct_of_peak_sustained_elapsed x peak x l1tex__cycles_elapsed.avg."
         "per_second x gpu__time_duration.sum",
         "SpeedOfLight's L1 breakdown, where the export holds the peak (l1tex__data_pipe_lsu_wavefronts.sum."
         "peak_sustained, per cycle; the default sections do not: one wavefront per cycle per SM, NVIDIA's model, "
         "gives 6.95 M for the 4.2 M warp requests of suite.raw_base.csv's copy, so the peak is not taken as that); "
         "the L1TEX clock is the SM clock (equal in user_kernels.raw.csv)"),
    ),
    "l2_sector_bytes": (
        ("32 x lts__t_sectors_srcunit_tex.sum", "the counters gpuroof profile adds"),
        ("32 x lts__t_sectors_srcunit_tex_op_{read,write,atom,red}.sum",
         "the same sectors by operation (Nsight's breakdown of lts__t_sectors_srcunit_tex)"),
    ),
}


class Reader:
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
        if value < 0:
            # Nsight writes no negative count, time, rate or share: an edited or damaged export,
            # refused here where its cell is known, not as a negative byte count further on
            raise RooflineError(f"{self.where}: {name}={raw!r} is negative (no Nsight metric that gpuroof reads is)")
        try:
            return value * unit_factor(unit)
        except ValueError as exc:
            raise RooflineError(f"{self.where}: {name}: {exc}") from None

    def integer(self, name: str) -> int | None:
        value = self.number(name)
        return None if value is None else int(round(value))

    def text(self, name: str) -> str | None:
        found = self._get(name)
        if found is None:
            return None
        value = str(found[0]).strip()
        return None if value in _NA else value


def _dims(reader: Reader, prefix: str, fallback: str | None) -> tuple[int, int, int] | None:
    values = [reader.integer(f"{prefix}_{axis}") for axis in "xyz"]
    if all(v is not None for v in values):
        return (values[0], values[1], values[2])  # type: ignore[return-value]
    text = reader.text(fallback) if fallback else None
    if text:
        numbers = [int(n) for n in re.findall(r"\d+", text.replace(",", ""))]
        if numbers:
            return tuple((numbers + [1, 1, 1])[:3])  # type: ignore[return-value]
    return None


def _vector_flops(reader: Reader, ops: tuple[tuple[str, int], ...], clock: float, seconds: float) -> float | None:
    total = 0.0
    for op, weight in ops:
        rate = reader.number(f"smsp__sass_thread_inst_executed_op_{op}_pred_on.sum.per_cycle_elapsed")
        if rate is None:
            return None
        total += weight * rate
    return total * clock * seconds


def _tensor_flops(reader: Reader, alternatives: tuple[tuple[str, ...], ...], clock: float,
                  seconds: float) -> float | None:
    for names in alternatives:
        rates = [reader.number(f"{n}.sum.per_cycle_elapsed") for n in names]
        if all(r is not None for r in rates):
            return sum(rates) * clock * seconds  # type: ignore[arg-type]
    return None

class _Collected:
    """The fields read so far, and the ``ncu --section`` that would supply each one missing."""

    def __init__(self) -> None:
        self.fields: dict[str, object] = {}
        self.missing: dict[str, str] = {}

    def put(self, field: str, value: object, section: str) -> None:
        self.fields[field] = value
        if value is None:
            self.missing[field] = section


def _read_launch(reader: Reader, out: _Collected) -> None:
    out.put("registers_per_thread", reader.integer("launch__registers_per_thread"), "LaunchStats")
    out.put("static_shared_memory", reader.integer("launch__shared_mem_per_block_static"), "LaunchStats")
    out.put("dynamic_shared_memory", reader.integer("launch__shared_mem_per_block_dynamic"), "LaunchStats")
    out.put("driver_shared_memory", reader.integer("launch__shared_mem_per_block_driver"), "LaunchStats")
    out.put("shared_memory_config", reader.integer("launch__shared_mem_config_size"), "LaunchStats")
    out.put("block_barriers", reader.integer("launch__barrier_count"), "LaunchStats")
    out.put("sm_count", reader.integer("launch__sm_count") or reader.integer("device__attribute_multiprocessor_count"),
            "LaunchStats")


def _read_timing(reader: Reader, out: _Collected) -> dict[str, object]:
    """Duration, clocks and occupancy (the missing ones named, in the order the report lists them)."""
    timing = _Collected()
    timing.put("duration_seconds", reader.number("gpu__time_duration.sum"), "SpeedOfLight")
    timing.put("sm_clock_hz", _first(reader, [name for name, _ in ALTERNATIVES["sm_clock_hz"]]),
               "SpeedOfLight_HierarchicalSingleRooflineChart")
    timing.put("memory_clock_hz", reader.number("dram__cycles_elapsed.avg.per_second"), "SpeedOfLight")
    timing.put("theoretical_occupancy", reader.number("sm__maximum_warps_per_active_cycle_pct"), "Occupancy")
    timing.put("achieved_occupancy", reader.number("sm__warps_active.avg.pct_of_peak_sustained_active"), "Occupancy")
    timing.fields["block_limits"] = {k: v for k, m in _LIMITS.items() if (v := reader.integer(m)) is not None}
    if not timing.fields["block_limits"]:
        timing.missing["block_limits"] = "Occupancy"
    out.missing.update(timing.missing)
    return timing.fields


def _read_flops(reader: Reader, seconds: float | None, out: _Collected) -> None:
    smsp_clock = reader.number("smsp__cycles_elapsed.avg.per_second")
    sm_clock = reader.number("sm__cycles_elapsed.avg.per_second")
    flops: dict[str, float] = {}
    for precision, (section, ops) in _VECTOR.items():
        value = _vector_flops(reader, ops, smsp_clock, seconds) if seconds and smsp_clock else None
        if value is None:
            out.missing[f"flops.{precision}"] = section
        else:
            flops[precision] = value
    for precision, alternatives in _TENSOR.items():
        value = _tensor_flops(reader, alternatives, sm_clock, seconds) if seconds and sm_clock else None
        if value is None:
            out.missing[f"flops.{precision}"] = _TENSOR_SECTION
        else:
            flops[precision] = value
    out.fields["flops"] = flops


def _read_bytes(reader: Reader, seconds: float | None, out: _Collected) -> None:
    """Bytes per level, the roofline's: the charts' rates times the duration."""
    def moved(rate_metric: str, factor: float, section: str, field: str) -> None:
        rate = reader.number(rate_metric)
        out.put(field, rate * factor * seconds if rate is not None and seconds else None, section)

    read = reader.number("dram__bytes_read.sum")
    write = reader.number("dram__bytes_write.sum")
    if read is not None and write is not None:
        out.fields["dram_bytes"] = read + write
    elif reader.has("dram__bytes.sum.per_second"):
        moved("dram__bytes.sum.per_second", 1.0, "MemoryWorkloadAnalysis", "dram_bytes")
    else:
        out.put("dram_bytes", _dram_bytes_from_share(reader, seconds), "MemoryWorkloadAnalysis")
    moved("lts__lts2xbar_cycles_active.sum.per_second", 32.0, "SpeedOfLight_HierarchicalSingleRooflineChart",
          "l2_bytes")
    l1_metric = ("l1tex__lsu_writeback_active_mem_lgds.sum.per_second"
                 if reader.has("l1tex__lsu_writeback_active_mem_lgds.sum.per_second")
                 else "l1tex__lsu_writeback_active_mem_lg.sum.per_second")
    moved(l1_metric, 128.0, "SpeedOfLight_HierarchicalSingleRooflineChart", "l1_bytes")


def _dram_bytes_from_share(reader: Reader, seconds: float | None) -> float | None:
    """DRAM bytes from SpeedOfLight's breakdown: the share of peak times the peak (`ALTERNATIVES`)."""
    share = reader.number("dram__cycles_active.sum.pct_of_peak_sustained_elapsed")
    bus_bits = reader.number("device__attribute_global_memory_bus_width")
    clock = reader.number("dram__cycles_elapsed.avg.per_second")
    if share is None or not bus_bits or not clock or not seconds:
        return None
    return share * bus_bits / 4.0 * clock * seconds


def _first(reader: Reader, names: list[str]) -> float | None:
    """The value of the first of ``names`` the profile holds."""
    for name in names:
        value = reader.number(name)
        if value is not None:
            return value
    return None


def _l2_sectors(reader: Reader) -> float | None:
    """SM<->L2 sectors: the total, else the sum of its four operations (`ALTERNATIVES`)."""
    total = reader.number("lts__t_sectors_srcunit_tex.sum")
    if total is not None:
        return total
    parts = [reader.number(f"lts__t_sectors_srcunit_tex_op_{op}.sum") for op in ("read", "write", "atom", "red")]
    return None if any(p is None for p in parts) else sum(parts)  # type: ignore[arg-type]


def _wavefronts(reader: Reader, seconds: float | None, sm_clock: float | None) -> float | None:
    """L1 data-pipe wavefronts: the count, else SpeedOfLight's share of peak times the peak (`ALTERNATIVES`)."""
    count = reader.number("l1tex__data_pipe_lsu_wavefronts.sum")
    if count is not None:
        return count
    share = reader.number("l1tex__data_pipe_lsu_wavefronts.sum.pct_of_peak_sustained_elapsed")
    peak = reader.number("l1tex__data_pipe_lsu_wavefronts.sum.peak_sustained")
    clock = reader.number("l1tex__cycles_elapsed.avg.per_second") or sm_clock
    if share is None or not peak or not clock or not seconds:
        return None
    return share * peak * clock * seconds


def _instructions(reader: Reader, seconds: float | None, sm_clock: float | None) -> float | None:
    """Warp instructions: the counts, else SpeedOfLight's share of the issue peak (`ALTERNATIVES`)."""
    count = _first(reader, ["smsp__inst_executed.sum", "inst_executed"])
    if count is not None:
        return count
    share = reader.number("sm__inst_executed.sum.pct_of_peak_sustained_elapsed")
    schedulers = reader.number("device__attribute_num_schedulers_per_multiprocessor")
    sms = reader.number("launch__sm_count") or reader.number("device__attribute_multiprocessor_count")
    if share is None or not schedulers or not sms or not sm_clock or not seconds:
        return None
    return share * schedulers * sms * sm_clock * seconds


def _read_counts(reader: Reader, seconds: float | None, sm_clock: float | None) -> dict[str, object]:
    """The memory and instruction counts (none of them a section the report names when absent)."""
    sectors = _l2_sectors(reader)
    read = reader.number("dram__bytes_read.sum")
    # the loads' share: a kernel that stores as it reads (an accumulator written back every
    # trip) has L2 hits on its stores that its load rounds never see
    read_sectors = reader.number("lts__t_sectors_srcunit_tex_op_read.sum")
    atomics = [reader.number(f"smsp__sass_inst_executed_op_global_{op}.sum") for op in ("atom", "red")]
    return {
        "instructions": _instructions(reader, seconds, sm_clock),
        "global_load_instructions": (reader.number("smsp__inst_executed_op_global_ld.sum")
                                     if reader.has("smsp__inst_executed_op_global_ld.sum")
                                     else reader.number("smsp__sass_inst_executed_op_global_ld.sum")),
        "l1_wavefronts": _wavefronts(reader, seconds, sm_clock),
        "l1_hit_rate": _share(reader.number("l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum"),
                              reader.number("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum")),
        "l2_hit_rate": (1.0 - min(1.0, read / (32.0 * read_sectors)) if read is not None and read_sectors
                        else _share(reader.number("lts__t_sectors_srcunit_tex_lookup_hit.sum"), sectors)),
        "l2_read_sectors": read_sectors,
        "global_store_sectors": reader.number("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"),
        "global_store_requests": reader.number("l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"),
        "l2_sector_bytes": None if sectors is None else 32.0 * sectors,
        "l2_requests": reader.number("lts__t_requests_srcunit_tex.sum"),
        "dram_written_bytes": reader.number("dram__bytes_write.sum"),
        "global_atomic_instructions": None if all(a is None for a in atomics) else sum(a or 0.0 for a in atomics),
        "shared_atomic_instructions": reader.number("smsp__sass_inst_executed_op_shared_atom.sum"),
    }


def _arch(reader: Reader, missing_cc: str | None) -> str | None:
    major = reader.integer("device__attribute_compute_capability_major")
    minor = reader.integer("device__attribute_compute_capability_minor")
    if major is not None and minor is not None:
        return f"sm_{major}{minor}"
    if missing_cc:
        match = re.fullmatch(r"(\d+)\.(\d+)", missing_cc.strip())
        return f"sm_{match.group(1)}{match.group(2)}" if match else None
    return None


def read_kernel(reader: Reader, *, index: int, demangled: str, nvtx: str | None, missing_cc: str | None,
                mangled: str | None = None) -> NcuKernel:
    """One profiled launch from its metrics: its launch, roofline figures and measured counts.

    Raises
    ------
    RooflineError
        For a kernel without a grid or block size, a value that is not a number, or an unknown unit.
    """
    grid = _dims(reader, "launch__grid_dim", "Grid Size")
    block = _dims(reader, "launch__block_dim", "Block Size")
    if grid is None or block is None:
        raise RooflineError(f"{reader.where}: kernel {index} ({short_kernel_name(demangled)}) has no grid or block "
                            "size; is this an Nsight Compute profile?")
    cluster = _dims(reader, "launch__cluster_dim", None)
    out = _Collected()
    out.fields["cluster"] = cluster if cluster and any(cluster) else None
    _read_launch(reader, out)
    timing = _read_timing(reader, out)
    _read_flops(reader, timing["duration_seconds"], out)  # type: ignore[arg-type]
    _read_bytes(reader, timing["duration_seconds"], out)  # type: ignore[arg-type]
    measured = ProfileCounts(**timing, **_read_counts(reader, timing["duration_seconds"],  # type: ignore[arg-type]
                                                        timing["sm_clock_hz"]))  # type: ignore[arg-type]
    return NcuKernel(
        id=index, name=short_kernel_name(demangled), demangled_name=demangled, nvtx_range=nvtx,
        # --print-kernel-base mangled prints the symbol itself
        mangled_name=mangled or (demangled.strip() if demangled.strip().startswith("_Z") else None),
        device_name=reader.text("device__attribute_display_name"), arch=_arch(reader, missing_cc), grid=grid,
        block=block, measured=measured, missing=out.missing, **out.fields,
    )


def kernel_from_metrics(metrics: Mapping[str, str | float], units: Mapping[str, str], *, where: str, index: int = 0,
                        demangled: str | None = None) -> NcuKernel:
    """`read_kernel` over metrics held as a mapping (a corpus launch's stored profile), ``units`` by metric name.

    Examples
    --------
    >>> k = kernel_from_metrics({"Grid Size": "(4, 1, 1)", "Block Size": "(256, 1, 1)",
    ...                          "gpu__time_duration.sum": 2.0}, {"gpu__time_duration.sum": "usecond"},
    ...                         where="example", demangled="k(float*)")
    >>> k.name, k.grid, k.measured.duration_seconds
    ('k', (4, 1, 1), 2e-06)
    """
    def get(name: str) -> tuple[str | float, str] | None:
        found = metrics.get(name)
        return None if found is None else (found, units.get(name, ""))

    name = str(metrics.get("Kernel Name", "kernel")) if demangled is None else demangled
    return read_kernel(Reader(get, where), index=index, demangled=name, nvtx=None, missing_cc=None)


def _share(part: float | None, whole: float | None) -> float | None:
    """part / whole clipped to [0, 1]; None where either is missing or the whole is 0."""
    if part is None or not whole:
        return None
    return min(1.0, max(0.0, part / whole))
