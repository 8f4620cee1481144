"""The fuzz harness: odd values, the outcome rules, the registry's entry type, the counters.

An outcome is acceptable when the call returns a result without NaN (and without
infinities outside the few fields that mean "unbounded"), or raises one of the library's
own errors: `OccupancyError`, `RooflineError`, `DeviceError`, a `TypeError` raised by a
``raise`` statement in gpuroof's own code (a deliberate wrong-type error, not a bug
tripping over a wrong type), pydantic's ValidationError where a model is built from the
caller's data, and OSError where a function reads or writes a file the caller named.
Anything else (IndexError, ZeroDivisionError, MemoryError, OverflowError, a TypeError from
deep inside numpy...) fails the test, and hypothesis shrinks it to the smallest input.
"""

from __future__ import annotations

import contextlib
import dataclasses
import faulthandler
import linecache
import math
import os
import signal
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pydantic
from hypothesis import strategies as st

import occupancy
import roofline
import validate

import gpuroof  # noqa: E402 - after the libraries, as a user imports them
import corpus  # noqa: E402 - the repository's corpus, a user of them all

ROOT = Path(__file__).resolve().parents[2]
# Where gpuroof's own code lives (an installed copy as well as this checkout, and its corpus).
PACKAGE_DIRS = tuple(str(Path(m.__file__).resolve().parent) + os.sep
                     for m in (occupancy, roofline, validate, gpuroof, corpus))

#: Examples per entry: the default suite runs 10 (its CPU budget, `make test`), GPUROOF_TEST_FULL=1
#: (make test-full) 20, both derandomized; FUZZ_EXAMPLES=N runs N per entry with fresh
#: randomness (costly entries get a share of it, never fewer than 2).
DEEP = "FUZZ_EXAMPLES" in os.environ
EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "20" if os.environ.get("GPUROOF_TEST_FULL") == "1" else "10"))

#: A single call slower than this counts as a failure: a size too large to compute must be
#: refused up front, not computed for minutes. A call still running then is stopped (a
#: hang: counted, and the test fails) instead of blocking the suite.
SLOW_SECONDS = float(os.environ.get("FUZZ_SLOW_SECONDS", "30"))
#: A call blocked where no signal reaches Python (a lock taken forever in C) ends the whole
#: run this much later: a failure, never a hang. The call and every thread's traceback are in
#: `HANG_LOG` (pytest holds stderr, and a process that ends this way prints no summary).
HANG_GRACE_SECONDS = 30.0
HANG_LOG = Path(tempfile.gettempdir()) / f"gpuroof-fuzz-hang-{os.getpid()}.txt"
_hang_log: Any = None

#: Where every fuzzed call runs (relative paths land here; removed at the end of the session).
SCRATCH = Path(tempfile.mkdtemp(prefix="gpuroof-fuzz-"))

LIBRARY_ERRORS = (occupancy.OccupancyError, roofline.RooflineError, validate.DeviceError)

#: Counters shown at the end of the run (conftest's terminal summary).
STATS: Counter = Counter()


def examples(cost: float = 1.0) -> int:
    """Examples for an entry whose single call costs about `cost` ordinary calls."""
    return max(2, int(EXAMPLES / cost))


# ------------------------------------------------------------------ values

BIG = 2**70
HUGE_INTS = (2**31 - 1, 2**31, 2**32, 2**53 + 1, 2**63 - 1, 2**63, 2**64, BIG, 10**400)
#: Tiny finite floats: the smallest subnormal, subnormals, the smallest normal, and a value
#: whose square underflows (issue 21: 0/0 and inf - inf from rates this small).
TINY_FLOATS = (5e-324, 1e-320, 2.2250738585072014e-308, 1e-300)
SPECIAL_FLOATS = (math.nan, math.inf, -math.inf, 1e400, -0.0, *TINY_FLOATS, 1e308, -1e308, 0.5, 256.0)
#: 0-d numpy arrays: they have ``__iter__`` but iterating one raises numpy's TypeError.
ZERO_D = (np.array(0, dtype=np.int8), np.array(25, dtype=np.uint8), np.array(1.5), np.array(2**40),
          np.array("x"))


