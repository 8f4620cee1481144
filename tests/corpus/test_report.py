"""The corpus format and report (the corpus package) on a small synthetic corpus (no real project's data)."""

from __future__ import annotations

import csv
import json
import statistics
import sys
from pathlib import Path

import pytest

import roofline
from corpus import (
    CorpusProject,
    corpus_gpus,
    corpus_metrics,
    corpus_report,
    format_corpus_report,
    load_corpus,
    write_corpus_project,
)
from corpus._report import _ncu_kernel
from gpuroof import _corpus as gpuroof_corpus
from gpuroof._main import main
from roofline import RooflineError

DATA = Path(__file__).resolve().parents[1] / "data" / "ncu"

UNITS = {
    "launch__block_dim_x": "block", "launch__registers_per_thread": "register/thread",
    "launch__shared_mem_per_block_static": "byte/block", "launch__shared_mem_per_block_dynamic": "byte/block",
    "launch__shared_mem_per_block_driver": "byte/block", "launch__shared_mem_config_size": "byte",
    "launch__sm_count": "SM", "gpu__time_duration.sum": "ns", "sm__cycles_elapsed.avg.per_second": "hz",
    "smsp__cycles_elapsed.avg.per_second": "hz", "dram__cycles_elapsed.avg.per_second": "hz",
    "sm__maximum_warps_per_active_cycle_pct": "%", "dram__bytes_read.sum": "byte", "dram__bytes_write.sum": "byte",
    "lts__lts2xbar_cycles_active.sum.per_second": "hz", "l1tex__lsu_writeback_active_mem_lgds.sum.per_second": "hz",
}


def metrics(name: str, grid: int, block: int, registers: int, nsight_us: float, dram_mb: float,
            ffma_per_cycle: float = 0.0, occupancy_pct: float = 100.0) -> dict[str, float | str]:
    """The metrics of one made-up launch on an H200, as `ncu --print-units base` would print them."""
    seconds = nsight_us * 1e-6
    row: dict[str, float | str] = {
        "Kernel Name": name, "launch__grid_dim_x": grid, "launch__grid_dim_y": 1, "launch__grid_dim_z": 1,
        "launch__block_dim_x": block, "launch__block_dim_y": 1, "launch__block_dim_z": 1,
        "launch__registers_per_thread": registers, "launch__shared_mem_per_block_static": 0,
        "launch__shared_mem_per_block_dynamic": 0, "launch__shared_mem_per_block_driver": 1024,
        "launch__shared_mem_config_size": 32768, "launch__barrier_count": 0, "launch__sm_count": 132,
        "gpu__time_duration.sum": nsight_us * 1e3, "sm__cycles_elapsed.avg.per_second": 1.98e9,
        "smsp__cycles_elapsed.avg.per_second": 1.98e9, "dram__cycles_elapsed.avg.per_second": 3.2e9,
        "sm__maximum_warps_per_active_cycle_pct": occupancy_pct,
        "dram__bytes_read.sum": dram_mb * 0.5e6, "dram__bytes_write.sum": dram_mb * 0.5e6,
        "lts__lts2xbar_cycles_active.sum.per_second": dram_mb * 1e6 / 32 / seconds,
        "l1tex__lsu_writeback_active_mem_lgds.sum.per_second": dram_mb * 1e6 / 128 / seconds,
        "device__attribute_compute_capability_major": 9, "device__attribute_compute_capability_minor": 0,
        "device__attribute_display_name": "NVIDIA H200",
    }
    for p in "dfh":
        for op in ("add", "mul", "fma"):
            row[f"smsp__sass_thread_inst_executed_op_{p}{op}_pred_on.sum.per_cycle_elapsed"] = \
                ffma_per_cycle if (p, op) == ("f", "fma") else 0.0
    return row


def launch(shape: str, measured_us: float, row: dict) -> dict:
    grid, block = row["launch__grid_dim_x"], row["launch__block_dim_x"]
    return dict(shape=shape, grid=[grid, 1, 1], block=[block, 1, 1], duration_median_seconds=measured_us * 1e-6,
                duration_spread=0.01, repetitions=20, sm_clock_hz=1.98e9, memory_clock_hz=3.2e9, throttled=False,
                ncu=row)


def project(name: str, kernels: list[dict]) -> CorpusProject:
    return CorpusProject(project=name, url=f"https://example.org/{name}", commit="0" * 40, license="MIT",
                         gpu="NVIDIA H200", ncu_units=UNITS, kernels=kernels)


