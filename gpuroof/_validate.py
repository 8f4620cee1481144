"""The ``gpuroof validate``, ``gpuroof merge-reports`` and ``gpuroof families`` subcommands."""

from __future__ import annotations

import argparse
import json
import sys

import roofline
import validate
from roofline import models

from ._args import add_gpu_option, add_output, gpu
from ._progress import progress_bar

__all__ = ["PARSERS"]


def _validate_parser(parser: argparse.ArgumentParser) -> None:
    """``gpuroof validate``'s options."""
    parser.description = (
        "Query the GPU, measure its ceilings, check the occupancy calculator against the "
        "driver, time every kernel of the suite against its roofline prediction, and write "
        "report.json, report.md and roofline.png. Progress goes to stderr. Exit code 3 "
        "when there is no GPU or no cuda-python."
    )
    parser.add_argument("--quick", action="store_true", help="smaller run (about 20 s)")
    parser.add_argument("--kernels", nargs="+", metavar="K",
                        help="only these kernel models (names or labels): " + ", ".join(models.names()))
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--device", type=int, default=None, metavar="N", help="CUDA device index (default 0)")
    where.add_argument("--devices", metavar="all|N,M", type=_devices,
                       help="several GPUs at once, one process each, one merged report (DEVICES: 'all' or indices)")
    add_output(parser, "--out", folder=True, default="gpuroof-validate", metavar="DIR", help="report folder")
    parser.add_argument("--seed", type=int, default=None, help="seed of the random inputs (default: fresh)")
    parser.add_argument("--families", nargs="+", metavar="F", type=_family,
                        help="only these kernel families, or 'none' (default all): " + ", ".join(validate.FAMILIES))
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.set_defaults(func=_handle)


def _merge_reports_parser(merge: argparse.ArgumentParser) -> None:
    """``gpuroof merge-reports``'s options."""
    merge.description = ("Read report.json files (or folders holding one) written by gpuroof validate and write "
                         "one report.json and report.md holding every device, with the spread between devices of "
                         "one model.")
    merge.add_argument("reports", nargs="+", metavar="REPORT", help="report.json files or their folders")
    add_output(merge, "--out", folder=True, required=True, metavar="DIR", help="folder of the merged report")
    merge.add_argument("--json", action="store_true", help="print the merged report (report.json's content) as JSON")
    merge.set_defaults(func=_merge)


def _families_parser(families: argparse.ArgumentParser) -> None:
    """``gpuroof families``'s options."""
    families.description = (
        "Read the kernel families a `gpuroof validate` run measured (its report.json or folder, a "
        "families.json, or a records file such as tests/data/families_h200.json), predict every launch again "
        "with today's roofline.predict and plain roofline, and print the median and worst error per family. "
        "No GPU needed: this is how a changed model is checked against measurements."
    )
    families.add_argument("source", metavar="REPORT",
                          help="report.json (or its folder), families.json or a records file")
    add_gpu_option(families, "GPU to predict for (default: the one the report names)")
    families.add_argument("--calibration", metavar="FILE",
                          help="calibration JSON (gpuroof calibrate or validate; default: the packaged calibration)")
    add_output(families, "--out", folder=True, metavar="DIR",
               help="write families.json, families.md and families.png here")
    families.add_argument("--json", action="store_true", help="print the family report as JSON")
    families.set_defaults(func=_families)


def _devices(text: str) -> str | list[int]:
    if text == "all":
        return "all"
    try:
        return [int(part) for part in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"--devices {text!r} must be 'all' or indices such as 0,1") from None


def _family(text: str) -> str:
    if text != "none" and text not in validate.FAMILIES:
        raise argparse.ArgumentTypeError(f"--families {text!r} is not a family; known: none, "
                                         f"{', '.join(validate.FAMILIES)}")
    return text


def _chosen_families(names: list[str] | None) -> list[str] | None:
    if names is None:
        return None
    return [] if "none" in names else names


