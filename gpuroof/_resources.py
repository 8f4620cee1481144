"""``gpuroof resources`` and ``gpuroof block-size``: a kernel's resources and the launch they allow."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import NamedTuple

import occupancy
from occupancy.common import no_kernel_reason

from ._args import (
    add_arch_option,
    add_compiler_options,
    add_gpu_option,
    add_kernel_file_options,
    arch_help,
    arch_option_words,
    architecture,
    chosen_architecture,
    compiler_options,
    gpu,
    gpu_help,
    kernel_resources,
    print_json,
    target_architecture,
)
from ._progress import progress_bar

__all__ = ["PARSERS"]


def _resources_parser(p: argparse.ArgumentParser) -> None:
    """``gpuroof resources``'s options."""
    p.description = (
        "Like `ptxas -v` (`nvcc --resource-usage`) for several targets at once, offline (no GPU, no driver): every "
        "kernel of FILE (CUDA source compiled by your nvcc, device code only, one architecture per "
        "parallel compile, or by NVRTC when no nvcc is found; PTX assembled by ptxas, else nvJitLink; a cubin, a "
        "fatbin, or a host object or library with device code) for each --arch, with its registers per thread, "
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
                   help="only this kernel: its symbol, its C++ name (softmax<256>, ns::k; scopes may be left out, "
                        "cub::DeviceReduceKernel; enum arguments as the source spells them, sort<Order::Asc>) "
                        "or a prefix only it has")
    p.add_argument("--threads", type=int, default=None, metavar="N",
                   help="threads per block for the occupancy columns (default: each kernel's best block size)")
    add_compiler_options(p)
    p.add_argument("--compile-commands", default=None, metavar="JSON",
                   help="compile_commands.json (CMake, Bear): compile FILE with its own command's options "
                        "and, without --arch, for its architectures")
    p.add_argument("--compiler", default="auto", metavar="{auto,nvcc,nvrtc,PATH}",
                   help="for CUDA source: nvcc when found (auto), or force nvcc or NVRTC; or the path of an "
                        "nvcc (another toolkit's, e.g. /usr/local/cuda-12.8/bin/nvcc; PTX then uses the ptxas "
                        "beside it) or of a ptxas (for PTX)")
    p.add_argument("--baseline", default=None, metavar="JSON",
                   help="a regression gate: compare with this earlier `--json` output; exit 1 when a kernel's "
                        "registers, spills, static shared memory or stack rose, or its occupancy fell")
    p.add_argument("--tolerance", default=None, metavar="K=V,...",
                   help="how much worse each figure may get with --baseline: "
                        + ", ".join(f"{k} ({v})" for k, v in occupancy.GATE_FIELDS.items()) + "; default 0 each")
    p.add_argument("--lines", action="store_true",
                   help="where the registers go: per source line of each kernel (built with -lineinfo), the peak "
                        "of live registers, the bytes spilled and reloaded for the values of the line, and its other "
                        "local stores/loads (per-thread arrays)")
    p.add_argument("--headers", action="store_true",
                   help="with --lines: rows for the lines of other files (headers) too, instead of counting the "
                        "code inlined from them on the kernel's line that calls it")
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


class _Target(NamedTuple):
    """One architecture to compile for: its name as compiled (``sm_90a`` keeps its suffix), its
    rules, and a GPU's SM count."""

    name: str | None
    arch: occupancy.Architecture | None
    sm_count: int | None

    @property
    def compile_for(self) -> str | occupancy.Architecture | None:
        """What the compiler is given: the spelled name of a suffixed target, else the rules
        (a custom architecture file compiles for its compute capability)."""
        return self.name if self.name is not None and self.name != getattr(self.arch, "name", None) else self.arch


def _targets(args: argparse.Namespace) -> list[_Target]:
    """Each --arch and --gpu once per architecture (a GPU's SM count kept); one target with no
    architecture for the binary's own."""
    found: dict[str, _Target] = {}
    for spec in args.arch:
        for part in filter(None, (p.strip() for p in spec.split(","))):
            a = architecture(part)
            # sm_90a, sm_100f: the architecture-specific targets (setmaxnreg, wgmma) compile as spelled
            name = part if re.fullmatch(r"sm_\d+[af]", part) else a.name
            found.setdefault(name, _Target(name, a, None))
    for spec in args.gpu:
        g = gpu(spec)
        a = g.architecture
        if found.get(a.name, _Target(a.name, a, None)).sm_count is None:
            found[a.name] = _Target(a.name, a, g.sm_count)
    return list(found.values()) or [_Target(None, None, None)]


