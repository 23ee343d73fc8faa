"""Build the cross-lingual training KG of the README's multilingual training run: one table
(code, name, synonyms, parents) where a concept's names come in several languages, so names of
one concept in different languages are positives for the trainer (`--kg FILE`).

- ICD-10: the 2021 ICD-10-CM titles (en), ICD-10-GM 2024 titles (de) and CIE-10 titles (es) of
  the same code are one concept; the parent is the code one character shorter (A000 → A00).
- LOINC: English short and long names and the German long name of the same code.
Every code of an evaluation set (benchmarks/data/icd10gm_de.tsv, cie10_es.tsv, loinc_de_to_en.tsv)
is left out whole — its names in every language — so the evaluation measures transfer to
concepts the model never saw.

usage: python recipes/build_multilingual_kg.py ../shared/data OUT.csv
"""
from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parents[1] / "benchmarks"  # its data/ folder


def _read(path: Path, **kwargs) -> pd.DataFrame:
    return pd.read_csv(path, dtype=str, keep_default_na=False, **kwargs)


def held_out_codes() -> set[str]:
    codes = set()
    for name, column in (("icd10gm_de.tsv", "icd10_code"), ("cie10_es.tsv", "icd10_code"),
                         ("loinc_de_to_en.tsv", "loinc_code")):
        codes |= set(_read(HERE / "data" / name, sep="\t")[column])
    return codes


def icd10_names(data: Path) -> pd.DataFrame:
    cm = _read(data / "icd10cm-2021" / "icd10cm_codes_2021.csv").set_axis(["code", "name"], axis=1)
    gm = _read(data / "icd10gm-2024-de" / "icd10gm2024syst_kodes.txt", sep=";", header=None)
    gm = gm[[7, 8]].set_axis(["code", "name"], axis=1)  # code without dot, class title
    es = _read(data / "cie10-es" / "cie10.csv", header=None, encoding="latin-1").set_axis(["code", "name"], axis=1)
    return pd.concat([cm.assign(lang="en"), gm.assign(lang="de"), es.assign(lang="es")])


def loinc_names(data: Path) -> pd.DataFrame:
    short = _read(data / "loinc-shortnames" / "loinc_shortnames.tsv", sep="\t", header=None)
    short = short.set_axis(["code", "name"], axis=1)
    top = pd.concat([_read(p).iloc[:, :2] for p in sorted((data / "loinc-top2000").glob("*.csv"))])
    top = top.set_axis(["code", "name"], axis=1)
    german = _read(data / "loinc-de-linguistic-variant" / "deDE15LinguisticVariant.csv")
    german = german[["LOINC_NUM", "LONG_COMMON_NAME"]].set_axis(["code", "name"], axis=1)
    return pd.concat([top.assign(lang="en"), short.assign(lang="en"), german.assign(lang="de")])


def build(data: Path) -> pd.DataFrame:
    names = pd.concat([icd10_names(data), loinc_names(data)], ignore_index=True)
    names["name"] = names["name"].str.strip()
    names = names[(names["name"] != "") & ~names["code"].isin(held_out_codes())]
    names = names.drop_duplicates(["code", "name"])
    rows = []
    codes = set(names["code"])
    for code, group in names.groupby("code", sort=True):
        # Only concepts with names in two or more languages teach cross-lingual alignment.
        if group["lang"].nunique() < 2:
            continue
        parent = code[:-1] if len(code) > 3 and code[0].isalpha() and code[:-1] in codes else ""
        rows.append({"code": code, "name": group["name"].iloc[0],
                     "synonyms": "|".join(group["name"].iloc[1:]), "parents": parent})
    return pd.DataFrame(rows)


if __name__ == "__main__":
    table = build(Path(sys.argv[1]))
    table.to_csv(sys.argv[2], index=False)
    print(f"{len(table):,} concepts, {table['synonyms'].str.count('[|]').add(2).sum():,} names, "
          f"{(table['parents'] != '').sum():,} is_a relations -> {sys.argv[2]}")
