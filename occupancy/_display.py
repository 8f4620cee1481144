"""How results read: a short repr and notebook tables, declared once per model.

A result model lists its headline (what a person wants first: blocks per SM, occupancy and
limiter; time, limiter and error) as `headline`, a tuple of `shown` items, and, when it
holds a list of results (a suite's rows, the cliffs along each resource), `table_rows`. The
base `Displayed` turns that into ``repr``/``str`` (one line, one more per row), and into
``_repr_markdown_`` and ``_repr_html_`` tables, which Jupyter shows. ``model_dump`` and
the JSON output are pydantic's and do not change.
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, NamedTuple

from pydantic import BaseModel

__all__ = ["REPR_ROWS", "Displayed", "Shown", "joined", "percent", "shown", "si"]

#: Rows a repr lists at most (a time-cliff sweep has dozens); the notebook tables list all.
REPR_ROWS = 20

_PREFIXES = ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"), (1.0, ""), (1e-3, "m"), (1e-6, "µ"), (1e-9, "n"))


def si(unit: str, digits: int = 3) -> Callable[[float], str]:
    """A formatter writing a value in `unit` with an SI prefix: ``si("s")(1.25e-5)`` is ``'12.5 µs'``."""

    def fmt(value: float) -> str:
        value = float(value)
        if not math.isfinite(value) or value == 0:
            return f"{value:g} {unit}"
        for scale, prefix in _PREFIXES:
            if abs(value) >= scale * 0.9995:
                break
        return f"{value / scale:.{digits}g} {prefix}{unit}"

    return fmt


def percent(value: float) -> str:
    """A fraction as a percentage: 0.75 is ``'75%'`` (one decimal below 10 %)."""
    return f"{value:.1%}" if abs(value) < 0.1 else f"{value:.0%}"


def joined(values: Sequence[object]) -> str:
    """Several names as one: ``('registers', 'warps')`` is ``'registers+warps'``; none is ``'-'``."""
    return "+".join(str(v) for v in values) or "-"


class Shown(NamedTuple):
    """One headline item: its label and how to read it from the model (None: not shown)."""

    label: str
    read: Callable[[Any], str | None]


def shown(name: str, fmt: Callable[[Any], str] = str, label: str | None = None) -> Shown:
    """The headline item for attribute `name` (dotted for nested ones), formatted by `fmt`;
    a None value is left out (an error where nothing was measured)."""

    def read(model: object) -> str | None:
        value: Any = model
        for part in name.split("."):
            value = getattr(value, part, None)
            if value is None:
                return None
        return fmt(value)

    return Shown(label or name, read)


class Displayed(BaseModel):
    """Base of the public result models: a short repr and notebook tables from `headline`.

    Subclasses set `headline` (a tuple of `shown` items) and, to list sub-results one per
    line and table row, `table_rows` (a function of the model returning `Displayed` items).
    """

    headline: ClassVar[tuple[Shown, ...]] = ()
    table_rows: ClassVar[Callable[[Any], Sequence[Displayed]] | None] = None

    def headline_items(self) -> list[tuple[str, str]]:
        """The headline as (label, text) pairs, the items with no value left out."""
        items = []
        for item in type(self).headline:
            try:
                text = item.read(self)
            except (TypeError, ValueError, AttributeError):  # a repr must not raise (model_construct data)
                text = "?"
            if text is not None:
                items.append((item.label, text))
        return items

    def _row_items(self) -> Sequence[Displayed]:
        rows = type(self).table_rows
        return () if rows is None else tuple(rows(self))

    def _line(self) -> str:
        inner = ", ".join(f"{label}={text}" for label, text in self.headline_items())
        return f"{type(self).__name__}({inner})"

    def __repr__(self) -> str:
        rows = self._row_items()
        lines = [self._line()]
        lines += ["  " + ", ".join(f"{k}={v}" for k, v in row.headline_items()) for row in rows[:REPR_ROWS]]
        if len(rows) > REPR_ROWS:
            lines.append(f"  ... {len(rows) - REPR_ROWS} more rows (the notebook table and model_dump() have all)")
        return "\n".join(lines)

    __str__ = __repr__

    def _table(self) -> tuple[list[tuple[str, str]], list[str], list[list[str]]]:
        """The headline pairs, and the rows' header and cells (every row's labels, in order)."""
        rows = [dict(row.headline_items()) for row in self._row_items()]
        header: list[str] = []
        for row in rows:
            header += [label for label in row if label not in header]
        return self.headline_items(), header, [[row.get(label, "-") for label in header] for row in rows]

    def _repr_markdown_(self) -> str:
        def cell(text: str) -> str:
            return text.replace("|", "\\|")

        pairs, header, cells = self._table()
        lines = [f"**{type(self).__name__}**", "", "| | |", "|---|---|"]
        lines += [f"| {cell(k)} | {cell(v)} |" for k, v in pairs]
        if header:
            lines += ["", "| " + " | ".join(map(cell, header)) + " |", "|" + "---|" * len(header)]
            lines += ["| " + " | ".join(map(cell, row)) + " |" for row in cells]
        return "\n".join(lines) + "\n"

    def _repr_html_(self) -> str:
        e = html.escape
        pairs, header, cells = self._table()
        parts = [f"<table><caption>{e(type(self).__name__)}</caption>"]
        parts += [f"<tr><th style='text-align:left'>{e(k)}</th><td>{e(v)}</td></tr>" for k, v in pairs]
        parts.append("</table>")
        if header:
            parts.append("<table><tr>" + "".join(f"<th>{e(h)}</th>" for h in header) + "</tr>")
            parts += ["<tr>" + "".join(f"<td>{e(c)}</td>" for c in row) + "</tr>" for row in cells]
            parts.append("</table>")
        return "".join(parts)
