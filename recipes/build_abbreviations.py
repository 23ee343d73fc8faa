"""Learn the lab abbreviation table from LOINC's short/long name pairs (codemap.domains.lab.abbreviations).

The pairs are the built-in LOINC Top 2000+ subset (codemap/data/loinc, LOINC licence beside it).
`--exclude GOLD.tsv` leaves out the codes of a gold file's `loinc_code` column, for a table that
never saw the pairs an evaluation queries (README, "Hybrid lab ranking").

    python recipes/build_abbreviations.py --out codemap/data/loinc/abbreviations.tsv
"""
from __future__ import annotations

import argparse
import csv
from pathlib import Path

from codemap.domains.lab.abbreviations import learn_abbreviations, write_abbreviations
from codemap.vocab import builtin_loinc


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--exclude", type=Path, action="append", default=[],
                        help="gold TSV whose loinc_code codes are left out of the pairs")
    args = parser.parse_args()
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


if __name__ == "__main__":
    main()
