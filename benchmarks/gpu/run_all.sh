#!/usr/bin/env bash
# The GPU run of issue #55 in one command (benchmarks/gpu/README.md):
#   bash benchmarks/gpu/run_all.sh "$OUT"               # on the GPU machine
#   bash benchmarks/gpu/run_all.sh OUT --rehearse       # here, on the CPU, tiny
# Everything the run prints also goes to OUT/log.txt; results.json is the record.
set -o pipefail
OUT="${1:?usage: run_all.sh OUT_FOLDER [--rehearse] [--steps a,b] [--carry DIR]}"
shift
mkdir -p "$OUT" && OUT="$(cd "$OUT" && pwd)" || exit 1
cd "$(dirname "$0")/../.." || exit 1
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=true
export HF_HUB_DISABLE_PROGRESS_BARS=1
"${PYTHON:-python3}" benchmarks/gpu/run_all.py "$OUT" "$@" 2>&1 | tee "$OUT/log.txt"
