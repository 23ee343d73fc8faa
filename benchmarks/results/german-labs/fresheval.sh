#!/bin/bash
cd /work/main && . .venv/bin/activate
run() { codemap eval "$@" 2>/dev/null | grep -E "^│ (encoder|lexical|hybrid \(all evidence\)) " | awk -F'│' '{gsub(/ +$/,"",$2); printf "%s=%s ", $2, $4}'; echo; }
echo "labs_nofluid_fresh $(run benchmarks/data/mimic_labs_nofluid_fresh.tsv --target LOINC --gold-col loinc_code --text-col label)"
echo "german_fresh       $(run benchmarks/data/german_lab_labels_fresh.tsv --target LOINC --gold-col loinc_code --text-col label)"
