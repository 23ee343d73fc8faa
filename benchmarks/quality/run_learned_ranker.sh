#!/usr/bin/env bash
# The learned-ranker measurements of docs/experiments/2026-11-24-learned-ranker.md: every dev set,
# pseudo-query-only fitting (plain), 3-fold cross-validation on the dev pairs (--folds 3), and the
# confidence test with a quarter of the gold codes removed from the target (--drop-gold-share 0.25).
# Usage: benchmarks/quality/run_learned_ranker.sh [cache dir]   (outputs in benchmarks/results/learned-ranker/)
set -euo pipefail
cache=${1:-/tmp/ltr-cache}
out=benchmarks/results/learned-ranker
mkdir -p "$out"
sets=(
  "mimic_labs_gold|tests/data/mimic_labs_gold.tsv --target LOINC --gold-col loinc_code"
  "mimic_labs_nofluid_dev|benchmarks/data/mimic_labs_nofluid_dev.tsv --target LOINC --gold-col loinc_code --text-col label"
  "icd10cm_inclusion_dev|benchmarks/data/icd10cm_inclusion_dev.tsv --target benchmarks/data/icd10cm_inclusion_target.csv --gold-col icd10cm_code --text-col term"
  "hpo_lay_dev|benchmarks/data/hpo_lay_dev.tsv --target benchmarks/data/hpo_lay_target.csv --gold-col hpo_id --text-col lay_phrase"
  "icd10pcs_short_dev|benchmarks/data/icd10pcs_short_dev.tsv --target benchmarks/data/icd10pcs_short_target.csv --gold-col pcs_code --text-col short_name"
  "ohdsi_mimic_drugs_dev|benchmarks/data/ohdsi_mimic_drugs_dev.tsv --target codemap/data/drugs/drug_targets.tsv --gold-col target_concept_id --text-col local_drug_string"
  "loinc_de_to_en|benchmarks/data/loinc_de_to_en.tsv --target LOINC --gold-col loinc_code --text-col name"
)
for entry in "${sets[@]}"; do
  name=${entry%%|*}; args=${entry#*|}
  for mode in plain folds3 drop25; do
    case $mode in
      plain) extra="" ;;
      folds3) extra="--folds 3" ;;
      drop25) extra="--drop-gold-share 0.25" ;;
    esac
    echo "codemap eval $args $extra --cache-dir $cache -q" > "$out/$name.$mode.txt"
    # shellcheck disable=SC2086
    COLUMNS=140 OMP_NUM_THREADS=1 PYTHONPATH=${CODEMAP_SNAPSHOT:-} python -m codemap eval $args $extra --cache-dir "$cache" -q >> "$out/$name.$mode.txt" 2>&1
  done
done
