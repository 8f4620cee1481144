#!/usr/bin/env bash
# On a lent GPU machine (device tool, .whl carried: ../shared/tools/device-wheels.sh pyelftools):
# bash scripts/device_cause_probes.sh. Runs the cause probes (validate/probes/_cause_probes.py):
# the table on stdout and in $OUT/cause_probes.md, the results in $OUT/cause_probes.json; about a minute.
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PWD || exit 1
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv
start=$(date +%s)
python3 scripts/cause_probes.py --out $OUT/cause_probes.json "$@" | tee $OUT/cause_probes.md
rc=${PIPESTATUS[0]}
echo "cause probes: $rc failed, in $(( $(date +%s) - start )) s"
exit $rc