@pytest.fixture(scope="module")
def corpus() -> tuple[CorpusProject, ...]:
    copy = dict(id="alpha/copy", name="copy", category="streaming", launches=[
        launch("n=2^24", 60.0, metrics("copy", 65536, 256, 16, 58.0, 134.2)),
        launch("n=2^20", 5.0, metrics("copy", 4096, 256, 16, 4.5, 8.4)),
        launch("n=2^12", 2.0, metrics("copy", 16, 256, 16, 1.6, 0.03)),
    ])
    gemm = dict(id="alpha/gemm", name="gemm<128>", category="gemm_cuda_core", launches=[
        launch("1024^3", 400.0,
               metrics("gemm<128>", 64, 256, 128, 390.0, 12.6, ffma_per_cycle=300.0, occupancy_pct=25.0)),
    ])
    rows = dict(id="beta/rows", name="row_sum", category="row_thread", launches=[
        launch("4096^2 block=32", 900.0, metrics("row_sum", 128, 32, 24, 880.0, 67.1, occupancy_pct=50.0)),
        launch("4096^2 block=256", 700.0, metrics("row_sum", 16, 256, 24, 690.0, 67.1)),
    ])
    return project("alpha", [copy, gemm]), project("beta", [rows])


def test_files_round_trip_and_filter(tmp_path, corpus):
    for p in corpus:
        write_corpus_project(p, tmp_path / "h200")
    assert corpus_gpus(tmp_path) == ("h200",)
    loaded = load_corpus("h200", directory=tmp_path)
    assert sorted(p.project for p in loaded) == ["alpha", "beta"]
    assert loaded[0] == corpus[0]
    assert [p.project for p in load_corpus("h200", project="BETA", directory=tmp_path)] == ["beta"]


@pytest.mark.parametrize("gpu, project, message", [
    ("h100-sxm", None, "gpu='h100-sxm' has no corpus measurements"),
    ("h200", "gamma", "project='gamma' is not in the h200 corpus; projects: alpha, beta"),
])
def test_load_refuses_unknown(tmp_path, corpus, gpu, project, message):
    for p in corpus:
        write_corpus_project(p, tmp_path / "h200")
    with pytest.raises(RooflineError, match=message):
        load_corpus(gpu, project=project, directory=tmp_path)


def test_a_file_that_is_not_a_corpus_project_is_one_error(tmp_path):
    (tmp_path / "h200").mkdir()
    (tmp_path / "h200" / "x.json").write_text(json.dumps({"project": "x"}))
    with pytest.raises(RooflineError, match=r"x\.json: url"):
        load_corpus("h200", directory=tmp_path)


def _as_raw_csv(path: Path, corpus: tuple[CorpusProject, ...]) -> None:
    """The same launches as the raw-page CSV `ncu --csv --page raw --print-units base` writes."""
    rows = [launch.ncu for p in corpus for k in p.kernels for launch in k.launches]
    names = list(rows[0])
    with open(path, "w", newline="") as handle:
        out = csv.writer(handle, quoting=csv.QUOTE_ALL)
        out.writerow(["ID", *names])
        out.writerow(["", *(UNITS.get(n, "") for n in names)])
        for i, row in enumerate(rows):
            out.writerow([i, *(row[n] for n in names)])


