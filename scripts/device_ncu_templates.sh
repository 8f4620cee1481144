#!/usr/bin/env bash
# `gpuroof ncu --binary` on a real Nsight Compute profile of template kernels
# (tests/data/ncu/template_kernels.cu: bool and type template parameters, a namespace, an anonymous
# namespace, a lambda's closure type). On a lent GPU, the wheels carried as for device_validate.sh:
#   bash scripts/device_ncu_templates.sh
# Builds the program and its cubin for the GPU's architecture with the nvcc gpuroof finds, profiles it
# three times with ncu --clock-control none --print-units base --csv --page raw, once per
# --print-kernel-base (demangled, Nsight's default; mangled; function), and reads each export with
# python -m gpuroof ncu EXPORT --binary CUBIN --json. Back in $OUT: the cubin, the three exports, their
# JSON reports, and templates_summary.txt (versions, exit codes, each kernel's SASS source, the table
# of the demangled export, and the same export read with the executable as the binary).
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PWD || exit 1
export PYTHONUNBUFFERED=1
summary=$OUT/templates_summary.txt
nvcc=$(python3 -c "from occupancy._nvcc import find_nvcc; print(find_nvcc() or '')")
[ -n "$nvcc" ] || { echo "no nvcc found (PATH, CUDA_HOME, nvidia-cuda-nvcc)" | tee $summary; exit 1; }
sm=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d '. ')
src=tests/data/ncu/template_kernels.cu
cubin=$OUT/template_kernels.cubin
{
  nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv,noheader
  ncu --version 2>&1 | tail -1
  "$nvcc" --version | tail -1
} > $summary
"$nvcc" -std=c++17 --extended-lambda -gencode arch=compute_$sm,code=sm_$sm -o /tmp/template_kernels $src || exit 1
"$nvcc" -std=c++17 --extended-lambda -cubin -arch=sm_$sm -o $cubin $src || exit 1
sections=$(python3 -c "import roofline; print(' '.join('--section ' + s for s in roofline.NCU_SECTIONS))")
for base in demangled mangled function; do
  # shellcheck disable=SC2086  # one word per --section argument
  ncu --clock-control none --print-units base --csv --page raw --print-kernel-base $base $sections \
    /tmp/template_kernels > $OUT/templates.$base.csv 2>> $summary
  echo "ncu --print-kernel-base $base rc=$?" >> $summary
  python3 -m gpuroof ncu $OUT/templates.$base.csv --binary $cubin --json > $OUT/templates.$base.json 2>> $summary
  echo "gpuroof ncu templates.$base.csv --binary template_kernels.cubin --json rc=$?" >> $summary
  python3 - $OUT/templates.$base.json >> $summary 2>&1 <<'EOF'
import json, sys
report = json.load(open(sys.argv[1]))
for row in sorted(report["kernels"], key=lambda r: r["kernel"]["id"]):
    k = row["kernel"]
    print(f"  {k['id']} {k['demangled_name']} | mangled={k['mangled_name']} | {k['sass_source']}")
EOF
done
{
  echo "--- gpuroof ncu templates.demangled.csv --binary template_kernels.cubin"
  python3 -m gpuroof ncu $OUT/templates.demangled.csv --binary $cubin 2>&1
  echo "rc=$?"
  echo "--- the same export, the executable as the binary"
  python3 -m gpuroof ncu $OUT/templates.demangled.csv --binary /tmp/template_kernels 2>&1 | grep -n "SASS\|rc=\|error"
} >> $summary
cat $summary
