"""The `gpuroof` console command: the subcommand table, argument parsing, the error policy.

`COMMANDS` names each subcommand's module and one-line help. Only the chosen subcommand's
module is imported and only its parser is built and registered, so ``gpuroof --help`` imports
none of occupancy, roofline or validate and ``gpuroof occupancy ...`` imports no validate. Each
subcommand module maps its subcommands to the functions that build their parsers
(``PARSERS``); a parser's ``func`` default is the handler that makes the library call.
Bad input prints one line on stderr and exits 2, a missing GPU or cuda-python exits 3. Every
output option is declared with `_args.add_output` and checked here before the command's work
starts; a file error is said here, once, naming the option and the cause in words.
"""

from __future__ import annotations

import argparse
import importlib
import os
import re
import shlex
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import NamedTuple

from pydantic import ValidationError

from ._help import HelpFormatter

__all__ = ["COMMANDS", "FIRST_STEPS", "Command", "build_parser", "main", "one_line"]

EXIT_OK = 0
EXIT_BAD_INPUT = 2
EXIT_NO_DEVICE = 3


class Command(NamedTuple):
    """A subcommand: the `gpuroof` module that builds and runs it, its line in ``gpuroof --help``
    and the command line its own ``--help`` ends with (paths are the repository's; a trailing
    backslash continues a line)."""

    module: str
    help: str
    example: str


COMMANDS: Mapping[str, Command] = {
    "occupancy": Command("_occupancy", "blocks per SM of a launch, what limits them, and the next cliffs",
                         "gpuroof occupancy --arch sm_90 --threads 256 --registers 40"),
    "archs": Command("_occupancy", "the architectures and their limits",
                     "gpuroof archs"),
    "resources": Command("_resources", "every kernel's registers, shared/local memory, barriers and launch "
                                       "bounds, for many architectures",
                         "gpuroof resources docs/examples/project_kernels.cu --arch sm_80,sm_90 --threads 256"),
    "block-size": Command("_resources", "the block size with the highest occupancy "
                                        "(cudaOccupancyMaxPotentialBlockSize), offline",
                          "gpuroof block-size --gpu H100 --registers 40 --smem 8192"),
    "gpus": Command("_roofline", "list the GPU database",
                    "gpuroof gpus"),
    "gpu": Command("_roofline", "one GPU: its facts and every derived ceiling",
                   "gpuroof gpu H100"),
    "roofline": Command("_roofline", "bound one kernel on a GPU",
                        "gpuroof roofline --gpu H100 --model matmul_tiled --param m=4096 --param tile=32"),
    "plot": Command("_roofline", "draw a roofline (PNG/SVG/PDF) or export it (JSON/CSV)",
                    "gpuroof plot --gpu H100 --model triad --param n=67108864 -o triad.png"),
    "memory-spaces": Command("_roofline", "the CUDA memory spaces and their properties",
                             "gpuroof memory-spaces"),
    "demo": Command("_roofline", "the main job: the classic kernel suite on a GPU",
                    "gpuroof demo --out demo-output"),
    "models": Command("_models", "the built-in kernel models (--model): parameters, formulas and an example",
                      "gpuroof models transpose"),
    "predict": Command("_predict", "predict a kernel's time from occupancy and Little's law",
                       "gpuroof predict --gpu H200 --model copy --param n=67108864 --block 128"),
    "cliffs": Command("_predict", "predicted time at every occupancy cliff of a kernel's launch",
                      "gpuroof cliffs --gpu H200 --model copy --param n=67108864"),
    "ncu": Command("_ncu", "read an Nsight Compute profile: occupancy, cliffs, roofline and prediction per kernel",
                   "gpuroof ncu tests/data/ncu/user_kernels.raw.csv"),
    "profile": Command("_profile", "run a program under Nsight Compute as gpuroof reads it and print `gpuroof ncu`'s "
                                   "table",
                       "gpuroof profile --kernel saxpy -o saxpy --plot saxpy.png -- ./app 1048576"),
    "corpus": Command("_corpus", "other projects' kernels, measured on a GPU, against the model (per project "
                                 "and kernel; leave one project out)",
                      "gpuroof corpus --gpu h200 --out docs/results/h200/corpus.md --plot docs/results/h200/corpus.png"),
    "measure": Command("_measure", "time your own kernel on the GPU and compare it with the prediction "
                                   "(needs cuda-python)",
                       "gpuroof measure docs/examples/saxpy3.cu --kernel saxpy3 --grid 32768 --block 256 --size n=2**26 \\\n"
                       "      --arg f32=2 --arg 'f32[n]=random' --arg 'f32[n]=random' --arg 'f32[n]=random' --arg 'f32[n]' \\\n"
                       "      --arg u64=67108864 --flops 201326592 --dram-bytes 1073741824"),
    "validate": Command("_validate", "measure this GPU and compare the models with it (needs cuda-python)",
                        "gpuroof validate --quick --out my-gpu"),
    "merge-reports": Command("_validate", "merge validation reports (of many GPUs or hosts) into one",
                             "gpuroof merge-reports docs/results/h200 docs/results/h100-sxm --out merged"),
    "families": Command("_validate", "error by kernel family: predict a validation report's measured families "
                                     "again, on the CPU",
                        "gpuroof families tests/data/families_h200.json"),
    "calibrate": Command("_calibrate", "measure latency and the bandwidth-vs-concurrency curve; check "
                                       "predictions (needs a GPU)",
                         "gpuroof calibrate --out my-gpu"),
}

