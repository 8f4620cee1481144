#!/bin/bash
# One device call for issue 9 (run from the repository root, with $OUT set):
#   bash scripts/clusters_device.sh
# 1. scripts/cluster_device.py: GPC layout, the driver's cluster answers, the calculator
#    checked against them;
# 2. Nsight Compute over a small PyTorch program (real kernels) and over the synthetic
#    launch plan (validate.checks._ncu_launches), then scripts/ncu_check.py against occupancy.
# Everything lands in $OUT/raw.tgz.
set -o pipefail
export PYTHONUNBUFFERED=1
mkdir -p "$OUT/raw"
nvidia-smi --query-gpu=name,driver_version,pci.bus_id,serial --format=csv > "$OUT/raw/nvidia_smi.csv" 2>&1
timeout 150 python3 scripts/cluster_device.py "$OUT/raw" 2>&1 | tee "$OUT/raw/device_log.txt"
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
"$NCU" --version > "$OUT/raw/ncu_version.txt" 2>&1
# ncu's raw page carries every launch__ metric once one is asked for.
METRICS=launch__block_size,launch__grid_size,launch__registers_per_thread,launch__shared_mem_per_block_static,launch__shared_mem_per_block_dynamic,launch__shared_mem_per_block_driver,launch__shared_mem_config_size,launch__occupancy_limit_blocks,launch__occupancy_limit_registers,launch__occupancy_limit_shared_mem,launch__occupancy_limit_warps
timeout 120 "$NCU" --clock-control none --metrics "$METRICS" --launch-count 250 --export "$OUT/raw/torch" --force-overwrite \
  python3 scripts/torch_kernels.py > "$OUT/raw/ncu_torch_log.txt" 2>&1
"$NCU" --import "$OUT/raw/torch.ncu-rep" --csv --page raw > "$OUT/raw/ncu_torch.csv" 2>&1
echo "torch: $(grep -c '^"[0-9]' "$OUT/raw/ncu_torch.csv") kernels profiled"
timeout 240 "$NCU" --clock-control none --metrics "$METRICS" --export "$OUT/raw/synthetic" --force-overwrite \
  python3 -m validate.checks._ncu_launches "$OUT/raw/ncu_manifest.jsonl" > "$OUT/raw/ncu_synthetic_log.txt" 2>&1
"$NCU" --import "$OUT/raw/synthetic.ncu-rep" --csv --page raw > "$OUT/raw/ncu_synthetic.csv" 2>&1
echo "synthetic: $(grep -c '^"[0-9]' "$OUT/raw/ncu_synthetic.csv") launches profiled, $(wc -l < "$OUT/raw/ncu_manifest.jsonl") planned"
tail -n 3 "$OUT/raw/ncu_synthetic_log.txt"
timeout 60 python3 scripts/ncu_check.py "$OUT/raw" 2>&1 | tee "$OUT/raw/ncu_check.txt"
rm -f "$OUT/raw/"*.ncu-rep
tar -C "$OUT" -czf "$OUT/raw.tgz" raw && rm -rf "$OUT/raw"
ls -la "$OUT"
