"""The `gpuroof` console command: argument parsing, one library call, printing.

Each subcommand module of this package registers its own subcommands; this module
assembles them and owns the error policy:
bad input prints one line on stderr and exits 2, a missing GPU or cuda-python exits 3.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Sequence

EXIT_OK = 0
EXIT_BAD_INPUT = 2
EXIT_NO_DEVICE = 3


# What argparse takes for a negative number rather than an option: with exponents and
# infinities too, so that `--flops -1e9` is refused for its value, not read as a flag.
_NEGATIVE_NUMBER = re.compile(r"^-(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$|^-(inf|infinity|nan)$", re.IGNORECASE)


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line on stderr (then exit 2), like every other error."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._negative_number_matcher = _NEGATIVE_NUMBER

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {one_line(message)} (see {self.prog} --help)\n")


def one_line(message: object) -> str:
    """An error as one line: pydantic's multi-line report as ``field=value: reason``, a compiler's
    log (``CompileError.log``) cut to its first error, any other message with its lines joined."""
    from pydantic import ValidationError

    if isinstance(message, ValidationError):
        err = message.errors()[0]
        where = ".".join(str(p) for p in err.get("loc", ()))
        value = err.get("input")
        shown = "" if isinstance(value, dict) or not where else "=" + " ".join(repr(value).split())[:80]
        reason = str(err.get("msg", "invalid")).removeprefix("Value error, ")
        more = f" (and {message.error_count() - 1} more)" if message.error_count() > 1 else ""
        return f"{message.title}: {where}{shown}: {reason}{more}" if where else f"{message.title}: {reason}{more}"
    log = getattr(message, "log", "")
    if log:
        head = str(message).splitlines()[0] if str(message) else type(message).__name__
        errors = [line.strip() for line in log.splitlines() if "error" in line.lower()]
        return f"{head}: {errors[0]}" if errors else head
    return "; ".join(line.strip() for line in str(message).splitlines() if line.strip()) or type(message).__name__


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
        print(f"gpuroof: {one_line(exc)}", file=sys.stderr)
        return EXIT_NO_DEVICE
    except BrokenPipeError:
        # the reader went away (`gpuroof ... | head`): not an error; silence the final flush
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    except (ValueError, TypeError, OSError) as exc:
        print(f"gpuroof: error: {one_line(exc)}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("gpuroof: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
