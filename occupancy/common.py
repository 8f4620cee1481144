"""Helpers the packages share: files, number checks and pydantic errors, each written once.

``occupancy`` is the bottom package, so ``roofline``, ``validate`` and ``gpuroof`` import
these from here (``occupancy.common``) instead of writing their own:

* atomic writes: every file gpuroof writes (plots, charts, reports, calibrations) goes
  through `write_atomic`, `atomic_path` or, for a figure, `save_figure`: the bytes land in a
  temporary file ``.NAME.PID.XXXXXXXX.tmpSUFFIX`` in the same folder and replace the target
  with one ``os.replace``, so a full disk leaves the previous file intact and no temporary
  behind, and a killed run leaves the previous file intact and a temporary that the next
  write to the same path removes (its writer's process has ended); `check_writable` tests a
  path before a long run;
* file errors in words: `file_error` turns an ``OSError`` into one line naming the file and
  the cause (``path='x.png' cannot be written: no space left on the device``) instead of
  ``[Errno 28] No space left on device``; the writers and readers here raise only those;
* readers with limits: every data file gpuroof reads goes through `read_json`, `read_toml`
  or `read_text`: a truncated, non-UTF-8, deeply nested (`MAX_DEPTH`), non-finite or
  oversized (`MAX_FILE_BYTES`) file is one error that names the file;
* argument checks: `integer`, `check_range` and `sequence`, with messages that name the parameter, the
  value and the allowed range;
* `pydantic_error`: a pydantic ``ValidationError`` as one line of the caller's error;
* progress: `ProgressStep`, `progress_step` and `no_progress`, the one protocol by which long
  library work reports how far it is (a callback that receives ``str`` messages);
* `Displayed`: the base of the public result models: a short repr and notebook tables from a
  declared headline (`shown`, `si`, `percent`, `joined` format its items);
* `install_extra`: the command that installs an optional dependency group (gpuroof is not on
  a package index: from its checkout), for the messages that say what is missing;
* `figure_class`: the Figure class the plot functions draw on (it shows inline in Jupyter),
  matplotlib imported only when it is called;
* `CheckedModel`: the base of the value objects checked once at construction
  (`occupancy.Launch`, ``roofline.Kernel``): one normaliser, the package's own errors, and
  copies checked like new instances;
* kernel names: `demangle`, `base_name` (a symbol's unqualified name), `instance_name` (a
  template instance as people write it) and `name_key` (one spelling of an instance whichever
  printer wrote it: c++filt, cu++filt or Nsight Compute).

The error type is the caller's (`OccupancyError`, ``RooflineError``), so each package
keeps its own.
"""

from __future__ import annotations

import contextlib
import errno
import json
import math
import os
import re
import tempfile
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypeVar

from ._arguments import check_range, integer, sequence, short_repr
from ._checked_model import CheckedModel, pydantic_error
from ._display import Displayed, Shown, joined, percent, shown, si
from ._figure import figure_class
from ._install import install_extra
from ._names import base_name, demangle, instance_name, name_key
from ._progress import Progress, ProgressStep, no_progress, step as progress_step
from ._real_numbers import RealNumbers

__all__ = [
    "CheckedModel",
    "Displayed",
    "FIGURE_FORMATS",
    "MAX_DEPTH",
    "MAX_FILE_BYTES",
    "Progress",
    "ProgressStep",
    "RealNumbers",
    "SOURCE_SUFFIXES",
    "Shown",
    "as_path",
    "atomic_path",
    "base_name",
    "check_figure_path",
    "check_range",
    "check_writable",
    "demangle",
    "dumps_json",
    "figure_class",
    "file_error",
    "install_extra",
    "instance_name",
    "integer",
    "joined",
    "name_key",
    "no_kernel_reason",
    "no_progress",
    "percent",
    "progress_step",
    "pydantic_error",
    "read_json",
    "read_text",
    "read_toml",
    "save_figure",
    "sequence",
    "short_repr",
    "shown",
    "si",
    "write_atomic",
]

#: Nesting deeper than this is refused: gpuroof's own files are at most 5 levels deep.
MAX_DEPTH = 32

#: Files larger than this are refused before they are read: gpuroof's largest, a validation
#: report, is about 250 KB per device, so this holds the reports of hundreds of GPUs.
MAX_FILE_BYTES = 64 * 1024 * 1024

