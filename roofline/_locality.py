"""Locality heuristics: how much of a launch's traffic the hardware combines, per GPU.

`roofline.traffic` counts bytes exactly; three figures that decide how the hardware groups
them were measured, not derived, and only on the H200: the sectors of one warp store whose
pieces L1 still combines with those of the warps that store right after it, the window of
consecutive blocks whose requests to one DRAM page one opening serves, and the page size.
They live in ``roofline/data/locality.toml`` with their source; a GPU without an entry of
its own takes the generic one, whose source says it is the H200's figure assumed.
"""

from __future__ import annotations

import functools
import tomllib
from importlib import resources

from pydantic import BaseModel, ConfigDict, Field

from ._gpu import GPU
from ._gpu import gpu as _lookup_gpu

__all__ = ["Locality", "locality"]

#: The GPU whose figures `roofline.traffic` uses when it is given none (the one they were
#: measured on).
MEASURED_ON = "H200"


class Locality(BaseModel):
    """The locality figures of one GPU, with their source.

    Attributes
    ----------
    l1_combine_sectors : int
        Sectors of one warp store whose pieces L1 still combines with those of the warps
        storing right after it (the pieces of one sector arrive that many apart).
    page_window_threads : int
        Threads of the window of consecutive blocks, in launch order, whose requests to one
        DRAM page one opening serves.
    dram_page_bytes : int
        Bytes of a DRAM page (the row one activation opens).
    source : str
        Where the figures come from (measured, or assumed from another GPU).

    Examples
    --------
    >>> import roofline
    >>> roofline.locality("H200").page_window_threads
    16384
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    l1_combine_sectors: int = Field(gt=0, description="Sectors of a warp store whose pieces L1 combines.")
    page_window_threads: int = Field(gt=0, description="Threads of the blocks one page opening serves.")
    dram_page_bytes: int = Field(gt=0, description="Bytes of a DRAM page.")
    source: str = Field(min_length=1, description="Where the figures come from.")


@functools.cache
def _table() -> dict[str, Locality]:
    text = resources.files("roofline").joinpath("data/locality.toml").read_text("utf-8")
    return {name: Locality(**entry) for name, entry in tomllib.loads(text).items()}


def locality(gpu: GPU | str) -> Locality:
    """The locality figures of `gpu`: its own entry, else the H200's, said so in ``source``.

    Parameters
    ----------
    gpu : GPU or str
        The GPU (its record, or any name `roofline.gpu` resolves).

    Returns
    -------
    Locality
        Its ``source`` says whether the figures were measured on that GPU.

    Raises
    ------
    RooflineError
        If the GPU is unknown.

    Examples
    --------
    >>> import roofline
    >>> roofline.locality("H100 SXM").source.startswith("the H200's measured figures, assumed")
    True
    """
    table = _table()
    return table.get(_lookup_gpu(gpu).name, table["generic"])
