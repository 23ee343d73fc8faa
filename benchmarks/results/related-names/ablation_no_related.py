"""Ablation, decides nothing: the built-in LOINC without its German related names ("Bili Serum
oder Plasma", "eGFR Serum, Plasma oder Blut"), then stated_axes.py's report. From the repository:

    CODEMAP_SHARED=../shared python benchmarks/results/related-names/ablation_no_related.py OUT.json --sets labs_fluid,labs_nofluid
"""
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]  # the repository
sys.path.insert(0, str(ROOT / "benchmarks" / "quality"))
sys.path.insert(0, str(ROOT / "benchmarks"))

import codemap.vocab.vocabulary as vocabulary  # noqa: E402

original = vocabulary._loinc_german_names


def without_related(folder, codes):
    names = original(folder, codes)
    return names[names["name_type"] != "related"]


vocabulary._loinc_german_names = without_related
import stated_axes  # noqa: E402

sys.exit(stated_axes.main(sys.argv[1:]))
