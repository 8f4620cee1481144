#!/usr/bin/env bash
# Exploration (one lent-GPU call, carry .whl): how much of a thread-per-row walk's open lines L1
# keeps when they pass its capacity, by block size at equal threads an SM. The rows_pair walk
# (two float arrays, 138 MB in all) at 768, 896 and 1024 threads an SM (192, 224 and 256 KB of
# open lines an SM) in blocks of 64 to 1024 threads: Nsight's L1 and L2 hit rates, DRAM reads and
# duration of each launch (real clocks, caches flushed). On the H100 SXM 1 x 1024 hit 61 % in L1
# where 16 x 64 hit 35 % and 4 x 256 22 % (docs/results/h100-sxm/probes-2026-12-07b).
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 || exit 1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem --format=csv,noheader
sms=$(nvidia-smi --query-gpu=multiprocessor_count --format=csv,noheader 2>/dev/null | head -1)
[[ $sms =~ ^[0-9]+$ ]] || sms=132
total=$((138412032 / 8))   # floats a row of both arrays holds in all: 138 MB over two arrays of 4 bytes
metrics=gpu__time_duration.sum,dram__bytes_read.sum,lts__t_sector_hit_rate.pct,lts__t_sectors_srcunit_tex_op_read.sum,l1tex__t_sector_hit_rate.pct,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum
for spec in ${SPECS:-12x64 3x256 1x768 14x64 7x128 1x896 8x128 2x512 1x1024}; do
  k=${spec%x*}; threads=${spec#*x}
  blocks=$((k * sms)); rows=$((blocks * threads)); cols=$(( (total + rows - 1) / rows ))
  n=$((rows * cols))
  timeout 60 ncu --clock-control none --cache-control all --print-units base --csv --metrics $metrics \
    --kernel-name rows_pair --launch-count 1 \
    python3 -m gpuroof measure validate/kernels/rule_probes.cu --kernel rows_pair --grid $blocks --block $threads \
      --arg "f32[$n]=ones" --arg "f32[$n]=ones" --arg "f32[$rows]" --arg i32=$cols --budget 0.01 -q > /tmp/ncu.csv 2>&1
  rc=$?
  { echo "== $spec blocks=$blocks threads=$threads rows=$rows cols=$cols rc=$rc"; grep -E '^"' /tmp/ncu.csv; } >> $OUT/l1_keep_ncu.csv
  echo "$spec rc=$rc"
done
