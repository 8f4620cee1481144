"""Writing report files: atomically, and the calibration in one place."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["write_atomic", "write_calibration"]


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file and a rename, so a reader never
    sees half a file and an interrupted run leaves the old one intact."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def write_calibration(calibration: Mapping[str, Any], folder: str | os.PathLike[str]) -> Path:
    """Write ``calibration.json`` (a `roofline.Calibration` as JSON) into `folder`; return its path.

    The one writer of that file: `gpuroof validate` and `gpuroof calibrate` both call it.
    """
    path = Path(folder) / "calibration.json"
    write_atomic(path, json.dumps(dict(calibration), indent=2).encode() + b"\n")
    return path
