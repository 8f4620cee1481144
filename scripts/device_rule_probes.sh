#!/usr/bin/env bash
# On a lent GPU machine (device tool, .whl carried: ../shared/tools/device-wheels.sh pyelftools):
# bash scripts/device_rule_probes.sh. Times the rule probes (validate/probes/_rule_probes.py: two
# launches per corpus-argued rule, about 30 s on an H100) into $OUT/rule_probes.json; the exit
# code is the number of launches that failed.
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PWD || exit 1
export PYTHONUNBUFFERED=1
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
case "$name" in *H200*) gpu=H200 ;; *) gpu="H100 SXM" ;; esac
echo "$name: predicting as $gpu"
start=$(date +%s)
python3 scripts/rule_probes.py --out $OUT/rule_probes.json --gpu "$gpu"
rc=$?
echo "rule probes rc=$rc in $(( $(date +%s) - start )) s"
exit $rc
