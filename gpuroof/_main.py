"""The `gpuroof` console command: argument parsing, one library call, printing.

Each subcommand module of this package registers its own subcommands; this module
assembles them and owns the error policy:
bad input prints one line on stderr and exits 2, a missing GPU or cuda-python exits 3.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

EXIT_OK = 0
EXIT_BAD_INPUT = 2
EXIT_NO_DEVICE = 3


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line on stderr (then exit 2), like every other error."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    """Return the `gpuroof` argument parser with every subcommand registered."""
    from . import _calibrate, _measure, _models, _ncu, _occupancy, _predict, _resources, _roofline, _validate

    parser = _Parser(
        prog="gpuroof",
        description="Roofline and occupancy for CUDA kernels, checked against a real GPU.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    subparsers.required = True
    for module in (_occupancy, _resources, _roofline, _models, _predict, _ncu, _measure, _validate, _calibrate):
        module.register(subparsers)
    return parser




def _one_line(exc: BaseException) -> str:
    """The error as one line: a compiler's log (``CompileError.log``) is cut to its first error."""
    head = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    log = getattr(exc, "log", "")
    if log:
        errors = [line.strip() for line in log.splitlines() if "error" in line.lower()]
        if errors:
            head = f"{head}: {errors[0]}"
    return head


def main(argv: Sequence[str] | None = None) -> int:
    """Run the `gpuroof` command; return its exit code."""
    from validate import DeviceError

    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse already printed its one-line usage error
        return int(exc.code or 0) if exc.code in (0, None) else EXIT_BAD_INPUT
    try:
        return int(args.func(args) or EXIT_OK)
    except DeviceError as exc:
        print(f"gpuroof: {exc}", file=sys.stderr)
        return EXIT_NO_DEVICE
    except BrokenPipeError:
        # the reader went away (`gpuroof ... | head`): not an error; silence the final flush
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    except (ValueError, TypeError, OSError) as exc:
        print(f"gpuroof: error: {_one_line(exc)}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("gpuroof: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
