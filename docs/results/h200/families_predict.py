"""The CPU half of the family check: predictions beside the measured family launches.

Reads docs/results/<gpu>/families_raw.json (written on the device by families_run.py), adds
what roofline.predict (packaged calibration) and roofline.analyze say for each launch, and
writes docs/results/<gpu>/families.md.
    python docs/results/h200/families_predict.py [h200|h100-sxm]
"""

import json
import sys
from pathlib import Path

from validate._families import family_specs, family_table, predict_families, render_families_markdown

folder = sys.argv[1] if len(sys.argv) > 1 else "h200"
gpu = {"h200": "H200", "h100-sxm": "H100-SXM"}[folder]
root = Path(__file__).resolve().parents[3]
raw = json.loads((root / f"docs/results/{folder}/families_raw.json").read_text())
rows = predict_families(raw["records"], family_specs(raw["sm_count"]), gpu)
title = f"Kernel families on the {raw['device']}: measured time against predict and the roofline"
(root / f"docs/results/{folder}/families.md").write_text(render_families_markdown(rows, title=title))
for entry in family_table(rows):
    print(entry["family"], entry["launches"], round(entry["predict_median_percent"], 1),
          round(entry["roofline_median_percent"], 1))

# predicted against measured, one marker per family, y = x and +-20%
import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

fig, ax = plt.subplots(figsize=(7, 6), constrained_layout=True)
markers = "osD^v<>ph*"
for i, family in enumerate(dict.fromkeys(r.family for r in rows)):
    members = [r for r in rows if r.family == family]
    ax.scatter([r.measured_seconds * 1e6 for r in members], [r.predict_seconds * 1e6 for r in members],
               marker=markers[i % len(markers)], s=22, label=family)
low = min(min(r.measured_seconds, r.predict_seconds) for r in rows) * 1e6 / 1.5
high = max(max(r.measured_seconds, r.predict_seconds) for r in rows) * 1e6 * 1.5
ax.plot([low, high], [low, high], color="gray", linewidth=1)
for f in (0.8, 1.2):
    ax.plot([low, high], [low * f, high * f], color="gray", linewidth=0.7, linestyle="--")
ax.set(xscale="log", yscale="log", xlim=(low, high), ylim=(low, high), xlabel="measured (us)",
       ylabel="roofline.predict (us)", title=f"{raw['device']}: predicted vs measured, dashed +-20%")
ax.legend(fontsize=7)
fig.savefig(root / f"docs/results/{folder}/families.png", dpi=110)
