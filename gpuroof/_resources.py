"""``gpuroof resources`` and ``gpuroof block-size``: a kernel's resources and the launch they allow."""

from __future__ import annotations

import argparse
from typing import NamedTuple

import occupancy

from ._args import (
    add_arch_option,
    add_compiler_options,
    add_gpu_option,
    add_kernel_file_options,
    arch_help,
    architecture,
    chosen_architecture,
    compiler_options,
    gpu,
    gpu_help,
    kernel_resources,
    print_json,
    target_architecture,
)

__all__ = ["PARSERS"]


def _resources_parser(p: argparse.ArgumentParser) -> None:
    """``gpuroof resources``'s options."""
    p.description = (
        "Like `ptxas -v` for several targets at once, offline (no GPU, no driver): every kernel of "
        "FILE (CUDA source compiled with NVRTC, PTX assembled with nvJitLink, a cubin, a fatbin, or a "
        "host object or library with device code) for each --arch, with its registers per thread, "
        "static shared memory, local memory (stack frame) and spills, barriers and launch bounds, and "
        "its occupancy and limiter at --threads (default: at its best block size, the "
        "cudaOccupancyMaxPotentialBlockSize answer). A fatbin gives the SASS the driver would load for "
        "each architecture."
    )
    p.add_argument("file", help="CUDA source (.cu), PTX (.ptx), cubin, fatbin, host object (.o, .so) or a Triton "
                                "cache folder")
    p.add_argument("--arch", action="append", default=[], metavar="ARCH",
                   help=arch_help("architecture; repeat or comma-separate for several (default: the binary's own; "
                                  "required for source)"))
    p.add_argument("--gpu", action="append", default=[], metavar="GPU",
                   help=gpu_help("add this GPU's architecture (and its SM count for the best grid); repeatable"))
    p.add_argument("--kernel", default=None, metavar="NAME",
                   help="only this kernel (its symbol, or its C++ name when unambiguous)")
    p.add_argument("--threads", type=int, default=None, metavar="N",
                   help="threads per block for the occupancy columns (default: each kernel's best block size)")
    add_compiler_options(p)
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=_resources)


def _block_size_parser(b: argparse.ArgumentParser) -> None:
    """``gpuroof block-size``'s options."""
    b.description = (
        "The block size that maximises occupancy, as cudaOccupancyMaxPotentialBlockSize answers it: "
        "block sizes from the largest allowed down to one warp are tried and the one with the most "
        "resident threads per SM wins (the larger on a tie). Also the smallest grid that fills the GPU "
        "(blocks per SM x SMs; with --gpu or --sm-count). Describe the kernel with loose numbers "
        "(--registers, --smem, ...) or give its file (--source/--cubin FILE --kernel NAME)."
    )
    add_arch_option(b, "compute capability (default: --gpu's, else the binary's)")
    add_gpu_option(b, "GPU: its architecture (unless --arch) and SM count")
    b.add_argument("--registers", type=int, default=None, help="registers per thread (required without a kernel file)")
    b.add_argument("--smem", type=int, default=None, metavar="B",
                   help="static shared memory per block, bytes (default 0, or the kernel file's)")
    b.add_argument("--dynamic-smem", type=int, default=None, metavar="B",
                   help="dynamic shared memory per block, bytes (default 0)")
    b.add_argument("--max-dynamic-smem", type=int, default=None, metavar="B",
                   help="the kernel's max dynamic shared memory attribute, bytes (default 48 KiB minus static)")
    b.add_argument("--max-threads", type=int, default=None, metavar="N",
                   help="the kernel's max threads per block (default: none, or the kernel file's launch bounds)")
    b.add_argument("--barriers", type=int, default=None, metavar="N",
                   help="block barriers the kernel uses (default 1, or the kernel file's)")
    b.add_argument("--carveout", type=int, default=None, metavar="PCT", help="preferred shared-memory carveout, percent")
    b.add_argument("--sm-count", type=int, default=None, metavar="N",
                   help="SMs of the device, for the smallest full grid (default: --gpu's; else per SM)")
    add_kernel_file_options(b, what="gives the resources")
    b.add_argument("--json", action="store_true", help="print JSON")
    b.set_defaults(func=_block_size)


def _targets(args: argparse.Namespace) -> list[tuple[occupancy.Architecture | None, int | None]]:
    """(architecture, SM count) of each --arch and --gpu, once per architecture (a GPU's SM count
    kept); [(None, None)] for the binary's own."""
    found: dict[str, tuple[occupancy.Architecture, int | None]] = {}
    for spec in args.arch:
        for part in filter(None, (p.strip() for p in spec.split(","))):
            a = architecture(part)
            found.setdefault(a.name, (a, None))
    for spec in args.gpu:
        g = gpu(spec)
        a = g.architecture
        if found.get(a.name, (a, None))[1] is None:
            found[a.name] = (a, g.sm_count)
    return list(found.values()) or [(None, None)]


