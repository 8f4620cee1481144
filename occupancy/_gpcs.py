"""GPC layouts of GPUs, packaged as TOML: what thread-block-cluster occupancy depends on."""

from __future__ import annotations

import difflib
import functools
import re
import tomllib
from importlib import resources
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ._errors import OccupancyError

__all__ = ["GpcLayout", "gpc_layout", "gpc_layouts"]


class GpcLayout(BaseModel):
    """The SMs of each GPC of one GPU, as cluster scheduling sees them.

    Examples
    --------
    >>> import occupancy
    >>> g = occupancy.gpc_layout("H200")
    >>> g.sm_count, max(g.sms_per_gpc), g.measured
    (132, 18, True)
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(description='The roofline database name, e.g. "H200".')
    aliases: tuple[str, ...] = Field(default=(), description="Other spellings of the name.")
    compute_capability: str = Field(description='"major.minor", e.g. "9.0".')
    sm_count: int = Field(gt=0)
    sms_per_gpc: tuple[int, ...] = Field(description="SMs of each GPC (cluster-scheduling group).")
    max_blocks_per_sm_in_cluster: int = Field(
        gt=0, description="Blocks of a cluster launch that one SM holds at most."
    )
    max_cluster_size: int = Field(gt=0, description="Largest portable cluster, blocks.")
    max_nonportable_cluster_size: int = Field(
        gt=0, description="Largest cluster with the non-portable attribute, blocks."
    )
    measured: bool = Field(description="False where the layout is an assumption.")
    source: str = Field(min_length=1)

    @model_validator(mode="after")
    def _check(self) -> GpcLayout:
        if sum(self.sms_per_gpc) != self.sm_count or min(self.sms_per_gpc, default=0) <= 0:
            raise ValueError(
                f"GPU {self.name}: sms_per_gpc {list(self.sms_per_gpc)} must be positive and add up "
                f"to sm_count={self.sm_count}"
            )
        if self.max_nonportable_cluster_size < self.max_cluster_size:
            raise ValueError(f"GPU {self.name}: max_nonportable_cluster_size is below max_cluster_size")
        return self


def _key(text: str) -> str:
    # The spelling rule of roofline.gpu: case, spaces and punctuation ignored, a leading
    # NVIDIA/Tesla/GeForce dropped.
    key = re.sub(r"[^a-z0-9]", "", text.lower())
    for prefix in ("nvidia", "tesla", "geforce"):
        key = key.removeprefix(prefix)
    return key


@functools.cache
def _database() -> tuple[GpcLayout, ...]:
    text = resources.files("occupancy").joinpath("data", "gpc_layouts.toml").read_text(encoding="utf-8")
    return tuple(GpcLayout(**entry) for entry in tomllib.loads(text)["gpu"])


@functools.cache
def _index() -> dict[str, GpcLayout]:
    index: dict[str, GpcLayout] = {}
    for entry in _database():
        for spelling in (entry.name, *entry.aliases):
            index.setdefault(_key(spelling), entry)
    return index


def gpc_layouts() -> tuple[GpcLayout, ...]:
    """Every packaged GPC layout.

    Examples
    --------
    >>> import occupancy
    >>> "H200" in [g.name for g in occupancy.gpc_layouts()]
    True
    """
    return _database()


def gpc_layout(gpu: Any) -> GpcLayout:
    """Look up the GPC layout of a GPU by name, with the spellings roofline accepts.

    Parameters
    ----------
    gpu : str or GpcLayout
        ``"H200"``, ``"NVIDIA H200"``, ``"h100 sxm"``, ... (a `GpcLayout` is returned unchanged).

    Returns
    -------
    GpcLayout

    Raises
    ------
    OccupancyError
        For a GPU with no packaged layout; the message lists the known ones.
    TypeError
        For a value of another type.

    Examples
    --------
    >>> import occupancy
    >>> occupancy.gpc_layout("nvidia h200").name
    'H200'
    """
    if isinstance(gpu, GpcLayout):
        return gpu
    if not isinstance(gpu, str):
        raise TypeError(f"gpu must be a GPU name such as 'H200' or a GpcLayout, not {type(gpu).__name__}")
    index = _index()
    key = _key(gpu)
    if key in index:
        return index[key]
    close = difflib.get_close_matches(key, list(index), n=4, cutoff=0.6)
    names = list(dict.fromkeys(index[k].name for k in close))
    hint = f" (did you mean {', '.join(names)}?)" if names else ""
    known = ", ".join(g.name for g in _database())
    raise OccupancyError(
        f"gpu={gpu!r} has no packaged GPC layout{hint}; known: {known}. Pass layout= with the "
        f"SMs of each GPC (validate.measure_gpc_layout measures them on the device)"
    )
