"""The CPU half of the issue 11 baseline: predictions beside the measured family launches.

Reads families_raw.json (written on the device by families_run.py), adds what
roofline.predict (packaged H200 calibration) and roofline.analyze say for each launch, and
writes tests/data/families_h200.json and docs/results/h200/families.md.
    python docs/results/h200/families_predict.py
"""

import json
from pathlib import Path

from validate._families import family_specs, family_table, predict_families, render_families_markdown

root = Path(__file__).resolve().parents[3]
raw = json.loads((root / "docs/results/h200/families_raw.json").read_text())
specs = family_specs(raw["sm_count"])
rows = predict_families(raw["records"], specs, "H200")
document = {"device": raw["device"], "gpu": "H200", "source": "docs/results/h200/families_raw.json",
            "rows": [r.model_dump(mode="json") for r in rows], "families": family_table(rows)}
(root / "tests/data/families_h200.json").write_text(json.dumps(document, indent=1) + "\n")
title = f"Kernel families on the {raw['device']}: measured time against predict and the roofline"
(root / "docs/results/h200/families.md").write_text(render_families_markdown(rows, title=title))
for entry in family_table(rows):
    print(entry)
