"""Helpers the packages share: files, number checks and pydantic errors, each written once.

``occupancy`` is the bottom package, so ``roofline``, ``validate`` and ``gpuroof`` import
these from here (``occupancy.common``) instead of writing their own:

* atomic writes: every file gpuroof writes (plots, charts, reports, calibrations) goes
  through `write_atomic` or `atomic_path`: the bytes land in a temporary file in the same
  folder and replace the target with one ``os.replace``, so a killed run or a full disk
  leaves the previous file intact and no temporary behind; `check_writable` tests a path
  before a long run;
* readers with limits: every data file gpuroof reads goes through `read_json`, `read_toml`
  or `read_text`: a truncated, non-UTF-8, deeply nested (`MAX_DEPTH`), non-finite or
  oversized (`MAX_FILE_BYTES`) file is one error that names the file;
* argument checks: `integer`, `check_range` and `sequence`, with messages that name the parameter, the
  value and the allowed range;
* `pydantic_error`: a pydantic ``ValidationError`` as one line of the caller's error;
* `CheckedModel`: the base of the value objects checked once at construction
  (`occupancy.Launch`, ``roofline.Kernel``): one normaliser, the package's own errors, and
  copies checked like new instances.

The error type is the caller's (`OccupancyError`, ``RooflineError``), so each package
keeps its own.
"""

from __future__ import annotations

import contextlib
import errno
import json
import math
import numbers
import os
import tempfile
import tomllib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar, TypeVar

import numpy as np
from pydantic import BaseModel, ValidationError, model_validator

__all__ = [
    "CheckedModel",
    "MAX_DEPTH",
    "MAX_FILE_BYTES",
    "as_path",
    "atomic_path",
    "check_range",
    "check_writable",
    "dumps_json",
    "integer",
    "pydantic_error",
    "read_json",
    "read_text",
    "read_toml",
    "sequence",
    "short_repr",
    "write_atomic",
]

#: Nesting deeper than this is refused: gpuroof's own files are at most 5 levels deep.
MAX_DEPTH = 32

#: Files larger than this are refused before they are read: gpuroof's largest, a validation
#: report, is about 250 KB per device, so this holds the reports of hundreds of GPUs.
MAX_FILE_BYTES = 64 * 1024 * 1024

E = TypeVar("E", bound=Exception)
T = TypeVar("T")


def as_path(path: object, error: type[Exception], name: str = "path") -> Path:
    """`path` as a Path; TypeError for another type, `error` for an empty or NUL-holding name."""
    if isinstance(path, bool) or not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"{name} must be a str or os.PathLike, not {type(path).__name__}")
    text = os.fspath(path)
    if not isinstance(text, str):
        raise TypeError(f"{name} must be a str path, not {type(text).__name__}")
    if not text.strip() or "\x00" in text:
        raise error(f"{name}={text!r} is not a file name")
    return Path(text)


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike[str], error: type[Exception], name: str = "path") -> Iterator[Path]:
    """Yield a temporary path next to `path` (same suffix); on success it replaces `path`.

    For writers that want a file name (matplotlib's ``savefig``). On any exception,
    KeyboardInterrupt included, the temporary file is removed and `path` is untouched.
    """
    target = as_path(path, error, name)
    folder = target.parent
    folder.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{target.name}.", suffix=f".tmp{target.suffix}")
    os.close(fd)
    try:
        # mkstemp makes the file private (0600); the result gets the mode a plain open() gives.
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(tmp, 0o666 & ~mask)
        yield Path(tmp)
        with open(tmp, "rb+") as handle:
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_atomic(
    path: str | os.PathLike[str], data: bytes | str, error: type[Exception], name: str = "path"
) -> Path:
    """Write `data` (text is UTF-8) to `path` through a temporary file and a rename.

    A reader never sees half a file, and an interrupted run leaves the old one intact.
    Returns the path written.
    """
    payload = data.encode("utf-8") if isinstance(data, str) else bytes(data)
    target = as_path(path, error, name)
    with atomic_path(target, error, name) as tmp, open(tmp, "wb") as handle:
        handle.write(payload)
    return target


