"""``gpuroof gpus``, ``gpu``, ``roofline``, ``plot``, ``memory-spaces`` and ``demo``.

Each parses its arguments, makes one library call, and prints (``--json`` for machine-readable output).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import roofline
from occupancy.common import ProgressStep
from roofline import models

from ._args import FIGURE_FORMATS, add_gpu_option, add_output, gpu, gpu_help, print_json
from ._kernel import add_kernel_options, describe
from ._progress import progress_bar

__all__ = ["PARSERS"]


def _gpu_row(g: roofline.GPU) -> dict[str, object]:
    return {
        "name": g.name,
        "compute_capability": g.compute_capability,
        "sm_count": g.sm_count,
        "boost_clock_hz": g.boost_clock_hz,
        "memory_type": g.memory_type,
        "memory_bandwidth": g.memory_bandwidth,
        "fp32_flops_per_second": g.peak_flops("fp32"),
        "ridge_point_fp32": g.ridge_point("fp32"),
        "aliases": list(g.aliases),
    }


def _cmd_gpus(args: argparse.Namespace) -> int:
    gpus = roofline.gpus()
    if args.json:
        print_json([_gpu_row(g) for g in gpus])
        return 0
    print(f"{'name':<16}{'cc':>6}{'SMs':>6}{'boost MHz':>11}{'memory':>8}{'DRAM GB/s':>11}"
          f"{'FP32 TFLOP/s':>14}{'ridge (flop/B)':>16}")
    for g in gpus:
        print(f"{g.name:<16}{g.compute_capability:>6}{g.sm_count:>6}"
              f"{g.boost_clock_hz / 1e6:>11.0f}{g.memory_type:>8}"
              f"{g.memory_bandwidth / 1e9:>11.0f}{g.peak_flops('fp32') / 1e12:>14.1f}"
              f"{g.ridge_point('fp32'):>16.1f}")
    return 0


def _cmd_gpu(args: argparse.Namespace) -> int:
    g = gpu(args.name)
    derivations = g.derivations()
    if args.json:
        data = g.model_dump(mode="json")
        data["ceilings"] = [d.model_dump(mode="json") for d in derivations]
        data["memory_bandwidth"] = g.memory_bandwidth
        print_json(data)
        return 0
    print(f"{g.name}  (compute capability {g.compute_capability}, {g.sm_count} SMs, "
          f"boost {g.boost_clock_hz / 1e6:.0f} MHz"
          + (f", tensor {g.tensor_clock_hz / 1e6:.0f} MHz" if g.tensor_clock_hz else "") + ")")
    if g.aliases:
        print(f"aliases: {', '.join(g.aliases)}")
    memory = f"{g.memory_type} {g.memory_bus_width_bits}-bit" if g.memory_bus_width_bits else g.memory_type
    size = f", {g.memory_size_bytes / 2**30:.0f} GiB" if g.memory_size_bytes else ""
    l2 = f", L2 {g.l2_cache_bytes / 2**20:.0f} MiB" if g.l2_cache_bytes else ""
    print(f"memory: {memory}{size}{l2}")
    if g.host_link is not None:
        print(f"host link: {g.host_link.describe()}")
    print()
    sources: list[str] = []
    for d in derivations:
        if d.unit == "bytes/s":
            value = f"{d.value / 1e9:,.0f} GB/s"
        else:
            value = f"{d.value / 1e12:,.2f} T{'OP' if d.unit == 'ops/s' else 'FLOP'}/s"
        if d.source not in sources:
            sources.append(d.source)
        print(f"{d.quantity:<12} {value:>18}   = {d.formula}  [{sources.index(d.source) + 1}]")
    print()
    for i, source in enumerate(sources, 1):
        print(f"[{i}] {source}")
    return 0


def _cmd_roofline(args: argparse.Namespace) -> int:
    k = describe(args, launch=False)
    result = roofline.analyze(k.gpu, k.kernel, args.precision)
    if args.json:
        data = result.model_dump(mode="json")
        if k.resources is not None:
            data["resources"] = k.resources.model_dump(mode="json")
        print_json(data)
        return 0
    where = result.bound if result.bound == "compute" else f"memory ({result.bound_level})"
    print(f"{result.name} on {result.gpu} ({result.precision})")
    if k.resources is not None:
        print(f"  resources                 {k.resources_line(args.kernel_file)}")
    print(f"  flops                     {result.flops:.6g}")
    for level, nbytes in result.bytes.items():
        print(f"  {level + ' bytes':<25} {nbytes:.6g}   intensity "
              f"{result.arithmetic_intensities[level]:.4g} flop/B")
    print(f"  ridge point (DRAM)        {result.ridge_point:.4g} flop/B")
    print(f"  bound                     {where}")
    print(f"  attainable                {result.attainable_flops_per_second / 1e12:.4g} TFLOP/s "
          f"({result.fraction_of_peak:.1%} of {result.peak_flops_per_second / 1e12:.4g})")
    print(f"  time lower bound          {result.time_lower_bound_seconds * 1e6:.4g} us")
    return 0


def _cmd_plot(args: argparse.Namespace) -> int:
    out = Path(args.output)
    with progress_bar(args) as bar:
        if args.input:
            chart = roofline.chart.load_chart(args.input)
        else:
            if args.suite:
                bar(ProgressStep("building the kernel suite", 0, 2))
                kernels = list(models.suite())
            elif args.model or args.flops is not None or args.dram_bytes is not None:
                kernels = [describe(args, launch=False).kernel]
            else:
                kernels = []
            chart = roofline.chart.roofline_chart(gpu(args.gpu), kernels, precision=args.precision)
        if out.suffix.lower() in {".json", ".csv"}:
            roofline.chart.save_chart(chart, out)
        else:
            bar(ProgressStep(f"drawing {out}", 1, 2))
            roofline.chart.plot_roofline(chart, path=out)
    if args.json:
        print_json({"output": str(out), "chart": chart.model_dump(mode="json")})
    else:
        print(f"wrote {out}")
    return 0


def _cmd_memory_spaces(args: argparse.Namespace) -> int:
    spaces = roofline.memory.memory_spaces()
    rows = [s.model_dump(mode="json") for s in spaces]
    if args.json:
        print_json(rows)
        return 0
    for row in rows:
        name = row.pop("name", "?")
        print(name)
        for key, value in row.items():
            if key != "source":
                print(f"  {key}: {value}")
        if "source" in row:
            print(f"  source: {row['source']}")
    return 0


def _cmd_demo(args: argparse.Namespace) -> int:
    device = gpu(args.gpu)
    with progress_bar(args) as bar:
        report = roofline.suite.analyze_suite(device, roofline.suite.demo_kernels(device), progress=bar)
        bar(f"writing the tables and the roofline plot to {args.out}")
        paths = roofline.suite.write_suite_report(report, args.out)
    if args.json:
        print_json({"files": {k: str(v) for k, v in paths.items()},
               **report.model_dump(mode="json", exclude={"chart"})})
        return 0
    g = roofline.gpu(report.gpu)
    print(f"gpuroof demo: the classic kernel suite and a register-tiled SGEMM on {g.name}\n"
          f"{g.name}: FP32 {g.peak_flops('fp32') / 1e12:.1f} TFLOP/s, DRAM {g.memory_bandwidth / 1e9:.0f} GB/s, "
          f"ridge {g.ridge_point('fp32'):.1f} flop/B")
    print()
    print(roofline.suite.format_suite_table(report, wide=args.wide))
    compiled = roofline.suite.demo_resources()
    if not all(r.registers_assumed for r in report.rows):
        print(f"regs: {compiled.file} compiled by {compiled.compiler} for {g.architecture.name} "
              "(roofline/data/demo_resources.toml)")
    print()
    for kind, path in paths.items():
        print(f"wrote {path}  ({kind.replace('_', ' ')})")
    return 0


def _gpus_parser(p: argparse.ArgumentParser) -> None:
    """``gpuroof gpus``'s options."""
    p.description = ("Every GPU of the database with its SMs, clocks, memory and FP32 roofline (`gpuroof gpu NAME` "
                     "shows one with every derived ceiling and its source).")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=_cmd_gpus)


