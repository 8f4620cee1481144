#!/usr/bin/env bash
# The figures a refactor must leave unchanged, written into OUTDIR (compare two runs with diff -r):
# bash scripts/golden.sh OUTDIR [PYTHON]. The corpus on each measured GPU, from its profiles and from
# source; the demo's suite; the CLI's predict and ncu on the committed examples. About 2-3 minutes of CPU.
set -u
out=$1; py=${2:-python3}
mkdir -p "$out"
for gpu in h200 h100-sxm; do
  $py -m gpuroof corpus --gpu $gpu --json -q > "$out/corpus.$gpu.json" 2> "$out/corpus.$gpu.err"
  $py -m gpuroof corpus --gpu $gpu --from-source --json -q > "$out/corpus.$gpu.source.json" 2> "$out/corpus.$gpu.source.err"
done
# the demo's JSON names its files: write them under one fixed folder, so two runs compare
$py -m gpuroof demo --json --out /tmp/golden-demo-files > "$out/demo.json" 2> "$out/demo.err"
rm -rf /tmp/golden-demo-files
$py -m gpuroof ncu tests/data/ncu/user_kernels.raw.csv --json > "$out/ncu.user.json" 2> "$out/ncu.user.err"
echo "golden figures in $out"
