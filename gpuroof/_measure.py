"""The ``gpuroof measure`` subcommand: time a user's kernel on the GPU and set it beside the prediction."""

from __future__ import annotations

import argparse
import math

import occupancy
import roofline
import validate

from ._args import add_gpu_option, dims, gpu, print_json
from ._kernel import add_count_options, counts_given
from ._progress import progress_bar

__all__ = ["PARSERS"]

_ARG_HELP = (
    "a kernel argument, in parameter order (repeat): i32=1024 (scalar; i8 i16 i32 i64 u8 u16 u32 u64 f16 f32 "
    "f64), f32[n]=random (input array: random, zeros, ones, a number or a .npy file), f32[n] (output array, "
    "poisoned with NaN); sizes are integer expressions of --size names"
)


def _size(text: str) -> tuple[str, int]:
    name, sep, value = text.partition("=")
    if not sep or not name.isidentifier():
        raise argparse.ArgumentTypeError(f"--size {text!r} must be NAME=INTEGER, e.g. n=1048576")
    try:
        return name, int(eval(value, {"__builtins__": {}}, {}))  # noqa: S307 - digits and operators only
    except Exception:  # noqa: BLE001 - any failure is a bad --size
        raise argparse.ArgumentTypeError(f"--size {text!r}: {value!r} is not an integer expression") from None


def _measure_parser(p: argparse.ArgumentParser) -> None:
    """``gpuroof measure``'s options."""
    p.description = (
        "Compile or load FILE (.cu source, .ptx, .cubin, .fatbin), launch KERNEL with the given grid, "
        "block and arguments, time it with CUDA events (L2 flushed before each launch, or a CUDA graph "
        "of back-to-back launches with --l2 warm) until the spread is small, and print the median with "
        "the SM clock. With --flops and --dram-bytes, also the achieved rates and the predicted time, "
        "which reads the SASS of the code it timed (--load-bytes says how often its loops run). "
        "Exit code 3 when there is no GPU or no cuda-python."
    )
    p.add_argument("file", help="CUDA source, PTX, cubin or fatbin")
    p.add_argument("--kernel", required=True, help="kernel name (extern \"C\" name or C++ name expression)")
    p.add_argument("--grid", required=True, type=dims, help="blocks: N, N,N or N,N,N")
    p.add_argument("--block", required=True, type=dims, help="threads per block: N, N,N or N,N,N")
    p.add_argument("--cluster", type=dims, default=None, help="thread-block cluster dimensions (sm_90+)")
    p.add_argument("--shared", type=int, default=0, metavar="BYTES", help="dynamic shared memory per block")
    p.add_argument("--arg", action="append", default=[], metavar="SPEC", help=_ARG_HELP)
    p.add_argument("--size", action="append", default=[], type=_size, metavar="NAME=N", help="a size name for --arg")
    p.add_argument("-D", dest="defines", action="append", default=[], metavar="NAME[=VALUE]", help="macro for source")
    p.add_argument("--compiler", choices=occupancy.COMPILERS, default="auto",
                   help="what builds a .cu file: auto (nvcc where one is found, so host code and the project's "
                        "headers compile; else NVRTC), nvcc or nvrtc (default auto)")
    add_count_options(p, "the kernel's counts, for the achieved rates and the prediction (--flops and "
                         "--dram-bytes at least; --load-bytes for a kernel with a loop)")
    p.add_argument("--precision", default="fp32",
                   help="precision of the flops: " + ", ".join(roofline.PRECISIONS) + " (default fp32)")
    p.add_argument("--l2", choices=("flush", "warm"), default="flush", help="cold or warm L2 (default flush)")
    p.add_argument("--budget", type=float, default=validate.MeasureOptions().budget_seconds, metavar="SECONDS",
                   help="device time for the timing")
    add_gpu_option(p, "database GPU for the prediction (default: the device's entry)", default=None)
    p.add_argument("--device", type=int, default=0, metavar="N", help="CUDA device index (default 0)")
    p.add_argument("--json", action="store_true", help="print the measurement as JSON")
    p.set_defaults(func=_handle)


def _handle(args: argparse.Namespace) -> int:
    sizes = dict(args.size)
    kernel_args = validate.parse_kernel_args(args.arg, sizes)
    counts = None
    given = counts_given(args)
    if given:
        if args.flops is None or args.dram_bytes is None:
            raise ValueError("give both --flops and --dram-bytes for achieved rates and a prediction")
        counts = roofline.Kernel(name=args.kernel, precision=args.precision, **given)
    launch = occupancy.Launch(grid=args.grid, block=args.block, cluster=args.cluster,
                              dynamic_shared_memory=args.shared)
    options = validate.MeasureOptions(defines=dict(d.partition("=")[::2] for d in args.defines), compiler=args.compiler,
                                      gpu=gpu(args.gpu) if args.gpu else None, l2=args.l2,
                                      budget_seconds=args.budget, device=args.device)
    with progress_bar(args) as bar:
        bar(f"compiling, checking and timing {args.kernel} on the GPU")
        m = validate.measure(args.file, args.kernel, launch=launch, args=kernel_args, options=options, counts=counts)
    if args.json:
        print_json(m.model_dump(mode="json"))
        return 0
    print(_text(m))
    return 0 if m.ok else 1


def _text(m: validate.Measurement) -> str:
    r = m.resources
    lines = [f"{m.kernel} on {m.device} ({m.arch}): grid {m.grid}, block {m.block}"
             + (f", cluster {m.cluster}" if m.cluster else "")
             + f"; {r.registers_per_thread} registers, {r.static_shared_memory} B static + "
             f"{m.dynamic_shared_memory} B dynamic shared memory"]
    if m.occupancy is not None:
        lines.append(f"  occupancy {m.occupancy:.0%} (driver {m.occupancy_driver:.0%})" if m.occupancy_driver
                     is not None else f"  occupancy {m.occupancy:.0%}")
    if m.check is not None:
        lines.append(f"  check: {m.check.message}")
    if m.timing is not None:
        t = m.timing
        lines.append(f"  time {t.median_seconds * 1e6:.2f} us median (min {t.min_seconds * 1e6:.2f}, max "
                     f"{t.max_seconds * 1e6:.2f}, spread {t.spread:.1%}, {t.repetitions} runs)")
        lines.append(f"  timed with {m.method}")
    if m.clocks is not None:
        memory = "" if m.clocks.memory_clock_hz is None else f", memory {m.clocks.memory_clock_hz / 1e6:.0f} MHz"
        lines.append(f"  clocks: SM {m.clocks.sm_clock_hz / 1e6:.0f} MHz (min {m.clocks.sm_clock_min_hz / 1e6:.0f})"
                     f"{memory}, {m.clocks.samples} NVML samples")
    if m.achieved_flops_per_second is not None:
        dram = m.achieved_bytes_per_second.get("dram", math.nan)
        lines.append(f"  achieved {m.achieved_flops_per_second / 1e12:.3g} TFLOP/s, DRAM {dram / 1e9:.0f} GB/s")
    if m.predicted_seconds is not None:
        error = "" if m.prediction_error is None else f", {m.prediction_error:+.0%} vs measured"
        lines.append(f"  predicted {m.predicted_seconds * 1e6:.2f} us ({m.predicted_limiter}){error}; roofline "
                     f"bound {m.roofline_seconds * 1e6:.2f} us")
    lines += [f"  note: {n}" for n in m.notes]
    return "\n".join(lines)




PARSERS = {"measure": _measure_parser}
