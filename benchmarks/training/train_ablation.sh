#!/usr/bin/env bash
# The CPU training run of the README "Training a CODER model" section: a preset (default
# train/configs/cpu-kg.json: default MiniLM, KG = English public LOINC + ICD-10-CM with the MIMIC
# dev labels and the ICD-10-CM inclusion-term dev set held out), with and without the relation
# loss (same steps, same batches), then `codemap eval` of the untrained base and both trained
# models on both dev sets (encoder-only and hybrid rows).
# usage: benchmarks/training/train_ablation.sh DATA_DIR OUT_DIR [STEPS [--key value ...]]  (extra TrainConfig overrides,
#        e.g. --lr 2e-5 --warmup-steps 5); PRESET=cpu-labs for the older LOINC-only run.
# The two runs go side by side with one thread each (2-core machine); set PARALLEL=0 to run them
# one after the other. SKIP_BASE=1 skips the base model's evaluation.
set -euo pipefail
data=$1; out=$2; steps=${3:-300}; shift $(( $# < 3 ? $# : 3 ))
py=${PYTHON:-python}
preset=${PRESET:-cpu-kg}
extra=("$@")
mkdir -p "$out"
train() {
  OMP_NUM_THREADS=${THREADS:-1} "$py" -m codemap.train --config "$preset" \
    --data-dir "$data" --steps "$steps" --relation-loss "$1" --out "$out/$1" "${extra[@]}" \
    > "$out/$1.json" 2> "$out/$1.log"
}
if [ "${PARALLEL:-1}" = 1 ]; then
  train cosine & train none & wait
else
  train cosine; train none
fi
evaluate() {  # model name
  local model=$1 name=$2
  OMP_NUM_THREADS=1 "$py" -m codemap eval tests/data/mimic_labs_gold.tsv --target LOINC --gold-col loinc_code \
    --model "$model" --cache-dir "$out/cache-$name" --quiet > "$out/eval-labs-$name.txt"
  OMP_NUM_THREADS=1 "$py" -m codemap eval benchmarks/data/icd10cm_inclusion_dev.tsv \
    --target benchmarks/data/icd10cm_inclusion_target.csv --gold-col icd10cm_code --text-col term \
    --model "$model" --cache-dir "$out/cache-$name" --quiet > "$out/eval-icd-$name.txt"
  # the confirmation set (seed 1, no dev query): only the confirm preset holds it out of training
  OMP_NUM_THREADS=1 "$py" -m codemap eval benchmarks/data/icd10cm_inclusion_confirm.tsv \
    --target benchmarks/data/icd10cm_inclusion_confirm_target.csv --gold-col icd10cm_code --text-col term \
    --model "$model" --cache-dir "$out/cache-$name" --quiet > "$out/eval-icd-confirm-$name.txt"
}
evaluate "$out/cosine/model" cosine & evaluate "$out/none/model" none & wait
[ "${SKIP_BASE:-0}" = 1 ] || evaluate default base
