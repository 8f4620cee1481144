"""The calibration file, written in one place (every file goes through `occupancy._files.write_atomic`)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from occupancy._files import dumps_json, write_atomic
from roofline import RooflineError

__all__ = ["write_calibration"]


def write_calibration(calibration: Mapping[str, Any], folder: str | os.PathLike[str]) -> Path:
    """Write ``calibration.json`` (a `roofline.Calibration` as JSON) into `folder`; return its path.

    The one writer of that file: `gpuroof validate` and `gpuroof calibrate` both call it. Written
    atomically; a NaN or infinite figure is refused, not written.

    Raises
    ------
    RooflineError
        When the calibration holds a NaN or infinite figure.
    """
    try:
        text = dumps_json(dict(calibration))
    except ValueError:
        raise RooflineError("the calibration holds a NaN or infinite figure; it is not written") from None
    return write_atomic(Path(folder) / "calibration.json", text, RooflineError)