# The subcommands whose examples end `gpuroof --help`: the first steps, in the order a new user takes them.
FIRST_STEPS = ("occupancy", "roofline", "plot", "demo")

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

    def parse_args(self, args: Sequence[str] | None = None,  # type: ignore[override]
                   namespace: argparse.Namespace | None = None) -> argparse.Namespace:
        """argparse's, but words no option takes are refused by the subcommand named, and where it
        compiles a kernel file, with where nvcc's own options go (`_nvcc_hint`)."""
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            command = getattr(parsed, "command", None)
            sub = _subparser(self, command)
            hint = _elsewhere_hint(command, extras) if sub is not None else None
            hint = hint or (_nvcc_hint(sub, extras) if sub is not None else None)
            if hint is not None:
                sub.error(hint)
            self.error(f"unrecognized arguments: {' '.join(extras)}")
        return parsed


def _elsewhere_hint(command: str, extras: Sequence[str]) -> str | None:
    """Words `command` did not take that are options of other subcommands (``--barriers`` given to
    ``cliffs``, an option of ``occupancy``): the line names those commands, where a guess at nvcc's
    options would mislead. None when no word is another subcommand's option."""
    flags = [word.split("=", 1)[0] for word in extras if word.startswith("--")]
    if not flags:
        return None
    # `root` registers the named subcommand alone; the bare parser lists them all
    names = next((list(a.choices) for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)), [])
    # the subcommands are built lazily (`build_parser`): on this error path, each one in full
    options = {name: {o for a in sub._actions for o in a.option_strings}
               for name in names if name != command and (sub := _subparser(build_parser(name), name)) is not None}
    for flag in flags:
        owners = sorted(name for name, taken in options.items() if flag in taken)
        if owners:
            return (f"unrecognized argument {flag}: an option of gpuroof {', '.join(owners)}, not of gpuroof "
                    f"{command}")
    return None


def _nvcc_hint(parser: argparse.ArgumentParser, extras: Sequence[str]) -> str | None:
    """Words a subcommand that compiles kernel files did not take, refused with where nvcc's
    options go: ``-use_fast_math`` is nvcc's spelling, not an option of gpuroof's, which takes
    it in ``--nvcc-options '-use_fast_math'`` or as its own ``--use-fast-math``. None when the
    command takes no nvcc options or no word is an option."""
    if not any(a.dest == "nvcc_options" for a in parser._actions) or not any(w.startswith("-") for w in extras):
        return None
    text = " ".join(extras)
    quoted = f"'{text}'" if "'" not in text else shlex.quote(text)
    own = list(dict.fromkeys(option for word in extras if word.startswith("-")
                             for option in [_own_option(parser, word)] if option))
    also = f" (or {', '.join(own)})" if own else ""
    words = "argument" if len(extras) == 1 else "arguments"
    return f"unrecognized {words} {text}; nvcc options go in --nvcc-options {quoted}{also}"


def _own_option(parser: argparse.ArgumentParser, word: str) -> str | None:
    """The parser's option that nvcc's `word` is (``-use_fast_math`` -> ``--use-fast-math``,
    ``-maxrregcount=32`` -> ``--maxrregcount N``): names compared without dashes, value or case,
    with ``_`` as ``-``; with its metavar when it takes a value."""
    def key(option: str) -> str:
        return option.lstrip("-").split("=", 1)[0].replace("_", "-").lower()

    for action in parser._actions:
        for option in action.option_strings:
            if key(option) == key(word):
                return option if action.nargs == 0 else f"{option} {action.metavar or action.dest.upper()}"
    return None