def check_writable(
    path: str | os.PathLike[str], error: type[Exception], *, folder: bool = False, name: str = "path"
) -> Path:
    """Make sure a file can be written at `path` (or, with `folder`, into the folder `path`).

    Creates nothing that stays: a probe file is written and removed in the nearest folder
    that exists on the way to `path` (the only test that holds for every filesystem and
    user, root included), so a long run can check its output before it starts. Raises
    OSError naming the path when it cannot be written.
    """
    target = as_path(path, error, name)
    if not folder and target.is_dir():
        raise IsADirectoryError(f"{name}={str(target)!r} is a folder; give a file name")
    if folder and target.exists() and not target.is_dir():
        raise NotADirectoryError(f"{name}={str(target)!r} is a file; give a folder")
    where = (target if folder else target.parent).absolute()
    while not where.exists() and where != where.parent:
        where = where.parent
    try:
        if not where.is_dir():
            raise NotADirectoryError(errno.ENOTDIR, "a file is in the way")
        fd, probe = tempfile.mkstemp(dir=where, prefix=".gpuroof-write-check.")
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise type(exc)(f"{name}={str(target)!r} cannot be written ({reason})") from None
    return target


def dumps_json(data: object) -> str:
    """`data` as indented JSON text with a final newline; NaN and infinities are refused."""
    return json.dumps(data, indent=2, allow_nan=False) + "\n"


