"""The ``gpuroof ncu`` subcommand: an Nsight Compute profile, with what gpuroof adds to it."""

from __future__ import annotations

import argparse

import roofline

from ._args import FIGURE_FORMATS, add_gpu_option, add_output, gpu, print_json

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
    add_output(p, "--plot", formats=FIGURE_FORMATS, default=None, metavar="FILE",
               help="write the roofline (.png, .svg or .pdf)")
    p.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=_handle)


def _handle(args: argparse.Namespace) -> int:
    report = roofline.profile_report(args.profile, gpu=gpu(args.gpu) if args.gpu else None, kernel=args.kernel)
    if args.plot:
        roofline.plot_roofline(roofline.profile_chart(report), path=args.plot)
    if args.json:
        print_json(report.model_dump(mode="json", exclude={"kernels": {"__all__": {"cliffs"}}}))
        return 0
    print(roofline.format_profile_report(report, markdown=args.markdown))
    if args.plot:
        print(f"wrote {args.plot}")
    return 0


PARSERS = {"ncu": _ncu_parser}
