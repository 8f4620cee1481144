"""The GPU half of the issue 11 baseline: every family launch checked and timed on the device.

Writes families_raw.json (one record per launch: grid, block, registers, measured seconds);
predictions are added on the CPU by docs/results/h200/families_predict.py.
    python docs/results/h200/families_run.py OUT_DIR [--quick]
"""

import json
import sys
import time
from pathlib import Path

import numpy as np

import validate
from validate._families import family_specs, measure_families

out = Path(sys.argv[1] if len(sys.argv) > 1 else ".")
quick = "--quick" in sys.argv
session = validate.open_session(0)
info = validate.query_device(session)
start = time.perf_counter()
specs = family_specs(info.sm_count, quick=quick)
records = measure_families(session, info, specs, rng=np.random.default_rng(11), progress=print)
document = {"device": info.name, "arch": info.arch, "sm_count": info.sm_count,
            "l2_cache_bytes": info.l2_cache_bytes, "records": records}
(out / "families_raw.json").write_text(json.dumps(document, indent=1))
print(f"device: {info.name}; launches: {len(records)}; seconds: {time.perf_counter() - start:.1f}")
