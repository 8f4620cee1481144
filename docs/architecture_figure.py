"""Draw docs/architecture.png: gpuroof's packages with their one-way imports, and the data flow of
``gpuroof predict``, ``gpuroof ncu`` and ``gpuroof validate``.

Run by hand from the repository root after a change to what the figure shows (matplotlib needed)::

    python docs/architecture_figure.py [OUT.png]

The figure is a drawing, not read from the code: docs/architecture.md's text names the paths
and a test-run example there prints what the code holds.
"""

from __future__ import annotations

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch  # noqa: E402

#: One colour per package; a step of a flow takes the colour of the package it runs in.
COLOURS = {
    "occupancy": "#dbeaf7",
    "roofline": "#fde5c8",
    "validate": "#d8f0d8",
    "gpuroof": "#ece0f5",
    "corpus": "#eeeeee",
    "data": "#fff8c4",
}
EDGE = "#444444"


def box(ax, x: float, y: float, w: float, h: float, text: str, colour: str, *, dashed: bool = False,
        size: float = 8.5, weight: str = "normal") -> tuple[float, float, float, float]:
    """A rounded box with centred text; returns its (x, y, w, h) for the arrows."""
    ax.add_patch(FancyBboxPatch((x, y), w, h, boxstyle="round,pad=0.008,rounding_size=0.012",
                                facecolor=COLOURS[colour], edgecolor=EDGE, linewidth=1.0,
                                linestyle="--" if dashed else "-"))
    ax.text(x + w / 2, y + h / 2, text, ha="center", va="center", fontsize=size, weight=weight,
            linespacing=1.25)
    return x, y, w, h


def arrow(ax, start: tuple[float, float], end: tuple[float, float], *, label: str = "", dashed: bool = False,
          colour: str = EDGE) -> None:
    ax.add_patch(FancyArrowPatch(start, end, arrowstyle="-|>", mutation_scale=12, linewidth=1.1, color=colour,
                                 linestyle="--" if dashed else "-", shrinkA=1, shrinkB=1))
    if label:
        ax.text((start[0] + end[0]) / 2, (start[1] + end[1]) / 2 + 0.008, label, ha="center", va="bottom",
                fontsize=7, style="italic", color=colour)


def right(b):
    return b[0] + b[2], b[1] + b[3] / 2


def left(b):
    return b[0], b[1] + b[3] / 2


def top(b):
    return b[0] + b[2] / 2, b[1] + b[3]


def bottom(b):
    return b[0] + b[2] / 2, b[1]


def chain(ax, boxes) -> None:
    """Arrows from each box to the next, left to right."""
    for a, b in zip(boxes, boxes[1:]):
        arrow(ax, right(a), left(b))


def packages(ax) -> None:
    """The four packages, each arrow pointing at the package imported, and corpus/ beside them."""
    ax.text(0.01, 0.975, "Packages: imports run one way (an arrow points at the package imported)",
            fontsize=11, weight="bold", va="top")
    w, h, y = 0.2, 0.13, 0.8
    specs = [
        ("occupancy", "occupancy\n\nrules per compute capability\n(data/architectures.toml),\nLaunch, kernel resources "
                      "(nvcc,\nNVRTC, SASS), occupancy.common"),
        ("roofline", "roofline\n\nGPU facts (data/gpus/<gpu>.toml),\nKernel, traffic, roofline bound,\ntime model "
                     "(_predict/), Nsight\nprofile reader, charts, models/"),
        ("validate", "validate\n\ndevice/ <- probes/, checks/,\nuser_kernel/ <- suite/ <- report/\n<- run/  "
                     "(the GPU: cuda-python)"),
        ("gpuroof", "gpuroof (CLI)\n\n_main.py: COMMANDS table;\none module per subcommand group:\nparse, one library "
                    "call, print"),
    ]
    boxes = []
    for i, (colour, text) in enumerate(specs):
        boxes.append(box(ax, 0.01 + i * 0.26, y, w, h, text, colour, size=8.2))
    for importer, imported in zip(boxes[1:], boxes):
        arrow(ax, left(importer), right(imported), label="imports")
    corpus = box(ax, 0.27, 0.7, 0.46, 0.065,
                 "corpus/  (in the repository, not in the wheel)\nmeasurements/<gpu>/<project>.json, traffic/, "
                 "counted_traffic/, the report;\nimports occupancy and roofline like a user; none of them imports it",
                 "corpus", dashed=True, size=8)
    arrow(ax, (corpus[0] + 0.12, corpus[1] + corpus[3]), (boxes[1][0] + 0.1, y), dashed=True)
    arrow(ax, (corpus[0] + corpus[2], corpus[1] + corpus[3] / 2), (boxes[3][0] + 0.03, y), dashed=True,
          colour="#777777")
    ax.text(boxes[3][0] + 0.05, 0.735, "gpuroof corpus loads it\nfrom the checkout by path", fontsize=7.5,
            style="italic", color="#777777", va="center")


