"""The `gpuroof` console command: the subcommand table, argument parsing, the error policy.

`COMMANDS` names each subcommand's module and one-line help. Only the chosen subcommand's
module is imported and only its parser is built and registered, so ``gpuroof --help`` imports
none of occupancy, roofline or validate and ``gpuroof occupancy ...`` imports no validate. Each
subcommand module maps its subcommands to the functions that build their parsers
(``PARSERS``); a parser's ``func`` default is the handler that makes the library call.
Bad input prints one line on stderr and exits 2, a missing GPU or cuda-python exits 3.
"""

from __future__ import annotations

import argparse
import importlib
import os
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import NamedTuple

from pydantic import ValidationError

from ._help import HelpFormatter

__all__ = ["COMMANDS", "Command", "build_parser", "main", "one_line"]

EXIT_OK = 0
EXIT_BAD_INPUT = 2
EXIT_NO_DEVICE = 3


class Command(NamedTuple):
    """A subcommand: the `gpuroof` module that builds and runs it, and its line in ``gpuroof --help``."""

    module: str
    help: str


COMMANDS: Mapping[str, Command] = {
    "occupancy": Command("_occupancy", "blocks per SM of a launch, what limits them, and the next cliffs"),
    "archs": Command("_occupancy", "the architectures and their limits"),
    "resources": Command("_resources", "every kernel's registers, shared/local memory, barriers and launch "
                                       "bounds, for many architectures"),
    "block-size": Command("_resources", "the block size with the highest occupancy "
                                        "(cudaOccupancyMaxPotentialBlockSize), offline"),
    "gpus": Command("_roofline", "list the GPU database"),
    "gpu": Command("_roofline", "one GPU: its facts and every derived ceiling"),
    "roofline": Command("_roofline", "bound one kernel on a GPU"),
    "plot": Command("_roofline", "draw a roofline (PNG/SVG/PDF) or export it (JSON/CSV)"),
    "memory-spaces": Command("_roofline", "the CUDA memory spaces and their properties"),
    "demo": Command("_roofline", "the main job: the classic kernel suite on a GPU"),
    "models": Command("_models", "the built-in kernel models (--model): parameters, formulas and an example"),
    "predict": Command("_predict", "predict a kernel's time from occupancy and Little's law"),
    "cliffs": Command("_predict", "predicted time at every occupancy cliff of a kernel's launch"),
    "ncu": Command("_ncu", "read an Nsight Compute profile: occupancy, cliffs, roofline and prediction per kernel"),
    "measure": Command("_measure", "time your own kernel on the GPU and compare it with the prediction "
                                   "(needs cuda-python)"),
    "validate": Command("_validate", "measure this GPU and compare the models with it (needs cuda-python)"),
    "merge-reports": Command("_validate", "merge validation reports (of many GPUs or hosts) into one"),
    "families": Command("_validate", "error by kernel family: predict a validation report's measured families "
                                     "again, on the CPU"),
    "calibrate": Command("_calibrate", "measure latency and the bandwidth-vs-concurrency curve; check "
                                       "predictions (needs a GPU)"),
}

# What argparse takes for a negative number rather than an option: with exponents and
# infinities too, so that `--flops -1e9` is refused for its value, not read as a flag.
_NEGATIVE_NUMBER = re.compile(r"^-(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$|^-(inf|infinity|nan)$", re.IGNORECASE)


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line on stderr (then exit 2), like every other error."""

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)
        self._negative_number_matcher = _NEGATIVE_NUMBER

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {one_line(message)} (see {self.prog} --help)\n")


class _Version(argparse.Action):
    """``--version``: the installed package's version, looked up only when asked for."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS, **kwargs: object) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS,
                         help="print gpuroof's version and exit")

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: object,
                 option_string: str | None = None) -> None:
        from importlib.metadata import version  # stdlib, but only --version needs it

        print(f"gpuroof {version('gpuroof')}")
        parser.exit(EXIT_OK)


def one_line(message: object) -> str:
    """An error as one line: pydantic's multi-line report as ``field=value: reason``, a compiler's
    log (``CompileError.log``) cut to its first error, any other message with its lines joined."""
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
        # nvcc's failures already name their errors in the message: not twice
        return f"{head}: {errors[0]}" if errors and errors[0] not in head else head
    return "; ".join(line.strip() for line in str(message).splitlines() if line.strip()) or type(message).__name__


def _parser_builder(command: str) -> Callable[[argparse.ArgumentParser], None]:
    """The function that adds `command`'s description, options and handler to its parser.

    This import is the laziness the table exists for: a subcommand's module (and the libraries
    it imports) loads only when that subcommand is chosen.
    """
    module = importlib.import_module(f"{__package__}.{COMMANDS[command].module}")
    return module.PARSERS[command]


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """Return the `gpuroof` argument parser.

    Without `command`, every subcommand is listed with its one-line help (enough for ``--help``
    and for refusing an unknown name); with it, that subcommand alone is registered and built in
    full (its module imported), so that parsing a command line costs that subcommand alone.

    Parameters
    ----------
    command
        The subcommand to build, one of `COMMANDS`; None builds none.

    Raises
    ------
    ValueError
        `command` is not a subcommand.
    """
    if command is not None and command not in COMMANDS:
        raise ValueError(f"command={command!r} is not a gpuroof subcommand; known: {', '.join(COMMANDS)}")
    parser = _Parser(
        prog="gpuroof",
        description="Roofline and occupancy for CUDA kernels, checked against a real GPU.",
    )
    parser.add_argument("--version", action=_Version)
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    subparsers.required = True
    if command is None:
        for name, entry in COMMANDS.items():
            subparsers.add_parser(name, help=entry.help)
    else:
        _parser_builder(command)(subparsers.add_parser(command, help=COMMANDS[command].help))
    return parser


def _chosen(argv: Sequence[str]) -> str | None:
    """The subcommand `argv` names: its first word that is not an option (gpuroof's own options
    take no value), when that word is a subcommand."""
    first = next((word for word in argv if not word.startswith("-")), None)
    return first if first in COMMANDS else None


def _is_device_error(exc: BaseException) -> bool:
    """Whether `exc` is a `validate.DeviceError`. Only the subcommands that import validate can
    raise one, so validate is looked up where it is already loaded rather than imported for all."""
    validate = sys.modules.get("validate")
    return validate is not None and isinstance(exc, validate.DeviceError)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the `gpuroof` command; return its exit code."""
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(_chosen(argv))
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse already printed its one-line usage error
        return int(exc.code or 0) if exc.code in (0, None) else EXIT_BAD_INPUT
    try:
        return int(args.func(args) or EXIT_OK)
    except BrokenPipeError:
        # the reader went away (`gpuroof ... | head`): not an error; silence the final flush
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    except KeyboardInterrupt:
        print("gpuroof: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:
        if _is_device_error(exc):
            print(f"gpuroof: {one_line(exc)}", file=sys.stderr)
            return EXIT_NO_DEVICE
        if not isinstance(exc, (ValueError, TypeError, OSError)):
            raise
        print(f"gpuroof: error: {one_line(exc)}", file=sys.stderr)
        return EXIT_BAD_INPUT


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
