"""The ``gpuroof corpus`` subcommand: the measured corpus of other projects' kernels against the model.

The corpus (its measurements, access descriptions and report) lives in the repository's
``corpus/`` folder, not in the installed package: the subcommand loads it from the checkout
this gpuroof runs from, or from the folder ``--corpus`` names.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import roofline
from occupancy.common import write_atomic

from ._args import FIGURE_FORMATS, add_output, print_json

__all__ = ["PARSERS", "corpus_package"]

#: The corpus folder of the checkout this gpuroof runs from; an installed wheel has none.
CHECKOUT_CORPUS = Path(__file__).resolve().parents[1] / "corpus"


def corpus_package(folder: str | None = None) -> ModuleType:
    """The repository's corpus package, loaded from ``folder`` (default: this checkout's ``corpus/``).

    Raises
    ------
    roofline.RooflineError
        No corpus there (an installed gpuroof, or a folder that is not a checkout's
        ``corpus/``), or another corpus package already loaded in this process.
    """
    root = Path(folder) if folder is not None else CHECKOUT_CORPUS
    init = root / "__init__.py"
    if not init.is_file():
        if folder is not None:
            raise roofline.RooflineError(f"--corpus {folder!r} is not a corpus folder (it has no __init__.py): "
                                         "give the corpus/ folder of a gpuroof repository checkout")
        raise roofline.RooflineError("the corpus lives in the gpuroof repository checkout (its corpus/ folder), "
                                     "not in the installed package: run gpuroof corpus from a checkout, or give "
                                     "--corpus DIR")
    loaded = sys.modules.get("corpus")
    if loaded is not None:
        if Path(loaded.__file__ or "").resolve() == init.resolve():
            return loaded
        raise roofline.RooflineError(f"--corpus {str(root)!r}: another corpus package is loaded already, from "
                                     f"{Path(loaded.__file__ or '').parent}")
    spec = importlib.util.spec_from_file_location("corpus", init, submodule_search_locations=[str(root)])
    module = importlib.util.module_from_spec(spec)
    sys.modules["corpus"] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules["corpus"]
        raise
    return module


def _corpus_parser(p: argparse.ArgumentParser) -> None:
    """``gpuroof corpus``'s options."""
    p.description = (
        "Predict every launch of the measured corpus (kernels of other projects, timed with CUDA events "
        "and profiled with Nsight Compute on a GPU) from its profile, as `gpuroof ncu` does, and print per "
        "project and kernel the measured and predicted durations, the error, the limiter and the plain "
        "roofline's error, with the summary: median |error|, the share within 25 %, the worst launch, the "
        "per-project medians and the leave-one-project-out split. With --from-source, each launch is "
        "predicted as from its source alone: its buffer bytes as the DRAM bytes, its flops and its SASS, "
        "none of the profile's counts. The projects fall in two splits (docs/corpus.md): dev, the five "
        "projects the model was built against, and exam, every project added after them; the summary "
        "shows each split, --split (or --exam) reports one. The corpus lives in the repository checkout (corpus/), not in the "
        "installed package. Example: gpuroof corpus --gpu h200 --from-source"
    )
    p.add_argument("--gpu", dest="corpus_gpu", metavar="GPU", default=None,
                   help="the measured GPU (a folder of the corpus: h200, h100-sxm); default: the only one measured")
    p.add_argument("--project", default=None, help="only this project")
    p.add_argument("--split", choices=("dev", "exam", "all"), default="all",
                   help="only the dev projects, only the exam projects (added after the dev ones), or all (default)")
    p.add_argument("--exam", dest="split", action="store_const", const="exam",
                   help="only the exam projects: the same as --split exam")
    p.add_argument("--corpus", dest="corpus_folder", default=None, metavar="DIR",
                   help="the corpus/ folder of a gpuroof checkout (default: the checkout this gpuroof runs from)")
    p.add_argument("--data", default=None, metavar="DIR",
                   help="measurements' root holding DIR/<gpu>/<project>.json (default: the corpus's measurements/)")
    add_output(p, "--out", default=None, metavar="FILE", help="write the Markdown report to FILE")
    add_output(p, "--plot", formats=FIGURE_FORMATS, default=None, metavar="FILE",
               help="write predicted against measured (.png, .svg, .pdf)")
    p.add_argument("--from-source", action="store_true",
                   help="predict from the buffer bytes, flops and SASS alone (no profile counts)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=_handle)


def _handle(args: argparse.Namespace) -> int:
    corpus = corpus_package(args.corpus_folder)
    gpu = args.corpus_gpu
    if gpu is None:
        measured = corpus.corpus_gpus(args.data)
        if len(measured) != 1:
            where = args.data or "the corpus"
            raise roofline.RooflineError(f"--gpu is needed: {where} holds measurements of "
                                         f"{', '.join(measured) or 'no GPU'}")
        gpu = measured[0]
    projects = corpus.load_corpus(gpu, project=args.project, directory=args.data)
    projects = corpus.projects_of_split(projects, args.split, gpu=gpu)
    report = corpus.corpus_report(projects, gpu=gpu, from_source=args.from_source)
    if args.plot:
        corpus.plot_corpus(report, args.plot)
    text = corpus.format_corpus_report(report, sources=projects)
    if args.out:
        write_atomic(args.out, text, roofline.RooflineError, "--out")
    if args.json:
        print_json(report.model_dump(mode="json"))
        return 0
    print(text if not args.out else f"wrote {args.out}" + (f" and {args.plot}" if args.plot else ""))
    return 0


PARSERS = {"corpus": _corpus_parser}