class _Row(NamedTuple):
    """One kernel on one architecture: its resources, best block size and occupancy at --threads."""

    arch: str
    resources: occupancy.KernelResources
    best: occupancy.BlockSizeResult
    occ: occupancy.OccupancyResult | None


def _rows(args: argparse.Namespace) -> list[_Row]:
    options = compiler_options(args)
    rows = []
    for arch, sm_count in _targets(args):
        if args.kernel is None:
            found = occupancy.all_kernel_resources(args.file, arch=arch, options=options)
        else:
            r = occupancy.kernel_resources(args.file, arch=arch, kernel=args.kernel, options=options)
            found = {r.kernel: r}
        if not found:
            raise occupancy.OccupancyError(f"{args.file} holds no kernel (no __global__ function was compiled)")
        for r in found.values():
            on = arch or occupancy.architecture(r.architecture)
            best = occupancy.max_potential_block_size(on, resources=r, sm_count=sm_count)
            threads = best.block_size if args.threads is None else args.threads
            occ = occupancy.calculate(on, threads_per_block=threads, resources=r) if threads else None
            rows.append(_Row(on.name, r, best, occ))
    return rows


def _dash(value: int | None) -> str:
    return "-" if value is None else str(value)


def _resources(args: argparse.Namespace) -> int:
    rows = _rows(args)
    if args.json:
        print_json([
            {"arch": row.arch, "resources": row.resources.model_dump(mode="json"),
             "occupancy": None if row.occ is None else row.occ.model_dump(mode="json"),
             "best_block_size": row.best.model_dump(mode="json")}
            for row in rows
        ])
        return 0
    width = max(len("kernel"), *(len(row.resources.kernel) for row in rows))
    at = f"at {args.threads} threads" if args.threads else "at the best block size"
    print(f"{'':<{width}}  {'':<7}{'':>5}{'shared':>8}{'local':>7}{'spills':>10}{'':>9}{'launch':>8}"
          f"{'':>5}  {at}")
    print(f"{'kernel':<{width}}  {'arch':<7}{'regs':>5}{'B':>8}{'B':>7}{'st/ld B':>10}{'barriers':>9}"
          f"{'bounds':>8}{'min':>5}  {'threads':>7}{'blocks':>7}{'occ':>7}  limiter")
    for row in rows:
        r, occ = row.resources, row.occ
        spills = "-" if r.spill_store_bytes is None else f"{r.spill_store_bytes}/{r.spill_load_bytes}"
        head = (f"{r.kernel:<{width}}  {row.arch:<7}{r.registers_per_thread:>5}{r.static_shared_memory:>8}"
                f"{r.local_memory:>7}{spills:>10}{_dash(r.block_barriers):>9}{_dash(r.max_threads_per_block):>8}"
                f"{_dash(r.min_blocks_per_sm):>5}  ")
        if occ is None:
            print(head + f"{'-':>7}{0:>7}{'0%':>7}  no block size can launch")
        elif occ.active_blocks_per_sm == 0:
            print(head + f"{occ.threads_per_block:>7}{0:>7}{'0%':>7}  cannot launch: {occ.reason}")
        else:
            print(head + f"{occ.threads_per_block:>7}{occ.active_blocks_per_sm:>7}{occ.occupancy:>7.0%}  "
                  + ", ".join(occ.limiters))
    return 0


def _block_size(args: argparse.Namespace) -> int:
    resources = kernel_resources(args, chosen_architecture(args))
    arch = target_architecture(args, resources)
    if resources is None and args.registers is None:
        raise occupancy.OccupancyError("give --registers N, or the kernel's file (--source/--cubin FILE)")
    sm_count = args.sm_count if args.sm_count is not None else (gpu(args.gpu).sm_count if args.gpu else None)
    best = occupancy.max_potential_block_size(
        arch,
        registers_per_thread=args.registers,
        static_shared_memory=args.smem,
        dynamic_shared_memory=args.dynamic_smem,
        max_dynamic_shared_memory=args.max_dynamic_smem,
        max_threads_per_block=args.max_threads,
        sm_count=sm_count,
        carveout=args.carveout,
        block_barriers=args.barriers,
        resources=resources,
    )
    if args.json:
        data = {"arch": arch.name, **best.model_dump(mode="json")}
        if resources is not None:
            data["resources"] = resources.model_dump(mode="json")
        print_json(data)
        return 0
    if resources is not None:
        print(f"{resources}, from {args.kernel_file}")
    if best.block_size == 0:
        print(f"{arch.name}: no block size can launch")
        return 0
    grid = (f"{best.min_grid_size} blocks fill {best.sm_count} SMs" if sm_count is not None
            else f"{best.min_grid_size} blocks per SM (give --gpu or --sm-count for the whole GPU)")
    print(f"{arch.name}: best block size {best.block_size} threads, {best.active_blocks_per_sm} blocks per SM, "
          f"occupancy {best.occupancy:.1%}; smallest full grid: {grid}")
    return 0


PARSERS = {"block-size": _block_size_parser, "resources": _resources_parser}
