#!/usr/bin/env bash
# The CPU training run of the README "Training" section: the same steps and batches from the default
# MiniLM on LOINC (public files) + HPO, with and without the relation loss, MIMIC dev labels held out
# and scored (acc@1/acc@10 vs the built-in LOINC subset) before and after training.
# usage: benchmarks/train_ablation.sh DATA_DIR OUT_DIR [STEPS]
set -euo pipefail
data=$1; out=$2; steps=${3:-200}; k=${4:-32}
py=${PYTHON:-python}
common=(--kg loinc --kg hpo --data-dir "$data" --steps "$steps" --batch-triplets "$k" --repeats 4
        --lr 5e-5 --warmup-steps 20 --checkpoint-every 100 --log-every 10 --seed 0
        --holdout tests/data/mimic_labs_gold.tsv --eval-file tests/data/mimic_labs_gold.tsv
        --eval-target LOINC --eval-gold-col loinc_code --progress false)
for variant in cosine none; do
  "$py" -m codemap.train "${common[@]}" --relation-loss "$variant" --out "$out/$variant" \
    > "$out-$variant.json" 2> "$out-$variant.log"
done
