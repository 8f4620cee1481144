#!/usr/bin/env bash
# One short lent-GPU call (carry .whl): what no GPU had run at the eighth session's start, the
# flush-gap, L2-writes and rule probes, then their GPU tests; outputs in $OUT (flush_gap.md,
# l2_writes.json/.log, rule_probes.json/.log, pytest.log). About 45 s on an H100.
#   bash scripts/device_new.sh
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 || exit 1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader
case "$(nvidia-smi --query-gpu=name --format=csv,noheader)" in *H200*) g=H200;; *) g="H100 SXM";; esac
t=$(date +%s); timeout 120 python3 scripts/flush_gap_probe.py > $OUT/flush_gap.md 2>$OUT/flush_gap.err; echo "flush rc=$? $(( $(date +%s)-t ))s"
t=$(date +%s); timeout 200 python3 scripts/l2_writes_probe.py --out $OUT/l2_writes.json > $OUT/l2_writes.log 2>&1; echo "l2w rc=$? $(( $(date +%s)-t ))s"
t=$(date +%s); timeout 120 python3 scripts/rule_probes.py --out $OUT/rule_probes.json --gpu "$g" > $OUT/rule_probes.log 2>&1; echo "rules rc=$? $(( $(date +%s)-t ))s"
t=$(date +%s); timeout 120 python3 -m pytest -m gpu tests/validate/test_l2_writes_probe.py tests/validate/test_rule_probes.py -q -p no:cacheprovider -x > $OUT/pytest.log 2>&1; echo "pytest rc=$? $(( $(date +%s)-t ))s"; tail -3 $OUT/pytest.log
