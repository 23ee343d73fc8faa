"""Copy the German LOINC names (deDE15 linguistic variant) of the built-in LOINC subset's codes
into the package, so a German lab list meets German names (codemap.vocab.builtin_loinc).

Only the codes of the built-in Top 2000+ subset are kept, with the long common name, the six
axes and the related names in German; the LOINC licence is already beside the file
(codemap/data/loinc/LICENSE-LOINC.txt).

    python recipes/build_loinc_german.py \
        ../shared/data/loinc-de-linguistic-variant/deDE15LinguisticVariant.csv \
        --out codemap/data/loinc/loinc_de_names.tsv
"""
from __future__ import annotations

import argparse
import csv
from pathlib import Path

from codemap.vocab import builtin_loinc

# deDE15 column → shipped column
COLUMNS = {"LOINC_NUM": "code", "LONG_COMMON_NAME": "long_common_name", "COMPONENT": "component",
           "PROPERTY": "property", "TIME_ASPCT": "time", "SYSTEM": "system", "SCALE_TYP": "scale",
           "METHOD_TYP": "method", "RELATEDNAMES2": "related_names"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("variant", type=Path, help="deDE15LinguisticVariant.csv")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    wanted = set(builtin_loinc().concepts["code"])
    with args.variant.open(encoding="utf-8", newline="") as handle:
        rows = [row for row in csv.DictReader(handle)
                if row["LOINC_NUM"] in wanted and row["LONG_COMMON_NAME"].strip()]
    rows.sort(key=lambda row: row["LOINC_NUM"])
    with args.out.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, delimiter="\t", lineterminator="\n")
        writer.writerow(COLUMNS.values())
        for row in rows:
            writer.writerow([" ".join(row[c].split()) for c in COLUMNS])
    print(f"{len(rows)} of {len(wanted)} built-in codes have German names → {args.out}")


if __name__ == "__main__":
    main()