def _families(args: argparse.Namespace) -> int:
    calibration = roofline.load_calibration(args.calibration) if args.calibration else None
    with progress_bar(args) as bar:
        report = validate.family_report(args.source, None if args.gpu is None else gpu(args.gpu),
                                        calibration=calibration, progress=bar)
    if args.json:
        print(json.dumps(json.loads(report.model_dump_json()), indent=2))
    else:
        print(f"{report.device or report.gpu}: {report.overall.launches} launches predicted for the {report.gpu} "
              f"({report.calibration_source})")
        print(f"  {'family':<26} {'launches':>8} {'predict median':>15} {'worst':>7} {'roofline median':>16}")
        for s in (*report.families, report.overall):
            def pct(value: float | None) -> str:
                return "-" if value is None else f"{value:.0f}%"

            print(f"  {s.family:<26} {s.launches:>8} {pct(s.predict_median_abs_percent):>15} "
                  f"{pct(s.predict_worst_abs_percent):>7} {pct(s.roofline_median_abs_percent):>16}")
    if args.out is not None:
        for path in validate.write_family_report(report, args.out).values():
            print(f"  wrote {path}", file=sys.stderr if args.json else sys.stdout)
    return 0


def _merge(args: argparse.Namespace) -> int:
    merged = validate.merge_reports(args.reports, args.out)
    if args.json:  # as `validate --devices --json` prints the ReportSet it merged
        print(merged.model_dump_json(indent=2))
        return 0
    print(f"merged {len(merged.reports)} device reports into {args.out}")
    return 0


def _handle(args: argparse.Namespace) -> int:
    if args.devices is not None:
        with progress_bar(args, lines=True) as bar:
            merged = validate.run_validation_devices(args.devices, out=args.out, quick=args.quick,
                                                     kernels=args.kernels, seed=args.seed,
                                                     families=_chosen_families(args.families), progress=bar)
        if args.json:
            print(merged.model_dump_json(indent=2))
            return 0
        for report in merged.reports:
            print(f"{report.device.name} (device {report.device.index}): validated in {report.runtime_seconds:.1f} s")
        for name, error in merged.errors.items():
            print(f"  {name}: {error}")
        print(f"  wrote {args.out}/report.json, {args.out}/report.md")
        return 0
    device = 0 if args.device is None else args.device
    with progress_bar(args, lines=True) as bar:
        run = validate.run_validation(out=args.out, quick=args.quick, kernels=args.kernels, device=device,
                                      seed=args.seed, families=_chosen_families(args.families), progress=bar)
    report = run.report
    if args.json:
        print(json.dumps(json.loads(report.model_dump_json()), indent=2))
        return 0
    print(f"{report.device.name}: validated in {report.runtime_seconds:.1f} s")
    for item in report.ceilings.items:
        flops = item.unit == "flops_per_second"
        value = item.measured / (1e12 if flops else 1e9)
        unit = "TFLOP/s" if flops else "GB/s"
        fraction = "" if item.fraction_of_datasheet is None else f" ({item.fraction_of_datasheet:.0%} of datasheet)"
        source = "" if item.value_source == "gpuroof kernel" else f"; ceiling from {item.value_source}"
        print(f"  {item.name:<12} {value:10,.1f} {unit}{fraction}{source}")
    oc = report.occupancy_check
    if oc is not None:
        print(f"  occupancy: {oc.launches_checked} launches, {oc.block_size_checks} block-size queries, "
              f"{oc.mismatch_count} mismatches")
    overall = report.summary.overall
    if overall.median_ape_percent is not None:
        print(f"  kernels: {overall.kernels} ok, median error {overall.median_ape_percent:.0f}%, "
              f"worst {overall.worst_ape_percent:.0f}% ({overall.worst_kernel})")
    if report.summary.failed:
        print(f"  failed: {', '.join(report.summary.failed)}")
    if report.families is not None:
        o = report.families.overall
        print(f"  families: {o.launches} launches, roofline.predict median error {o.predict_median_abs_percent or 0:.0f}% "
              f"(worst {o.predict_worst_abs_percent or 0:.0f}%, {o.predict_worst_label}), plain roofline "
              f"{o.roofline_median_abs_percent or 0:.0f}%")
    elif report.families_error:
        print(f"  families: {report.families_error}")
    for path in run.files.values():
        print(f"  wrote {path}")
    return 0


PARSERS = {"families": _families_parser, "merge-reports": _merge_reports_parser, "validate": _validate_parser}
