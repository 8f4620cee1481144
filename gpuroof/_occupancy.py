"""``gpuroof occupancy`` and ``gpuroof archs``."""

from __future__ import annotations

import argparse
import occupancy
import roofline

from ._args import (
    FIGURE_FORMATS,
    add_arch_option,
    add_gpu_option,
    add_kernel_file_options,
    add_output,
    chosen_architecture,
    dims,
    gpu,
    kernel_resources,
    print_json,
    target_architecture,
)

__all__ = ["PARSERS"]


def _occupancy_parser(p: argparse.ArgumentParser) -> None:
    """``gpuroof occupancy``'s options."""
    p.description = (
        "Exact occupancy of one kernel launch, no GPU needed: blocks and warps per SM, the "
        "resources that limit them, the configuration the driver launches with, and every "
        "occupancy cliff along registers, shared memory, block size and barriers (with --gpu "
        "and a GPC layout, along cluster size too). Describe the kernel with loose numbers "
        "(--registers, --smem, ...) or give its file (--source/--cubin FILE --kernel NAME): "
        "its registers, static shared memory, barriers and launch bounds are read offline."
    )
    add_arch_option(p, "compute capability (default: --gpu's, else the binary's)")
    p.add_argument("--threads", type=dims, required=True, metavar="N[,N,N]",
                   help="threads per block, or the block's shape (16,16,3), as --block of predict")
    p.add_argument("--registers", type=int, default=None,
                   help="registers per thread (required without a kernel file)")
    p.add_argument("--smem", type=int, default=None, metavar="B",
                   help="static shared memory per block, bytes (default 0, or the kernel file's)")
    p.add_argument("--dynamic-smem", type=int, default=0, metavar="B", help="dynamic shared memory per block, bytes")
    p.add_argument(
        "--max-dynamic-smem", type=int, default=None, metavar="B",
        help="the kernel's max dynamic shared memory attribute, bytes (default 48 KiB minus static)",
    )
    p.add_argument("--carveout", type=int, default=None, metavar="PCT", help="preferred shared-memory carveout, percent")
    p.add_argument("--barriers", type=int, default=None, metavar="N",
                   help="block barriers the kernel uses (default 1, or the kernel file's)")
    p.add_argument("--max-threads", type=int, default=None, metavar="N",
                   help="the kernel's max threads per block (default: none, or the kernel file's launch bounds)")
    add_gpu_option(p, lambda: "GPU: chooses the architecture when --arch is not given; with a GPC layout "
                              f"({', '.join(g.name for g in roofline.gpc_layouts())}) adds the cluster-size cliffs")
    p.add_argument("--cluster", default=None, metavar="N|X,Y,Z",
                   help="thread-block cluster size or dimensions (needs --gpu; default: the kernel's __cluster_dims__)")
    p.add_argument("--non-portable", action="store_true",
                   help="the kernel allows non-portable cluster sizes (over 8 blocks)")
    p.add_argument("--cluster-policy", default="spread", choices=occupancy.SCHEDULING_POLICIES,
                   help="cluster scheduling policy (default spread)")
    add_kernel_file_options(p, what="gives the resources")
    p.add_argument("--json", action="store_true", help="print JSON")
    add_output(p, "--plot", formats=FIGURE_FORMATS, default=None, metavar="FILE",
               help="save occupancy plots to FILE (.png .svg .pdf)")
    p.set_defaults(func=_occupancy)



def _launch(args: argparse.Namespace, resources: occupancy.KernelResources | None) -> occupancy.Launch:
    """One block's launch (the grid does not change occupancy: one cluster when the kernel fixes one)."""
    if resources is None and args.registers is None:
        raise occupancy.OccupancyError("give --registers N, or the kernel's file (--source/--cubin FILE)")
    loose = dict(
        registers_per_thread=args.registers,
        static_shared_memory=args.smem,
        dynamic_shared_memory=args.dynamic_smem,
        max_dynamic_shared_memory=args.max_dynamic_smem,
        carveout=args.carveout,
        block_barriers=args.barriers,
        max_threads_per_block=args.max_threads,
    )
    grid = (resources.cluster_dims if resources is not None else None) or 1
    return occupancy.Launch(grid=grid, block=args.threads, resources=resources,
                            **{k: v for k, v in loose.items() if v is not None})  # unset: the Launch's defaults


