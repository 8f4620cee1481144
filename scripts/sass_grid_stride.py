"""The H200's low-occupancy grid-stride copy predicted with loads in flight from the SASS.

    python scripts/sass_grid_stride.py [--markdown]

Compiles validate/kernels/families.cu's grid_stride_copy for sm_90 at each EPT with NVRTC
(as `gpuroof validate` does), reads its global loads in flight from the SASS
(`occupancy.kernel_resources(...).sass`), and predicts the 15 grid_stride_low_occupancy
launches of tests/data/families_h200.json twice with the packaged calibration: with
loads_in_flight_per_thread = EPT (the family's model) and with the SASS's count. Nothing is
fitted: the errors are those of the model as it stands. No GPU needed; needs NVRTC and nvdisasm
(``pip install -e '.[test]'``).
"""

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import occupancy  # noqa: E402
import roofline  # noqa: E402
import validate  # noqa: E402
from validate.device import _compile  # noqa: E402
from validate.suite._families import family_specs  # noqa: E402


def main() -> int:
    data = json.loads((ROOT / "tests" / "data" / "families_h200.json").read_text())
    rows = [r for r in data["rows"] if r["family"] == "grid_stride_low_occupancy"]
    specs = {s.label: s for s in family_specs(132)}  # the H200's 132 SMs
    source = _compile.kernel_source("families.cu")
    sass = {}
    for ept in sorted({r["label"].split("ept=")[1].rstrip(")") for r in rows}, key=int):
        r = occupancy.kernel_resources(source, arch="sm_90", kernel="grid_stride_copy", options=[f"-DEPT={ept}"])
        if r.sass is None:
            sys.exit(f"the SASS was not read: {r.sources['sass']}")
        sass[int(ept)] = r.sass
    out = []
    for row in rows:
        ept = int(row["label"].split("ept=")[1].rstrip(")"))
        model = specs[row["label"]].model()
        launch = model.launch.model_copy(update={
            "grid": tuple(row["grid"]), "block": tuple(row["block"]),
            "registers_per_thread": row["registers_per_thread"],
            "static_shared_memory": row["static_shared_memory"]})
        before = roofline.predict(data["gpu"], model, launch)
        in_flight = sass[ept].global_loads_in_flight_per_thread
        after = roofline.predict(data["gpu"], model, launch.model_copy(update={"loads_in_flight_per_thread": in_flight}))
        measured = row["measured_seconds"]
        out.append((row["label"], measured, ept, before.seconds, in_flight, after.seconds, after.limiter))
    if "--markdown" in sys.argv:
        print("| launch | measured (us) | EPT | predicted, loads in flight = EPT (us) | error | "
              "SASS loads in flight | predicted, from the SASS (us) | error |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|")
        for label, measured, ept, b, n, a, _ in out:
            print(f"| {label.removeprefix('grid_stride_copy')} | {measured * 1e6:.0f} | {ept} | {b * 1e6:.0f} | "
                  f"{(b - measured) / measured * 100:+.0f}% | {n} | {a * 1e6:.0f} | {(a - measured) / measured * 100:+.0f}% |")
    else:
        for label, measured, ept, b, n, a, limiter in out:
            print(f"{label:45s} measured {measured * 1e6:7.1f} us  EPT={ept:2d}: {b * 1e6:7.1f} us "
                  f"({(b - measured) / measured * 100:+6.1f}%)  SASS={n}: {a * 1e6:7.1f} us "
                  f"({(a - measured) / measured * 100:+6.1f}%) {limiter}")
    errors = [(abs(b - m) / m, abs(a - m) / m) for _, m, _, b, _, a, _ in out]
    for i, name in enumerate(("EPT", "SASS")):
        values = sorted(e[i] for e in errors)
        print(f"loads in flight = {name}: median |error| {values[len(values) // 2] * 100:.0f}%, "
              f"worst {values[-1] * 100:.0f}%")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
