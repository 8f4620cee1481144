"""The measured corpus: other projects' kernels, timed and profiled on a GPU, against the model.

It lives in the repository, not in the installed package: the measurements, one file per
project and GPU (``measurements/<gpu>/<project>.json``, a `CorpusProject`); the access
description of every kernel (`corpus.traffic`) and the traffic counted from them
(``counted_traffic/<project>.json``); the code that reads them and reports the model's error
(`corpus_report`, `format_corpus_report`, `plot_corpus`), split into the dev projects, which
may shape the model, and the exam projects added after them, which only test it (`split_of`). It uses occupancy and roofline
from outside, as a user does; ``gpuroof corpus`` loads it from a checkout.

>>> import corpus
>>> corpus.corpus_gpus()
('h100-sxm', 'h200')
"""

from ._format import format_corpus_report, plot_corpus
from ._project import (
    CORPUS_METRICS,
    CorpusKernel,
    CorpusLaunch,
    CorpusProject,
    corpus_gpus,
    corpus_metrics,
    load_corpus,
    write_corpus_project,
)
from ._report import CorpusReport, CorpusRow, CorpusSplit, corpus_report
from ._split import DEV_PROJECTS, SPLIT_FIXED, SPLITS, projects_of_split, split_of

__all__ = [
    "CORPUS_METRICS",
    "CorpusKernel",
    "CorpusLaunch",
    "CorpusProject",
    "CorpusReport",
    "CorpusRow",
    "CorpusSplit",
    "DEV_PROJECTS",
    "SPLITS",
    "SPLIT_FIXED",
    "corpus_gpus",
    "corpus_metrics",
    "corpus_report",
    "format_corpus_report",
    "load_corpus",
    "plot_corpus",
    "projects_of_split",
    "split_of",
    "write_corpus_project",
]
