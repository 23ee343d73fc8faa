"""Draw the fresh cross-language ICD parts for issue #53: German ICD-10-GM 2024 and Spanish
CIE-10 titles of 300 codes onto the full ICD-10-CM 2021 (72,616 codes), scored once under
benchmarks/results/cross-language-scale/RULE.md.

The codes are drawn (seed 53) among those ICD-10-GM, CIE-10 and ICD-10-CM share, leaving out every
code any file of benchmarks/data or tests/data already names, so no figure so far has read them.
Unlike the dev sets (icd10gm_de.tsv, cie10_es.tsv, whose codes every training graph leaves out),
these codes' names were in the shipped model's training graph (train.sources.icd10 holds out only
the dev sets' codes), as they are for any code a user draws outside the repository's sets.

    python recipes/build_icd_fresh.py ../shared/data
"""
from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

SEED, N = 53, 300
ROOT = Path(__file__).resolve().parents[1]


def codes_already_read() -> set[str]:
    seen: set[str] = set()
    for folder in (ROOT / "benchmarks" / "data", ROOT / "tests" / "data"):
        for path in sorted(folder.rglob("*.[ct]sv")):
            sep = "\t" if path.suffix == ".tsv" else ","
            try:
                frame = pd.read_csv(path, sep=sep, dtype=str, keep_default_na=False)
            except (pd.errors.ParserError, UnicodeDecodeError, ValueError):
                continue
            for column in frame.columns:
                if "icd" in column.lower() or column == "code":
                    seen |= {c.replace(".", "").strip().upper() for c in frame[column]}
    return seen


def main(data: Path) -> None:
    gm = pd.read_csv(data / "icd10gm-2024-de" / "icd10gm2024syst_kodes.txt", sep=";", header=None,
                     dtype=str, keep_default_na=False)[[7, 8]].set_axis(["code", "name"], axis=1)
    es = pd.read_csv(data / "cie10-es" / "cie10.csv", header=None, names=["code", "name"], dtype=str,
                     encoding="latin-1", keep_default_na=False)
    cm = pd.read_csv(data / "icd10cm-2021" / "icd10cm_codes_2021.csv", dtype=str, keep_default_na=False)
    shared = sorted((set(gm["code"]) & set(es["code"]) & set(cm["icd10cm"])) - codes_already_read())
    codes = set(pd.Series(shared).sample(N, random_state=SEED))
    out = ROOT / "benchmarks" / "data"
    for frame, name in ((gm, "icd10gm_de_fresh.tsv"), (es, "cie10_es_fresh.tsv")):
        frame[frame["code"].isin(codes)].drop_duplicates("code").sort_values("code")[
            ["name", "code"]].rename(columns={"code": "icd10_code"}).to_csv(out / name, sep="\t", index=False)
    print(f"{len(shared)} codes shared and unread; drew {len(codes)}")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
