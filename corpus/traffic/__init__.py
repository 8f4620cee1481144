"""What a user writes to count a corpus kernel's traffic from its source: one access description per kernel.

For the source path of the corpus (`corpus_report(from_source=True)`) each kernel's global
loads and stores are described here as `roofline.memory.Access` objects, written by reading the
project's source at the corpus's commit (our description of where each thread reads and
writes; none of the project's code), together with the few counts a reader takes off the
source beside them (global atomics, the addresses they update). `roofline.memory.traffic` counts
every launch from them, exactly; the counts are kept beside them
(``corpus/counted_traffic/<project>.json``, made by ``python -m corpus.count_traffic``) so the
report does not recount 600 launches, and a test recounts them.

A description is a function of the `CorpusLaunch` (its shape, grid, block and build
defines) returning a `Description`; one module per project maps kernel ids (the part after
``project/``) to them.
"""

from __future__ import annotations

from . import (
    cuda_programming_fan, cuda_samples, how_to_optimize, learn_cuda, nvidia_code_samples, polybench, rodinia, sgemm, triton,
)
from ._description import COUNT_FIELDS, Describe, Description

__all__ = ["COUNT_FIELDS", "DESCRIPTIONS", "Describe", "Description"]

#: Project name -> kernel id (the part after ``project/``) -> its description.
DESCRIPTIONS: dict[str, dict[str, Describe]] = {
    "cuda-samples": cuda_samples.KERNELS, "PolyBench-GPU": polybench.KERNELS,
    "rodinia": rodinia.KERNELS, "SGEMM_CUDA": sgemm.KERNELS, "triton-tutorials": triton.KERNELS,
    # the exam split (docs/corpus.md): described from the source, checked against Nsight's counts only
    "How_to_optimize_in_GPU": how_to_optimize.KERNELS, "NVIDIA code-samples": nvidia_code_samples.KERNELS,
    "Learn-CUDA-Programming": learn_cuda.KERNELS, "CUDA-Programming (Fan)": cuda_programming_fan.KERNELS,
}
