#!/bin/bash
# acc@1 of default/encoder/lexical on the lab dev sets; $1 = tag
cd /work/main && . .venv/bin/activate
run() { codemap eval "$@" 2>/dev/null | grep -E "^│ (encoder|lexical|hybrid \(all evidence\)) " | awk -F'│' '{gsub(/ +$/,"",$2); printf "%s=%s ", $2, $4}'; echo; }
echo "labs_fluid   $(run tests/data/mimic_labs_gold.tsv --target LOINC --gold-col loinc_code)"
echo "labs_nofluid $(run benchmarks/data/mimic_labs_nofluid_dev.tsv --target LOINC --gold-col loinc_code --text-col label)"
echo "loinc_short  $(run tests/data/loinc_short_units_dev.tsv --target tests/data/loinc_long_names.tsv --gold-col loinc_code --text-col label)"
echo "german_dev   $(run benchmarks/data/german_lab_labels_dev.tsv --target LOINC --gold-col loinc_code --text-col label)"
