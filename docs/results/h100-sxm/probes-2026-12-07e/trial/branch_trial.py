"""Time a helper's branch kernels (trial_k.cu beside this file) at 16 and 32 full waves; print JSON (and $OUT/branch_trial.json)."""
import json, sys
from pathlib import Path
import numpy as np
sys.path.insert(0, str(Path(__file__).resolve().parents[4]))
from validate.device import StopRules, benchmark, compile_kernels, open_session, query_device
SRC = (Path(__file__).parent / "trial_k.cu").read_text()
NAMES = ["warp_branch", "lane_branch", "two_ifs", "nested"]
session = open_session(); info = query_device(session)
kernels = compile_kernels(SRC, NAMES, arch=session.arch, name="trial_k.cu")
wave = info.sm_count * (info.max_threads_per_sm // 256)
n = 32 * wave * 256
x, y = session.allocate(4 * n), session.allocate(4 * n)
session.fill(x, 0x3c23d70a, 4 * n)  # 0.01f
out = {"device": info.name, "wave_blocks": wave, "seconds": {}}
for k in NAMES:
    out["seconds"][k] = [benchmark(session.launcher(kernels[k], (w * wave, 1, 1), (256, 1, 1), (y, x)),
                                   timer=session.timer, rules=StopRules(warmup=3, repetitions=15)).median_seconds
                         for w in (16, 32)]
session.synchronize()
print(json.dumps(out))
import os
Path(os.environ.get("OUT", "/tmp"), "branch_trial.json").write_text(json.dumps(out, indent=1))
