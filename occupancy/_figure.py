"""The figure the plot functions return: a matplotlib Figure that a notebook shows as its image.

`figure_class` imports matplotlib when a plot is drawn, not before, so ``import occupancy`` and
``import roofline`` stay free of it (`occupancy.common` re-exports it).
"""

from __future__ import annotations

import functools
import io

__all__ = ["InlinePng", "figure_class"]


class InlinePng:
    """The ``_repr_png_`` of `figure_class`'s Figure: Jupyter displays the figure inline.

    The plot functions draw on a Figure that pyplot does not manage (a library must not open
    windows or keep figures alive), so a notebook's inline backend does not see it and its
    text repr (``<Figure size 1500x850 with 2 Axes>``) is all that shows; IPython uses
    ``_repr_png_`` instead.
    """

    def _repr_png_(self) -> bytes:
        """The figure as PNG bytes at its own size and dpi (what ``savefig`` writes)."""
        buffer = io.BytesIO()
        self.savefig(buffer, format="png")  # type: ignore[attr-defined]
        return buffer.getvalue()


@functools.cache
def figure_class() -> type:
    """The `matplotlib.figure.Figure` subclass every plot function returns, ``InlineFigure``: a
    notebook shows it as its image (`InlinePng`); everything else is matplotlib's Figure. Imports
    matplotlib, so only a plot function calls it."""
    from matplotlib.figure import Figure

    return type("InlineFigure", (InlinePng, Figure), {"__module__": __name__, "__doc__": figure_class.__doc__})
