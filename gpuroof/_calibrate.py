"""The ``gpuroof calibrate`` subcommand: measure the prediction model's parameters on a GPU.

Writes ``calibration.json`` (load it with `roofline.load_calibration` or pass it to
``gpuroof predict --calibration``), ``prediction.json``, ``prediction.md`` and
``bandwidth_occupancy.png`` (measured points against the predicted curve).
"""

from __future__ import annotations

import argparse
import json

import validate

from ._args import add_output
from ._progress import progress_bar

__all__ = ["PARSERS"]


def _handle(args: argparse.Namespace) -> int:
    session = validate.open_session(args.device)
    entry, _ = validate.compare_device(validate.query_device(session))

    with progress_bar(args, lines=True) as bar:
        # the block ramp is the sweep's dispatch interval, measured before it as validate does
        launch = validate.measure_launch_overhead(session, progress=bar)
        check = validate.run_prediction_check(session, entry, progress=bar,
                                              block_dispatch=validate.block_ramp_figure(launch))
    files = validate.write_prediction_report(check, args.out)
    if args.json:
        print(json.dumps(json.loads(check.model_dump_json()), indent=2))
        return 0
    print(f"{check.gpu}: {check.within_tolerance} of {check.points} sweep points within {check.tolerance:.0%} "
          f"(median {check.median_abs_error:.1%}, worst {check.max_abs_error:.1%})")
    for path in files.values():
        print(f"  wrote {path}")
    return 0


def _calibrate_parser(p: argparse.ArgumentParser) -> None:
    """``gpuroof calibrate``'s options."""
    p.description = ("Launch overhead and the block ramp, a pointer chase and a copy sweep over block size, "
                     "resident blocks and elements per thread; fits the prediction model (the block ramp as its "
                     "dispatch interval) and reports predicted against measured "
                     "bandwidth. Exit code 3 when there is no GPU or no cuda-python.")
    p.add_argument("--device", type=int, default=0, metavar="N", help="CUDA device index (default 0)")
    # checked before the GPU run: a folder that cannot be written must not cost the measurements
    add_output(p, "--out", folder=True, default="gpuroof-calibrate", metavar="DIR", help="report folder")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(func=_handle)


PARSERS = {"calibrate": _calibrate_parser}
