"""Differential check of the occupancy calculator against the CUDA driver.

Generated kernels vary registers, static shared memory and barriers; for each, every
combination of block size, dynamic shared memory (with and without the opt-in
attribute) and preferred carveout is asked of ``occupancy.calculate`` and of cuda.core's
``Kernel.occupancy.max_active_blocks_per_multiprocessor`` (the driver's
``cuOccupancyMaxActiveBlocksPerMultiprocessor``); ``max_potential_block_size`` likewise.
Every mismatch is kept.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

import occupancy
from types import ModuleType
from occupancy import KernelResources
from pydantic import BaseModel, ConfigDict, Field

from ..device import DeviceInfo, Session, kernel_resources, takes_session
from ..probes import Probe, RunContext
from ._differential import ProbeVariant, ask, counts_agree, error_text, load_probe_kernels

if TYPE_CHECKING:
    from cuda.core import Kernel

__all__ = [
    "OccupancyCheck",
    "OccupancyCheckProbe",
    "OccupancyMismatch",
    "check_occupancy",
    "probe_variants",
    "query_grid",
]


def probe_variants(quick: bool = False) -> tuple[ProbeVariant, ...]:
    """The kernels the check compiles: registers, static shared memory and barriers each
    swept with the others held, plus a few combinations.

    Examples
    --------
    >>> len({v.name for v in probe_variants()}) == len(probe_variants())
    True
    """
    variants: list[ProbeVariant] = []
    registers = [(2, None), (16, None), (40, None), (72, None), (120, None), (200, None),
                 (200, 128), (120, 64), (72, 40), (40, 32)]
    statics = [0, 2052, 12300, 40960, 49152]
    if quick:
        registers, statics = registers[::3], statics[::2]
    for live, cap in registers:
        for static in (0, 12300):
            variants.append(ProbeVariant(live, static, 1, cap))
    for static in statics:
        for barriers in (1, 16):
            variants.append(ProbeVariant(40, static, barriers))
    for barriers in ((2, 8) if quick else (2, 4, 8, 12)):
        for live in (16, 120):
            variants.append(ProbeVariant(live, 2052, barriers))
    return tuple(dict.fromkeys(variants))


def query_grid(arch: occupancy.Architecture, resources: KernelResources, quick: bool = False) -> list[tuple[int, int, int | None, int | None]]:
    """The (threads_per_block, dynamic_shared_memory, max_dynamic_shared_memory, carveout)
    launches asked about one kernel. ``max_dynamic_shared_memory`` None is the default
    attribute (48 KiB minus static); an integer is the opt-in. ``carveout`` None is no
    preference.
    """
    static = resources.static_shared_memory
    default_max = max(0, arch.max_shared_memory_per_block - static)
    optin_max = max(0, arch.max_shared_memory_per_block_optin - static)
    blocks = [32, 64, 96, 128, 192, 256, 384, 512, 640, 768, 1024, 33, 100, 250, 1000]
    carveouts: list[int | None] = [None, 0, 10, 25, 50, 75, 100]
    default_dyn = [0, 1, 1000, 4096, 12000, 24576, default_max]
    optin_dyn = [0, 12000, default_max + 1, 64000, 100000, 150000, 200000, optin_max]
    if quick:
        blocks, carveouts = blocks[::3], carveouts[::2]
        default_dyn, optin_dyn = default_dyn[::2], optin_dyn[::2]
    out: list[tuple[int, int, int | None, int | None]] = []
    for carveout in carveouts:
        for attribute, values in ((None, default_dyn), (optin_max, optin_dyn)):
            for dyn in sorted({d for d in values if 0 <= d <= (attribute if attribute is not None else default_max)}):
                for t in blocks:
                    out.append((t, dyn, attribute, carveout))
    return out


class OccupancyMismatch(BaseModel):
    """One launch where the calculator and the driver disagree."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    query: str = Field(description='"active_blocks" or "max_potential_block_size".')
    kernel: str
    registers_per_thread: int
    static_shared_memory: int
    block_barriers: int
    threads_per_block: int | None
    dynamic_shared_memory: int
    max_dynamic_shared_memory: int | None
    carveout: int | None
    runtime: str = Field(description="The driver's answer (or its error).")
    calculated: str = Field(description="occupancy's answer (or its error).")


