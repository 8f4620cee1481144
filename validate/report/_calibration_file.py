"""The calibration file, written in one place (every file goes through `occupancy.common.write_atomic`)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from occupancy.common import as_path, dumps_json, pydantic_error, write_atomic
from pydantic import ValidationError
from roofline import Calibration, RooflineError

__all__ = ["write_calibration"]


def write_calibration(calibration: Mapping[str, object], folder: str | os.PathLike[str]) -> Path:
    """Write ``calibration.json`` (a `roofline.Calibration` as JSON) into `folder`; return its path.

    The one writer of that file: `gpuroof validate` and `gpuroof calibrate` both call it. Written
    atomically; only a valid calibration is written (a NaN or infinite figure, an unknown
    field or a wrong type is refused), so every file it writes reads back with
    `roofline.load_calibration`.

    Raises
    ------
    TypeError
        When `calibration` is not a mapping or `folder` not a path.
    RooflineError
        When the calibration is not a valid `roofline.Calibration` (the message names the field).
    """
    if not isinstance(calibration, Mapping):
        raise TypeError(f"calibration must be a mapping (a Calibration as a dict), not {type(calibration).__name__}")
    target = as_path(folder, RooflineError, "folder") / "calibration.json"
    try:
        valid = Calibration.model_validate(dict(calibration))
    except ValidationError as exc:
        raise pydantic_error(exc, RooflineError, "the calibration is not written") from None
    return write_atomic(target, dumps_json(valid.model_dump(mode="json", exclude_unset=True)), RooflineError)