def test_predictions_are_gpuroof_ncus(tmp_path, corpus):
    """Each launch is predicted exactly as `gpuroof ncu` predicts the same profile, with the launch
    cost CUDA events see (the corpus's durations are CUDA-event times), not Nsight's, which
    `profile_report` takes by default where the facts hold Nsight's empty kernel, and from the
    L2 validate's flush leaves (the durations were timed after it)."""
    report = corpus_report(corpus, gpu="h200")
    _as_raw_csv(tmp_path / "p.csv", corpus)
    packaged = roofline.calibration("h200")
    assert packaged.nsight_empty_kernel_seconds is not None
    nsight = roofline.profile_report(tmp_path / "p.csv", gpu="h200")
    events = packaged.model_copy(update={"nsight_empty_kernel_seconds": None})
    profile = roofline.profile_report(tmp_path / "p.csv", gpu="h200", calibration=events, after_l2_flush=True)
    assert all(a.predicted_seconds != b.predicted_seconds for a, b in zip(nsight.kernels, profile.kernels))
    clean = roofline.profile_report(tmp_path / "p.csv", gpu="h200", calibration=events)
    # a launch after the flush writes back what it displaces: never faster than from a clean L2
    assert all(a.predicted_seconds >= b.predicted_seconds for a, b in zip(profile.kernels, clean.kernels))
    assert any(a.predicted_seconds > b.predicted_seconds for a, b in zip(profile.kernels, clean.kernels))
    by_id = {r.kernel.id: r for r in profile.kernels}
    assert len(report.rows) == 6 and all(r.predicted_seconds is not None for r in report.rows)
    for i, row in enumerate(report.rows):
        assert row.predicted_seconds == by_id[i].predicted_seconds
        assert row.roofline_seconds == by_id[i].roofline_seconds
        assert row.limiter == by_id[i].predicted_limiter
        assert row.nsight_seconds == pytest.approx(by_id[i].kernel.measured.duration_seconds)
    assert (report.occupancy_compared, report.occupancy_agreeing) == (profile.occupancy_compared,
                                                                       profile.occupancy_agreeing)


def test_summary_is_over_the_rows(corpus):
    report = corpus_report(corpus, gpu="h200")
    errors = [r.predicted_seconds / r.measured_seconds - 1 for r in report.rows]
    assert [r.error for r in report.rows] == pytest.approx(errors)
    assert report.median_abs_error == pytest.approx(statistics.median(abs(e) for e in errors))
    assert report.within == sum(abs(e) <= 0.25 for e in errors) / len(errors)
    assert abs(report.worst.error) == pytest.approx(max(abs(e) for e in errors))
    alpha = [abs(e) for r, e in zip(report.rows, errors) if r.project == "alpha"]
    beta = [abs(e) for r, e in zip(report.rows, errors) if r.project == "beta"]
    assert report.held_out["beta"] == pytest.approx((statistics.median(beta), statistics.median(alpha)))
    assert report.project_median_abs_error["alpha"] == pytest.approx(statistics.median(alpha))
    gemm = [abs(e) for r, e in zip(report.rows, errors) if r.category == "gemm_cuda_core"]
    assert report.category_median_abs_error == pytest.approx(
        {"gemm_cuda_core": gemm[0], "row_thread": statistics.median(beta), "streaming": statistics.median(alpha[:3])})
    assert (report.kernels, report.projects) == (3, ("alpha", "beta"))


def test_corpus_metrics_keep_what_load_ncu_reads():
    """A corpus file keeps a subset of the raw page; every field load_ncu extracts survives it."""
    full = roofline.load_ncu(DATA / "suite.raw_base.csv")
    with open(DATA / "suite.raw_base.csv", newline="") as handle:
        rows = list(csv.reader(handle))
    header, units = rows[0], rows[1]
    kept = [i for i, name in enumerate(header) if name == "ID" or corpus_metrics({name: 0})]
    assert len(kept) < len(header) / 10
    for n, row in enumerate(rows[2:]):
        values = dict(zip(header, row))
        small = corpus_metrics(values)
        units_of = {header[i]: units[i] for i in kept}
        p = CorpusProject(project="t", url="u", commit="c", license="l", gpu="g", ncu_units=units_of, kernels=[dict(
            id="t/k", name="k", category="streaming", launches=[dict(
                shape="s", grid=full.kernels[n].grid, block=full.kernels[n].block, duration_median_seconds=1.0,
                duration_spread=0.0, repetitions=1, ncu=small)])])
        mine = _ncu_kernel(p, p.kernels[0], p.kernels[0].launches[0], full.kernels[n].id)
        # the SASS comes from the corpus entry, not from a report beside the export
        assert mine.sass is None and mine.sass_source == "no SASS in the corpus entry"
        skip = {"missing", "sass", "sass_source"}
        assert mine.model_dump(exclude=skip) == full.kernels[n].model_dump(exclude=skip)


