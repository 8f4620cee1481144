"""Results and plots in a real Jupyter kernel: tables for results, an image for a plot.

One kernel start (about 2 s) runs a three-cell notebook; what Jupyter receives is what a
person sees: a result's short text, its Markdown and HTML tables, and a plot as a PNG
rather than ``<Figure size 1300x400 with 3 Axes>``.
"""

from __future__ import annotations

import base64
import os
import pathlib

import pytest

nbformat = pytest.importorskip("nbformat", reason="nbformat not installed (pip install -e '.[test]' in gpuroof's checkout)")
nbclient = pytest.importorskip("nbclient", reason="nbclient not installed (pip install -e '.[test]' in gpuroof's checkout)")
pytest.importorskip("ipykernel", reason="ipykernel not installed (pip install -e '.[test]' in gpuroof's checkout)")

ROOT = pathlib.Path(__file__).resolve().parents[1]

CELLS = {
    "occupancy": 'import occupancy\noccupancy.calculate("sm_90", threads_per_block=256, registers_per_thread=40)',
    "prediction": 'import roofline\nroofline.predict("H200", roofline.models.copy(1 << 26))',
    "plot": 'occupancy.plot_occupancy("sm_90", threads_per_block=256, registers_per_thread=40)',
}


@pytest.fixture(scope="module")
def outputs() -> dict[str, list[dict]]:
    """Each cell's outputs after the notebook ran in a fresh python3 kernel."""
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code) for code in CELLS.values()])
    client = nbclient.NotebookClient(notebook, timeout=120, kernel_name="python3",
                                     resources={"metadata": {"path": str(ROOT)}})
    with pytest.MonkeyPatch.context() as patch:  # the kernel imports this checkout, as the tests do
        patch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
        client.execute()
    return {name: cell.outputs for name, cell in zip(CELLS, notebook.cells)}


def _data(cell_outputs: list[dict]) -> dict:
    """The mime bundle of the cell's value (its execute_result)."""
    results = [o for o in cell_outputs if o["output_type"] == "execute_result"]
    errors = [o for o in cell_outputs if o["output_type"] == "error"]
    assert not errors, errors
    assert len(results) == 1, cell_outputs
    return results[0]["data"]


@pytest.mark.parametrize(("cell", "headline"), [
    ("occupancy", ["blocks_per_sm", "occupancy", "limiter", "registers"]),
    ("prediction", ["time", "limiter", "blocks_per_sm"]),
], ids=["occupancy-result", "prediction"])
def test_result_shows_as_tables_and_short_text(outputs, cell, headline):
    data = _data(outputs[cell])
    markdown, html, text = data.get("text/markdown", ""), data.get("text/html", ""), data["text/plain"]
    assert markdown.count("\n|") >= len(headline), markdown   # a table, one row per headline item
    assert "<table" in html and "<td>" in html
    for label in headline:
        assert f"| {label} |" in markdown
        assert f">{label}<" in html
    # The short repr, not pydantic's dump of every field (a prediction's was 5,677 characters).
    assert len(text) < 300 and "\n" not in text, text


def test_plot_shows_as_one_image(outputs):
    data = _data(outputs["plot"])
    png = base64.b64decode(data["image/png"])
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    # 13 x 4 inches at matplotlib's default 100 dpi: the image is the figure, not a thumbnail.
    width, height = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
    assert (width, height) == (1300, 400)
    shown = [o for o in outputs["plot"] if "image/png" in o.get("data", {})]
    assert len(shown) == 1, "the figure is shown once (pyplot does not hold it too)"