class _Row(NamedTuple):
    """One kernel on one architecture: its resources, best block size and occupancy at --threads."""

    arch: str
    resources: occupancy.KernelResources
    best: occupancy.BlockSizeResult
    occ: occupancy.OccupancyResult | None


def _rows(args: argparse.Namespace) -> list[_Row]:
    targets = _targets(args)
    given = [t.compile_for for t in targets if t.name is not None]
    chosen = {t.name: (t.arch, t.sm_count) for t in targets if t.name is not None}
    with progress_bar(args) as bar, arch_option_words():
        by_arch = occupancy.kernel_resources_by_architecture(
            args.file, given, kernel=args.kernel, options=compiler_options(args), compiler=args.compiler,
            compile_commands=args.compile_commands, progress=bar,
            # the table and the gate show no SASS summary: only --json's records carry it
            sass=args.json and args.baseline is None)
    rows = []
    for name, found in by_arch.items():
        for r in found.values():
            on, sm_count = chosen.get(name) or (occupancy.architecture(r.architecture), None)
            best = occupancy.max_potential_block_size(on, resources=r, sm_count=sm_count)
            # --threads 0 is refused by calculate; no --threads and no block size that can launch
            # (best.block_size 0) has no occupancy. A kernel compiled for one block size (.reqntid,
            # Triton's num_warps) runs only at it: --threads is for the others, not an error for all.
            threads = best.block_size if args.threads is None else args.threads
            if args.threads and r.threads_per_block is not None:
                threads = r.threads_per_block
            occ = occupancy.calculate(on, threads_per_block=threads, resources=r) \
                if threads or args.threads is not None else None
            rows.append(_Row(name if name in chosen else on.name, r, best, occ))
    return rows


def _dash(value: int | None) -> str:
    return "-" if value is None else str(value)


def _records(rows: list[_Row]) -> list[dict[str, object]]:
    """The rows as `gpuroof resources --json` prints them (and --baseline reads them)."""
    return [{"arch": row.arch, "resources": row.resources.model_dump(mode="json"),
             "occupancy": None if row.occ is None else row.occ.model_dump(mode="json"),
             "best_block_size": row.best.model_dump(mode="json")}
            for row in rows]


def _tolerance(text: str | None) -> dict[str, float]:
    """``"registers=0,occupancy=0.05"`` -> {"registers": 0.0, "occupancy": 0.05} (``5%`` is 0.05)."""
    out = {}
    for part in filter(None, (p.strip() for p in (text or "").split(","))):
        key, sep, value = part.partition("=")
        try:
            number = float(value.strip().rstrip("%")) / (100 if value.strip().endswith("%") else 1)
        except ValueError:
            number = None
        if not sep or number is None:
            raise occupancy.OccupancyError(f"--tolerance {part!r}: give NAME=NUMBER, NAME one of "
                                           + ", ".join(occupancy.GATE_FIELDS))
        out[key.strip()] = number
    return out


