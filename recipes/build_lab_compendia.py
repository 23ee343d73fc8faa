"""Build `labcorp_labs.tsv` and `arup_labs.tsv`: result names of two US reference laboratories'
published LOINC code reports, each with the LOINC code the laboratory gives it ("BUN/Creatinine
Ratio", "eGFR If NonAfricn Am", "Hemoglobin A1c"), drawn for issue #52
(`benchmarks/results/component-names/RULE.md`, rule 2). First read for codemap on 2026-11-30.

Source: github.com/meerapatelmd/setupLOINC, commit 5c2fe3f, `data-raw/Labcorp Test Compendium
with LOINC 3.23.21.xlsx` (Labcorp, March 2021) and `data-raw/LOINC-codes_arup.xlsx` (ARUP
Laboratories' LOINC Code Report with Unit of Measure); the repository's MIT licence is copied
beside the files; the reports' LOINC content is copyright Regenstrief Institute, Inc. (LOINC
terms of use).

Kept: each result name (Labcorp: "Result Code Name" with its "UofM"; ARUP: "Result Test Name")
whose result LOINC code is one of the built-in LOINC codes (the target the lists are ranked
against); a name the report lists under several such codes keeps them all, joined by "|" (either
is right). Then 300 distinct names drawn from each (seed 0), fixed before any run; and, as a
fresh part, 300 more from the names not drawn (seed 1; `*_labs_fresh.tsv`, made 2026-11-30 after
the first draws had been read, before any run on them); and a third part, 300 more from the
names drawn by neither (seed 2; `*_labs_fresh2.tsv`, made 2026-11-30 before any run on them,
after the second parts had been scored); and a fourth, up to 300 from the names drawn by none
of them (seed 3; `*_labs_fresh3.tsv`, made 2026-11-30 before any run on them, after the third
parts had been scored, for benchmarks/results/missing-labs/RULE.md).

    git -C MIRROR show "HEAD:data-raw/Labcorp Test Compendium with LOINC 3.23.21.xlsx" > labcorp.xlsx
    git -C MIRROR show HEAD:data-raw/LOINC-codes_arup.xlsx > arup.xlsx
    python recipes/build_lab_compendia.py labcorp.xlsx arup.xlsx
"""
from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

from codemap.vocab.vocabulary import builtin_loinc

DATA = Path(__file__).resolve().parents[1] / "benchmarks" / "data"
DRAWN = 300


def report(path: str, header: int, name: str, loinc: str, unit: str | None) -> pd.DataFrame:
    """(name, unit, loinc_code) rows of one report whose code is built in, one row per name."""
    frame = pd.read_excel(path, header=header, dtype=str, engine="calamine").fillna("")
    frame = frame.rename(columns={name: "name", loinc: "loinc_code"})
    frame["unit"] = frame[unit].str.strip() if unit else ""
    frame["name"] = frame["name"].str.strip()
    frame["loinc_code"] = frame["loinc_code"].str.strip()
    known = set(builtin_loinc().concepts["code"])
    frame = frame[(frame["name"] != "") & frame["loinc_code"].isin(known)]
    rows = frame.groupby("name", sort=True).agg(
        unit=("unit", lambda u: next((x for x in u if x), "")),
        loinc_code=("loinc_code", lambda c: "|".join(dict.fromkeys(c)))).reset_index()
    return rows[["name", "unit", "loinc_code"]]


def main(labcorp: str, arup: str) -> None:
    lists = {"labcorp_labs.tsv": report(labcorp, 5, "Result Code Name", "Result LOINC", "UofM"),
             "arup_labs.tsv": report(arup, 12, "Result Test Name", "Result LOINC Code", None)}
    for file, rows in lists.items():
        first = rows.sample(min(DRAWN, len(rows)), random_state=0)
        rest = rows.drop(first.index)
        fresh = rest.sample(min(DRAWN, len(rest)), random_state=1)
        rest = rest.drop(fresh.index)
        third = rest.sample(min(DRAWN, len(rest)), random_state=2)
        rest = rest.drop(third.index)
        fourth = rest.sample(min(DRAWN, len(rest)), random_state=3)
        for out, drawn in ((file, first), (file.replace(".tsv", "_fresh.tsv"), fresh),
                           (file.replace(".tsv", "_fresh2.tsv"), third),
                           (file.replace(".tsv", "_fresh3.tsv"), fourth)):
            drawn = drawn.sort_values("name")
            if file.startswith("arup"):
                drawn = drawn.drop(columns=["unit"])
            drawn.to_csv(DATA / out, sep="\t", index=False)
            print(f"{out}: {len(drawn)} of {len(rows)} names")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
