#!/usr/bin/env bash
# On a lent GPU machine (device tool, .whl carried: ../shared/tools/device-wheels.sh pyelftools):
# bash scripts/device_validate.sh SLUG [gpuroof validate options], e.g. h200, or h200-x2 --devices all.
# Runs gpuroof validate and pytest -m gpu; the report folder comes back as $OUT/SLUG.tgz.
slug=$1; shift
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PWD || exit 1
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv
ncu --version 2>&1 | tail -1
mkdir -p /tmp/r
start=$(date +%s)
python3 -m gpuroof validate --out /tmp/r/$slug "$@" > $OUT/validate_stdout.txt 2> $OUT/validate_stderr.txt
echo "validate rc=$? in $(( $(date +%s) - start )) s"
tail -5 $OUT/validate_stderr.txt
start=$(date +%s)
python3 -m pytest -m gpu tests --ignore=tests/fuzz -q -p no:cacheprovider > $OUT/gpu_tests.txt 2>&1
echo "pytest -m gpu rc=$? in $(( $(date +%s) - start )) s"
tail -25 $OUT/gpu_tests.txt
tar czf $OUT/$slug.tgz -C /tmp/r $slug
grep -n "median\|within\|worst" /tmp/r/$slug/report.md | head -30