#: The file suffixes gpuroof draws figures to (matplotlib picks the format from the suffix).
FIGURE_FORMATS: tuple[str, ...] = (".png", ".svg", ".pdf")

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


# The cause of a failed read or write, in words: what `file_error` says instead of
# "[Errno 28] No space left on device". Other errors keep the system's own words.
_CAUSES = {
    errno.ENOSPC: "no space left on the device",
    errno.EDQUOT: "the disk quota is used up",
    errno.EFBIG: "the file would pass the largest file size allowed here (ulimit -f or the file system's)",
    errno.ENAMETOOLONG: "the name is too long (a file system allows 255 bytes per name, 4096 per path)",
    errno.ENOENT: "no such file or folder",
    errno.ENOTDIR: "a part of the path is a file, not a folder",
    errno.EISDIR: "it is a folder, not a file",
    errno.EACCES: "permission denied",
    errno.EPERM: "the operation is not permitted",
    errno.EROFS: "the file system is read-only",
    errno.EIO: "input/output error on the device",
    errno.EMFILE: "too many files are open",
    errno.ELOOP: "too many symbolic links in the path",
    errno.EXDEV: "the rename crossed file systems",
    errno.EBADF: "the file is closed",
}


def file_error(exc: OSError, path: str | os.PathLike[str], name: str = "path", action: str = "") -> OSError:
    """`exc` as one line that names the file and says the cause in words.

    ``file_error(OSError(ENOSPC, ...), "x.png", "--plot", "cannot be written")`` is
    ``--plot='x.png' cannot be written: no space left on the device``. The result is of
    `exc`'s own class (``FileNotFoundError`` stays one) with its ``errno``; it keeps `path`,
    the action and the cause (``gpuroof_path``, ``gpuroof_action``, ``gpuroof_cause``), so
    that a caller who knows a better name (the command line: the option) can say it again
    with `file_error`. ``strerror`` and ``filename`` stay None: with them set, ``str()``
    would read ``[Errno 28] ...`` again.

    Parameters
    ----------
    exc : OSError
        The error; one `file_error` made already keeps its action and cause.
    path : str or os.PathLike
        The file the error is about (the target, never a temporary file).
    name : str
        The parameter or option that named the file.
    action : str
        What could not be done ("cannot be written", "cannot be read"), or "".
    """
    action = getattr(exc, "gpuroof_action", action) or action
    cause = getattr(exc, "gpuroof_cause", None) or _CAUSES.get(exc.errno or 0) or exc.strerror or str(exc)
    text = os.fspath(path)
    shown = text if isinstance(text, str) else os.fsdecode(text)
    message = f"{name}={shown!r}{' ' + action if action else ''}: {cause}"
    try:
        out = type(exc)(message)
    except TypeError:  # an OSError subclass with a constructor of its own
        out = OSError(message)
    # errno only: with strerror or filename set, str() would be "[Errno 28] ..." again
    out.errno = exc.errno
    out.gpuroof_path, out.gpuroof_action, out.gpuroof_cause = shown, action, cause  # type: ignore[attr-defined]
    return out


def _os_error(kind: type[OSError], code: int, cause: str) -> OSError:
    """An OSError of our own making whose cause `file_error` says as given."""
    exc = kind(code, cause)
    exc.gpuroof_cause = cause  # type: ignore[attr-defined]
    return exc


def _temp_stem(target: Path) -> str:
    """The start of `target`'s temporary names: ``.NAME.``, NAME cut so that the temporary's
    whole name stays within the 255 bytes a file system allows."""
    name = target.name.encode("utf-8", "surrogateescape")[:200].decode("utf-8", "ignore")
    return f".{name}."


