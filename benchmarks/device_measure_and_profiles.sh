#!/usr/bin/env bash
# One device call: validate.measure on five kernels (benchmarks/measure_check.py), its GPU
# tests, and Nsight Compute profiles of the suite (with L2 sector counters, for
# docs/results/h200/ncu_vs_model.md) and of the five kernels (docs/measure.md).
# Usage, from the repository root on a GPU machine with ncu:  W=/tmp/w bash benchmarks/device_measure_and_profiles.sh
set -u
W=${W:-/tmp/w}
mkdir -p "$W"
export PYTHONUNBUFFERED=1
SECTIONS=$(python3 -c "import roofline; print(' '.join('--section ' + s for s in roofline.NCU_SECTIONS))")
COUNTERS="--metrics lts__t_sectors_srcunit_tex.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_write.sum,dram__bytes_read.sum,dram__bytes_write.sum"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
echo "== measure"
timeout 240 python3 benchmarks/measure_check.py --out "$W" 2>&1 | tee "$W/measure_check.log"
echo "== gpu tests"
timeout 120 python3 -m pytest -q -m gpu tests/validate/test_measure.py -p no:cacheprovider 2>&1 | tail -4
echo "== profiles"
SECONDS=0
# shellcheck disable=SC2086
timeout 150 ncu --clock-control none $SECTIONS $COUNTERS --profile-from-start off -f -o "$W/suite" \
  python3 tests/data/ncu/suite_once.py > "$W/suite.log" 2>&1; echo "suite: exit $? after ${SECONDS}s"
grep '^{' "$W/suite.log" > "$W/suite_counts.jsonl"
# shellcheck disable=SC2086
timeout 120 ncu --clock-control none $SECTIONS --profile-from-start off -f -o "$W/user" \
  python3 benchmarks/measure_check.py --profile-once > "$W/user.log" 2>&1; echo "user: exit $? after ${SECONDS}s"
for r in suite user; do
  ncu --import "$W/$r.ncu-rep" --csv --page raw > "$W/$r.raw.csv"
  ncu --import "$W/$r.ncu-rep" --csv --page raw --print-units base > "$W/$r.raw_base.csv"
done
ls -la "$W"
echo "== load_ncu: .ncu-rep against its CSV"
python3 - "$W" <<'PY'
import sys, roofline
w = sys.argv[1]
for r in ("suite", "user"):
    rep, csv = roofline.load_ncu(f"{w}/{r}.ncu-rep"), roofline.load_ncu(f"{w}/{r}.raw_base.csv")
    bad = []
    for a, b in zip(rep.kernels, csv.kernels):
        da, db = a.model_dump(), b.model_dump()
        for key in da:
            va, vb = da[key], db[key]
            if isinstance(va, float) and isinstance(vb, float):
                if abs(va - vb) > 1e-6 * max(abs(va), abs(vb)):
                    bad.append((a.name, key, va, vb))
            elif isinstance(va, dict) and key == "flops":
                for p in set(va) | set(vb):
                    x, y = va.get(p), vb.get(p)
                    if x is None or y is None or abs(x - y) > 1e-6 * max(abs(x), abs(y), 1):
                        bad.append((a.name, f"flops.{p}", x, y))
            elif va != vb:
                bad.append((a.name, key, va, vb))
    print(r, len(rep.kernels), "kernels from .ncu-rep,", len(csv.kernels), "from CSV;", len(bad), "differences")
    for item in bad[:20]:
        print("  ", item)
PY
echo "== SASS: HFMA2 instructions per suite kernel"
nvcc -arch=sm_90 -cubin validate/kernels/suite.cu -o "$W/suite.cubin" && \
  cuobjdump -sass "$W/suite.cubin" | awk '/Function :/{f=$3} /HFMA2/{c[f]++; if (!(f in ex)) ex[f]=$0} END{for (k in c) print k, c[k], ex[k]}'
