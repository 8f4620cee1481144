"""The ``gpuroof corpus`` subcommand: the measured corpus of other projects' kernels against the model."""

from __future__ import annotations

import argparse

import roofline
from occupancy.common import write_atomic

from ._args import FIGURE_FORMATS, add_output, print_json

__all__ = ["PARSERS"]


def _corpus_parser(p: argparse.ArgumentParser) -> None:
    """``gpuroof corpus``'s options."""
    p.description = (
        "Predict every launch of the measured corpus (kernels of other projects, timed with CUDA events "
        "and profiled with Nsight Compute on a GPU) from its profile, as `gpuroof ncu` does, and print per "
        "project and kernel the measured and predicted durations, the error, the limiter and the plain "
        "roofline's error, with the summary: median |error|, the share within 25 %, the worst launch, the "
        "per-project medians and the leave-one-project-out split. With --from-source, each launch is "
        "predicted as from its source alone: its buffer bytes as the DRAM bytes, its flops and its SASS, "
        "none of the profile's counts. Example: gpuroof corpus --gpu h200 --from-source"
    )
    p.add_argument("--gpu", dest="corpus_gpu", metavar="GPU", default=None,
                   help="the measured GPU (a folder of the corpus: h200, h100-sxm); default: the only one measured")
    p.add_argument("--project", default=None, help="only this project")
    p.add_argument("--data", default=None, metavar="DIR",
                   help="corpus root holding DIR/<gpu>/<project>.json (default: the packaged measurements)")
    add_output(p, "--out", default=None, metavar="FILE", help="write the Markdown report to FILE")
    add_output(p, "--plot", formats=FIGURE_FORMATS, default=None, metavar="FILE",
               help="write predicted against measured (.png, .svg, .pdf)")
    p.add_argument("--from-source", action="store_true",
                   help="predict from the buffer bytes, flops and SASS alone (no profile counts)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=_handle)


def _handle(args: argparse.Namespace) -> int:
    gpu = args.corpus_gpu
    if gpu is None:
        measured = roofline.corpus_gpus(args.data)
        if len(measured) != 1:
            where = args.data or "the packaged corpus"
            raise roofline.RooflineError(f"--gpu is needed: {where} holds measurements of "
                                         f"{', '.join(measured) or 'no GPU'}")
        gpu = measured[0]
    projects = roofline.load_corpus(gpu, project=args.project, directory=args.data)
    report = roofline.corpus_report(projects, gpu=gpu, from_source=args.from_source)
    if args.plot:
        roofline.plot_corpus(report, args.plot)
    text = roofline.format_corpus_report(report, sources=projects)
    if args.out:
        write_atomic(args.out, text, roofline.RooflineError, "--out")
    if args.json:
        print_json(report.model_dump(mode="json"))
        return 0
    print(text if not args.out else f"wrote {args.out}" + (f" and {args.plot}" if args.plot else ""))
    return 0


PARSERS = {"corpus": _corpus_parser}