def test_command_writes_the_report_and_plot(tmp_path, corpus, capsys):
    for p in corpus:
        write_corpus_project(p, tmp_path / "data" / "h200")
    out, plot = tmp_path / "corpus.md", tmp_path / "corpus.png"
    code = main(["corpus", "--data", str(tmp_path / "data"), "--out", str(out), "--plot", str(plot)])
    printed, err = capsys.readouterr()
    text = out.read_text()
    assert code == 0 and err == "" and printed.startswith("wrote")
    assert plot.read_bytes().startswith(b"\x89PNG")
    assert "## alpha" in text and "## beta" in text and "https://example.org/alpha at `" + "0" * 40 in text
    assert sum(line.startswith("| copy |") for line in text.splitlines()) == 3
    code = main(["corpus", "--data", str(tmp_path / "data"), "--project", "beta", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and data["projects"] == ["beta"] and len(data["rows"]) == 2


@pytest.mark.parametrize("argv, message", [
    (["--gpu", "h100-sxm"], "gpu='h100-sxm' has no corpus measurements"),
    (["--project", "gamma"], "project='gamma'"),
    (["--out", "/proc/x/y.md"], "--out"),
])
def test_command_bad_input_is_one_line_and_exit_2(tmp_path, corpus, capsys, argv, message):
    for p in corpus:
        write_corpus_project(p, tmp_path / "h200")
    code = main(["corpus", "--data", str(tmp_path), *argv])
    err = capsys.readouterr().err
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("where, message", [
    ("installed", "the corpus lives in the gpuroof repository checkout (its corpus/ folder)"),
    ("not a corpus", "is not a corpus folder (it has no __init__.py)"),
    ("another corpus", "another corpus package is loaded already"),
], ids=["installed", "not-a-corpus", "another-corpus"])
def test_without_the_checkouts_corpus_the_command_says_where_it_lives(tmp_path, corpus, capsys, monkeypatch,
                                                                      where, message):
    """An installed gpuroof has no corpus/ beside its package: one line, exit 2, no traceback."""
    for p in corpus:
        write_corpus_project(p, tmp_path / "h200")
    argv = ["corpus", "--data", str(tmp_path)]
    if where == "installed":
        monkeypatch.setattr(gpuroof_corpus, "CHECKOUT_CORPUS", tmp_path / "site-packages" / "corpus")
    elif where == "not a corpus":
        argv += ["--corpus", str(tmp_path)]
    else:
        (tmp_path / "other").mkdir()
        (tmp_path / "other" / "__init__.py").write_text("")
        argv += ["--corpus", str(tmp_path / "other")]
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1


def test_the_command_reads_the_corpus_folder_it_is_given(tmp_path, corpus, capsys):
    """``--corpus`` naming the checkout's corpus/ folder is the corpus this process loaded already."""
    for p in corpus:
        write_corpus_project(p, tmp_path / "h200")
    assert gpuroof_corpus.corpus_package(str(gpuroof_corpus.CHECKOUT_CORPUS)) is sys.modules["corpus"]
    code = main(["corpus", "--corpus", str(gpuroof_corpus.CHECKOUT_CORPUS), "--data", str(tmp_path), "--json"])
    assert code == 0 and json.loads(capsys.readouterr().out)["projects"] == ["alpha", "beta"]

def test_from_source_predicts_from_buffer_bytes_and_flops_alone(corpus):
    """`corpus_report(from_source=True)`: each launch with buffer bytes is `predict` of a Kernel
    holding those bytes as its DRAM bytes and the kernel's flops, none of the profile's other
    counts; a launch without them gets no prediction."""
    alpha = corpus[0]
    copy = alpha.kernels[0]
    sized = copy.model_copy(update={"launches": (
        copy.launches[0].model_copy(update={"buffer_bytes": 2 * (1 << 24) * 4}), *copy.launches[1:])})
    one = alpha.model_copy(update={"kernels": (sized,)})
    source = corpus_report([one], gpu="h200", from_source=True)
    profiled = corpus_report([one], gpu="h200")
    assert source.from_source and not profiled.from_source
    first = source.rows[0]
    k = _ncu_kernel(one, sized, sized.launches[0], 0)
    events = roofline.calibration("h200").model_copy(update={"nsight_empty_kernel_seconds": None})
    launch = roofline._adapters.measured_launch(k.grid, k.block, registers_per_thread=k.registers_per_thread,
                                                 static_shared_memory=0, dynamic_shared_memory=0)
    expected = roofline.predict("h200", roofline.Kernel(flops=0.0, dram_bytes=2 * (1 << 24) * 4, launch=launch),
                                calibration=events, after_l2_flush=True)
    assert first.predicted_seconds == pytest.approx(expected.seconds)
    assert first.predicted_seconds != profiled.rows[0].predicted_seconds
    assert [r.predicted_seconds for r in source.rows[1:]] == [None, None]
    text = format_corpus_report(source)
    assert "from the source alone" in text and "`gpuroof ncu`'s prediction" not in text


def test_the_command_predicts_from_source(tmp_path, corpus, capsys):
    for p in corpus:
        write_corpus_project(p, tmp_path / "h200")
    assert main(["corpus", "--data", str(tmp_path), "--from-source", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    # the synthetic corpus gives no buffer bytes: every launch is measured, none predicted from source
    assert shown["from_source"] is True and all(r["predicted_seconds"] is None for r in shown["rows"])


def test_each_project_is_predicted_with_the_launch_cost_of_its_timing_session(corpus):
    """A project that recorded the empty kernel's time of the session that timed it is predicted
    with that launch cost, the others with the packaged one: the rows move by the difference."""
    packaged = roofline.calibration("h200").launch_overhead_seconds
    before = corpus_report(corpus, gpu="h200")
    timed = tuple(p.model_copy(update={"launch_overhead_seconds": packaged + 1e-6}) if i == 0 else p
                  for i, p in enumerate(corpus))
    after = corpus_report(timed, gpu="h200")
    assert {r.project for r in before.rows} == {"alpha", "beta"}
    for a, b in zip(before.rows, after.rows):
        moved = b.predicted_seconds - a.predicted_seconds
        assert moved == pytest.approx(1e-6 if a.project == corpus[0].project else 0.0, abs=1e-12)
    text = format_corpus_report(after, sources=timed)
    assert text.count("Predicted with that session's launch cost") == 1
    assert f"{(packaged + 1e-6) * 1e6:.3f} us" in text
    with pytest.raises(ValueError, match="launch_overhead_seconds"):
        corpus[0].model_validate({**corpus[0].model_dump(), "launch_overhead_seconds": -1.0})


#: Committed kernels whose source prediction falls below the plain roofline of their profile's
#: counts (histogram64, matrixMul: the source counts fewer bytes or flops than Nsight), and one
#: whose L1 keeps bytes (SGEMM_CUDA's coalesced kernel: the source path's L2 bytes less L1 reuse).
BOUND_KERNELS = {"cuda-samples": ("histogram64", "matrixMul.16"), "SGEMM_CUDA": ("02_coalesce",)}


@pytest.mark.parametrize("gpu", ["h200", "h100-sxm"])
@pytest.mark.parametrize("from_source", [False, True], ids=["profile", "source"])
def test_the_bound_beside_a_committed_prediction_never_exceeds_it(gpu, from_source):
    """The plain roofline a row shows is of the counts its prediction used (the profile's, or
    the source's), so it is never above the prediction (docs/prediction.md, "The bound and the
    prediction")."""
    projects = []
    for name, kernels in BOUND_KERNELS.items():
        whole, = load_corpus(gpu, project=name)
        projects.append(whole.model_copy(update={"kernels": tuple(k for k in whole.kernels if k.short_id in kernels)}))
    report = corpus_report(projects, gpu=gpu, from_source=from_source)
    assert {r.kernel for r in report.rows} == {k for kernels in BOUND_KERNELS.values() for k in kernels}
    assert all(r.predicted_seconds is not None for r in report.rows)
    assert all(r.roofline_seconds <= r.predicted_seconds for r in report.rows)


def test_a_profile_row_says_when_the_trips_come_from_its_load_count():
    """A committed profile whose hot loop has a loop beside it (code-samples' pencil stencil: a load
    loop, then the stencil's store loop): the row names the load count its trips rest on
    (`counted_load_trips`, docs/prediction.md "Loops beside the hot loop"), and only with the rule."""
    from roofline.terms import disabled

    project, = load_corpus("h100-sxm", project="NVIDIA code-samples")
    kernel = next(k for k in project.kernels if k.short_id.endswith("derivative_x_lPencils"))
    profile = roofline.NcuProfile(path="corpus", format="csv",
                                  kernels=(_ncu_kernel(project, kernel, kernel.launches[0], 0),))

    def notes() -> list[str]:
        return [n for n in roofline.profile_report(profile, after_l2_flush=True).kernels[0].notes
                if "counted_load_trips" in n]

    assert notes() == ["the hot loop's trips from the profile's load count, 8 a warp: its instructions read as the "
                       "hot loop's alone give 28, the loops beside it issue the rest (rule counted_load_trips)"]
    with disabled({"counted_load_trips"}):
        assert notes() == []
