"""Subcommands ``predict`` and ``cliffs``: occupancy-aware time predictions from the CLI."""

from __future__ import annotations

import argparse
import json
from typing import Any

import roofline
from roofline import models

from ._args import params

__all__ = ["register"]


def _setup(args: argparse.Namespace) -> tuple[Any, Any, Any, Any]:
    if not args.model:
        raise roofline.RooflineError(f"--model is required; known models: {', '.join(models.names())}")
    kernel = models.get(args.model, **params(args.param))
    update: dict[str, Any] = {}
    if args.block is not None:
        update["block"] = (args.block, 1, 1)
    if args.grid is not None:
        update["grid"] = (args.grid, 1, 1)
    for option, field in (
        ("registers", "registers_per_thread"),
        ("dynamic_smem", "dynamic_shared_memory"),
        ("elements_per_thread", "elements_per_thread"),
    ):
        if getattr(args, option) is not None:
            update[field] = getattr(args, option)
    launch_type = type(kernel.launch)
    launch = launch_type.model_validate({**kernel.launch.model_dump(), **update})
    if args.block is not None and args.grid is None:
        # A new block size keeps the model's thread count: the grid follows the (checked) block.
        grid = (-(-kernel.launch.threads // launch.threads_per_block), 1, 1)
        launch = launch_type.model_validate({**launch.model_dump(), "grid": grid})
    calibration = roofline.load_calibration(args.calibration) if args.calibration else None
    return roofline.gpu(args.gpu), kernel, launch, calibration


def _cmd_predict(args: argparse.Namespace) -> int:
    gpu, kernel, launch, calibration = _setup(args)
    p = roofline.predict(gpu, kernel, launch, calibration=calibration,
                         loads_in_flight_per_thread=args.loads_in_flight)
    if args.json:
        print(json.dumps({"gpu": gpu.name, "kernel": kernel.name, "launch": launch.model_dump(mode="json"),
                          **p.model_dump(mode="json")}, indent=2))
        return 0
    print(f"{kernel.name} on {gpu.name}: grid {launch.grid[0]} x block {launch.threads_per_block}, "
          f"{p.active_blocks_per_sm} blocks ({p.active_warps_per_sm} warps) per SM, {p.waves:.2f} waves")
    print(f"  predicted time        {p.seconds * 1e6:10.2f} us   (roofline bound {p.roofline_seconds * 1e6:.2f} us)")
    print(f"  achieved DRAM         {p.achieved_bytes_per_second / 1e9:10.1f} GB/s")
    print(f"  achieved              {p.achieved_flops_per_second / 1e12:10.3f} TFLOP/s")
    print(f"  limiter               {p.limiter}")
    print(f"  bytes in flight       {p.bytes_in_flight / 1024:10.1f} KiB")
    print(f"  measured parameters   {', '.join(p.calibration.measured) or 'none'}")
    print(f"  defaulted parameters  {', '.join(p.calibration.defaulted) or 'none'}")
    for note in p.assumptions:
        print(f"  assumed: {note}")
    return 0


def _cmd_cliffs(args: argparse.Namespace) -> int:
    gpu, kernel, launch, calibration = _setup(args)
    result = roofline.time_cliffs(gpu, kernel, launch, calibration=calibration)
    if args.json:
        print(json.dumps(result.model_dump(mode="json"), indent=2))
        return 0
    c = result.current
    print(f"{kernel.name} on {gpu.name}: now {c.seconds * 1e6:.2f} us with {c.active_blocks_per_sm} blocks/SM "
          f"({c.limiter})")
    print(f"  {'resource':<18} {'at value':>10} {'blocks/SM':>10} {'time (us)':>11} {'x now':>7}  limiter")
    for row in result.cliffs:
        print(f"  {row.resource:<18} {row.value:>10} {row.active_blocks_per_sm:>10} "
              f"{row.predicted_seconds * 1e6:>11.2f} {row.relative_time:>7.3f}  {row.limiter}")
    return 0


def _add_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--gpu", default=roofline.DEFAULT_GPU, help=f"GPU name (default {roofline.DEFAULT_GPU})")
    p.add_argument("--model", help="a roofline.models kernel (copy, vector_add, matmul_tiled, ...)")
    p.add_argument("--param", action="append", metavar="KEY=VALUE", help="model parameter, repeatable")
    p.add_argument("--block", type=int, help="threads per block (1-D); the grid keeps the thread count")
    p.add_argument("--grid", type=int, help="blocks in the grid (1-D)")
    p.add_argument("--registers", type=int, help="registers per thread (default: the model's, else 32)")
    p.add_argument("--dynamic-smem", type=int, help="dynamic shared memory per block, bytes")
    p.add_argument("--elements-per-thread", type=int, help="elements each thread handles")
    p.add_argument("--calibration", help="calibration JSON written by `gpuroof calibrate`")
    p.add_argument("--json", action="store_true", help="print JSON")


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``predict`` and ``cliffs`` to the `gpuroof` parser."""
    p = subparsers.add_parser("predict", help="predict a kernel's time from occupancy and Little's law")
    _add_options(p)
    p.add_argument("--loads-in-flight", type=int, default=None,
                   help="independent loads each thread keeps outstanding (default: elements per thread)")
    p.set_defaults(func=_cmd_predict)
    p = subparsers.add_parser("cliffs", help="predicted time at every occupancy cliff of a kernel's launch")
    _add_options(p)
    p.set_defaults(func=_cmd_cliffs)