def _cluster(text: str | None, resources: occupancy.KernelResources | None) -> int | tuple[int, ...] | None:
    """``"4"`` -> 4, ``"2,2,1"`` -> (2, 2, 1), else the kernel's own ``__cluster_dims__``; the library checks the values."""
    if text is None:
        return None if resources is None else resources.cluster_dims
    try:
        parts = tuple(int(part) for part in text.split(","))
    except ValueError:
        raise occupancy.OccupancyError(f"--cluster {text!r} must be N or X,Y,Z (integers)") from None
    return parts[0] if len(parts) == 1 else parts


def _cluster_gpu(args: argparse.Namespace, cluster: int | tuple[int, ...] | None) -> occupancy.GpcLayout | None:
    """The GPC layout that gives the cluster axis: ``--gpu``'s when it has a packaged layout,
    or whenever a cluster is asked for (the library then says what is missing)."""
    if not args.gpu:
        return None
    record = gpu(args.gpu)
    if cluster is not None or record.name in {g.name for g in roofline.gpc_layouts()}:
        return roofline.gpc_layout(record)
    return None


def _fmt_limit(value: int | None) -> str:
    return "-" if value is None else str(value)


def _occupancy(args: argparse.Namespace) -> int:
    resources = kernel_resources(args, chosen_architecture(args))
    arch = target_architecture(args, resources)
    launch = _launch(args, resources)
    cluster = _cluster(args.cluster, resources if args.gpu else None)  # a fixed cluster shape needs a GPC layout
    cluster_gpu = _cluster_gpu(args, cluster)
    if launch.cluster is not None and cluster_gpu is None:
        raise occupancy.OccupancyError(
            f"kernel {resources.kernel!r} is compiled for clusters of {launch.cluster} blocks (__cluster_dims__): "
            "give --gpu, a GPU with a GPC layout (" + ", ".join(g.name for g in roofline.gpc_layouts()) + ")"
        )
    result = occupancy.calculate(arch, launch=launch)
    cluster_options = dict(non_portable_cluster_size_allowed=args.non_portable, scheduling_policy=args.cluster_policy)
    edges = occupancy.cliffs(arch, launch=launch, gpu=cluster_gpu, cluster_size=cluster,
                             **(cluster_options if cluster_gpu else {}))
    clusters = None
    if cluster is not None:
        clusters = occupancy.max_active_clusters(cluster_gpu, launch, cluster_size=cluster,
                                                 **cluster_options)
    if args.plot:
        occupancy.plot_occupancy(arch, launch=launch, path=args.plot)
    if args.json:
        data = {"result": result.model_dump(), "cliffs": edges.model_dump()}
        if resources is not None:
            data["resources"] = resources.model_dump()
        if clusters is not None:
            data["clusters"] = clusters.model_dump(exclude={"per_sm"})
        print_json(data)
        return 0
    if resources is not None:
        print(f"{resources}, from {args.kernel_file}")
    _print_result(result, clusters)
    _print_cliffs(edges)
    if args.plot:
        print(f"  plot written to {args.plot}")
    return 0


