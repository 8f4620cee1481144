#!/usr/bin/env bash
# Exploration (one lent-GPU call, carry .whl): the rows_pair walk (a thread per row of two float
# arrays, 138 MB in all) at 4 to 32 blocks of 64 threads an SM, and at 256-thread blocks: Nsight's
# DRAM reads, L2 and L1 hit rates and duration of each launch (real clocks, caches flushed). Where
# do the rows in flight stop fitting L2 (the 4224-block control read 2.06 GB from DRAM on an H100)?
#   bash scripts/l2_window_explore.sh                      -> $OUT/l2_window_ncu.csv
# SPECS (blocks x threads an SM) and NAME choose other launches and file; the share of its open
# lines L1 keeps, by block size at 768 to 1024 threads an SM (2026-12-07, the twelfth session):
#   SPECS="12x64 3x256 1x768 14x64 7x128 1x896 8x128 2x512 1x1024" NAME=l1_keep_ncu.csv \
#     bash scripts/l2_window_explore.sh
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 || exit 1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem --format=csv,noheader
sms=132   # an H100 SXM's and an H200's
total=$((138412032 / 8))   # floats a row of both arrays holds in all: 138 MB over two arrays of 4 bytes
metrics=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,lts__t_sectors_srcunit_tex_op_read.sum,l1tex__t_sector_hit_rate.pct,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum
for spec in ${SPECS:-4x64 8x64 12x64 16x64 18x64 20x64 22x64 24x64 26x64 28x64 32x64 2x256 4x256 6x256 8x256 1x1024 2x1024}; do
  k=${spec%x*}; threads=${spec#*x}
  blocks=$((k * sms)); rows=$((blocks * threads)); cols=$(( (total + rows - 1) / rows ))
  n=$((rows * cols))
  timeout 60 ncu --clock-control none --cache-control all --print-units base --csv --metrics $metrics \
    --kernel-name rows_pair --launch-count 1 \
    python3 -m gpuroof measure validate/kernels/rule_probes.cu --kernel rows_pair --grid $blocks --block $threads \
      --arg "f32[$n]=ones" --arg "f32[$n]=ones" --arg "f32[$rows]" --arg i32=$cols --budget 0.01 -q > /tmp/ncu.csv 2>&1
  rc=$?
  { echo "== $spec blocks=$blocks threads=$threads rows=$rows cols=$cols rc=$rc"; grep -E '^"' /tmp/ncu.csv; } >> $OUT/${NAME:-l2_window_ncu.csv}
  echo "$spec rc=$rc"
done