def odd_ints() -> st.SearchStrategy[int]:
    """Negative, zero, small, boundary and enormous integers."""
    return st.one_of(
        st.sampled_from((0, -1, 1, 2, 31, 32, 33, 255, 256, 1023, 1024, 1025, 65535, 65536, *HUGE_INTS,
                         -(2**31), -BIG)),
        st.integers(-(2**12), 2**12),
        st.integers(-(2**80), 2**80),
    )


def odd_floats() -> st.SearchStrategy[float]:
    return st.one_of(st.sampled_from(SPECIAL_FLOATS), st.floats(allow_nan=True, allow_infinity=True))


def tiny_floats() -> st.SearchStrategy[float]:
    """Finite floats > 0 small enough that sums, products and quotients of them underflow."""
    return st.one_of(st.sampled_from(TINY_FLOATS), st.floats(min_value=5e-324, max_value=1e-290))


def numpy_scalars() -> st.SearchStrategy[Any]:
    return st.one_of(
        st.sampled_from((np.int8(-1), np.uint8(255), np.int32(256), np.int64(-(2**63)), np.uint64(2**64 - 1),
                         np.float32(1.5), np.float64(np.nan), np.float16(np.inf), np.bool_(True),
                         np.complex64(1 + 1j), np.str_("256"), np.datetime64("2024-01-01"))),
        st.integers(-(2**31), 2**31 - 1).map(np.int32),
    )


def numpy_arrays() -> st.SearchStrategy[np.ndarray]:
    """Arrays of odd shapes (empty, 0-d, ragged-looking, 3-D) and dtypes."""
    shapes = st.sampled_from(((0,), (), (1,), (3,), (2, 0), (2, 3), (1, 1, 4), (33,)))
    return st.one_of(
        st.builds(lambda shape, v: np.full(shape, v, dtype=np.int64), shapes, st.integers(-5, 2**40)),
        st.builds(lambda shape, v: np.full(shape, v, dtype=np.float64), shapes, odd_floats()),
        st.builds(lambda shape: np.zeros(shape, dtype=np.uint8), shapes),
        st.builds(lambda shape: np.ones(shape, dtype=bool), shapes),
        st.builds(lambda shape: np.full(shape, "x", dtype=object), shapes),
        st.just(np.array([1, "a"], dtype=object)),
        st.just(np.arange(6, dtype=np.int16).reshape(2, 3)),
        st.just(np.array([2**63], dtype=np.uint64)),
        st.just(np.array([1.5, 2.5])),
    )


def junk() -> st.SearchStrategy[Any]:
    """Values of the wrong type: None, bools, strings, bytes, containers, objects."""
    return st.one_of(
        st.sampled_from((None, True, False, "", "256", "sm_90", "nan", "\x00", "ä", b"256", [], (), {},
                         [1, 2], {"a": 1}, object(), 1 + 2j, Path("/nonexistent"), print, Ellipsis, {1, 2},
                         range(3), slice(1), bytearray(b"1"), float, type, (1, 2), BIG, *ZERO_D)),
        st.text(max_size=8),
    )


def odd() -> st.SearchStrategy[Any]:
    """Any odd value: extreme numbers, numpy scalars and arrays, and junk."""
    return st.one_of(odd_ints(), odd_floats(), numpy_scalars(), numpy_arrays(), junk())


def maybe(valid: st.SearchStrategy[Any], weight: int = 3) -> st.SearchStrategy[Any]:
    """Mostly `valid` values (so the call goes deep), sometimes odd ones."""
    return st.one_of(*([valid] * weight), odd())


