"""The traffic each corpus launch moves, counted from its access description.

`roofline.memory.traffic` counts every launch of a described kernel (`corpus.traffic`) exactly; the
counts are kept in ``corpus/counted_traffic/<project>.json`` (the shapes are the same on every
GPU) so the source path of `corpus_report` does not recount 600 launches.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError

from occupancy.common import as_path, dumps_json, pydantic_error, read_json, write_atomic
from roofline import RooflineError, Traffic
from roofline.memory import traffic as count_traffic

from ._project import _FROZEN, CorpusKernel, CorpusLaunch, CorpusProject, _slug
from .traffic import DESCRIPTIONS, Describe

__all__ = ["CorpusTraffic", "SourceCounts", "count_corpus_traffic", "load_corpus_traffic", "write_corpus_traffic"]

#: Where the counts live: one file per project.
_DIRECTORY = Path(__file__).parent / "counted_traffic"


class SourceCounts(BaseModel):
    """One launch's traffic as `roofline.memory.traffic` counts it from the kernel's access description."""

    model_config = _FROZEN

    traffic: Traffic
    counts: dict[str, float] = Field(default_factory=dict, description=(
        "Counts read off the source beside the accesses (`corpus.traffic.COUNT_FIELDS`: atomics, "
        "the addresses they update, barriers per block, shared-memory wavefronts)."))


class CorpusTraffic(BaseModel):
    """The counted traffic of every described launch of one project (the same on every GPU)."""

    model_config = _FROZEN

    project: str = Field(min_length=1)
    described_in: str = Field(description="The module holding the access descriptions.")
    launches: dict[str, dict[str, SourceCounts]] = Field(
        description="Kernel id -> launch shape -> its counts.")


def count_corpus_traffic(project: CorpusProject, *,
                         progress: Callable[[int, int], None] | None = None) -> CorpusTraffic | None:
    """Count every launch of ``project`` whose kernel has an access description.

    Each description (`corpus.traffic`) gives the launch's global accesses and
    the counts read off the source beside them; `roofline.memory.traffic` counts the launch from
    them. Returns None when no kernel of the project is described.

    ``progress``, if given, is called with ``(done, total)`` after each launch.
    """
    if not isinstance(project, CorpusProject):
        raise TypeError(f"project must be a CorpusProject, not {type(project).__name__}")
    described = DESCRIPTIONS.get(project.project)
    if not described:
        return None
    todo = [(k, launch) for k in project.kernels for launch in k.launches if k.short_id in described]
    launches: dict[str, dict[str, SourceCounts]] = {}
    for i, (k, launch) in enumerate(todo):
        launches.setdefault(k.id, {})[launch.shape] = _count_launch(described[k.short_id], k, launch)
        if progress is not None:
            progress(i + 1, len(todo))
    module = described[next(iter(described))].__module__
    return CorpusTraffic(project=project.project, described_in=module, launches=launches)


def _count_launch(describe: Describe, kernel: CorpusKernel, launch: CorpusLaunch) -> SourceCounts:
    d = describe(launch)
    try:
        counted = count_traffic(launch.grid, launch.block, d.accesses, exhaustive=d.exhaustive)
    except RooflineError as exc:
        raise RooflineError(f"{kernel.id} [{launch.shape}]: {exc}") from None
    return SourceCounts(traffic=counted, counts={n: float(v) for n, v in d.counts.items()})


def write_corpus_traffic(counted: CorpusTraffic, directory: str | os.PathLike[str] | None = None) -> Path:
    """Write ``directory/<project>.json`` (default ``corpus/counted_traffic``) atomically; returns the path."""
    if not isinstance(counted, CorpusTraffic):
        raise TypeError(f"counted must be a CorpusTraffic, not {type(counted).__name__}")
    root = as_path(directory, RooflineError, "directory") if directory is not None else _DIRECTORY
    return write_atomic(root / f"{_slug(counted.project)}.json", dumps_json(counted.model_dump(mode="json")),
                        RooflineError, "directory")


def load_corpus_traffic(project: str, directory: str | os.PathLike[str] | None = None) -> CorpusTraffic | None:
    """The counted traffic of ``project`` (its name), or None where none was counted."""
    if not isinstance(project, str):
        raise TypeError(f"project must be a str, not {type(project).__name__}")
    root = as_path(directory, RooflineError, "directory") if directory is not None else _DIRECTORY
    path = root / f"{_slug(project)}.json"
    if not path.is_file():
        return None
    try:
        return CorpusTraffic.model_validate(read_json(path, RooflineError))
    except ValidationError as exc:
        raise pydantic_error(exc, RooflineError, f"{path}") from None