def _baseline(args: argparse.Namespace) -> object:
    """The --baseline file's records, read and checked before the compile: a missing file or one
    that holds no `--json` records is refused at once, not after seconds of nvcc."""
    path = Path(args.baseline)
    if not path.is_file():
        raise FileNotFoundError(f"--baseline: no such file: {args.baseline!r}")
    try:
        baseline = json.loads(path.read_text("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise occupancy.OccupancyError(f"--baseline {args.baseline}: not JSON ({exc})") from None
    occupancy.compare_resources(baseline, [], _tolerance(args.tolerance))  # the gate's own checks of the records
    return baseline


def _gate(args: argparse.Namespace, baseline: object, records: list[dict[str, object]]) -> int:
    result = occupancy.compare_resources(baseline, records, _tolerance(args.tolerance))
    if args.json:
        print_json({**result.model_dump(mode="json"), "regressed": result.regressed})
    else:
        print(result)
    return 1 if result.regressed else 0


def _source_text(file: str, line: int, cache: dict[str, list[str]]) -> str:
    if file not in cache:
        try:
            cache[file] = Path(file).read_text("utf-8", "replace").splitlines()
        except OSError:
            cache[file] = []
    text = cache[file]
    return text[line - 1].strip() if 0 < line <= len(text) else ""


def _lines(args: argparse.Namespace) -> int:
    if args.baseline is not None:
        raise occupancy.OccupancyError("--lines and --baseline do not go together")
    if args.headers and not args.lines:
        raise occupancy.OccupancyError("--headers applies to --lines")
    targets = [t.compile_for for t in _targets(args)]
    found = []
    for arch in targets:
        with arch_option_words():
            kernels = occupancy.source_lines(args.file, arch=arch, kernel=args.kernel, options=compiler_options(args),
                                             compiler=args.compiler, compile_commands=args.compile_commands,
                                             headers=args.headers)
        found.extend(kernels.values())
    if args.json:
        print_json([k.model_dump(mode="json") for k in found])
        return 0
    cache: dict[str, list[str]] = {}
    for k in found:
        print(f"{k.demangled or k.kernel} ({k.architecture}): {k.registers_per_thread} registers per thread, "
              f"at most {k.peak_live_registers} live at once (nvdisasm's life ranges)")
        print(f"  {'line':<28}{'instr':>6}{'live':>6}{'spill st/ld B':>15}{'local st/ld B':>15}  source")
        for r in k.lines:
            where = (f"{Path(r.file).name}:{r.line}" if r.line else f"{Path(r.file).name} (inlined)") if r.file \
                else "(no line)"
            spills = "?" if not k.spills_told else \
                f"{r.spill_store_bytes}/{r.spill_load_bytes}" if r.spill_stores or r.spill_loads else ""
            local = f"{r.local_store_bytes}/{r.local_load_bytes}" if r.local_stores or r.local_loads else ""
            print(f"  {where:<28}{r.instructions:>6}{r.peak_live_registers:>6}{spills:>15}{local:>15}  "
                  f"{_source_text(r.file, r.line, cache)[:60]}")
        if not k.spills_told:
            print(f"  ({k.tool} marks no spill and ptxas's figures are not at hand: the local st/ld bytes hold the "
                  "spills and the per-thread arrays together)")
    return 0


def _resources(args: argparse.Namespace) -> int:
    if args.lines:
        return _lines(args)
    if args.headers:
        raise occupancy.OccupancyError("--headers applies to --lines")
    tolerance = _tolerance(args.tolerance)
    if tolerance and args.baseline is None:
        raise occupancy.OccupancyError("--tolerance applies to a gate: give --baseline FILE too")
    baseline = None if args.baseline is None else _baseline(args)
    rows = _rows(args)
    if args.baseline is not None:
        return _gate(args, baseline, _records(rows))
    if args.json:
        print_json(_records(rows))
        return 0
    if not rows:  # host code only, as `nvcc --resource-usage` finds it: nothing to report, not an error
        print(f"{args.file} holds no kernel ({no_kernel_reason(args.file)})")
        return 0
    width = max(len("kernel"), *(len(row.resources.demangled or row.resources.kernel) for row in rows))
    at = f"at {args.threads} threads" if args.threads else "at the best block size"
    print(f"{'':<{width}}  {'':<7}{'':>5}{'shared':>8}{'local':>7}{'spills':>10}{'':>9}{'launch':>8}"
          f"{'':>5}  {at}")
    print(f"{'kernel':<{width}}  {'arch':<7}{'regs':>5}{'B':>8}{'B':>7}{'st/ld B':>10}{'barriers':>9}"
          f"{'bounds':>8}{'min':>5}  {'threads':>7}{'blocks':>7}{'occ':>7}  limiter")
    for row in rows:
        r, occ = row.resources, row.occ
        spills = "-" if r.spill_store_bytes is None else f"{r.spill_store_bytes}/{r.spill_load_bytes}"
        head = (f"{r.demangled or r.kernel:<{width}}  {row.arch:<7}{r.registers_per_thread:>5}{r.static_shared_memory:>8}"
                f"{r.local_memory:>7}{spills:>10}{_dash(r.block_barriers):>9}{_dash(r.max_threads_per_block):>8}"
                f"{_dash(r.min_blocks_per_sm):>5}  ")
        if occ is None:
            print(head + f"{'-':>7}{0:>7}{'0%':>7}  no block size can launch")
        elif occ.active_blocks_per_sm == 0:
            print(head + f"{occ.launch.threads_per_block:>7}{0:>7}{'0%':>7}  cannot launch: {occ.reason}")
        else:
            print(head + f"{occ.launch.threads_per_block:>7}{occ.active_blocks_per_sm:>7}{occ.occupancy:>7.0%}  "
                  + ", ".join(occ.limiters))
        if args.threads and occ is not None and occ.launch.threads_per_block != args.threads:
            print(f"{'':<{width}}  launched with {occ.launch.threads_per_block} threads only "
                  f"(compiled for that block size), not --threads {args.threads}")
        if r.warp_group_registers:
            print(f"{'':<{width}}  setmaxnreg: warp groups run with "
                  + " and ".join(f"{n} ({'inc' if n > r.registers_per_thread else 'dec'})"
                                 for n in r.warp_group_registers)
                  + f" registers per thread; regs ({r.registers_per_thread}) is the launch's count, "
                  "the one occupancy uses")
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
