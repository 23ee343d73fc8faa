#!/usr/bin/env bash
# The CPU training run of the README "Training" section: train/configs/cpu-labs.json (default
# MiniLM, public LOINC names and axes, MIMIC dev labels held out), with and without the relation
# loss (same steps, same batches), then `codemap eval` of the untrained base and both trained models
# on the MIMIC dev labels (encoder-only and hybrid rows).
# usage: benchmarks/train_ablation.sh DATA_DIR OUT_DIR [STEPS [--key value ...]]  (extra TrainConfig overrides,
#        e.g. --lr 2e-5 --warmup-steps 5)
# The two runs go side by side with one thread each (2-core machine); set PARALLEL=0 to run them
# one after the other.
set -euo pipefail
data=$1; out=$2; steps=${3:-150}; shift $(( $# < 3 ? $# : 3 ))
py=${PYTHON:-python}
gold=tests/data/mimic_labs_gold.tsv
extra=("$@")
mkdir -p "$out"
train() {
  OMP_NUM_THREADS=${THREADS:-1} "$py" -m codemap.train --config train/configs/cpu-labs.json \
    --data-dir "$data" --holdout "$gold" --steps "$steps" --relation-loss "$1" --out "$out/$1" "${extra[@]}" \
    > "$out/$1.json" 2> "$out/$1.log"
}
if [ "${PARALLEL:-1}" = 1 ]; then
  train cosine & train none & wait
else
  train cosine; train none
fi
for model in default "$out/cosine/model" "$out/none/model"; do
  name=$(basename "$(dirname "$model")"); [ "$model" = default ] && name=base
  "$py" -m codemap eval "$gold" --target LOINC --gold-col loinc_code --model "$model" \
    --cache-dir "$out/cache-$name" --quiet > "$out/eval-$name.txt"
done