class OccupancyCheck(BaseModel):
    """Result of the differential occupancy check."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    architecture: str
    kernels: int = Field(description="Generated kernels compiled.")
    launches_checked: int = Field(description="Active-blocks queries compared.")
    block_size_checks: int = Field(description="max_potential_block_size queries compared.")
    mismatches: tuple[OccupancyMismatch, ...]
    registers_seen: tuple[int, ...]
    static_shared_memory_seen: tuple[int, ...]
    barriers_seen: tuple[int, ...]
    compile_errors: dict[str, str] = Field(default_factory=dict)
    seconds: float

    @property
    def mismatch_count(self) -> int:
        """Number of mismatches."""
        return len(self.mismatches)


def _runtime_blocks(kernel: Kernel, threads: int, dyn: int) -> int | str:
    """The driver's active blocks per SM (``cuOccupancyMaxActiveBlocksPerMultiprocessor``), or its refusal."""
    return ask(lambda: kernel.occupancy.max_active_blocks_per_multiprocessor(threads, dyn))


@takes_session
def check_occupancy(
    session: Session,
    info: DeviceInfo,
    *,
    quick: bool = False,
    progress: Callable[[str], None] = lambda message: None,
) -> OccupancyCheck:
    """Compare ``occupancy.calculate`` / ``max_potential_block_size`` with the driver.

    A driver error and a calculator `OccupancyError` both mean "cannot launch" and count
    as 0 blocks; they match each other and a 0.

    Returns
    -------
    OccupancyCheck
    """
    start = time.perf_counter()
    arch = occupancy.architecture(info.compute_capability)
    variants = probe_variants(quick)
    kernels, errors = load_probe_kernels(info, variants, "occupancy_probe")
    mismatches: list[OccupancyMismatch] = []
    launches = block_checks = 0
    registers_seen, statics_seen = set(), set()
    for v, kernel in kernels.items():
        res = kernel_resources(kernel, v.name)
        registers_seen.add(res.registers_per_thread)
        statics_seen.add(res.static_shared_memory)
        grid = query_grid(arch, res, quick)
        state: tuple[int | str | None, int | str | None] = ("unset", "unset")
        for threads, dyn, attribute, carveout in grid:
            if state != (attribute, carveout):
                default_max = max(0, arch.max_shared_memory_per_block - res.static_shared_memory)
                session.set_kernel_attribute(kernel, "MAX_DYNAMIC_SHARED_SIZE_BYTES",
                                             default_max if attribute is None else attribute)
                session.set_kernel_attribute(kernel, "PREFERRED_SHARED_MEMORY_CARVEOUT",
                                             -1 if carveout is None else carveout)
                state = (attribute, carveout)
                # max_potential_block_size once per attribute state, for a few dynamic sizes.
                limit = default_max if attribute is None else attribute
                for need in sorted(d for d in {0, dyn, 4096, limit} if d <= limit):
                    block_checks += 1
                    mismatch = _compare_block_size(occupancy, arch, info, kernel, res, v, need, attribute, carveout)
                    if mismatch is not None:
                        mismatches.append(mismatch)
            launches += 1
            runtime = _runtime_blocks(kernel, threads, dyn)
            try:
                calc = occupancy.calculate(
                    arch, threads_per_block=threads, registers_per_thread=res.registers_per_thread,
                    static_shared_memory=res.static_shared_memory, dynamic_shared_memory=dyn,
                    max_dynamic_shared_memory=attribute, carveout=carveout, block_barriers=v.barriers,
                    max_threads_per_block=res.max_threads_per_block,
                )
                calculated: int | str = calc.active_blocks_per_sm
            except (ValueError, TypeError) as exc:
                calculated = f"error: {exc}"
            if not counts_agree(runtime, calculated):
                mismatches.append(OccupancyMismatch(
                    query="active_blocks", kernel=v.name, registers_per_thread=res.registers_per_thread,
                    static_shared_memory=res.static_shared_memory, block_barriers=v.barriers,
                    threads_per_block=threads, dynamic_shared_memory=dyn, max_dynamic_shared_memory=attribute,
                    carveout=carveout, runtime=str(runtime), calculated=str(calculated),
                ))
        # Leave the kernel as compiled, for anyone reusing the cached module.
        session.set_kernel_attribute(kernel, "PREFERRED_SHARED_MEMORY_CARVEOUT", -1)
    progress(f"occupancy check: {launches} launches, {block_checks} block-size queries, "
             f"{len(mismatches)} mismatches")
    return OccupancyCheck(
        architecture=arch.name, kernels=len(kernels), launches_checked=launches, block_size_checks=block_checks,
        mismatches=tuple(mismatches), registers_seen=tuple(sorted(registers_seen)),
        static_shared_memory_seen=tuple(sorted(statics_seen)),
        barriers_seen=tuple(sorted({v.barriers for v in kernels})), compile_errors=errors,
        seconds=time.perf_counter() - start,
    )