def _started_after(pid: int, seconds: float) -> bool:
    """Whether process `pid` started after the time `seconds` (Linux; False where unknown).

    A process that started after a temporary file was last written cannot have written it:
    its pid is a reused one, and the writer is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            # the command name (field 2) is in parentheses and may hold spaces: count after it
            fields = handle.read().rsplit(b")", 1)[1].split()
        with open("/proc/stat", "rb") as handle:
            boot = next(int(line.split()[1]) for line in handle if line.startswith(b"btime "))
        start = boot + int(fields[19]) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, StopIteration):
        return False
    return start > seconds + 1  # btime is whole seconds


def _writer_gone(pid: int, written: float) -> bool:
    """Whether the process that wrote a temporary file (pid `pid`, last written at `written`)
    has ended: no process has that pid, or the one that has it started later."""
    if pid == os.getpid():
        return False  # this process's own write in progress (another thread's)
    try:
        os.kill(pid, 0)  # signal 0: asks whether the process exists, sends nothing
    except ProcessLookupError:
        return True
    except PermissionError:
        pass  # exists, another user's
    except (OSError, OverflowError, ValueError):
        return pid <= 0 or pid > 2**22  # no such pid on Linux (pid_max is at most 2**22)
    return _started_after(pid, written)


def _remove_stale_temporaries(target: Path) -> None:
    """Remove the temporary files that a killed earlier write to `target` left behind.

    Only ``.NAME.PID.XXXXXXXX.tmpSUFFIX`` files of this target whose writer (PID) has
    ended; another writer's file in progress is left alone. POSIX only: elsewhere a pid
    cannot be asked safely (Windows' ``os.kill`` ends the process)."""
    if os.name != "posix":
        return
    stem = _temp_stem(target)
    pattern = re.compile(re.escape(stem) + r"(\d{1,12})\.[A-Za-z0-9_]{1,16}\.tmp" + re.escape(target.suffix) + "$")
    try:
        names = [entry.name for entry in os.scandir(target.parent) if entry.name.startswith(stem)]
    except OSError:
        return
    for name in names:
        match = pattern.match(name)
        if match is None:
            continue
        path = target.parent / name
        with contextlib.suppress(OSError):
            if _writer_gone(int(match.group(1)), path.lstat().st_mtime):
                path.unlink()


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike[str], error: type[Exception], name: str = "path") -> Iterator[Path]:
    """Yield a temporary path next to `path` (same suffix); on success it replaces `path`.

    For writers that want a file name (matplotlib's ``savefig``). On any exception,
    KeyboardInterrupt included, the temporary file is removed and `path` is untouched. The
    temporary is ``.NAME.PID.XXXXXXXX.tmpSUFFIX``: a write that was killed (SIGKILL, power
    loss) leaves one, and the next write to `path` removes it once process PID has ended.

    Raises
    ------
    OSError
        When the file cannot be written: one line naming `name`, `path` and the cause
        (`file_error`), the class and ``errno`` of the system's error.
    """
    target = as_path(path, error, name)
    folder = target.parent
    tmp: str | None = None
    try:
        folder.mkdir(parents=True, exist_ok=True)
        _remove_stale_temporaries(target)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=f"{_temp_stem(target)}{os.getpid()}.",
                                   suffix=f".tmp{target.suffix}")
        os.close(fd)
        # mkstemp makes the file private (0600); the result gets the mode a plain open() gives.
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(tmp, 0o666 & ~mask)
        yield Path(tmp)
        with open(tmp, "rb+") as handle:
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException as exc:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        # An error about this file (its temporary, a folder on its way, or no file named: a
        # write) is said once, here, naming the target; one about another file passes unchanged.
        if isinstance(exc, OSError) and _about(getattr(exc, "gpuroof_path", exc.filename), target, tmp):
            raise file_error(exc, target, name, "cannot be written") from None
        raise


def _about(filename: object, target: Path, tmp: str | None) -> bool:
    """Whether an error's file name is `target`, its temporary `tmp`, a folder above it, or none."""
    if filename is None:
        return True
    text = os.fsdecode(filename) if isinstance(filename, (str, bytes, os.PathLike)) else str(filename)
    return text in (tmp, str(target)) or Path(text) in target.parents


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
    user, root included), and every name still to be made is held against the folder's
    longest name (``NAME_MAX``), so a long run can check its output before it starts.

    Raises
    ------
    OSError
        When it cannot be written: one line naming `name`, `path` and the cause in words
        (`file_error`), e.g. ``--out='x' cannot be written: a part of the path is a file``.
    """
    target = as_path(path, error, name)
    try:
        if not folder and target.is_dir():
            raise _os_error(IsADirectoryError, errno.EISDIR, "it is a folder; give a file name")
        if folder and target.exists() and not target.is_dir():
            raise _os_error(NotADirectoryError, errno.ENOTDIR, "it is a file; give a folder")
        where = target.absolute()
        while not where.exists() and where != where.parent:
            where = where.parent
        if where == target.absolute() and not folder:
            where = where.parent  # the file exists: its folder is where it is written
        if not where.is_dir():
            raise _os_error(NotADirectoryError, errno.ENOTDIR, f"{str(where)!r} is a file, not a folder")
        fd, probe = tempfile.mkstemp(dir=where, prefix=".gpuroof-write-check.")
        os.close(fd)
        os.unlink(probe)
        # A name the file system refuses (past NAME_MAX bytes) fails only when it is made.
        longest = os.pathconf(where, "PC_NAME_MAX")
        if any(len(part.encode("utf-8", "surrogateescape")) > longest
               for part in target.absolute().relative_to(where).parts):
            raise OSError(errno.ENAMETOOLONG, "File name too long")
    except OSError as exc:
        raise file_error(exc, target, name, "cannot be written") from None
    return target


def check_figure_path(path: str | os.PathLike[str], error: type[Exception], name: str = "path",
                      formats: tuple[str, ...] = FIGURE_FORMATS) -> Path:
    """`path` as a Path when its suffix is one of `formats` (`FIGURE_FORMATS`); otherwise one
    `error` naming the path and the formats. Called before any drawing: matplotlib refuses a
    suffix only at the end, and a path with no suffix on the temporary file's name."""
    target = as_path(path, error, name)
    if target.suffix.lower() not in formats:
        got = f"the suffix {target.suffix!r}" if target.suffix else "no suffix"
        what = "a figure" if formats == FIGURE_FORMATS else "it"
        raise error(f"{name}={str(target)!r} has {got}; {what} is written as one of {', '.join(formats)} "
                    "(the suffix picks the format)")
    return target


