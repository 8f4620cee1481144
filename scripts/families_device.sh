#!/bin/bash
# One device call for issue 11's families (run from the repository root, with $OUT set):
#   bash scripts/families_device.sh
# 1. the quick GPU tests of the families (every family's small launches checked and timed,
#    a suite row reused) and of the fit's callers;
# 2. a full `gpuroof validate` (ceilings, ..., the copy sweep and its fit, the suite, the
#    84 family launches); its folder lands in $OUT/validate.tgz, the log in $OUT/validate.log.
# Copy the folder to docs/results/<gpu>/ only when the run was a full one with no failure.
# About 3 to 4 minutes on an H100 or H200.
set -o pipefail
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv > "$OUT/nvidia_smi.csv" 2>&1
timeout 90 python3 -m pytest -q -p no:cacheprovider tests/validate/test_families_gpu.py 2>&1 | tee "$OUT/pytest.log"
timeout 420 python3 -m gpuroof validate --out "$OUT/validate" 2>&1 | tee "$OUT/validate.log"
tar -C "$OUT" -czf "$OUT/validate.tgz" validate && rm -rf "$OUT/validate"
grep -E "families|fitted|copy sweep|validated in" "$OUT/validate.log" | tail -n 8
ls -la "$OUT"
