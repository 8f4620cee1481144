"""The figure the plot functions return: a matplotlib Figure that a notebook shows as its image.

Imported only when a plot is drawn (it imports matplotlib): `occupancy.common.figure_class`
is the way in, so ``import occupancy`` and ``import roofline`` stay free of matplotlib.
"""

from __future__ import annotations

import io

from matplotlib.figure import Figure

__all__ = ["InlineFigure"]


class InlineFigure(Figure):
    """A `matplotlib.figure.Figure` with ``_repr_png_``: Jupyter displays it inline.

    The plot functions draw on a Figure that pyplot does not manage (a library must not open
    windows or keep figures alive), so a notebook's inline backend does not see it and its
    text repr (``<Figure size 1500x850 with 2 Axes>``) is all that shows; IPython uses
    ``_repr_png_`` instead. Everything else is matplotlib's Figure.
    """

    def _repr_png_(self) -> bytes:
        """The figure as PNG bytes at its own size and dpi (what ``savefig`` writes)."""
        buffer = io.BytesIO()
        self.savefig(buffer, format="png")
        return buffer.getvalue()