def read_text(path: str | os.PathLike[str], error: type[Exception], name: str = "path") -> str:
    """The file's text, strictly UTF-8; a file that is not, or one past `MAX_FILE_BYTES`, is
    one `error` naming it."""
    target = as_path(path, error, name)
    with open(target, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        if size > MAX_FILE_BYTES:
            raise error(f"{name}={str(target)!r} is {size} bytes; gpuroof reads data files of at most "
                        f"{MAX_FILE_BYTES} bytes")
        # A device or pipe (/dev/zero) reports no size: read at most one byte past the limit.
        raw = handle.read(MAX_FILE_BYTES + 1)
    if len(raw) > MAX_FILE_BYTES:
        raise error(f"{name}={str(target)!r} holds more than {MAX_FILE_BYTES} bytes; gpuroof reads data files "
                    f"of at most {MAX_FILE_BYTES} bytes")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(
            f"{name}={str(target)!r} is not UTF-8 text (byte {exc.start}: {raw[exc.start:exc.start + 1]!r})"
        ) from None


def _depth(value: object, limit: int) -> int:
    """Nesting depth of lists and dicts, stopping once it passes `limit`."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        deepest = max(deepest, level)
        if deepest > limit:
            return deepest
        stack.extend((child, level + 1) for child in children)
    return deepest


def _non_finite(value: object, where: str = "") -> str | None:
    """Where a NaN or infinite float sits in parsed data, or None."""
    stack = [(value, where)]
    while stack:
        item, at = stack.pop()
        if isinstance(item, float) and not math.isfinite(item):
            return at or "the top level"
        if isinstance(item, dict):
            stack.extend((v, f"{at}.{k}" if at else str(k)) for k, v in item.items())
        elif isinstance(item, list):
            stack.extend((v, f"{at}[{i}]") for i, v in enumerate(item))
    return None


def _check_parsed(data: T, target: Path, error: type[Exception], name: str) -> T:
    if _depth(data, MAX_DEPTH) > MAX_DEPTH:
        raise error(f"{name}={str(target)!r} is nested more than {MAX_DEPTH} levels deep")
    where = _non_finite(data)
    if where is not None:
        raise error(f"{name}={str(target)!r} holds a NaN or infinite number at {where}; numbers must be finite")
    return data


def _refuse_constant(text: str) -> float:
    raise ValueError(f"{text} is not a finite number")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text} overflows a float")
    return value


def read_json(path: str | os.PathLike[str], error: type[Exception], name: str = "path") -> Any:
    """Parse a JSON file; truncated, malformed, non-UTF-8, too deeply nested or non-finite
    content is one `error` naming the file (NaN, Infinity and 1e400 are all refused)."""
    text = read_text(path, error, name)
    target = Path(os.fspath(path))
    try:
        data = json.loads(text, parse_constant=_refuse_constant, parse_float=_finite_float)
    except json.JSONDecodeError as exc:
        raise error(
            f"{name}={str(target)!r} is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"
        ) from None
    except ValueError as exc:
        raise error(f"{name}={str(target)!r}: {exc}; numbers must be finite") from None
    except RecursionError:
        raise error(f"{name}={str(target)!r} is nested too deeply to read") from None
    return _check_parsed(data, target, error, name)


def read_toml(path: str | os.PathLike[str], error: type[Exception], name: str = "path") -> dict[str, Any]:
    """Parse a TOML file with the same refusals as `read_json`."""
    text = read_text(path, error, name)
    target = Path(os.fspath(path))
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise error(f"{name}={str(target)!r} is not valid TOML ({exc})") from None
    except RecursionError:
        raise error(f"{name}={str(target)!r} is nested too deeply to read") from None
    return _check_parsed(data, target, error, name)


def integer(name: str, value: object) -> int:
    """``value`` as a Python int; anything but an integer (a bool or a float too) is a TypeError."""
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be an integer, not bool")
    if isinstance(value, numbers.Integral):
        return int(value)
    raise TypeError(f"{name} must be an integer, not {type(value).__name__}")


def check_range(
    name: str, value: int | np.ndarray, low: int, high: int | None, error: type[Exception], what: str = ""
) -> None:
    """Raise `error` when a number or an array leaves ``[low, high]`` (empty arrays pass).

    ``what`` follows the maximum in the message (a unit, "on sm_90"); ``high`` None: no maximum.
    """
    if isinstance(value, np.ndarray):
        if value.size == 0:
            return
        lo, hi = int(value.min()), int(value.max())
    else:
        lo = hi = value
    if lo < low:
        raise error(f"{name}={lo} is below the minimum of {low}")
    if high is not None and hi > high:
        raise error(f"{name}={hi} exceeds the maximum of {high}{what}")


def sequence(name: str, value: object, what: str = "a sequence") -> list[Any]:
    """``value`` as a list: a string, bytes, a mapping, a 0-d numpy array (iterable in name
    only: iterating it raises numpy's TypeError) or a non-iterable is a TypeError naming `name`.

    ``what`` describes the sequence in the message ("a sequence of numbers").
    """
    if isinstance(value, np.ndarray) and value.ndim == 0:
        raise TypeError(f"{name} must be {what}, not a 0-d numpy array ({short_repr(value, 40)})")
    if isinstance(value, (str, bytes, Mapping)) or not hasattr(value, "__iter__"):
        raise TypeError(f"{name} must be {what}, not {type(value).__name__}")
    return list(value)


def short_repr(value: object, width: int = 80) -> str:
    """``repr(value)`` on one line, cut to `width` characters (an array's repr spans lines)."""
    text = " ".join(repr(value).split())
    return text if len(text) <= width else text[: width - 3] + "..."


def pydantic_error(
    exc: ValidationError, error: type[E], what: str, *, show_value: bool = True, unwrap: bool = False
) -> E:
    """A pydantic ``ValidationError`` as one `error`: ``what: field=value: reason``.

    The first error is told (pydantic lists them all, many lines each); ``show_value``
    False leaves the value out (``what: field: reason``). With ``unwrap``, an `error` that
    a validator raised itself (pydantic wraps it) comes back as it was raised: for models
    whose checks already name the field.
    """
    err = exc.errors()[0]
    raised = (err.get("ctx") or {}).get("error")
    if unwrap and isinstance(raised, error):
        return raised
    message = str(err.get("msg", "invalid")).removeprefix("Value error, ")
    where = ".".join(str(p) for p in err.get("loc", ()))
    if not where:
        return error(f"{what}: {message}")
    value = err.get("input")
    shown = "" if isinstance(value, dict) or not show_value else f"={short_repr(value)}"
    return error(f"{what}: {where}{shown}: {message}")


M = TypeVar("M", bound="CheckedModel")


class CheckedModel(BaseModel):
    """A value object checked and normalised once, at construction (cuda.core's ``LaunchConfig``).

    Subclasses set `error` (their package's error type) and override `normalise` (the one place
    their input is checked) and, where an update makes other fields stale, `copy_fields`.
    Construction runs `normalise`; a pydantic error becomes one line of `error`; `model_copy`
    with an update builds a new instance, so a copy is checked like one.
    """

    error: ClassVar[type[Exception]] = ValueError

    @classmethod
    def normalise(cls, data: dict[str, Any]) -> dict[str, Any]:
        """The checked, normalised fields of a new instance (raises `error` or TypeError)."""
        return data

    def copy_fields(self, update: Mapping[str, Any]) -> dict[str, Any]:
        """The fields a copy starts from before `update` is applied (all of them here)."""
        return {name: getattr(self, name) for name in type(self).model_fields}

    @model_validator(mode="before")
    @classmethod
    def _check(cls, data: object) -> dict[str, Any]:
        if not isinstance(data, Mapping):
            raise TypeError(f"{cls.__name__} fields must come as a mapping, not {type(data).__name__}")
        return cls.normalise(dict(data))

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise pydantic_error(exc, self.error, type(self).__name__, unwrap=True) from None

    def model_copy(self: M, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> M:
        """A copy with `update` applied and checked like a new instance."""
        if not update:
            return super().model_copy(deep=deep)
        data = self.copy_fields(update)
        data.update(update)
        return type(self)(**data)