class _Version(argparse.Action):
    """``--version``: the installed package's version, looked up only when asked for."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS, **kwargs: object) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS,
                         help="print gpuroof's version and exit")

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: object,
                 option_string: str | None = None) -> None:
        print(f"gpuroof {importlib.import_module(f'{__package__}._version').installed_version()}")
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
    if log and len(str(message).splitlines()) == 1:
        return str(message)  # already summarised from its log (occupancy's NVRTC and nvcc failures)
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
        parser.epilog = "Examples:\n" + "".join(f"  {COMMANDS[name].example}\n" for name in FIRST_STEPS) + \
            "  gpuroof COMMAND --help    (each command's options, and an example of it)"
    else:
        sub = subparsers.add_parser(command, help=COMMANDS[command].help)
        _parser_builder(command)(sub)
        # every subcommand takes it, so that scripts may always pass it (gpuroof._progress reads it)
        sub.add_argument("-q", "--quiet", action="store_true",
                         help="no progress on stderr (a bar shows only when stderr is a terminal)")
        sub.epilog = f"Example:\n  {COMMANDS[command].example}"
    return parser


def _chosen(argv: Sequence[str]) -> str | None:
    """The subcommand `argv` names: its first word that is not an option (gpuroof's own options
    take no value), when that word is a subcommand."""
    first = next((word for word in argv if not word.startswith("-")), None)
    return first if first in COMMANDS else None


def _subparser(parser: argparse.ArgumentParser, command: str | None) -> argparse.ArgumentParser | None:
    """The parser of `command`, as `build_parser` registered it (None when it did not)."""
    return next((a.choices.get(command) for a in parser._actions
                 if isinstance(a, argparse._SubParsersAction)), None) if command else None


def _join_flag_values(parser: argparse.ArgumentParser | None, argv: Sequence[str]) -> list[str]:
    """`argv` with each value of a compiler-flags option (`_args.FlagsOption`) that starts with
    a dash joined to its option: ``--nvcc-options -O3`` -> ``--nvcc-options=-O3``, as nvcc's own
    wrappers take it (argparse would refuse ``-O3`` as an option of its own). Words after ``--``
    stay as they are."""
    options = {s for a in (parser._actions if parser is not None else ()) if getattr(a, "takes_flags", False)
               for s in a.option_strings}
    out: list[str] = []
    i = 0
    while i < len(argv):
        word = argv[i]
        if word == "--":
            return out + list(argv[i:])
        if word in options and i + 1 < len(argv) and argv[i + 1].startswith("-"):
            out.append(f"{word}={argv[i + 1]}")
            i += 2
            continue
        out.append(word)
        i += 1
    return out


def _is_device_error(exc: BaseException) -> bool:
    """Whether `exc` is a `validate.DeviceError`. Only the subcommands that import validate can
    raise one, so validate is looked up where it is already loaded rather than imported for all."""
    validate = sys.modules.get("validate")
    return validate is not None and isinstance(exc, validate.DeviceError)


def _option_for(parser: argparse.ArgumentParser, args: argparse.Namespace | None, path: str) -> tuple[str, bool] | None:
    """The option (or positional) of the command line that named `path`, and whether it is an
    output: the one whose value is `path`, or an output folder that holds it."""
    if args is None or not getattr(args, "command", None):
        return None
    outputs = {out.dest: out for out in getattr(args, "outputs", ())}
    chosen = _subparser(parser, args.command)
    where = os.path.abspath(path)
    for action in chosen._actions if chosen is not None else ():
        values = getattr(args, action.dest, None)
        for value in values if isinstance(values, list) else [values]:
            if not isinstance(value, str) or not value.strip():
                continue
            given = os.path.abspath(value)
            out = outputs.get(action.dest)
            inside = out is not None and out.folder and where.startswith(given.rstrip(os.sep) + os.sep)
            if where == given or inside:
                name = action.option_strings[-1] if action.option_strings else str(action.metavar or action.dest)
                return name, out is not None
    return None


def _file_error_line(exc: OSError, parser: argparse.ArgumentParser, args: argparse.Namespace | None) -> str:
    """An OSError as one line naming the option (or the file) and the cause in words: the
    option that named the file where one did, the standard output where print failed."""
    common = sys.modules.get("occupancy.common")  # loaded by every subcommand; looked up, not imported
    if common is None:  # `gpuroof --help` loads none of the project: the system's words, lower case
        cause = (exc.strerror or str(exc)).lower()
        return f"standard output cannot be written: {cause}" if getattr(exc, "gpuroof_stdout", False) else cause
    file_error = common.file_error
    if getattr(exc, "gpuroof_stdout", False):
        return "standard output cannot be written: " + file_error(exc, "-").gpuroof_cause
    path = getattr(exc, "gpuroof_path", None) or exc.filename
    if path is None:
        return file_error(exc, "-").gpuroof_cause
    path = os.fsdecode(path) if isinstance(path, bytes) else str(path)
    named = _option_for(parser, args, path)
    if named is not None:
        return one_line(file_error(exc, path, named[0], "cannot be written" if named[1] else ""))
    if hasattr(exc, "gpuroof_path"):
        return one_line(exc)
    return one_line(file_error(exc, path, "file"))


class _Stdout:
    """The standard output, its write errors marked as its own (``gpuroof_stdout``): an
    OSError from ``print`` names no file, and a full disk under ``> out.txt`` must be told
    apart from one under ``--out``."""

    def __init__(self, stream: object) -> None:
        self._stream = stream
        self.error: OSError | None = None  # the first write error, also one a caller swallowed (argparse does)

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)  # type: ignore[attr-defined]
        except OSError as exc:
            raise self._failed(exc) from None

    def flush(self) -> None:
        try:
            self._stream.flush()  # type: ignore[attr-defined]
        except OSError as exc:
            raise self._failed(exc) from None
        if self.error is not None:
            raise self.error

    def _failed(self, exc: OSError) -> OSError:
        exc.gpuroof_stdout = True  # type: ignore[attr-defined]
        self.error = self.error or exc
        return exc

    def __getattr__(self, name: str) -> object:
        return getattr(self._stream, name)


def _silence_stdout() -> None:
    """Point the standard output at /dev/null, so that the interpreter's last flush of what is
    left in its buffer neither fails again nor prints "Exception ignored" (and exit 120)."""
    try:
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, sys.stdout.fileno())
        os.close(fd)
    except (OSError, ValueError, AttributeError):  # an in-memory stdout (tests): nothing to silence
        pass


def main(argv: Sequence[str] | None = None) -> int:
    """Run the `gpuroof` command; return its exit code.

    Exit codes: 0 done (also when the reader of a pipe stops early: ``gpuroof gpus | head``);
    2 bad input, a kernel file with no compiler to read it, an output that cannot be written
    (checked before any work) or a closed or failing standard output; 3 no GPU or no
    cuda-python to measure with; 130 interrupted. Every error is one line on stderr.
    """
    argv = sys.argv[1:] if argv is None else list(argv)
    if sys.stdout is None:  # started with stdout closed (`gpuroof gpus >&-`): what it prints would be lost
        print("gpuroof: error: standard output is closed; what gpuroof prints would be lost "
              "(redirect it to a file or /dev/null instead)", file=sys.stderr)
        return EXIT_BAD_INPUT
    command = _chosen(argv)
    parser = build_parser(command)
    stdout = sys.stdout
    sys.stdout = _Stdout(stdout)  # type: ignore[assignment]
    args: argparse.Namespace | None = None
    try:
        try:
            args = parser.parse_args(_join_flag_values(_subparser(parser, command), argv))
        except SystemExit as exc:  # --help, --version, or a one-line usage error argparse printed
            sys.stdout.flush()  # argparse ignores a failed write: the help to a full disk is an error here
            return int(exc.code or 0) if exc.code in (0, None) else EXIT_BAD_INPUT
        if getattr(args, "check_outputs", None):  # set by _args.add_output
            args.check_outputs(args)  # every output option, before the command's work starts
        code = int(args.func(args) or EXIT_OK)
        sys.stdout.flush()  # a full disk or a closed descriptor is an error here, not at exit
        return code
    except BrokenPipeError:
        # The reader went away (`gpuroof ... | head`): it has what it wanted; exit 0 quietly,
        # as ripgrep does, and silence the interpreter's final flush.
        _silence_stdout()
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
        if isinstance(exc, OSError):
            line = _file_error_line(exc, parser, args)
            if line.startswith("standard output"):
                _silence_stdout()
        else:
            line = one_line(exc)
        print(f"gpuroof: error: {line}", file=sys.stderr)
        return EXIT_BAD_INPUT
    finally:
        if isinstance(sys.stdout, _Stdout):
            sys.stdout = stdout


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
