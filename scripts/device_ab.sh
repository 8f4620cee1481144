#!/usr/bin/env bash
# One lent-GPU call for a same-machine before/after check (carry .whl and .base, where .base is
# `git archive BASE occupancy roofline validate gpuroof pyproject.toml` unpacked):
#   bash scripts/device_ab.sh
# Runs `gpuroof validate` on this checkout, then on .base, on the same GPU back to back, then
# pytest -m gpu; compares the two reports (scripts/compare_validate_reports.py). Reports come
# back as $OUT/after.tgz and $OUT/before.tgz, the comparison as $OUT/compare-ab.txt.
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl || exit 1
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv
mkdir -p /tmp/r
for side in after before; do
  dir=$PWD; [ $side = before ] && dir=$PWD/.base
  start=$(date +%s)
  (cd "$dir" && PYTHONPATH=/tmp/site:$dir python3 -m gpuroof validate --out /tmp/r/$side \
     > $OUT/validate_$side.stdout.txt 2> $OUT/validate_$side.stderr.txt)
  echo "validate $side rc=$? in $(( $(date +%s) - start )) s"
  tar czf $OUT/$side.tgz -C /tmp/r $side
done
PYTHONPATH=/tmp/site:$PWD python3 scripts/compare_validate_reports.py /tmp/r/before /tmp/r/after > $OUT/compare-ab.txt 2>&1
echo "compare rc=$?"; head -60 $OUT/compare-ab.txt
start=$(date +%s)
PYTHONPATH=/tmp/site:$PWD python3 -m pytest -m gpu tests --ignore=tests/fuzz -q -p no:cacheprovider -x > $OUT/gpu_tests.txt 2>&1
echo "pytest -m gpu rc=$? in $(( $(date +%s) - start )) s"; tail -15 $OUT/gpu_tests.txt
