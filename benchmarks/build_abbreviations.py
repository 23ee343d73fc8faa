"""Learn the lab abbreviation table from LOINC's short/long name pairs (codemap.rank.abbreviations).

The pairs are the built-in LOINC Top 2000+ subset (codemap/data/loinc, LOINC licence beside it).
`--exclude GOLD.tsv` leaves out the codes of a gold file's `loinc_code` column, for a table that
never saw the pairs an evaluation queries (README, "Hybrid lab ranking").

    python benchmarks/build_abbreviations.py --out codemap/data/loinc/abbreviations.tsv

`--components CORE.csv --short-names SHORT.tsv` learns instead from the component part of ~16k
codes' short names paired with their LOINC COMPONENT (../shared/data/loinc-core-2col,
../shared/data/loinc-shortnames): what a table named by short names alone is expanded with
beside the table above (codemap.rank.abbreviations.short_name_table_abbreviations). Only
abbreviations read from letters (spelling, initials) are kept, and none the table above has:
a component is a few words, so co-occurrence picks words of the rest of it ("MFr" → "total").

    python benchmarks/build_abbreviations.py --out codemap/data/loinc/component_abbreviations.tsv \
      --components ../shared/data/loinc-core-2col/LoincTableCore_LOINC_NUM_COMPONENT.csv \
      --short-names ../shared/data/loinc-shortnames/loinc_shortnames.tsv
"""
from __future__ import annotations

import argparse
import csv
from pathlib import Path

import pandas as pd

from codemap.rank.abbreviations import (builtin_abbreviations, learn_abbreviations,
                                        write_abbreviations)
from codemap.rank.loinc_parts import short_name_parts
from codemap.vocab import builtin_loinc


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--exclude", type=Path, action="append", default=[],
                        help="gold TSV whose loinc_code codes are left out of the pairs")
    parser.add_argument("--components", type=Path, help="LOINC_NUM,COMPONENT csv (all codes)")
    parser.add_argument("--short-names", type=Path, help="code<TAB>short name, no header")
    args = parser.parse_args()
    if args.components:
        return component_table(args.components, args.short_names, args.out)
    excluded = set()
    for gold in args.exclude:
        with gold.open(encoding="utf-8") as handle:
            excluded |= {row["loinc_code"] for row in csv.DictReader(handle, delimiter="\t")}
    concepts = builtin_loinc().concepts
    concepts = concepts[~concepts["code"].isin(excluded)]
    learned = learn_abbreviations(zip(concepts["short_name"], concepts["name"]))
    with args.out.open("w", encoding="utf-8", newline="") as handle:
        write_abbreviations(learned, handle)
    print(f"{len(learned)} abbreviations from {len(concepts)} pairs → {args.out}")


def component_table(components: Path, short_names: Path, out: Path) -> None:
    short = pd.read_csv(short_names, sep="\t", header=None, names=["code", "short"], dtype=str)
    parts = pd.read_csv(components, dtype=str).rename(columns={"LOINC_NUM": "code"})
    pairs = short.dropna().merge(parts.dropna(), on="code")
    learned = learn_abbreviations((short_name_parts(s)[0], c)
                                  for s, c in zip(pairs["short"], pairs["COMPONENT"]))
    known = builtin_abbreviations()
    kept = [a for a in learned if a.how != "co-occurrence" and a.short not in known]
    with out.open("w", encoding="utf-8", newline="") as handle:
        write_abbreviations(kept, handle)
    print(f"{len(kept)} abbreviations from {len(pairs)} component pairs → {out}")


if __name__ == "__main__":
    main()
