"""Build a German lab list in the style of a hospital's order catalogue: the MIMIC lab labels of
the dev/fresh splits (benchmarks/data/mimic_labs_nofluid_{dev,fresh}.tsv) re-written as the German
LOINC name of their gold code's analyte, with no unit, property or method.

A row's German label is the gold code's COMPONENT in the LOINC German linguistic variant (deDE15),
its LOINC part separators ("." and "^") read as spaces ("Bilirubin.gesamt" → "Bilirubin gesamt");
when the gold code's specimen is not serum, plasma or blood, " im " and the German SYSTEM are
added ("Calcium im Urin"): a catalogue leaves the everyday specimen unsaid and names the others.
Gold codes without a German name are left out. A label that two gold codes share keeps both (either
is right). The split is the English lists' (dev rows stay dev), so nothing chosen on the English dev
part has seen a fresh German row; a fresh label equal to a dev label (two English labels of one
code, one in each part: "Basophils", "Absolute Basophil Count") is left out of the fresh part.
The rule was written before any German row was scored.

    python recipes/build_german_lab_labels.py ../shared/data/loinc-de-linguistic-variant/deDE15LinguisticVariant.csv

writes benchmarks/data/german_lab_labels_{dev,fresh}.tsv (label, loinc_code)
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "benchmarks" / "data"
UNSAID = {"Serum", "Plasma", "Serum oder Plasma", "Blut", "XXX"}  # everyday or unspecified


def german_label(component: str, system: str) -> str:
    label = re.sub(r"\s+", " ", re.sub(r"[.^]", " ", component)).strip()
    return label if system in UNSAID else f"{label} im {system}"


def main(variant: Path) -> None:
    german = pd.read_csv(variant, dtype=str, keep_default_na=False).set_index("LOINC_NUM")
    seen: set[str] = set()
    for part in ("dev", "fresh"):
        rows = pd.read_csv(DATA / f"mimic_labs_nofluid_{part}.tsv", sep="\t", dtype=str)
        rows = rows[rows["loinc_code"].isin(german.index)]
        found = german.loc[rows["loinc_code"]]
        out = pd.DataFrame({"label": [german_label(c, s) for c, s in
                                      zip(found["COMPONENT"], found["SYSTEM"])],
                            "loinc_code": rows["loinc_code"].to_numpy()}).drop_duplicates()
        out = out[~out["label"].str.casefold().isin(seen)]
        seen |= set(out["label"].str.casefold())
        out.to_csv(DATA / f"german_lab_labels_{part}.tsv", sep="\t", index=False,
                   lineterminator="\n")
        print(f"german_lab_labels_{part}: {len(out)} rows, {out['label'].nunique()} labels")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
