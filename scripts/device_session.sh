#!/usr/bin/env bash
# One lent-GPU call that checks a merge (the wheels carried as for device_validate.sh):
#   bash scripts/device_session.sh SLUG [templates]
# Runs scripts/device_validate.sh SLUG (gpuroof validate + pytest -m gpu), compares its report
# with the committed docs/results/SLUG (scripts/compare_validate_reports.py), and with
# `templates` also scripts/device_ncu_templates.sh. Each step's files come back as one tarball
# in $OUT (the device tool returns at most 8 files).
slug=$1; shift
if [ "$slug" = auto ]; then  # the committed report of the GPU this call landed on
  case "$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)" in
    *H200*) slug=h200 ;; *) slug=h100-sxm ;;
  esac
fi
echo "GPU slug: $slug"
real=$OUT
mkdir -p /tmp/out_templates /tmp/out_validate
if [ "${1:-}" = templates ]; then
  start=$(date +%s)
  OUT=/tmp/out_templates bash scripts/device_ncu_templates.sh > /tmp/out_templates/log.txt 2>&1
  echo "templates rc=$? in $(( $(date +%s) - start )) s"
  tar czf "$real/templates.tgz" -C /tmp out_templates
fi
OUT=/tmp/out_validate bash scripts/device_validate.sh "$slug" > /tmp/out_validate/log.txt 2>&1
echo "validate script rc=$?"
tail -40 /tmp/out_validate/log.txt
cp /tmp/out_validate/*.tgz "$real/" 2>/dev/null
PYTHONPATH=/tmp/site:$PWD python3 scripts/compare_validate_reports.py "docs/results/$slug" "/tmp/r/$slug" > "$real/compare.txt" 2>&1
echo "compare rc=$?"
tail -30 "$real/compare.txt"
tar czf "$real/validate_logs.tgz" -C /tmp out_validate
