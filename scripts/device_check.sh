#!/usr/bin/env bash
# One short lent-GPU call after a merge (carry .whl): `gpuroof validate --quick`, pytest -m gpu,
# then the rule and cause probes where their scripts exist (last: the first two check the merge). Each step's output comes back in $OUT.
#   bash scripts/device_check.sh
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv
start=$(date +%s)
python3 -m gpuroof validate --quick --out /tmp/r/quick > $OUT/validate_quick.txt 2>&1
echo "validate --quick rc=$? in $(( $(date +%s) - start )) s"; tail -12 $OUT/validate_quick.txt
tar czf $OUT/quick.tgz -C /tmp/r quick 2>/dev/null
start=$(date +%s)
python3 -m pytest -m gpu tests --ignore=tests/fuzz -q -p no:cacheprovider > $OUT/gpu_tests.txt 2>&1
echo "pytest -m gpu rc=$? in $(( $(date +%s) - start )) s"; tail -6 $OUT/gpu_tests.txt
for probe in rule_probes cause_probes; do
  [ -f scripts/device_$probe.sh ] || continue
  start=$(date +%s)
  bash scripts/device_$probe.sh > $OUT/$probe.log 2>&1
  echo "$probe rc=$? in $(( $(date +%s) - start )) s"; tail -30 $OUT/$probe.log
done
