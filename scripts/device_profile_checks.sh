#!/usr/bin/env bash
# The profile path's checks on a lent GPU (issue 22): the launch-under-Nsight probe, gpuroof
# profile on a one-block kernel (source-page SASS = nvdisasm's, loads per thread, the one-block
# prediction within 15 % with Nsight's launch), real ncu's failure messages, and a profile of the
# user kernels of docs/measure.md with its plot. Carry the wheels as for device_validate.sh:
# bash scripts/device_profile_checks.sh; the outputs come back in $OUT.
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PWD || exit 1
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv
ncu --version 2>&1 | tail -1
python3 -m pytest -m gpu -q -p no:cacheprovider -s tests/validate/test_nsight_launch.py tests/test_cli_profile.py \
  > $OUT/profile_gpu_tests.txt 2>&1
echo "pytest -m gpu (profile path) rc=$?"; tail -15 $OUT/profile_gpu_tests.txt
python3 -c "
from validate.probes._nsight_launch import measure_nsight_launch
r = measure_nsight_launch(); print(r.model_dump_json(indent=1))" > $OUT/nsight_launch.json 2>&1; cat $OUT/nsight_launch.json
python3 -m gpuroof profile -o $OUT/user --plot $OUT/user_profile.png -- \
  python3 benchmarks/measure_check.py --profile-once > $OUT/user_profile.txt 2>&1
echo "gpuroof profile rc=$?"; tail -30 $OUT/user_profile.txt
ncu --import $OUT/user.ncu-rep --page source --print-source sass --csv 2>&1 | head -40 > $OUT/source_page_head.csv