def _print_result(r: occupancy.OccupancyResult, clusters: occupancy.ClusterOccupancy | None) -> None:
    """The launch, its blocks and warps per SM, what limits them, the driver's configuration and the clusters."""
    launch = r.launch
    print(
        f"{r.arch}: {launch.threads_per_block} threads, {launch.registers_per_thread} registers, "
        f"{launch.static_shared_memory} B static + {launch.dynamic_shared_memory} B dynamic shared memory"
    )
    print(
        f"  active blocks per SM  {r.active_blocks_per_sm}  "
        f"({r.active_warps_per_sm}/{r.max_warps_per_sm} warps, occupancy {r.occupancy:.1%})"
    )
    limiters = ", ".join(r.limiters)
    bound = launch.max_threads_per_block
    if r.active_blocks_per_sm == 0 and bound is not None and launch.threads_per_block > bound:
        # the runtime's calculator counts a block past __launch_bounds__ as no warps fitting
        limiters = f"launch bounds: max_threads_per_block={bound} (counted as warps 0)"
    print(f"  limiters              {limiters}")
    if r.reason:
        print(f"  cannot launch         {r.reason}")
    print(
        "  block limits          " + ", ".join(f"{k} {_fmt_limit(v)}" for k, v in r.block_limits.items())
    )
    print(
        f"  allocated per block   {r.registers_per_block} registers, "
        f"{r.shared_memory_per_block} B shared memory (SM configured for {r.shared_memory_config} B)"
    )
    d = r.driver
    print(
        f"  driver launches with  {d.shared_memory_config} B shared memory"
        + ("" if d.l1_cache is None else f", {d.l1_cache} B L1")
        + f" ({d.rule}); limits there: "
        + ", ".join(f"{k} {_fmt_limit(getattr(d, f'block_limit_{k}'))}" for k in r.block_limits)
    )
    if clusters is not None:
        c = clusters
        print(
            f"  clusters on {c.gpu:<9} {c.active_clusters} of {c.cluster_size} blocks resident "
            f"(naive {c.naive_clusters}; {c.blocks_per_sm_in_cluster} blocks/SM in clusters; per GPC "
            f"{','.join(map(str, c.clusters_per_gpc))} over {','.join(map(str, c.sms_per_gpc))} SMs"
            + ("" if c.layout_measured else "; layout assumed") + ")"
        )
        if c.reason:
            print(f"  no cluster fits       {c.reason}")


def _print_cliffs(edges: occupancy.Cliffs) -> None:
    """Each resource's value, headroom and gain to the next cliff, and its first thresholds."""
    print("  cliffs")
    if edges.cluster_size is not None:
        axis = edges.cluster_size
        points = ", ".join(f"{p.cluster_size}:{p.active_blocks}" for p in axis.points)
        if axis.value is None:  # launched without clusters: the sizes it could take, nothing to move from
            print(f"    {'cluster_size':<18} no clusters in this launch; resident blocks by cluster size {points}")
        else:
            head = "unlimited" if axis.headroom is None else f"+{axis.headroom}"
            gain = "none" if axis.gain is None else f"-{axis.gain}"
            print(f"    {'cluster_size':<18} {axis.value} blocks per cluster; headroom {head}, gain {gain}; "
                  f"resident blocks {points}")
    for c in (edges.registers, edges.shared_memory, edges.threads_per_block, edges.barriers):
        # no value up to the maximum loses a block: nothing limits growth along this resource
        head = "unlimited" if c.headroom is None else f"+{c.headroom}"
        gain = "none" if c.gain is None else f"-{c.gain}"
        marks = ", ".join(f"{t.value}:{t.occupancy:.0%}" for t in c.thresholds[:8])
        more = " ..." if len(c.thresholds) > 8 else ""
        print(
            f"    {c.resource:<18} {c.value} {c.unit}; headroom {head}, gain {gain}; "
            f"thresholds {marks or 'none'}{more}"
        )


def _archs(args: argparse.Namespace) -> int:
    archs = occupancy.architectures()
    if args.json:
        print_json([a.model_dump() for a in archs])
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


def _archs_parser(p: argparse.ArgumentParser) -> None:
    """``gpuroof archs``'s options."""
    p.description = ("Every compute capability the occupancy calculator knows, with its per-SM and per-block "
                     "limits and shared-memory carveouts (from NVIDIA's tables; each entry names its source).")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=_archs)


PARSERS = {"archs": _archs_parser, "occupancy": _occupancy_parser}