def _gpu_parser(p: argparse.ArgumentParser) -> None:
    """``gpuroof gpu``'s options."""
    p.description = ("One GPU's datasheet facts and every ceiling derived from them (compute per precision, "
                     "DRAM, L2, L1), each with its formula and source.")
    p.add_argument("name", help=gpu_help("GPU name or alias, e.g. 'a100 pcie 40gb'"))
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=_cmd_gpu)


def _roofline_parser(p: argparse.ArgumentParser) -> None:
    """``gpuroof roofline``'s options."""
    p.description = ("The (hierarchical) roofline bound of one kernel on a GPU: arithmetic intensity at each "
                     "memory level given, the ridge point, whether compute or a memory level binds, the attainable "
                     "throughput and the time lower bound. The kernel is a built-in model (--model NAME --param "
                     "KEY=VALUE) or your own counts (--flops, --dram-bytes, optionally --l2-bytes, --l1-bytes); "
                     "--source/--cubin FILE --kernel NAME adds its compiled resources and name.")
    add_kernel_options(p, launch=False, what="is bounded (its name and resources are shown)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=_cmd_roofline)


def _plot_parser(p: argparse.ArgumentParser) -> None:
    """``gpuroof plot``'s options."""
    p.description = ("Draw a GPU's roofline with one kernel (a model or your counts), the classic suite (--suite) "
                     "or a chart saved before (--from), or export the chart as JSON or CSV.")
    add_kernel_options(p, launch=False, what="is drawn")
    p.add_argument("--suite", action="store_true", help="plot the classic kernel suite")
    p.add_argument("--from", dest="input", help="re-plot a chart saved as JSON or CSV")
    add_output(p, "-o", "--output", formats=(*FIGURE_FORMATS, ".json", ".csv"), required=True,
               help="output file (.png .svg .pdf .json .csv)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=_cmd_plot)


def _memory_spaces_parser(p: argparse.ArgumentParser) -> None:
    """``gpuroof memory-spaces``'s options."""
    p.description = ("Register, local, shared, constant, texture and global memory: where each lives, its "
                     "caching, access, scope, lifetime and latency, with sources.")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=_cmd_memory_spaces)


def _demo_parser(p: argparse.ArgumentParser) -> None:
    """``gpuroof demo``'s options."""
    p.description = ("Bound, occupancy and predicted time of every kernel of the classic suite and a register-tiled "
                     "SGEMM on a GPU, with the registers each kernel compiles to; writes suite.json/.csv/.md and the "
                     "roofline plot to --out.")
    add_gpu_option(p, f"the GPU (default {roofline.DEFAULT_GPU})", default=roofline.DEFAULT_GPU)
    add_output(p, "--out", folder=True, default="demo-output", help="output directory (default demo-output)")
    p.add_argument("--wide", action="store_true",
                   help="print every column (arithmetic intensities, TFLOP/s, DRAM GB/s, threads per block); "
                        "the default table fits 100 columns")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=_cmd_demo)


PARSERS = {
    "demo": _demo_parser,
    "gpu": _gpu_parser,
    "gpus": _gpus_parser,
    "memory-spaces": _memory_spaces_parser,
    "plot": _plot_parser,
    "roofline": _roofline_parser,
}
