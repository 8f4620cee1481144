"""The corpus's source path: access descriptions, their counted traffic, and the prediction from them."""

from __future__ import annotations

import os

import pytest

import corpus._report as report_module
import roofline
from corpus import corpus_report, format_corpus_report, load_corpus
from corpus._counted import CorpusTraffic, SourceCounts, _count_launch, load_corpus_traffic
from corpus._report import _ncu_kernel
from corpus.traffic import COUNT_FIELDS, DESCRIPTIONS, Description
from corpus.traffic._description import defines, tokens

from .test_report import corpus  # noqa: F401 - the synthetic corpus fixture

# Every project, from the H200 where it was measured there (the shapes are the same on every GPU; the
# exam split's projects are measured on the H100 SXM only).
MEASURED = {p.project: p for gpu in ("h100-sxm", "h200") for p in load_corpus(gpu)}


def _smallest(kernel):
    return min(kernel.launches, key=lambda launch: (launch.grid[0] * launch.grid[1] * launch.grid[2], launch.shape))


DESCRIBED = [(name, kernel) for name, table in DESCRIPTIONS.items() for kernel in MEASURED[name].kernels
             if kernel.id.split("/", 1)[-1] in table]
# The recounts that take more than 0.4 s of CPU each (0.4-3 s, where every other kernel's takes
# under 0.35 s): over half the file's cost, recounted under GPUROOF_TEST_FULL=1 (make test-full).
FULL = os.environ.get("GPUROOF_TEST_FULL") == "1"
COSTLY_RECOUNTS = frozenset({"PolyBench-GPU/CORR.corr_kernel", "PolyBench-GPU/COVAR.covar_kernel",
                             "PolyBench-GPU/GRAMSCHM.gramschmidt_kernel3", "PolyBench-GPU/GESUMMV.gesummv_kernel",
                             "PolyBench-GPU/CORR.std_kernel", "PolyBench-GPU/ATAX.atax_kernel1",
                             "PolyBench-GPU/BICG.bicg_kernel2", "PolyBench-GPU/MVT.mvt_kernel1",
                             "PolyBench-GPU/GEMVER.gemver_kernel3"})


def test_every_description_names_a_corpus_kernel():
    for name, table in DESCRIPTIONS.items():
        ids = {k.id.split("/", 1)[-1] for k in MEASURED[name].kernels}
        assert set(table) <= ids, f"{name}: described but not in the corpus: {sorted(set(table) - ids)}"


@pytest.mark.parametrize(("name", "kernel"), DESCRIBED, ids=[k.id for _, k in DESCRIBED])
def test_packaged_counts_are_the_descriptions(name, kernel):
    """Every launch of a described kernel has packaged counts, and recounting its smallest
    launch from the description gives them exactly (a description changed without
    ``python -m corpus.count_traffic`` fails here)."""
    packaged = load_corpus_traffic(name)
    assert packaged is not None, f"no packaged counts for {name}: run python -m corpus.count_traffic"
    table = packaged.launches.get(kernel.id, {})
    assert {launch.shape for launch in kernel.launches} <= set(table)
    if kernel.id in COSTLY_RECOUNTS and not FULL:
        pytest.skip("a recount of 0.4 s or more: sampled out of the default run (GPUROOF_TEST_FULL=1, make test-full)")
    launch = _smallest(kernel)
    recounted = _count_launch(DESCRIPTIONS[name][kernel.id.split("/", 1)[-1]], kernel, launch)
    assert recounted == table[launch.shape]
    assert set(recounted.counts) <= set(COUNT_FIELDS)


@pytest.mark.parametrize(("shape", "expected"), [
    ("n=512 block=32x8", {"n": "512", "block": "32x8"}),
    ("1024x1024 tile=32 rows=16", {"tile": "32", "rows": "16"}),
    ("1 MiB", {}),
])
def test_tokens(shape, expected):
    assert tokens(shape) == expected


def test_defines_keep_integers_only():
    assert defines(("-DNI=512", "-DNAME=abc", "-O3", "-DN=-4")) == {"NI": 512, "N": -4}


def test_a_description_refuses_counts_it_does_not_know():
    with pytest.raises(ValueError, match="instructions"):
        Description(accesses=(), counts={"instructions": 5.0})


def test_from_source_predicts_from_the_counted_traffic(corpus, monkeypatch):  # noqa: F811
    """A launch with counted traffic is `predict` of the traffic's kernel (its bytes at every
    level, the footprint), the shared-memory wavefronts joining the global ones in l1_bytes,
    the loads per thread the counted load bytes over the SASS's load width; the row says so."""
    alpha = corpus[0]
    copy = alpha.kernels[0]
    launch = copy.launches[1]
    n = launch.grid[0] * launch.block[0]
    counted = roofline.memory.traffic(launch.grid, launch.block, [
        roofline.memory.Access(array="x", index=lambda c: c.x, guard=lambda c: c.x < n),
        roofline.memory.Access(array="y", index=lambda c: c.x, guard=lambda c: c.x < n, kind="store")])
    counts = SourceCounts(traffic=counted, counts={"shared_wavefronts": 1000.0})
    table = CorpusTraffic(project="alpha", described_in="test", launches={copy.id: {launch.shape: counts}})
    monkeypatch.setattr(report_module, "load_corpus_traffic", lambda name, directory=None: table if name == "alpha" else None)
    report = corpus_report([alpha], gpu="h200", from_source=True)
    row = next(r for r in report.rows if r.shape == launch.shape)
    assert row.counted_from == "traffic"
    assert all(r.counted_from is None for r in report.rows if r is not row)  # no buffer bytes either
    k = _ncu_kernel(alpha, copy, launch, 0)
    events = roofline.calibration("h200").model_copy(update={"nsight_empty_kernel_seconds": None})
    run = roofline._adapters.measured_launch(k.grid, k.block, registers_per_thread=k.registers_per_thread,
                                              static_shared_memory=0, dynamic_shared_memory=0, elements_per_thread=1)
    expected = roofline.predict("h200", counted.kernel(name=k.name, flops=0.0, launch=run,
                                                       l1_bytes=counted.l1_global_bytes + 128 * 1000),
                                calibration=events, after_l2_flush=True)
    assert row.predicted_seconds == pytest.approx(expected.seconds)
    without = roofline.predict("h200", counted.kernel(name=k.name, flops=0.0, launch=run),
                               calibration=events, after_l2_flush=True)
    assert "counted from traffic: 1 launches" in format_corpus_report(report)
    assert expected.seconds != without.seconds or counted.l1_global_bytes == 0
