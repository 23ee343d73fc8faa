"""Build the small cross-lingual sets (evaluation, example, test target) from ../shared/data.

Run once from the repository root; the outputs are committed, so users and CI never need
../shared. Every sample is drawn with a fixed seed, so re-running gives the same files.

    python recipes/build_crosslingual_sets.py ../shared/data

Writes
  benchmarks/data/loinc_de_to_en.tsv   German LOINC long names → LOINC code (codes in the built-in subset)
  benchmarks/data/icd10gm_de.tsv       German ICD-10-GM 2024 titles → code
  benchmarks/data/cie10_es.tsv         Spanish CIE-10 titles → code
  benchmarks/data/icd10cm_en_target.csv English ICD-10-CM 2021 names of the codes of both ICD sets
  examples/labs_de.csv                 a 20-row German lab list (local code, German name)
  tests/data/labs_de_gold.tsv          its answers (local code → LOINC code)
  tests/data/loinc_en_small.csv        English names (long + short) of 150 subset codes, the 20 included
"""
from __future__ import annotations

import csv
import sys
from pathlib import Path

import pandas as pd

from codemap.vocab import builtin_loinc

SEED = 0
N_LOINC, N_ICD, N_EXAMPLE, N_SMALL_TARGET = 300, 300, 20, 150


def main(data: Path) -> None:
    root = Path(__file__).resolve().parent.parent
    out = root / "benchmarks" / "data"
    out.mkdir(exist_ok=True)
    subset = builtin_loinc().concepts.assign(rank=lambda f: pd.to_numeric(f["rank"]))
    german = pd.read_csv(data / "loinc-de-linguistic-variant" / "deDE15LinguisticVariant.csv",
                         dtype=str, keep_default_na=False)
    german = german[german["LONG_COMMON_NAME"].str.strip() != ""]
    both = subset.merge(german[["LOINC_NUM", "LONG_COMMON_NAME"]], left_on="code",
                        right_on="LOINC_NUM").sort_values(["rank", "code"])
    both.sample(N_LOINC, random_state=SEED).sort_values("code")[["LONG_COMMON_NAME", "code"]].rename(
        columns={"LONG_COMMON_NAME": "name", "code": "loinc_code"}).to_csv(
        out / "loinc_de_to_en.tsv", sep="\t", index=False)

    # The most common lab results (lowest Top 2000 rank) make the example list and the small target.
    common = both.drop_duplicates("code").head(N_SMALL_TARGET)
    example = common.head(N_EXAMPLE).reset_index(drop=True)
    example_rows = pd.DataFrame({"code": [f"L{i + 1:03d}" for i in range(len(example))],
                                 "bezeichnung": example["LONG_COMMON_NAME"]})
    example_rows.to_csv(root / "examples" / "labs_de.csv", index=False, quoting=csv.QUOTE_MINIMAL)
    pd.DataFrame({"code": example_rows["code"], "loinc_code": example["code"]}).to_csv(
        root / "tests" / "data" / "labs_de_gold.tsv", sep="\t", index=False)
    common[["code", "name", "short_name"]].rename(columns={"short_name": "synonyms"}).sort_values(
        "code").to_csv(root / "tests" / "data" / "loinc_en_small.csv", index=False)

    gm = pd.read_csv(data / "icd10gm-2024-de" / "icd10gm2024syst_kodes.txt", sep=";", header=None,
                     dtype=str, keep_default_na=False, encoding="utf-8")
    gm = gm[[7, 8]].rename(columns={7: "code", 8: "name"})
    es = pd.read_csv(data / "cie10-es" / "cie10.csv", header=None, names=["code", "name"], dtype=str, encoding="latin-1",
                     keep_default_na=False)
    cm = pd.read_csv(data / "icd10cm-2021" / "icd10cm_codes_2021.csv", dtype=str,
                     keep_default_na=False).rename(columns={"icd10cm": "code", "description": "name"})
    shared = sorted(set(gm["code"]) & set(es["code"]) & set(cm["code"]))
    codes = set(pd.Series(shared).sample(N_ICD, random_state=SEED))
    for frame, name in ((gm, "icd10gm_de.tsv"), (es, "cie10_es.tsv")):
        frame[frame["code"].isin(codes)].drop_duplicates("code").sort_values("code")[
            ["name", "code"]].rename(columns={"code": "icd10_code"}).to_csv(
            out / name, sep="\t", index=False)
    cm[cm["code"].isin(codes)].drop_duplicates("code").sort_values("code")[["code", "name"]].to_csv(
        out / "icd10cm_en_target.csv", index=False)
    print(f"{len(both)} subset codes have German names; {len(shared)} ICD codes in GM, CIE-10 and CM")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
