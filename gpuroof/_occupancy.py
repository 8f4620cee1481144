"""``gpuroof occupancy`` and ``gpuroof archs``."""

from __future__ import annotations

import argparse
import json

import occupancy
import roofline

from ._args import output_file

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``occupancy`` and ``archs`` subcommands to the `gpuroof` parser."""
    p = subparsers.add_parser(
        "occupancy",
        help="blocks per SM of a launch, what limits them, and the next cliffs",
        description="Exact occupancy of one kernel launch (no GPU needed).",
    )
    p.add_argument("--arch", required=True, help='compute capability, e.g. "sm_90" or "9.0"')
    p.add_argument("--threads", type=int, required=True, help="threads per block")
    p.add_argument("--registers", type=int, required=True, help="registers per thread")
    p.add_argument("--smem", type=int, default=0, metavar="B", help="static shared memory per block, bytes")
    p.add_argument("--dynamic-smem", type=int, default=0, metavar="B", help="dynamic shared memory per block, bytes")
    p.add_argument(
        "--max-dynamic-smem", type=int, default=None, metavar="B",
        help="the kernel's max dynamic shared memory attribute, bytes (default 48 KiB minus static)",
    )
    p.add_argument("--carveout", type=int, default=None, metavar="PCT", help="preferred shared-memory carveout, percent")
    p.add_argument("--barriers", type=int, default=1, metavar="N", help="block barriers the kernel uses (default 1)")
    p.add_argument("--max-threads", type=int, default=None, metavar="N", help="the kernel's max threads per block")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--plot", default=None, metavar="FILE", help="save occupancy plots to FILE")
    p.set_defaults(func=_occupancy)

    a = subparsers.add_parser("archs", help="the architectures and their limits")
    a.add_argument("--json", action="store_true", help="print JSON")
    a.set_defaults(func=_archs)


def _config(args: argparse.Namespace) -> dict:
    return dict(
        threads_per_block=args.threads,
        registers_per_thread=args.registers,
        static_shared_memory=args.smem,
        dynamic_shared_memory=args.dynamic_smem,
        max_dynamic_shared_memory=args.max_dynamic_smem,
        carveout=args.carveout,
        block_barriers=args.barriers,
        max_threads_per_block=args.max_threads,
    )


def _fmt_limit(value: int | None) -> str:
    return "-" if value is None else str(value)


def _architecture(spec: str) -> occupancy.Architecture:
    """`occupancy.architecture`, and when a GPU's name was given, the architecture to use."""
    try:
        return occupancy.architecture(spec)
    except occupancy.OccupancyError as exc:
        candidates = roofline.gpus(spec) if any(ch.isalnum() for ch in spec) else ()
        archs = sorted({g.architecture.name for g in candidates})
        if not archs:
            raise
        names = ", ".join(g.name for g in candidates)
        raise occupancy.OccupancyError(
            f"arch={spec!r} names a GPU, not an architecture: use --arch {' or '.join(archs)} ({names})"
        ) from exc


def _occupancy(args: argparse.Namespace) -> int:
    config = _config(args)
    if args.plot:
        output_file(args.plot, "--plot")
    arch = _architecture(args.arch)
    result = occupancy.calculate(arch, **config)
    edges = occupancy.cliffs(arch, **config)
    if args.plot:
        occupancy.plot_occupancy(arch, **config, path=args.plot)
    if args.json:
        print(json.dumps({"result": result.model_dump(), "cliffs": edges.model_dump()}, indent=2))
        return 0
    r = result
    print(
        f"{r.arch}: {r.threads_per_block} threads, {r.registers_per_thread} registers, "
        f"{r.static_shared_memory} B static + {r.dynamic_shared_memory} B dynamic shared memory"
    )
    print(
        f"  active blocks per SM  {r.active_blocks_per_sm}  "
        f"({r.active_warps_per_sm}/{r.max_warps_per_sm} warps, occupancy {r.occupancy:.1%})"
    )
    print(f"  limiters              {', '.join(r.limiters)}")
    if r.reason:
        print(f"  cannot launch         {r.reason}")
    print(
        "  block limits          " + ", ".join(f"{k} {_fmt_limit(v)}" for k, v in r.block_limits.items())
    )
    print(
        f"  allocated per block   {r.registers_per_block} registers, "
        f"{r.shared_memory_per_block} B shared memory (SM configured for {r.shared_memory_config} B)"
    )
    print("  cliffs")
    for c in (edges.registers, edges.shared_memory, edges.threads_per_block, edges.barriers):
        head = "none" if c.headroom is None else f"+{c.headroom}"
        gain = "none" if c.gain is None else f"-{c.gain}"
        marks = ", ".join(f"{t.value}:{t.occupancy:.0%}" for t in c.thresholds[:8])
        more = " ..." if len(c.thresholds) > 8 else ""
        print(
            f"    {c.resource:<18} {c.value} {c.unit}; headroom {head}, gain {gain}; "
            f"thresholds {marks or 'none'}{more}"
        )
    if args.plot:
        print(f"  plot written to {args.plot}")
    return 0


def _archs(args: argparse.Namespace) -> int:
    archs = occupancy.architectures()
    if args.json:
        print(json.dumps([a.model_dump() for a in archs], indent=2))
        return 0
    head = (
        f"{'arch':<8}{'cc':>5}  {'family':<13}{'thr/SM':>7}{'blk/SM':>7}{'regs/blk':>9}"
        f"{'smem/SM':>9}{'optin':>8}{'rsvd':>6}  carveouts (KiB)"
    )
    print(head)
    for a in archs:
        carve = ",".join(str(c // 1024) for c in a.shared_memory_carveouts)
        print(
            f"{a.name:<8}{a.compute_capability:>5}  {a.family:<13}{a.max_threads_per_sm:>7}"
            f"{a.max_blocks_per_sm:>7}{a.max_registers_per_block:>9}{a.shared_memory_per_sm:>9}"
            f"{a.max_shared_memory_per_block_optin:>8}{a.reserved_shared_memory_per_block:>6}  {carve}"
        )
    return 0
