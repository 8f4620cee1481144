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
$py -m gpuroof demo --json --out "$out/demo" > "$out/demo.json" 2> "$out/demo.err"
rm -rf "$out/demo"
$py -m gpuroof ncu tests/data/ncu/user_kernels.raw.csv --json > "$out/ncu.user.json" 2> "$out/ncu.user.err"
echo "golden figures in $out"
