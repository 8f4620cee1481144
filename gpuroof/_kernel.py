"""The kernel of ``roofline``, ``plot``, ``predict`` and ``cliffs``: a built-in model, or your own.

Your own kernel is its counts (``--flops``, ``--dram-bytes``, ``--l2-bytes``, ``--l1-bytes``,
``--load-bytes``, ``--store-bytes``)
and its launch (``--grid``, ``--block``), with the compiled kernel's resources read from its
file (``--source/--cubin FILE --kernel NAME``) or given loose (``--registers``, ``--smem``).
`describe` is the one place that turns these options into the libraries' kernel and launch.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

import occupancy
import roofline
from roofline import models

from ._args import add_gpu_option, add_kernel_file_options, dims, gpu, kernel_resources, params

__all__ = ["UserKernel", "add_count_options", "add_kernel_options", "counts_given", "describe"]

# Options that give a kernel's counts, as (attribute, flag): they and --model exclude each other.
_COUNTS = (("flops", "--flops"), ("dram_bytes", "--dram-bytes"), ("l2_bytes", "--l2-bytes"),
           ("l1_bytes", "--l1-bytes"), ("load_bytes", "--load-bytes"), ("store_bytes", "--store-bytes"))


# roofline.Kernel's other numbers a user's kernel may give (`--count NAME=VALUE`): each term
# of the time model that reads one (atomics, barriers, load phases, divergence) is otherwise
# out of the command line's reach; those with an option of their own are left to it.
_NOT_COUNTS = frozenset({"name", "precision", "flops_by_precision", "launch", "traffic", "parameters", "formula"})
_MORE_COUNTS = tuple(name for name in roofline.Kernel.model_fields
                     if name not in _NOT_COUNTS | {attr for attr, _ in _COUNTS})


def _more_counts(pairs: list[str] | None) -> dict[str, int | float]:
    """``["atomics=1024"]`` -> ``{"atomics": 1024}``, each name one of `_MORE_COUNTS`."""
    given = params(pairs, option="--count", form="NAME=VALUE", example="atomics=1024")
    for key, value in given.items():
        own = dict(_COUNTS).get(key)
        if own is not None:
            raise roofline.RooflineError(f"--count {key}: give it as {own}")
        if key not in _MORE_COUNTS:
            raise roofline.RooflineError(f"--count {key}: not a count of roofline.Kernel; one of "
                                         + ", ".join(_MORE_COUNTS))
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise roofline.RooflineError(f"--count {key}={value!r} is not a number")
    return given  # type: ignore[return-value]


@dataclass(frozen=True)
class UserKernel:
    """What the options describe: the GPU, the kernel (with its launch for a prediction) and
    the resources read from its file (None without one)."""

    gpu: roofline.GPU
    kernel: roofline.Kernel
    resources: occupancy.KernelResources | None
    what_if: tuple[str, ...] = ()

    def resources_line(self, path: str) -> str:
        """The kernel file's resources as printed, with what ``--registers`` / ``--smem`` changed."""
        changed = f" ({'; '.join(self.what_if)})" if self.what_if else ""
        return f"{self.resources}, from {path}{changed}"


def add_count_options(p: argparse.ArgumentParser, title: str) -> argparse._ArgumentGroup:
    """Your kernel's counts as flags (``--flops`` ... ``--store-bytes``, ``--count NAME=VALUE``), in a
    group `title` of `p`, which is returned: one set for ``predict``, ``roofline``, ``plot``,
    ``cliffs`` and ``measure`` (`counts_given` reads them)."""
    c = p.add_argument_group(title)
    c.add_argument("--flops", type=float, default=None, help="floating-point operations (an FMA counts 2)")
    c.add_argument("--dram-bytes", "--bytes", dest="dram_bytes", type=float, default=None,
                   help="bytes moved to and from DRAM")
    c.add_argument("--l2-bytes", type=float, default=None, help="bytes moved between the SMs and L2 (optional)")
    c.add_argument("--l1-bytes", type=float, default=None, help="bytes through L1/shared memory (optional)")
    c.add_argument("--load-bytes", type=float, default=None,
                   help="global bytes the threads load, every load counted (optional; with the kernel file's "
                        "SASS it says how often a loop of loads runs)")
    c.add_argument("--store-bytes", type=float, default=None,
                   help="global bytes the threads store, every store counted (optional)")
    c.add_argument("--count", action="append", metavar="NAME=VALUE",
                   help="any other count of roofline.Kernel, repeatable: " + ", ".join(_MORE_COUNTS)
                        + " (e.g. --count atomics=1024 --count cas_contenders=1024)")
    return c


