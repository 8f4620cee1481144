#!/usr/bin/env bash
# Profile the workloads of this folder with Nsight Compute and export them (README.md here).
# Usage, from the repository root of a gpuroof checkout on a machine with a GPU and ncu
# (validate needs pydantic and cuda-python importable):
#   W=/tmp/ncu bash tests/data/ncu/collect.sh
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
W=${W:-/tmp/ncu}
mkdir -p "$W"
NCUDIR=$(dirname "$(readlink -f "$(command -v ncu)")")
ncu --version
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv
echo "ncu dir: $NCUDIR"; ls "$NCUDIR" "$NCUDIR/extras/python" 2>&1
ncu --list-sets > "$W/list_sets.txt" 2>&1
ncu --list-sections > "$W/list_sections.txt" 2>&1
ncu --query-metrics --chip gh100 > "$W/query_metrics_gh100.txt" 2>&1
tar czf "$W/sections.tgz" -C "$NCUDIR" sections
# The sections gpuroof reads (docs/measure.md): speed of light, the roofline charts,
# memory workload analysis, launch statistics and occupancy.
ROOF=(--section SpeedOfLight --section SpeedOfLight_RooflineChart
      --section SpeedOfLight_HierarchicalSingleRooflineChart --section SpeedOfLight_HierarchicalHalfRooflineChart
      --section SpeedOfLight_HierarchicalDoubleRooflineChart --section SpeedOfLight_HierarchicalTensorRooflineChart
      --section MemoryWorkloadAnalysis --section LaunchStats --section Occupancy)
exports() {  # $1: report base name
  ncu --import "$W/$1.ncu-rep" --csv --page raw > "$W/$1.raw.csv"
  ncu --import "$W/$1.ncu-rep" --csv --page raw --print-units base > "$W/$1.raw_base.csv"
  ncu --import "$W/$1.ncu-rep" --csv --page details > "$W/$1.details.csv"
  ncu --import "$W/$1.ncu-rep" --csv --page details --print-units base > "$W/$1.details_base.csv"
  wc -c "$W/$1".*
}
profile() {  # $1: seconds, $2: report base name, rest: ncu options and the program
  local limit=$1 name=$2; shift 2
  SECONDS=0
  timeout "$limit" ncu --clock-control none --profile-from-start off -f -o "$W/$name" "$@" > "$W/$name.log" 2>&1
  echo "$name: exit $? after ${SECONDS}s"; tail -3 "$W/$name.log"
  exports "$name"
}
profile 120 torch_roofline "${ROOF[@]}" --nvtx python3 "$HERE/torch_workload.py"
profile 150 suite_roofline "${ROOF[@]}" python3 "$HERE/suite_once.py"
grep '^{' "$W/suite_roofline.log" > "$W/suite_counts.jsonl"
profile 150 torch_full --set full --nvtx python3 "$HERE/torch_workload.py"
profile 60 torch_sol --section SpeedOfLight python3 "$HERE/torch_workload.py"
python3 "$HERE/probe_ncu_report.py" "$W/torch_roofline.ncu-rep" > "$W/ncu_report_probe.txt" 2>&1
head -c 2000 "$W/ncu_report_probe.txt"
