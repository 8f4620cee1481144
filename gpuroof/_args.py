"""Argument helpers shared by the subcommand modules: JSON output and ``--param KEY=VALUE``."""

from __future__ import annotations

import json
from typing import Any

import roofline
from occupancy._files import check_writable

__all__ = ["output_file", "output_folder", "params", "print_json"]


def print_json(data: Any) -> None:
    """Print `data` as indented JSON."""
    print(json.dumps(data, indent=2))


def _parse_value(text: str) -> Any:
    """'12' -> 12, '1.5' -> 1.5, '16,16' -> (16, 16), 'true' -> True, otherwise the text."""
    lowered = text.lower()
    if lowered in {"true", "false"}:
        return lowered == "true"
    if "," in text:
        return tuple(_parse_value(part) for part in text.split(","))
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return text


def params(pairs: list[str] | None) -> dict[str, Any]:
    """``["n=1024", "block=16,16"]`` -> ``{"n": 1024, "block": (16, 16)}``."""
    out = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise roofline.RooflineError(f"--param {pair!r} must be KEY=VALUE, e.g. --param n=1048576")
        out[key.strip().replace("-", "_")] = _parse_value(value.strip())
    return out


def output_file(path: str, option: str) -> None:
    """Refuse an output file that cannot be written, before any work (one clear error)."""
    check_writable(path, roofline.RooflineError, name=option)


def output_folder(path: str, option: str) -> None:
    """Refuse an output folder that cannot be written, before any work (one clear error)."""
    check_writable(path, roofline.RooflineError, folder=True, name=option)
