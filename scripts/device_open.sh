#!/usr/bin/env bash
# One lent-GPU call (carry .whl): the open-lines probe (rule l2_open_lines) and its GPU test on
# any GPU; on an H200 also scripts/device_new.sh (the H200's list), its outputs in one tar.
#   bash scripts/device_open.sh
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl 2>/dev/null
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv,noheader
t=$(date +%s)
timeout 200 python3 scripts/open_lines_probe.py --out $OUT/open_lines.json > $OUT/open_lines.md
echo "open_lines rc=$? $(( $(date +%s)-t ))s"; cat $OUT/open_lines.md
timeout 200 python3 -m pytest -m gpu tests/validate/test_open_lines_probe.py -q -p no:cacheprovider 2>&1 | tail -3
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  mkdir -p /tmp/o2; OUT=/tmp/o2 timeout 420 bash scripts/device_new.sh > /tmp/o2/steps.log 2>&1
  tail -30 /tmp/o2/steps.log; tar -C /tmp/o2 -cf $OUT/device_new.tar .
fi
