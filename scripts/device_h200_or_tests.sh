#!/usr/bin/env bash
# One lent-GPU call (carry .whl): on an H200, what it has not run (the flush-gap, L2-writes, rule
# and loaded-trip probes, scripts/device_new.sh and scripts/loaded_trip_probe.py); on an H100,
# the whole GPU test suite. Outputs in $OUT.
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "$name"
case "$name" in
  *H200*) bash scripts/device_new.sh 2>&1 | grep -v WARNING
          timeout 100 python3 scripts/loaded_trip_probe.py --out $OUT/loaded_trip.json > $OUT/loaded_trip.md; echo "loaded rc=$?" ;;
  *) timeout 240 python3 -m pytest -m gpu tests --ignore=tests/fuzz -q -p no:cacheprovider > $OUT/gpu_tests.txt 2>&1
     echo "gpu tests rc=$?"; tail -5 $OUT/gpu_tests.txt ;;
esac