def predict_flow(ax, y: float) -> None:
    ax.text(0.01, y + 0.09, "gpuroof predict", fontsize=10, weight="bold", family="monospace")
    h = 0.07
    inputs = box(ax, 0.01, y + 0.005, 0.15, h, "kernel (--model, or counts)\n+ launch (--grid, --block;\nresources from "
                                       "its file)", "gpuroof", size=7.6)
    facts = box(ax, 0.01, y - 0.075, 0.15, h - 0.01, "GPU facts\nroofline/data/gpus/<gpu>.toml", "data", size=7.6)
    setting = box(ax, 0.2, y - 0.04, 0.12, h, "Setting\n(checked launch;\noccupancy.calculate)", "roofline", size=7.6)
    derive = box(ax, 0.36, y - 0.04, 0.13, h, "_predict/derive/\n-> Derived\n(typed quantities)", "roofline",
                 size=7.6)
    terms = box(ax, 0.53, y - 0.04, 0.14, h, "_predict/terms/\none function per effect\n-> Term", "roofline",
                size=7.6)
    params = box(ax, 0.53, y - 0.115, 0.14, h - 0.02, "_predict/params.py\n<- [calibration.*]", "roofline", size=7.6)
    compose = box(ax, 0.71, y - 0.04, 0.12, h, "_predict/compose.py\noverlap memory/compute,\nadd overhead",
                  "roofline", size=7.6)
    prediction = box(ax, 0.87, y - 0.04, 0.12, h, "Prediction\n(seconds, limiter,\nevery term)", "roofline",
                     size=7.6)
    arrow(ax, right(inputs), (setting[0], setting[1] + 0.05))
    arrow(ax, right(facts), (setting[0], setting[1] + 0.02))
    chain(ax, [setting, derive, terms, compose, prediction])
    arrow(ax, top(params), bottom(terms))
    arrow(ax, (facts[0] + facts[2], facts[1] + 0.01), left(params), dashed=True, colour="#777777")


def ncu_flow(ax, y: float) -> None:
    ax.text(0.01, y + 0.08, "gpuroof ncu", fontsize=10, weight="bold", family="monospace")
    h = 0.07
    steps = [
        box(ax, 0.01, y - 0.005, 0.15, h, "Nsight Compute export\n(--page raw CSV,\nor .ncu-rep)", "data", size=7.6),
        box(ax, 0.2, y - 0.005, 0.15, h, "reader + the one adapter\n(load_ncu, SASS if any;\ncounted_kernel)",
            "roofline", size=7.6),
        box(ax, 0.39, y - 0.005, 0.16, h, "Kernel (launch, counts)\n+ the profile's counts\n(measured time, bytes)",
            "roofline", size=7.6),
        box(ax, 0.59, y - 0.005, 0.16, h, "exact occupancy, cliffs,\nroofline point, and\npredict (as above)",
            "roofline", size=7.6),
        box(ax, 0.79, y - 0.005, 0.2, h, "ProfileReport: one line per\nkernel (table, Markdown, JSON;\n--plot: FLOP "
                                         "and instruction rooflines)", "roofline", size=7.6),
    ]
    chain(ax, steps)


def validate_flow(ax, y: float) -> None:
    ax.text(0.01, y + 0.08, "gpuroof validate", fontsize=10, weight="bold", family="monospace")
    h = 0.07
    session = box(ax, 0.01, y - 0.09, 0.15, h + 0.02, "validate/device/\nSession, NVRTC compile,\none timing loop,\n"
                                                       "NVML clocks", "validate", size=7.6)
    registry = box(ax, 0.2, y - 0.09, 0.13, h + 0.02, "run/ runs\nreport/_registry.py\nPROBES in order", "validate",
                   size=7.6)
    probes = box(ax, 0.37, y + 0.0, 0.17, h - 0.01, "probes/: measure the\ntime model's parameters", "validate",
                 size=7.6)
    checks = box(ax, 0.37, y - 0.08, 0.17, h - 0.01, "checks/: calculators against\noracles (driver, Nsight)",
                 "validate", size=7.6)
    suite = box(ax, 0.37, y - 0.16, 0.17, h - 0.01, "suite/: known kernels and\nfamilies timed vs predict",
                "validate", size=7.6)
    calibration = box(ax, 0.59, y + 0.0, 0.19, h - 0.01, "calibration.json; reviewed into\n<gpu>.toml [calibration.*]"
                                                        "\n(scripts/facts_sections.py)", "data", size=7.4)
    report = box(ax, 0.59, y - 0.12, 0.19, h + 0.01, "report.json (ValidationReport),\nreport.md, plots", "validate",
                 size=7.6)
    back = box(ax, 0.82, y + 0.0, 0.17, h - 0.01, "read back by\nroofline.calibration /\nroofline.predict", "roofline",
               size=7.6)
    arrow(ax, right(session), left(registry))
    for step in (probes, checks, suite):
        arrow(ax, right(registry), left(step))
    arrow(ax, right(probes), left(calibration))
    for step in (probes, checks, suite):
        arrow(ax, right(step), (report[0], report[1] + report[3] / 2))
    arrow(ax, right(calibration), left(back))


def legend(ax) -> None:
    x = 0.01
    for name, label in (("occupancy", "occupancy"), ("roofline", "roofline"), ("validate", "validate"),
                        ("gpuroof", "gpuroof (CLI)"), ("corpus", "corpus/ (repository only)"),
                        ("data", "files: facts, profiles, calibration")):
        ax.add_patch(FancyBboxPatch((x, 0.005), 0.018, 0.014, boxstyle="round,pad=0.002", facecolor=COLOURS[name],
                                    edgecolor=EDGE, linewidth=0.8))
        ax.text(x + 0.024, 0.012, label, fontsize=7.8, va="center")
        x += 0.05 + 0.0085 * len(label)


def main(argv: list[str]) -> int:
    out = Path(argv[0]) if argv else Path(__file__).with_name("architecture.png")
    fig = plt.figure(figsize=(13, 11))
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.axis("off")
    packages(ax)
    ax.text(0.01, 0.675, "Three commands, end to end (a box's colour is the package it runs in)", fontsize=11,
            weight="bold", va="top")
    predict_flow(ax, 0.55)
    ncu_flow(ax, 0.35)
    validate_flow(ax, 0.205)
    legend(ax)
    fig.savefig(out, dpi=100)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
