#!/usr/bin/env bash
# One lent-GPU call after the cause rules landed (carry .whl; on an H200 also .harness, the exam
# harness kept outside git): the global-CAS, L2-writes, flush-gap and shared-atomics probes, the cause and rule probes, `gpuroof validate
# --quick` and pytest -m gpu, their outputs in $OUT/steps.log (results: *.json, quick.tgz); on an H200 the exam harness first.
#   bash scripts/device_session.sh [BUDGET_SECONDS=570]
budget=${1:-570}; start=$(date +%s)
left() { echo $(( budget - ($(date +%s) - start) )); }
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl && touch /tmp/site/.harness-installed || exit 1
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
case "$name" in *H200*) slug=h200 ;; *) slug=h100-sxm ;; esac
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader
if [ "$slug" = h200 ] && [ -f .harness/run_device.sh ] && [ ! -f /tmp/harness-done ]; then
  bash .harness/run_device.sh h200 all 330 > /tmp/harness.log 2>&1 && touch /tmp/harness-done
  tail -3 /tmp/harness.log; cat /tmp/harness.log >> $OUT/steps.log
fi
step() {  # step NAME SECONDS_NEEDED COMMAND...: runs when that much time is left
  local n=$1 need=$2; shift 2
  [ -f /tmp/done-$n ] && return
  [ "$(left)" -lt "$need" ] && { echo "$n: skipped, $(left) s left"; return; }
  local s=$(date +%s); "$@" > /tmp/$n.log 2>&1; local rc=$?
  echo "$n rc=$rc in $(( $(date +%s) - s )) s"; tail -4 /tmp/$n.log; touch /tmp/done-$n
  { echo "=== $n rc=$rc"; cat /tmp/$n.log; } >> $OUT/steps.log
}
# first what the H200 has not run yet (the H100 SXM ran them on 2026-12-07): the flush gap, the
# L2-writes probe's fill launches and the H200's own cap, the rule probes, the loaded round trip
step flush_gap 40 bash -c "python3 scripts/flush_gap_probe.py > $OUT/flush_gap.md"
step l2_writes 80 python3 scripts/l2_writes_probe.py --out $OUT/l2_writes.json
step rule_probes 45 bash scripts/device_rule_probes.sh
step loaded_trip 20 python3 scripts/loaded_trip_probe.py  # its table lands in steps.log (8 files come back at most)
step global_cas 20 python3 scripts/global_cas_probe.py --out $OUT/global_cas.json
step shared_atomics 20 python3 scripts/shared_atomics_probe.py --out $OUT/shared_atomics.json
step cause_probes 90 python3 scripts/cause_probes.py --out $OUT/cause_probes.json
step gpu_tests 120 python3 -m pytest -m gpu tests --ignore=tests/fuzz -q -p no:cacheprovider
step validate_quick 80 bash -c "python3 -m gpuroof validate --quick --out /tmp/r/quick && tar czf $OUT/quick.tgz -C /tmp/r quick"
echo "device_session: $(( $(date +%s) - start )) s on $name"
