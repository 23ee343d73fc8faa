"""Write the German and English COMPONENT of every LOINC code that the German linguistic variant
names, so the German → English part lexicon (codemap.rank.part_translation) learns from all of
them, not only from the built-in subset's 1,625 codes.

Codes whose two components fold to the same words ("Ferritin") teach nothing and are left out.
The LOINC licence is already beside the file (codemap/data/loinc/LICENSE-LOINC.txt).

    python benchmarks/build_loinc_component_pairs.py ../shared/data \
        --out codemap/data/loinc/loinc_de_en_components.tsv
"""
from __future__ import annotations

import argparse
import csv
from pathlib import Path

from codemap.rank.loinc_parts import fold


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path, help="../shared/data")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    with (args.data / "loinc-core-2col" / "LoincTableCore_LOINC_NUM_COMPONENT.csv").open(
            encoding="utf-8", newline="") as handle:
        english = {row["LOINC_NUM"]: " ".join(row["COMPONENT"].split()) for row in csv.DictReader(handle)}
    variant = args.data / "loinc-de-linguistic-variant" / "deDE15LinguisticVariant.csv"
    with variant.open(encoding="utf-8", newline="") as handle:
        pairs = sorted((row["LOINC_NUM"], " ".join(row["COMPONENT"].split()), english[row["LOINC_NUM"]])
                       for row in csv.DictReader(handle)
                       if row["COMPONENT"].strip() and english.get(row["LOINC_NUM"]))
    kept = [pair for pair in pairs if fold(pair[1]) != fold(pair[2])]
    with args.out.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, delimiter="\t", lineterminator="\n")
        writer.writerow(["code", "component_de", "component_en"])
        writer.writerows(kept)
    print(f"{len(pairs)} codes with both components, {len(kept)} that differ → {args.out}")


if __name__ == "__main__":
    main()
