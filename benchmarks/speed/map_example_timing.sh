#!/usr/bin/env bash
# `codemap map examples/labs.xlsx --target LOINC` timed cold and warm with each backend, from an
# empty model cache and fresh index caches (README, "What codemap map does"). Needs the venv active.
# The first `auto` run also makes the one-time ONNX export that the `int8` runs then reuse.
set -euo pipefail
cd "$(dirname "$0")/../.."  # the repository root
export HF_HUB_OFFLINE=1
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
export CODEMAP_MODEL_CACHE=$work/models
uptime
timed() {  # label backend index-cache: one run, wall time in tenths of a second
  local start=$(date +%s%N)
  codemap map examples/labs.xlsx --target LOINC -o "$work/out.xlsx" --backend "$2" \
    --cache-dir "$work/$3" -q > "$work/log" 2>&1 || { cat "$work/log"; exit 1; }
  local tenths=$(( ($(date +%s%N) - start) / 100000000 ))
  echo "$1 $((tenths / 10)).$((tenths % 10)) s"
}
timed "auto first run (export + index)" auto a
timed "auto warm" auto a
timed "auto cold (index built, export cached)" auto b
for backend in int8 torch; do
  timed "$backend cold" "$backend" "$backend"
  timed "$backend warm" "$backend" "$backend"
done
uptime
