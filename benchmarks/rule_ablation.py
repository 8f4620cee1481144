"""The time model's rules, each turned off in turn, against the corpus.

For each rule of `roofline._predict.rules.RULES` (or those of ``--rules``), the corpus's median
|error| (predicted / measured - 1) with the rule on and with it off, per GPU of the corpus, per
path (``profile``: from each launch's Nsight profile, as ``gpuroof corpus``; ``source``: from
buffer bytes, flops and SASS, as ``gpuroof corpus --from-source``), per split (dev and exam,
docs/corpus.md "Dev and exam") and per project. Prints the summary table; ``--out`` writes it
with the per-project tables as Markdown. A corpus pass takes about 4 s of CPU from profiles (598
launches on the H200, 802 on the H100 SXM), more from source: all rules and both paths took 25
and 30 minutes (H200, H100 SXM) run side by side on a shared 2-core machine.

    python benchmarks/rule_ablation.py [--rules a,b] [--gpus h200,h100-sxm] [--paths profile,source] [--out F.md]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the corpus package lives at the root of a checkout

import corpus  # noqa: E402
from corpus._report import _median_abs  # noqa: E402
from roofline.terms import RULES, disabled  # noqa: E402

#: docs/corpus.md "Dev and exam": the five projects the corpus began with are the dev split,
#: every project added after them the exam split (used where `corpus.split_of` is not there).
DEV_PROJECTS = frozenset({"cuda-samples", "PolyBench-GPU", "rodinia", "SGEMM_CUDA", "triton-tutorials"})
SPLITS = ("dev", "exam")
PATHS = ("profile", "source")


def split_of(project: str) -> str:
    """The one place the split is applied: ``corpus.split_of`` where it exists, else docs/corpus.md's rule."""
    if hasattr(corpus, "split_of"):
        return corpus.split_of(project)
    return "dev" if project in DEV_PROJECTS else "exam"


def _medians(projects: Sequence[corpus.CorpusProject], gpu: str, path: str) -> dict[str, float | None]:
    """Median |error| per split and per project of one corpus pass (with the rules now disabled)."""
    report = corpus.corpus_report(projects, gpu=None, from_source=path == "source")
    errors: dict[str, list[float]] = {}
    for row in report.rows:
        if row.error is not None:
            errors.setdefault(split_of(row.project), []).append(row.error)
            errors.setdefault(row.project, []).append(row.error)
    return {key: _median_abs(values) for key, values in errors.items()}


def ablate(gpus: Sequence[str], paths: Sequence[str], rules: Sequence[str]) -> dict:
    """``{(gpu, path): {"on": medians, rule: medians with the rule off}}``."""
    results: dict = {}
    for gpu in gpus:
        projects = corpus.load_corpus(gpu)
        for path in paths:
            cell = {"on": _medians(projects, gpu, path)}
            for rule in rules:
                with disabled({rule}):
                    cell[rule] = _medians(projects, gpu, path)
            results[(gpu, path)] = cell
    return results


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}"


def _delta(on: float | None, off: float | None) -> str:
    if on is None or off is None:
        return "-"
    return f"{100 * (off - on):+.1f}"


def summary_table(results: dict, rules: Sequence[str]) -> list[str]:
    """One row per rule: its kind (corpus-justified ones flagged) and, per GPU, path and split, the
    change of the median |error| in percentage points when it is turned off (+: the rule helps)."""
    columns = [(gpu, path, split) for (gpu, path), cell in results.items() for split in SPLITS if split in cell["on"]]
    head = "| rule | kind | " + " | ".join(f"{g} {p} {s}" for g, p, s in columns) + " |"
    lines = [head, "|" + "---|" * (len(columns) + 2),
             "| (all on: median abs error, %) | | " + " | ".join(
                 _pct(results[(g, p)]["on"].get(s)) for g, p, s in columns) + " |"]
    for name in rules:
        rule = RULES[name]
        kind = f"**{rule.kind}** !" if rule.kind == "corpus" else rule.kind
        cells = [_delta(results[(g, p)]["on"].get(s), results[(g, p)][name].get(s)) for g, p, s in columns]
        lines.append(f"| `{name}` | {kind} | " + " | ".join(cells) + " |")
    return lines


def registry_table() -> list[str]:
    """Every rule: where it lives, its justification and what the model does without it."""
    lines = ["| rule | where (`roofline.`) | kind | evidence | off |", "|---|---|---|---|---|"]
    for rule in RULES.values():
        kind = f"**{rule.kind}** !" if rule.kind == "corpus" else rule.kind
        lines.append(f"| `{rule.name}` | `{rule.where}` | {kind} | {rule.evidence} | {rule.off} |")
    return lines


def project_tables(results: dict, rules: Sequence[str]) -> list[str]:
    """Per GPU and path: the change per project (percentage points, off - on)."""
    lines: list[str] = []
    for (gpu, path), cell in results.items():
        projects = [k for k in cell["on"] if k not in SPLITS]
        lines += ["", f"#### {gpu}, from {'profiles' if path == 'profile' else 'source'}: per project", "",
                  "| rule | " + " | ".join(f"{p} ({split_of(p)})" for p in projects) + " |",
                  "|" + "---|" * (len(projects) + 1),
                  "| (all on, %) | " + " | ".join(_pct(cell["on"][p]) for p in projects) + " |"]
        lines += [f"| `{name}` | " + " | ".join(_delta(cell["on"][p], cell[name].get(p)) for p in projects) + " |"
                  for name in rules]
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rules", default=",".join(RULES), help="comma-separated rule names (default: all)")
    parser.add_argument("--gpus", default=",".join(corpus.corpus_gpus()))
    parser.add_argument("--paths", default=",".join(PATHS))
    parser.add_argument("--out", type=Path, help="write the tables as Markdown to this file")
    parser.add_argument("--registry", action="store_true", help="print the registry's table and stop")
    args = parser.parse_args(argv)
    if args.registry:
        print("\n".join(registry_table()))
        return 0
    rules = [r for r in args.rules.split(",") if r]
    unknown = [r for r in rules if r not in RULES]
    if unknown:
        parser.error(f"--rules: {unknown} are not rules; known: {sorted(RULES)}")
    start = time.perf_counter()
    results = ablate(args.gpus.split(","), args.paths.split(","), rules)
    elapsed = time.perf_counter() - start
    summary = summary_table(results, rules)
    print("\n".join(summary))
    print(f"\n{len(rules)} rules, {len(results)} corpus passes x {len(rules) + 1}: {elapsed:.0f} s", file=sys.stderr)
    if args.out is not None:
        text = ["Change of the corpus's median |error| with each rule turned off, percentage points (off - on; "
                "+: the rule helps). `python benchmarks/rule_ablation.py`; "
                f"{len(rules)} rules in {elapsed:.0f} s.", "", *summary, *project_tables(results, rules), ""]
        args.out.write_text("\n".join(text))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
