#!/usr/bin/env bash
# One lent-GPU call (carry .whl): the open-lines probe (rule l2_open_lines) on any GPU; then on an
# H200 its L2-writes probe (the cap it still has from the exploration), elsewhere the open-lines
# probe's GPU test; last the Triton timing check (warm L2 against after a write). Outputs in $OUT.
#   bash scripts/device_open.sh
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl 2>/dev/null
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv,noheader
t=$(date +%s)
timeout 200 python3 scripts/open_lines_probe.py --out $OUT/open_lines.json > $OUT/open_lines.md
echo "open_lines rc=$? $(( $(date +%s)-t ))s"; cat $OUT/open_lines.md
t=$(date +%s)
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  timeout 200 python3 scripts/l2_writes_probe.py --out $OUT/l2_writes.json > $OUT/l2_writes.md 2>&1
  echo "l2_writes rc=$? $(( $(date +%s)-t ))s"; tail -20 $OUT/l2_writes.md
else
  timeout 200 python3 -m pytest -m gpu tests/validate/test_open_lines_probe.py -q -p no:cacheprovider 2>&1 | tail -3
  echo "pytest $(( $(date +%s)-t ))s"
fi
t=$(date +%s)
timeout 90 python3 scripts/triton_add_check.py > $OUT/triton_add.txt 2>&1
echo "triton_add rc=$? $(( $(date +%s)-t ))s"; tail -32 $OUT/triton_add.txt | tr -d ' \n'; echo
