"""The counts a profile lacked, each with the fallback `roofline.predict` used in its place.

A profile taken with Nsight Compute's default sections (``ncu`` without ``--set`` or
``--section``) holds the launch, occupancy, duration, clocks and the SpeedOfLight breakdown;
the counts below need further sections or ``--metrics`` (`gpuroof profile` collects them all).
`missing_counts` names each one a profiled kernel lacks, in the order of `FALLBACKS`, and
`roofline.profile_report` carries them to the table and the JSON.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from ._ncu_records import NcuKernel

__all__ = ["FALLBACKS", "MissingCount", "missing_counts", "missing_lines"]

#: Per count (a `roofline.ProfileCounts` field, or the `roofline.NcuKernel` bytes per level):
#: the metric it is first read from, and what the prediction does without it.
FALLBACKS: dict[str, tuple[str, str]] = {
    "duration_seconds": ("gpu__time_duration.sum", "no roofline point, bound or prediction"),
    "dram_bytes": ("dram__bytes_read.sum + dram__bytes_write.sum", "no roofline bound or prediction"),
    "sm_clock_hz": ("sm__cycles_elapsed.avg.per_second", "the datasheet's boost clock"),
    "l2_bytes": ("lts__lts2xbar_cycles_active.sum.per_second", "the L2 term left out"),
    "l1_bytes": ("l1tex__lsu_writeback_active_mem_lgds.sum.per_second", "128 bytes per L1 wavefront where counted, "
                                                                      "else the L1 term left out"),
    "instructions": ("smsp__inst_executed.sum", "the SASS's instructions per thread times the threads, else no "
                                                "issue term"),
    "global_load_instructions": ("smsp__inst_executed_op_global_ld.sum", "the SASS's loads for straight-line code, "
                                                                         "else one load per thread"),
    "l1_wavefronts": ("l1tex__data_pipe_lsu_wavefronts.sum", "the L1 writeback bytes, l1_bytes, for the L1 term"),
    "l1_hit_rate": ("l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum",
                    "the L1 miss share from the bytes, l2_bytes / l1_bytes"),
    "l2_hit_rate": ("lts__t_sectors_srcunit_tex_op_read.sum", "the L2 miss share from the bytes, dram_bytes / l2_bytes"),
    "global_store_sectors": ("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", "no partial-store term"),
    "global_store_requests": ("l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
                              "no partial-store term and no one-address stores"),
    "l2_requests": ("lts__t_requests_srcunit_tex.sum", "the L2 requests term left out"),
    "global_atomic_instructions": ("smsp__sass_inst_executed_op_global_atom.sum", "the atomics term left out"),
    "shared_atomic_instructions": ("smsp__sass_inst_executed_op_shared_atom.sum",
                                   "the shared_atomics term left out (unless the SASS counts them)"),
    "achieved_occupancy": ("sm__warps_active.avg.pct_of_peak_sustained_active",
                           "every warp stays for the hot loop, unless the SASS shows a lone thread"),
}
_ON_KERNEL = ("dram_bytes", "l2_bytes", "l1_bytes")


class MissingCount(BaseModel):
    """One count a profile lacked: its name, the metric it is read from, the fallback used."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    count: str = Field(description="The ProfileCounts field (or NcuKernel bytes per level) the profile lacked.")
    metric: str = Field(description="The Nsight Compute metric it is first read from.")
    fallback: str = Field(description="What the prediction used in its place.")


def missing_counts(kernel: NcuKernel) -> tuple[MissingCount, ...]:
    """The counts `kernel`'s profile lacked, in the order of `FALLBACKS`.

    Examples
    --------
    >>> import roofline
    >>> k = roofline.load_ncu("tests/data/ncu/user_kernels.raw.csv").kernels[0]
    >>> [m.count for m in missing_counts(k)][:3]
    ['global_load_instructions', 'l1_wavefronts', 'l1_hit_rate']
    """
    out = []
    for count, (metric, fallback) in FALLBACKS.items():
        holder = kernel if count in _ON_KERNEL else kernel.measured
        if getattr(holder, count) is None:
            out.append(MissingCount(count=count, metric=metric, fallback=fallback))
    return tuple(out)


def missing_lines(missing: list[tuple[MissingCount, ...]]) -> list[str]:
    """One line per distinct set of missing counts, naming the kernels (numbered from 1) that lack it.

    Examples
    --------
    >>> m = MissingCount(count="l1_hit_rate", metric="x", fallback="the bytes")
    >>> missing_lines([(m,), (m,), ()])
    ['counts missing from the profile, kernels 1, 2: l1_hit_rate -> the bytes']
    >>> missing_lines([(m,), (m,)])
    ['counts missing from the profile, all 2 kernels: l1_hit_rate -> the bytes']
    """
    groups: dict[tuple[MissingCount, ...], list[int]] = {}
    for number, counts in enumerate(missing, start=1):
        if counts:
            groups.setdefault(counts, []).append(number)
    def which(numbers: list[int]) -> str:
        if len(numbers) == len(missing) > 1:
            return f"all {len(numbers)} kernels"
        return f"kernel{'s' if len(numbers) > 1 else ''} {', '.join(map(str, numbers))}"

    return [f"counts missing from the profile, {which(numbers)}: "
            + "; ".join(f"{m.count} -> {m.fallback}" for m in counts) for counts, numbers in groups.items()]
