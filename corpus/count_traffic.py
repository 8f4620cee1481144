"""Recount the corpus's traffic from the access descriptions (corpus/traffic/) and write
corpus/counted_traffic/<project>.json; run from the repository's root:

    python -m corpus.count_traffic [PROJECT ...] [--gpu GPU]

The shapes are the same on every GPU, so one GPU's corpus gives the launches: the H200's unless
``--gpu`` names another (a project measured on one GPU only names it).
"""

from __future__ import annotations

import sys
import time

from ._counted import count_corpus_traffic, write_corpus_traffic
from ._project import load_corpus
from .check_traffic import gpu_option


def main(argv: list[str]) -> int:
    gpu, names = gpu_option(argv)
    for project in load_corpus(gpu):
        if names and project.project not in names:
            continue
        start = time.perf_counter()
        counted = count_corpus_traffic(
            project, progress=lambda i, n: print(f"\r{project.project}: {i}/{n}", end="", file=sys.stderr))
        if counted is None:
            print(f"{project.project}: no kernel described", file=sys.stderr)
            continue
        path = write_corpus_traffic(counted)
        print(f"\n{project.project}: {sum(map(len, counted.launches.values()))} launches of "
              f"{len(counted.launches)} kernels in {time.perf_counter() - start:.0f} s -> {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