def kwargs(**fields: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    """Keyword arguments: every field drawn, and sometimes left out (its default applies)."""
    return st.fixed_dictionaries({}, optional=fields)


# ------------------------------------------------------------------ outcomes


def origin(exc: BaseException) -> str:
    """file:line of the innermost frame in gpuroof's code (or the innermost at all)."""
    tb, ours = exc.__traceback__, None
    last = None
    while tb is not None:
        name = tb.tb_frame.f_code.co_filename
        last = f"{name}:{tb.tb_lineno}"
        if name.startswith(PACKAGE_DIRS):
            ours = f"{os.path.relpath(name, ROOT)}:{tb.tb_lineno}"
        tb = tb.tb_next
    return ours or last or "?"


def deliberate(exc: BaseException) -> bool:
    """Whether `exc` was raised by a ``raise`` statement in gpuroof's own code."""
    tb = exc.__traceback__
    if tb is None:
        return False
    while tb.tb_next is not None:
        tb = tb.tb_next
    filename = tb.tb_frame.f_code.co_filename
    if not filename.startswith(PACKAGE_DIRS):
        return False
    return linecache.getline(filename, tb.tb_lineno).strip().startswith("raise")


@dataclasses.dataclass(frozen=True)
class Entry:
    """How to fuzz one public name.

    ``kind`` is "call" (a function or a class built from arguments), "constant", "error",
    "module" or "gpu" (needs a GPU session; checked to fail cleanly without one).
    ``strategy`` draws what ``run`` needs (default: a dict with "args" and "kwargs" passed
    to the object). ``pydantic``: a ValidationError is a clean refusal (model boundaries).
    ``io``: an OSError is a clean refusal (files the caller named). ``allow_inf``: result
    fields (dotted paths, last part) that may be infinite. ``check``: a property of a
    successful call, ``check(result, drawn)``. ``cost``: relative time of one call.
    ``generic``: drawn from the name's signature or fields alone (`registry.by_rule`), for a
    name no strategy was written for: it runs, and `test_registry` asks for a real one.
    """

    kind: str
    strategy: st.SearchStrategy[Any] | None = None
    run: Callable[[Any, Any], Any] | None = None
    pydantic: bool = False
    io: bool = False
    allow_inf: frozenset[str] = frozenset()
    check: Callable[[Any, Any], None] | None = None
    cost: float = 1.0
    reason: str = ""
    generic: bool = False


def call(strategy: st.SearchStrategy[Any], **options: Any) -> Entry:
    """An entry calling the object with ``args``/``kwargs`` drawn from `strategy`."""
    return Entry("call", strategy=strategy, **options)


def args_kwargs(*args: st.SearchStrategy[Any], **kw: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    """``{"args": (...), "kwargs": {...}}`` with every keyword optional."""
    return st.fixed_dictionaries({"args": st.tuples(*args), "kwargs": kwargs(**kw)})


def clean_refusal(exc: BaseException, entry: Entry) -> bool:
    if isinstance(exc, LIBRARY_ERRORS):
        return True
    if type(exc) is TypeError and deliberate(exc):
        return True
    if entry.pydantic and isinstance(exc, pydantic.ValidationError):
        return True
    if entry.io and isinstance(exc, OSError):
        return True
    return False


def _non_finite(value: Any, path: str, allow: frozenset[str], seen: set[int]) -> str | None:
    """The path of a NaN, or of an infinity outside `allow`, inside a result; None if clean."""
    if id(value) in seen:
        return None
    if isinstance(value, (bool, np.bool_, int, np.integer, str, bytes, type(None), Path)):
        return None
    if isinstance(value, (float, np.floating)):
        leaf = path.rsplit(".", 1)[-1].split("[")[0]
        if math.isnan(value) or (math.isinf(value) and leaf not in allow):
            return f"{path}={value}"
        return None
    if isinstance(value, np.ndarray):
        if value.dtype.kind == "f" and value.size:
            leaf = path.rsplit(".", 1)[-1]
            bad = np.isnan(value) | (np.isinf(value) & (leaf not in allow))
            if bad.any():
                return f"{path} holds {value[bad].flat[0]}"
        return None
    seen.add(id(value))
    if isinstance(value, pydantic.BaseModel):
        items = [(k, getattr(value, k)) for k in type(value).model_fields]
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        items = [(f.name, getattr(value, f.name)) for f in dataclasses.fields(value)]
    elif isinstance(value, dict):
        items = [(str(k), v) for k, v in value.items()]
    elif isinstance(value, (list, tuple)):
        items = [(f"[{i}]", v) for i, v in enumerate(value)]
    else:
        return None  # figures, paths and other opaque objects
    for key, item in items:
        where = f"{path}{key}" if key.startswith("[") else (f"{path}.{key}" if path else key)
        found = _non_finite(item, where, allow, seen)
        if found:
            return found
    return None


def round_trips(result: Any) -> None:
    """A pydantic result read back from its own JSON equals itself (finite results only)."""
    if not isinstance(result, pydantic.BaseModel):
        return
    cls = type(result)
    text = result.model_dump_json(exclude=set(cls.model_computed_fields))
    assert cls.model_validate_json(text) == result, f"{cls.__name__} does not survive its own JSON"


class Hang(BaseException):
    """Raised into a call still running after `SLOW_SECONDS` (a BaseException: no
    ``except Exception`` in the code under test swallows it)."""


@contextlib.contextmanager
def watchdog(seconds: float, what: str = "") -> Iterator[None]:
    """Raise `Hang` in the calling thread after `seconds` (SIGALRM, main thread only); end
    the process with every thread's traceback `HANG_GRACE_SECONDS` later (faulthandler).

    A loop in Python or numpy (a walk over 2**31 blocks) sees the signal and stops; a wait
    inside C that never returns to the interpreter (issue 21: cuda-python's driver loader
    lock after a failed start-up) does not, and is what the second, harder stop is for.
    """
    global _hang_log
    if _hang_log is None:
        _hang_log = open(HANG_LOG, "w", encoding="utf-8")  # noqa: SIM115 - open for the run
    _hang_log.seek(0)
    _hang_log.truncate()
    _hang_log.write(f"fuzz: no answer after {seconds + HANG_GRACE_SECONDS:.0f} s from {what}\n")
    _hang_log.flush()
    try:
        yield from _watched(seconds)
    finally:
        # The call ended: a log left behind by a run killed from outside (between calls, in
        # hypothesis's own work) must not name a call that answered as the one that hung.
        _hang_log.seek(0)
        _hang_log.truncate()
        _hang_log.flush()


def _watched(seconds: float) -> Iterator[None]:
    faulthandler.dump_traceback_later(seconds + HANG_GRACE_SECONDS, exit=True, file=_hang_log)
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
        try:
            yield
        finally:
            faulthandler.cancel_dump_traceback_later()
        return

    def stop(signum: int, frame: Any) -> None:
        raise Hang(f"no answer after {seconds:.0f} s")

    previous = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        faulthandler.cancel_dump_traceback_later()


def outcome(entry: Entry, target: Any, drawn: Any) -> None:
    """Run one drawn input and assert the outcome is acceptable."""
    run = entry.run or _default_run
    start = time.perf_counter()
    try:
        # In the scratch folder: a drawn relative path ("n", "ä") must not write into the checkout.
        what = f"{getattr(target, '__qualname__', target)!s} with {str(drawn)[:500]}"
        with contextlib.chdir(SCRATCH), watchdog(SLOW_SECONDS, what):
            result = run(target, drawn)
    except Hang as exc:
        STATS["hangs"] += 1
        raise AssertionError(f"a hang: {exc}; refuse what cannot finish up front") from None
    except BaseException as exc:  # noqa: BLE001 - classifying is the point
        elapsed = time.perf_counter() - start
        assert elapsed < SLOW_SECONDS, f"took {elapsed:.0f} s to refuse: refuse up front"
        if not clean_refusal(exc, entry):
            STATS["other_exceptions"] += 1
            raise AssertionError(
                f"not a library error: {type(exc).__name__} at {origin(exc)}: {str(exc)[:300]}"
            ) from exc
        message = str(exc)
        if not isinstance(exc, pydantic.ValidationError):
            assert message.strip(), f"{type(exc).__name__} without a message"
            # A compiler's refusal (occupancy.CompileError) is a one-line summary followed by the
            # compiler's own log, kept in ``.log``; the command line shows the summary and the first error.
            log = str(getattr(exc, "log", "") or "").rstrip()
            summary = message[: len(message) - len(log)] if log and message.endswith(log) else message
            assert "\n" not in summary.strip(), f"a message of several lines: {message!r}"
        STATS["calls"] += 1
        STATS["library_errors"] += 1
        return
    elapsed = time.perf_counter() - start
    assert elapsed < SLOW_SECONDS, f"took {elapsed:.0f} s: a size too large must be refused up front"
    STATS["calls"] += 1
    STATS["results"] += 1
    bad = _non_finite(result, "", entry.allow_inf, set())
    if bad is not None:
        STATS["nan"] += 1
    assert bad is None, f"non-finite figure in the result: {bad}"
    if _non_finite(result, "", frozenset(), set()) is None:
        round_trips(result)
    if entry.check is not None:
        entry.check(result, drawn)


def _default_run(target: Any, drawn: Any) -> Any:
    return target(*drawn.get("args", ()), **drawn.get("kwargs", {}))
