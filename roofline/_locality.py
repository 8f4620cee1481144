"""Locality heuristics: how much of a launch's traffic the hardware combines, per GPU.

`roofline.memory.traffic` counts bytes exactly; three figures that decide how the hardware groups
them were measured, not derived, and only on the H200: the sectors of one warp store whose
pieces L1 still combines with those of the warps that store right after it, the window of
consecutive blocks whose requests to one DRAM page one opening serves, and the page size.
They live in the ``[locality]`` section of each GPU's facts file
(``roofline/data/gpus/<gpu>.toml``) with their source, which says where they are the H200's
figures assumed; a GPU outside the database (a `custom_gpu`) takes the H200's, said so too.
"""

from __future__ import annotations

import functools

from pydantic import BaseModel, ConfigDict, Field

from ._facts import facts_of, gpu_facts
from ._gpu import GPU

__all__ = ["Locality", "locality"]

#: The GPU whose figures `roofline.memory.traffic` uses when it is given none (the one they were
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
    >>> roofline.memory.locality("H200").page_window_threads
    16384
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    l1_combine_sectors: int = Field(gt=0, description="Sectors of a warp store whose pieces L1 combines.")
    page_window_threads: int = Field(gt=0, description="Threads of the blocks one page opening serves.")
    dram_page_bytes: int = Field(gt=0, description="Bytes of a DRAM page.")
    source: str = Field(min_length=1, description="Where the figures come from.")


# The source of the figures a GPU outside the database takes.
_ASSUMED = "the H200's measured figures, assumed: not measured on this GPU"


@functools.cache
def _packaged(name: str) -> Locality:
    entry = gpu_facts(name)
    if entry.locality is None:
        return _assumed()
    return Locality(**entry.locality)


@functools.cache
def _assumed() -> Locality:
    return _packaged(MEASURED_ON).model_copy(update={"source": _ASSUMED})


def locality(gpu: GPU | str) -> Locality:
    """The locality figures of `gpu` (its facts file's), else the H200's, said so in ``source``.

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
    >>> roofline.memory.locality("H100 SXM").source.startswith("the H200's measured figures, assumed")
    True
    """
    entry = facts_of(gpu)
    return _assumed() if entry is None else _packaged(entry.gpu.name)
