"""The dev and exam split (docs/corpus.md, "Dev and exam"): the rule, the report per split, the command.

The exam projects here are made in a temporary folder from committed dev measurements, renamed
(a `CorpusProject` copy): their launches are real, and nothing invented enters corpus/measurements.
"""

from __future__ import annotations

import json
import shutil
import statistics
from pathlib import Path

import pytest

from corpus import (
    DEV_PROJECTS,
    SPLIT_FIXED,
    corpus_gpus,
    corpus_report,
    format_corpus_report,
    load_corpus,
    projects_of_split,
    split_of,
    write_corpus_project,
)
from gpuroof._main import main
from roofline import RooflineError

MEASUREMENTS = Path(__file__).resolve().parents[2] / "corpus" / "measurements"


@pytest.mark.parametrize("project, split", [
    ("cuda-samples", "dev"), ("SGEMM_CUDA", "dev"), ("rodinia", "dev"), ("PolyBench-GPU", "dev"),
    ("triton-tutorials", "dev"), ("Triton-Tutorials", "dev"), ("sgemm-cuda", "exam"), ("alpha", "exam"),
    ("cuda-samples-2", "exam"),
], ids=["cuda-samples", "sgemm", "rodinia", "polybench", "triton", "any-case", "other-spelling", "new", "suffix"])
def test_a_projects_split_follows_from_its_name(project, split):
    assert split_of(project) == split


@pytest.mark.parametrize("gpu", ["h200", "h100-sxm"])
def test_the_five_dev_projects_are_the_committed_ones(gpu):
    """The rule names the five projects measured when it was fixed (docs/corpus.md's table: five
    projects); each is measured on every GPU of the corpus."""
    assert SPLIT_FIXED == "2026-12-06" and len(DEV_PROJECTS) == 5
    assert gpu in corpus_gpus()
    assert {p.project.lower() for p in load_corpus(gpu)} >= DEV_PROJECTS


def test_split_of_refuses_what_is_not_a_name():
    with pytest.raises(TypeError, match="project must be a str"):
        split_of(3)


@pytest.mark.parametrize("argv", [["--exam"], ["--split", "exam"], ["--exam", "--json"]],
                         ids=["exam", "split-exam", "exam-json"])
def test_the_exam_split_without_an_exam_project_is_one_line_and_exit_2(capsys, argv, tmp_path):
    # a measurements root holding the H200's dev projects alone
    (tmp_path / "h200").mkdir()
    for name in ("cuda-samples", "polybench-gpu", "rodinia", "sgemm-cuda", "triton-tutorials"):
        shutil.copy(MEASUREMENTS / "h200" / f"{name}.json", tmp_path / "h200")
    code = main(["corpus", "--gpu", "h200", "--data", str(tmp_path), *argv])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "no exam project is measured on the h200 yet" in err


def test_an_unknown_split_is_refused():
    with pytest.raises(RooflineError, match="split='test' is not a split; splits: dev, exam, all"):
        projects_of_split(load_corpus("h200", project="rodinia"), "test")


@pytest.fixture(scope="module")
def mixed(tmp_path_factory):
    """Two dev projects and two exam projects of the H200: the exam ones are SGEMM_CUDA's
    kernels under new names, so each exam launch has a dev twin with the same measurements."""
    root = tmp_path_factory.mktemp("mixed")
    sgemm, = load_corpus("h200", project="SGEMM_CUDA")
    rodinia, = load_corpus("h200", project="rodinia")
    projects = (
        sgemm.model_copy(update={"kernels": sgemm.kernels[:3]}),
        rodinia.model_copy(update={"kernels": rodinia.kernels[:2]}),
        sgemm.model_copy(update={"project": "exam-a", "kernels": sgemm.kernels[:2]}),
        sgemm.model_copy(update={"project": "exam-b", "kernels": sgemm.kernels[2:3]}),
    )
    for p in projects:
        write_corpus_project(p, root / "h200")
    return root, load_corpus("h200", directory=root)


def _median_abs(rows) -> float:
    return statistics.median(abs(r.predicted_seconds / r.measured_seconds - 1) for r in rows)


def test_each_split_is_summarised_over_its_own_launches(mixed):
    _, projects = mixed
    report = corpus_report(projects, gpu="h200")
    assert list(report.splits) == ["dev", "exam"]
    by_split = {s: [r for r in report.rows if split_of(r.project) == s] for s in ("dev", "exam")}
    assert [r.split for r in report.rows] == [split_of(r.project) for r in report.rows]
    for name, rows in by_split.items():
        s = report.splits[name]
        assert s.launches == len(rows) and s.projects == tuple(dict.fromkeys(r.project for r in rows))
        assert s.median_abs_error == pytest.approx(_median_abs(rows))
        assert s.within == sum(abs(r.error) <= 0.25 for r in rows) / len(rows)
        assert abs(s.worst.error) == max(abs(r.error) for r in rows) and s.worst.split == name
        for project in s.projects:
            mine = [r for r in rows if r.project == project]
            rest = [r for r in rows if r.project != project]
            assert s.held_out[project] == pytest.approx((_median_abs(mine), _median_abs(rest)))
    assert report.splits["dev"].kernels == 5 and report.splits["exam"].kernels == 3
    # the split changes no prediction: an exam launch is predicted as its dev twin
    twins = {(r.kernel, r.shape): r.predicted_seconds for r in report.rows if r.project == "SGEMM_CUDA"}
    assert all(twins[(r.kernel, r.shape)] == r.predicted_seconds for r in by_split["exam"])


def test_the_markdown_shows_dev_and_exam_side_by_side(mixed):
    _, projects = mixed
    report = corpus_report(projects, gpu="h200")
    text = format_corpus_report(report, sources=projects)
    assert "| | dev | exam |" in text and "| projects | rodinia, SGEMM_CUDA | exam-a, exam-b |" in text
    dev, exam = report.splits["dev"], report.splits["exam"]
    assert f"| kernels, launches | {dev.kernels}, {dev.launches} | {exam.kernels}, {exam.launches} |" in text
    mine, rest = exam.held_out["exam-b"]
    assert f"| exam-b | exam | 1 | {exam.launches - len([r for r in report.rows if r.project == 'exam-a'])} | " \
           f"{mine * 100:.1f} % | {rest * 100:.1f} % |" in text


@pytest.mark.parametrize("argv, projects", [
    (["--split", "dev"], ["SGEMM_CUDA", "rodinia"]),
    (["--exam"], ["exam-a", "exam-b"]),
    (["--split", "all"], ["SGEMM_CUDA", "rodinia", "exam-a", "exam-b"]),
    ([], ["SGEMM_CUDA", "rodinia", "exam-a", "exam-b"]),
], ids=["dev", "exam", "all", "default"])
def test_the_command_reports_only_the_split_it_is_given(mixed, capsys, argv, projects):
    root, _ = mixed
    assert main(["corpus", "--data", str(root), "--json", *argv]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert sorted(shown["projects"]) == sorted(projects)
    assert {r["project"] for r in shown["rows"]} == set(projects)
    assert list(shown["splits"]) == sorted({split_of(p) for p in projects})
