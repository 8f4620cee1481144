"""The ``gpuroof profile`` subcommand: run a program under Nsight Compute as gpuroof reads it."""

from __future__ import annotations

import argparse

import roofline
import validate

from ._args import FIGURE_FORMATS, add_gpu_option, add_output, gpu, print_json

__all__ = ["PARSERS"]


def _profile_parser(p: argparse.ArgumentParser) -> None:
    """``gpuroof profile``'s options."""
    p.description = (
        "Run CMD under Nsight Compute (ncu) with the sections gpuroof reads "
        f"({', '.join(roofline.NCU_SECTIONS)} and InstructionStats), at the clocks the program runs at "
        "(--clock-control none), keep the report (REPORT.ncu-rep) and its raw-page export in base units "
        "(REPORT.csv), and print `gpuroof ncu`'s table. Exit code 3 when ncu is missing or cannot read "
        "the GPU's counters; 2 when the program fails or runs no kernel."
    )
    p.add_argument("--kernel", default=None, metavar="REGEX", help="profile only kernels whose name matches")
    p.add_argument("--launch-count", type=int, default=None, metavar="N", help="profile at most N launches")
    add_output(p, "-o", "--output", default="gpuroof-profile", metavar="REPORT",
                   help="report name: writes REPORT.ncu-rep and REPORT.csv (default gpuroof-profile)")
    p.add_argument("--binary", default=None, metavar="APP",
                   help="the program's binary or kernels' source for the SASS (default: the report's source page)")
    add_gpu_option(p, "database GPU for the ceilings (default: the profiled device's entry)", default=None)
    add_output(p, "--plot", formats=FIGURE_FORMATS, default=None, metavar="FILE",
               help="write the FLOP roofline beside the instruction roofline (.png, .svg or .pdf)")
    p.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("cmd", nargs=argparse.REMAINDER, metavar="-- CMD ARGS...", help="the program to profile")
    p.set_defaults(func=_handle)


def _handle(args: argparse.Namespace) -> int:
    command = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
    if not command:
        raise ValueError("no program to profile: give it after --, e.g. gpuroof profile -- ./app 1024")
    run = validate.profile_program(command, output=args.output, kernel=args.kernel, launch_count=args.launch_count,
                                   binary=args.binary, gpu=gpu(args.gpu) if args.gpu else None)
    if args.plot:
        roofline.chart.plot_roofline(roofline.chart.profile_chart(run.report), path=args.plot,
                               instructions=roofline.instructions.instruction_roofline(run.report))
    if args.json:
        print_json({"report_path": run.report_path, "csv_path": run.csv_path, "command": list(run.command),
                    **run.report.model_dump(mode="json", exclude={"kernels": {"__all__": {"cliffs"}}})})
        return 0
    print(roofline.format_profile_report(run.report, markdown=args.markdown))
    print(f"\nwrote {run.report_path} and {run.csv_path}" + (f" and {args.plot}" if args.plot else ""))
    return 0


PARSERS = {"profile": _profile_parser}
