"""Re-predict the 24 column-write launches (times.jsonl) with roofline.predict on the CPU.

    .venv/bin/python docs/results/h200/column_writes/repredict.py   # prints the markdown table
"""
import json
import statistics
from pathlib import Path

import occupancy
import roofline

N = 8192
HERE = Path(__file__).parent
STORE_ROW = (lambda c: c.y * N + c.x)   # out[iy * nx + ix]
COLUMN = (lambda c: c.x * N + c.y)      # [ix * ny + iy]
PATTERNS = {
    "naive_row": [("load", STORE_ROW), ("store", COLUMN)],
    "copy_column": [("load", COLUMN), ("store", COLUMN)],
    "write_column": [("store", COLUMN)],
    "naive_column": [("load", COLUMN), ("store", STORE_ROW)],
}


def kernel(name, block):
    guard = lambda c: (c.x < N) & (c.y < N)  # noqa: E731
    accesses = [roofline.memory.Access(array="in" if kind == "load" else "out", index=index, guard=guard, kind=kind)
                for kind, index in PATTERNS[name]]
    grid = (N // block[0], N // block[1])
    return roofline.memory.traffic(grid, block, accesses).kernel(name=name, flops=0, launch=occupancy.Launch(
        grid=grid, block=block, registers_per_thread=16))


rows, errors = [], []
for line in (HERE / "times.jsonl").read_text().splitlines():
    r = json.loads(line)
    k = kernel(r["kernel"], tuple(r["block"]))
    launch = k.launch.model_copy(update={"dynamic_shared_memory": r["dynamic_smem"],
                                         "max_dynamic_shared_memory": max(r["dynamic_smem"], 48 << 10)})
    p = roofline.predict("H200", k, launch)
    error = (p.seconds * 1e6 / r["us"] - 1) * 100
    errors.append(abs(error))
    rows.append(f"| {r['kernel']} | {r['block'][0]} x {r['block'][1]} | {r['dynamic_smem']} | {r['us']:.1f} | "
                f"{p.seconds * 1e6:.1f} | {error:+.0f} % | {p.limiter} |")
print("| kernel | block | dynamic smem | measured us | predicted us | error | limiter |")
print("| --- | --- | ---: | ---: | ---: | ---: | --- |")
print("\n".join(rows))
print(f"\nMedian |error| {statistics.median(errors):.0f} % over the {len(errors)} launches, worst {max(errors):.0f} %.")
