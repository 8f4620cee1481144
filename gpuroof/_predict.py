"""Subcommands ``predict`` and ``cliffs``: occupancy-aware time predictions from the CLI."""

from __future__ import annotations

import argparse

import occupancy
import roofline

from ._args import FIGURE_FORMATS, add_output, print_json
from ._kernel import UserKernel, add_kernel_options, describe

__all__ = ["PARSERS"]


def _calibration(args: argparse.Namespace) -> roofline.Calibration | None:
    return roofline.load_calibration(args.calibration) if args.calibration else None


def _plot(args: argparse.Namespace, k: UserKernel, prediction: roofline.Prediction) -> None:
    """The kernel on the roofline: its bound, and the time model's time that the command prints."""
    if args.plot:
        chart = roofline.chart.roofline_chart(k.gpu, [k.kernel], precision=args.precision,
                                              model_seconds={k.kernel.name: prediction.seconds})
        roofline.chart.plot_roofline(chart, path=args.plot)


def _head(k: UserKernel, args: argparse.Namespace) -> list[str]:
    """The kernel file's resources, and the occupancy of the launch when its registers are known."""
    lines = []
    if k.resources is not None:
        lines.append(f"  resources             {k.resources_line(args.kernel_file)}")
    launch = k.kernel.launch
    if launch.registers_per_thread is not None:
        occ = occupancy.calculate(k.gpu.architecture, launch=launch)
        lines.append(f"  occupancy             {occ.occupancy:.1%} ({occ.active_blocks_per_sm} blocks, "
                     f"{occ.active_warps_per_sm} warps per SM), limited by {', '.join(occ.limiters)}")
    return lines


def _from_source(args: argparse.Namespace, k: UserKernel) -> str | None:
    """With --from-source, the line saying what the kernel file's SASS gives the prediction; the
    flag without a kernel file, or with one whose SASS could not be read, is an error (a silent
    fallback to the launch alone would not be the prediction from source that was asked for)."""
    if not args.from_source:
        return None
    if k.resources is None:
        raise roofline.RooflineError("--from-source predicts from your kernel's file: give --kernel-file FILE "
                                     "(.cu, PTX, cubin) and --kernel NAME")
    sass = k.resources.sass
    if sass is None:
        why = k.resources.sources.get("sass", "no SASS was read")
        raise roofline.RooflineError(f"--from-source needs the SASS of {args.kernel_file}: {why}")
    loop = sass.loops[sass.hot_loop] if sass.hot_loop is not None else None
    where = (f"hot loop of {loop.instructions.total} instructions at depth {loop.depth}" if loop is not None
             else f"no loop, {sass.instructions.total} instructions")
    return (f"from source: {args.kernel_file}'s SASS ({sass.architecture}, {where}, "
            f"{sass.global_loads_in_flight_per_thread} global loads in flight a thread), no profile counts")


def _cmd_predict(args: argparse.Namespace) -> int:
    k = describe(args, launch=True)
    source_line = _from_source(args, k)
    p = roofline.predict(k.gpu, k.kernel, calibration=_calibration(args),
                         loads_in_flight_per_thread=args.loads_in_flight)
    _plot(args, k, p)
    if args.json:
        data: dict[str, object] = {"gpu": k.gpu.name, "kernel": k.kernel.name, "launch": k.kernel.launch.model_dump(mode="json")}
        if k.resources is not None:
            data["resources"] = k.resources.model_dump(mode="json")
        if source_line is not None:
            data["from_source"] = source_line
        print_json({**data, **p.model_dump(mode="json")})
        return 0
    launch = k.kernel.launch
    print(f"{k.kernel.name} on {k.gpu.name}: grid {launch.blocks} x block {launch.threads_per_block}, "
          f"{p.active_blocks_per_sm} blocks ({p.active_warps_per_sm} warps) per SM, {_small(p.waves)} waves")
    for line in _head(k, args):
        print(line)
    if source_line is not None:
        print(f"  {source_line}")
    bound = _small(p.roofline_seconds * 1e6)
    print(f"  predicted time        {p.seconds * 1e6:10.2f} us   (roofline bound {bound} us)")
    print(f"  achieved DRAM         {p.achieved_bytes_per_second / 1e9:10.1f} GB/s")
    print(f"  achieved              {p.achieved_flops_per_second / 1e12:10.3f} TFLOP/s")
    # the limiter is a kind (cache_bandwidth covers L2, L1 and the atomics' serial updates);
    # the term that binds says which of the terms printed by --json it is
    what = _TERMS.get(p.binding)
    print(f"  limiter               {p.limiter} (the {p.binding} term binds" + (f": {what})" if what else ")"))
    print(f"  bytes in flight       {p.bytes_in_flight / 1024:10.1f} KiB   (a full wave's loads outstanding, "
          "Little's law)")
    print(f"  measured parameters   {', '.join(p.calibration.measured) or 'none'}")
    print(f"  defaulted parameters  {', '.join(p.calibration.defaulted) or 'none'}")
    for note in p.assumptions:
        print(f"  assumed: {note}")
    if args.plot:
        print(f"  roofline plot written to {args.plot}")
    return 0


