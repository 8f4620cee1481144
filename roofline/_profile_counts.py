"""ProfileCounts: what a profile measured of one launch, beside the kernel a user describes.

A `roofline.Kernel` holds what a user gives (work, bytes per level, launch, traffic); an
Nsight Compute profile adds measured counts that no description of the source has: the
duration and clocks it ran at, hit rates, wavefronts, sectors and requests, warp
instructions, occupancy. They live in this one typed record, which `roofline.NcuKernel`
holds as ``measured`` and `roofline.predict` takes as ``measured=``.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["ProfileCounts"]


class ProfileCounts(BaseModel):
    """Counts an Nsight Compute profile measured of one launch, in SI units (None: not collected).

    Each field names the metric it is read from (`roofline.load_ncu` reads them, once).

    Examples
    --------
    >>> import roofline
    >>> k = roofline.load_ncu("tests/data/ncu/user_kernels.raw.csv").kernels[0]
    >>> isinstance(k.measured, roofline.ProfileCounts), k.measured.duration_seconds > 0
    (True, True)
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    duration_seconds: float | None = Field(default=None, description="gpu__time_duration.sum, seconds.")
    sm_clock_hz: float | None = Field(default=None, description="sm__cycles_elapsed.avg.per_second, Hz.")
    memory_clock_hz: float | None = Field(default=None, description="dram__cycles_elapsed.avg.per_second, Hz.")
    instructions: float | None = Field(
        default=None, description="Warp instructions issued (smsp__inst_executed.sum); None when not collected.")
    global_load_instructions: float | None = Field(
        default=None, description="Warp-level global load instructions executed (smsp__inst_executed_op_global_ld.sum).")
    global_atomic_instructions: float | None = Field(
        default=None, description="Warp-level global atomic and reduction instructions executed "
                                  "(smsp__sass_inst_executed_op_global_atom.sum + ..._global_red.sum).")
    shared_atomic_instructions: float | None = Field(
        default=None, description="Warp-level shared-memory atomic instructions executed, every attempt of a "
                                  "compare-and-swap loop included (smsp__sass_inst_executed_op_shared_atom.sum).")
    l1_wavefronts: float | None = Field(
        default=None, description="L1 data-pipe wavefronts of the LSU: global, local and shared accesses, each a pass "
                                  "of up to 128 bytes (l1tex__data_pipe_lsu_wavefronts.sum).")
    l1_hit_rate: float | None = Field(
        default=None, ge=0, le=1, description="Share of global load sectors L1 hits (l1tex__t_sectors_pipe_lsu_mem_global_op_ld"
                                  "_lookup_hit.sum over l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum).")
    l2_hit_rate: float | None = Field(
        default=None, ge=0, le=1, description="Share of the SMs' L2 read sectors L2 hits: 1 - dram__bytes_read.sum / (32 x "
                                  "lts__t_sectors_srcunit_tex_op_read.sum); without the read sectors, "
                                  "lts__t_sectors_srcunit_tex_lookup_hit.sum over lts__t_sectors_srcunit_tex.sum.")
    global_store_sectors: float | None = Field(
        default=None, description="Sectors global stores write (l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum).")
    global_store_requests: float | None = Field(
        default=None, description="Warp-level global store requests (l1tex__t_requests_pipe_lsu_mem_global_op_st.sum).")
    l2_read_sectors: float | None = Field(
        default=None, description="The SMs' L2 read sectors (lts__t_sectors_srcunit_tex_op_read.sum), as counted: "
                                  "where DRAM fetches more than 32 bytes a sector, l2_hit_rate stops at 0 and "
                                  "cannot give them back.")
    l2_sector_bytes: float | None = Field(
        default=None, description="SM<->L2 sector traffic, reads and writes (lts__t_sectors_srcunit_tex x 32).")
    dram_written_bytes: float | None = Field(
        default=None, description="Bytes DRAM wrote while the kernel ran (dram__bytes_write.sum): its written lines L2 "
                                  "did not keep to its end.")
    l2_requests: float | None = Field(
        default=None, description="SM->L2 requests, reads and writes (lts__t_requests_srcunit_tex.sum).")
    achieved_occupancy: float | None = Field(
        default=None, description="Share of the SM's warp slots active over its active cycles "
                                  "(sm__warps_active.avg.pct_of_peak_sustained_active / 100).")
    theoretical_occupancy: float | None = Field(
        default=None, description="sm__maximum_warps_per_active_cycle_pct / 100.")
    block_limits: dict[str, int] = Field(
        default_factory=dict, description="Nsight's blocks per SM allowed by each resource (registers, shared_memory, "
                                          "warps, blocks, barriers; launch__occupancy_limit_*).")
