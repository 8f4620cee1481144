"""The corpus's dev and exam split: which projects may shape the model, and which only test it.

The rule (docs/corpus.md, "Dev and exam"), fixed on `SPLIT_FIXED` before any change to the time
model that followed it: the projects in `DEV_PROJECTS` are the dev split; every project added
to the corpus after them is the exam split. A project's split follows from its name alone, so a
new measurement file is exam without anyone marking it.

>>> split_of("SGEMM_CUDA"), split_of("a project measured later")
('dev', 'exam')
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from roofline import RooflineError

from ._project import CorpusProject

__all__ = ["DEV_PROJECTS", "SPLITS", "SPLIT_FIXED", "Split", "projects_of_split", "split_of"]

#: The day the rule was written down (docs/corpus.md, "Dev and exam").
SPLIT_FIXED = "2026-12-06"

#: The five projects measured before `SPLIT_FIXED`, as their measurement files name them
#: (`CorpusProject.project`; compared without case).
DEV_PROJECTS = frozenset({"cuda-samples", "polybench-gpu", "rodinia", "sgemm_cuda", "triton-tutorials"})

Split = Literal["dev", "exam"]

#: The splits, in the order reports show them.
SPLITS: tuple[Split, ...] = ("dev", "exam")


def split_of(project: str) -> Split:
    """``"dev"`` for a project of `DEV_PROJECTS` (its name, any case), else ``"exam"``.

    Raises
    ------
    TypeError
        ``project`` is not a str.
    """
    if not isinstance(project, str):
        raise TypeError(f"project must be a str (a CorpusProject's name), not {type(project).__name__}")
    return "dev" if project.lower() in DEV_PROJECTS else "exam"


def projects_of_split(projects: Sequence[CorpusProject], split: str, *, gpu: str = "") -> tuple[CorpusProject, ...]:
    """The projects of one split (``"dev"``, ``"exam"``), or all of them (``"all"``).

    Parameters
    ----------
    projects : sequence of CorpusProject
        From `load_corpus`.
    split : str
        ``"dev"``, ``"exam"`` or ``"all"``.
    gpu : str
        The corpus's GPU, named in the error.

    Raises
    ------
    TypeError
        ``split`` is not a str, or ``projects`` holds something other than CorpusProject.
    RooflineError
        ``split`` is none of those, or no project of ``projects`` is in it (the exam split
        before any project was added after the dev ones).
    """
    if not isinstance(split, str):
        raise TypeError(f"split must be a str ({', '.join(SPLITS)} or all), not {type(split).__name__}")
    if isinstance(projects, (str, bytes)) or not all(isinstance(p, CorpusProject) for p in projects):
        raise TypeError("projects must be a sequence of CorpusProject (from load_corpus)")
    if split not in (*SPLITS, "all"):
        raise RooflineError(f"split={split!r} is not a split; splits: {', '.join(SPLITS)}, all")
    if split == "all":
        return tuple(projects)
    chosen = tuple(p for p in projects if split_of(p.project) == split)
    if not chosen:
        where = f" on the {gpu}" if gpu else ""
        rule = ("every project added to the corpus after the five dev projects fixed on " + SPLIT_FIXED
                if split == "exam" else "the five projects fixed on " + SPLIT_FIXED)
        raise RooflineError(f"no {split} project is measured{where} yet: the {split} split holds {rule} "
                            "(docs/corpus.md)")
    return chosen