#: What each term of `roofline.predict` times, for the limiter's line: a term's name alone
#: ("the dram term binds") read as a contradiction where DRAM moved little, its waits binding.
_TERMS = {
    "dram": "the DRAM bytes at the rate the blocks' loads in flight reach, their round trips included",
    "l2": "the L2 bytes at L2's rate",
    "l2_partial_stores": "stores that fill part of a sector, one at a time at L2",
    "l2_requests": "the requests that reach L2, at its request rate",
    "atomics": "global atomics, one address's updates in turn",
    "shared_atomics": "shared-memory atomics on the busiest SM",
    "l1_shared": "the L1/shared-memory bytes of the busiest SM",
    "trips": "the hot loop's round trips, wave after wave",
    "arithmetic": "the flops at the rate the resident warps issue them",
    "instructions": "the warp instructions at the schedulers' issue rate",
}


def _small(value: float) -> str:
    """Two decimals, as the table prints, but three significant digits below 0.01 (a grid of a few
    blocks is 0.0303 waves, not 0.00)."""
    return f"{value:.2f}" if value == 0 or abs(value) >= 0.01 else f"{value:.3g}"


def _cmd_cliffs(args: argparse.Namespace) -> int:
    k = describe(args, launch=True)
    result = roofline.cliffs.time_cliffs(k.gpu, k.kernel, calibration=_calibration(args))
    _plot(args, k, result.current)
    if args.json:
        data = result.model_dump(mode="json")
        if k.resources is not None:
            data["resources"] = k.resources.model_dump(mode="json")
        print_json(data)
        return 0
    c = result.current
    print(f"{k.kernel.name} on {k.gpu.name}: now {c.seconds * 1e6:.2f} us with {c.active_blocks_per_sm} blocks/SM "
          f"({c.limiter}); roofline bound {_small(c.roofline_seconds * 1e6)} us")
    for line in _head(k, args):
        print(line)
    print(f"  {'resource':<18} {'at value':>10} {'blocks/SM':>10} {'time (us)':>11} {'x now':>7}  limiter")
    for row in result.cliffs:
        print(f"  {row.resource:<18} {row.value:>10} {row.active_blocks_per_sm:>10} "
              f"{row.predicted_seconds * 1e6:>11.2f} {row.relative_time:>7.3f}  {row.limiter}")
    if args.plot:
        print(f"  roofline plot written to {args.plot}")
    return 0


def _add_options(p: argparse.ArgumentParser) -> None:
    add_kernel_options(p, launch=True, what="gives the registers and shared memory of the launch")
    p.add_argument("--calibration", help="calibration JSON written by `gpuroof calibrate`")
    add_output(p, "--plot", formats=FIGURE_FORMATS, default=None, metavar="FILE",
               help="also draw the kernel on the GPU's roofline (.png .svg .pdf): its roofline bound "
                    "(filled) and the time model's time printed here (half-filled)")
    p.add_argument("--json", action="store_true", help="print JSON")


_KERNEL = (
    "The kernel is a built-in model (--model NAME --param KEY=VALUE; `gpuroof models` lists them) or your "
    "own: its counts (--flops, --dram-bytes, optionally --l2-bytes, --l1-bytes, --load-bytes, --store-bytes, "
    "and any other count of roofline.Kernel as --count NAME=VALUE) and launch (--grid, --block), "
    "with its registers and shared memory read from its file (--source/--cubin FILE --kernel NAME, compiled "
    "offline for the GPU's architecture) or given loose (--registers, --smem)."
)


def _predict_parser(p: argparse.ArgumentParser) -> None:
    """``gpuroof predict``'s options."""
    p.description = ("Predict a kernel's time on a GPU: occupancy (exact), the bytes the resident warps keep in "
                     "flight (Little's law), the waves of blocks, the compute issue rate and the launch overhead, "
                     "next to its roofline bound. " + _KERNEL)
    _add_options(p)
    p.add_argument("--loads-in-flight", type=int, default=None,
                   help="independent loads each thread keeps outstanding (default: elements per thread)")
    p.add_argument("--from-source", action="store_true",
                   help="predict from your kernel's file alone, as docs/prediction.md's from-source figures: "
                        "its SASS (hot loop, instructions, loads in flight) with your counts, no profile; "
                        "needs --kernel-file, and fails where the SASS cannot be read instead of "
                        "falling back to the launch alone")
    p.set_defaults(func=_cmd_predict)


def _cliffs_parser(p: argparse.ArgumentParser) -> None:
    """``gpuroof cliffs``'s options."""
    p.description = ("The predicted time of a kernel now and at every occupancy threshold of registers per "
                     "thread, shared memory per block and block size (the grid keeps its thread count), each "
                     "with the blocks per SM and the limiter there. " + _KERNEL)
    _add_options(p)
    p.set_defaults(func=_cmd_cliffs)


PARSERS = {"cliffs": _cliffs_parser, "predict": _predict_parser}
