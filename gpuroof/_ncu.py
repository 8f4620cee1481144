"""The ``gpuroof ncu`` subcommand: an Nsight Compute profile, with what gpuroof adds to it."""

from __future__ import annotations

import argparse

import roofline
from occupancy.common import ProgressStep

from ._args import FIGURE_FORMATS, add_gpu_option, add_output, gpu, print_json
from ._progress import progress_bar

__all__ = ["PARSERS"]


def _ncu_parser(p: argparse.ArgumentParser) -> None:
    """``gpuroof ncu``'s options."""
    p.description = (
        "Read a profile exported with `ncu --import PROFILE.ncu-rep --csv --page raw > PROFILE.csv` "
        "(or a .ncu-rep where NVIDIA's ncu_report module imports) and print one line per kernel, "
        "by time share: gpuroof's exact occupancy and whether it equals Nsight's theoretical "
        "occupancy, the limiter, the register cliff and the best block size, the measured roofline "
        "point, and the predicted time of the same launch. Collect the sections "
        f"{', '.join(roofline.NCU_SECTIONS)}."
    )
    p.add_argument("profile", help="raw-page CSV export or .ncu-rep")
    add_gpu_option(p, "database GPU for the ceilings (default: the profiled device's entry)", default=None)
    p.add_argument("--kernel", default=None, metavar="REGEX", help="only kernels whose name or NVTX range matches")
    p.add_argument("--binary", default=None, metavar="APP",
                   help="the profiled program, library, cubin or the kernels' source: each kernel's SASS is read "
                        "from it (default: the .ncu-rep's source page, where ncu runs)")
    add_output(p, "--plot", formats=FIGURE_FORMATS, default=None, metavar="FILE",
               help="write the FLOP roofline beside the instruction roofline (.png, .svg or .pdf)")
    p.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=_handle)


def _handle(args: argparse.Namespace) -> int:
    with progress_bar(args) as bar:
        bar(ProgressStep(f"reading {args.profile}", 0, 2 if args.plot else 1))
        report = roofline.profile_report(args.profile, gpu=gpu(args.gpu) if args.gpu else None, kernel=args.kernel,
                                         binary=args.binary)
        if args.plot:
            bar(ProgressStep(f"drawing {args.plot}", 1, 2))
            roofline.chart.plot_roofline(roofline.chart.profile_chart(report), path=args.plot,
                                   instructions=roofline.instructions.instruction_roofline(report))
    if args.json:
        print_json(report.model_dump(mode="json", exclude={"kernels": {"__all__": {"cliffs"}}}))
        return 0
    print(roofline.format_profile_report(report, markdown=args.markdown))
    if args.plot:
        print(f"wrote {args.plot}")
    return 0


PARSERS = {"ncu": _ncu_parser}