def counts_given(args: argparse.Namespace) -> dict[str, int | float]:
    """The `roofline.Kernel` counts `add_count_options`' flags gave (those left out are not known).

    Raises
    ------
    RooflineError
        For a ``--count`` that is not a count of `roofline.Kernel` or has its own flag.
    """
    counts = {attr: getattr(args, attr) for attr, _ in _COUNTS}
    return {**{k: v for k, v in counts.items() if v is not None}, **_more_counts(args.count)}


def add_kernel_options(p: argparse.ArgumentParser, *, launch: bool, what: str) -> None:
    """The GPU, ``--model``/``--param``, loose counts, the kernel file and (with `launch`) the launch."""
    add_gpu_option(p, f"the GPU (default {roofline.DEFAULT_GPU})", default=roofline.DEFAULT_GPU)
    m = p.add_argument_group("a built-in kernel model (`gpuroof models` lists them)")
    m.add_argument("--model", default=None, metavar="NAME", help="one of " + ", ".join(models.names()))
    m.add_argument("--param", action="append", metavar="KEY=VALUE",
                   help="model parameter, repeatable (e.g. --param n=1048576 --param block=16,16)")
    c = add_count_options(p, "or your own kernel's counts (instead of --model)")
    c.add_argument("--name", default=None, help="the kernel's name in the output (default: --kernel's, else 'kernel')")
    p.add_argument("--precision", default=None, metavar="P",
                   help="precision of the flops: " + ", ".join(roofline.PRECISIONS) + " (default: the model's, else fp32)")
    if launch:
        g = p.add_argument_group("the launch (your kernel needs --grid and --block; a model has its own)")
        g.add_argument("--grid", type=dims, default=None, metavar="N[,N,N]", help="blocks in the grid")
        g.add_argument("--block", type=dims, default=None, metavar="N[,N,N]",
                       help="threads per block (for a model without --grid, the grid keeps its thread count)")
        g.add_argument("--registers", type=int, default=None,
                       help="registers per thread (default: the kernel file's, else 32, said as an assumption); "
                            "with a kernel file, a what-if: the file's code at this register count")
        g.add_argument("--smem", type=int, default=None, metavar="B",
                       help="static shared memory per block, bytes (default: the kernel file's or model's, else 0); "
                            "with a kernel file, a what-if as --registers")
        g.add_argument("--dynamic-smem", type=int, default=None, metavar="B", help="dynamic shared memory per block, bytes")
        g.add_argument("--max-dynamic-smem", type=int, default=None, metavar="B",
                       help="the kernel's max dynamic shared memory attribute, bytes (default 48 KiB minus static)")
        g.add_argument("--elements-per-thread", type=int, default=None, metavar="N",
                       help="elements each thread handles, one global load each (default 1, or the "
                            "model's): a loop's trips when --load-bytes is not given")
    add_kernel_file_options(p, what=what)


def _counts_given(args: argparse.Namespace) -> list[str]:
    return [flag for attr, flag in _COUNTS if getattr(args, attr) is not None] + (["--count"] if args.count else [])


def _check_choice(args: argparse.Namespace) -> None:
    loose = _counts_given(args)
    if args.model and loose:
        raise roofline.RooflineError(
            f"--model {args.model} and {', '.join(loose)} both give the kernel's counts: give the model "
            "(with --param KEY=VALUE) or your kernel's counts, not both"
        )
    if args.param and not args.model:
        raise roofline.RooflineError("--param applies to --model NAME only")
    if not args.model and args.dram_bytes is None:
        raise roofline.RooflineError(
            "give your kernel's --dram-bytes (and --flops, default 0), or a built-in --model NAME "
            "[--param KEY=VALUE ...] (`gpuroof models` lists them)"
        )