def _runtime_potential_block_size(kernel: Kernel, need: int, max_threads: int, warp_size: int,
                                  threads_per_sm: int, sm_count: int) -> str:
    """``cudaOccupancyMaxPotentialBlockSize`` as cuda_runtime.h defines it: a loop over block
    sizes (largest first, warp-size steps) of the driver's active-blocks query, which honours
    the preferred carveout; the driver's own ``cuOccupancyMaxPotentialBlockSize`` does not."""
    best_block = best_blocks = best_threads = 0
    aligned = -(-max_threads // warp_size) * warp_size
    for candidate in range(aligned, 0, -warp_size):
        block = min(max_threads, candidate)
        blocks = _runtime_blocks(kernel, block, need)
        if isinstance(blocks, str):
            return blocks
        if block * blocks > best_threads:
            best_block, best_blocks, best_threads = block, blocks, block * blocks
        if best_threads == threads_per_sm:
            break
    return f"block_size={best_block} min_grid_size={best_blocks * sm_count}"


def _compare_block_size(occupancy: ModuleType, arch: occupancy.Architecture, info: DeviceInfo, kernel: Kernel, res: KernelResources,
                        v: ProbeVariant, need: int, attribute: int | None,
                        carveout: int | None) -> OccupancyMismatch | None:
    # The driver's cuOccupancyMaxPotentialBlockSize (what cuda.core asks) ignores the kernel's
    # preferred-carveout attribute, while the runtime's cudaOccupancyMaxPotentialBlockSize
    # honours it; occupancy.max_potential_block_size follows the runtime. With no carveout the
    # driver's answer is compared; with one, the runtime's loop over driver active-block counts.
    if carveout is None:
        try:
            r = kernel.occupancy.max_potential_block_size(need, 0)
            runtime = f"block_size={int(r.max_block_size)} min_grid_size={int(r.min_grid_size)}"
        except Exception as exc:  # noqa: BLE001 - a refusal is an answer to compare
            runtime = error_text(exc)
    else:
        runtime = _runtime_potential_block_size(kernel, need, min(arch.max_threads_per_block, res.max_threads_per_block),
                                                arch.warp_size, arch.max_threads_per_sm, info.sm_count)
    try:
        c = occupancy.max_potential_block_size(
            arch, registers_per_thread=res.registers_per_thread, static_shared_memory=res.static_shared_memory,
            dynamic_shared_memory=need, max_dynamic_shared_memory=attribute,
            max_threads_per_block=res.max_threads_per_block, sm_count=info.sm_count, carveout=carveout,
            block_barriers=v.barriers,
        )
        calculated = f"block_size={c.block_size} min_grid_size={c.min_grid_size}"
    except (ValueError, TypeError) as exc:
        calculated = f"error: {exc}"
    if runtime == calculated or (runtime.startswith("error") and calculated.startswith("error")):
        return None
    return OccupancyMismatch(
        query="max_potential_block_size", kernel=v.name, registers_per_thread=res.registers_per_thread,
        static_shared_memory=res.static_shared_memory, block_barriers=v.barriers, threads_per_block=None,
        dynamic_shared_memory=need, max_dynamic_shared_memory=attribute, carveout=carveout,
        runtime=runtime, calculated=calculated,
    )


class OccupancyCheckProbe(Probe[OccupancyCheck]):
    """The occupancy calculator against the driver (`check_occupancy`); its section is laid out
    by `render_markdown` before the kernels."""

    name = "occupancy_check"
    step = "occupancy check"
    error_field = "occupancy_check_error"

    def run(self, ctx: RunContext) -> OccupancyCheck:
        return check_occupancy(ctx.session, ctx.info, quick=ctx.quick, progress=ctx.progress)
