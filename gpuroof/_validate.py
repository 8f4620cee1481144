"""The ``gpuroof validate`` subcommand."""

from __future__ import annotations

import argparse
import json

import validate

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``validate`` to the `gpuroof` parser."""
    parser = subparsers.add_parser(
        "validate",
        help="measure this GPU and compare the models with it (needs cuda-python)",
        description=(
            "Query the GPU, measure its ceilings, check the occupancy calculator against the "
            "driver, time every kernel of the suite against its roofline prediction, and write "
            "report.json, report.md and roofline.png. Progress goes to stderr. Exit code 3 "
            "when there is no GPU or no cuda-python."
        ),
    )
    parser.add_argument("--quick", action="store_true", help="smaller run (about 20 s)")
    parser.add_argument("--kernels", nargs="+", metavar="K", help="only these kernel models (names or labels)")
    parser.add_argument("--device", type=int, default=0, metavar="N", help="CUDA device index (default 0)")
    parser.add_argument("--out", default="gpuroof-validate", metavar="DIR", help="report folder")
    parser.add_argument("--seed", type=int, default=None, help="seed of the random inputs (default: fresh)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.set_defaults(func=_handle)


def _handle(args: argparse.Namespace) -> int:
    run = validate.run_validation(out=args.out, quick=args.quick, kernels=args.kernels, device=args.device, seed=args.seed)
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
        print(f"  {item.name:<12} {value:10,.1f} {unit}{fraction}")
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
    for path in run.files.values():
        print(f"  wrote {path}")
    return 0