def _launch(args: argparse.Namespace, kernel: roofline.Kernel,
            resources: occupancy.KernelResources | None) -> occupancy.Launch:
    """The model's launch, or --grid/--block, with the file's resources and the loose numbers (the
    Launch checks that a loose number agrees with the file)."""
    loose = dict(grid=args.grid, block=args.block, registers_per_thread=args.registers,
                 static_shared_memory=args.smem, dynamic_shared_memory=args.dynamic_smem,
                 max_dynamic_shared_memory=args.max_dynamic_smem, elements_per_thread=args.elements_per_thread,
                 resources=resources)
    given = {k: v for k, v in loose.items() if v is not None}
    if not args.model:
        missing = [flag for flag, value in (("--grid", args.grid), ("--block", args.block)) if value is None]
        if missing:
            raise roofline.RooflineError(
                f"your kernel's launch needs {' and '.join(missing)} (e.g. --grid 4096 --block 256)"
            )
        return occupancy.Launch(**given)
    base = {name: getattr(kernel.launch, name) for name in type(kernel.launch).model_fields}
    if resources is not None:
        # the compiled kernel's own figures replace the model's assumptions
        for name in list(base):
            if getattr(resources, name, None) is not None:
                del base[name]
    launch = occupancy.Launch(**{**base, **given})
    if args.block is not None and args.grid is None:
        # A new block size keeps the model's thread count: the grid follows the (checked) block.
        launch = launch.model_copy(update={"grid": -(-kernel.launch.threads // launch.threads_per_block)})
    return launch


def _file_name(resources: occupancy.KernelResources | None) -> str | None:
    """The kernel file's kernel as people read it: a C++ kernel demangled, not its symbol."""
    return None if resources is None else resources.demangled or resources.kernel


def _what_if(args: argparse.Namespace, resources: occupancy.KernelResources | None
             ) -> tuple[occupancy.KernelResources | None, tuple[str, ...]]:
    """The kernel file's resources with ``--registers`` / ``--smem`` in place of its own, where given,
    and a line for each (a what-if: the same code, its SASS kept, at another register count or
    static shared memory, as `roofline.cliffs.time_cliffs` moves a threshold; ``sources`` says so)."""
    if resources is None:
        return None, ()
    update: dict[str, object] = {}
    sources = dict(resources.sources)
    lines = []
    for flag, field, value in (("--registers", "registers_per_thread", getattr(args, "registers", None)),
                               ("--smem", "static_shared_memory", getattr(args, "smem", None))):
        own = getattr(resources, field)
        if value is not None and value != own:
            update[field] = value
            lines.append(f"what-if {flag} {value}: the file's is {own}")
            sources[field] = f"{flag} {value} (a what-if; the kernel file's: {own})"
    if not update:
        return resources, ()
    return resources.model_copy(update={**update, "sources": sources}), tuple(lines)


def describe(args: argparse.Namespace, *, launch: bool) -> UserKernel:
    """The GPU, kernel and launch the options describe (the one place that builds them).

    Raises
    ------
    RooflineError, OccupancyError
        For a model mixed with loose counts, missing counts or launch, or a loose resource
        that disagrees with the kernel file.
    """
    _check_choice(args)
    target = gpu(args.gpu)
    resources, what_if = _what_if(args, kernel_resources(args, target.architecture))
    if args.model:
        kernel = models.get(args.model, **params(args.param))
    else:
        named = dict(precision=args.precision, name=args.name or args.kernel or _file_name(resources))
        kernel = roofline.Kernel(**counts_given(args), **{k: v for k, v in named.items() if v is not None})
    if launch:
        kernel = kernel.model_copy(update={"launch": _launch(args, kernel, resources)})
    return UserKernel(gpu=target, kernel=kernel, resources=resources, what_if=what_if)
