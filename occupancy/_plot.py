"""Occupancy plots (matplotlib is imported here, lazily, never by ``import occupancy``)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import numpy as np

from ._arch import ArchitectureLike
from ._cliffs import swept
from ._errors import OccupancyError
from ._launch import Launch, launch_of
from .common import FIGURE_FORMATS, check_figure_path, figure_class, save_figure

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["PLOT_FORMATS", "plot_occupancy"]

#: File suffixes `plot_occupancy` writes (every figure gpuroof writes takes these).
PLOT_FORMATS = FIGURE_FORMATS

_PANELS = (
    ("threads_per_block", "threads per block", 1),
    ("registers", "registers per thread", 1),
    ("shared_memory", "shared memory per block (KiB)", 1024),
)


def plot_occupancy(
    arch: ArchitectureLike,
    launch: Launch | None = None,
    *,
    partitioned_global_caching: str | bool = "off",
    path: str | os.PathLike[str] | None = None,
    **fields: object,
) -> Figure:
    """Plot occupancy against block size, registers per thread and shared memory.

    Each panel sweeps one resource with the others fixed (as :func:`occupancy.cliffs`
    does), draws occupancy as a step curve so the cliffs show as drops, and marks
    the current configuration with a dot and a dashed line.

    Parameters
    ----------
    arch, launch, partitioned_global_caching, **fields
        As in :func:`occupancy.calculate`.
    path : str or os.PathLike, optional
        Where to save the figure: ``.png``, ``.svg`` or ``.pdf`` (the format follows the
        suffix). Written atomically: an interrupted run leaves the previous file intact.

    Returns
    -------
    matplotlib.figure.Figure
        A Figure that a Jupyter notebook displays inline as its image (``_repr_png_``).

    Raises
    ------
    OccupancyError
        For a launch `occupancy.calculate` refuses, or a `path` of another format.
    ImportError
        If matplotlib is not installed.
    """
    if path is not None:
        check_figure_path(path, OccupancyError)
    try:
        import matplotlib

        if path is not None and not os.environ.get("MPLBACKEND"):
            matplotlib.use("Agg", force=False)
        Figure = figure_class()
    except ImportError as exc:  # pragma: no cover - matplotlib is a dependency
        raise ImportError("plot_occupancy needs matplotlib: pip install matplotlib") from exc

    arch, data, current = swept(arch, launch_of("plot_occupancy", launch, fields), partitioned_global_caching)
    fig = Figure(figsize=(13, 4), layout="constrained")
    axes = fig.subplots(1, 3, sharey=True)
    for ax, (key, label, scale) in zip(axes, _PANELS):
        values, out = data[key]
        occ = out.occupancy * 100
        x = values / scale
        ax.step(x, occ, where="post", color="tab:blue", lw=1.5)
        if key != "threads_per_block":  # block size changes occupancy at every warp
            for j in (np.flatnonzero(occ[1:] < occ[:-1]) + 1):
                ax.axvline(x[j], color="0.6", lw=0.6, ls=":")
        here = int(current[key])
        i = int(here - values[0])
        ax.axvline(here / scale, color="tab:red", ls="--", lw=1)
        ax.plot([here / scale], [occ[i]], "o", color="tab:red", label=f"current: {here / scale:.4g}")
        ax.set_xlabel(label)
        ax.set_xlim(x[0], x[-1])
        ax.set_ylim(0, 105)
        ax.grid(alpha=0.3)
        ax.legend(loc="upper right", fontsize="small")
    axes[0].set_ylabel("occupancy (%)")
    fig.suptitle(
        f"{arch.name}: {current['threads_per_block']} threads, {current['registers']} registers, "
        f"{current['shared_memory']} B shared memory per block"
    )
    if path is not None:
        save_figure(fig, path, OccupancyError, dpi=120)
    return fig
