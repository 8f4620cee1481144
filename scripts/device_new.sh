#!/usr/bin/env bash
# One lent-GPU call (carry .whl): what no GPU has run yet at the ninth session's start. On any GPU,
# the probe of `l1_resident_blocks` (rule_probes.py --rules l1_resident_blocks) and Nsight's L2
# sectors of its four launches (ncu, real clocks: does L1 keep two iterations of the grid's few
# blocks?) and the loaded round trip with its new copy walk; on an H200 also the flush-gap,
# L2-writes and every rule probe, which only the H100 SXM has run. Outputs in $OUT (8 files at
# most: tee the step log on stdout into $OUT/steps.log).
#   bash scripts/device_new.sh
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 || exit 1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader
case "$(nvidia-smi --query-gpu=name --format=csv,noheader)" in *H200*) g=H200;; *) g="H100 SXM";; esac
timed() { local n=$1 limit=$2; shift 2; local t=$(date +%s); timeout $limit "$@"; echo "$n rc=$? $(( $(date +%s)-t ))s"; }
timed l1_resident 90 python3 scripts/rule_probes.py --out $OUT/l1_resident.json --gpu "$g" --rules l1_resident_blocks
if [ "$g" = H200 ]; then
  timed flush 120 bash -c "python3 scripts/flush_gap_probe.py 2>&1 > $OUT/flush_gap.md"
  timed l2w 200 python3 scripts/l2_writes_probe.py --out $OUT/l2_writes.json
  timed rules 150 python3 scripts/rule_probes.py --out $OUT/rule_probes.json --gpu H200
fi
timed loaded_trip 90 bash -c "python3 scripts/loaded_trip_probe.py --out $OUT/loaded_trip.json > $OUT/loaded_trip.md 2>&1"
# Nsight's counts of each launch, one ncu run each (the launch is the probe's, from RULE_PROBES)
python3 - <<'PY' > /tmp/l1_launches.txt
from validate.probes._rule_probes import RULE_PROBES
for p in RULE_PROBES:
    if p.rule == "l1_resident_blocks":
        print(p.variant, ",".join(map(str, p.grid)), ",".join(map(str, p.block)), " ".join(f"--arg {a}" for a in p.args))
PY
metrics=gpu__time_duration.sum,lts__t_sectors_srcunit_tex_op_read.sum,l1tex__t_sector_hit_rate.pct,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,dram__bytes_read.sum,sm__warps_active.avg.pct_of_peak_sustained_active
while read -r variant grid block args; do
  t=$(date +%s)
  timeout 40 ncu --clock-control none --cache-control all --print-units base --csv --metrics $metrics \
    --kernel-name rows_pair --launch-count 1 \
    python3 -m gpuroof measure validate/kernels/rule_probes.cu --kernel rows_pair --grid $grid --block $block $args \
      --budget 0.01 -q > /tmp/ncu_$variant.csv 2>&1
  echo "ncu $variant rc=$? $(( $(date +%s)-t ))s"
  { echo "== $variant grid=$grid block=$block"; grep -E '^"' /tmp/ncu_$variant.csv; } >> $OUT/l1_resident_ncu.csv
done < /tmp/l1_launches.txt
timed pytest 60 python3 -m pytest -m gpu tests/validate/test_rule_probes.py -q -p no:cacheprovider -x
