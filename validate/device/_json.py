"""The JSON object report.json and calibration.json hold, as every layer of validate types it."""

from __future__ import annotations

from typing import Any

__all__ = ["JsonDict"]

#: A JSON object as report.json and calibration.json hold it. Its values stay `Any` on purpose
#: (the one such place in validate): a run fills them from numpy scalars and tuples, which
#: `pydantic.JsonValue` refuses, and they become JSON only when written.
JsonDict = dict[str, Any]
