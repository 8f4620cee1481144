"""Every `gpuroof` subcommand, fuzzed: exit code 0, 2 or 3, never a traceback, one line on stderr.

Most runs go through ``gpuroof.main(argv)`` in this process (fast); a few go through a real
``python -m gpuroof`` process, one under a memory limit, to show that sizes too large to
compute are refused up front rather than by running out of memory.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import resource
import subprocess
import sys
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fuzzlib
import values as v
from fuzzlib import STATS
from gpuroof import build_parser, main

# ------------------------------------------------------------------ argument values (strings)

ODD_TOKENS = ("-1", "0", "1", "-0", "2147483648", "1180591620717411303424", "nan", "inf", "-inf", "1e400", "-1e9",
              "256.0", "0x10", "1_000", "", " ", "abc", "ä", "--", "-", "--json", "-h", "sm_90", "\t", "1e-400", "+5")


def token(valid: st.SearchStrategy[Any]) -> st.SearchStrategy[str]:
    """Mostly a valid value (as text), sometimes an odd token."""
    return st.one_of(valid.map(str), valid.map(str), valid.map(str), st.sampled_from(ODD_TOKENS), st.text(max_size=6))


def ints(low: int, high: int) -> st.SearchStrategy[str]:
    return token(st.integers(low, high))


def file_token(kinds: tuple[str, ...]) -> st.SearchStrategy[str]:
    """A data file for the command to read: a corrupted copy of a valid one, or a bad path."""
    cases = v.file_case(kinds).map(lambda case: str(v.write_case(case)))
    return st.one_of(cases, cases, st.sampled_from((str(v.TMP), "/no/such/file.json", "")))


def out_token(suffixes: tuple[str, ...]) -> st.SearchStrategy[str]:
    return v.out_paths(suffixes).filter(lambda p: isinstance(p, (str, os.PathLike))).map(str).filter(
        lambda p: "\x00" not in p)


def folder_token() -> st.SearchStrategy[str]:
    return v.out_folders().filter(lambda p: isinstance(p, str) and "\x00" not in p)


ARCH = token(st.sampled_from(("sm_90", "8.0", "sm_50", "sm_121", "H100", "A100", "rtx 4090", "sm_99", "90a")))
GPU = token(st.sampled_from(("H100-SXM", "H200", "L4", "a100 pcie 40gb", "A100", "H100", "h1OO", "RTX-5090")))
MODEL = token(st.sampled_from(("copy", "vector_add", "matmul_tiled", "transpose", "blur", "reduction", "aos", "nope")))
PARAM = st.one_of(
    st.builds(lambda k, val: f"{k}={val}", st.sampled_from(("n", "m", "tile", "block", "radius", "variant", "stride",
                                                            "offset", "width", "height", "rows", "bogus")),
              st.one_of(st.integers(1, 5000).map(str), st.sampled_from(("16,16", "0", "-1", "1099511627776", "2**40",
                                                                        "shared", "1e3", "true", "", ",", "32,32,32")))),
    st.sampled_from(("n", "=5", "n=", "==", "n=1=2")),
)
# Coherent model specs (so runs get past the model and into the launch, the GPU and the
# prediction), with odd sizes mixed in.
SIZE = token(st.one_of(st.integers(1, 1 << 22), st.sampled_from((2**31 - 1, 2**31, 2**40, 0, -5))))
MODEL_SPEC = st.one_of(
    st.builds(lambda n: ["--model", "copy", "--param", f"n={n}"], SIZE),
    st.builds(lambda n: ["--model", "vector_add", "--param", f"n={n}"], SIZE),
    st.builds(lambda n, b: ["--model", "reduction", "--param", f"n={n}", "--param", f"block={b}"], SIZE,
              token(st.sampled_from((32, 256, 1024, 100)))),
    st.builds(lambda m, t: ["--model", "matmul_tiled", "--param", f"m={m}", "--param", f"tile={t}"],
              token(st.integers(1, 2048)), token(st.integers(1, 33))),
    st.builds(lambda r, var: ["--model", "transpose", "--param", f"rows={r}", "--param", f"variant={var}"],
              token(st.integers(1, 4096)), st.sampled_from(("shared", "shared_padded", "naive_row", "nope"))),
    st.builds(lambda w, rad: ["--model", "blur", "--param", f"width={w}", "--param", f"height={w}",
                              "--param", f"radius={rad}"], token(st.integers(1, 512)), token(st.integers(0, 4))),
    st.builds(lambda m: ["--model", m], MODEL),
)
PRECISION = token(st.sampled_from(("fp32", "fp16_tensor", "fp128", "half", "int8_tensor")))
NUMBER = token(st.one_of(st.floats(0, 1e15), st.integers(0, 10**12)))


def options(required: dict[str, Any], optional: dict[str, Any], flags: tuple[str, ...] = (),
            positional: st.SearchStrategy[str] | None = None,
            lead: st.SearchStrategy[list[str]] | None = None) -> st.SearchStrategy[list[str]]:
    """argv after the subcommand: required options (each sometimes left out), a random subset
    of the optional ones (`--param` may repeat), flags, and sometimes a stray token."""

    def assemble(req_values, req_keep, opt_values, flag_values, stray, pos):
        argv = list(pos)
        for (flag, value), kept in zip(req_values, req_keep):
            if kept:
                argv += [flag, value]
        for flag, value in opt_values:
            argv += [flag, value]
        argv += flag_values
        argv += stray
        return argv

    req = st.tuples(*(st.tuples(st.just(f), s) for f, s in required.items()))
    keep = st.lists(st.sampled_from((True, True, True, True, False)), min_size=len(required), max_size=len(required))
    opt = st.lists(st.sampled_from(sorted(optional)).flatmap(lambda f: st.tuples(st.just(f), optional[f])),
                   max_size=4) if optional else st.just([])
    flag_values = st.lists(st.sampled_from(flags), unique=True, max_size=len(flags)) if flags else st.just([])
    stray = st.one_of(st.just([]), st.just([]), st.just([]), st.lists(st.sampled_from(ODD_TOKENS), max_size=2))
    pos = positional.map(lambda p: [p]) if positional is not None else st.just([])
    if lead is not None:
        pos = st.tuples(pos, lead).map(lambda t: t[0] + t[1])
    return st.builds(assemble, req, keep, opt, flag_values, stray, pos)


LAUNCH = dict(**{"--smem": ints(0, 49152), "--dynamic-smem": ints(0, 232448), "--max-dynamic-smem": ints(0, 232448),
                 "--carveout": ints(0, 100), "--barriers": ints(0, 16), "--max-threads": ints(1, 1024)})
KERNEL = {"--flops": NUMBER, "--bytes": NUMBER, "--l2-bytes": NUMBER, "--l1-bytes": NUMBER, "--name": token(st.just("k")),
          "--model": MODEL, "--param": PARAM, "--precision": PRECISION, "--gpu": GPU}
PREDICT = {"--gpu": GPU, "--param": PARAM, "--model": MODEL, "--block": ints(1, 1024), "--grid": ints(1, 10**6), "--registers": ints(0, 255),
           "--dynamic-smem": ints(0, 232448), "--elements-per-thread": ints(1, 16),
           "--calibration": file_token(("calibration_json", "report_json", "chart_json"))}

# subcommand -> (argv strategy, relative cost of one run)
COMMANDS: dict[str, tuple[st.SearchStrategy[list[str]], float]] = {
    "occupancy": (options({"--arch": ARCH, "--threads": ints(1, 1024), "--registers": ints(0, 255)},
                          # A plot costs a second: mostly a path refused up front, now and then a real one.
                          {**LAUNCH, "--plot": st.one_of(out_token((".jpg", "", ".txt")), out_token((".jpg", "")),
                                                         out_token((".png", ".svg")))}, ("--json",)), 2),
    "archs": (options({}, {}, ("--json",)), 1),
    "gpus": (options({}, {}, ("--json",)), 1),
    "gpu": (options({}, {}, ("--json",), positional=GPU), 1),
    "roofline": (options({}, KERNEL, ("--json",), lead=st.one_of(MODEL_SPEC, st.just([]))), 1),
    "plot": (options({"--output": out_token((".png", ".svg", ".json", ".csv", ".txt"))},
                     {**KERNEL, "--from": file_token(("chart_json", "chart_csv", "calibration_json"))},
                     ("--json", "--suite"), lead=st.one_of(MODEL_SPEC, st.just([]))), 20),
    "memory-spaces": (options({}, {}, ("--json",)), 1),
    "demo": (options({}, {"--gpu": GPU, "--out": folder_token()}, ("--json", "--wide")), 60),
    "predict": (options({}, {**PREDICT, "--loads-in-flight": ints(1, 16)}, ("--json",), lead=MODEL_SPEC), 1),
    "cliffs": (options({}, PREDICT, ("--json",), lead=MODEL_SPEC), 4),
    "validate": (options({}, {"--kernels": token(st.sampled_from(("copy", "transpose", "nope"))), "--device": ints(0, 3),
                              "--out": folder_token(), "--seed": ints(0, 2**32),
                              "--families": token(st.sampled_from(("blur", "none", "nope")))}, ("--json", "--quick")), 1),
    "calibrate": (options({}, {"--device": ints(0, 3), "--out": folder_token()}, ("--json",)), 1),
    # Subcommands main gained (the kernel file is a drawn, corrupted data file or a missing one:
    # compiling a real one costs seconds, tests/test_cli_resources.py covers it).
    "resources": (options({}, {"--arch": ARCH, "--gpu": GPU, "--kernel": token(st.just("k")),
                               "--threads": ints(1, 1024)}, ("--json",),
                          positional=file_token(("chart_csv", "calibration_json"))), 2),
    "block-size": (options({}, {"--arch": ARCH, "--gpu": GPU, "--registers": ints(0, 255), **LAUNCH,
                                "--sm-count": ints(1, 200)}, ("--json",)), 1),
    "models": (options({}, {}, ("--json",), positional=st.one_of(MODEL, st.just("matmul_tiled"))), 1),
    "ncu": (options({}, {"--gpu": GPU, "--kernel": token(st.just("k")), "--plot": out_token((".png", ".txt"))},
                    ("--json", "--markdown"), positional=file_token(("ncu_raw_csv", "ncu_csv", "chart_csv"))), 3),
    # ncu is not on the CI machine: profile ends at its missing ncu (3) or a missing program (2)
    "profile": (options({}, {"--kernel": token(st.just("k")), "--launch-count": ints(-1, 5),
                             "--plot": out_token((".png", ".txt"))}, ("--json", "--markdown")), 1),
    "corpus": (options({}, {"--gpu": token(st.sampled_from(("h200", "h100-sxm", "nope"))),
                            "--project": token(st.sampled_from(("rodinia", "nope"))), "--data": folder_token(),
                            "--out": out_token((".md", ".txt")), "--plot": out_token((".png", ".txt"))},
                       ("--json",)), 4),  # a known GPU loads and predicts its whole corpus
    "measure": (options({"--grid": ints(1, 4096), "--block": ints(1, 1024)},
                        {"--kernel": token(st.just("k")), "--arg": token(st.sampled_from(("f32[n]", "i32=5", "x"))),
                         "--size": token(st.sampled_from(("n=1024", "n", "n=-1"))), "--device": ints(0, 3)},
                        ("--json",), positional=file_token(("chart_csv", "calibration_json"))), 1),
    "families": (options({}, {"--gpu": GPU, "--calibration": file_token(("calibration_json", "report_json")),
                              "--out": folder_token()}, ("--json",),
                         positional=st.one_of(file_token(("families_json", "report_json", "chart_json")),
                                              st.builds(lambda: _record_file([])))), 10),
    "merge-reports": (options({"--out": folder_token()}, {}, (), positional=file_token(("report_json", "chart_json"))),
                      3),
}


def subcommands() -> set[str]:
    parser = build_parser()
    action = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    return set(action.choices)


def test_every_subcommand_has_a_fuzz_entry():
    missing = sorted(subcommands() - set(COMMANDS))
    assert missing == [], f"add an argv strategy in tests/fuzz/test_fuzz_cli.py for: {', '.join(missing)}"
    assert sorted(set(COMMANDS) - subcommands()) == []


#: A run slower than this is a hang (counted, and the test fails) rather than a stalled suite:
#: the slowest commands (demo, families) take about 25 s on an idle core.
CLI_SLOW_SECONDS = 4 * fuzzlib.SLOW_SECONDS


def run_in_process(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    # In the scratch folder: `demo` writes demo-output/ and a drawn "--out n" writes n/.
    with contextlib.chdir(fuzzlib.SCRATCH), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            with fuzzlib.watchdog(CLI_SLOW_SECONDS, f"gpuroof {argv}"):
                code = main(argv)
        except fuzzlib.Hang as exc:
            STATS["hangs"] += 1
            raise AssertionError(f"gpuroof {' '.join(argv)!r}: a hang ({exc}); refuse what cannot finish "
                                 "up front") from None
        except BaseException as exc:  # noqa: BLE001 - an escape is the failure being looked for
            STATS["cli_tracebacks"] += 1
            raise AssertionError(f"gpuroof {' '.join(argv)!r} raised {type(exc).__name__} at "
                                 f"{fuzzlib.origin(exc)}: {exc}") from exc
    return code, out.getvalue(), err.getvalue()


def check_run(argv: list[str], code: int, stderr: str) -> None:
    STATS["cli_runs"] += 1
    STATS[f"cli_exit_{code}"] += 1
    lines = [line for line in stderr.splitlines() if line.strip()]
    if code not in (0, 2, 3):
        STATS["cli_wrong_exit"] += 1
    assert code in (0, 2, 3), f"gpuroof {argv!r} exited {code}: {stderr}"
    assert "Traceback" not in stderr, stderr
    assert "[Errno" not in stderr, f"gpuroof {argv!r}: a raw OSError, not the cause in words: {stderr!r}"
    if code != 0:
        assert len(lines) == 1, f"gpuroof {argv!r}: {len(lines)} lines on stderr: {stderr!r}"
        assert lines[0].startswith("gpuroof"), lines[0]
    else:
        assert not any("error" in line.lower() for line in lines), stderr


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_subcommand_survives_odd_arguments(command):
    strategy, cost = COMMANDS[command]

    @settings(settings.get_profile("gpuroof-fuzz"), max_examples=fuzzlib.examples(cost))
    @given(strategy)
    def run(argv):
        argv = [command, *argv]
        code, _, stderr = run_in_process(argv)
        check_run(argv, code, stderr)

    run()


# ------------------------------------------------------------------ real processes

GPUROOF = [sys.executable, "-m", "gpuroof"]


def _limit_memory() -> None:
    # 3 GiB of address space: the interpreter, numpy, pydantic and matplotlib fit; a size
    # that is computed instead of refused does not.
    limit = 3 * 2**30
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


@pytest.mark.parametrize(
    "argv,code,says",
    [
        (["roofline", "--model", "copy", "--param", "n=1099511627776"], 2, "n=1099511627776"),
        (["roofline", "--model", "matmul_naive", "--param", "m=2147483647"], 2, "m=2147483647"),
        (["roofline", "--model", "blur", "--param", "width=100", "--param", "height=100", "--param", "radius=1000"],
         2, "radius=1000"),
        (["predict", "--model", "copy", "--param", "n=2147483647", "--grid", "99999999999"], 2, "99999999999"),
        (["roofline", "--flops", "-1e9", "--bytes", "1"], 2, "flops=-1000000000.0"),
    ],
    ids=["copy-2^40", "matmul-2^31", "blur-radius", "grid-past-limit", "negative-flops"],
)
def test_real_process_under_a_memory_limit(argv, code, says):
    # One BLAS thread: on a many-core machine OpenBLAS would reserve address space per core.
    env = {**os.environ, "MPLBACKEND": "Agg", "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    done = subprocess.run([*GPUROOF, *argv], capture_output=True, text=True, timeout=120,
                          preexec_fn=_limit_memory, env=env)
    check_run(argv, done.returncode, done.stderr)
    assert done.returncode == code, done.stderr
    assert says in done.stderr



# ------------------------------------------------------------------ issue 21: the standard output and empty files


def _close_stdout() -> None:
    os.close(1)


@pytest.mark.parametrize(
    "argv,stdout,says",
    [
        (["gpus"], "closed", "gpuroof: error: standard output is closed; what gpuroof prints would be lost "
                             "(redirect it to a file or /dev/null instead)"),
        (["gpus"], "/dev/full", "gpuroof: error: standard output cannot be written: no space left on the device"),
        (["gpus", "--help"], "/dev/full",
         "gpuroof: error: standard output cannot be written: no space left on the device"),
        (["--help"], "/dev/full", "gpuroof: error: standard output cannot be written: no space left on device"),
    ],
    ids=["closed", "full", "help-full", "top-help-full"],
)
def test_output_that_cannot_be_written_is_an_error_exit(argv, stdout, says):
    """Issue 21: `gpuroof gpus >&-` exited 0 with its output lost (Python sets sys.stdout to
    None and print does nothing); `> /dev/full` (a full disk) printed "Exception ignored"
    and exited 120. Both are one line on stderr and exit 2."""
    if stdout == "/dev/full" and not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full here")
    with contextlib.ExitStack() as stack:
        if stdout == "closed":
            kwargs = {"preexec_fn": _close_stdout}
        else:
            kwargs = {"stdout": stack.enter_context(open(stdout, "w"))}
        done = subprocess.run([*GPUROOF, *argv], stderr=subprocess.PIPE, text=True, timeout=120, **kwargs)
    check_run(argv, done.returncode, done.stderr)
    assert done.returncode == 2
    assert done.stderr == says + "\n"


def _record_file(records: list) -> str:
    path = v.fresh(".json")
    path.write_text(json.dumps({"gpu": "H200", "records": records}))
    return str(path)


def test_families_of_a_file_without_records_is_an_error():
    """Issue 21: `gpuroof families` on a records file with no records exited 0 with an empty
    table, though family_report's docstring calls a file without records an error."""
    path = _record_file([])
    code, out, err = run_in_process(["families", path])
    check_run(["families", path], code, err)
    assert (code, out) == (2, "")
    assert err == f"gpuroof: error: source={path!r} holds no family records; nothing to predict\n"
