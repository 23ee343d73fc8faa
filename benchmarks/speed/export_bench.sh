#!/usr/bin/env bash
# Export the default model (fp32 + int8, full parity check) and time it four ways on 5,000 real
# terms in one process. Figures go into README.md ("ONNX export and bench") with the machine and
# its load. Usage: benchmarks/speed/export_bench.sh [TERMS]
set -euo pipefail
terms="${1:-5000}"
out="$(mktemp -d)/minilm-onnx"
export HF_HUB_OFFLINE=1
nproc; uptime
codemap export default --out "$out" --int8
codemap bench --model default --terms "$terms" --export "$out"
uptime
rm -rf "$(dirname "$out")"
