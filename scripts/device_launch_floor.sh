#!/usr/bin/env bash
# The profile path's launch floor on a lent GPU: an empty one-block kernel's Nsight Compute duration
# (validate's nsight_launch probe: ncu --clock-control none --metrics gpu__time_duration.sum over
# 20 launches of validate/kernels/latency.cu's empty kernel, the median), printed as the
# [calibration.nsight_empty_kernel_seconds] section of roofline/data/gpus/<gpu>.toml. With the
# wheels carried as for device_validate.sh:
#   bash scripts/device_launch_floor.sh [LAUNCHES]
# Prints the section on stdout (and into $OUT/launch_floor.toml where $OUT is set); review it,
# then replace the GPU's section with it.
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl 2>/dev/null \
  && export PYTHONPATH=/tmp/site:$PWD || export PYTHONPATH=$PWD
export PYTHONUNBUFFERED=1
ncu --version 2>&1 | tail -1 >&2
device=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
driver=$(nvidia-smi | sed -n 's/.*CUDA Version: \([0-9.]*\).*/\1/p' | head -1)
python3 - "${1:-20}" "$device" "$driver" <<'PY' | tee ${OUT:+$OUT/launch_floor.toml}
import datetime, sys
from validate.probes._nsight_launch import NsightLaunchProbe, measure_nsight_launch

launches, device, driver = int(sys.argv[1]), sys.argv[2], sys.argv[3]
result = measure_nsight_launch(launches=launches, progress=lambda line: print(line, file=sys.stderr))
if result.empty_kernel_seconds is None:
    sys.exit(f"not measured: {result.skipped}")
for field, (value, how) in NsightLaunchProbe().figures(result).items():
    print(f"[calibration.{field}]")
    print(f"value = {value:.4g}")
    print(f'source = "measured: {how}; an {device}, CUDA driver {driver}, {datetime.date.today()}, '
          f'scripts/device_launch_floor.sh (spread {result.spread_seconds * 1e6:.2f} us)"')
PY
