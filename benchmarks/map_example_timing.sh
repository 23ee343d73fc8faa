#!/usr/bin/env bash
# `codemap map examples/labs.xlsx --target LOINC` timed cold and warm with each backend, from an
# empty model cache and fresh index caches (README, "What codemap map does"). Needs the venv active.
set -e
cd "$(dirname "$0")/.."; export HF_HUB_OFFLINE=1
W=$(mktemp -d); export CODEMAP_MODEL_CACHE=$W/models
uptime
t() { local label=$1; shift; local s=$(date +%s.%N); "$@" > /dev/null 2>&1; local e=$(date +%s.%N); printf "%s %.1f s\n" "$label" $(echo "$e - $s" | bc); }
t "auto first run (export + index)" codemap map examples/labs.xlsx --target LOINC -o $W/a1.xlsx --cache-dir $W/ia -q
t "auto warm" codemap map examples/labs.xlsx --target LOINC -o $W/a2.xlsx --cache-dir $W/ia -q
t "auto cold (index built, export cached)" codemap map examples/labs.xlsx --target LOINC -o $W/a3.xlsx --cache-dir $W/ib -q
t "int8 cold" codemap map examples/labs.xlsx --target LOINC -o $W/i1.xlsx --cache-dir $W/ic --backend int8 -q
t "int8 warm" codemap map examples/labs.xlsx --target LOINC -o $W/i2.xlsx --cache-dir $W/ic --backend int8 -q
t "torch cold" codemap map examples/labs.xlsx --target LOINC -o $W/t1.xlsx --cache-dir $W/id --backend torch -q
t "torch warm" codemap map examples/labs.xlsx --target LOINC -o $W/t2.xlsx --cache-dir $W/id --backend torch -q
uptime
rm -rf $W
