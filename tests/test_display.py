"""Results read well: a short repr with the headline first, notebook tables, dumps unchanged."""

from __future__ import annotations

import html
import json

import pytest

import occupancy
import roofline
from occupancy.common import Displayed, joined, percent, si
from roofline import models


def _results() -> dict[str, Displayed]:
    launch = dict(threads_per_block=256, registers_per_thread=40)
    return {
        "occupancy": occupancy.calculate("sm_90", **launch),
        "block_size": occupancy.max_potential_block_size("sm_90", registers_per_thread=40),
        "cliffs": occupancy.cliffs("sm_90", **launch),
        "roofline": roofline.analyze("H100 SXM", models.matmul_naive(4096)),
        "prediction": roofline.predict("H200", models.copy(1 << 26)),
        "time_cliffs": roofline.cliffs.time_cliffs("H200", models.copy(1 << 26)),
        "suite": roofline.suite.analyze_suite("H100 SXM", [models.copy(1 << 26), models.matmul_tiled(1024, tile=32)]),
    }


RESULTS = _results()

# What a person wants first, as it must read in the repr (the values follow from the launch:
# 40 registers x 256 threads on sm_90 hold 6 blocks, 48 of 64 warps).
HEADLINES = {
    "occupancy": ["blocks_per_sm=6", "occupancy=75%", "limiter=registers"],
    "block_size": ["block_size=", "occupancy="],
    "cliffs": ["blocks_per_sm=6", "occupancy=75%", "resource=registers", "resource=shared_memory", "gain=-8"],
    "roofline": ["bound=memory (l2)", "attainable=", "FLOP/s", "time_lower_bound="],
    "prediction": ["time=", "limiter=", "blocks_per_sm="],
    "time_cliffs": ["time=", "limiter=", "resource=registers"],
    "suite": ["kernels=2", "kernel=copy", "occupancy_limiter="],
}


@pytest.mark.parametrize("name", list(RESULTS), ids=list(RESULTS))
def test_repr_is_short_and_leads_with_the_headline(name):
    result = RESULTS[name]
    text = repr(result)
    assert text == str(result)
    assert text.startswith(type(result).__name__ + "(")
    for piece in HEADLINES[name]:
        assert piece in text, text
    # pydantic's repr listed every field (906 characters for an occupancy result, 5,677 for
    # a prediction); the first line now fits a terminal and each row adds one line.
    lines = text.splitlines()
    assert len(lines[0]) <= 200, lines[0]
    assert all(len(line) <= 200 for line in lines)
    assert len(lines) <= 1 + 20 + 1


@pytest.mark.parametrize("name", list(RESULTS), ids=list(RESULTS))
def test_notebook_tables_hold_the_headline_and_every_row(name):
    result = RESULTS[name]
    markdown, page = result._repr_markdown_(), result._repr_html_()
    rows = type(result).table_rows(result) if type(result).table_rows else ()
    for label, value in result.headline_items():
        assert f"| {label} | {value.replace('|', chr(92) + '|')} |" in markdown
        assert f"<th style='text-align:left'>{html.escape(label)}</th><td>{html.escape(value)}</td>" in page
    # A header, a rule and one line per row; the HTML table has a <tr> per row and the header.
    if rows:
        assert markdown.rstrip("\n").split("\n\n")[-1].count("\n") == len(rows) + 1
        assert page.split("</table>")[1].count("<tr>") == len(rows) + 1


@pytest.mark.parametrize("name", list(RESULTS), ids=list(RESULTS))
def test_dumps_hold_fields_only(name):
    """The display is declared on the class: model_dump and the JSON keep exactly the fields."""
    result = RESULTS[name]
    assert set(result.model_dump()) == set(type(result).model_fields)
    assert set(json.loads(result.model_dump_json())) == set(type(result).model_fields)


def test_repr_cuts_long_row_lists():
    cliffs = RESULTS["time_cliffs"]
    assert len(cliffs.cliffs) > 20
    lines = repr(cliffs).splitlines()
    assert lines[-1] == f"  ... {len(cliffs.cliffs) - 20} more rows (the notebook table and model_dump() have all)"
    assert cliffs._repr_markdown_().count("| registers |") == sum(c.resource == "registers" for c in cliffs.cliffs)


def test_missing_values_are_left_out():
    """An error where nothing was measured, a reason where the launch fits: not shown as None."""
    text = repr(RESULTS["occupancy"])
    assert "None" not in text and "reason" not in text


@pytest.mark.parametrize(("fmt", "value", "text"), [
    (si("s"), 1.25e-5, "12.5 µs"),
    (si("s"), 0.0329, "32.9 ms"),
    (si("s"), 2.0, "2 s"),
    (si("FLOP/s"), 3.35e12, "3.35 TFLOP/s"),
    (si("FLOP/s"), 999.96e9, "1 TFLOP/s"),  # rounds up into the next prefix, not "1e+03 GFLOP/s"
    (si("B"), 0.0, "0 B"),
    (percent, 0.75, "75%"),
    (percent, 0.062, "6.2%"),
    (joined, ("warps", "registers"), "warps+registers"),
    (joined, (), "-"),
], ids=["us", "ms", "s", "tflops", "round-up", "zero", "pct", "small-pct", "joined", "none"])
def test_formatters(fmt, value, text):
    assert fmt(value) == text