def save_figure(figure: Any, path: str | os.PathLike[str], error: type[Exception], name: str = "path",
                **options: Any) -> Path:
    """Save a matplotlib figure to `path` atomically; the one way gpuroof writes a figure.

    The suffix picks the format and must be one of `FIGURE_FORMATS` (`check_figure_path`);
    `options` go to ``figure.savefig`` (``dpi``). Returns the path written.
    """
    target = check_figure_path(path, error, name)
    with atomic_path(target, error, name) as tmp:
        figure.savefig(tmp, format=target.suffix.lower().lstrip("."), **options)
    return target


def dumps_json(data: object) -> str:
    """`data` as indented JSON text with a final newline; NaN and infinities are refused."""
    return json.dumps(data, indent=2, allow_nan=False) + "\n"


def read_text(path: str | os.PathLike[str], error: type[Exception], name: str = "path") -> str:
    """The file's text, strictly UTF-8; a file that is not, or one past `MAX_FILE_BYTES`, is
    one `error` naming it."""
    target = as_path(path, error, name)
    try:
        with open(target, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            if size > MAX_FILE_BYTES:
                raise error(f"{name}={str(target)!r} is {size} bytes; gpuroof reads data files of at most "
                            f"{MAX_FILE_BYTES} bytes")
            # A device or pipe (/dev/zero) reports no size: read at most one byte past the limit.
            raw = handle.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise file_error(exc, target, name, "cannot be read") from None
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


#: The suffixes of a CUDA C++ file (what `occupancy.kernel_resources` compiles rather than reads).
SOURCE_SUFFIXES = (".cu", ".cuh", ".cpp", ".cc", ".cxx")
_TEMPLATE_KERNEL = re.compile(r"template\s*<[^;{]*>\s*(?:static\s+|__launch_bounds__\s*\([^)]*\)\s*)*__global__")


def no_kernel_reason(source: object) -> str:
    """Why a compile gave no kernel, for the line that says so (`occupancy.kernel_resources`,
    ``gpuroof resources``): no ``__global__`` function was compiled, and where the source (its
    text, or a ``.cu``/``.cuh``/``.cpp`` file) defines kernel templates, that a template compiles
    only where it is instantiated.

    >>> no_kernel_reason("template <int N> __global__ void k(float* x) { x[N] = 1; }")[-36:]
    'template __global__ void k<256>(...)'
    """
    text = ""
    if isinstance(source, str) and ("\n" in source or "__global__" in source):
        text = source
    elif isinstance(source, (str, os.PathLike)) and Path(source).suffix in SOURCE_SUFFIXES:
        try:
            text = Path(source).read_text("utf-8", "replace")
        except OSError:
            text = ""  # the compile that found no kernel read it; a hint is all this adds
    reason = "no __global__ function was compiled"
    if _TEMPLATE_KERNEL.search(text):
        reason += ("; its __global__ templates compile only where instantiated (a launch in host code, "
                   "or an explicit instantiation): add one for each instance to read, as "
                   "template __global__ void k<256>(...)")
    return reason
